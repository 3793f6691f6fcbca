//! What the customer portal's own pages read for a signed-in customer: usage over the last
//! twelve months and by day, the documents of every location (and one of them as a PDF), where
//! each location stands with its renewal, and whom to call. Every read is of the signed-in
//! account only: another account's location or document is `None` or refused, never shown.

use std::str::FromStr;

use chrono::{Datelike, NaiveDate};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::{
    documents::DocumentRefused,
    usage::{DailyUsage, UsageRefused},
    Error,
};
use crate::{
    domain::{
        documents::{contract_in_force, DocumentKind, LocationDocument},
        enrollment::{renewal_queued, renewal_window_open, ContractStatus, RENEWAL_WINDOW_DAYS},
        market::YRAC_VERSION,
        usage::{first_of_month, last_of_month},
    },
    state::Core,
    store::{
        self,
        enrollment::{ContractRow, LocationRow},
        market::TduRow,
    },
};

/// The first day of the month `back` months before `month`'s.
pub fn months_before(month: NaiveDate, back: u32) -> NaiveDate {
    let index = month.year() * 12 + month.month0() as i32 - back as i32;
    first_of_month(index.div_euclid(12), index.rem_euclid(12) as u32 + 1)
}

/// A location's usage as the portal charts it.
pub struct PortalUsage {
    pub location: LocationRow,
    /// Twelve months up to the latest with usage (or this month), oldest first, each by its
    /// first day with its consumption in kWh (zero when nothing was read).
    pub months: Vec<(NaiveDate, Decimal)>,
    /// The days of one month.
    pub daily: DailyUsage,
}

/// Usage of the account's location `location` (default: its first), with the days of `month`
/// (default: the latest month with usage). Another account's location is refused.
pub async fn usage(
    core: &Core,
    account: Uuid,
    location: Option<Uuid>,
    month: Option<(i32, u32)>,
) -> Result<Option<PortalUsage>, Error<UsageRefused>> {
    let locations = store::enrollment::locations_of_account(&core.db, account).await?;
    let location = match location {
        Some(uuid) => Some(
            locations
                .into_iter()
                .find(|l| l.uuid == uuid)
                .ok_or(Error::Refused(UsageRefused::LocationNotFound))?,
        ),
        None => locations.into_iter().next(),
    };
    let Some(location) = location else {
        return Ok(None);
    };
    let today = core.clock.for_account(&core.db, account).await?.today();
    let bounds = store::billing::usage_bounds(&core.db, location.uuid).await?;
    // The chart ends at the latest read, so that a customer between reads sees a full year.
    let latest = bounds.map_or(today, |(_, last)| last.min(today));
    let end = first_of_month(latest.year(), latest.month());
    let start = months_before(end, 11);
    let days = store::billing::usage_days(
        &core.db,
        location.uuid,
        start,
        last_of_month(end.year(), end.month()),
    )
    .await?;
    let months = (0..12)
        .rev()
        .map(|back| {
            let first = months_before(end, back);
            let total = days
                .iter()
                .filter(|d| d.day.year() == first.year() && d.day.month() == first.month())
                .map(|d| Decimal::from_str(&d.consumption_kwh).unwrap_or_default())
                .sum();
            (first, total)
        })
        .collect();
    let (year, month) = month.unwrap_or((end.year(), end.month()));
    let daily = super::usage::daily(core, account, location.uuid, Some(year), Some(month)).await?;
    Ok(Some(PortalUsage {
        location,
        months,
        daily,
    }))
}

/// The documents of each of the account's locations, newest contract's first.
pub async fn documents(
    core: &Core,
    account: Uuid,
) -> store::Result<Vec<(LocationRow, Vec<LocationDocument>)>> {
    let locations = store::enrollment::locations_of_account(&core.db, account).await?;
    let mut all = Vec::with_capacity(locations.len());
    for location in locations {
        let documents = super::enrollment::documents_of_location(
            &core.db,
            account,
            location.uuid,
            YRAC_VERSION,
        )
        .await?
        .map(|(_, d)| d)
        .unwrap_or_default();
        all.push((location, documents));
    }
    Ok(all)
}

/// One of the account's documents as a PDF (its file name without `.pdf`, and its bytes): as
/// accepted with its contract, or the notice as sent. Another account's is refused.
pub async fn document_pdf(
    core: &Core,
    account: Uuid,
    document: Uuid,
) -> Result<(String, Vec<u8>), Error<DocumentRefused>> {
    let found = documents(core, account)
        .await?
        .into_iter()
        .flat_map(|(_, d)| d)
        .find(|d| d.uuid == document)
        .ok_or(Error::Refused(DocumentRefused::NotFound))?;
    let name = format!(
        "{}-{}",
        found.kind.as_str().replace('_', "-"),
        found.effective_date
    );
    let bytes = match found.kind {
        DocumentKind::RenewalNotice => super::documents::notice_document(core, found.uuid).await?,
        kind => super::documents::contract_pdf(core, found.contract_uuid, kind).await?,
    };
    Ok((name, bytes))
}

/// Where a location stands with its renewal, on the account's clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenewalState {
    /// Inside the window: plans start the day after `end`.
    Open { end: NaiveDate },
    /// A fixed contract whose window opens on `opens`.
    Opens { opens: NaiveDate, end: NaiveDate },
    /// Month to month: a plan can start any day, from tomorrow.
    MonthToMonth,
    /// A renewal is accepted: the plan `plan` starts on `start`.
    Queued { plan: String, start: NaiveDate },
    /// No contract in force to renew (not enrolled yet, ended or cancelled).
    Nothing,
}

