//! Apps: how their public slugs are made, and which processor keys a live app accepts.

/// A URL-safe slug from an app's name, with a random suffix so that names may repeat.
pub fn slug(name: &str, suffix: &str) -> String {
    let mut out = String::with_capacity(name.len() + suffix.len() + 1);
    for ch in name.chars().flat_map(char::to_lowercase) {
        if ch.is_ascii_alphanumeric() {
            out.push(ch);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 40 {
            break;
        }
    }
    let base = out.trim_end_matches('-');
    if base.is_empty() {
        format!("app-{suffix}")
    } else {
        format!("{base}-{suffix}")
    }
}

/// Checks a live app's keys for the real processor: a publishable key `pk_live_...` or
/// `pk_test_...` and a secret key of the same mode (`sk_live_...`, `sk_test_...`, or the
/// restricted `rk_...`), each with a body of letters, digits and underscores. The message never
/// repeats the secret key.
pub fn check_payment_keys(publishable: &str, secret: &str) -> Result<(), &'static str> {
    let body_ok =
        |b: &str| b.len() >= 8 && b.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    let mode = |key: &str, kinds: &[&str]| {
        kinds.iter().find_map(|k| {
            let rest = key.strip_prefix(k)?;
            ["live_", "test_"]
                .into_iter()
                .find(|m| rest.strip_prefix(m).is_some_and(body_ok))
        })
    };
    let pk = mode(publishable, &["pk_"]).ok_or("the publishable key must look like pk_live_...")?;
    let sk = mode(secret, &["sk_", "rk_"]).ok_or("the secret key must look like sk_live_...")?;
    if pk != sk {
        return Err("the publishable and secret keys must be of the same mode (live or test)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_lowercase_words_joined_by_dashes() {
        assert_eq!(slug("Sunny Solar, Inc.", "x1"), "sunny-solar-inc-x1");
        assert_eq!(slug("  ", "x1"), "app-x1");
        assert_eq!(slug("Énergie Ça", "x1"), "nergie-a-x1");
        assert!(slug(&"a".repeat(200), "x1").len() <= 44);
    }

    #[test]
    fn payment_keys_must_be_a_matching_pair() {
        assert!(check_payment_keys("pk_live_abcdefgh12", "sk_live_ZYXWVUTS98").is_ok());
        assert!(check_payment_keys("pk_test_abcdefgh12", "rk_test_ZYXWVUTS98").is_ok());
        assert!(check_payment_keys("pk_live_abcdefgh12", "sk_test_ZYXWVUTS98").is_err());
        assert!(check_payment_keys("sk_live_abcdefgh12", "pk_live_ZYXWVUTS98").is_err());
        assert!(check_payment_keys("pk_live_abcdefgh12", "sk_live_short").is_err());
        assert!(check_payment_keys("pk_live_abcdefgh12", "sk_live_with space1").is_err());
        let err = check_payment_keys("pk_live_abcdefgh12", "xx_live_SECRETVALUE").unwrap_err();
        assert!(!err.contains("SECRETVALUE"));
    }
}
