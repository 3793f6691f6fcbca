//! Signed links: URLs the API hands out (invoice PDFs, plan and location documents) that a
//! browser opens with no Authorization header. A link carries `expires` (Unix seconds) and
//! `signature`, an HMAC-SHA256 of its path and expiry; a link whose path or expiry was changed,
//! or whose time is up, is refused.

use std::fmt;

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// How long a link handed out stays valid.
pub const LINK_LIFETIME: Duration = Duration::hours(1);

/// Separates this key's uses from every other use of the secret it is derived from.
const DERIVATION_LABEL: &[u8] = b"switchboard signed links v1";

/// The secret links are signed with. Derived from a secret every instance shares (the PII key),
/// so that a link made by one instance opens on any other, and no extra setting is needed.
#[derive(Clone)]
pub struct LinkKey([u8; 32]);

impl fmt::Debug for LinkKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LinkKey([redacted])")
    }
}

impl LinkKey {
    pub fn derive(secret: &[u8]) -> LinkKey {
        LinkKey(mac(secret, DERIVATION_LABEL).finalize().into_bytes().into())
    }

    fn mac_of(&self, path: &str, expires: i64) -> HmacSha256 {
        let mut m = mac(&self.0, path.as_bytes());
        m.update(b"\n");
        m.update(expires.to_string().as_bytes());
        m
    }
}

fn mac(key: &[u8], message: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length.
    let mut m = HmacSha256::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    m.update(message);
    m
}

/// Why a link is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkRejection {
    /// Missing or wrong signature, or an expiry that is not a number: the link was not made
    /// by this service as it stands.
    Invalid,
    Expired,
}

/// The query (`expires=...&signature=...`) that makes `path` openable until `now` plus
/// `LINK_LIFETIME`.
pub fn sign(key: &LinkKey, path: &str, now: DateTime<Utc>) -> String {
    let expires = (now + LINK_LIFETIME).timestamp();
    let signature = URL_SAFE_NO_PAD.encode(key.mac_of(path, expires).finalize().into_bytes());
    format!("expires={expires}&signature={signature}")
}

/// Whether the link `path?expires=...&signature=...` may be opened at `now`. The signature is
/// checked first (in constant time), so a changed expiry reads as invalid, not as expired.
pub fn verify(
    key: &LinkKey,
    path: &str,
    expires: Option<&str>,
    signature: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), LinkRejection> {
    let expires: i64 = expires
        .and_then(|e| e.parse().ok())
        .ok_or(LinkRejection::Invalid)?;
    let signature = signature
        .and_then(|s| URL_SAFE_NO_PAD.decode(s).ok())
        .ok_or(LinkRejection::Invalid)?;
    key.mac_of(path, expires)
        .verify_slice(&signature)
        .map_err(|_| LinkRejection::Invalid)?;
    if now.timestamp() >= expires {
        return Err(LinkRejection::Expired);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(query: &str) -> (String, String) {
        let (e, s) = query.split_once('&').unwrap();
        (
            e.strip_prefix("expires=").unwrap().to_owned(),
            s.strip_prefix("signature=").unwrap().to_owned(),
        )
    }

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    const PATH: &str = "/files/invoices/5f0c/INV-00000001";

    #[test]
    fn a_signed_link_opens_until_it_expires() {
        let key = LinkKey::derive(b"a secret of the deployment");
        let issued = at("2026-03-01T12:00:00Z");
        let (expires, signature) = parts(&sign(&key, PATH, issued));
        assert_eq!(
            expires,
            (issued + Duration::hours(1)).timestamp().to_string()
        );
        let check = |now| verify(&key, PATH, Some(&expires), Some(&signature), now);
        assert_eq!(check(issued), Ok(()));
        assert_eq!(check(at("2026-03-01T12:59:59Z")), Ok(()));
        assert_eq!(
            check(at("2026-03-01T13:00:00Z")),
            Err(LinkRejection::Expired)
        );
    }

    #[test]
    fn a_changed_path_expiry_or_signature_is_invalid() {
        let key = LinkKey::derive(b"a secret of the deployment");
        let now = at("2026-03-01T12:00:00Z");
        let (expires, signature) = parts(&sign(&key, PATH, now));
        let later = (now + Duration::days(30)).timestamp().to_string();
        let mut flipped = signature.clone().into_bytes();
        flipped[3] = if flipped[3] == b'A' { b'B' } else { b'A' };
        let flipped = String::from_utf8(flipped).unwrap();
        let cases = [
            (
                "/files/invoices/5f0c/INV-00000002",
                Some(expires.as_str()),
                Some(signature.as_str()),
            ),
            (PATH, Some(later.as_str()), Some(signature.as_str())),
            (PATH, Some(expires.as_str()), Some(flipped.as_str())),
            (PATH, Some(expires.as_str()), None),
            (PATH, None, Some(signature.as_str())),
            (PATH, Some("soon"), Some(signature.as_str())),
            (PATH, Some(expires.as_str()), Some("not base64!")),
        ];
        for (path, e, s) in cases {
            assert_eq!(
                verify(&key, path, e, s, now),
                Err(LinkRejection::Invalid),
                "{path} {e:?} {s:?}"
            );
        }
    }

    #[test]
    fn links_open_only_with_the_key_that_signed_them() {
        let now = at("2026-03-01T12:00:00Z");
        let (expires, signature) = parts(&sign(&LinkKey::derive(b"one"), PATH, now));
        let other = LinkKey::derive(b"two");
        assert_eq!(
            verify(&other, PATH, Some(&expires), Some(&signature), now),
            Err(LinkRejection::Invalid)
        );
        // Every instance derives the same key from the same secret.
        let again = LinkKey::derive(b"one");
        assert_eq!(
            verify(&again, PATH, Some(&expires), Some(&signature), now),
            Ok(())
        );
    }
}
