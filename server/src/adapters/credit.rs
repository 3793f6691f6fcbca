//! The credit bureau: a soft check of an SSN with the customer's name and date of birth.
//!
//! `SandboxBureau` simulates it with the magic values of the sandbox (SSN ending `0001` frozen,
//! `0002` declined, `0003` not found, `0004` a provider error then success on retry, `0005`
//! declined with a deposit asked for at once; everything else passes) and remembers, per
//! credit-check submission, what `sandbox/simulate` did to it (a forced answer, an unfreeze). Live apps ask the bureau configured in `credit_bureau`
//! (`HttpBureau`, the contract of `docs/credit-bureau.md`); without one, `UnconfiguredBureau`
//! answers an error, so live checks wait in `credit_check_error` and are retried.

use std::{fmt, future::Future, pin::Pin, time::Duration};

use chrono::NaiveDate;
use reqwest::{header::RETRY_AFTER, StatusCode};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    config::{CreditBureauConfig, Secret},
    domain::{credit::CreditSimulation, status::CreditState},
    store::{self, credit::SandboxCreditFile, Db},
};

/// Where the sandbox bureau sends customers to lift a freeze.
pub const SANDBOX_UNFREEZE_URL: &str = "https://bureau.sandbox.switchboard.example/unfreeze";

/// One soft-check request. The SSN is in clear only here, inside the job that calls the bureau;
/// `Debug` never shows it.
pub struct SoftCheck {
    /// Our reference for the check (the credit-check submission).
    pub reference: Uuid,
    /// Nine digits.
    pub ssn: String,
    pub first_name: String,
    pub last_name: String,
    pub date_of_birth: Option<NaiveDate>,
    /// The confirmed service address, when there is one.
    pub service_address: Option<ServiceAddress>,
}

/// The address service is asked for at, as the bureau receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServiceAddress {
    pub line_1: String,
    pub line_2: Option<String>,
    pub city: String,
    pub state: String,
    pub postal_code: String,
}

impl fmt::Debug for SoftCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SoftCheck")
            .field("reference", &self.reference)
            .field("ssn", &"[redacted]")
            .finish_non_exhaustive()
    }
}

/// The bureau's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreditAnswer {
    Passed,
    /// The file is frozen; the customer lifts the freeze at `unfreeze_url`.
    Frozen {
        unfreeze_url: String,
    },
    Declined,
    NotFound,
    /// The bureau could not answer now; asking later may work. `reason` never holds the SSN.
    Error {
        reason: String,
    },
}

impl CreditAnswer {
    pub fn state(&self) -> CreditState {
        match self {
            CreditAnswer::Passed => CreditState::Passed,
            CreditAnswer::Frozen { .. } => CreditState::Frozen,
            CreditAnswer::Declined => CreditState::Declined,
            CreditAnswer::NotFound => CreditState::NotFound,
            CreditAnswer::Error { .. } => CreditState::Error,
        }
    }
}

pub type BureauFuture<'a> = Pin<Box<dyn Future<Output = CreditAnswer> + Send + 'a>>;

pub trait CreditBureau: Send + Sync {
    /// A soft check: no effect on the customer's credit score.
    fn soft_check<'a>(&'a self, request: &'a SoftCheck) -> BureauFuture<'a>;
}

/// The bureau of an app's environment: the sandbox's own, or for live apps the configured
/// bureau (`UnconfiguredBureau` until its URL and secret are set).
pub fn bureau_for(
    environment: app::api::Environment,
    db: &Db,
    config: &CreditBureauConfig,
) -> Box<dyn CreditBureau> {
    match environment {
        app::api::Environment::Sandbox => Box::new(SandboxBureau { db: db.clone() }),
        app::api::Environment::Live => match HttpBureau::from_config(config) {
            Some(bureau) => Box::new(bureau),
            None => Box::new(UnconfiguredBureau),
        },
    }
}

/// The longest `Retry-After` the bureau may ask for within one check; a longer wait is the
/// job's to make (the check records an error and is retried on its schedule).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);

/// A bureau over HTTPS, as `docs/credit-bureau.md` describes: one JSON request per soft check,
/// a bearer secret, a time limit per request, and a few requests more when the bureau is
/// unreachable, slow or busy.
pub struct HttpBureau {
    endpoint: String,
    secret: Secret,
    attempts: u32,
    retry_wait: Duration,
    client: reqwest::Client,
}

