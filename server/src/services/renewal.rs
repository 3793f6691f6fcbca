//! Renewing a location's fixed contract, on the account's clock. From 90 days before the
//! contract in force ends, renewal plans are priced as for a new customer, each starting the
//! day after that end (`request_renewal_plans`); accepting one queues a pending contract for
//! that day (`accept_renewal`), and on that day a job makes it active and ends the contract it
//! renews (`start_renewal`).
//!
//! A fixed contract put in force schedules its end (`follow_up::schedule_contract_end`): its
//! expiration notices (`send_notice`, 90, 60 and 30 days before the end for a year's term),
//! and the rollover onto the app's month-to-month plan the day after the end when nobody
//! renewed it (`roll_over`).

use crate::{
    clock::AccountClock,
    documents::{self, notice::NoticeDocument},
    domain::{
        documents::contract_in_force,
        enrollment::{
            accepted_by, check_renewal_from, enroller, renewal_eligible, renewal_queued,
            renewal_start, start_of_market_day, ContractStatus, LocationStatus, RenewalRefusal,
            StartDateOutOfRange,
        },
        events::Event,
        hosted::LinkPurpose,
        jobs::{ContractPayload, NoticePayload},
        renewal::{day_after_end, hosted_renewal_path, notice_due, rollover_due, ContractEnd},
    },
    mail::{
        self,
        templates::{Brand, MonthToMonthOffer, RenewalConfirmed, RenewalOffer, Template},
        NewEmail,
    },
    outbox::{self, Job},
    state::Core,
    store::{
        self,
        accounts::AccountRow,
        apps::AppRow,
        enrollment::{ContractRow, LocationRow},
        events::NewEvent,
        renewal::RenewalNoticeRow,
        Tx,
    },
};
use chrono::NaiveDate;
use uuid::Uuid;

use super::{
    enrollment::{location_with_contracts, new_contract},
    plans::{self, PlansRefused, PricedPlan},
    Error::{self, Failed, Refused},
};

/// Why a renewal was refused; nothing was written.
#[derive(Debug)]
pub enum RenewalRefused {
    LocationNotFound,
    /// No active fixed-term contract inside its renewal window.
    NotEligible,
    /// A renewal is already queued for the location.
    AlreadyAccepted,
    /// No plan of this app for this account has this id.
    PlanNotFound,
    /// The plan was priced for another meter (or another utility's area).
    PricedForAnotherMeter,
    PlanExpired,
    TermsNotAccepted,
    /// Renewals start on the day after the contract in force ends, and only then.
    StartDateOutOfRange(StartDateOutOfRange),
    /// Pricing refused the location's meter.
    Plans(PlansRefused),
}

impl From<RenewalRefusal> for RenewalRefused {
    fn from(why: RenewalRefusal) -> Self {
        match why {
            RenewalRefusal::NotEligible => RenewalRefused::NotEligible,
            RenewalRefusal::AlreadyAccepted => RenewalRefused::AlreadyAccepted,
            RenewalRefusal::TermsNotAccepted => RenewalRefused::TermsNotAccepted,
            RenewalRefusal::StartDateOutOfRange(range) => {
                RenewalRefused::StartDateOutOfRange(range)
            }
        }
    }
}

/// The contract in force among a location's contracts, with its status and end date as the
/// renewal rules read them.
fn in_force(contracts: &[ContractRow]) -> Option<&ContractRow> {
    contract_in_force(contracts, |c| c.status, |c| c.start_date)
}

fn terms(c: &ContractRow) -> (ContractStatus, Option<NaiveDate>) {
    (c.status, c.end_date)
}

/// Prices the renewal plans of a location inside its renewal window (each starting the day
/// after its contract ends) and announces them (`location.renewal_plan_requested`).
pub async fn request_renewal_plans(
    core: &Core,
    app: &AppRow,
    account: Uuid,
    location_uuid: Uuid,
) -> Result<Vec<PricedPlan>, Error<RenewalRefused>> {
    let (location, contracts) = location_with_contracts(&core.db, account, location_uuid)
        .await?
        .ok_or(Refused(RenewalRefused::LocationNotFound))?;
    let today = core.clock.for_account(&core.db, account).await?.today();
    let start = in_force(&contracts)
        .filter(|c| renewal_eligible(Some(terms(c)), today))
        .map(|c| renewal_start(c.end_date, today))
        .ok_or(Refused(RenewalRefused::NotEligible))?;
    let refused = |e| match e {
        Refused(why) => Refused(RenewalRefused::Plans(why)),
        Failed(e) => Failed(e),
    };
    let mut priced =
        plans::request_renewal_plans(core, app, account, location.uuid, &location.esi_id, start)
            .await
            .map_err(refused)?;
    // A renewing customer's own year of usage prices the plans, cheapest first.
    plans::estimate_for_home(core, account, &location, &mut priced)
        .await
        .map_err(refused)?;
    Ok(priced)
}

