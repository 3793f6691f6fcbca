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

/// What a trusted delivery says, as far as our payments are concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The processor's event id: the same event delivered again is recognized by it.
    pub id: String,
    pub kind: String,
    pub change: PaymentChange,
}

/// What happened to a payment of ours (named by the processor's payment id), or nothing we
/// keep (any other event type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentChange {
    /// `payment_intent.succeeded`.
    Succeeded {
        payment_id: String,
    },
    /// `payment_intent.payment_failed`, with the card's decline code (or the error's code).
    Failed {
        payment_id: String,
        failure_code: String,
    },
    /// `charge.refunded`: how much of the payment the processor has refunded in all.
    Refunded {
        payment_id: String,
        refunded_cents: i64,
    },
    /// `charge.dispute.created`: the cardholder disputes the payment with their bank.
    Disputed {
        payment_id: String,
        amount_cents: i64,
    },
    /// `setup_intent.succeeded`: the processor saved a card for one of its customers (ours
    /// when the customer is an account's), whether or not the flow told us of it.
    CardSaved {
        customer_id: String,
        payment_method_id: String,
    },
    Other,
}

/// Why a delivery's body was not understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unreadable;

#[derive(serde::Deserialize)]
struct RawEvent {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    data: RawData,
}

#[derive(serde::Deserialize)]
struct RawData {
    object: serde_json::Value,
}

/// Reads a delivery's body (already verified): the event's id and type, and the payment change
/// it carries. An event of a kind we keep but without the fields it needs is unreadable.
pub fn parse(body: &[u8]) -> Result<Delivery, Unreadable> {
    let raw: RawEvent = serde_json::from_slice(body).map_err(|_| Unreadable)?;
    if raw.id.is_empty() || raw.id.len() > 255 {
        return Err(Unreadable);
    }
    let object = &raw.data.object;
    let text = |key: &str| {
        object
            .get(key)
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let number = |key: &str| object.get(key).and_then(serde_json::Value::as_i64);
    let change = match raw.kind.as_str() {
        "payment_intent.succeeded" => PaymentChange::Succeeded {
            payment_id: text("id").ok_or(Unreadable)?,
        },
        "payment_intent.payment_failed" => {
            let error = object.get("last_payment_error");
            let code = |key: &str| {
                error
                    .and_then(|e| e.get(key))
                    .and_then(|v| v.as_str())
                    .filter(|s| {
                        !s.is_empty()
                            && s.len() <= 64
                            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    })
                    .map(str::to_owned)
            };
            PaymentChange::Failed {
                payment_id: text("id").ok_or(Unreadable)?,
                failure_code: code("decline_code")
                    .or_else(|| code("code"))
                    .unwrap_or_else(|| "card_declined".to_owned()),
            }
        }
        "charge.refunded" => PaymentChange::Refunded {
            payment_id: text("payment_intent").ok_or(Unreadable)?,
            refunded_cents: number("amount_refunded").ok_or(Unreadable)?,
        },
        "setup_intent.succeeded" => PaymentChange::CardSaved {
            customer_id: text("customer").ok_or(Unreadable)?,
            payment_method_id: text("payment_method").ok_or(Unreadable)?,
        },
        "charge.dispute.created" => PaymentChange::Disputed {
            payment_id: text("payment_intent").ok_or(Unreadable)?,
            amount_cents: number("amount").ok_or(Unreadable)?,
        },
        _ => PaymentChange::Other,
    };
    Ok(Delivery {
        id: raw.id,
        kind: raw.kind,
        change,
    })
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

    #[test]
    fn deliveries_read_as_the_payment_change_they_carry() {
        let read = |body: &str| parse(body.as_bytes());
        assert_eq!(
            read(
                r#"{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","status":"succeeded"}}}"#
            ),
            Ok(Delivery {
                id: "evt_1".into(),
                kind: "payment_intent.succeeded".into(),
                change: PaymentChange::Succeeded {
                    payment_id: "pi_1".into()
                }
            })
        );
        assert_eq!(
            read(r#"{"id":"evt_2","type":"payment_intent.payment_failed","data":{"object":{"id":"pi_2","last_payment_error":{"code":"card_declined","decline_code":"insufficient_funds"}}}}"#).unwrap().change,
            PaymentChange::Failed { payment_id: "pi_2".into(), failure_code: "insufficient_funds".into() }
        );
        // A code that is no code of theirs is not carried into our events.
        assert_eq!(
            read(r#"{"id":"evt_3","type":"payment_intent.payment_failed","data":{"object":{"id":"pi_3","last_payment_error":{"code":"<b>no</b>"}}}}"#).unwrap().change,
            PaymentChange::Failed { payment_id: "pi_3".into(), failure_code: "card_declined".into() }
        );
        assert_eq!(
            read(r#"{"id":"evt_4","type":"charge.refunded","data":{"object":{"id":"ch_1","payment_intent":"pi_4","amount_refunded":1250}}}"#).unwrap().change,
            PaymentChange::Refunded { payment_id: "pi_4".into(), refunded_cents: 1250 }
        );
        assert_eq!(
            read(r#"{"id":"evt_5","type":"charge.dispute.created","data":{"object":{"id":"dp_1","payment_intent":"pi_5","amount":900}}}"#).unwrap().change,
            PaymentChange::Disputed { payment_id: "pi_5".into(), amount_cents: 900 }
        );
        assert_eq!(
            read(r#"{"id":"evt_8","type":"setup_intent.succeeded","data":{"object":{"id":"seti_1","customer":"cus_1","payment_method":"pm_1"}}}"#).unwrap().change,
            PaymentChange::CardSaved { customer_id: "cus_1".into(), payment_method_id: "pm_1".into() }
        );
        assert_eq!(
            read(r#"{"id":"evt_6","type":"customer.created","data":{"object":{"id":"cus_1"}}}"#)
                .unwrap()
                .change,
            PaymentChange::Other
        );
        for bad in [
            "",
            "[]",
            r#"{"id":"evt_7","type":"charge.refunded","data":{"object":{"id":"ch_1"}}}"#,
            r#"{"type":"payment_intent.succeeded","data":{"object":{"id":"pi_1"}}}"#,
            r#"{"id":"evt_9","type":"setup_intent.succeeded","data":{"object":{"id":"seti_1","customer":"cus_1"}}}"#,
        ] {
            assert_eq!(read(bad), Err(Unreadable), "{bad}");
        }
    }
}