impl fmt::Debug for HttpBureau {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpBureau")
            .field("endpoint", &self.endpoint)
            .field("secret", &self.secret)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

/// The request body (`docs/credit-bureau.md`, "The request").
#[derive(Serialize)]
struct CheckIn<'a> {
    reference: Uuid,
    ssn: &'a str,
    first_name: &'a str,
    last_name: &'a str,
    date_of_birth: Option<NaiveDate>,
    service_address: Option<&'a ServiceAddress>,
}

/// The answer's body.
#[derive(Deserialize)]
struct CheckOut {
    reference: Uuid,
    outcome: String,
    unfreeze_url: Option<String>,
    message: Option<String>,
}

/// One request's result: an answer to keep, or a failure worth another request.
enum Tried {
    Final(CreditAnswer),
    Retry {
        reason: String,
        wait: Option<Duration>,
    },
}

impl HttpBureau {
    /// The bureau of the settings, when both its URL and secret are set.
    pub fn from_config(config: &CreditBureauConfig) -> Option<HttpBureau> {
        let url = config.url.as_deref()?.trim().trim_end_matches('/');
        let secret = config.secret.clone()?;
        if url.is_empty() || secret.expose().is_empty() {
            return None;
        }
        let timeout = Duration::from_millis(config.timeout_ms.max(1));
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .user_agent("Switchboard/1")
            .build()
            // Building fails only without a TLS backend; the default client still works.
            .unwrap_or_default();
        Some(HttpBureau {
            endpoint: format!("{url}/v1/soft-checks"),
            secret,
            attempts: config.attempts.max(1),
            retry_wait: Duration::from_millis(config.retry_wait_ms),
            client,
        })
    }

    async fn check(&self, request: &SoftCheck) -> CreditAnswer {
        let body = CheckIn {
            reference: request.reference,
            ssn: &request.ssn,
            first_name: &request.first_name,
            last_name: &request.last_name,
            date_of_birth: request.date_of_birth,
            service_address: request.service_address.as_ref(),
        };
        let mut wait = self.retry_wait;
        let mut attempt = 1;
        loop {
            match self.once(request.reference, &body).await {
                Tried::Final(answer) => return answer,
                Tried::Retry { reason, .. } if attempt >= self.attempts => {
                    return CreditAnswer::Error {
                        reason: format!("{reason} (after {attempt} requests)"),
                    }
                }
                Tried::Retry {
                    reason,
                    wait: asked,
                } => {
                    tracing::info!(
                        reference = %request.reference,
                        attempt,
                        reason = %reason,
                        "the credit bureau did not answer; asking again"
                    );
                    tokio::time::sleep(asked.map_or(wait, |a| a.max(wait))).await;
                    wait = wait.saturating_mul(2);
                    attempt += 1;
                }
            }
        }
    }

    async fn once(&self, reference: Uuid, body: &CheckIn<'_>) -> Tried {
        let sent = self
            .client
            .post(&self.endpoint)
            .bearer_auth(self.secret.expose())
            .header("Idempotency-Key", reference.to_string())
            .json(body)
            .send()
            .await;
        let response = match sent {
            Ok(r) => r,
            // Never the error's own text: it could quote the request.
            Err(e) if e.is_timeout() => {
                return Tried::Retry {
                    reason: "the credit bureau timed out".to_owned(),
                    wait: None,
                }
            }
            Err(_) => {
                return Tried::Retry {
                    reason: "the credit bureau could not be reached".to_owned(),
                    wait: None,
                }
            }
        };
        let status = response.status();
        if status == StatusCode::OK {
            return match response.json::<CheckOut>().await {
                Ok(out) => Tried::Final(read_answer(reference, out)),
                Err(e) if e.is_timeout() => Tried::Retry {
                    reason: "the credit bureau timed out".to_owned(),
                    wait: None,
                },
                Err(_) => Tried::Final(error("the credit bureau's answer is not readable")),
            };
        }
        if is_retriable(status) {
            let asked = response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER));
            return Tried::Retry {
                reason: format!("the credit bureau answered {}", status.as_u16()),
                wait: asked,
            };
        }
        Tried::Final(error(&match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => format!(
                "the credit bureau refused our secret ({}): check credit_bureau.secret",
                status.as_u16()
            ),
            StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => format!(
                "the credit bureau refused the request as malformed ({})",
                status.as_u16()
            ),
            _ => format!("the credit bureau answered {}", status.as_u16()),
        }))
    }
}

