//! The jobs, each kind with its payload in one enum (`Job`), and rules of the job queue that do
//! not depend on the job: how long a claim lasts and how a job whose handler failed
//! unexpectedly is retried.
//!
//! A job is stored as its kind's name (`jobs.kind`) and its payload's fields as a JSON object
//! (`jobs.payload`); `Job::stored` and `Job::from_stored` convert, so that rows written before
//! the enum existed read the same. A new kind is a variant here and its arm in
//! `jobs::dispatch`.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{market::add_market_days, FieldError};

/// What a location's service order asks of the utility.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceOrderKind {
    Disconnect,
    Reconnect,
}

/// Declares `Job` (each variant with its stored kind name, its payload and the runs it is
/// allowed) and `JobKind` (the kinds alone, with their names), from one list.
macro_rules! jobs {
    (
        $(
            $(#[$vmeta:meta])*
            $variant:ident $payload:tt = $kind:literal, attempts $attempts:expr;
        )+
    ) => {
        /// A job: its kind and its payload together.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind")]
        pub enum Job {
            $(
                $(#[$vmeta])*
                #[serde(rename = $kind)]
                $variant $payload,
            )+
        }

        /// The kinds of job, by the name stored in `jobs.kind`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum JobKind {
            $($variant,)+
        }

        impl JobKind {
            pub const ALL: &'static [JobKind] = &[$(JobKind::$variant,)+];

            pub const fn as_str(self) -> &'static str {
                match self {
                    $(JobKind::$variant => $kind,)+
                }
            }

            pub fn parse(s: &str) -> Option<JobKind> {
                match s {
                    $($kind => Some(JobKind::$variant),)+
                    _ => None,
                }
            }
        }

        impl Job {
            pub fn kind(&self) -> JobKind {
                match self {
                    $(Job::$variant { .. } => JobKind::$variant,)+
                }
            }

            /// How many runs the queue allows before giving the job up for good.
            pub fn max_attempts(&self) -> i32 {
                match self {
                    $(Job::$variant { .. } => $attempts,)+
                }
            }
        }
    };
}

jobs! {
    /// One attempt at delivering one event to one webhook endpoint.
    WebhookDelivery { endpoint_uuid: Uuid, event_uuid: Uuid } = "webhook.deliver",
        attempts super::webhooks::MAX_ATTEMPTS as i32;
    /// Hands one e-mail of the outbox to SMTP (or keeps it); `event_on_send` is the event
    /// (type and data) its sending writes.
    SendEmail {
        email_uuid: Uuid,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event_on_send: Option<(String, serde_json::Value)>,
    } = "email.send", attempts 8;
    /// One soft credit check of an account's submission (`jobs::credit`); its own retries are
    /// ruled by `domain::credit`, the attempts are for a failing handler.
    CreditCheck { app_uuid: Uuid, credit_check_uuid: Uuid } = "credit.check", attempts 1_000;
    /// Identity verification after finalize (`jobs::pipeline`).
    EnrollmentVerify { app_uuid: Uuid } = "enrollment.verify", attempts 20;
    /// Submission of the enrollment to the utility.
    UtilitySubmit { app_uuid: Uuid } = "utility.submit", attempts 20;
    /// The simulated utility's answer to the submission.
    UtilityAnswer { app_uuid: Uuid } = "utility.answer", attempts 20;
    /// Service starts on the start date.
    ServiceStart { app_uuid: Uuid } = "service.start", attempts 20;
    /// A scheduled cancellation ends service at a location on its final service date.
    ServiceEnd { app_uuid: Uuid, location_uuid: Uuid, reason: String } = "service.end",
        attempts 20;
    /// A cycle's meter read and its invoice (`jobs::cycle`).
    MeterRead(ReadPayload) = "billing.meter_read", attempts 20;
    /// Auto-pay of an invoice on its due date.
    AutoPay(InvoicePayload) = "billing.auto_pay", attempts 20;
    /// An unpaid invoice turns past due.
    PastDue(InvoicePayload) = "billing.past_due", attempts 20;
    /// An accepted renewal takes over from the contract it renews, on its start date.
    RenewalStart(ContractPayload) = "renewal.start", attempts 20;
    /// One expiration notice of a fixed contract (`jobs::renewal`).
    RenewalNotice(NoticePayload) = "renewal.notice", attempts 20;
    /// A fixed contract nobody renewed rolls onto month-to-month the day after it ends.
    RenewalRollover(ContractPayload) = "renewal.rollover", attempts 20;
    /// A disconnection notice's date: the utility is asked to disconnect if the bill is still
    /// unpaid (`jobs::collections`).
    Disconnect(DisconnectPayload) = "collections.disconnect", attempts 20;
    /// The simulated utility carries out a disconnection or reconnection it was asked for.
    UtilityServiceOrder(ServiceOrderPayload) = "collections.utility_order", attempts 20;
    /// What a final bill left of a deposit goes back to the card (`jobs::cycle`).
    DepositPayout(PayoutPayload) = "deposit.payout", attempts 20;
    /// A flow session's end: its `flow.session_ended` summary once it is over.
    FlowSessionEnd(SessionEndPayload) = "flow.session_end", attempts 50;
}

