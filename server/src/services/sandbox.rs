//! The sandbox's use cases: demo data (an account made active since a few cycles ago, with
//! what an enrollment needs: identity, a passed credit check, a test card, a location and its
//! plan), the reset of an enrollment, simulated outside events (the credit bureau's, the
//! utility's and the market's, billing's), and the outbox of the e-mails sent with their
//! attachments.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{
    billing::{self, BillingRefused},
    disconnection, enrollment,
    follow_up::rerun_credit_check,
    Error::{self, Failed, Refused},
};
use crate::{
    adapters::credit::SandboxBureau,
    clock::AccountClock,
    domain::{
        billing::InvoiceStatus,
        credit::{BillingSimulation, CreditSimulation, Simulation},
        disconnection::{DisconnectionStatus, PaymentPlanStatus},
        enrollment::{accepted_by, contract_end, enroller, ContractStatus, EnrollmentType},
        jobs::{InvoicePayload, ServiceOrderKind, ServiceOrderPayload},
        market::{Enroller, EsiId},
        status::{CreditState, UtilityState, VerificationState},
        tokens,
    },
    state::Core,
    store::{
        self,
        accounts::AccountRow,
        apps::AppRow,
        billing::InvoiceRow,
        documents::{AttachmentSummaryRow, StoredDocumentRow},
        emails::EmailRow,
        enrollment::{ConfirmedAddressRow, EnrollmentRow},
        market::ServiceAddressRow,
        Tx,
    },
};

/// How long ago demo data starts service: about three billing cycles.
const SEED_SERVICE_DAYS: i64 = 95;

/// Why demo data could not be seeded; nothing was written.
#[derive(Debug)]
pub enum SeedRefused {
    AccountNotFound,
    /// A cancelled enrollment must be deleted first.
    EnrollmentCancelled,
    /// The confirmed address's ESI ID is not one.
    EsiIdInvalid,
    /// The confirmed address's meter is not in the directory.
    EsiIdNotFound,
    DirectoryEmpty,
    /// No plan was priced for the demo address.
    NoPlan,
    PlanNotFound,
    /// The demo address could not be priced.
    Pricing(super::plans::PlansRefused),
}

/// The demo's new location: its address, and the first plan priced for it (if any).
pub struct DemoLocation {
    pub address: ServiceAddressRow,
    pub plan_uuid: Option<Uuid>,
}

/// Demo data for the account (`seed_demo`), its new location priced as the market prices
/// plans for the account. Returns when the seed committed, on the account's clock.
pub async fn seed_demo_data(
    state: &Core,
    app: &AppRow,
    account_uuid: Uuid,
) -> Result<DateTime<Utc>, Error<SeedRefused>> {
    let new_location = match demo_address(state, app.uuid, account_uuid).await? {
        None => None,
        Some((account, address)) => {
            let plans = super::plans::price_account_plans(state, app, &account, &address.esi_id)
                .await
                .map_err(|e| match e {
                    Refused(why) => Refused(SeedRefused::Pricing(why)),
                    Failed(e) => Failed(e),
                })?;
            Some(DemoLocation {
                address,
                plan_uuid: plans.first().map(|p| p.plan.uuid),
            })
        }
    };
    seed_demo(state, app.uuid, account_uuid, new_location).await
}

/// The address demo data would enroll, with the account (whose plans the caller prices for
/// it): the account's confirmed address, else the directory's first. `None` when the account
/// already has a location.
pub async fn demo_address(
    state: &Core,
    app_uuid: Uuid,
    account_uuid: Uuid,
) -> Result<Option<(AccountRow, ServiceAddressRow)>, Error<SeedRefused>> {
    let account = store::accounts::account_of_app(&state.db, app_uuid, account_uuid)
        .await?
        .ok_or(Refused(SeedRefused::AccountNotFound))?;
    if !store::enrollment::locations_of_account(&state.db, account_uuid)
        .await?
        .is_empty()
    {
        return Ok(None);
    }
    let address = match store::enrollment::confirmed_address(&state.db, account_uuid).await? {
        Some(a) => {
            let esi = EsiId::parse(&a.esi_id).ok_or(Refused(SeedRefused::EsiIdInvalid))?;
            store::market::service_address(&state.db, esi.as_str())
                .await?
                .ok_or(Refused(SeedRefused::EsiIdNotFound))?
        }
        None => store::market::service_addresses_after(&state.db, "", 1)
            .await?
            .into_iter()
            .next()
            .ok_or(Refused(SeedRefused::DirectoryEmpty))?,
    };
    Ok(Some((account, address)))
}

