//! Before finalize: the confirmed service address (`confirm_address`) and the plan's acceptance
//! (`accept_plan`, which creates the location and its contract, `new_location_and_contract`,
//! with the documents the customer accepted).

use uuid::Uuid;

use app::api::market::PlanRatesOut;

use crate::{
    domain::{
        enrollment::{
            acceptance_confirms_address, accepted_by, check_start_date, contract_end, enroller,
            prior_acceptance, ContractStatus, EnrollmentType, LocationStatus, PriorAcceptance,
            StartDateOutOfRange,
        },
        events::Event,
        market::{parse_cutoff, same_day_move_in, BusinessCalendar, Enroller, EsiId},
    },
    mail::{
        self,
        templates::{Brand, LetterOfAuthorization, Template},
        NewEmail,
    },
    services::{
        follow_up,
        Error::{self, Failed, Refused},
    },
    state::Core,
    store::{
        self,
        apps::AppRow,
        enrollment::{ConfirmedAddressRow, ContractRow, LocationRow},
        events::NewEvent,
        Tx,
    },
};

use super::{pending_price_expired, pending_start_passed};

/// The Location and the pending Contract a plan acceptance creates.
#[allow(clippy::too_many_arguments)]
pub fn new_location_and_contract(
    app_uuid: Uuid,
    account_uuid: Uuid,
    address: store::market::ServiceAddressRow,
    plan: &store::market::PlanRow,
    start: chrono::NaiveDate,
    enrollment_type: EnrollmentType,
    accepted_by: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(LocationRow, ContractRow), serde_json::Error> {
    let location = LocationRow {
        uuid: Uuid::new_v4(),
        app_uuid,
        account_uuid,
        esi_id: address.esi_id.clone(),
        address_1: address.address_1,
        address_2: address.address_2,
        city: address.city,
        state: address.state,
        postal_code: address.postal_code,
        tdu: address.tdu,
        enrollment_type: enrollment_type.as_str().to_owned(),
        status: LocationStatus::Pending,
        service_start_date: None,
        final_service_date: None,
        is_service_active: false,
        has_usage_history: false,
        created_at: now,
        updated_at: now,
        is_disconnected: false,
    };
    let contract = new_contract(location.uuid, account_uuid, plan, start, accepted_by, now)?;
    Ok((location, contract))
}

/// The pending Contract of a plan accepted for a location, starting on `start`.
pub fn new_contract(
    location_uuid: Uuid,
    account_uuid: Uuid,
    plan: &store::market::PlanRow,
    start: chrono::NaiveDate,
    accepted_by: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<ContractRow, serde_json::Error> {
    let term_months = u32::try_from(plan.term_months).unwrap_or(1);
    let rates = PlanRatesOut {
        energy_cents_per_kwh: plan.energy_cents_per_kwh.clone(),
        base_charge_cents_per_month: plan.base_charge_cents_per_month,
        tdu_fixed_cents_per_month: plan.tdu_fixed_cents_per_month,
        tdu_cents_per_kwh: plan.tdu_cents_per_kwh.clone(),
        solar_buyback_cents_per_kwh: plan.solar_buyback_cents_per_kwh.clone(),
        early_termination_fee_cents: plan.early_termination_fee_cents,
    };
    let contract = ContractRow {
        uuid: Uuid::new_v4(),
        location_uuid,
        account_uuid,
        plan_uuid: plan.uuid,
        plan_name: plan.name.clone(),
        plan_type: plan.plan_type.clone(),
        term_months: plan.term_months,
        start_date: start,
        end_date: contract_end(start, term_months, &plan.plan_type),
        rates: serde_json::to_string(&rates)?,
        tos_version: plan.tos_version.clone(),
        status: ContractStatus::Pending,
        accepted_at: now,
        accepted_by: accepted_by.to_owned(),
        created_at: now,
    };
    Ok(contract)
}

/// A plan accepted for a meter, in `tx`: the new Location, its pending Contract and
/// `enrollment.plan_accepted`.
pub async fn record_plan_accepted(
    tx: &mut Tx,
    app: Uuid,
    location: &LocationRow,
    contract: &ContractRow,
    now: chrono::DateTime<chrono::Utc>,
) -> store::Result<()> {
    store::enrollment::insert_location(tx, location).await?;
    store::enrollment::insert_contract(tx, contract).await?;
    store::events::insert_event(
        tx,
        &NewEvent::of(
            app,
            &Event::PlanAccepted {
                account_uuid: contract.account_uuid,
                location_uuid: location.uuid,
                plan_uuid: contract.plan_uuid,
                contract_uuid: contract.uuid,
                service_start_date: contract.start_date,
                accepted_by: contract.accepted_by.clone(),
            },
            now,
        ),
    )
    .await?;
    Ok(())
}

/// A plan acceptance as the request gave it, parsed.
pub struct AcceptPlan<'a> {
    pub app: &'a AppRow,
    pub account_uuid: Uuid,
    pub plan_uuid: Uuid,
    pub start: chrono::NaiveDate,
    /// `None`: a move-in when the date is early enough for a move-in only, else a switch.
    pub requested_type: Option<EnrollmentType>,
    /// `None`: the meter the plan was priced for, else the confirmed address's.
    pub esi_id: Option<EsiId>,
}

/// Why a plan acceptance was refused; nothing was written.
#[derive(Debug)]
pub enum AcceptPlanRefused {
    PlanNotFound,
    /// No ESI ID given, and neither the plan nor a confirmed address names one.
    EsiIdMissing,
    EsiIdInvalid,
    EsiIdNotFound,
    /// The plan was priced for another meter (or another utility's area).
    PricedForAnotherMeter,
    PlanExpired,
    AccountNotFound,
    StartDateOutOfRange(StartDateOutOfRange),
    AlreadyFinalized,
    PlanAlreadyAccepted,
}

/// What an accepted plan created.
pub struct PlanAccepted {
    pub location: LocationRow,
    pub contract: ContractRow,
}

/// Accepts a plan for a meter, in one transaction: the Location and its pending Contract
/// (`enrollment.plan_accepted`), the address confirmed when none was, the Letter of
/// Authorization e-mailed for a client agent enrollment, and the account's status refreshed
/// (the confirmed address may be a client agent enrollment's last prerequisite).
pub async fn accept_plan(
    state: &Core,
    input: &AcceptPlan<'_>,
) -> Result<PlanAccepted, Error<AcceptPlanRefused>> {
    let (account_uuid, app, start) = (input.account_uuid, input.app, input.start);
    let plan = store::market::plan_by_uuid(&state.db, input.plan_uuid)
        .await?
        .filter(|p| p.app_uuid == app.uuid)
        .filter(|p| p.account_uuid.is_none_or(|a| a == account_uuid))
        .ok_or(Refused(AcceptPlanRefused::PlanNotFound))?;
    // Without an ESI ID: the meter the plan was priced for, else the confirmed address's.
    let esi = match input.esi_id.clone() {
        Some(esi) => esi,
        None => {
            let fallback = match plan.esi_id.clone() {
                Some(esi) => Some(esi),
                None => store::enrollment::confirmed_address(&state.db, account_uuid)
                    .await?
                    .map(|a| a.esi_id),
            };
            let fallback = fallback.ok_or(Refused(AcceptPlanRefused::EsiIdMissing))?;
            EsiId::parse(&fallback).ok_or(Refused(AcceptPlanRefused::EsiIdInvalid))?
        }
    };
    let address = store::market::service_address(&state.db, esi.as_str())
        .await?
        .ok_or(Refused(AcceptPlanRefused::EsiIdNotFound))?;
    if plan.esi_id.as_deref().is_some_and(|p| p != esi.as_str()) || plan.tdu != address.tdu {
        return Err(Refused(AcceptPlanRefused::PricedForAnotherMeter));
    }
    let clock = state.clock.for_account(&state.db, account_uuid).await?;
    let now = clock.now();
    if plan.expires_at <= now {
        return Err(Refused(AcceptPlanRefused::PlanExpired));
    }
    let calendar = state.business_calendar().await?;
    let same_day = same_day_start_open(state, &plan.tdu, now, calendar).await?;
    let documents =
        crate::services::documents::render_contract_documents(state, app, &plan, &plan.tos_version)
            .await?;
    let mut tx = state.db.begin().await?;
    let account = store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid)
        .await?
        .ok_or(Refused(AcceptPlanRefused::AccountNotFound))?;
    let enroller = enroller(account.client_agent_accepted_at);
    let enrollment_type = check_start_date(
        start,
        (plan.earliest_start_date, plan.latest_start_date),
        clock.today(),
        enroller,
        input.requested_type,
        calendar,
        same_day,
    )
    .map_err(|range| Refused(AcceptPlanRefused::StartDateOutOfRange(range)))?;
    let finalized = store::enrollment::enrollment(&mut tx, account_uuid)
        .await?
        .map(|e| e.cancellation);
    // An acceptance that can no longer be finalized (its price expired, or its start date can
    // no longer be kept) gives way to this one.
    let pending_expired = pending_price_expired(&mut tx, account_uuid, now)
        .await?
        .is_some()
        || pending_start_passed(&mut tx, &account, &clock, calendar)
            .await?
            .is_some();
    match prior_acceptance(finalized, account.has_accepted_plan, pending_expired) {
        PriorAcceptance::Nothing => {}
        PriorAcceptance::Replace => {
            store::enrollment::discard_unstarted_acceptance(&mut tx, account_uuid).await?;
        }
        PriorAcceptance::AlreadyFinalized => {
            return Err(Refused(AcceptPlanRefused::AlreadyFinalized));
        }
        PriorAcceptance::PlanAlreadyAccepted => {
            return Err(Refused(AcceptPlanRefused::PlanAlreadyAccepted));
        }
    }
    let (location, contract) = new_location_and_contract(
        app.uuid,
        account_uuid,
        address,
        &plan,
        start,
        enrollment_type,
        accepted_by(enroller),
        now,
    )
    .map_err(|e| Failed(e.into()))?;
    record_plan_accepted(&mut tx, app.uuid, &location, &contract, now).await?;
    crate::services::documents::store_contract_documents(&mut tx, &contract, documents, now)
        .await?;
    let confirmed = store::enrollment::confirmed_address(&mut tx, account_uuid).await?;
    if acceptance_confirms_address(
        confirmed.as_ref().map(|a| a.esi_id.as_str()),
        &location.esi_id,
    ) {
        store::enrollment::insert_confirmed_address(
            &mut tx,
            account_uuid,
            &ConfirmedAddressRow {
                esi_id: location.esi_id.clone(),
                address_1: location.address_1.clone(),
                address_2: location.address_2.clone(),
                city: location.city.clone(),
                state: location.state.clone(),
                postal_code: location.postal_code.clone(),
                tdu: location.tdu.clone(),
            },
            now,
        )
        .await?;
    }
    if enroller == Enroller::ClientAgent {
        // The Letter of Authorization: the customer's record that the partner accepted for them.
        let profile = account.profile().map_err(|e| Failed(e.into()))?;
        let letter = LetterOfAuthorization {
            first_name: profile.first_name,
            last_name: profile.last_name,
            service_address: format!(
                "{}{}, {}, {} {}",
                location.address_1,
                location
                    .address_2
                    .as_deref()
                    .map(|a| format!(" {a}"))
                    .unwrap_or_default(),
                location.city,
                location.state,
                location.postal_code
            ),
            esi_id: location.esi_id.clone(),
            plan_name: plan.name.clone(),
            energy_cents_per_kwh: plan.energy_cents_per_kwh.clone(),
            term_months: plan.term_months,
            start_date: start,
            authorized_at: account.client_agent_accepted_at.unwrap_or(now),
            accepted_at: now,
        };
        let loa = crate::documents::loa::LoaDocument {
            brand_name: app.display_name.clone(),
            brand_color: app.primary_color.clone(),
            provider_name: state.config.provider.name.clone(),
            customer_name: format!("{} {}", letter.first_name, letter.last_name),
            service_address: letter.service_address.clone(),
            esi_id: letter.esi_id.clone(),
            plan_name: letter.plan_name.clone(),
            energy_cents_per_kwh: letter.energy_cents_per_kwh.clone(),
            term_months: letter.term_months,
            start_date: letter.start_date,
            authorized_at: letter.authorized_at,
            accepted_at: letter.accepted_at,
            cancel_contact: crate::documents::contacts(app)
                .first()
                .cloned()
                .unwrap_or_else(|| "reply to the e-mail that carried this letter".to_owned()),
        };
        crate::services::documents::store_loa(&mut tx, &contract, &loa, now).await?;
        mail::queue(
            &mut tx,
            &clock,
            &NewEmail {
                app_uuid: app.uuid,
                account_uuid: Some(account_uuid),
                to: &profile.email,
                template: &Template::LetterOfAuthorization(letter),
                brand: &Brand::of_app(app),
                send_at: None,
                event_on_send: None,
            },
        )
        .await?;
    }
    // The address this acceptance confirmed may be the last prerequisite of a client agent
    // enrollment.
    follow_up::refresh_status(&mut tx, &state.clock, app.uuid, account_uuid, now).await?;
    tx.commit().await?;
    Ok(PlanAccepted { location, contract })
}

