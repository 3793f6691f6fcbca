//! Bearer tokens: their formats, how they are issued, and how they are stored (only a SHA-256
//! hash; the tokens carry 190 bits of randomness, so a fast hash is the right tool, unlike for
//! passwords).

use app::api::Environment;
use rand::{distributions::Alphanumeric, Rng};
use sha2::{Digest, Sha256};

const SECRET_LEN: usize = 32;
/// How many characters of the secret part the display prefix keeps.
const PREFIX_SECRET_CHARS: usize = 8;

pub const ACCOUNT_PREFIX: &str = "swb_acct_";
pub const SANDBOX_PREFIX: &str = "swb_sandbox_";
pub const LIVE_PREFIX: &str = "swb_live_";
/// Flow sessions: bearer tokens held by a flow page, limited to one scope.
pub const FLOW_PREFIX: &str = "swb_flow_";
/// Single-use login tokens inside flow links (not bearer tokens).
pub const FLOW_LOGIN_PREFIX: &str = "swb_login_";
/// Single-use tokens in the links e-mails carry to hosted pages (not bearer tokens).
pub const HOSTED_LINK_PREFIX: &str = "swb_link_";
/// Single-use tokens in the password reset links e-mailed to dashboard users.
pub const PASSWORD_RESET_PREFIX: &str = "swb_reset_";

/// A token as issued: the plain value (shown once), its display prefix and its stored hash.
pub struct IssuedToken {
    pub plain: String,
    pub prefix: String,
    pub hash: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    App(Environment),
    Account,
    Flow,
}

fn random_secret() -> String {
    rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(SECRET_LEN)
        .map(char::from)
        .collect()
}

fn issue(kind_prefix: &str) -> IssuedToken {
    let secret = random_secret();
    let plain = format!("{kind_prefix}{secret}");
    IssuedToken {
        prefix: format!("{kind_prefix}{}", &secret[..PREFIX_SECRET_CHARS]),
        hash: hash_token(&plain),
        plain,
    }
}

pub fn issue_app_token(environment: Environment) -> IssuedToken {
    issue(match environment {
        Environment::Sandbox => SANDBOX_PREFIX,
        Environment::Live => LIVE_PREFIX,
    })
}

pub fn issue_account_token() -> IssuedToken {
    issue(ACCOUNT_PREFIX)
}

pub fn issue_flow_session_token() -> IssuedToken {
    issue(FLOW_PREFIX)
}

pub fn issue_flow_login_token() -> IssuedToken {
    issue(FLOW_LOGIN_PREFIX)
}

pub fn issue_hosted_link_token() -> IssuedToken {
    issue(HOSTED_LINK_PREFIX)
}

pub fn issue_password_reset_token() -> IssuedToken {
    issue(PASSWORD_RESET_PREFIX)
}

