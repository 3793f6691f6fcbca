//! The people who sign in to the dashboard: their roles, what a password must be, how it is
//! hashed (argon2id) and checked, and which apps each may see.

use argon2::{
    password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString},
    Argon2,
};
use rand::{distributions::Alphanumeric, Rng};
use uuid::Uuid;

use super::FieldError;

text_enum! {
    /// What a dashboard user may do: an operator runs the platform (every app, live apps, the
    /// audit log); a partner member runs the apps of their organisation.
    pub enum Role {
        Operator = "operator",
        Partner = "partner",
    }
}

/// The shortest password the dashboard accepts.
pub const MIN_PASSWORD_CHARS: usize = 12;
/// The longest (hashing cost must not be the caller's to choose).
pub const MAX_PASSWORD_CHARS: usize = 200;
/// How long an e-mailed password reset link can be used.
pub const RESET_LINK_LIFETIME: chrono::Duration = chrono::Duration::hours(1);
/// Reset links one user may be sent in `RESET_LINK_LIFETIME`; further requests send nothing.
pub const RESET_LINKS_PER_HOUR: i64 = 3;

/// A password as typed, of an acceptable length. Its `Debug` never shows it.
#[derive(Clone)]
pub struct Password(String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(..)")
    }
}

impl Password {
    /// A new password someone chose: 12 to 200 characters.
    pub fn new(raw: &str) -> Result<Password, FieldError> {
        let n = raw.chars().count();
        if !(MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&n) {
            return Err(FieldError::invalid(
                "password",
                format!(
                    "password must have {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters"
                ),
            ));
        }
        Ok(Password(raw.to_owned()))
    }

    /// A random password to hand over once (24 letters and digits, about 142 bits).
    pub fn generate() -> Password {
        Password(
            rand::thread_rng()
                .sample_iter(&Alphanumeric)
                .take(24)
                .map(char::from)
                .collect(),
        )
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The argon2id hash (PHC string, with its own random salt) to store.
    pub fn hash(&self) -> String {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(self.0.as_bytes(), &salt)
            .map(|h| h.to_string())
            // Only an output buffer too small for the parameters fails; the defaults fit.
            .unwrap_or_default()
    }
}

/// Whether `typed` is the password of `stored_hash`. A missing user is checked against a fixed
/// hash, so that the answer takes as long either way and does not tell which e-mails exist.
pub fn verify_password(typed: &str, stored_hash: Option<&str>) -> bool {
    static DUMMY: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| Password::generate().hash());
    if typed.chars().count() > MAX_PASSWORD_CHARS {
        return false;
    }
    let hash = stored_hash.unwrap_or(DUMMY.as_str());
    let ok = PasswordHash::new(hash).is_ok_and(|parsed| {
        Argon2::default()
            .verify_password(typed.as_bytes(), &parsed)
            .is_ok()
    });
    ok && stored_hash.is_some()
}

/// Who is signed in, as the tenancy rules need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub role: Role,
    pub organisation: Option<Uuid>,
}

impl Member {
    /// Whether this user may see and change an app owned by `owner` (none: the platform's own,
    /// seen by operators only).
    pub fn may_see(&self, owner: Option<Uuid>) -> bool {
        match self.role {
            Role::Operator => true,
            Role::Partner => owner.is_some() && owner == self.organisation,
        }
    }

    pub fn is_operator(&self) -> bool {
        self.role == Role::Operator
    }
}

/// An organisation's name: 1 to 100 characters, trimmed.
pub fn organisation_name(raw: &str) -> Result<String, FieldError> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(FieldError::invalid(
            "organisation",
            "organisation must have 1 to 100 characters",
        ));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_have_a_minimum_and_a_maximum_length() {
        assert!(Password::new("short").is_err());
        assert!(Password::new(&"x".repeat(11)).is_err());
        assert!(Password::new(&"x".repeat(12)).is_ok());
        assert!(Password::new(&"x".repeat(201)).is_err());
        assert_eq!(
            format!("{:?}", Password::new("a long secret!").unwrap()),
            "Password(..)"
        );
    }

    #[test]
    fn a_hash_verifies_its_password_only() {
        let p = Password::new("correct horse battery").unwrap();
        let hash = p.hash();
        assert!(hash.starts_with("$argon2id$"));
        assert!(!hash.contains("correct horse"));
        assert!(verify_password("correct horse battery", Some(&hash)));
        assert!(!verify_password("correct horse battery!", Some(&hash)));
        assert!(!verify_password("correct horse battery", None));
        assert!(!verify_password("anything", Some("not a hash")));
        // Two hashes of one password differ (their salts do).
        assert_ne!(hash, p.hash());
    }

    #[test]
    fn generated_passwords_are_long_enough_and_differ() {
        let a = Password::generate();
        assert!(Password::new(a.expose()).is_ok());
        assert_ne!(a.expose(), Password::generate().expose());
    }

    #[test]
    fn partners_see_their_organisations_apps_only() {
        let org = Uuid::new_v4();
        let partner = Member {
            role: Role::Partner,
            organisation: Some(org),
        };
        assert!(partner.may_see(Some(org)));
        assert!(!partner.may_see(Some(Uuid::new_v4())));
        assert!(!partner.may_see(None));
        let operator = Member {
            role: Role::Operator,
            organisation: None,
        };
        assert!(operator.may_see(None) && operator.may_see(Some(org)));
    }

    #[test]
    fn organisation_names_are_trimmed_and_bounded() {
        assert_eq!(organisation_name("  Acme  ").unwrap(), "Acme");
        assert!(organisation_name("   ").is_err());
        assert!(organisation_name(&"a".repeat(101)).is_err());
    }
}
