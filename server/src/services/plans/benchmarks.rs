//! Benchmarks: each plan group's average price beside the market's at the EFL usages.

use rust_decimal::Decimal;
use uuid::Uuid;

use super::requests::target;
use super::{
    broken, calendar, delivery_charges, group_terms, wholesale_curve, PlansRefused, Result,
};
use crate::{
    domain::{
        market::{start_window, Enroller},
        pricing::{efl_averages, market_plan, price_plan, GroupTerms, Overrides, EFL_USAGES_KWH},
    },
    state::Core,
    store::{self, apps::AppRow, market::TduRow},
};

/// One plan group's average price beside the market's, at one EFL usage.
pub struct BenchmarkRow {
    pub usage_kwh: u32,
    pub market_cents_per_kwh: Decimal,
    pub plan_group_uuid: Uuid,
    pub plan_cents_per_kwh: Decimal,
}

/// How the app's plans compare with the market's typical plan in one utility's area.
pub struct Benchmarks {
    pub utility: TduRow,
    pub rows: Vec<BenchmarkRow>,
}

/// Prices the market's typical plan and each of the app's plan groups (nothing stored) at an
/// ESI ID, or at a postal code's first utility, and compares their EFL averages.
pub async fn benchmarks(
    core: &Core,
    app: &AppRow,
    esi_id: Option<&str>,
    postal_code: Option<&str>,
) -> Result<Benchmarks> {
    let target = target(core, esi_id, postal_code, None, PlansRefused::EsiIdMissing).await?;
    let Some(tdu) = target.tdus.into_iter().next() else {
        return Err(broken("no utility"));
    };
    let today = core.clock.today();
    let cal = calendar(core).await?;
    let start = start_window(today, Enroller::Customer, cal, false).earliest_switch;
    let charges = delivery_charges(core, &tdu.name, today).await?;
    let (curve, market_margin, market_base) = wholesale_curve(core, &tdu.load_zone).await?;
    let averages = |terms: &GroupTerms| {
        let wholesale = curve.price_for(terms.plan_type, today, start, terms.term_months);
        efl_averages(&price_plan(
            terms,
            &Overrides::default(),
            wholesale,
            &charges,
        ))
    };
    let market = averages(&market_plan(market_margin, market_base));
    let mut rows = Vec::new();
    for g in store::market::plan_groups_of_app(&core.db, app.uuid).await? {
        let plan = averages(&group_terms(&g)?);
        for (i, usage_kwh) in EFL_USAGES_KWH.into_iter().enumerate() {
            rows.push(BenchmarkRow {
                usage_kwh,
                market_cents_per_kwh: market[i],
                plan_group_uuid: g.uuid,
                plan_cents_per_kwh: plan[i],
            });
        }
    }
    Ok(Benchmarks { utility: tdu, rows })
}