/// A cycle's read: the location, its read date, and the instant it was meant for, which the
/// records carry even when the job runs late.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadPayload {
    pub app_uuid: Uuid,
    pub location_uuid: Uuid,
    pub read_date: NaiveDate,
    pub at: DateTime<Utc>,
}

/// An issued invoice's job (auto-pay, past due), with the instant it was meant for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvoicePayload {
    pub app_uuid: Uuid,
    pub invoice_uuid: Uuid,
    pub at: DateTime<Utc>,
}

/// A contract's job (a renewal's start, a rollover).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContractPayload {
    pub app_uuid: Uuid,
    pub contract_uuid: Uuid,
}

/// An expiration notice of a contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoticePayload {
    pub app_uuid: Uuid,
    pub contract_uuid: Uuid,
    /// Which notice (its nominal days before the end).
    pub days_before: i64,
    /// The last notice, which states the month-to-month plan.
    pub is_final: bool,
}

/// A disconnection notice whose date came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisconnectPayload {
    pub app_uuid: Uuid,
    pub disconnection_uuid: Uuid,
}

/// A disconnection or reconnection asked of the utility, for the notice it follows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceOrderPayload {
    pub app_uuid: Uuid,
    pub disconnection_uuid: Uuid,
    pub order: ServiceOrderKind,
}

/// A deposit whose remainder goes back to the card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PayoutPayload {
    pub app_uuid: Uuid,
    pub deposit_uuid: Uuid,
}

/// A flow session to end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEndPayload {
    pub flow_session_id: Uuid,
}

/// Why a stored job could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StoredJobError {
    #[error("unknown job kind {0}")]
    UnknownKind(String),
    #[error("the payload of a {kind} job does not read: {error}")]
    Payload {
        kind: &'static str,
        error: serde_json::Error,
    },
}

impl Job {
    /// The job as stored: its kind's name and its payload (the fields, without the kind).
    pub fn stored(&self) -> serde_json::Result<(&'static str, serde_json::Value)> {
        let mut payload = serde_json::to_value(self)?;
        if let Some(fields) = payload.as_object_mut() {
            fields.remove("kind");
        }
        Ok((self.kind().as_str(), payload))
    }

    /// The job a stored row holds.
    pub fn from_stored(kind: &str, payload: &str) -> Result<Job, StoredJobError> {
        let known =
            JobKind::parse(kind).ok_or_else(|| StoredJobError::UnknownKind(kind.to_owned()))?;
        let read = |error| StoredJobError::Payload {
            kind: known.as_str(),
            error,
        };
        let mut value: serde_json::Value = serde_json::from_str(payload).map_err(read)?;
        if let Some(fields) = value.as_object_mut() {
            fields.insert("kind".to_owned(), known.as_str().into());
        }
        serde_json::from_value(value).map_err(read)
    }
}

/// Delay before retrying a job whose handler failed (database down, a bug): 2^attempts
/// seconds, at most one hour. Job kinds with their own schedule (webhooks) decide themselves.
pub fn backoff(attempts: u32) -> Duration {
    Duration::seconds(1i64 << attempts.min(12)).min(Duration::hours(1))
}