fn error(reason: &str) -> CreditAnswer {
    CreditAnswer::Error {
        reason: reason.to_owned(),
    }
}

/// Statuses that say "not now" rather than "no": asked again within the check.
fn is_retriable(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 429 | 500 | 502 | 503 | 504)
}

/// The bureau's `200` answer to the check `reference`, as the contract reads it.
fn read_answer(reference: Uuid, out: CheckOut) -> CreditAnswer {
    if out.reference != reference {
        return error("the credit bureau answered for another reference");
    }
    match out.outcome.as_str() {
        "passed" => CreditAnswer::Passed,
        "declined" => CreditAnswer::Declined,
        "not_found" => CreditAnswer::NotFound,
        "frozen" => match out.unfreeze_url.filter(|u| is_usable_unfreeze_url(u)) {
            Some(unfreeze_url) => CreditAnswer::Frozen { unfreeze_url },
            None => error("the credit bureau answered frozen without a usable unfreeze_url"),
        },
        "error" => CreditAnswer::Error {
            reason: format!(
                "the credit bureau could not decide: {}",
                out.message
                    .as_deref()
                    .map(|m| m.chars().take(200).collect::<String>())
                    .unwrap_or_else(|| "no reason given".to_owned())
            ),
        },
        _ => error("the credit bureau answered an unknown outcome"),
    }
}

/// An absolute `https://` address (plain `http://` only on loopback, for local bureaus).
fn is_usable_unfreeze_url(url: &str) -> bool {
    match reqwest::Url::parse(url) {
        Ok(u) => {
            u.scheme() == "https"
                || (u.scheme() == "http"
                    && matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]")))
        }
        Err(_) => false,
    }
}

impl CreditBureau for HttpBureau {
    fn soft_check<'a>(&'a self, request: &'a SoftCheck) -> BureauFuture<'a> {
        Box::pin(self.check(request))
    }
}

/// Live apps until a bureau connection is configured.
pub struct UnconfiguredBureau;

impl CreditBureau for UnconfiguredBureau {
    fn soft_check<'a>(&'a self, _request: &'a SoftCheck) -> BureauFuture<'a> {
        Box::pin(async {
            CreditAnswer::Error {
                reason: "no credit bureau connection is configured".to_owned(),
            }
        })
    }
}

/// A scenario `sandbox/simulate` forces on a submission (stored in `forced`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    Frozen,
    Declined,
    NotFound,
    /// One provider error, then the file's normal answer.
    ErrorOnce,
    /// Declined, and the review asks for the largest deposit at once.
    DepositRequired,
}

impl Scenario {
    fn as_str(self) -> &'static str {
        match self {
            Scenario::Frozen => "frozen",
            Scenario::Declined => "declined",
            Scenario::NotFound => "not_found",
            Scenario::ErrorOnce => "error_once",
            Scenario::DepositRequired => "deposit_required",
        }
    }

    fn parse(s: &str) -> Option<Scenario> {
        [
            Scenario::Frozen,
            Scenario::Declined,
            Scenario::NotFound,
            Scenario::ErrorOnce,
            Scenario::DepositRequired,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }

    /// The magic values of an SSN.
    fn of_ssn(ssn: &str) -> Option<Scenario> {
        match ssn.get(ssn.len().saturating_sub(4)..) {
            Some("0001") => Some(Scenario::Frozen),
            Some("0002") => Some(Scenario::Declined),
            Some("0003") => Some(Scenario::NotFound),
            Some("0004") => Some(Scenario::ErrorOnce),
            Some("0005") => Some(Scenario::DepositRequired),
            _ => None,
        }
    }
}

/// What the sandbox bureau plays for a submission: the simulation forced on it, else the SSN's
/// magic value.
fn scenario_of(ssn: &str, file: &SandboxCreditFile) -> Option<Scenario> {
    file.forced
        .as_deref()
        .and_then(Scenario::parse)
        .or_else(|| Scenario::of_ssn(ssn))
}

/// Whether the sandbox's check of a submission needs a deposit (the SSN ending `0005`, or the
/// simulation `deposit_required`): the bureau declines it and its credit review asks for the
/// deposit at once.
pub fn sandbox_requires_deposit(ssn: &str, file: &SandboxCreditFile) -> bool {
    scenario_of(ssn, file) == Some(Scenario::DepositRequired)
}

