//! Webhook rules (Standard Webhooks, as `docs/api-conventions.md` describes): secrets and
//! signatures, which URLs an endpoint may target, how an attempt's answer is judged, the retry
//! schedule, and when an endpoint is disabled.

use std::{
    fmt,
    net::{IpAddr, Ipv4Addr},
};

use app::api::Environment;
use base64::{engine::general_purpose::STANDARD as BASE64, Engine as _};
use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use url::{Host, Url};

use super::{
    events::{endpoint_wants, is_known_event_type, EVENT_TYPES, TEST_EVENT_TYPE},
    FieldError,
};

const SECRET_PREFIX: &str = "whsec_";

/// An endpoint's signing secret, `whsec_` + base64 of 24 to 64 random bytes. Its `Debug`
/// prints nothing, so that it never reaches a log.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret {
    text: String,
    key: Vec<u8>,
}

impl WebhookSecret {
    /// A fresh secret of 32 random bytes.
    pub fn generate() -> WebhookSecret {
        let mut key = vec![0u8; 32];
        rand::thread_rng().fill_bytes(&mut key);
        WebhookSecret {
            text: format!("{SECRET_PREFIX}{}", BASE64.encode(&key)),
            key,
        }
    }

    pub fn parse(text: &str) -> Option<WebhookSecret> {
        let key = BASE64.decode(text.strip_prefix(SECRET_PREFIX)?).ok()?;
        (24..=64).contains(&key.len()).then(|| WebhookSecret {
            text: text.to_owned(),
            key,
        })
    }

    /// The secret as shown once to the partner and as stored.
    pub fn expose(&self) -> &str {
        &self.text
    }

    /// `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`.
    pub fn sign(&self, msg_id: &str, timestamp: i64, body: &[u8]) -> String {
        // HMAC takes keys of any length, so this cannot fail.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
        mac.update(msg_id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret([redacted])")
    }
}

/// The `webhook-signature` header: one signature per secret that still signs (two during the
/// 24 hours after a rotation), space-separated.
pub fn signature_header(
    secrets: &[&WebhookSecret],
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .iter()
        .map(|s| s.sign(msg_id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How long the secret before a rotation keeps signing.
pub const ROTATION_OVERLAP: Duration = Duration::hours(24);

/// Why a URL cannot be an endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlRefusal {
    /// Not an absolute http(s) URL with a host.
    Invalid(String),
    /// A live app aiming at the service's own network (loopback, private, link-local...).
    NotAllowed(String),
}

impl From<UrlRefusal> for FieldError {
    fn from(r: UrlRefusal) -> Self {
        match r {
            UrlRefusal::Invalid(m) | UrlRefusal::NotAllowed(m) => FieldError::invalid("url", m),
        }
    }
}

/// Parses an endpoint URL. Sandbox apps may target any http(s) URL, loopback included (a
/// partner's laptop); live apps need https and a public host, so that an endpoint cannot be
/// used to reach the service's own network. Host names are checked again when they resolve
/// (see `is_public_ip`).
pub fn parse_endpoint_url(raw: &str, environment: Environment) -> Result<Url, UrlRefusal> {
    let url = Url::parse(raw.trim())
        .map_err(|_| UrlRefusal::Invalid("url must be an absolute http or https URL".into()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlRefusal::Invalid("url must use http or https".into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlRefusal::Invalid("url must not carry credentials".into()));
    }
    let host = url
        .host()
        .ok_or_else(|| UrlRefusal::Invalid("url must have a host".into()))?;
    if raw.len() > 2048 {
        return Err(UrlRefusal::Invalid(
            "url is longer than 2048 characters".into(),
        ));
    }
    if environment == Environment::Live {
        if url.scheme() != "https" {
            return Err(UrlRefusal::NotAllowed(
                "live endpoints must use https".into(),
            ));
        }
        let public = match host {
            Host::Ipv4(ip) => is_public_ip(IpAddr::V4(ip)),
            Host::Ipv6(ip) => is_public_ip(IpAddr::V6(ip)),
            Host::Domain(name) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                !(name == "localhost"
                    || name.ends_with(".localhost")
                    || name.ends_with(".local")
                    || name.ends_with(".internal")
                    || !name.contains('.'))
            }
        };
        if !public {
            return Err(UrlRefusal::NotAllowed(
                "live endpoints must be on the public internet".into(),
            ));
        }
    }
    Ok(url)
}

/// Whether an address is on the public internet (not loopback, private, link-local, shared,
/// multicast, documentation or otherwise reserved).
pub fn is_public_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let s = v6.segments();
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link-local
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || (s[0] == 0x0064 && s[1] == 0xff9b)) // NAT64 to anything
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240)
}

