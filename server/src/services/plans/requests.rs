//! Pricing and storing plans with per-account terms (`enrollment.plan_requested`): where
//! plans are priced (a meter, or the utilities of a postal code), an app's plan requests, an
//! account's, and the renewal offer's plans.

use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::estimate::{estimate_for_typical_home, PricedPlan};
use super::{
    calendar, delivery_charges, directory_entry, group_terms, tdu_named, wholesale_curve,
    PlansRefused, Result,
};
use crate::services::Error::Refused;
use crate::{
    domain::{
        enrollment::StartDateOutOfRange,
        estimate::HomeSize,
        events::Event,
        market::{
            parse_cutoff, price_expires_at, same_day_move_in, start_window, RateCentsPerKwh,
            StartWindow, ZipCode, YRAC_VERSION,
        },
        pricing::{efl_averages, price_plan, GroupTerms, Overrides, PlanRates, PlanType},
        FieldError,
    },
    state::Core,
    store::{
        self,
        accounts::AccountRow,
        apps::AppRow,
        events::NewEvent,
        market::{PlanGroupRow, PlanRow, TduRow},
        Tx,
    },
};

/// Where plans are priced: the utilities, and the meter when known.
pub(super) struct Target {
    pub(super) tdus: Vec<TduRow>,
    pub(super) esi_id: Option<String>,
    pub(super) postal_code: Option<String>,
}

pub(super) async fn target_of_esi_id(core: &Core, raw: &str) -> Result<Target> {
    let entry = directory_entry(core, raw).await?;
    Ok(Target {
        tdus: vec![tdu_named(core, &entry.tdu).await?],
        esi_id: Some(entry.esi_id),
        postal_code: Some(entry.postal_code),
    })
}

pub(super) async fn target_of_postal_code(
    core: &Core,
    raw: &str,
    utility_name: Option<&str>,
) -> Result<Target> {
    let zip = ZipCode::parse("postal_code", raw)?;
    let rows = store::market::zip_tdus(&core.db, zip.as_str()).await?;
    if rows.is_empty() {
        return Err(Refused(PlansRefused::NotInRetailChoiceArea));
    }
    let all = store::market::tdus(&core.db).await?;
    let mut tdus: Vec<TduRow> = rows
        .iter()
        .filter_map(|r| all.iter().find(|t| t.name == r.tdu).cloned())
        .collect();
    if let Some(name) = utility_name {
        let name = name.trim().to_ascii_uppercase();
        if !all.iter().any(|t| t.name == name) {
            return Err(FieldError::invalid("utility", format!("unknown utility {name}")).into());
        }
        tdus.retain(|t| t.name == name);
        if tdus.is_empty() {
            return Err(Refused(PlansRefused::UtilityNotServingPostalCode));
        }
    }
    Ok(Target {
        tdus,
        esi_id: None,
        postal_code: Some(zip.as_str().to_owned()),
    })
}

/// The meter when an ESI ID is given, else the postal code's utilities; `missing` when neither.
pub(super) async fn target(
    core: &Core,
    esi_id: Option<&str>,
    postal_code: Option<&str>,
    utility: Option<&str>,
    missing: PlansRefused,
) -> Result<Target> {
    match (esi_id, postal_code) {
        (Some(esi), _) => target_of_esi_id(core, esi).await,
        (None, Some(zip)) => target_of_postal_code(core, zip, utility).await,
        (None, None) => Err(Refused(missing)),
    }
}

/// An app's plan request: for a meter or a postal code, optionally for one of its accounts,
/// with per-account terms (which need that account) and a start date.
pub struct AppPlanRequest<'a> {
    pub app: &'a AppRow,
    pub account_uuid: Option<Uuid>,
    pub esi_id: Option<&'a str>,
    pub postal_code: Option<&'a str>,
    /// Which of the postal code's utilities, when several serve it.
    pub utility: Option<&'a str>,
    pub plan_group_uuid: Option<Uuid>,
    pub overrides: Overrides,
    pub start: Option<NaiveDate>,
}