/// The sandbox bureau's answer for an SSN and what it remembers of it; returns the answer and
/// the file after the check.
pub fn sandbox_answer(ssn: &str, file: &SandboxCreditFile) -> (CreditAnswer, SandboxCreditFile) {
    let scenario = scenario_of(ssn, file);
    let mut after = file.clone();
    let answer = match scenario {
        None => CreditAnswer::Passed,
        Some(Scenario::Frozen) if file.unfrozen => CreditAnswer::Passed,
        Some(Scenario::Frozen) => CreditAnswer::Frozen {
            unfreeze_url: SANDBOX_UNFREEZE_URL.to_owned(),
        },
        Some(Scenario::Declined | Scenario::DepositRequired) => CreditAnswer::Declined,
        Some(Scenario::NotFound) => CreditAnswer::NotFound,
        Some(Scenario::ErrorOnce) if file.errors_served > 0 => CreditAnswer::Passed,
        Some(Scenario::ErrorOnce) => {
            after.errors_served += 1;
            CreditAnswer::Error {
                reason: "the credit bureau timed out".to_owned(),
            }
        }
    };
    (answer, after)
}

/// What a simulated event does to the bureau's file of a submission.
pub fn simulated_file(file: &SandboxCreditFile, event: CreditSimulation) -> SandboxCreditFile {
    let forced = |s: Scenario| SandboxCreditFile {
        forced: Some(s.as_str().to_owned()),
        unfrozen: false,
        errors_served: 0,
    };
    match event {
        CreditSimulation::Frozen => forced(Scenario::Frozen),
        CreditSimulation::Unfrozen => SandboxCreditFile {
            unfrozen: true,
            ..file.clone()
        },
        CreditSimulation::Declined => forced(Scenario::Declined),
        CreditSimulation::NotFound => forced(Scenario::NotFound),
        CreditSimulation::Error => forced(Scenario::ErrorOnce),
        CreditSimulation::DepositRequired => forced(Scenario::DepositRequired),
    }
}

/// The sandbox credit bureau; its memory is in the database so that every process agrees.
pub struct SandboxBureau {
    pub db: Db,
}

impl SandboxBureau {
    async fn check(&self, request: &SoftCheck) -> store::Result<CreditAnswer> {
        let mut tx = self.db.begin().await?;
        let file = store::credit::sandbox_credit_file(&mut tx, request.reference)
            .await?
            .unwrap_or_default();
        let (answer, after) = sandbox_answer(&request.ssn, &file);
        if after != file {
            store::credit::put_sandbox_credit_file(&mut tx, request.reference, &after).await?;
        }
        tx.commit().await?;
        Ok(answer)
    }

    /// Applies a simulated event to the file of a submission, in the caller's transaction.
    pub async fn simulate(
        tx: &mut store::Tx,
        reference: Uuid,
        event: CreditSimulation,
    ) -> store::Result<()> {
        let file = store::credit::sandbox_credit_file(tx, reference)
            .await?
            .unwrap_or_default();
        store::credit::put_sandbox_credit_file(tx, reference, &simulated_file(&file, event)).await
    }
}

