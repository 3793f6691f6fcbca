//! Links a browser opens by itself: the API hands out absolute, signed and expiring URLs
//! (`domain::links`) for invoice PDFs and documents, and the routes behind them take the
//! `SignedLink` extractor instead of a token. A refused link answers 403 with a short page, or
//! with the JSON error when the client asks for JSON.

use axum::{
    extract::FromRequestParts,
    http::{header::ACCEPT, request::Parts},
};

use super::{
    error::{ApiError, ErrorCode},
    AppState,
};
use crate::domain::links::{self, LinkRejection};

/// The absolute URL on the public base that opens `path` (no query) for the next hour.
pub fn signed_url(state: &AppState, path: &str) -> String {
    format!(
        "{}{path}?{}",
        state.config.public_url(),
        links::sign(state.pii.link_key(), path, state.clock.now())
    )
}

/// Proof that the request came through a link this service signed and that has not expired.
pub struct SignedLink;

impl FromRequestParts<AppState> for SignedLink {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or_default();
        let mut expires = None;
        let mut signature = None;
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            match k.as_ref() {
                "expires" => expires = Some(v.into_owned()),
                "signature" => signature = Some(v.into_owned()),
                _ => {}
            }
        }
        let verdict = links::verify(
            state.pii.link_key(),
            parts.uri.path(),
            expires.as_deref(),
            signature.as_deref(),
            state.clock.now(),
        );
        let error = match verdict {
            Ok(()) => return Ok(SignedLink),
            Err(LinkRejection::Invalid) => ApiError::new(
                ErrorCode::LinkInvalid,
                "This link is not valid. Open the document again from where you found it to get a \
                 fresh link.",
            ),
            Err(LinkRejection::Expired) => ApiError::new(
                ErrorCode::LinkExpired,
                "This link has expired: links to documents last an hour. Open the document again \
                 from where you found it to get a fresh link.",
            ),
        };
        let accept = parts.headers.get(ACCEPT).and_then(|v| v.to_str().ok());
        Err(if wants_json(accept) {
            error
        } else {
            error.as_page()
        })
    }
}

/// Whether the client asked for JSON rather than a page: it names a JSON type and does not
/// also name HTML (browsers opening a tab send `text/html`, often next to `*/*`).
fn wants_json(accept: Option<&str>) -> bool {
    let Some(accept) = accept else { return false };
    let types: Vec<&str> = accept
        .split(',')
        .map(|t| t.split(';').next().unwrap_or_default().trim())
        .collect();
    let json = types
        .iter()
        .any(|t| *t == "application/json" || t.ends_with("+json"));
    json && !types.contains(&"text/html")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsers_get_the_page_and_code_asking_for_json_gets_json() {
        let chromium = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        assert!(!wants_json(Some(chromium)));
        assert!(!wants_json(None));
        assert!(!wants_json(Some("*/*")));
        assert!(wants_json(Some("application/json")));
        assert!(wants_json(Some("application/problem+json, */*;q=0.1")));
        assert!(!wants_json(Some("text/html, application/json")));
    }
}