/// Prices and stores the plans of an app's request.
pub async fn app_request_plans(core: &Core, req: &AppPlanRequest<'_>) -> Result<Vec<PricedPlan>> {
    if req.overrides.is_custom() && req.account_uuid.is_none() {
        return Err(Refused(PlansRefused::CustomTermsWithoutAccount));
    }
    let account = match req.account_uuid {
        Some(uuid) => Some(
            store::accounts::account_of_app(&core.db, req.app.uuid, uuid)
                .await?
                .ok_or(Refused(PlansRefused::RequestedAccountNotFound))?,
        ),
        None => None,
    };
    let target = target(
        core,
        req.esi_id,
        req.postal_code,
        req.utility,
        PlansRefused::EsiIdOrPostalCodeMissing,
    )
    .await?;
    request_plans(
        core,
        PlanRequest {
            app: req.app,
            account: account.as_ref(),
            target,
            group: req.plan_group_uuid,
            overrides: req.overrides,
            start: req.start,
            renewal: None,
        },
    )
    .await
}

pub(super) async fn account_of(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
) -> Result<AccountRow> {
    store::accounts::account_of_app(&core.db, app.uuid, account_uuid)
        .await?
        .ok_or(Refused(PlansRefused::AccountNotFound))
}

/// Prices and stores the app's plans for one of its accounts at an ESI ID, each with its cost
/// over a typical year of a home of `home_size` there.
pub async fn app_request_account_plans(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    esi_id: Option<&str>,
    home_size: Option<&str>,
) -> Result<Vec<PricedPlan>> {
    let size = home_size_of(home_size)?;
    let account = account_of(core, app, account_uuid).await?;
    let esi = esi_id.ok_or(Refused(PlansRefused::EsiIdMissing))?;
    let mut plans = plans_at_meter(core, app, &account, esi, None).await?;
    estimate_for_typical_home(core, account_uuid, esi, size, &mut plans).await?;
    Ok(plans)
}

/// Prices and stores the plans an account may choose from (those of `plan_group` only, when
/// its session is bound to one) at an ESI ID, else at its confirmed service address, each with
/// its cost over a typical year of a home of `home_size` there.
pub async fn account_request_plans(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    esi_id: Option<&str>,
    plan_group: Option<Uuid>,
    home_size: Option<&str>,
) -> Result<Vec<PricedPlan>> {
    let size = home_size_of(home_size)?;
    let account = account_of(core, app, account_uuid).await?;
    let esi = match esi_id {
        Some(esi) => esi.to_owned(),
        None => store::enrollment::confirmed_address(&core.db, account_uuid)
            .await?
            .map(|a| a.esi_id)
            .ok_or(Refused(PlansRefused::EsiIdMissing))?,
    };
    let mut plans = plans_at_meter(core, app, &account, &esi, plan_group).await?;
    estimate_for_typical_home(core, account_uuid, &esi, size, &mut plans).await?;
    Ok(plans)
}

/// A request's `home_size`, checked before anything is priced.
pub(super) fn home_size_of(raw: Option<&str>) -> Result<Option<HomeSize>> {
    raw.map(|s| {
        HomeSize::parse(s).ok_or_else(|| {
            FieldError::invalid("home_size", "home_size must be small, medium or large").into()
        })
    })
    .transpose()
}

/// Prices and stores the app's plans for an account's meter, as `plans/request` does with no
/// start date (sandbox demo data picks one of them).
pub async fn price_account_plans(
    core: &Core,
    app: &AppRow,
    account: &AccountRow,
    esi_id: &str,
) -> Result<Vec<PricedPlan>> {
    plans_at_meter(core, app, account, esi_id, None).await
}

/// The app's plans (of `group`, when given) for an account's meter, with no start date.
pub(super) async fn plans_at_meter(
    core: &Core,
    app: &AppRow,
    account: &AccountRow,
    esi_id: &str,
    group: Option<Uuid>,
) -> Result<Vec<PricedPlan>> {
    let target = target_of_esi_id(core, esi_id).await?;
    request_plans(
        core,
        PlanRequest {
            app,
            account: Some(account),
            target,
            group,
            overrides: Overrides::default(),
            start: None,
            renewal: None,
        },
    )
    .await
}