/// Seeds the account, in one transaction, as active since `SEED_SERVICE_DAYS` ago: identity
/// facts, a passed credit check, a test card, the location and contract of `new_location` (an
/// address and a plan priced for it) when it has none, a finalized enrollment the utility
/// accepted, service active since then. Returns the instant seeded (on the account's clock):
/// the caller runs the account's jobs due by then (the cycles' reads, invoices and auto-pay).
pub async fn seed_demo(
    state: &Core,
    app_uuid: Uuid,
    account_uuid: Uuid,
    new_location: Option<DemoLocation>,
) -> Result<DateTime<Utc>, Error<SeedRefused>> {
    let clock = &state.clock.for_account(&state.db, account_uuid).await?;
    let new_location = match new_location {
        None => None,
        Some(DemoLocation { address, plan_uuid }) => {
            let plan_uuid = plan_uuid.ok_or(Refused(SeedRefused::NoPlan))?;
            let plan = store::market::plan_by_uuid(&state.db, plan_uuid)
                .await?
                .ok_or(Refused(SeedRefused::PlanNotFound))?;
            Some((address, plan))
        }
    };
    // The documents the demo contract is accepted with, rendered before the transaction.
    let documents = match (
        &new_location,
        store::apps::app_by_uuid(&state.db, app_uuid).await?,
    ) {
        (Some((_, plan)), Some(app)) => Some(
            super::documents::render_contract_documents(state, &app, plan, &plan.tos_version)
                .await?,
        ),
        _ => None,
    };
    let now = clock.now();
    let today = clock.today();
    // Service began a few cycles ago, so that the demo has usage, paid invoices and an open one.
    let start = today - chrono::Duration::days(SEED_SERVICE_DAYS);
    let mut tx = state.db.begin().await?;
    let mut account = store::accounts::account_of_app_for_update(&mut tx, app_uuid, account_uuid)
        .await?
        .ok_or(Refused(SeedRefused::AccountNotFound))?;
    if let Some(e) = store::enrollment::enrollment(&mut tx, account_uuid).await? {
        if e.cancellation.is_some() {
            return Err(Refused(SeedRefused::EnrollmentCancelled));
        }
    }
    // Identity facts.
    let mut profile = account.profile().map_err(|e| Failed(e.into()))?;
    if !profile.is_identity_complete() {
        profile
            .phone
            .get_or_insert_with(|| "+15125550100".to_owned());
        profile
            .date_of_birth
            .get_or_insert_with(|| NaiveDate::from_ymd_opt(1980, 1, 1).unwrap_or_default());
        account
            .set_profile(&profile)
            .map_err(|e| Failed(e.into()))?;
        account.updated_at = now;
        store::accounts::update_account(&mut tx, &account).await?;
    }
    // A passed credit check.
    let credit = store::credit::latest_credit_check(&mut tx, account_uuid).await?;
    if credit.is_none_or(|c| c.status != CreditState::Passed) {
        let sealed = state.pii.seal(b"123456789");
        store::credit::insert_credit_check(
            &mut tx,
            &store::credit::NewCreditCheck {
                account_uuid,
                ssn_ciphertext: &sealed,
                ssn_last4: "6789",
                consented_at: now,
                status: CreditState::Passed,
            },
        )
        .await?;
    }
    // A test card.
    if !account.has_payment_method {
        let card = store::payments::CardRow {
            id: tokens::payment_method_id(),
            brand: "visa".to_owned(),
            last4: "4242".to_owned(),
            exp_month: 12,
            exp_year: 2099,
            postal_code: None,
            fingerprint: format!("demo-{account_uuid}"),
        };
        store::payments::insert_processor_payment_method(
            &mut tx,
            app_uuid,
            account_uuid,
            &card,
            false,
            now,
        )
        .await?;
        billing::attach_card(&mut tx, app_uuid, account_uuid, &card, now).await?;
    }
    // The location and its contract, starting today.
    if let Some((address, plan)) = new_location {
        if store::enrollment::confirmed_address(&mut tx, account_uuid)
            .await?
            .is_none()
        {
            let confirmed = ConfirmedAddressRow::from(&address);
            store::enrollment::insert_confirmed_address(&mut tx, account_uuid, &confirmed, now)
                .await?;
        }
        let (location, contract) = enrollment::new_location_and_contract(
            app_uuid,
            account_uuid,
            address,
            &plan,
            start,
            EnrollmentType::MoveIn,
            // The seed records the customer's own acceptance, whoever enrolls the account.
            accepted_by(Enroller::Customer),
            now,
        )
        .map_err(|e| Failed(e.into()))?;
        enrollment::record_plan_accepted(&mut tx, app_uuid, &location, &contract, now).await?;
        if let Some(documents) = documents {
            super::documents::store_contract_documents(&mut tx, &contract, documents, now).await?;
        }
    }
    // Finalized, verified, accepted by the utility.
    match store::enrollment::enrollment(&mut tx, account_uuid).await? {
        Some(mut e) => {
            e.verification = VerificationState::Passed;
            e.utility = UtilityState::Accepted;
            e.updated_at = now;
            store::enrollment::update_enrollment(&mut tx, &e).await?;
        }
        None => {
            store::enrollment::insert_enrollment(
                &mut tx,
                &EnrollmentRow {
                    account_uuid,
                    finalized_at: now,
                    is_client_agent: enroller(account.client_agent_accepted_at)
                        == Enroller::ClientAgent,
                    verification: VerificationState::Passed,
                    utility: UtilityState::Accepted,
                    cancellation: None,
                    updated_at: now,
                },
            )
            .await?;
        }
    }
    // Service active since `start`: a pending contract moves there too.
    for contract in store::enrollment::contracts_of_account(&mut tx, account_uuid)
        .await?
        .iter()
        .filter(|c| c.status == ContractStatus::Pending)
    {
        let term = u32::try_from(contract.term_months).unwrap_or(1);
        let end = contract_end(start, term, &contract.plan_type);
        store::enrollment::set_contract_dates(&mut tx, contract.uuid, start, end).await?;
    }
    enrollment::activate_locations(&mut tx, clock, app_uuid, account_uuid, Some(start)).await?;
    // The pipeline's own steps, if it was running, have nothing left to do.
    store::enrollment::drop_pending_jobs(
        &mut tx,
        account_uuid,
        &store::enrollment::PIPELINE_JOB_KINDS,
    )
    .await?;
    super::follow_up::refresh_status(&mut tx, clock.service(), app_uuid, account_uuid, now).await?;
    tx.commit().await?;
    Ok(now)
}

