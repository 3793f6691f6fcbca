//! The market's tables: reference data (utilities, charges, ZIP codes, holidays, the wholesale
//! curve), the service-address directory, plan groups and priced plans.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TduRow {
    pub name: String,
    pub display_name: String,
    pub esi_id_length: i64,
    pub load_zone: String,
    pub phone: String,
    pub outage_phone: Option<String>,
    pub website: String,
    /// `HH:MM` market time; see `domain::market::same_day_move_in`.
    pub same_day_cutoff: Option<String>,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EsiPrefixRow {
    pub prefix: String,
    pub tdu: String,
    pub esi_id_length: i64,
    pub weight: i64,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TduChargesRow {
    pub fixed_cents_per_month: i64,
    pub cents_per_kwh: String,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ZipTduRow {
    pub postal_code: String,
    pub tdu: String,
    pub city: String,
    pub likelihood: i64,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct LoadZoneRow {
    pub name: String,
    pub wholesale_base_cents_per_kwh: String,
    pub wholesale_daily_spread_cents_per_kwh: String,
    pub market_margin_cents_per_kwh: String,
    pub market_base_charge_cents: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ServiceAddressRow {
    pub esi_id: String,
    pub address_1: String,
    pub address_2: Option<String>,
    pub city: String,
    pub state: String,
    pub postal_code: String,
    pub tdu: String,
    pub premise_type: String,
    pub status: String,
}

pub async fn tdus(db: &Db) -> Result<Vec<TduRow>> {
    let sql = "SELECT name, display_name, esi_id_length, load_zone, phone, outage_phone, website, \
        same_day_cutoff FROM tdus ORDER BY name";
    on_db!(db, c => sqlx::query_as::<_, TduRow>(sql).fetch_all(c).await)
}

/// The utility named `name`, read in the caller's transaction (or from the pool).
pub async fn tdu(conn: impl Into<Conn<'_>>, name: &str) -> Result<Option<TduRow>> {
    let sql = "SELECT name, display_name, esi_id_length, load_zone, phone, outage_phone, website, \
        same_day_cutoff FROM tdus WHERE name = $1";
    on_conn!(conn.into(), c => sqlx::query_as::<_, TduRow>(sql).bind(name).fetch_optional(c).await)
}

pub async fn esi_prefixes(db: &Db) -> Result<Vec<EsiPrefixRow>> {
    let sql = "SELECT p.prefix, p.tdu, t.esi_id_length, p.weight FROM tdu_esi_prefixes p \
        JOIN tdus t ON t.name = p.tdu ORDER BY p.prefix";
    on_db!(db, c => sqlx::query_as::<_, EsiPrefixRow>(sql).fetch_all(c).await)
}

/// The ESI ID prefixes, as the rules that recognize a meter's utility take them.
pub async fn esi_prefix_rules(db: &Db) -> Result<Vec<crate::domain::market::EsiPrefix>> {
    Ok(esi_prefixes(db)
        .await?
        .into_iter()
        .map(|p| crate::domain::market::EsiPrefix {
            prefix: p.prefix,
            tdu: p.tdu,
            esi_id_length: usize::try_from(p.esi_id_length).unwrap_or(0),
        })
        .collect())
}

const TDU_CHARGES_ON: &str = "SELECT fixed_cents_per_month, cents_per_kwh FROM tdu_charges \
    WHERE tdu = $1 AND effective_date <= $2 ORDER BY effective_date DESC LIMIT 1";

/// The delivery charges of `tdu` in effect on `date`.
pub async fn tdu_charges_on(
    conn: impl Into<Conn<'_>>,
    tdu: &str,
    date: NaiveDate,
) -> Result<Option<TduChargesRow>> {
    on_conn!(conn.into(), c => sqlx::query_as::<_, TduChargesRow>(TDU_CHARGES_ON).bind(tdu).bind(date)
        .fetch_optional(c).await)
}

/// The gross-receipts reimbursement of a city, percent (exact decimal); none for a place that
/// is not in the table (outside city limits).
pub async fn city_gross_receipts_percent(
    tx: &mut Tx,
    city: &str,
    state: &str,
) -> Result<Option<String>> {
    // The directory writes cities in capitals, the tax table as names are spelled.
    let sql = "SELECT gross_receipts_percent FROM cities WHERE lower(name) = lower($1) \
        AND state = $2";
    on_tx!(tx, c => sqlx::query_scalar::<_, String>(sql).bind(city).bind(state)
        .fetch_optional(c).await)
}

pub async fn zip_tdus(db: &Db, postal_code: &str) -> Result<Vec<ZipTduRow>> {
    let sql = "SELECT postal_code, tdu, city, likelihood FROM zip_tdus WHERE postal_code = $1 \
        ORDER BY likelihood DESC, tdu";
    on_db!(db, c => sqlx::query_as::<_, ZipTduRow>(sql).bind(postal_code).fetch_all(c).await)
}

pub async fn all_zip_tdus(db: &Db) -> Result<Vec<ZipTduRow>> {
    let sql = "SELECT postal_code, tdu, city, likelihood FROM zip_tdus ORDER BY postal_code, tdu";
    on_db!(db, c => sqlx::query_as::<_, ZipTduRow>(sql).fetch_all(c).await)
}

/// The market's holidays (its business calendar skips them with the weekends).
pub async fn federal_holidays(conn: impl Into<Conn<'_>>) -> Result<Vec<NaiveDate>> {
    let sql = "SELECT holiday_date FROM federal_holidays ORDER BY holiday_date";
    on_conn!(conn.into(), c => sqlx::query_scalar::<_, NaiveDate>(sql).fetch_all(c).await)
}

pub async fn load_zone(db: &Db, name: &str) -> Result<Option<LoadZoneRow>> {
    let sql = "SELECT name, wholesale_base_cents_per_kwh, wholesale_daily_spread_cents_per_kwh, \
        market_margin_cents_per_kwh, market_base_charge_cents FROM load_zones WHERE name = $1";
    on_db!(db, c => sqlx::query_as::<_, LoadZoneRow>(sql).bind(name).fetch_optional(c).await)
}

/// The monthly factors of the wholesale curve, January first.
pub async fn wholesale_seasonality(db: &Db) -> Result<Vec<(i64, String)>> {
    let sql = "SELECT month, factor FROM wholesale_seasonality ORDER BY month";
    on_db!(db, c => sqlx::query_as::<_, (i64, String)>(sql).fetch_all(c).await)
}

const ADDRESS_COLUMNS: &str =
    "esi_id, address_1, address_2, city, state, postal_code, tdu, premise_type, status";

pub async fn service_address(db: &Db, esi_id: &str) -> Result<Option<ServiceAddressRow>> {
    let sql = format!("SELECT {ADDRESS_COLUMNS} FROM service_addresses WHERE esi_id = $1");
    on_db!(db, c => sqlx::query_as::<_, ServiceAddressRow>(&sql).bind(esi_id)
        .fetch_optional(c).await)
}

/// The directory entries of these ESI IDs (in no particular order).
pub async fn service_addresses(db: &Db, esi_ids: &[String]) -> Result<Vec<ServiceAddressRow>> {
    if esi_ids.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders: Vec<String> = (1..=esi_ids.len()).map(|i| format!("${i}")).collect();
    let sql = format!(
        "SELECT {ADDRESS_COLUMNS} FROM service_addresses WHERE esi_id IN ({})",
        placeholders.join(", ")
    );
    on_db!(db, c => {
        let mut q = sqlx::query_as::<_, ServiceAddressRow>(&sql);
        for id in esi_ids {
            q = q.bind(id);
        }
        q.fetch_all(c).await
    })
}

pub async fn count_service_addresses(db: &Db) -> Result<i64> {
    on_db!(db, c => sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM service_addresses")
        .fetch_one(c).await)
}

/// A page of the directory in ESI ID order after `after` (keyset paging, for index builds).
pub async fn service_addresses_after(
    db: &Db,
    after: &str,
    limit: i64,
) -> Result<Vec<ServiceAddressRow>> {
    let sql = format!(
        "SELECT {ADDRESS_COLUMNS} FROM service_addresses WHERE esi_id > $1 \
         ORDER BY esi_id LIMIT $2"
    );
    on_db!(db, c => sqlx::query_as::<_, ServiceAddressRow>(&sql).bind(after).bind(limit)
        .fetch_all(c).await)
}

/// What the search index needs of an entry: ESI ID, street line, unit, ZIP.
pub type SearchEntry = (String, String, Option<String>, String);

/// A page of the directory's search fields in ESI ID order after `after` (keyset paging; only
/// the four columns the index keys on, which halves what a 7.5-million-row build decodes).
pub async fn search_entries_after(db: &Db, after: &str, limit: i64) -> Result<Vec<SearchEntry>> {
    let sql = "SELECT esi_id, address_1, address_2, postal_code FROM service_addresses \
        WHERE esi_id > $1 ORDER BY esi_id LIMIT $2";
    on_db!(db, c => sqlx::query_as::<_, SearchEntry>(sql).bind(after).bind(limit)
        .fetch_all(c).await)
}

/// Rows per INSERT: 9 parameters each stays far below both engines' parameter limits.
pub const ADDRESS_BATCH: usize = 500;

/// Writes directory entries; an existing ESI ID is replaced (`replace`) or kept. Returns how
/// many rows were written.
pub async fn upsert_service_addresses(
    tx: &mut Tx,
    rows: &[ServiceAddressRow],
    replace: bool,
) -> Result<u64> {
    let mut written = 0;
    for chunk in rows.chunks(ADDRESS_BATCH) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| {
                let b = i * 9;
                format!(
                    "(${}, ${}, ${}, ${}, ${}, ${}, ${}, ${}, ${})",
                    b + 1,
                    b + 2,
                    b + 3,
                    b + 4,
                    b + 5,
                    b + 6,
                    b + 7,
                    b + 8,
                    b + 9
                )
            })
            .collect();
        let conflict = if replace {
            "ON CONFLICT (esi_id) DO UPDATE SET address_1 = excluded.address_1, \
             address_2 = excluded.address_2, city = excluded.city, state = excluded.state, \
             postal_code = excluded.postal_code, tdu = excluded.tdu, \
             premise_type = excluded.premise_type, status = excluded.status"
        } else {
            "ON CONFLICT (esi_id) DO NOTHING"
        };
        let sql = format!(
            "INSERT INTO service_addresses ({ADDRESS_COLUMNS}) VALUES {} {conflict}",
            values.join(", ")
        );
        written += on_tx!(tx, c => {
            let mut q = sqlx::query(&sql);
            for r in chunk {
                q = q
                    .bind(&r.esi_id)
                    .bind(&r.address_1)
                    .bind(&r.address_2)
                    .bind(&r.city)
                    .bind(&r.state)
                    .bind(&r.postal_code)
                    .bind(&r.tdu)
                    .bind(&r.premise_type)
                    .bind(&r.status);
            }
            q.execute(c).await.map(|r| r.rows_affected())
        })?;
    }
    Ok(written)
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PlanGroupRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub name: String,
    pub plan_type: String,
    pub term_months: i64,
    pub base_charge_cents_per_month: i64,
    pub energy_margin_cents_per_kwh: String,
    pub partner_commission_cents_per_month: i64,
    pub solar_buyback_cents_per_kwh: String,
    pub early_termination_fee_cents: i64,
    pub renewable_percent: i64,
    pub tos_version: String,
    pub is_month_to_month_default: bool,
    pub position: i64,
    pub created_at: DateTime<Utc>,
    /// The number of the group's current version (1 when created; each edit adds one).
    pub version: i64,
}

const GROUP_COLUMNS: &str = "uuid, app_uuid, name, plan_type, term_months, \
    base_charge_cents_per_month, energy_margin_cents_per_kwh, partner_commission_cents_per_month, \
    solar_buyback_cents_per_kwh, early_termination_fee_cents, renewable_percent, tos_version, \
    is_month_to_month_default, position, created_at, version";

pub async fn insert_plan_group(tx: &mut Tx, g: &PlanGroupRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO plan_groups ({GROUP_COLUMNS}) VALUES \
         ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(g.uuid)
        .bind(g.app_uuid)
        .bind(&g.name)
        .bind(&g.plan_type)
        .bind(g.term_months)
        .bind(g.base_charge_cents_per_month)
        .bind(&g.energy_margin_cents_per_kwh)
        .bind(g.partner_commission_cents_per_month)
        .bind(&g.solar_buyback_cents_per_kwh)
        .bind(g.early_termination_fee_cents)
        .bind(g.renewable_percent)
        .bind(&g.tos_version)
        .bind(g.is_month_to_month_default)
        .bind(g.position)
        .bind(g.created_at)
        .bind(g.version)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The app's plan groups in its order, read in the caller's transaction (or from the pool).
pub async fn plan_groups_of_app(
    conn: impl Into<Conn<'_>>,
    app_uuid: Uuid,
) -> Result<Vec<PlanGroupRow>> {
    let sql = format!(
        "SELECT {GROUP_COLUMNS} FROM plan_groups WHERE app_uuid = $1 ORDER BY position, uuid"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, PlanGroupRow>(&sql).bind(app_uuid).fetch_all(c).await)
}

/// The plan group `uuid` of the app, read in the caller's transaction (or from the pool).
pub async fn plan_group_of_app(
    conn: impl Into<Conn<'_>>,
    app_uuid: Uuid,
    uuid: Uuid,
) -> Result<Option<PlanGroupRow>> {
    let sql = format!("SELECT {GROUP_COLUMNS} FROM plan_groups WHERE app_uuid = $1 AND uuid = $2");
    on_conn!(conn.into(), c => sqlx::query_as::<_, PlanGroupRow>(&sql).bind(app_uuid).bind(uuid)
        .fetch_optional(c).await)
}

/// Writes the group's values as its version `g.version`, if its current version is still
/// `expected` (someone else's edit since it was read changes nothing). Returns whether it did.
pub async fn update_plan_group(tx: &mut Tx, g: &PlanGroupRow, expected: i64) -> Result<bool> {
    let sql = "UPDATE plan_groups SET name = $1, plan_type = $2, term_months = $3, \
        base_charge_cents_per_month = $4, energy_margin_cents_per_kwh = $5, \
        partner_commission_cents_per_month = $6, solar_buyback_cents_per_kwh = $7, \
        early_termination_fee_cents = $8, renewable_percent = $9, tos_version = $10, \
        is_month_to_month_default = $11, position = $12, version = $13 \
        WHERE uuid = $14 AND app_uuid = $15 AND version = $16";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(&g.name)
        .bind(&g.plan_type)
        .bind(g.term_months)
        .bind(g.base_charge_cents_per_month)
        .bind(&g.energy_margin_cents_per_kwh)
        .bind(g.partner_commission_cents_per_month)
        .bind(&g.solar_buyback_cents_per_kwh)
        .bind(g.early_termination_fee_cents)
        .bind(g.renewable_percent)
        .bind(&g.tos_version)
        .bind(g.is_month_to_month_default)
        .bind(g.position)
        .bind(g.version)
        .bind(g.uuid)
        .bind(g.app_uuid)
        .bind(expected)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// One version of a plan group: its values then, who made it and when.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PlanGroupVersionRow {
    pub plan_group_uuid: Uuid,
    pub version: i64,
    pub name: String,
    pub plan_type: String,
    pub term_months: i64,
    pub base_charge_cents_per_month: i64,
    pub energy_margin_cents_per_kwh: String,
    pub partner_commission_cents_per_month: i64,
    pub solar_buyback_cents_per_kwh: String,
    pub early_termination_fee_cents: i64,
    pub renewable_percent: i64,
    pub tos_version: String,
    pub is_month_to_month_default: bool,
    pub position: i64,
    /// A user's e-mail, or `cli` / `system`.
    pub changed_by: String,
    pub changed_by_user_uuid: Option<Uuid>,
    pub created_at: DateTime<Utc>,
}

const VERSION_COLUMNS: &str = "plan_group_uuid, version, name, plan_type, term_months, \
    base_charge_cents_per_month, energy_margin_cents_per_kwh, partner_commission_cents_per_month, \
    solar_buyback_cents_per_kwh, early_termination_fee_cents, renewable_percent, tos_version, \
    is_month_to_month_default, position, changed_by, changed_by_user_uuid, created_at";

pub async fn insert_plan_group_version(tx: &mut Tx, v: &PlanGroupVersionRow) -> Result<()> {
    let placeholders: Vec<String> = (1..=17).map(|i| format!("${i}")).collect();
    let sql = format!(
        "INSERT INTO plan_group_versions ({VERSION_COLUMNS}) VALUES ({})",
        placeholders.join(", ")
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(v.plan_group_uuid)
        .bind(v.version)
        .bind(&v.name)
        .bind(&v.plan_type)
        .bind(v.term_months)
        .bind(v.base_charge_cents_per_month)
        .bind(&v.energy_margin_cents_per_kwh)
        .bind(v.partner_commission_cents_per_month)
        .bind(&v.solar_buyback_cents_per_kwh)
        .bind(v.early_termination_fee_cents)
        .bind(v.renewable_percent)
        .bind(&v.tos_version)
        .bind(v.is_month_to_month_default)
        .bind(v.position)
        .bind(&v.changed_by)
        .bind(v.changed_by_user_uuid)
        .bind(v.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Every version of a plan group, newest first.
pub async fn plan_group_versions(db: &Db, group_uuid: Uuid) -> Result<Vec<PlanGroupVersionRow>> {
    let sql = format!(
        "SELECT {VERSION_COLUMNS} FROM plan_group_versions WHERE plan_group_uuid = $1 \
         ORDER BY version DESC"
    );
    on_db!(db, c => sqlx::query_as::<_, PlanGroupVersionRow>(&sql).bind(group_uuid)
        .fetch_all(c).await)
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PlanRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub plan_group_uuid: Uuid,
    pub account_uuid: Option<Uuid>,
    pub is_custom: bool,
    pub esi_id: Option<String>,
    pub postal_code: Option<String>,
    pub tdu: String,
    pub name: String,
    pub plan_type: String,
    pub term_months: i64,
    pub earliest_start_date: NaiveDate,
    pub latest_start_date: NaiveDate,
    pub expires_at: DateTime<Utc>,
    pub energy_cents_per_kwh: String,
    pub base_charge_cents_per_month: i64,
    pub tdu_fixed_cents_per_month: i64,
    pub tdu_cents_per_kwh: String,
    pub solar_buyback_cents_per_kwh: String,
    pub early_termination_fee_cents: i64,
    pub partner_commission_cents_per_month: i64,
    pub renewable_percent: i64,
    pub wholesale_cents_per_kwh: String,
    pub average_500: String,
    pub average_1000: String,
    pub average_2000: String,
    pub tos_version: String,
    pub yrac_version: String,
    pub is_renewal: bool,
    pub created_at: DateTime<Utc>,
    /// The version of its plan group the plan was priced with.
    pub plan_group_version: i64,
}

const PLAN_COLUMNS: &str = "uuid, app_uuid, plan_group_uuid, account_uuid, is_custom, esi_id, \
    postal_code, tdu, name, plan_type, term_months, earliest_start_date, latest_start_date, \
    expires_at, energy_cents_per_kwh, base_charge_cents_per_month, tdu_fixed_cents_per_month, \
    tdu_cents_per_kwh, solar_buyback_cents_per_kwh, early_termination_fee_cents, \
    partner_commission_cents_per_month, renewable_percent, wholesale_cents_per_kwh, average_500, \
    average_1000, average_2000, tos_version, yrac_version, is_renewal, created_at, \
    plan_group_version";

pub async fn insert_plan(tx: &mut Tx, p: &PlanRow) -> Result<()> {
    let placeholders: Vec<String> = (1..=31).map(|i| format!("${i}")).collect();
    let sql = format!(
        "INSERT INTO plans ({PLAN_COLUMNS}) VALUES ({})",
        placeholders.join(", ")
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(p.uuid)
        .bind(p.app_uuid)
        .bind(p.plan_group_uuid)
        .bind(p.account_uuid)
        .bind(p.is_custom)
        .bind(&p.esi_id)
        .bind(&p.postal_code)
        .bind(&p.tdu)
        .bind(&p.name)
        .bind(&p.plan_type)
        .bind(p.term_months)
        .bind(p.earliest_start_date)
        .bind(p.latest_start_date)
        .bind(p.expires_at)
        .bind(&p.energy_cents_per_kwh)
        .bind(p.base_charge_cents_per_month)
        .bind(p.tdu_fixed_cents_per_month)
        .bind(&p.tdu_cents_per_kwh)
        .bind(&p.solar_buyback_cents_per_kwh)
        .bind(p.early_termination_fee_cents)
        .bind(p.partner_commission_cents_per_month)
        .bind(p.renewable_percent)
        .bind(&p.wholesale_cents_per_kwh)
        .bind(&p.average_500)
        .bind(&p.average_1000)
        .bind(&p.average_2000)
        .bind(&p.tos_version)
        .bind(&p.yrac_version)
        .bind(p.is_renewal)
        .bind(p.created_at)
        .bind(p.plan_group_version)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

pub async fn plan_by_uuid(db: &Db, uuid: Uuid) -> Result<Option<PlanRow>> {
    let sql = format!("SELECT {PLAN_COLUMNS} FROM plans WHERE uuid = $1");
    on_db!(db, c => sqlx::query_as::<_, PlanRow>(&sql).bind(uuid).fetch_optional(c).await)
}

/// `plan_by_uuid` inside a transaction: a use case holding a row lock must not wait for a
/// second connection of the pool, which concurrent requests holding theirs can exhaust.
pub async fn plan_by_uuid_in(tx: &mut Tx, uuid: Uuid) -> Result<Option<PlanRow>> {
    let sql = format!("SELECT {PLAN_COLUMNS} FROM plans WHERE uuid = $1");
    on_tx!(tx, c => sqlx::query_as::<_, PlanRow>(&sql).bind(uuid).fetch_optional(c).await)
}

pub async fn plans_of_account(db: &Db, account_uuid: Uuid) -> Result<Vec<PlanRow>> {
    let sql = format!(
        "SELECT {PLAN_COLUMNS} FROM plans WHERE account_uuid = $1 ORDER BY created_at, uuid"
    );
    on_db!(db, c => sqlx::query_as::<_, PlanRow>(&sql).bind(account_uuid).fetch_all(c).await)
}

/// Whether some plan group uses, or once used, this Terms of Service version (plans priced
/// before an edit keep linking to theirs).
pub async fn tos_version_exists(db: &Db, version: &str) -> Result<bool> {
    let sql = "SELECT (SELECT COUNT(*) FROM plan_groups WHERE tos_version = $1) \
        + (SELECT COUNT(*) FROM plan_group_versions WHERE tos_version = $2)";
    let n = on_db!(db, c => sqlx::query_scalar::<_, i64>(sql).bind(version).bind(version).fetch_one(c).await)?;
    Ok(n > 0)
}

/// Adds a delivery-charge schedule of `tdu` taking effect on `effective_date`.
pub async fn insert_tdu_charges(
    tx: &mut Tx,
    tdu: &str,
    effective_date: NaiveDate,
    fixed_cents_per_month: i64,
    cents_per_kwh: &str,
) -> Result<()> {
    let sql =
        "INSERT INTO tdu_charges (tdu, effective_date, fixed_cents_per_month, cents_per_kwh) \
        VALUES ($1, $2, $3, $4)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(tdu)
        .bind(effective_date)
        .bind(fixed_cents_per_month)
        .bind(cents_per_kwh)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}
