//! The card processor's webhooks to us: a delivery is trusted only when its signature header
//! (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, several `v1` while the processor
//! rolls its signing secret) matches the body under our signing secret, and its timestamp is
//! within the tolerance of now, so that a delivery captured once cannot be replayed later (a
//! replay inside the window is caught by the event id, which the receiver records).

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// How far a delivery's timestamp may be from now, either way.
pub const TOLERANCE_SECONDS: i64 = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureError {
    /// No `t=` or no `v1=` in the header, or a `t` that is not a number.
    Malformed,
    /// No `v1` matches the body under the secret.
    Mismatch,
    /// Signed too long ago (or too far ahead): possibly a replay.
    Stale,
}

/// Checks a delivery's signature header against its raw body.
pub fn verify(
    header: &str,
    body: &[u8],
    secret: &[u8],
    now: DateTime<Utc>,
) -> Result<(), SignatureError> {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = Some(t),
            Some(("v1", v)) => signatures.push(v),
            _ => {}
        }
    }
    let t = timestamp.ok_or(SignatureError::Malformed)?;
    let seconds: i64 = t.parse().map_err(|_| SignatureError::Malformed)?;
    if signatures.is_empty() {
        return Err(SignatureError::Malformed);
    }
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(secret).map_err(|_| SignatureError::Mismatch)?;
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let matches = signatures
        .iter()
        .any(|s| bool::from(s.as_bytes().ct_eq(expected.as_bytes())));
    if !matches {
        return Err(SignatureError::Mismatch);
    }
    if (now.timestamp() - seconds).abs() > TOLERANCE_SECONDS {
        return Err(SignatureError::Stale);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn sign(t: i64, body: &[u8], secret: &[u8]) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).unwrap();
        mac.update(format!("{t}.").as_bytes());
        mac.update(body);
        let hex: String = mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("t={t},v1={hex}")
    }

    #[test]
    fn a_delivery_signed_with_our_secret_and_recent_is_trusted() {
        let now = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
        let body = br#"{"id":"evt_1","type":"payment_intent.succeeded"}"#;
        let header = sign(1_800_000_000 - 10, body, b"whsec_one");
        assert_eq!(verify(&header, body, b"whsec_one", now), Ok(()));
        // While the processor rolls its secret it sends both signatures.
        let rolled = format!("{},v1=00ff", sign(1_800_000_000, body, b"whsec_one"));
        assert_eq!(verify(&rolled, body, b"whsec_one", now), Ok(()));
    }

    #[test]
    fn anything_else_is_refused() {
        let now = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
        let body = br#"{"id":"evt_1"}"#;
        let good = sign(1_800_000_000, body, b"whsec_one");
        assert_eq!(
            verify(&good, body, b"whsec_two", now),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(&good, br#"{"id":"evt_2"}"#, b"whsec_one", now),
            Err(SignatureError::Mismatch)
        );
        let old = sign(1_800_000_000 - TOLERANCE_SECONDS - 1, body, b"whsec_one");
        assert_eq!(
            verify(&old, body, b"whsec_one", now),
            Err(SignatureError::Stale)
        );
        let ahead = sign(1_800_000_000 + TOLERANCE_SECONDS + 1, body, b"whsec_one");
        assert_eq!(
            verify(&ahead, body, b"whsec_one", now),
            Err(SignatureError::Stale)
        );
        for bad in ["", "v1=abc", "t=1800000000", "t=soon,v1=abc"] {
            assert_eq!(
                verify(bad, body, b"whsec_one", now),
                Err(SignatureError::Malformed),
                "{bad}"
            );
        }
        // The timestamp is part of what is signed: moving it breaks the signature.
        let moved = good.replacen("t=1800000000", "t=1800000001", 1);
        assert_eq!(
            verify(&moved, body, b"whsec_one", now),
            Err(SignatureError::Mismatch)
        );
    }
}