/// Why the sandbox's reset did not apply.
#[derive(Debug)]
pub enum ResetRefused {
    AccountNotFound,
}

/// Sandbox reset, in one transaction: the account's enrollment and all that hangs on it go
/// (`store::enrollment::delete_enrollment_of_account`), and its status is derived anew.
/// Returns the instant of the reset on the account's clock.
pub async fn delete_enrollment(
    state: &Core,
    app_uuid: Uuid,
    account_uuid: Uuid,
) -> Result<DateTime<Utc>, Error<ResetRefused>> {
    let clock = state.clock.for_account(&state.db, account_uuid).await?;
    let mut tx = state.db.begin().await?;
    store::accounts::account_of_app_for_update(&mut tx, app_uuid, account_uuid)
        .await?
        .ok_or(Refused(ResetRefused::AccountNotFound))?;
    store::enrollment::delete_enrollment_of_account(&mut tx, account_uuid).await?;
    super::follow_up::refresh_status(
        &mut tx,
        clock.service(),
        app_uuid,
        account_uuid,
        clock.now(),
    )
    .await?;
    tx.commit().await?;
    Ok(clock.now())
}

/// Why a simulated event could not apply; nothing was written.
#[derive(Debug)]
pub enum SimulationRefused {
    /// Not an event the sandbox simulates.
    UnknownEvent,
    AccountNotFound,
    /// A credit event without a credit-check submission.
    NoCreditCheck,
    /// An enrollment event before the enrollment is finalized (or has a location).
    NotFinalized,
    /// Billing events: no location with active service.
    NoActiveService,
    /// Billing events: the meter was already read through today.
    NothingToBill,
    /// Billing events: no invoice waiting for payment.
    NothingToPay,
    /// Billing events: the account's stored data cannot be billed.
    Billing(BillingRefused),
    /// No disconnection or reconnection is waiting for the utility.
    NothingPending,
    /// No running payment plan with an instalment billed and unpaid.
    NoPlanInstalment,
    /// `deposit_refund_due`: no deposit is held (none asked, not paid, or already back).
    NoDepositHeld,
}