/// A renewal acceptance as the request gave it, parsed.
pub struct AcceptRenewal<'a> {
    pub app: &'a AppRow,
    pub account_uuid: Uuid,
    pub location_uuid: Uuid,
    pub plan_uuid: Uuid,
    /// None: the one day allowed.
    pub start: Option<NaiveDate>,
    pub terms_accepted: bool,
}

/// Accepts a renewal plan, in one transaction: a pending contract for the location from the
/// day after its contract in force ends, `location.renewal_plan_accepted`, and the job that
/// starts it on that day. Any plan of the app priced for the location's meter will do (a
/// renewal plan, or one the app priced for this account with its own terms). Returns the
/// queued contract.
pub async fn accept_renewal(
    core: &Core,
    input: &AcceptRenewal<'_>,
) -> Result<ContractRow, Error<RenewalRefused>> {
    let (app, account) = (input.app, input.account_uuid);
    let clock = core.clock.for_account(&core.db, account).await?;
    let now = clock.now();
    let plan = store::market::plan_by_uuid(&core.db, input.plan_uuid).await?;
    let documents = match &plan {
        Some(p) => {
            Some(super::documents::render_contract_documents(core, app, p, &p.tos_version).await?)
        }
        None => None,
    };
    let mut tx = core.db.begin().await?;
    // The account's lock first, so that of two acceptances racing the second sees the first.
    let account_row = store::accounts::account_of_app_for_update(&mut tx, app.uuid, account)
        .await?
        .ok_or(Refused(RenewalRefused::LocationNotFound))?;
    let location = store::enrollment::locations_of_account(&mut tx, account)
        .await?
        .into_iter()
        .find(|l| l.uuid == input.location_uuid)
        .ok_or(Refused(RenewalRefused::LocationNotFound))?;
    let mut contracts = store::enrollment::contracts_of_account(&mut tx, account).await?;
    contracts.retain(|c| c.location_uuid == location.uuid);
    let current = in_force(&contracts);
    let queued = current
        .is_some_and(|f| renewal_queued(&contracts, |c| c.status, |c| c.start_date, f.start_date));
    let start = check_renewal_from(
        current.map(terms),
        queued,
        clock.today(),
        input.start,
        input.terms_accepted,
    )
    .map_err(|why| Refused(why.into()))?;
    let plan = plan
        .filter(|p| p.app_uuid == app.uuid)
        .filter(|p| p.account_uuid.is_none_or(|a| a == account))
        .ok_or(Refused(RenewalRefused::PlanNotFound))?;
    if plan.esi_id.as_deref().is_some_and(|e| e != location.esi_id) || plan.tdu != location.tdu {
        return Err(Refused(RenewalRefused::PricedForAnotherMeter));
    }
    if plan.expires_at <= now {
        return Err(Refused(RenewalRefused::PlanExpired));
    }
    let by = accepted_by(enroller(account_row.client_agent_accepted_at));
    let contract = new_contract(location.uuid, account, &plan, start, by, now)
        .map_err(|e| Failed(e.into()))?;
    store::enrollment::insert_contract(&mut tx, &contract).await?;
    if let Some(documents) = documents {
        super::documents::store_contract_documents(&mut tx, &contract, documents, now).await?;
    }
    // The confirmation carries the copies of what was agreed.
    let attached = store::documents::unsent_documents_of_contract(&mut tx, contract.uuid).await?;
    let confirmation = Template::RenewalConfirmed(RenewalConfirmed {
        first_name: account_row.first_name.clone(),
        plan_name: contract.plan_name.clone(),
        term_months: (contract.plan_type != "month_to_month").then_some(contract.term_months),
        energy_cents_per_kwh: plan.energy_cents_per_kwh.clone(),
        start_date: contract.start_date,
        end_date: contract.end_date,
        attached: crate::domain::documents::titles_in_contract_order(&attached),
    });
    let email = mail::queue_to_account(&mut tx, &clock, app, &account_row, &confirmation).await?;
    store::documents::attach_contract_documents(&mut tx, contract.uuid, email).await?;
    store::events::insert_event(
        &mut tx,
        &NewEvent::of(
            app.uuid,
            &Event::RenewalPlanAccepted {
                account_uuid: account,
                location_uuid: location.uuid,
                plan_uuid: plan.uuid,
                contract_uuid: contract.uuid,
                service_start_date: start,
                accepted_by: by.to_owned(),
            },
            now,
        ),
    )
    .await?;
    outbox::enqueue(
        &mut tx,
        &clock,
        &Job::RenewalStart(ContractPayload {
            app_uuid: app.uuid,
            contract_uuid: contract.uuid,
        }),
        Some(account),
        start_of_market_day(start).max(now),
    )
    .await?;
    tx.commit().await?;
    Ok(contract)
}

