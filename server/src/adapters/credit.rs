//! The credit bureau: a soft check of an SSN with the customer's name and date of birth.
//!
//! `SandboxBureau` simulates it with the magic values of the sandbox (SSN ending `0001` frozen,
//! `0002` declined, `0003` not found, `0004` a provider error then success on retry; everything
//! else passes) and remembers, per credit-check submission, what `sandbox/simulate` did to it
//! (a forced answer, an unfreeze). Live apps have no bureau connection yet: `UnconfiguredBureau`
//! answers an error, so live checks wait in `credit_check_error` and are retried.

use std::{fmt, future::Future, pin::Pin};

use chrono::NaiveDate;
use uuid::Uuid;

use crate::{
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

/// The bureau of an app's environment.
pub fn bureau_for(environment: app::api::Environment, db: &Db) -> Box<dyn CreditBureau> {
    match environment {
        app::api::Environment::Sandbox => Box::new(SandboxBureau { db: db.clone() }),
        app::api::Environment::Live => Box::new(UnconfiguredBureau),
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
}

impl Scenario {
    fn as_str(self) -> &'static str {
        match self {
            Scenario::Frozen => "frozen",
            Scenario::Declined => "declined",
            Scenario::NotFound => "not_found",
            Scenario::ErrorOnce => "error_once",
        }
    }

    fn parse(s: &str) -> Option<Scenario> {
        [
            Scenario::Frozen,
            Scenario::Declined,
            Scenario::NotFound,
            Scenario::ErrorOnce,
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
            _ => None,
        }
    }
}

/// The sandbox bureau's answer for an SSN and what it remembers of it; returns the answer and
/// the file after the check.
pub fn sandbox_answer(ssn: &str, file: &SandboxCreditFile) -> (CreditAnswer, SandboxCreditFile) {
    let scenario = file
        .forced
        .as_deref()
        .and_then(Scenario::parse)
        .or_else(|| Scenario::of_ssn(ssn));
    let mut after = file.clone();
    let answer = match scenario {
        None => CreditAnswer::Passed,
        Some(Scenario::Frozen) if file.unfrozen => CreditAnswer::Passed,
        Some(Scenario::Frozen) => CreditAnswer::Frozen {
            unfreeze_url: SANDBOX_UNFREEZE_URL.to_owned(),
        },
        Some(Scenario::Declined) => CreditAnswer::Declined,
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
        assert_eq!(answer("123450005", &none), CreditAnswer::Passed);
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
        };
        assert!(!format!("{r:?}").contains("123456789"));
    }
}