impl CreditBureau for SandboxBureau {
    fn soft_check<'a>(&'a self, request: &'a SoftCheck) -> BureauFuture<'a> {
        Box::pin(async move {
            self.check(request)
                .await
                .unwrap_or_else(|e| CreditAnswer::Error {
                    reason: format!("the sandbox bureau is unavailable: {e}"),
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(ssn: &str, file: &SandboxCreditFile) -> CreditAnswer {
        sandbox_answer(ssn, file).0
    }

    #[test]
    fn magic_values() {
        let none = SandboxCreditFile::default();
        assert_eq!(answer("123456789", &none), CreditAnswer::Passed);
        assert_eq!(answer("123450001", &none).state(), CreditState::Frozen);
        assert_eq!(answer("123450002", &none), CreditAnswer::Declined);
        assert_eq!(answer("123450003", &none), CreditAnswer::NotFound);
        assert_eq!(answer("123450004", &none).state(), CreditState::Error);
        assert_eq!(answer("123450005", &none), CreditAnswer::Declined);
        assert!(sandbox_requires_deposit("123450005", &none));
        assert!(!sandbox_requires_deposit("123450002", &none));
        assert_eq!(answer("123450006", &none), CreditAnswer::Passed);
    }

    #[test]
    fn a_provider_error_clears_on_retry() {
        let (first, file) = sandbox_answer("123450004", &SandboxCreditFile::default());
        assert_eq!(first.state(), CreditState::Error);
        assert_eq!(answer("123450004", &file), CreditAnswer::Passed);
    }

    #[test]
    fn an_unfrozen_file_passes() {
        let file = SandboxCreditFile::default();
        let file = simulated_file(&file, CreditSimulation::Unfrozen);
        assert_eq!(answer("123450001", &file), CreditAnswer::Passed);
        // Freezing again (simulate credit_check_frozen) forgets the unfreeze.
        let file = simulated_file(&file, CreditSimulation::Frozen);
        assert_eq!(answer("123456789", &file).state(), CreditState::Frozen);
        let file = simulated_file(&file, CreditSimulation::Unfrozen);
        assert_eq!(answer("123456789", &file), CreditAnswer::Passed);
    }

    #[test]
    fn simulated_answers_override_the_ssn() {
        let none = SandboxCreditFile::default();
        let declined = simulated_file(&none, CreditSimulation::Declined);
        assert_eq!(answer("123456789", &declined), CreditAnswer::Declined);
        let not_found = simulated_file(&none, CreditSimulation::NotFound);
        assert_eq!(answer("123450001", &not_found), CreditAnswer::NotFound);
        let error = simulated_file(&none, CreditSimulation::Error);
        let (first, after) = sandbox_answer("123456789", &error);
        assert_eq!(first.state(), CreditState::Error);
        assert_eq!(answer("123456789", &after), CreditAnswer::Passed);
    }

    #[test]
    fn requests_never_print_the_ssn() {
        let r = SoftCheck {
            reference: Uuid::nil(),
            ssn: "123456789".to_owned(),
            first_name: "Ana".to_owned(),
            last_name: "Díaz".to_owned(),
            date_of_birth: None,
            service_address: None,
        };
        assert!(!format!("{r:?}").contains("123456789"));
    }

    fn out(outcome: &str, unfreeze_url: Option<&str>) -> CheckOut {
        CheckOut {
            reference: Uuid::nil(),
            outcome: outcome.to_owned(),
            unfreeze_url: unfreeze_url.map(str::to_owned),
            message: None,
        }
    }

    #[test]
    fn the_contracts_outcomes_read_as_answers() {
        let r = Uuid::nil();
        assert_eq!(read_answer(r, out("passed", None)), CreditAnswer::Passed);
        assert_eq!(
            read_answer(r, out("declined", None)),
            CreditAnswer::Declined
        );
        assert_eq!(
            read_answer(r, out("not_found", None)),
            CreditAnswer::NotFound
        );
        assert_eq!(
            read_answer(r, out("frozen", Some("https://bureau.example/lift"))),
            CreditAnswer::Frozen {
                unfreeze_url: "https://bureau.example/lift".to_owned()
            }
        );
        for bad in [
            out("frozen", None),
            out("frozen", Some("javascript:alert(1)")),
            out("frozen", Some("http://bureau.example/lift")),
            out("approved", None),
            out("error", None),
        ] {
            assert_eq!(read_answer(r, bad).state(), CreditState::Error);
        }
        let other = CheckOut {
            reference: Uuid::from_u128(1),
            ..out("passed", None)
        };
        assert_eq!(read_answer(r, other).state(), CreditState::Error);
    }

    #[test]
    fn only_not_now_statuses_are_asked_again() {
        for s in [408, 429, 500, 502, 503, 504] {
            assert!(is_retriable(StatusCode::from_u16(s).unwrap()), "{s}");
        }
        for s in [400, 401, 403, 404, 409, 422, 501] {
            assert!(!is_retriable(StatusCode::from_u16(s).unwrap()), "{s}");
        }
    }

    #[test]
    fn a_bureau_needs_its_url_and_secret_and_never_prints_the_secret() {
        let none = CreditBureauConfig::default();
        assert!(HttpBureau::from_config(&none).is_none());
        let no_secret = CreditBureauConfig {
            url: Some("https://bureau.example".to_owned()),
            ..CreditBureauConfig::default()
        };
        assert!(HttpBureau::from_config(&no_secret).is_none());
        let both = CreditBureauConfig {
            secret: Some(Secret::new("bureau-s3cret")),
            ..no_secret
        };
        let bureau = HttpBureau::from_config(&both).unwrap();
        assert_eq!(bureau.endpoint, "https://bureau.example/v1/soft-checks");
        assert!(!format!("{bureau:?}").contains("bureau-s3cret"));
    }
}
