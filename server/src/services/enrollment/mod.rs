//! The enrollment's use cases, shared by the handlers (`http::enrollment`, `http::identity`),
//! the pipeline's jobs (`jobs::pipeline`) and the operator's worklist. This module owns
//! finalizing (`finalize`), the identity, the billing address, the enrollment's summary and
//! what its parts share (the locked enrollment, the progress e-mails, the acceptance's price
//! and start date still holding). Before finalize, the address and the plan are `acceptance`;
//! after it, the utility pipeline and the sandbox's market events are `pipeline`, cancelling
//! is `cancellation`, a location's contracts and documents are `documents`. Each is re-exported
//! here, so callers name `services::enrollment::*`. The parts import this module and
//! `pipeline` imports `cancellation`, never the other way round. Sending a verified enrollment
//! to the utility after its credit check is `follow_up::submit_when_ready`; renewal is in
//! `services::renewal`.

mod acceptance;
mod cancellation;
mod documents;
mod pipeline;

use uuid::Uuid;

use app::api::{PostalAddress, UpdateAccountIn};

use crate::{
    clock::AccountClock,
    domain::{
        account::{ParseContext, Profile},
        documents::contract_in_force,
        enrollment::{
            client_agent_accepted_every_plan, enroller, expired_price, missing_steps,
            start_still_kept, ContractStatus, EnrollmentFacts, StartDateOutOfRange,
        },
        events::Event,
        market::{parse_cutoff, same_day_move_in, start_window, BusinessCalendar},
        status::{UtilityState, VerificationState},
        FieldError,
    },
    mail::{
        self,
        templates::{ServiceNotice, Template, UtilityContact},
    },
    outbox::{self, Job},
    state::Core,
    store::{
        self,
        apps::AppRow,
        enrollment::{
            BillingAddressRow, ConfirmedAddressRow, ContractRow, EnrollmentRow, LocationRow,
        },
        events::NewEvent,
        payments::CardRow,
        Tx,
    },
};

use super::{
    plans::{self, PlansRefused, PricedPlan},
    Error::{self, Failed, Refused},
};

pub use acceptance::{
    accept_plan, confirm_address, new_contract, new_location_and_contract, record_plan_accepted,
    AcceptPlan, AcceptPlanRefused, ConfirmAddressRefused, PlanAccepted,
};

pub use pipeline::{
    activate_locations, apply_answer, end_service, record_utility_answer, record_utility_answer_as,
    simulate, simulated_utility_answer, start_service, submit_to_utility, verify, NotFinalized,
    UtilityAnswerRefused,
};

pub use cancellation::{cancel_location, cancel_service, CancelServiceRefused};

pub use documents::{documents_of_location, location_with_contracts};

/// The locked account and its enrollment (unless cancelled).
pub async fn locked(
    tx: &mut Tx,
    app: Uuid,
    account: Uuid,
) -> store::Result<Option<(store::accounts::AccountRow, EnrollmentRow)>> {
    let Some(row) = store::accounts::account_of_app_for_update(tx, app, account).await? else {
        return Ok(None);
    };
    Ok(store::enrollment::enrollment(&mut *tx, account)
        .await?
        .filter(|e| e.cancellation.is_none())
        .map(|e| (row, e)))
}

/// The customer's e-mail about the enrollment's progress at `location` (received, scheduled,
/// active), in `tx`, with the utility's outage number once the utility is involved; with a
/// `contract`, it also carries the documents of it no e-mail carried yet (the EFL, TOS and
/// YRAC accepted with it, and its LOA when the LOA's own e-mail did not).
async fn progress_mail(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    location: &LocationRow,
    start_date: Option<chrono::NaiveDate>,
    template: fn(ServiceNotice) -> Template,
    contract: Option<Uuid>,
) -> store::Result<()> {
    let (Some(app_row), Some(account)) = (
        store::apps::app_in(&mut *tx, app).await?,
        store::accounts::account_of_app_for_update(tx, app, location.account_uuid).await?,
    ) else {
        return Ok(());
    };
    let utility = store::market::tdu(&mut *tx, &location.tdu)
        .await?
        .map(|t| UtilityContact {
            name: t.display_name,
            outage_phone: t.outage_phone,
        });
    let address = match &location.address_2 {
        Some(unit) if !unit.trim().is_empty() => format!("{} {unit}", location.address_1),
        _ => location.address_1.clone(),
    };
    let notice = ServiceNotice {
        first_name: account.first_name.clone(),
        service_address: Some(format!(
            "{address}, {}, {} {}",
            location.city, location.state, location.postal_code
        )),
        start_date,
        utility,
        attached: Vec::new(),
    };
    let Some(contract) = contract else {
        mail::queue_to_account(tx, clock, &app_row, &account, &template(notice)).await?;
        return Ok(());
    };
    let kinds = store::documents::unsent_documents_of_contract(&mut *tx, contract).await?;
    let notice = ServiceNotice {
        attached: crate::domain::documents::titles_in_contract_order(&kinds),
        ..notice
    };
    let email = mail::queue_to_account(tx, clock, &app_row, &account, &template(notice)).await?;
    store::documents::attach_contract_documents(tx, contract, email).await?;
    Ok(())
}