/// Whether `raw` has the form of a password reset token.
pub fn is_password_reset_token(raw: &str) -> bool {
    raw.strip_prefix(PASSWORD_RESET_PREFIX)
        .is_some_and(|s| s.len() == SECRET_LEN && s.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Whether `raw` has the form of a hosted link token.
pub fn is_hosted_link_token(raw: &str) -> bool {
    raw.strip_prefix(HOSTED_LINK_PREFIX)
        .is_some_and(|s| s.len() == SECRET_LEN && s.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Whether `raw` has the form of a flow login token.
pub fn is_flow_login_token(raw: &str) -> bool {
    raw.strip_prefix(FLOW_LOGIN_PREFIX)
        .is_some_and(|s| s.len() == SECRET_LEN && s.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// The longest name a key may have.
pub const KEY_NAME_MAX: usize = 60;

/// A key's name as its member typed it: trimmed, 1 to 60 characters, no control characters.
/// The name says which program uses the key, so that revoking it names what stops working.
pub fn key_name(raw: &str) -> Result<String, super::FieldError> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(super::FieldError::invalid(
            "name",
            "Give the key a name, such as the program that will use it.",
        ));
    }
    if name.chars().count() > KEY_NAME_MAX || name.chars().any(char::is_control) {
        return Err(super::FieldError::invalid(
            "name",
            format!("A key's name has at most {KEY_NAME_MAX} characters, on one line."),
        ));
    }
    Ok(name.to_owned())
}

/// A payment session's client secret (single use, handed to the browser).
pub fn issue_client_secret() -> IssuedToken {
    let id: String = random_secret().chars().take(24).collect();
    issue(&format!("seti_{id}_secret_"))
}

/// A payment method id of the built-in processor.
pub fn payment_method_id() -> String {
    format!("pm_{}", &random_secret()[..24])
}

/// A publishable key of the built-in payment processor.
pub fn issue_publishable_key(environment: Environment) -> String {
    let kind = match environment {
        Environment::Sandbox => "pk_test_",
        Environment::Live => "pk_live_",
    };
    format!("{kind}{}", random_secret())
}

pub fn hash_token(plain: &str) -> String {
    hex_of(&token_digest(plain))
}

/// The raw SHA-256 of a token (what the in-memory caches key on, without formatting it).
pub fn token_digest(plain: &str) -> [u8; 32] {
    Sha256::digest(plain.as_bytes()).into()
}

/// The stored form of a digest: lowercase hex.
pub fn hex_of(digest: &[u8; 32]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a well-formed bearer token claims to be; `None` for anything malformed.
pub fn classify(raw: &str) -> Option<TokenKind> {
    let (kind, secret) = if let Some(s) = raw.strip_prefix(ACCOUNT_PREFIX) {
        (TokenKind::Account, s)
    } else if let Some(s) = raw.strip_prefix(FLOW_PREFIX) {
        (TokenKind::Flow, s)
    } else if let Some(s) = raw.strip_prefix(SANDBOX_PREFIX) {
        (TokenKind::App(Environment::Sandbox), s)
    } else if let Some(s) = raw.strip_prefix(LIVE_PREFIX) {
        (TokenKind::App(Environment::Live), s)
    } else {
        return None;
    };
    (secret.len() == SECRET_LEN && secret.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then_some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_name_is_trimmed_and_bounded() {
        assert_eq!(key_name("  Billing server ").unwrap(), "Billing server");
        assert_eq!(key_name("   ").unwrap_err().param, "name");
        assert!(key_name(&"x".repeat(KEY_NAME_MAX)).is_ok());
        assert!(key_name(&"x".repeat(KEY_NAME_MAX + 1)).is_err());
        assert!(key_name("two\nlines").is_err());
    }

    #[test]
    fn issued_tokens_classify_as_their_kind() {
        let t = issue_app_token(Environment::Sandbox);
        assert!(t.plain.starts_with("swb_sandbox_"));
        assert_eq!(
            classify(&t.plain),
            Some(TokenKind::App(Environment::Sandbox))
        );
        assert_eq!(
            classify(&issue_app_token(Environment::Live).plain),
            Some(TokenKind::App(Environment::Live))
        );
        assert_eq!(
            classify(&issue_account_token().plain),
            Some(TokenKind::Account)
        );
        assert_eq!(
            classify(&issue_flow_session_token().plain),
            Some(TokenKind::Flow)
        );
        let login = issue_flow_login_token().plain;
        assert_eq!(classify(&login), None, "login tokens are not bearer tokens");
        assert!(is_flow_login_token(&login));
    }

    #[test]
    fn malformed_tokens_do_not_classify() {
        for raw in [
            "",
            "swb_acct_",
            "swb_acct_short",
            "bearer",
            "swb_sandbox_!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
        ] {
            assert_eq!(classify(raw), None, "{raw}");
        }
    }

    #[test]
    fn hashes_are_stable_and_hide_the_token() {
        let t = issue_account_token();
        assert_eq!(t.hash, hash_token(&t.plain));
        assert_eq!(t.hash, hex_of(&token_digest(&t.plain)));
        assert_eq!(t.hash.len(), 64);
        assert!(!t.hash.contains(&t.plain[9..]));
        assert!(t.plain.starts_with(&t.prefix));
        assert_ne!(t.plain, t.prefix);
    }
}