/// Prices and stores the app's plans for renewing an account's location at its meter, with
/// the same model as a new customer's, each starting on `start` only (the day after the
/// contract in force ends), announced by `location.renewal_plan_requested`.
pub async fn request_renewal_plans(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    location_uuid: Uuid,
    esi_id: &str,
    start: NaiveDate,
) -> Result<Vec<PricedPlan>> {
    let account = account_of(core, app, account_uuid).await?;
    let target = target_of_esi_id(core, esi_id).await?;
    request_plans(
        core,
        PlanRequest {
            app,
            account: Some(&account),
            target,
            group: None,
            overrides: Overrides::default(),
            start: None,
            renewal: Some(Renewal {
                location_uuid,
                start,
            }),
        },
    )
    .await
}

/// The app's month-to-month plan for a location's meter from `start` (the day after a fixed
/// contract ends), priced today with the same model as a new customer's and not stored: what
/// a contract nobody renews rolls onto. Its group is the app's month-to-month default (else
/// its first month-to-month group); `None` when the app has none.
pub async fn month_to_month_plan(
    core: &Core,
    tx: &mut Tx,
    offer: Offer<'_>,
) -> Result<Option<PlanRow>> {
    // Read in the caller's transaction, which may have just added the group.
    let groups = store::market::plan_groups_of_app(&mut *tx, offer.app.uuid).await?;
    offer_of_groups(core, offer, groups, |groups| {
        let monthly = PlanType::MonthToMonth.as_str();
        groups
            .iter()
            .position(|g| g.is_month_to_month_default && g.plan_type == monthly)
            .or_else(|| groups.iter().position(|g| g.plan_type == monthly))
    })
    .await
}

/// A plan the account accepted, as it was offered: with its utility, and the earliest switch
/// date of the account's start window today. `None` when the plan is not the account's.
pub async fn accepted_plan(
    core: &Core,
    account: &AccountRow,
    plan_uuid: Uuid,
) -> Result<Option<PricedPlan>> {
    let Some(plan) = store::market::plan_by_uuid(&core.db, plan_uuid).await? else {
        return Ok(None);
    };
    if plan.account_uuid.is_some_and(|a| a != account.uuid) {
        return Ok(None);
    }
    let utility = tdu_named(core, &plan.tdu).await?;
    let today = core
        .clock
        .for_account(&core.db, account.uuid)
        .await?
        .today();
    let enroller = crate::domain::enrollment::enroller(account.client_agent_accepted_at);
    // Only the switch date is read here, which no same-day move-in changes.
    let window = start_window(today, enroller, calendar(core).await?, false);
    Ok(Some(PricedPlan {
        earliest_switch_start_date: window.earliest_switch.max(plan.earliest_start_date),
        plan,
        utility,
        estimate: None,
    }))
}

/// The fixed-rate plan an expiration notice offers for a location's meter from `start` (the
/// day after its contract ends), priced today with the same model as a new customer's and not
/// stored: the app's first fixed group with the term the customer has now, else its first
/// fixed group; `None` when the app has none.
pub async fn renewal_offer_plan(
    core: &Core,
    offer: Offer<'_>,
    term_months: i64,
) -> Result<Option<PlanRow>> {
    let groups = store::market::plan_groups_of_app(&core.db, offer.app.uuid).await?;
    offer_of_groups(core, offer, groups, |groups| {
        let fixed = PlanType::Fixed.as_str();
        groups
            .iter()
            .position(|g| g.plan_type == fixed && g.term_months == term_months)
            .or_else(|| groups.iter().position(|g| g.plan_type == fixed))
    })
    .await
}

/// Whom and what a renewal's single offer is priced for: a location's meter, from `start`.
#[derive(Clone, Copy)]
pub struct Offer<'a> {
    pub app: &'a AppRow,
    pub account: &'a AccountRow,
    pub location_uuid: Uuid,
    pub esi_id: &'a str,
    pub start: NaiveDate,
}