/// Where `advance-clock` moves an account's clock from `now`: to `to`, or `days` market days
/// ahead at the same time of day (so that the account's date moves by exactly `days`, whatever
/// the hour and across the clock changes) — exactly one of them, forward only, at most ten
/// years at a time.
pub fn advance_target(
    now: DateTime<Utc>,
    to: Option<DateTime<Utc>>,
    days: Option<i64>,
) -> Result<DateTime<Utc>, FieldError> {
    let limit = Duration::days(3650);
    match (to, days) {
        (Some(_), Some(_)) => Err(FieldError::invalid(
            "days",
            "give either to or days, not both",
        )),
        (None, None) => Err(FieldError::missing("days")),
        (None, Some(d)) if (1..=3650).contains(&d) => Ok(add_market_days(now, d)),
        (None, Some(_)) => Err(FieldError::invalid(
            "days",
            "days must be between 1 and 3650",
        )),
        (Some(t), None) if t <= now => Err(FieldError::invalid(
            "to",
            "to must be after the account's present time; clocks only move forward",
        )),
        (Some(t), None) if t - now > limit => Err(FieldError::invalid(
            "to",
            "to must be at most 3650 days ahead",
        )),
        (Some(t), None) => Ok(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip() {
        for kind in JobKind::ALL {
            assert_eq!(JobKind::parse(kind.as_str()), Some(*kind));
        }
        assert_eq!(JobKind::parse("nope"), None);
    }

    #[test]
    fn jobs_are_stored_as_rows_written_before_the_enum_read() {
        let (app, other) = (Uuid::from_u128(1), Uuid::from_u128(2));
        // Rows as the queue held them: the kind apart, the payload's fields alone.
        let rows = [
            (
                "credit.check",
                serde_json::json!({"app_uuid": app, "credit_check_uuid": other}),
                Job::CreditCheck {
                    app_uuid: app,
                    credit_check_uuid: other,
                },
            ),
            (
                "utility.submit",
                serde_json::json!({"app_uuid": app}),
                Job::UtilitySubmit { app_uuid: app },
            ),
            (
                "email.send",
                serde_json::json!({"email_uuid": other}),
                Job::SendEmail {
                    email_uuid: other,
                    event_on_send: None,
                },
            ),
            (
                "collections.utility_order",
                serde_json::json!({"app_uuid": app, "disconnection_uuid": other, "order": "reconnect"}),
                Job::UtilityServiceOrder(ServiceOrderPayload {
                    app_uuid: app,
                    disconnection_uuid: other,
                    order: ServiceOrderKind::Reconnect,
                }),
            ),
            (
                "billing.meter_read",
                serde_json::json!({
                    "app_uuid": app, "location_uuid": other, "read_date": "2026-03-04",
                    "at": "2026-03-04T12:00:00Z"
                }),
                Job::MeterRead(ReadPayload {
                    app_uuid: app,
                    location_uuid: other,
                    read_date: NaiveDate::from_ymd_opt(2026, 3, 4).unwrap(),
                    at: DateTime::parse_from_rfc3339("2026-03-04T12:00:00Z")
                        .unwrap()
                        .with_timezone(&Utc),
                }),
            ),
        ];
        for (kind, payload, job) in rows {
            assert_eq!(Job::from_stored(kind, &payload.to_string()).unwrap(), job);
            let (stored_kind, stored) = job.stored().unwrap();
            assert_eq!(stored_kind, kind);
            assert_eq!(
                Job::from_stored(stored_kind, &stored.to_string()).unwrap(),
                job
            );
        }
        assert!(matches!(
            Job::from_stored("nope", "{}"),
            Err(StoredJobError::UnknownKind(_))
        ));
        assert!(matches!(
            Job::from_stored("credit.check", "{}"),
            Err(StoredJobError::Payload { .. })
        ));
    }

    #[test]
    fn advance_targets() {
        let now = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            advance_target(now, None, Some(2)).unwrap(),
            now + Duration::days(2)
        );
        let to = now + Duration::hours(5);
        assert_eq!(advance_target(now, Some(to), None).unwrap(), to);
        assert_eq!(advance_target(now, None, None).unwrap_err().param, "days");
        assert!(advance_target(now, Some(to), Some(1)).is_err());
        assert!(advance_target(now, None, Some(0)).is_err());
        assert!(advance_target(now, None, Some(3651)).is_err());
        assert_eq!(
            advance_target(now, Some(now), None).unwrap_err().param,
            "to"
        );
        assert!(advance_target(now, Some(now + Duration::days(3651)), None).is_err());
    }

    #[test]
    fn advancing_by_days_moves_the_market_date_by_exactly_those_days() {
        use crate::domain::market::market_date;
        // 23:30 in Texas the night before the spring change: 24-hour steps would land at
        // 00:30 on the day after.
        let late = DateTime::parse_from_rfc3339("2027-03-14T05:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let day = market_date(late);
        for days in [1, 2, 91, 365] {
            let t = advance_target(late, None, Some(days)).unwrap();
            assert_eq!(market_date(t), day + Duration::days(days), "{days}");
        }
        // 00:30 the night of the autumn change.
        let early = DateTime::parse_from_rfc3339("2026-11-01T05:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let t = advance_target(early, None, Some(1)).unwrap();
        assert_eq!(t - early, Duration::hours(25));
        assert_eq!(market_date(t), market_date(early) + Duration::days(1));
    }

    #[test]
    fn backoff_doubles_up_to_an_hour() {
        assert_eq!(backoff(0), Duration::seconds(1));
        assert_eq!(backoff(3), Duration::seconds(8));
        assert_eq!(backoff(11), Duration::seconds(2048));
        assert_eq!(backoff(12), Duration::hours(1));
        assert_eq!(backoff(40), Duration::hours(1));
    }
}
