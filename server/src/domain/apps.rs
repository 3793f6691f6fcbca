//! Apps: how their public slugs are made.

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
}