/// An endpoint's event filter: known types, each once, in the order given (empty: all).
pub fn parse_event_types(types: Vec<String>) -> Result<Vec<String>, FieldError> {
    let mut out: Vec<String> = Vec::with_capacity(types.len());
    for (i, t) in types.into_iter().enumerate() {
        if !is_known_event_type(&t) {
            return Err(FieldError::invalid(
                format!("event_types[{i}]"),
                format!(
                    "unknown event type {t}; the event types are: {}",
                    EVENT_TYPES.join(", ")
                ),
            ));
        }
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(out)
}

/// A free-text description, trimmed, at most 500 characters; blank means none.
pub fn parse_description(d: Option<String>) -> Result<Option<String>, FieldError> {
    let Some(d) = d.map(|d| d.trim().to_owned()).filter(|d| !d.is_empty()) else {
        return Ok(None);
    };
    if d.chars().count() > 500 {
        return Err(FieldError::invalid(
            "description",
            "description is longer than 500 characters",
        ));
    }
    Ok(Some(d))
}

/// Delay before each attempt: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
pub const RETRY_SCHEDULE: [Duration; 8] = [
    Duration::zero(),
    Duration::seconds(5),
    Duration::minutes(5),
    Duration::minutes(30),
    Duration::hours(2),
    Duration::hours(5),
    Duration::hours(10),
    Duration::hours(10),
];

/// Attempts per delivery, the first included.
pub const MAX_ATTEMPTS: u32 = RETRY_SCHEDULE.len() as u32;

/// An endpoint failing for this long is disabled.
pub const DISABLE_AFTER_FAILING_FOR: Duration = Duration::days(5);

/// Longest wait for an answer.
pub const ATTEMPT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// What an attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptResult {
    /// Any 2xx.
    Succeeded,
    /// 410 Gone: the receiver asks us to stop; the endpoint is disabled.
    Gone,
    /// Anything else (3xx included, timeouts and connection errors), with the receiver's
    /// `Retry-After` when it sent one on 429 or 503.
    Failed { retry_after: Option<Duration> },
}

/// Judges an HTTP answer. `retry_after` is the raw header.
pub fn judge_response(status: u16, retry_after: Option<&str>, now: DateTime<Utc>) -> AttemptResult {
    match status {
        200..=299 => AttemptResult::Succeeded,
        410 => AttemptResult::Gone,
        429 | 503 => AttemptResult::Failed {
            retry_after: retry_after.and_then(|v| parse_retry_after(v, now)),
        },
        _ => AttemptResult::Failed { retry_after: None },
    }
}

/// `Retry-After` as delay-seconds or an HTTP date.
pub fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u32>() {
        return Some(Duration::seconds(i64::from(seconds)));
    }
    let at = DateTime::parse_from_rfc2822(value)
        .ok()?
        .with_timezone(&Utc);
    Some((at - now).max(Duration::zero()))
}