impl From<BillingRefused> for SimulationRefused {
    fn from(why: BillingRefused) -> Self {
        match why {
            BillingRefused::NoActiveService => SimulationRefused::NoActiveService,
            BillingRefused::NothingToBill => SimulationRefused::NothingToBill,
            BillingRefused::NothingToPay => SimulationRefused::NothingToPay,
            why @ BillingRefused::Unbillable(_) => SimulationRefused::Billing(why),
        }
    }
}

/// The instants around a simulation, on the account's clock: before it, and when it committed.
pub struct Simulated {
    pub before: DateTime<Utc>,
    pub at: DateTime<Utc>,
}

/// Applies a simulated outside event, in one transaction: a credit bureau's answer (the check
/// reruns at once when the event says so), the utility's or the market's
/// (`enrollment::simulate`), or a billing event. The jobs it schedules run when the caller
/// advances the account's clock to `Simulated::at`.
pub async fn simulate(
    state: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    event: Simulation,
) -> Result<Simulated, Error<SimulationRefused>> {
    if let Simulation::Unknown = event {
        return Err(Refused(SimulationRefused::UnknownEvent));
    }
    let clock = state.clock.for_account(&state.db, account_uuid).await?;
    let before = clock.now();
    let mut tx = state.db.begin().await?;
    let applied = match event {
        Simulation::Credit(event) => {
            simulate_credit(&mut tx, app, account_uuid, &clock, event).await?
        }
        Simulation::Enrollment(sim) => {
            enrollment::simulate(&mut tx, app.uuid, account_uuid, &clock, sim)
                .await?
                .map_err(|enrollment::NotFinalized| SimulationRefused::NotFinalized)
        }
        Simulation::Billing(BillingSimulation::InvoiceGenerated) => {
            billing::simulate_invoice(&mut tx, state, &clock, app, account_uuid)
                .await?
                .map(|_| ())
                .map_err(SimulationRefused::from)
        }
        Simulation::Billing(BillingSimulation::PaymentFailed) => {
            billing::simulate_payment_failure(&mut tx, state, &clock, app, account_uuid)
                .await?
                .map(|_| ())
                .map_err(SimulationRefused::from)
        }
        Simulation::DepositRefundDue => {
            if super::deposits::simulate_refund_due(&mut tx, account_uuid).await? {
                Ok(())
            } else {
                Err(SimulationRefused::NoDepositHeld)
            }
        }
        Simulation::Billing(sim) => {
            simulate_collections(&mut tx, state, &clock, app, account_uuid, sim).await?
        }
        Simulation::Unknown => Err(SimulationRefused::UnknownEvent),
    };
    applied.map_err(Refused)?;
    tx.commit().await?;
    Ok(Simulated {
        before,
        at: clock.now(),
    })
}