/// A renewal's start date arrives, in `tx`: the queued contract becomes active (its own end
/// scheduled) and the location's contract it renews ends. Nothing happens to a renewal that
/// is no longer queued (the location was cancelled, or the enrollment deleted).
pub async fn start_renewal(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    account: Uuid,
    contract_uuid: Uuid,
) -> store::Result<()> {
    if store::accounts::account_of_app_for_update(tx, app, account)
        .await?
        .is_none()
    {
        return Ok(());
    }
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account).await?;
    let Some(renewal) = contracts.iter().find(|c| c.uuid == contract_uuid) else {
        return Ok(());
    };
    if !store::enrollment::set_status_of_contract(
        tx,
        renewal.uuid,
        ContractStatus::Pending,
        ContractStatus::Active,
    )
    .await?
    {
        return Ok(());
    }
    super::follow_up::schedule_contract_end(tx, clock, app, renewal).await?;
    for renewed in contracts
        .iter()
        .filter(|c| c.location_uuid == renewal.location_uuid && c.uuid != renewal.uuid)
    {
        let ended = store::enrollment::set_status_of_contract(
            tx,
            renewed.uuid,
            ContractStatus::Active,
            ContractStatus::Ended,
        )
        .await?;
        // A month-to-month contract had no end until the plan replacing it started.
        if ended && renewed.end_date.is_none() {
            let last_day = renewal.start_date - chrono::Duration::days(1);
            store::enrollment::set_contract_dates(
                tx,
                renewed.uuid,
                renewed.start_date,
                Some(last_day),
            )
            .await?;
        }
    }
    Ok(())
}

/// The account (locked for the change), a contract of it, its location and what decides
/// whether its end still needs a notice or a rollover; `None` when any of them is gone.
async fn contract_at_end(
    tx: &mut Tx,
    app: Uuid,
    account: Uuid,
    contract_uuid: Uuid,
) -> store::Result<Option<(AccountRow, ContractRow, LocationRow, ContractEnd)>> {
    let Some(account_row) = store::accounts::account_of_app_for_update(tx, app, account).await?
    else {
        return Ok(None);
    };
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account).await?;
    let Some(contract) = contracts.iter().find(|c| c.uuid == contract_uuid).cloned() else {
        return Ok(None);
    };
    let Some(location) = store::enrollment::locations_of_account(&mut *tx, account)
        .await?
        .into_iter()
        .find(|l| l.uuid == contract.location_uuid)
    else {
        return Ok(None);
    };
    let renewed = contracts.iter().any(|c| {
        c.location_uuid == contract.location_uuid
            && c.uuid != contract.uuid
            && c.status != ContractStatus::Cancelled
            && c.start_date > contract.start_date
    });
    let facts = ContractEnd {
        status: contract.status,
        renewed,
        location_cancelled: location.status == LocationStatus::Cancelled,
        leaving: location.final_service_date.is_some(),
    };
    Ok(Some((account_row, contract, location, facts)))
}

/// Where a notice sends the customer to renew: the account's `renewals_url` when the partner
/// set one, else the app's default renewal link (set in the dashboard), else this service's
/// hosted renewal page for the location.
pub fn renewal_url(core: &Core, app: &AppRow, account: &AccountRow, location: Uuid) -> String {
    account
        .renewals_url
        .clone()
        .or_else(|| app.renewals_url.clone())
        .unwrap_or_else(|| {
            format!(
                "{}{}",
                core.config.public_url(),
                hosted_renewal_path(&app.slug, location)
            )
        })
}

