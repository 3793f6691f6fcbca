//! Encryption of personal data and secrets at rest (SSNs, processor keys, webhook signing
//! secrets): AES-256-GCM with a random nonce per value, stored as `nonce || ciphertext` (in
//! text columns as `sealed:` and its base64). The key comes from configuration (`pii_key`, base64 of 32
//! bytes) or, for a SQLite install, from a key file created beside the database.

use std::{fmt, path::Path};

use aes_gcm::{
    aead::{Aead, AeadCore, KeyInit, OsRng},
    Aes256Gcm, Key, Nonce,
};
use base64::{engine::general_purpose::STANDARD, Engine};

use crate::domain::links::LinkKey;

const NONCE_LEN: usize = 12;

/// How text sealed by `PiiKey::seal_text` starts.
const SEALED_TEXT: &str = "sealed:";

/// Whether a stored text value is sealed (rather than kept from before sealing came in).
pub fn is_sealed_text(stored: &str) -> bool {
    stored.starts_with(SEALED_TEXT)
}

pub struct PiiKey {
    cipher: Aes256Gcm,
    /// Signs the links the API hands out; derived from this key so that every instance agrees.
    links: LinkKey,
}

impl fmt::Debug for PiiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PiiKey([redacted])")
    }
}

impl PiiKey {
    /// A key from its base64 form.
    pub fn from_base64(encoded: &str) -> anyhow::Result<PiiKey> {
        let bytes = STANDARD
            .decode(encoded.trim())
            .map_err(|_| anyhow::anyhow!("pii_key must be base64"))?;
        anyhow::ensure!(bytes.len() == 32, "pii_key must be 32 bytes (base64)");
        Ok(PiiKey {
            cipher: Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&bytes)),
            links: LinkKey::derive(&bytes),
        })
    }

    /// A new random key in base64, for `pii_key`.
    pub fn generate_base64() -> String {
        STANDARD.encode(Aes256Gcm::generate_key(OsRng))
    }

    /// The key in `path`, created (readable by the owner only) when missing.
    pub fn from_file(path: &Path) -> anyhow::Result<PiiKey> {
        if !path.exists() {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(path, Self::generate_base64())?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
            }
        }
        Self::from_base64(&std::fs::read_to_string(path)?)
    }

    pub fn link_key(&self) -> &LinkKey {
        &self.links
    }

    pub fn seal(&self, plaintext: &[u8]) -> Vec<u8> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        // Encryption into a Vec cannot fail for inputs of this size.
        let ciphertext = self.cipher.encrypt(&nonce, plaintext).unwrap_or_default();
        let mut out = nonce.to_vec();
        out.extend(ciphertext);
        out
    }

    /// `plaintext` sealed, as text for a text column.
    pub fn seal_text(&self, plaintext: &str) -> String {
        format!(
            "{SEALED_TEXT}{}",
            STANDARD.encode(self.seal(plaintext.as_bytes()))
        )
    }

    /// Text sealed by `seal_text`; a value stored before sealing came in reads as itself (and
    /// is sealed at the next start, see `is_sealed_text`).
    pub fn open_text(&self, stored: &str) -> anyhow::Result<String> {
        let Some(encoded) = stored.strip_prefix(SEALED_TEXT) else {
            return Ok(stored.to_owned());
        };
        let sealed = STANDARD
            .decode(encoded)
            .map_err(|_| anyhow::anyhow!("sealed text is not base64"))?;
        Ok(String::from_utf8(self.open(&sealed)?)?)
    }

    pub fn open(&self, sealed: &[u8]) -> anyhow::Result<Vec<u8>> {
        anyhow::ensure!(sealed.len() > NONCE_LEN, "sealed value too short");
        let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
        self.cipher
            .decrypt(Nonce::from_slice(nonce), ciphertext)
            .map_err(|_| anyhow::anyhow!("sealed value does not open with this key"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_values_open_only_with_their_key() {
        let key = PiiKey::from_base64(&PiiKey::generate_base64()).unwrap();
        let sealed = key.seal(b"123456789");
        assert!(!sealed.windows(9).any(|w| w == b"123456789"));
        assert_ne!(sealed, key.seal(b"123456789"), "nonces differ");
        assert_eq!(key.open(&sealed).unwrap(), b"123456789");
        let other = PiiKey::from_base64(&PiiKey::generate_base64()).unwrap();
        assert!(other.open(&sealed).is_err());
        assert!(PiiKey::from_base64("c2hvcnQ=").is_err());
        assert_eq!(format!("{key:?}"), "PiiKey([redacted])");
    }

    #[test]
    fn sealed_text_opens_and_plain_text_reads_as_itself() {
        let key = PiiKey::from_base64(&PiiKey::generate_base64()).unwrap();
        let sealed = key.seal_text("whsec_abc");
        assert!(is_sealed_text(&sealed) && !sealed.contains("whsec_abc"));
        assert_eq!(key.open_text(&sealed).unwrap(), "whsec_abc");
        assert_eq!(key.open_text("whsec_old").unwrap(), "whsec_old");
        assert!(!is_sealed_text("whsec_old"));
        let other = PiiKey::from_base64(&PiiKey::generate_base64()).unwrap();
        assert!(other.open_text(&sealed).is_err());
    }

    #[test]
    fn key_files_are_created_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys/pii.key");
        let a = PiiKey::from_file(&path).unwrap();
        let b = PiiKey::from_file(&path).unwrap();
        assert_eq!(b.open(&a.seal(b"x")).unwrap(), b"x");
    }
}