/// When to try again after attempt `attempt` (1-based) failed, or `None` when the schedule is
/// spent. A receiver's `Retry-After` pushes the next attempt later, never earlier, and never
/// past the longest step of the schedule.
pub fn next_attempt_at(
    attempt: u32,
    now: DateTime<Utc>,
    retry_after: Option<Duration>,
) -> Option<DateTime<Utc>> {
    let scheduled = *RETRY_SCHEDULE.get(attempt as usize)?;
    let longest = RETRY_SCHEDULE[RETRY_SCHEDULE.len() - 1];
    let wait = retry_after.map_or(scheduled, |r| r.min(longest).max(scheduled));
    Some(now + wait)
}

/// What a failed attempt does to its endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointVerdict {
    KeepTrying,
    Disable(DisableReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisableReason {
    /// The receiver answered 410 Gone.
    Gone,
    /// Every attempt failed for 5 days.
    FailingFor5Days,
    /// The partner disabled it.
    Manual,
}

impl DisableReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DisableReason::Gone => "endpoint_gone",
            DisableReason::FailingFor5Days => "failing_for_5_days",
            DisableReason::Manual => "disabled_by_app",
        }
    }
}

/// What a partner's `disabled` field does to an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisabledChange {
    Keep,
    /// Disabled by the partner (`DisableReason::Manual`).
    Disable,
    /// Enabled, its reason and past failures forgotten.
    Enable,
}

/// `disabled: true` disables an enabled endpoint, and keeps the reason of one already disabled
/// (a 410 stays the reason); `disabled: false` always enables and forgets past failures, so an
/// endpoint that was failing starts its 5 days again.
pub fn disabled_change(requested: Option<bool>, currently_disabled: bool) -> DisabledChange {
    match requested {
        Some(true) if !currently_disabled => DisabledChange::Disable,
        Some(false) => DisabledChange::Enable,
        _ => DisabledChange::Keep,
    }
}

/// Whether a recover sends `kind` again to an endpoint subscribed to `filter`: the types it
/// wants, never a test event (those were meant for one endpoint once).
pub fn recovers(filter: &[String], kind: &str) -> bool {
    endpoint_wants(filter, kind) && kind != TEST_EVENT_TYPE
}

/// Whether an endpoint whose filter is stored as `filter_json` (a JSON array of types) receives
/// `kind`. A filter that does not parse counts as empty, so the endpoint receives everything
/// rather than silently nothing.
pub fn endpoint_wants_text(filter_json: &str, kind: &str) -> bool {
    let filter: Vec<String> = serde_json::from_str(filter_json).unwrap_or_default();
    endpoint_wants(&filter, kind)
}

/// Disable rules: a 410 disables at once; otherwise an endpoint whose failures began 5 days
/// ago or more is disabled.
pub fn after_failure(
    result: &AttemptResult,
    failing_since: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> EndpointVerdict {
    if *result == AttemptResult::Gone {
        return EndpointVerdict::Disable(DisableReason::Gone);
    }
    match failing_since {
        Some(since) if now - since >= DISABLE_AFTER_FAILING_FOR => {
            EndpointVerdict::Disable(DisableReason::FailingFor5Days)
        }
        _ => EndpointVerdict::KeepTrying,
    }
}

super::text_enum! {
    /// How one delivery attempt of an event to an endpoint ended.
    pub enum DeliveryStatus {
        Succeeded = "succeeded",
        Failed = "failed",
        Pending = "pending",
    }
}

/// Link-local addresses (169.254.0.0/16, fe80::/10), where cloud metadata services answer:
/// never a webhook target, whatever the configuration.
pub fn is_link_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => {
            v6.to_ipv4_mapped().is_some_and(|v4| v4.is_link_local())
                || (v6.segments()[0] & 0xffc0) == 0xfe80
        }
    }
}

/// Whether a delivery may connect to `ip`: a public address, or (when the operator allows
/// private targets) any address but a link-local one.
pub fn target_allowed(ip: IpAddr, allow_private: bool) -> bool {
    !is_link_local(ip) && (allow_private || is_public_ip(ip))
}