/// A plan of the group `pick` chooses among the app's `groups` (`None` when it chooses none)
/// for a location's meter from the offer's start, priced as a renewal is.
pub(super) async fn offer_of_groups(
    core: &Core,
    offer: Offer<'_>,
    groups: Vec<PlanGroupRow>,
    pick: impl FnOnce(&[PlanGroupRow]) -> Option<usize>,
) -> Result<Option<PlanRow>> {
    let Offer {
        app,
        account,
        location_uuid,
        esi_id,
        start,
    } = offer;
    let Some(group) = pick(&groups).and_then(|i| groups.get(i)) else {
        return Ok(None);
    };
    let clock = core.clock.for_account(&core.db, account.uuid).await?;
    let (now, today) = (clock.now(), clock.today());
    let target = target_of_esi_id(core, esi_id).await?;
    let Some(tdu) = target.tdus.first().cloned() else {
        return Ok(None);
    };
    let req = PlanRequest {
        app,
        account: Some(account),
        target,
        group: Some(group.uuid),
        overrides: Overrides::default(),
        start: Some(start),
        renewal: Some(Renewal {
            location_uuid,
            start,
        }),
    };
    let window = StartWindow {
        earliest: start,
        earliest_switch: start,
        latest: start,
    };
    let terms = group_terms(group)?;
    let charges = delivery_charges(core, &tdu.name, today).await?;
    let (curve, _, _) = wholesale_curve(core, &tdu.load_zone).await?;
    let wholesale = curve.price_for(terms.plan_type, today, start, terms.term_months);
    let rates = price_plan(&terms, &req.overrides, wholesale, &charges);
    let expires_at = price_expires_at(now, today, calendar(core).await?);
    Ok(Some(plan_row(
        &req, group, &terms, &tdu, &rates, wholesale, window, expires_at, now,
    )))
}

/// What makes a plan request a renewal's: the location it renews and the one day its plans
/// start.
#[derive(Clone, Copy)]
pub(super) struct Renewal {
    location_uuid: Uuid,
    start: NaiveDate,
}

pub(super) struct PlanRequest<'a> {
    app: &'a AppRow,
    account: Option<&'a AccountRow>,
    target: Target,
    group: Option<Uuid>,
    overrides: Overrides,
    start: Option<NaiveDate>,
    renewal: Option<Renewal>,
}

/// Prices the plans of a request, stores them and (for an account) emits
/// `enrollment.plan_requested`, all in one transaction.
pub(super) async fn request_plans(core: &Core, req: PlanRequest<'_>) -> Result<Vec<PricedPlan>> {
    // An account's plans are priced on the account's clock (a sandbox account lives in its own
    // time), so that accepting them, which reads that clock, sees the same day.
    let (now, today) = match req.account {
        Some(a) => {
            let clock = core.clock.for_account(&core.db, a.uuid).await?;
            (clock.now(), clock.today())
        }
        None => (core.clock.now(), core.clock.today()),
    };
    let cal = calendar(core).await?;
    let enroller =
        crate::domain::enrollment::enroller(req.account.and_then(|a| a.client_agent_accepted_at));
    // Each utility has its own window: some start a move-in the same day, until their cut-off.
    let window_of = |tdu: &TduRow| match req.renewal {
        Some(r) => StartWindow {
            earliest: r.start,
            earliest_switch: r.start,
            latest: r.start,
        },
        None => {
            let cutoff = parse_cutoff(tdu.same_day_cutoff.as_deref());
            start_window(today, enroller, cal, same_day_move_in(now, cutoff, cal))
        }
    };
    let windows: Vec<(&TduRow, StartWindow)> =
        req.target.tdus.iter().map(|t| (t, window_of(t))).collect();
    if let Some(start) = req.start {
        if !windows.iter().any(|(_, w)| w.allows(start)) {
            let earliest = windows.iter().map(|(_, w)| w.earliest).min();
            let latest = windows.iter().map(|(_, w)| w.latest).max();
            let next_day = start_window(today, enroller, cal, false);
            return Err(Refused(PlansRefused::StartDateOutOfRange(
                StartDateOutOfRange {
                    earliest: earliest.unwrap_or(next_day.earliest),
                    latest: latest.unwrap_or(next_day.latest),
                },
            )));
        }
    }
    let expires_at = price_expires_at(now, today, cal);
    let mut groups = store::market::plan_groups_of_app(&core.db, req.app.uuid).await?;
    if let Some(wanted) = req.group {
        groups.retain(|g| g.uuid == wanted);
        if groups.is_empty() {
            return Err(Refused(PlansRefused::PlanGroupNotFound));
        }
    }
    let mut priced = Vec::new();
    for (tdu, window) in windows {
        // Where a ZIP code is split, a utility that cannot start on the day asked for has no
        // plans for it.
        if req.start.is_some_and(|s| !window.allows(s)) {
            continue;
        }
        let start = req.start.unwrap_or(window.earliest_switch);
        let charges = delivery_charges(core, &tdu.name, today).await?;
        let (curve, _, _) = wholesale_curve(core, &tdu.load_zone).await?;
        for g in &groups {
            let terms = group_terms(g)?;
            let term = req.overrides.term_months.unwrap_or(terms.term_months);
            let wholesale = curve.price_for(terms.plan_type, today, start, term);
            let rates = price_plan(&terms, &req.overrides, wholesale, &charges);
            let plan = plan_row(
                &req, g, &terms, tdu, &rates, wholesale, window, expires_at, now,
            );
            priced.push(PricedPlan {
                earliest_switch_start_date: window.earliest_switch.max(plan.earliest_start_date),
                plan,
                utility: tdu.clone(),
                estimate: None,
            });
        }
    }
    let mut tx = core.db.begin().await?;
    for p in &priced {
        store::market::insert_plan(&mut tx, &p.plan).await?;
    }
    if let Some(account) = req.account {
        let plan_uuids = priced.iter().map(|p| p.plan.uuid).collect();
        let event = match req.renewal {
            Some(r) => Event::RenewalPlanRequested {
                account_uuid: account.uuid,
                location_uuid: r.location_uuid,
                plan_uuids,
            },
            None => Event::PlanRequested {
                account_uuid: account.uuid,
                esi_id: req.target.esi_id.clone(),
                postal_code: req.target.postal_code.clone(),
                plan_uuids,
                is_custom: req.overrides.is_custom(),
            },
        };
        store::events::insert_event(&mut tx, &NewEvent::of(req.app.uuid, &event, now)).await?;
    }
    tx.commit().await?;
    Ok(priced)
}