/// One expiration notice falls due, in `tx`. Unless the contract was renewed or ended, its
/// location is being left, or this notice already went out: the e-mail with the renewal link
/// (`renewal_url`), `location.renewal_email_sent` once it is sent, and the notice's record.
/// The final notice states the month-to-month plan the contract rolls onto, priced now and
/// kept for the rollover (`roll_over`), so the customer is told the rate they will pay.
pub async fn send_notice(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    account_uuid: Uuid,
    p: &NoticePayload,
) -> Result<(), Error<PlansRefused>> {
    let Some((account, contract, location, facts)) =
        contract_at_end(tx, p.app_uuid, account_uuid, p.contract_uuid).await?
    else {
        return Ok(());
    };
    let (Some(end), true) = (contract.end_date, notice_due(facts)) else {
        return Ok(());
    };
    if store::renewal::notices_of_contract(&mut *tx, contract.uuid)
        .await?
        .iter()
        .any(|n| n.days_before == p.days_before)
    {
        return Ok(());
    }
    let Some(app) = store::apps::app_by_uuid(&core.db, p.app_uuid).await? else {
        return Ok(());
    };
    let now = clock.now();
    let starts_on = day_after_end(end);
    let priced_for = plans::Offer {
        app: &app,
        account: &account,
        location_uuid: location.uuid,
        esi_id: &location.esi_id,
        start: starts_on,
    };
    let month_to_month = if p.is_final {
        super::plan_groups::ensure_month_to_month_group(tx, app.uuid, contract.uuid, now).await?;
        plans::month_to_month_plan(core, tx, priced_for).await?
    } else {
        None
    };
    // Every notice offers a fixed plan like the one ending, priced today and kept, so that its
    // EFL names a plan the customer can accept while its price holds.
    let offer = plans::renewal_offer_plan(core, priced_for, contract.term_months).await?;
    for plan in month_to_month.iter().chain(&offer) {
        store::market::insert_plan(tx, plan).await?;
    }
    let days_left = (end - clock.today()).num_days();
    // The notice (and its PDF, kept for good) names the lasting address; the e-mail's button is
    // a single-use link that opens the renewal flow already signed in, unless the partner
    // renews on its own site.
    let url = renewal_url(core, &app, &account, location.uuid);
    let button = match &account.renewals_url {
        Some(own) => own.clone(),
        None => {
            super::follow_up::email_link(
                tx,
                core,
                clock,
                app.uuid,
                account.uuid,
                LinkPurpose::Renewal,
                Some(&location.uuid.to_string()),
            )
            .await?
        }
    };
    let template = Template::RenewalReminder {
        first_name: account.first_name.clone(),
        contract_end: end,
        days_left,
        renewal_url: button,
        month_to_month: month_to_month.as_ref().map(|m| MonthToMonthOffer {
            plan_name: m.name.clone(),
            starts_on,
            energy_cents_per_kwh: m.energy_cents_per_kwh.clone(),
            base_charge_cents_per_month: m.base_charge_cents_per_month,
            average_1000: m.average_1000.clone(),
            efl_attached: true,
        }),
        offer: offer.as_ref().map(|o| RenewalOffer {
            plan_name: o.name.clone(),
            term_months: o.term_months,
            average_1000: o.average_1000.clone(),
            priced_on: clock.today(),
        }),
    };
    let email_uuid = mail::queue(
        tx,
        clock,
        &NewEmail {
            app_uuid: app.uuid,
            account_uuid: Some(account_uuid),
            to: &account.email,
            template: &template,
            brand: &Brand::of_app(&app),
            send_at: None,
            event_on_send: Some(Event::RenewalEmailSent {
                account_uuid,
                location_uuid: location.uuid,
                contract_end: end,
                days_left,
            }),
        },
    )
    .await?;
    let notice_uuid = Uuid::new_v4();
    store::renewal::insert_notice(
        tx,
        &RenewalNoticeRow {
            uuid: notice_uuid,
            contract_uuid: contract.uuid,
            account_uuid,
            location_uuid: location.uuid,
            days_before: p.days_before,
            contract_end: end,
            days_left,
            is_final: p.is_final,
            renewal_url: url.clone(),
            month_to_month_plan_uuid: month_to_month.as_ref().map(|m| m.uuid),
            email_uuid,
            created_at: now,
        },
    )
    .await?;
    // The notice as a PDF, kept and attached to the e-mail, with the offered plan's EFL; the
    // final one carries the month-to-month plan's EFL too.
    let utility = store::market::tdus(&core.db)
        .await?
        .into_iter()
        .find(|t| t.name == location.tdu)
        .map_or_else(|| location.tdu.clone(), |t| t.display_name);
    let document = NoticeDocument {
        brand_name: app.display_name.clone(),
        brand_color: app.primary_color.clone(),
        customer_name: format!("{} {}", account.first_name, account.last_name),
        service_address: location.one_line_address(),
        esi_id: location.esi_id.clone(),
        plan_name: contract.plan_name.clone(),
        contract_end: end,
        days_left,
        renewal_url: url,
        month_to_month: month_to_month
            .as_ref()
            .map(|m| documents::efl_document(&app, m, &utility, &core.config.provider)),
        offer: offer
            .as_ref()
            .map(|o| documents::efl_document(&app, o, &utility, &core.config.provider)),
    };
    super::documents::store_notice(tx, account_uuid, notice_uuid, email_uuid, &document, now)
        .await?;
    Ok(())
}