/// Host names of cloud metadata services, refused like their addresses.
const METADATA_HOSTS: &[&str] = &["metadata.google.internal", "metadata.goog", "metadata"];

/// Checks where an endpoint URL (already parsed) points, by its text: link-local addresses and
/// metadata host names never; loopback and private addresses, and names that only a local
/// network resolves (`localhost`, `.local`, `.internal`, no dot), only when `allow_private`.
/// Names are checked again, by their addresses, when a delivery resolves them.
pub fn check_target(url: &Url, allow_private: bool) -> Result<(), UrlRefusal> {
    let never = || {
        UrlRefusal::NotAllowed(
            "url must not point at a link-local address or a cloud metadata service".into(),
        )
    };
    let private = || {
        UrlRefusal::NotAllowed(
            "url must be on the public internet: this service delivers to loopback or private \
             networks only for sandbox apps in development (when it runs on localhost) or when \
             its operator sets webhooks.allow_private_targets = true \
             (SWITCHBOARD_WEBHOOKS__ALLOW_PRIVATE_TARGETS=true)"
                .into(),
        )
    };
    let ip = match url.host() {
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if METADATA_HOSTS.contains(&name.as_str()) {
                return Err(never());
            }
            let local = name == "localhost"
                || name.ends_with(".localhost")
                || name.ends_with(".local")
                || name.ends_with(".internal")
                || !name.contains('.');
            return if local && !allow_private {
                Err(private())
            } else {
                Ok(())
            };
        }
        None => return Err(UrlRefusal::Invalid("url must have a host".into())),
    };
    if is_link_local(ip) {
        Err(never())
    } else if target_allowed(ip, allow_private) {
        Ok(())
    } else {
        Err(private())
    }
}

/// How much of a receiver's answer a delivery attempt keeps.
pub const RESPONSE_EXCERPT_BYTES: usize = 500;