/// Why the service address could not be confirmed.
#[derive(Debug)]
pub enum ConfirmAddressRefused {
    EsiIdNotFound,
}

/// Confirms the meter's service address from the address directory, in one transaction, and
/// refreshes the status (it may be a client agent enrollment's last prerequisite).
pub async fn confirm_address(
    state: &Core,
    app: Uuid,
    account: Uuid,
    esi: &EsiId,
) -> Result<(), Error<ConfirmAddressRefused>> {
    let address = store::market::service_address(&state.db, esi.as_str())
        .await?
        .ok_or(Refused(ConfirmAddressRefused::EsiIdNotFound))?;
    let now = state.clock.for_account(&state.db, account).await?.now();
    let mut tx = state.db.begin().await?;
    store::enrollment::insert_confirmed_address(&mut tx, account, &(&address).into(), now).await?;
    follow_up::refresh_status(&mut tx, &state.clock, app, account, now).await?;
    tx.commit().await?;
    Ok(())
}

/// Whether the utility `tdu` still starts a move-in today at `now`.
async fn same_day_start_open(
    state: &Core,
    tdu: &str,
    now: chrono::DateTime<chrono::Utc>,
    calendar: &BusinessCalendar,
) -> store::Result<bool> {
    let cutoff = store::market::tdu(&state.db, tdu)
        .await?
        .and_then(|t| parse_cutoff(t.same_day_cutoff.as_deref()));
    Ok(same_day_move_in(now, cutoff, calendar))
}