/// The account's pending contracts are cancelled, in `tx`.
async fn cancel_pending_contracts(tx: &mut Tx, account: Uuid) -> store::Result<()> {
    store::enrollment::set_status_of_account_contracts(
        tx,
        account,
        ContractStatus::Pending,
        ContractStatus::Cancelled,
    )
    .await
}

/// The start date the customer accepted for `location`: its pending contract's.
fn accepted_start(contracts: &[ContractRow], location_uuid: Uuid) -> Option<chrono::NaiveDate> {
    contracts
        .iter()
        .find(|c| c.location_uuid == location_uuid && c.status == ContractStatus::Pending)
        .map(|c| c.start_date)
}

/// The dates a pending contract may start on now, when its accepted start date can no longer
/// be kept: it has passed, or it is today and its utility's same-day cut-off has passed.
async fn pending_start_passed(
    tx: &mut Tx,
    account: &store::accounts::AccountRow,
    clock: &AccountClock,
    calendar: &BusinessCalendar,
) -> store::Result<Option<StartDateOutOfRange>> {
    let (now, today) = (clock.now(), clock.today());
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account.uuid).await?;
    for c in contracts
        .iter()
        .filter(|c| c.status == ContractStatus::Pending)
    {
        let Some(plan) = store::market::plan_by_uuid_in(&mut *tx, c.plan_uuid).await? else {
            continue;
        };
        let cutoff = store::market::tdu(&mut *tx, &plan.tdu)
            .await?
            .and_then(|t| parse_cutoff(t.same_day_cutoff.as_deref()));
        let same_day = same_day_move_in(now, cutoff, calendar);
        if !start_still_kept(c.start_date, today, same_day) {
            let window = start_window(
                today,
                enroller(account.client_agent_accepted_at),
                calendar,
                same_day,
            );
            return Ok(Some(StartDateOutOfRange {
                earliest: window.earliest.max(plan.earliest_start_date),
                latest: window.latest.min(plan.latest_start_date),
            }));
        }
    }
    Ok(None)
}

/// When the price of a pending contract's plan expired, if one has by `at` (the earliest).
async fn pending_price_expired(
    tx: &mut Tx,
    account: Uuid,
    at: chrono::DateTime<chrono::Utc>,
) -> store::Result<Option<chrono::DateTime<chrono::Utc>>> {
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account).await?;
    let mut expires = Vec::new();
    for c in contracts
        .iter()
        .filter(|c| c.status == ContractStatus::Pending)
    {
        if let Some(plan) = store::market::plan_by_uuid_in(&mut *tx, c.plan_uuid).await? {
            expires.push(plan.expires_at);
        }
    }
    Ok(expired_price(expires, at))
}

