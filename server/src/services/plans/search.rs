//! Whether a place is open to retail choice, and the directory's searches: type-ahead, full
//! address and ESI ID.

use super::{broken, directory_entry, Result};
use crate::services::Error::Failed;
use crate::{
    domain::{
        address::{normalize, normalize_unit},
        market::{eligibility as retail_choice, state_in_market, ZipCode},
    },
    state::Core,
    store::{
        self,
        market::{ServiceAddressRow, TduRow},
    },
};

/// How likely a place is open to retail choice, and the utilities that may serve it.
pub struct EligibilityFound {
    pub likelihood: u8,
    pub utilities: Vec<TduRow>,
}

/// Eligibility of a postal code, or of a full address when `address_1` is given: an address
/// found in the directory is certain (`domain::market::eligibility`).
pub async fn eligibility(
    core: &Core,
    zip: &ZipCode,
    address_1: Option<&str>,
    address_2: Option<&str>,
) -> Result<EligibilityFound> {
    let tdus = store::market::tdus(&core.db).await?;
    let mut found = None;
    if let Some(address_1) = address_1.filter(|a| !a.trim().is_empty()) {
        let matches = exact_matches(core, address_1, address_2, None, zip).await?;
        found = matches.into_iter().next().map(|r| r.tdu);
    }
    let zip_rows = match found {
        Some(_) => Vec::new(),
        None => store::market::zip_tdus(&core.db, zip.as_str()).await?,
    };
    let shares: Vec<(&str, i64)> = zip_rows
        .iter()
        .map(|r| (r.tdu.as_str(), r.likelihood))
        .collect();
    let choice = retail_choice(found.as_deref(), &shares);
    Ok(EligibilityFound {
        likelihood: choice.likelihood,
        utilities: choice
            .tdus
            .iter()
            .filter_map(|name| tdus.iter().find(|t| t.name == *name).cloned())
            .collect(),
    })
}

/// A directory entry with its utility (`None` when the reference data lacks it).
pub struct FoundAddress {
    pub address: ServiceAddressRow,
    pub utility: Option<TduRow>,
}

pub(super) async fn with_utilities(
    core: &Core,
    rows: Vec<ServiceAddressRow>,
) -> Result<Vec<FoundAddress>> {
    let tdus = store::market::tdus(&core.db).await?;
    Ok(rows
        .into_iter()
        .map(|address| FoundAddress {
            utility: tdus.iter().find(|t| t.name == address.tdu).cloned(),
            address,
        })
        .collect())
}

/// Rows of these ESI IDs, in this order.
pub(super) async fn rows_in_order(
    core: &Core,
    esi_ids: Vec<String>,
) -> Result<Vec<ServiceAddressRow>> {
    let mut rows = store::market::service_addresses(&core.db, &esi_ids).await?;
    rows.sort_by_key(|r| esi_ids.iter().position(|e| *e == r.esi_id));
    Ok(rows)
}

/// Up to `limit` directory entries whose address begins with `query` (or is within a typo of
/// it), in the index's order.
pub async fn type_ahead(
    core: &Core,
    query: String,
    zip: Option<ZipCode>,
    limit: u32,
) -> Result<Vec<FoundAddress>> {
    let index = core.adapters.index();
    let hits = tokio::task::spawn_blocking(move || {
        index.type_ahead(&query, zip.as_ref().map(ZipCode::as_str), limit as usize)
    })
    .await
    .map_err(|e| Failed(e.into()))?;
    let rows = rows_in_order(core, hits.into_iter().map(|h| h.esi_id).collect()).await?;
    with_utilities(core, rows).await
}

/// Directory entries at exactly this address after normalization.
pub(super) async fn exact_matches(
    core: &Core,
    address_1: &str,
    address_2: Option<&str>,
    city: Option<&str>,
    zip: &ZipCode,
) -> Result<Vec<ServiceAddressRow>> {
    let street = normalize(address_1);
    let unit = address_2.map(normalize_unit).filter(|u| !u.is_empty());
    let index = core.adapters.index();
    let zip_text = zip.as_str().to_owned();
    let hits = tokio::task::spawn_blocking(move || {
        index
            .street(&street, unit.as_deref())
            .into_iter()
            .filter(|h| h.postal_code == zip_text)
            .map(|h| h.esi_id)
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| Failed(e.into()))?;
    let city = city.map(normalize).filter(|c| !c.is_empty());
    let mut rows = rows_in_order(core, hits).await?;
    rows.retain(|r| city.as_ref().is_none_or(|c| normalize(&r.city) == *c));
    rows.sort_by(|a, b| (&a.address_2, &a.esi_id).cmp(&(&b.address_2, &b.esi_id)));
    Ok(rows)
}

/// A full address as a search gives it.
pub struct FullAddress<'a> {
    pub address_1: &'a str,
    pub address_2: Option<&'a str>,
    pub city: Option<&'a str>,
    pub state: Option<&'a str>,
    pub postal_code: &'a ZipCode,
}

/// The directory entries at exactly this address (one per meter); none outside the market.
pub async fn full_address_search(core: &Core, a: &FullAddress<'_>) -> Result<Vec<FoundAddress>> {
    if !state_in_market(a.state) {
        return Ok(Vec::new());
    }
    let rows = exact_matches(core, a.address_1, a.address_2, a.city, a.postal_code).await?;
    with_utilities(core, rows).await
}

/// The address of an ESI ID.
pub async fn esi_id_search(core: &Core, raw: &str) -> Result<FoundAddress> {
    let row = directory_entry(core, raw).await?;
    with_utilities(core, vec![row])
        .await?
        .pop()
        .ok_or_else(|| broken("address vanished"))
}
