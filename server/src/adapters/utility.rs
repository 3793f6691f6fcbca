//! The utility's side of an enrollment: it receives the submission, answers it (accepted,
//! switch hold, deactivated meter, rejected) and later switches the meter (service starts).
//!
//! `UtilityGateway::Simulator` serves sandbox apps: the answer comes by the magic ESI ID endings
//! after the simulated 2 to 72 business hours, and service starts by itself on the start date.
//! `UtilityGateway::Worklist` serves live apps until a market connection exists: the submission
//! waits in `utility_submissions`, and an operator records the utility's answers
//! (`switchboard market submissions`), which move the enrollment exactly as the simulator's do.
//! Magic ESI IDs mean nothing there.

use app::api::Environment;
use uuid::Uuid;

use crate::{
    clock::AccountClock,
    domain::{
        enrollment::{
            add_business_hours, sandbox_utility_answer, utility_answer_hours, SubmissionStatus,
            UtilityAnswer,
        },
        market::BusinessCalendar,
    },
    outbox::JobKind,
    store::{self, enrollment::LocationRow, utility::SubmissionRow, Tx},
};

/// Hours the simulated utility takes to carry out a disconnection or reconnection.
pub const SIMULATED_ORDER_HOURS: i64 = 1;

/// What a location's service order asks of the utility.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceOrderKind {
    Disconnect,
    Reconnect,
}

/// A disconnection or reconnection asked of the utility, for the notice it follows.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ServiceOrderPayload {
    pub app_uuid: Uuid,
    pub disconnection_uuid: Uuid,
    pub order: ServiceOrderKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtilityGateway {
    Simulator,
    Worklist,
}

impl UtilityGateway {
    pub fn for_environment(environment: Environment) -> UtilityGateway {
        match environment {
            Environment::Sandbox => UtilityGateway::Simulator,
            Environment::Live => UtilityGateway::Worklist,
        }
    }

    /// Hands the enrollment of `location` to the utility, in `tx`.
    pub async fn submit(
        self,
        tx: &mut Tx,
        clock: &AccountClock,
        calendar: &BusinessCalendar,
        location: &LocationRow,
        requested_start_date: Option<chrono::NaiveDate>,
    ) -> store::Result<()> {
        let now = clock.now();
        match self {
            UtilityGateway::Simulator => {
                let answer_at =
                    add_business_hours(now, utility_answer_hours(&location.esi_id), calendar);
                crate::outbox::enqueue_account_job(
                    tx,
                    clock,
                    JobKind::UtilityAnswer,
                    location.app_uuid,
                    location.account_uuid,
                    answer_at,
                )
                .await?;
            }
            UtilityGateway::Worklist => {
                store::utility::insert_submission(
                    tx,
                    &SubmissionRow {
                        uuid: Uuid::new_v4(),
                        app_uuid: location.app_uuid,
                        account_uuid: location.account_uuid,
                        location_uuid: location.uuid,
                        esi_id: location.esi_id.clone(),
                        requested_start_date,
                        status: SubmissionStatus::Pending,
                        start_date: None,
                        reason: None,
                        submitted_at: now,
                        answered_at: None,
                        activated_at: None,
                    },
                )
                .await?;
            }
        }
        Ok(())
    }

    /// Asks the utility to disconnect or reconnect a location for the notice
    /// `disconnection_uuid`, in `tx`. The simulator carries the order out an hour later (a
    /// job); the worklist keeps it for the operator, who sees the notices waiting in the
    /// `requested` and `reconnect_requested` statuses and records what the utility did.
    pub async fn order_service(
        self,
        tx: &mut Tx,
        clock: &AccountClock,
        order: &ServiceOrderPayload,
        account_uuid: Uuid,
    ) -> store::Result<()> {
        if self == UtilityGateway::Simulator {
            crate::outbox::enqueue(
                tx,
                clock,
                &crate::outbox::NewJob {
                    kind: JobKind::UtilityServiceOrder,
                    payload: order,
                    account_uuid: Some(account_uuid),
                    run_at: clock.now() + chrono::Duration::hours(SIMULATED_ORDER_HOURS),
                    max_attempts: 20,
                },
            )
            .await?;
        }
        Ok(())
    }

    /// The simulator's answer to a submission; the worklist's come from the operator.
    pub fn simulated_answer(self, esi_id: &str) -> Option<UtilityAnswer> {
        (self == UtilityGateway::Simulator).then(|| sandbox_utility_answer(esi_id))
    }

    /// Whether service starts by itself on the accepted start date (simulated), rather than
    /// when the utility reports the switch.
    pub fn starts_service_itself(self) -> bool {
        self == UtilityGateway::Simulator
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_apps_never_meet_the_simulator() {
        let live = UtilityGateway::for_environment(Environment::Live);
        assert_eq!(live.simulated_answer("10443720000201111"), None);
        assert!(!live.starts_service_itself());
        let sandbox = UtilityGateway::for_environment(Environment::Sandbox);
        assert_eq!(
            sandbox.simulated_answer("10443720000201111"),
            Some(UtilityAnswer::SwitchHold)
        );
        assert!(sandbox.starts_service_itself());
    }
}