/// Why an enrollment could not be finalized; nothing was written.
#[derive(Debug)]
pub enum FinalizeRefused {
    AccountNotFound,
    AlreadyFinalized,
    /// A client agent enrollment whose plan was not accepted by the client agent (the
    /// authorization was not recorded before plans/accept).
    ClientAgentNotRecorded,
    /// The accepted plan's price expired (when): plans must be requested and one accepted
    /// again, which replaces this acceptance.
    PlanExpired(chrono::DateTime<chrono::Utc>),
    /// The accepted start date can no longer be kept (the dates allowed now): a plan must be
    /// accepted again, which replaces this acceptance.
    StartDatePassed(StartDateOutOfRange),
    /// The steps still missing.
    Incomplete(Vec<&'static str>),
}

/// Finalizes the enrollment, in one transaction: the enrollment row, the verification job a
/// minute later, `enrollment.finalized` and the status.
pub async fn finalize(
    state: &Core,
    app: Uuid,
    account_uuid: Uuid,
    is_client_agent: bool,
) -> Result<(), Error<FinalizeRefused>> {
    let clock = state.clock.for_account(&state.db, account_uuid).await?;
    let now = clock.now();
    let mut tx = state.db.begin().await?;
    let account = store::accounts::account_of_app_for_update(&mut tx, app, account_uuid)
        .await?
        .ok_or(Refused(FinalizeRefused::AccountNotFound))?;
    if account.is_enrollment_finalized {
        return Err(Refused(FinalizeRefused::AlreadyFinalized));
    }
    if is_client_agent {
        let contracts = store::enrollment::contracts_of_account(&mut tx, account_uuid).await?;
        let pending = contracts
            .iter()
            .filter(|c| c.status == ContractStatus::Pending)
            .map(|c| c.accepted_by.as_str());
        if !client_agent_accepted_every_plan(account.client_agent_accepted_at.is_some(), pending) {
            return Err(Refused(FinalizeRefused::ClientAgentNotRecorded));
        }
    }
    if let Some(expired_at) = pending_price_expired(&mut tx, account_uuid, now).await? {
        return Err(Refused(FinalizeRefused::PlanExpired(expired_at)));
    }
    let calendar = state.business_calendar().await?;
    if let Some(allowed) = pending_start_passed(&mut tx, &account, &clock, calendar).await? {
        return Err(Refused(FinalizeRefused::StartDatePassed(allowed)));
    }
    let profile = account.profile().map_err(|e| Failed(e.into()))?;
    let missing = missing_steps(&EnrollmentFacts {
        has_confirmed_address: account.has_confirmed_address,
        has_accepted_plan: account.has_accepted_plan,
        is_identity_complete: profile.is_identity_complete(),
        has_credit_check: account.has_credit_check,
        has_payment_method: account.has_payment_method,
        ..Default::default()
    });
    if !missing.is_empty() {
        return Err(Refused(FinalizeRefused::Incomplete(missing)));
    }
    store::enrollment::insert_enrollment(
        &mut tx,
        &EnrollmentRow {
            account_uuid,
            finalized_at: now,
            is_client_agent,
            verification: VerificationState::Pending,
            utility: UtilityState::NotSubmitted,
            cancellation: None,
            updated_at: now,
        },
    )
    .await?;
    outbox::enqueue(
        &mut tx,
        &clock,
        &Job::EnrollmentVerify { app_uuid: app },
        Some(account_uuid),
        now + chrono::Duration::minutes(1),
    )
    .await?;
    store::events::insert_event(
        &mut tx,
        &NewEvent::of(
            app,
            &Event::Finalized {
                account_uuid,
                is_client_agent_enrollment: is_client_agent,
            },
            now,
        ),
    )
    .await?;
    let locations = store::enrollment::locations_of_account(&mut tx, account_uuid).await?;
    let contracts = store::enrollment::contracts_of_account(&mut tx, account_uuid).await?;
    if let Some(location) = locations.first() {
        let start = accepted_start(&contracts, location.uuid);
        // The copies of what was agreed go with the confirmation.
        let contract = contracts
            .iter()
            .find(|c| c.location_uuid == location.uuid && c.status == ContractStatus::Pending)
            .map(|c| c.uuid);
        progress_mail(
            &mut tx,
            &clock,
            app,
            location,
            start,
            Template::EnrollmentReceived,
            contract,
        )
        .await?;
    }
    super::follow_up::refresh_status(&mut tx, clock.service(), app, account_uuid, now).await?;
    tx.commit().await?;
    Ok(())
}

/// The billing address as given, with the service address it may stand for.
pub struct BillingAddress {
    pub billing: BillingAddressRow,
    pub service: Option<ConfirmedAddressRow>,
}

/// The account's billing address: the service address unless another was given; `None` while
/// it is the service address and none is confirmed yet.
pub async fn billing_address(
    db: &store::Db,
    account: Uuid,
) -> store::Result<Option<BillingAddress>> {
    let service = store::enrollment::confirmed_address(db, account).await?;
    let billing = store::enrollment::billing_address(db, account)
        .await?
        .unwrap_or_else(BillingAddressRow::same_as_service_address);
    if billing.same_as_service_address && service.is_none() {
        return Ok(None);
    }
    Ok(Some(BillingAddress { billing, service }))
}

/// What an account chose in enrollment, as its review shows it: the plan of its first
/// location's contract (as it was offered), the card on file and the billing address.
pub struct EnrollmentSummary {
    pub plan: Option<PricedPlan>,
    pub card: Option<CardRow>,
    pub billing: Option<BillingAddress>,
}

/// The account's enrollment choices so far (`EnrollmentSummary`); each part `None` until made.
pub async fn summary(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
) -> Result<EnrollmentSummary, Error<PlansRefused>> {
    let account = store::accounts::account_of_app(&core.db, app.uuid, account_uuid)
        .await?
        .ok_or(Refused(PlansRefused::AccountNotFound))?;
    let location = store::enrollment::locations_of_account(&core.db, account_uuid)
        .await?
        .into_iter()
        .next();
    let contracts = store::enrollment::contracts_of_account(&core.db, account_uuid).await?;
    let plan_uuid = location.and_then(|l| {
        let own: Vec<&ContractRow> = contracts
            .iter()
            .filter(|c| c.location_uuid == l.uuid)
            .collect();
        contract_in_force(&own, |c| c.status, |c| c.start_date).map(|c| c.plan_uuid)
    });
    let plan = match plan_uuid {
        Some(uuid) => plans::accepted_plan(core, &account, uuid).await?,
        None => None,
    };
    Ok(EnrollmentSummary {
        plan,
        card: store::payments::current_payment_method(&core.db, account_uuid).await?,
        billing: billing_address(&core.db, account_uuid).await?,
    })
}

/// Why the billing address was not set.
#[derive(Debug)]
pub enum BillingAddressRefused {
    /// Same as a service address not confirmed yet.
    ServiceAddressNotConfirmed,
}

/// Sets the billing address (`None`: the service address), in one transaction, with
/// `account.billing_address_updated`.
pub async fn set_billing_address(
    state: &Core,
    app: Uuid,
    account: Uuid,
    address: Option<PostalAddress>,
) -> Result<BillingAddress, Error<BillingAddressRefused>> {
    let service = store::enrollment::confirmed_address(&state.db, account).await?;
    let billing = match address {
        None => {
            if service.is_none() {
                return Err(Refused(BillingAddressRefused::ServiceAddressNotConfirmed));
            }
            BillingAddressRow::same_as_service_address()
        }
        Some(a) => BillingAddressRow {
            same_as_service_address: false,
            address_1: Some(a.address_1),
            address_2: a.address_2,
            city: Some(a.city),
            state: Some(a.state),
            postal_code: Some(a.postal_code),
        },
    };
    let now = state.clock.for_account(&state.db, account).await?.now();
    let mut tx = state.db.begin().await?;
    store::enrollment::insert_billing_address(&mut tx, account, &billing, now).await?;
    store::events::insert_event(
        &mut tx,
        &NewEvent::of(
            app,
            &Event::BillingAddressUpdated {
                account_uuid: account,
                same_as_service_address: billing.same_as_service_address,
            },
            now,
        ),
    )
    .await?;
    tx.commit().await?;
    Ok(BillingAddress { billing, service })
}

/// Why the identity was not updated; nothing was written.
#[derive(Debug)]
pub enum IdentityRefused {
    AccountNotFound,
    Invalid(FieldError),
}

/// Updates the identity fields, in one transaction: when they changed,
/// `enrollment.identity_updated` and the status (identity may be the last prerequisite of a
/// client agent enrollment). Returns the profile.
pub async fn update_identity(
    state: &Core,
    app: &AppRow,
    account: Uuid,
    patch: UpdateAccountIn,
) -> Result<Profile, Error<IdentityRefused>> {
    // The account's own clock: a sandbox account moved ahead is older by as much.
    let clock = state.clock.for_account(&state.db, account).await?;
    let ctx = ParseContext {
        today: clock.today(),
        environment: app.environment_kind(),
    };
    let now = state.clock.now();
    let mut tx = state.db.begin().await?;
    let mut row = store::accounts::account_of_app_for_update(&mut tx, app.uuid, account)
        .await?
        .ok_or(Refused(IdentityRefused::AccountNotFound))?;
    let before = row.profile().map_err(|e| Failed(e.into()))?;
    let profile = before
        .clone()
        .patched(patch, &ctx)
        .map_err(|e| Refused(IdentityRefused::Invalid(e)))?;
    if profile != before {
        row.set_profile(&profile).map_err(|e| Failed(e.into()))?;
        row.updated_at = now;
        store::accounts::update_account(&mut tx, &row).await?;
        store::events::insert_event(
            &mut tx,
            &NewEvent::of(
                app.uuid,
                &Event::IdentityUpdated {
                    account_uuid: row.uuid,
                    is_identity_complete: profile.is_identity_complete(),
                },
                now,
            ),
        )
        .await?;
        super::follow_up::refresh_status(&mut tx, &state.clock, app.uuid, row.uuid, now).await?;
    }
    tx.commit().await?;
    Ok(profile)
}