/// The day after a fixed contract ended, in `tx`: when nothing renewed it and the location
/// still has service, the location rolls onto the app's month-to-month plan under the same
/// Terms of Service (the plan the final notice stated, else priced now), in force from that
/// day, and the fixed contract ends. Billing then reads the new contract's rates for every day
/// from that day on. An app without a month-to-month group gets the platform's first
/// (`plan_groups::ensure_month_to_month_group`, in the audit log), so there is always a plan to
/// roll onto.
pub async fn roll_over(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    account_uuid: Uuid,
    p: &ContractPayload,
) -> Result<(), Error<PlansRefused>> {
    let Some((account, contract, location, facts)) =
        contract_at_end(tx, p.app_uuid, account_uuid, p.contract_uuid).await?
    else {
        return Ok(());
    };
    let (Some(end), true) = (contract.end_date, rollover_due(facts)) else {
        return Ok(());
    };
    let start = day_after_end(end);
    let Some(app) = store::apps::app_by_uuid(&core.db, p.app_uuid).await? else {
        return Ok(());
    };
    let offered = store::renewal::notices_of_contract(&mut *tx, contract.uuid)
        .await?
        .into_iter()
        .rev()
        .find_map(|n| n.month_to_month_plan_uuid);
    let plan = match offered {
        Some(uuid) => store::market::plan_by_uuid(&core.db, uuid).await?,
        None => {
            let offer = plans::Offer {
                app: &app,
                account: &account,
                location_uuid: location.uuid,
                esi_id: &location.esi_id,
                start,
            };
            super::plan_groups::ensure_month_to_month_group(
                tx,
                app.uuid,
                contract.uuid,
                clock.now(),
            )
            .await?;
            let plan = plans::month_to_month_plan(core, tx, offer).await?;
            if let Some(plan) = &plan {
                store::market::insert_plan(tx, plan).await?;
            }
            plan
        }
    };
    let Some(plan) = plan else {
        // The app has a month-to-month group, so only the meter's utility can be missing: the
        // job fails (and is retried) where the operator sees it, rather than leave the
        // contract running past its end unnoticed.
        return Err(Failed(anyhow::anyhow!(
            "no month-to-month plan could be priced for the meter {} of contract {}",
            location.esi_id,
            contract.uuid
        )));
    };
    let mut monthly = new_contract(
        location.uuid,
        account_uuid,
        &plan,
        start,
        &contract.accepted_by,
        clock.now(),
    )
    .map_err(|e| Failed(e.into()))?;
    // The customer agreed to these terms with the contract that ended; they carry on.
    monthly.tos_version = contract.tos_version.clone();
    monthly.status = ContractStatus::Active;
    store::enrollment::insert_contract(tx, &monthly).await?;
    let documents =
        super::documents::render_contract_documents(core, &app, &plan, &monthly.tos_version)
            .await?;
    super::documents::store_contract_documents(tx, &monthly, documents, clock.now()).await?;
    store::enrollment::set_status_of_contract(
        tx,
        contract.uuid,
        ContractStatus::Active,
        ContractStatus::Ended,
    )
    .await?;
    Ok(())
}