/// The start of a receiver's answer as a delivery attempt keeps it: its first
/// `RESPONSE_EXCERPT_BYTES` bytes as text, with invalid UTF-8 (a character cut in two at the
/// end included) replaced; `None` for an empty answer.
pub fn response_excerpt(body: &[u8]) -> Option<String> {
    let head = &body[..body.len().min(RESPONSE_EXCERPT_BYTES)];
    (!head.is_empty()).then(|| String::from_utf8_lossy(head).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_keeps_500_bytes_as_lossy_text() {
        assert_eq!(response_excerpt(b""), None);
        assert_eq!(response_excerpt(b"ok").as_deref(), Some("ok"));
        let long = "a".repeat(499) + "é and more";
        let excerpt = response_excerpt(long.as_bytes()).unwrap();
        // The 500th byte is the first half of "é": replaced, not split.
        assert_eq!(excerpt, "a".repeat(499) + "\u{fffd}");
        assert_eq!(
            response_excerpt(&[0xff, b'x']).as_deref(),
            Some("\u{fffd}x")
        );
    }

    #[test]
    fn targets_never_link_local_and_private_only_when_allowed() {
        let url = |s: &str| Url::parse(s).unwrap();
        for never in [
            "http://169.254.169.254/latest",
            "http://[fe80::1]/",
            "http://[::ffff:169.254.1.1]/",
            "http://metadata.google.internal/",
        ] {
            assert!(check_target(&url(never), true).is_err(), "{never}");
            assert!(check_target(&url(never), false).is_err(), "{never}");
        }
        for private in [
            "http://127.0.0.1:9000/",
            "http://10.1.2.3/",
            "http://[::1]/",
            "http://localhost:8080/",
            "http://db.internal/",
        ] {
            assert!(check_target(&url(private), false).is_err(), "{private}");
            assert!(check_target(&url(private), true).is_ok(), "{private}");
        }
        assert!(check_target(&url("https://hooks.example.com/x"), false).is_ok());
        assert!(check_target(&url("http://93.184.216.34/"), false).is_ok());
        assert!(!target_allowed("169.254.169.254".parse().unwrap(), true));
        assert!(target_allowed("192.168.1.2".parse().unwrap(), true));
        assert!(!target_allowed("192.168.1.2".parse().unwrap(), false));
    }

    #[test]
    fn disabled_true_keeps_the_reason_of_a_disabled_endpoint() {
        assert_eq!(disabled_change(Some(true), false), DisabledChange::Disable);
        assert_eq!(disabled_change(Some(true), true), DisabledChange::Keep);
    }

    #[test]
    fn disabled_false_always_enables_and_absent_keeps() {
        assert_eq!(disabled_change(Some(false), true), DisabledChange::Enable);
        assert_eq!(disabled_change(Some(false), false), DisabledChange::Enable);
        assert_eq!(disabled_change(None, true), DisabledChange::Keep);
        assert_eq!(disabled_change(None, false), DisabledChange::Keep);
    }

    #[test]
    fn a_stored_filter_is_read_as_its_types_and_an_unreadable_one_as_all() {
        assert!(endpoint_wants_text("[]", "invoice.issued"));
        assert!(endpoint_wants_text(
            r#"["invoice.issued"]"#,
            "invoice.issued"
        ));
        assert!(!endpoint_wants_text(
            r#"["invoice.issued"]"#,
            "account.status_updated"
        ));
        assert!(endpoint_wants_text("not json", "invoice.issued"));
    }

    #[test]
    fn recover_follows_the_filter_and_skips_test_events() {
        let all: Vec<String> = Vec::new();
        let some = vec!["account.status_updated".to_owned()];
        assert!(recovers(&all, "account.status_updated"));
        assert!(recovers(&some, "account.status_updated"));
        assert!(!recovers(&some, "invoice.issued"));
        assert!(!recovers(&all, TEST_EVENT_TYPE));
    }

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn signs_as_the_standard_webhooks_example() {
        // The example of the Standard Webhooks specification and its reference libraries.
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let sig = secret.sign(
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn secrets_are_whsec_and_never_print() {
        let s = WebhookSecret::generate();
        assert!(s.expose().starts_with("whsec_"));
        assert_eq!(WebhookSecret::parse(s.expose()), Some(s.clone()));
        assert!(!format!("{s:?}").contains(&s.expose()[6..]));
        assert!(WebhookSecret::parse("whsec_c2hvcnQ=").is_none());
        assert!(WebhookSecret::parse("sk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_none());
    }

    #[test]
    fn rotation_signs_with_both_secrets() {
        let a = WebhookSecret::generate();
        let b = WebhookSecret::generate();
        let header = signature_header(&[&a, &b], "id", 1, b"{}");
        let parts: Vec<_> = header.split(' ').collect();
        assert_eq!(parts, vec![a.sign("id", 1, b"{}"), b.sign("id", 1, b"{}")]);
    }

    #[test]
    fn live_endpoints_must_be_public_https() {
        let live = Environment::Live;
        assert!(parse_endpoint_url("https://hooks.example.com/in", live).is_ok());
        for bad in [
            "http://hooks.example.com/in",
            "https://127.0.0.1/x",
            "https://localhost:8080/x",
            "https://10.1.2.3/x",
            "https://192.168.0.4/x",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/x",
            "https://[fd00::1]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://100.64.0.1/x",
            "https://intranet/x",
        ] {
            assert!(
                matches!(
                    parse_endpoint_url(bad, live),
                    Err(UrlRefusal::NotAllowed(_))
                ),
                "{bad}"
            );
        }
        assert!(parse_endpoint_url("http://127.0.0.1:9000/x", Environment::Sandbox).is_ok());
        for bad in [
            "ftp://x.com/",
            "not a url",
            "https://user:pw@x.com/",
            "/relative",
        ] {
            assert!(
                matches!(
                    parse_endpoint_url(bad, Environment::Sandbox),
                    Err(UrlRefusal::Invalid(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn event_filters_are_known_types() {
        assert_eq!(
            parse_event_types(vec!["invoice.paid".into(), "invoice.paid".into()]).unwrap(),
            vec!["invoice.paid".to_owned()]
        );
        let err = parse_event_types(vec!["invoice.paid".into(), "x.y".into()]).unwrap_err();
        assert_eq!(err.param, "event_types[1]");
        assert_eq!(parse_description(Some("  ".into())).unwrap(), None);
        assert!(parse_description(Some("x".repeat(501))).is_err());
    }

    #[test]
    fn public_addresses() {
        assert!(is_public_ip("93.184.216.34".parse().unwrap()));
        assert!(is_public_ip("2606:2800:220:1::1".parse().unwrap()));
        assert!(!is_public_ip("172.16.0.1".parse().unwrap()));
        assert!(!is_public_ip("0.0.0.0".parse().unwrap()));
        assert!(!is_public_ip("fe80::1".parse().unwrap()));
    }

    #[test]
    fn answers_are_judged() {
        let now = t("2026-01-01T00:00:00Z");
        assert_eq!(judge_response(204, None, now), AttemptResult::Succeeded);
        assert_eq!(judge_response(410, None, now), AttemptResult::Gone);
        assert_eq!(
            judge_response(301, None, now),
            AttemptResult::Failed { retry_after: None }
        );
        assert_eq!(
            judge_response(500, Some("30"), now),
            AttemptResult::Failed { retry_after: None }
        );
        assert_eq!(
            judge_response(429, Some("30"), now),
            AttemptResult::Failed {
                retry_after: Some(Duration::seconds(30))
            }
        );
        assert_eq!(
            judge_response(503, Some("Thu, 01 Jan 2026 00:02:00 GMT"), now),
            AttemptResult::Failed {
                retry_after: Some(Duration::minutes(2))
            }
        );
    }

    #[test]
    fn retries_follow_the_schedule() {
        let now = t("2026-01-01T00:00:00Z");
        let delays: Vec<_> = (1..=7)
            .map(|a| next_attempt_at(a, now, None).unwrap() - now)
            .collect();
        assert_eq!(
            delays,
            vec![
                Duration::seconds(5),
                Duration::minutes(5),
                Duration::minutes(30),
                Duration::hours(2),
                Duration::hours(5),
                Duration::hours(10),
                Duration::hours(10),
            ]
        );
        assert_eq!(next_attempt_at(8, now, None), None);
        // Retry-After only ever delays, and is capped.
        assert_eq!(
            next_attempt_at(1, now, Some(Duration::seconds(60))).unwrap() - now,
            Duration::seconds(60)
        );
        assert_eq!(
            next_attempt_at(3, now, Some(Duration::seconds(60))).unwrap() - now,
            Duration::minutes(30)
        );
        assert_eq!(
            next_attempt_at(1, now, Some(Duration::days(30))).unwrap() - now,
            Duration::hours(10)
        );
    }

    #[test]
    fn endpoints_are_disabled_on_410_or_after_5_days_of_failures() {
        let now = t("2026-01-10T00:00:00Z");
        let failed = AttemptResult::Failed { retry_after: None };
        assert_eq!(
            after_failure(&AttemptResult::Gone, None, now),
            EndpointVerdict::Disable(DisableReason::Gone)
        );
        assert_eq!(
            after_failure(&failed, None, now),
            EndpointVerdict::KeepTrying
        );
        assert_eq!(
            after_failure(&failed, Some(now - Duration::days(4)), now),
            EndpointVerdict::KeepTrying
        );
        assert_eq!(
            after_failure(&failed, Some(now - Duration::days(5)), now),
            EndpointVerdict::Disable(DisableReason::FailingFor5Days)
        );
    }
}
