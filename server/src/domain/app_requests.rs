//! A partner's request for a live app: what they ask for (a display name, the slug of its hosted
//! pages, why), and where the request stands until the operator approves or declines it.

use super::FieldError;

text_enum! {
    /// Where a live app request stands: waiting for the operator, or decided.
    pub enum RequestStatus {
        Pending = "pending",
        Approved = "approved",
        Declined = "declined",
    }
}

/// A request as typed, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveAppAsked {
    pub display_name: String,
    pub slug: String,
    pub reason: String,
}

/// Text of 1 to `max` characters, trimmed; line breaks allowed where `lines`.
fn text(param: &str, raw: &str, max: usize, lines: bool) -> Result<String, FieldError> {
    let value = raw.trim();
    if value.is_empty() {
        return Err(FieldError::missing(param));
    }
    let bad = |c: char| c.is_control() && !(lines && matches!(c, '\n' | '\r' | '\t'));
    if value.chars().count() > max || value.chars().any(bad) {
        return Err(FieldError::invalid(
            param,
            format!("{param} must have 1 to {max} characters"),
        ));
    }
    Ok(value.to_owned())
}

/// The slug of an app's hosted pages (`/go/<slug>`): 3 to 50 lower-case letters, digits and
/// single hyphens, starting and ending with a letter or digit.
pub fn parse_slug(raw: &str) -> Result<String, FieldError> {
    let slug = raw.trim().to_ascii_lowercase();
    let ok = (3..=50).contains(&slug.len())
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !slug.starts_with('-')
        && !slug.ends_with('-')
        && !slug.contains("--");
    if ok {
        Ok(slug)
    } else {
        Err(FieldError::invalid(
            "slug",
            "slug must be 3 to 50 lower-case letters, digits and single hyphens",
        ))
    }
}

/// Parses a partner's request; every wrong field is named.
pub fn parse_request(
    display_name: &str,
    slug: &str,
    reason: &str,
) -> Result<LiveAppAsked, Vec<FieldError>> {
    let name = text("display_name", display_name, 100, false);
    let slug = parse_slug(slug);
    let reason = text("reason", reason, 500, true);
    match (name, slug, reason) {
        (Ok(display_name), Ok(slug), Ok(reason)) => Ok(LiveAppAsked {
            display_name,
            slug,
            reason,
        }),
        (name, slug, reason) => Err([name.err(), slug.err(), reason.err()]
            .into_iter()
            .flatten()
            .collect()),
    }
}

/// Why the operator declined: shown to the partner, 1 to 500 characters.
pub fn parse_decline_reason(raw: &str) -> Result<String, FieldError> {
    text("reason", raw, 500, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_lower_case_words_joined_by_single_hyphens() {
        assert_eq!(parse_slug(" Acme-Power ").unwrap(), "acme-power");
        assert_eq!(parse_slug("acme2").unwrap(), "acme2");
        for bad in [
            "ab",
            "-acme",
            "acme-",
            "ac--me",
            "acme power",
            "acmé",
            &"a".repeat(51),
        ] {
            assert!(parse_slug(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_request_names_every_wrong_field() {
        let asked =
            parse_request("Acme Power", "acme-power", "We go live in May.\nThanks").unwrap();
        assert_eq!(asked.slug, "acme-power");
        let params: Vec<String> = parse_request(" ", "a", &"x".repeat(501))
            .unwrap_err()
            .into_iter()
            .map(|e| e.param)
            .collect();
        assert_eq!(params, ["display_name", "slug", "reason"]);
        assert!(parse_decline_reason("").is_err());
        assert!(parse_decline_reason("Not yet: finish the sandbox review.").is_ok());
    }
}
