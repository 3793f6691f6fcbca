//! Enrollment: the confirmed service address, locations and contracts (created together when a
//! plan is accepted), the enrollment's progress after finalize, and billing addresses.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};
use crate::domain::{
    enrollment::{ContractStatus, LocationStatus},
    jobs::JobKind,
    status::{Cancellation, UtilityState, VerificationState},
};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ConfirmedAddressRow {
    pub esi_id: String,
    pub address_1: String,
    pub address_2: Option<String>,
    pub city: String,
    pub state: String,
    pub postal_code: String,
    pub tdu: String,
}

impl From<&super::market::ServiceAddressRow> for ConfirmedAddressRow {
    /// The directory's address of a meter, as a confirmed service address.
    fn from(a: &super::market::ServiceAddressRow) -> Self {
        ConfirmedAddressRow {
            esi_id: a.esi_id.clone(),
            address_1: a.address_1.clone(),
            address_2: a.address_2.clone(),
            city: a.city.clone(),
            state: a.state.clone(),
            postal_code: a.postal_code.clone(),
            tdu: a.tdu.clone(),
        }
    }
}

pub async fn insert_confirmed_address(
    tx: &mut Tx,
    account_uuid: Uuid,
    a: &ConfirmedAddressRow,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO confirmed_addresses (uuid, account_uuid, esi_id, address_1, address_2, \
        city, state, postal_code, tdu, confirmed_at) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(Uuid::new_v4())
        .bind(account_uuid)
        .bind(&a.esi_id)
        .bind(&a.address_1)
        .bind(&a.address_2)
        .bind(&a.city)
        .bind(&a.state)
        .bind(&a.postal_code)
        .bind(&a.tdu)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

const CONFIRMED_LATEST: &str = "SELECT esi_id, address_1, address_2, city, state, postal_code, \
    tdu FROM confirmed_addresses WHERE account_uuid = $1 ORDER BY confirmed_at DESC, uuid DESC \
    LIMIT 1";

pub async fn confirmed_address(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Option<ConfirmedAddressRow>> {
    on_conn!(conn.into(), c => sqlx::query_as::<_, ConfirmedAddressRow>(CONFIRMED_LATEST)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct LocationRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub esi_id: String,
    pub address_1: String,
    pub address_2: Option<String>,
    pub city: String,
    pub state: String,
    pub postal_code: String,
    pub tdu: String,
    pub enrollment_type: String,
    pub status: LocationStatus,
    pub service_start_date: Option<NaiveDate>,
    pub final_service_date: Option<NaiveDate>,
    /// Stored: service started and has not ended (the utility serves the location for us).
    /// While it is disconnected for non-payment it stays true; partners read
    /// `is_service_active` as this and not `is_disconnected`.
    pub is_service_active: bool,
    pub has_usage_history: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Derived in the query: the utility disconnected it for non-payment and has not
    /// reconnected it yet.
    #[sqlx(default)]
    pub is_disconnected: bool,
}

impl LocationRow {
    /// Service is on: started, not ended, and not disconnected for non-payment.
    pub fn is_energized(&self) -> bool {
        self.is_service_active && !self.is_disconnected
    }

    /// The service address on one line, as a notice prints it (`address::one_line`).
    pub fn one_line_address(&self) -> String {
        crate::domain::address::one_line(
            &self.address_1,
            self.address_2.as_deref(),
            &self.city,
            &self.state,
            &self.postal_code,
        )
    }
}

/// A location whose power the utility cut for non-payment and has not restored: a notice
/// `disconnected`, or `reconnect_requested` after it was (`store::accounts` repeats it).
const DISCONNECTED: &str = "EXISTS (SELECT 1 FROM disconnections d \
    WHERE d.location_uuid = locations.uuid AND (d.status = 'disconnected' \
    OR (d.status = 'reconnect_requested' AND d.disconnected_at IS NOT NULL))) AS is_disconnected";

const LOCATION_COLUMNS: &str = "uuid, app_uuid, account_uuid, esi_id, address_1, address_2, \
    city, state, postal_code, tdu, enrollment_type, status, service_start_date, \
    final_service_date, is_service_active, has_usage_history, created_at, updated_at";

pub async fn insert_location(tx: &mut Tx, l: &LocationRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO locations ({LOCATION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
         $10, $11, $12, $13, $14, $15, $16, $17, $18)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(l.uuid)
        .bind(l.app_uuid)
        .bind(l.account_uuid)
        .bind(&l.esi_id)
        .bind(&l.address_1)
        .bind(&l.address_2)
        .bind(&l.city)
        .bind(&l.state)
        .bind(&l.postal_code)
        .bind(&l.tdu)
        .bind(&l.enrollment_type)
        .bind(l.status)
        .bind(l.service_start_date)
        .bind(l.final_service_date)
        .bind(l.is_service_active)
        .bind(l.has_usage_history)
        .bind(l.created_at)
        .bind(l.updated_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Writes a location's state (status, dates and flags).
pub async fn update_location(tx: &mut Tx, l: &LocationRow) -> Result<()> {
    let sql =
        "UPDATE locations SET status = $1, service_start_date = $2, final_service_date = $3, \
        is_service_active = $4, has_usage_history = $5, updated_at = $6 WHERE uuid = $7";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(l.status)
        .bind(l.service_start_date)
        .bind(l.final_service_date)
        .bind(l.is_service_active)
        .bind(l.has_usage_history)
        .bind(l.updated_at)
        .bind(l.uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

fn locations_of_account_sql() -> String {
    format!(
        "SELECT {LOCATION_COLUMNS}, {DISCONNECTED} FROM locations WHERE account_uuid = $1 \
         ORDER BY created_at, uuid"
    )
}

pub async fn locations_of_account(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Vec<LocationRow>> {
    let sql = locations_of_account_sql();
    on_conn!(conn.into(), c => sqlx::query_as::<_, LocationRow>(&sql).bind(account_uuid).fetch_all(c).await)
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ContractRow {
    pub uuid: Uuid,
    pub location_uuid: Uuid,
    pub account_uuid: Uuid,
    pub plan_uuid: Uuid,
    pub plan_name: String,
    pub plan_type: String,
    pub term_months: i64,
    pub start_date: NaiveDate,
    pub end_date: Option<NaiveDate>,
    /// JSON object of the Rates shape.
    pub rates: String,
    pub tos_version: String,
    pub status: ContractStatus,
    pub accepted_at: DateTime<Utc>,
    pub accepted_by: String,
    pub created_at: DateTime<Utc>,
}

const CONTRACT_COLUMNS: &str = "uuid, location_uuid, account_uuid, plan_uuid, plan_name, \
    plan_type, term_months, start_date, end_date, rates, tos_version, status, accepted_at, \
    accepted_by, created_at";

pub async fn insert_contract(tx: &mut Tx, k: &ContractRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO contracts ({CONTRACT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
         $10, $11, $12, $13, $14, $15)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(k.uuid)
        .bind(k.location_uuid)
        .bind(k.account_uuid)
        .bind(k.plan_uuid)
        .bind(&k.plan_name)
        .bind(&k.plan_type)
        .bind(k.term_months)
        .bind(k.start_date)
        .bind(k.end_date)
        .bind(&k.rates)
        .bind(&k.tos_version)
        .bind(k.status)
        .bind(k.accepted_at)
        .bind(&k.accepted_by)
        .bind(k.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Sets the status of an account's contracts that are in `from`.
pub async fn set_status_of_account_contracts(
    tx: &mut Tx,
    account_uuid: Uuid,
    from: ContractStatus,
    to: ContractStatus,
) -> Result<()> {
    let sql = "UPDATE contracts SET status = $1 WHERE account_uuid = $2 AND status = $3";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(to)
        .bind(account_uuid)
        .bind(from)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Sets one contract's status if it is still in `from`; whether it was.
pub async fn set_status_of_contract(
    tx: &mut Tx,
    uuid: Uuid,
    from: ContractStatus,
    to: ContractStatus,
) -> Result<bool> {
    let sql = "UPDATE contracts SET status = $1 WHERE uuid = $2 AND status = $3";
    let changed = on_tx!(tx, c => sqlx::query(sql)
        .bind(to)
        .bind(uuid)
        .bind(from)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(changed == 1)
}

/// Moves a contract's dates (sandbox demo data starts service in the past).
pub async fn set_contract_dates(
    tx: &mut Tx,
    uuid: Uuid,
    start: NaiveDate,
    end: Option<NaiveDate>,
) -> Result<()> {
    let sql = "UPDATE contracts SET start_date = $1, end_date = $2 WHERE uuid = $3";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(start)
        .bind(end)
        .bind(uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

fn contracts_of_account_sql() -> String {
    format!(
        "SELECT {CONTRACT_COLUMNS} FROM contracts WHERE account_uuid = $1 ORDER BY start_date, uuid"
    )
}

pub async fn contracts_of_account(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Vec<ContractRow>> {
    let sql = contracts_of_account_sql();
    on_conn!(conn.into(), c => sqlx::query_as::<_, ContractRow>(&sql).bind(account_uuid).fetch_all(c).await)
}

/// The location's contracts that bill its days (all but the cancelled), oldest first.
pub async fn billing_contracts_of_location(
    conn: impl Into<Conn<'_>>,
    location: &LocationRow,
) -> Result<Vec<ContractRow>> {
    let mut contracts = contracts_of_account(conn, location.account_uuid).await?;
    contracts.retain(|c| c.location_uuid == location.uuid && c.status != ContractStatus::Cancelled);
    Ok(contracts)
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EnrollmentRow {
    pub account_uuid: Uuid,
    pub finalized_at: DateTime<Utc>,
    pub is_client_agent: bool,
    pub verification: VerificationState,
    pub utility: UtilityState,
    pub cancellation: Option<Cancellation>,
    pub updated_at: DateTime<Utc>,
}

pub async fn insert_enrollment(tx: &mut Tx, e: &EnrollmentRow) -> Result<()> {
    let sql =
        "INSERT INTO enrollments (account_uuid, finalized_at, is_client_agent, verification, \
        utility, cancellation, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(e.account_uuid)
        .bind(e.finalized_at)
        .bind(e.is_client_agent)
        .bind(e.verification)
        .bind(e.utility)
        .bind(e.cancellation)
        .bind(e.updated_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

pub async fn update_enrollment(tx: &mut Tx, e: &EnrollmentRow) -> Result<()> {
    let sql = "UPDATE enrollments SET verification = $1, utility = $2, cancellation = $3, \
        updated_at = $4 WHERE account_uuid = $5";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(e.verification)
        .bind(e.utility)
        .bind(e.cancellation)
        .bind(e.updated_at)
        .bind(e.account_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

const ENROLLMENT_SELECT: &str = "SELECT account_uuid, finalized_at, is_client_agent, \
    verification, utility, cancellation, updated_at FROM enrollments WHERE account_uuid = $1";

pub async fn enrollment(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Option<EnrollmentRow>> {
    on_conn!(conn.into(), c => sqlx::query_as::<_, EnrollmentRow>(ENROLLMENT_SELECT)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct BillingAddressRow {
    pub same_as_service_address: bool,
    pub address_1: Option<String>,
    pub address_2: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub postal_code: Option<String>,
}

impl BillingAddressRow {
    /// Bills go to the service address.
    pub fn same_as_service_address() -> Self {
        BillingAddressRow {
            same_as_service_address: true,
            address_1: None,
            address_2: None,
            city: None,
            state: None,
            postal_code: None,
        }
    }
}

pub async fn insert_billing_address(
    tx: &mut Tx,
    account_uuid: Uuid,
    b: &BillingAddressRow,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO billing_addresses (uuid, account_uuid, same_as_service_address, \
        address_1, address_2, city, state, postal_code, created_at) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(Uuid::new_v4())
        .bind(account_uuid)
        .bind(b.same_as_service_address)
        .bind(&b.address_1)
        .bind(&b.address_2)
        .bind(&b.city)
        .bind(&b.state)
        .bind(&b.postal_code)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

pub async fn billing_address(db: &Db, account_uuid: Uuid) -> Result<Option<BillingAddressRow>> {
    let sql = "SELECT same_as_service_address, address_1, address_2, city, state, postal_code \
        FROM billing_addresses WHERE account_uuid = $1 ORDER BY created_at DESC, uuid DESC LIMIT 1";
    on_db!(db, c => sqlx::query_as::<_, BillingAddressRow>(sql)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)
}

/// One location of an account (`None` when it is another account's, or does not exist).
pub async fn location_of_account(
    db: &Db,
    account_uuid: Uuid,
    location_uuid: Uuid,
) -> Result<Option<LocationRow>> {
    let sql =
        format!("SELECT {LOCATION_COLUMNS}, {DISCONNECTED} FROM locations WHERE account_uuid = $1 AND uuid = $2");
    on_db!(db, c => sqlx::query_as::<_, LocationRow>(&sql)
        .bind(account_uuid)
        .bind(location_uuid)
        .fetch_optional(c)
        .await)
}

/// The job kinds of the enrollment pipeline up to service start.
pub const PIPELINE_JOB_KINDS: [&str; 4] = [
    JobKind::EnrollmentVerify.as_str(),
    JobKind::UtilitySubmit.as_str(),
    JobKind::UtilityAnswer.as_str(),
    JobKind::ServiceStart.as_str(),
];

/// Discards an acceptance that never started service and never will (its price expired): the
/// account's contracts, locations and enrollment go, its pipeline jobs still pending with
/// them; the documents stored with those contracts stay, detached, for the e-mails that carry
/// them. The account's confirmed address, identity, credit check and card stay. The caller
/// makes sure no service started (no location was ever active, so nothing was billed).
pub async fn discard_unstarted_acceptance(tx: &mut Tx, account_uuid: Uuid) -> Result<()> {
    for sql in [
        "UPDATE stored_documents SET contract_uuid = NULL \
            WHERE account_uuid = $1 AND contract_uuid IS NOT NULL",
        "DELETE FROM utility_submissions WHERE account_uuid = $1",
        "DELETE FROM contracts WHERE account_uuid = $1",
        "DELETE FROM locations WHERE account_uuid = $1",
        "DELETE FROM enrollments WHERE account_uuid = $1",
    ] {
        on_tx!(tx, c => sqlx::query(sql)
            .bind(account_uuid)
            .execute(c)
            .await
            .map(|r| r.rows_affected()))?;
    }
    drop_pending_jobs(tx, account_uuid, &PIPELINE_JOB_KINDS).await
}

/// Sandbox reset: deletes the account's invoices, payments, meter reads and usage, contracts, locations, enrollment, confirmed and billing
/// addresses, credit-check submissions and attached payment methods, and its enrollment
/// pipeline and credit jobs still pending, so that the account starts over from
/// `not_enrolled/unresolved`. With `discard_unstarted_acceptance`, the only places enrollment
/// rows are deleted.
pub async fn delete_enrollment_of_account(tx: &mut Tx, account_uuid: Uuid) -> Result<()> {
    super::billing::delete_billing_of_account(tx, account_uuid).await?;
    for sql in [
        "DELETE FROM utility_submissions WHERE account_uuid = $1",
        "DELETE FROM stored_documents WHERE account_uuid = $1",
        "DELETE FROM renewal_notices WHERE account_uuid = $1",
        "DELETE FROM contracts WHERE account_uuid = $1",
        "DELETE FROM locations WHERE account_uuid = $1",
        "DELETE FROM enrollments WHERE account_uuid = $1",
        "DELETE FROM confirmed_addresses WHERE account_uuid = $1",
        "DELETE FROM billing_addresses WHERE account_uuid = $1",
        "DELETE FROM deposits WHERE account_uuid = $1",
        "DELETE FROM credit_reviews WHERE account_uuid = $1",
        "DELETE FROM sandbox_credit_files WHERE credit_check_uuid IN \
            (SELECT uuid FROM credit_checks WHERE account_uuid = $1)",
        "DELETE FROM credit_checks WHERE account_uuid = $1",
        "DELETE FROM account_payment_methods WHERE account_uuid = $1",
    ] {
        on_tx!(tx, c => sqlx::query(sql)
            .bind(account_uuid)
            .execute(c)
            .await
            .map(|r| r.rows_affected()))?;
    }
    drop_pending_jobs(tx, account_uuid, &PIPELINE_JOB_KINDS).await?;
    drop_pending_jobs(
        tx,
        account_uuid,
        &[
            JobKind::ServiceEnd.as_str(),
            JobKind::RenewalStart.as_str(),
            JobKind::RenewalNotice.as_str(),
            JobKind::RenewalRollover.as_str(),
            "credit.check",
        ],
    )
    .await?;
    drop_pending_jobs(tx, account_uuid, &super::billing::BILLING_JOB_KINDS).await
}

/// Drops the account's queued jobs of these kinds.
pub async fn drop_pending_jobs(tx: &mut Tx, account_uuid: Uuid, kinds: &[&str]) -> Result<()> {
    let sql = "DELETE FROM jobs WHERE account_uuid = $1 AND state = 'queued' AND kind = $2";
    for kind in kinds {
        on_tx!(tx, c => sqlx::query(sql)
            .bind(account_uuid)
            .bind(*kind)
            .execute(c)
            .await
            .map(|r| r.rows_affected()))?;
    }
    Ok(())
}

/// One contract, by its id.
pub async fn contract_by_uuid(
    conn: impl Into<Conn<'_>>,
    uuid: Uuid,
) -> Result<Option<ContractRow>> {
    let sql = format!("SELECT {CONTRACT_COLUMNS} FROM contracts WHERE uuid = $1");
    on_conn!(conn.into(), c => sqlx::query_as::<_, ContractRow>(&sql).bind(uuid).fetch_optional(c).await)
}