/// The sandbox's collections events, in `tx`: a bill past due, a payment plan's instalment
/// missed, the utility carrying out a disconnection or a reconnection.
async fn simulate_collections(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account_uuid: Uuid,
    sim: BillingSimulation,
) -> store::Result<Result<(), SimulationRefused>> {
    use BillingSimulation as S;
    use SimulationRefused as R;
    let Some(account) =
        store::accounts::account_of_app_for_update(tx, app.uuid, account_uuid).await?
    else {
        return Ok(Err(R::AccountNotFound));
    };
    let now = clock.now();
    let turn_past_due = |invoice: InvoiceRow| InvoicePayload {
        app_uuid: app.uuid,
        invoice_uuid: invoice.uuid,
        at: now,
    };
    match sim {
        S::InvoicePastDue => {
            let open = store::disconnections::unpaid_invoices(&mut *tx, account_uuid)
                .await?
                .into_iter()
                .rev()
                .find(|i| i.status == InvoiceStatus::Open);
            let Some(invoice) = open else {
                return Ok(Err(R::NothingToPay));
            };
            super::invoices::past_due(tx, core, clock, account_uuid, &turn_past_due(invoice))
                .await?;
        }
        S::PaymentPlanMissed => {
            let Some(plan) = store::disconnections::plans_of_account(&mut *tx, account_uuid)
                .await?
                .into_iter()
                .find(|p| p.status == PaymentPlanStatus::Active)
            else {
                return Ok(Err(R::NoPlanInstalment));
            };
            let mut open = None;
            for line in store::disconnections::instalments(&mut *tx, plan.uuid)
                .await?
                .iter()
                .rev()
            {
                if let Some(u) = line.invoice_uuid {
                    open = store::billing::invoice(&mut *tx, u)
                        .await?
                        .filter(|i| i.status == InvoiceStatus::Open);
                    break;
                }
            }
            let Some(invoice) = open else {
                return Ok(Err(R::NoPlanInstalment));
            };
            super::invoices::past_due(tx, core, clock, account_uuid, &turn_past_due(invoice))
                .await?;
        }
        S::ServiceDisconnected => {
            let rows =
                store::disconnections::disconnections_of_account(&mut *tx, account_uuid).await?;
            let Some(mut row) = rows.into_iter().find(|d| {
                matches!(
                    d.status,
                    DisconnectionStatus::Noticed | DisconnectionStatus::Requested
                )
            }) else {
                return Ok(Err(R::NothingPending));
            };
            if row.status == DisconnectionStatus::Noticed {
                let invoice = store::billing::invoice(&mut *tx, row.invoice_uuid).await?;
                if invoice.as_ref().map(|i| i.status) != Some(InvoiceStatus::PastDue) {
                    return Ok(Err(R::NothingPending));
                }
                disconnection::request_disconnection(tx, clock, app, &mut row, invoice.as_ref())
                    .await?;
            }
            let order = ServiceOrderPayload {
                app_uuid: app.uuid,
                disconnection_uuid: row.uuid,
                order: ServiceOrderKind::Disconnect,
            };
            if !disconnection::complete_service_order(tx, core, clock, account.uuid, &order).await?
            {
                return Ok(Err(R::NothingPending));
            }
        }
        S::ServiceReconnected => {
            let rows =
                store::disconnections::disconnections_of_account(&mut *tx, account_uuid).await?;
            let Some(row) = rows
                .into_iter()
                .find(|d| d.status == DisconnectionStatus::ReconnectRequested)
            else {
                return Ok(Err(R::NothingPending));
            };
            let order = ServiceOrderPayload {
                app_uuid: app.uuid,
                disconnection_uuid: row.uuid,
                order: ServiceOrderKind::Reconnect,
            };
            disconnection::complete_service_order(tx, core, clock, account.uuid, &order).await?;
        }
        S::InvoiceGenerated | S::PaymentFailed => {}
    }
    Ok(Ok(()))
}

/// A credit bureau's simulated answer for the latest submission, in `tx`.
async fn simulate_credit(
    tx: &mut store::Tx,
    app: &AppRow,
    account_uuid: Uuid,
    clock: &AccountClock,
    event: CreditSimulation,
) -> store::Result<Result<(), SimulationRefused>> {
    let Some(account) =
        store::accounts::account_of_app_for_update(tx, app.uuid, account_uuid).await?
    else {
        return Ok(Err(SimulationRefused::AccountNotFound));
    };
    let Some(check) = store::credit::latest_credit_check(tx, account_uuid).await? else {
        return Ok(Err(SimulationRefused::NoCreditCheck));
    };
    SandboxBureau::simulate(tx, check.uuid, event).await?;
    if event.runs_check_now() {
        rerun_credit_check(tx, &account, clock).await?;
    }
    Ok(Ok(()))
}

/// A page of the app's outbox, newest first (plus one row, for the listing): each e-mail with
/// what it carries attached (without the bytes).
pub async fn outbox(
    core: &Core,
    app: Uuid,
    account: Option<Uuid>,
    limit: u32,
    offset: u64,
) -> store::Result<Vec<(EmailRow, Vec<AttachmentSummaryRow>)>> {
    let emails = store::emails::emails_of_app(&core.db, app, account, limit, offset).await?;
    let uuids: Vec<Uuid> = emails.iter().map(|e| e.uuid).collect();
    let mut attachments: std::collections::HashMap<Uuid, Vec<AttachmentSummaryRow>> =
        std::collections::HashMap::new();
    for a in store::documents::attachment_summaries_of_emails(&core.db, &uuids).await? {
        attachments.entry(a.email_uuid).or_default().push(a);
    }
    Ok(emails
        .into_iter()
        .map(|email| {
            let own = attachments.remove(&email.uuid).unwrap_or_default();
            (email, own)
        })
        .collect())
}

/// One attachment of an e-mail of the app, with its bytes; `None` when the e-mail is not the
/// app's or carries no such attachment.
pub async fn outbox_attachment(
    core: &Core,
    app: Uuid,
    email: Uuid,
    attachment: Uuid,
) -> store::Result<Option<StoredDocumentRow>> {
    match store::emails::email_by_uuid(&core.db, email).await? {
        Some(e) if e.app_uuid == Some(app) => {
            store::documents::attachment_of_email(&core.db, email, attachment).await
        }
        _ => Ok(None),
    }
}