/// A priced plan's row: its own copy of what its group said when it was priced (name, type,
/// term, rates, fees, commission, Terms of Service) and of that group's version, so that a
/// later edit of the group changes no plan already priced, nor the contracts accepted with it.
#[allow(clippy::too_many_arguments)]
pub(super) fn plan_row(
    req: &PlanRequest<'_>,
    group: &PlanGroupRow,
    terms: &GroupTerms,
    tdu: &TduRow,
    rates: &PlanRates,
    wholesale: Decimal,
    window: StartWindow,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> PlanRow {
    let [a500, a1000, a2000] = efl_averages(rates);
    let wire = |d: Decimal| RateCentsPerKwh(d).to_wire();
    let custom = req.overrides.is_custom();
    PlanRow {
        uuid: Uuid::new_v4(),
        app_uuid: req.app.uuid,
        plan_group_uuid: group.uuid,
        account_uuid: req.account.map(|a| a.uuid),
        is_custom: custom,
        esi_id: req.target.esi_id.clone(),
        postal_code: req.target.postal_code.clone(),
        tdu: tdu.name.clone(),
        name: if custom {
            format!("{} (custom)", terms.name)
        } else {
            terms.name.clone()
        },
        plan_type: terms.plan_type.as_str().to_owned(),
        term_months: i64::from(rates.term_months),
        earliest_start_date: window.earliest,
        latest_start_date: window.latest,
        expires_at,
        energy_cents_per_kwh: wire(rates.energy_cents_per_kwh),
        base_charge_cents_per_month: rates.base_charge_cents_per_month,
        tdu_fixed_cents_per_month: rates.tdu_fixed_cents_per_month,
        tdu_cents_per_kwh: wire(rates.tdu_cents_per_kwh),
        solar_buyback_cents_per_kwh: wire(rates.solar_buyback_cents_per_kwh),
        early_termination_fee_cents: rates.early_termination_fee_cents,
        partner_commission_cents_per_month: rates.partner_commission_cents_per_month,
        renewable_percent: i64::from(terms.renewable_percent),
        wholesale_cents_per_kwh: wire(wholesale),
        average_500: wire(a500),
        average_1000: wire(a1000),
        average_2000: wire(a2000),
        tos_version: terms.tos_version.clone(),
        yrac_version: YRAC_VERSION.to_owned(),
        is_renewal: req.renewal.is_some(),
        created_at: now,
        plan_group_version: group.version,
    }
}
