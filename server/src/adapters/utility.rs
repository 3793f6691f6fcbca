//! The utility's side of an enrollment: it receives the submission, answers it (accepted,
//! switch hold, deactivated meter, rejected) and later switches the meter (service starts).
//!
//! `UtilityGateway::Simulator` serves sandbox apps: the answer comes by the magic ESI ID endings
//! after the simulated 2 to 72 business hours (the gateway says when; the enrollment schedules
//! it), and service starts by itself on the start date.
//! `UtilityGateway::Worklist` serves live apps until a market connection exists: the submission
//! waits in `utility_submissions`, and an operator records the utility's answers
//! (`switchboard market submissions`), which move the enrollment exactly as the simulator's do.
//! Magic ESI IDs mean nothing there.

use app::api::Environment;
use chrono::{DateTime, Utc};
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
    store::{self, enrollment::LocationRow, utility::SubmissionRow, Tx},
};

/// Hours the simulated utility takes to carry out a disconnection or reconnection.
pub const SIMULATED_ORDER_HOURS: i64 = 1;

pub use crate::domain::jobs::{ServiceOrderKind, ServiceOrderPayload};

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

    /// Hands the enrollment of `location` to the utility, in `tx`. Returns when the simulator
    /// answers (after its 2 to 72 business hours), which the caller schedules; `None` when the
    /// answer waits for the operator.
    pub async fn submit(
        self,
        tx: &mut Tx,
        clock: &AccountClock,
        calendar: &BusinessCalendar,
        location: &LocationRow,
        requested_start_date: Option<chrono::NaiveDate>,
    ) -> store::Result<Option<DateTime<Utc>>> {
        let now = clock.now();
        match self {
            UtilityGateway::Simulator => Ok(Some(add_business_hours(
                now,
                utility_answer_hours(&location.esi_id),
                calendar,
            ))),
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
                Ok(None)
            }
        }
    }

    /// When the utility carries out a disconnection or reconnection asked of it `now`: the
    /// simulator an hour later (the caller schedules it); `None` for the worklist, which keeps
    /// it for the operator, who sees the notices waiting in the `requested` and
    /// `reconnect_requested` statuses and records what the utility did.
    pub fn service_order_done_at(self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        (self == UtilityGateway::Simulator)
            .then(|| now + chrono::Duration::hours(SIMULATED_ORDER_HOURS))
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