/// Where the renewal of a location stands, from its contracts, on `today`.
pub fn renewal_state(contracts: &[ContractRow], today: NaiveDate) -> RenewalState {
    let Some(current) = contract_in_force(contracts, |c| c.status, |c| c.start_date) else {
        return RenewalState::Nothing;
    };
    if current.status != ContractStatus::Active {
        return RenewalState::Nothing;
    }
    if renewal_queued(
        contracts,
        |c| c.status,
        |c| c.start_date,
        current.start_date,
    ) {
        if let Some(next) = contracts
            .iter()
            .filter(|c| c.status == ContractStatus::Pending && c.start_date > current.start_date)
            .min_by_key(|c| c.start_date)
        {
            return RenewalState::Queued {
                plan: next.plan_name.clone(),
                start: next.start_date,
            };
        }
    }
    match current.end_date {
        None => RenewalState::MonthToMonth,
        Some(end) if renewal_window_open(Some(end), today) => RenewalState::Open { end },
        Some(end) if today < end => RenewalState::Opens {
            opens: end - chrono::Duration::days(RENEWAL_WINDOW_DAYS),
            end,
        },
        Some(_) => RenewalState::Nothing,
    }
}

/// A location with its contract in force (by plan name and dates) and its renewal.
pub struct LocationRenewal {
    pub location: LocationRow,
    pub plan: Option<ContractRow>,
    pub state: RenewalState,
}

/// Each of the account's locations with where its renewal stands.
pub async fn renewals(core: &Core, account: Uuid) -> store::Result<Vec<LocationRenewal>> {
    let today = core.clock.for_account(&core.db, account).await?.today();
    let locations = store::enrollment::locations_of_account(&core.db, account).await?;
    let contracts = store::enrollment::contracts_of_account(&core.db, account).await?;
    Ok(locations
        .into_iter()
        .map(|location| {
            let own: Vec<ContractRow> = contracts
                .iter()
                .filter(|c| c.location_uuid == location.uuid)
                .cloned()
                .collect();
            let state = renewal_state(&own, today);
            let plan = contract_in_force(&own, |c| c.status, |c| c.start_date).cloned();
            LocationRenewal {
                location,
                plan,
                state,
            }
        })
        .collect())
}

/// The utility of each of the account's locations (outages, meters), once known.
pub async fn utilities(
    core: &Core,
    account: Uuid,
) -> store::Result<Vec<(LocationRow, Option<TduRow>)>> {
    let locations = store::enrollment::locations_of_account(&core.db, account).await?;
    let mut all = Vec::with_capacity(locations.len());
    for location in locations {
        let tdu = store::market::tdu(&core.db, &location.tdu).await?;
        all.push((location, tdu));
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn months_before_crosses_years() {
        assert_eq!(months_before(day(2027, 3, 1), 0), day(2027, 3, 1));
        assert_eq!(months_before(day(2027, 3, 1), 11), day(2026, 4, 1));
        assert_eq!(months_before(day(2027, 1, 1), 1), day(2026, 12, 1));
        assert_eq!(months_before(day(2027, 12, 1), 12), day(2026, 12, 1));
    }

    fn contract(status: ContractStatus, start: NaiveDate, end: Option<NaiveDate>) -> ContractRow {
        ContractRow {
            uuid: Uuid::new_v4(),
            location_uuid: Uuid::nil(),
            account_uuid: Uuid::nil(),
            plan_uuid: Uuid::nil(),
            plan_name: "Plan".to_owned(),
            plan_type: "fixed".to_owned(),
            term_months: 12,
            start_date: start,
            end_date: end,
            rates: "{}".to_owned(),
            tos_version: "1".to_owned(),
            status,
            accepted_at: chrono::Utc::now(),
            accepted_by: "customer".to_owned(),
            created_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn renewal_opens_ninety_days_before_the_end() {
        let end = day(2027, 12, 31);
        let c = [contract(ContractStatus::Active, day(2027, 1, 1), Some(end))];
        assert_eq!(
            renewal_state(&c, day(2027, 6, 1)),
            RenewalState::Opens {
                opens: day(2027, 10, 2),
                end
            }
        );
        assert_eq!(
            renewal_state(&c, day(2027, 10, 2)),
            RenewalState::Open { end }
        );
        let monthly = [contract(ContractStatus::Active, day(2027, 1, 1), None)];
        assert_eq!(
            renewal_state(&monthly, day(2027, 6, 1)),
            RenewalState::MonthToMonth
        );
        assert_eq!(renewal_state(&[], day(2027, 6, 1)), RenewalState::Nothing);
    }

    #[test]
    fn an_accepted_renewal_is_named_with_its_start() {
        let end = day(2027, 12, 31);
        let c = [
            contract(ContractStatus::Active, day(2027, 1, 1), Some(end)),
            contract(
                ContractStatus::Pending,
                day(2028, 1, 1),
                Some(day(2028, 12, 31)),
            ),
        ];
        assert_eq!(
            renewal_state(&c, day(2027, 11, 1)),
            RenewalState::Queued {
                plan: "Plan".to_owned(),
                start: day(2028, 1, 1)
            }
        );
    }
}
