//! Accounts, their status history and their AccountTokens.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{on_db, on_tx, Db, Result, Tx};
use crate::domain::{
    account::Profile,
    status::{AccountStatus, StatusReason},
};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AccountRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub account_number: String,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub phone: Option<String>,
    pub date_of_birth: Option<NaiveDate>,
    /// JSON object of the address fields.
    pub preliminary_address: Option<String>,
    pub renewals_url: Option<String>,
    /// JSON object of strings.
    pub metadata: String,
    pub status: AccountStatus,
    pub status_reason: StatusReason,
    pub client_agent_accepted_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Derived in the query: a payment method is attached.
    #[sqlx(default)]
    pub has_payment_method: bool,
    /// Derived in the query: an SSN was submitted with consent.
    #[sqlx(default)]
    pub has_credit_check: bool,
    /// Derived in the query: a service address was confirmed.
    #[sqlx(default)]
    pub has_confirmed_address: bool,
    /// Derived in the query: a contract is pending or active.
    #[sqlx(default)]
    pub has_accepted_plan: bool,
    /// Derived in the query: the enrollment was finalized.
    #[sqlx(default)]
    pub is_enrollment_finalized: bool,
    /// Derived in the query: identity verification passed (after finalize).
    #[sqlx(default)]
    pub is_identity_verified: bool,
    /// Derived in the query: a billing address was given.
    #[sqlx(default)]
    pub is_billing_address_confirmed: bool,
    /// Derived in the query: a location has active service (started, not ended, and not
    /// disconnected for non-payment: `LocationRow::is_energized`).
    #[sqlx(default)]
    pub is_service_active: bool,
}

const COLUMNS: &str = "uuid, app_uuid, account_number, email, first_name, last_name, phone, \
    date_of_birth, preliminary_address, renewals_url, metadata, status, status_reason, \
    client_agent_accepted_at, created_at, updated_at";

/// `COLUMNS` plus the facts derived from other tables.
const SELECT_COLUMNS: &str = "uuid, app_uuid, account_number, email, first_name, last_name, \
    phone, date_of_birth, preliminary_address, renewals_url, metadata, status, status_reason, \
    client_agent_accepted_at, created_at, updated_at, \
    EXISTS (SELECT 1 FROM account_payment_methods p \
        WHERE p.account_uuid = accounts.uuid AND p.detached_at IS NULL) AS has_payment_method, \
    EXISTS (SELECT 1 FROM credit_checks k WHERE k.account_uuid = accounts.uuid) \
        AS has_credit_check, \
    EXISTS (SELECT 1 FROM confirmed_addresses ca WHERE ca.account_uuid = accounts.uuid) \
        AS has_confirmed_address, \
    EXISTS (SELECT 1 FROM contracts ct WHERE ct.account_uuid = accounts.uuid \
        AND ct.status IN ('pending', 'active')) AS has_accepted_plan, \
    EXISTS (SELECT 1 FROM enrollments e WHERE e.account_uuid = accounts.uuid) \
        AS is_enrollment_finalized, \
    EXISTS (SELECT 1 FROM enrollments e WHERE e.account_uuid = accounts.uuid \
        AND e.verification = 'passed') AS is_identity_verified, \
    EXISTS (SELECT 1 FROM billing_addresses b WHERE b.account_uuid = accounts.uuid) \
        AS is_billing_address_confirmed, \
    EXISTS (SELECT 1 FROM locations l WHERE l.account_uuid = accounts.uuid \
        AND l.is_service_active AND NOT EXISTS (SELECT 1 FROM disconnections d \
        WHERE d.location_uuid = l.uuid AND (d.status = 'disconnected' \
        OR (d.status = 'reconnect_requested' AND d.disconnected_at IS NOT NULL)))) \
        AS is_service_active";

pub async fn insert_account(tx: &mut Tx, a: &AccountRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO accounts ({COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(a.uuid)
        .bind(a.app_uuid)
        .bind(&a.account_number)
        .bind(&a.email)
        .bind(&a.first_name)
        .bind(&a.last_name)
        .bind(&a.phone)
        .bind(a.date_of_birth)
        .bind(&a.preliminary_address)
        .bind(&a.renewals_url)
        .bind(&a.metadata)
        .bind(a.status)
        .bind(a.status_reason)
        .bind(a.client_agent_accepted_at)
        .bind(a.created_at)
        .bind(a.updated_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Writes the fields a PATCH may change.
pub async fn update_account(tx: &mut Tx, a: &AccountRow) -> Result<()> {
    let sql = "UPDATE accounts SET email = $1, first_name = $2, last_name = $3, phone = $4, \
        date_of_birth = $5, preliminary_address = $6, renewals_url = $7, metadata = $8, \
        updated_at = $9 WHERE uuid = $10";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(&a.email)
        .bind(&a.first_name)
        .bind(&a.last_name)
        .bind(&a.phone)
        .bind(a.date_of_birth)
        .bind(&a.preliminary_address)
        .bind(&a.renewals_url)
        .bind(&a.metadata)
        .bind(a.updated_at)
        .bind(a.uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The account, whichever app it belongs to: for signed links, which carry no token.
pub async fn account_by_uuid(db: &Db, uuid: Uuid) -> Result<Option<AccountRow>> {
    let sql = format!("SELECT {SELECT_COLUMNS} FROM accounts WHERE uuid = $1");
    on_db!(db, c => sqlx::query_as::<_, AccountRow>(&sql)
        .bind(uuid)
        .fetch_optional(c)
        .await)
}

/// The account, if it belongs to `app_uuid`.
pub async fn account_of_app(db: &Db, app_uuid: Uuid, uuid: Uuid) -> Result<Option<AccountRow>> {
    let sql = format!("SELECT {SELECT_COLUMNS} FROM accounts WHERE uuid = $1 AND app_uuid = $2");
    on_db!(db, c => sqlx::query_as::<_, AccountRow>(&sql)
        .bind(uuid)
        .bind(app_uuid)
        .fetch_optional(c)
        .await)
}

/// The account inside a transaction that is about to change it (row-locked on PostgreSQL; the
/// single SQLite writer already serializes).
pub async fn account_of_app_for_update(
    tx: &mut Tx,
    app_uuid: Uuid,
    uuid: Uuid,
) -> Result<Option<AccountRow>> {
    let base = format!("SELECT {SELECT_COLUMNS} FROM accounts WHERE uuid = $1 AND app_uuid = $2");
    match tx {
        Tx::Sqlite(t) => {
            sqlx::query_as::<_, AccountRow>(&base)
                .bind(uuid)
                .bind(app_uuid)
                .fetch_optional(&mut **t)
                .await
        }
        Tx::Postgres(t) => {
            // Lock, then read in a statement of its own: a statement sees what was committed
            // when it began, so a read that waited for the lock would answer from before the
            // holder's commit (two finalizes would both find no enrollment, and the second
            // would break the enrollments key instead of answering `already_finalized`).
            let locked =
                sqlx::query("SELECT 1 FROM accounts WHERE uuid = $1 AND app_uuid = $2 FOR UPDATE")
                    .bind(uuid)
                    .bind(app_uuid)
                    .fetch_optional(&mut **t)
                    .await?;
            if locked.is_none() {
                return Ok(None);
            }
            sqlx::query_as::<_, AccountRow>(&base)
                .bind(uuid)
                .bind(app_uuid)
                .fetch_optional(&mut **t)
                .await
        }
    }
}

pub struct AccountFilter<'a> {
    pub app_uuid: Uuid,
    pub email: Option<&'a str>,
    pub status: Option<AccountStatus>,
    pub limit: u32,
    pub offset: u64,
}

/// One page of an app's accounts, newest first; fetches one row more than asked so the caller
/// can tell whether another page follows.
pub async fn list_accounts(db: &Db, f: &AccountFilter<'_>) -> Result<Vec<AccountRow>> {
    let mut sql = format!("SELECT {SELECT_COLUMNS} FROM accounts WHERE app_uuid = $1");
    let mut n = 1;
    if f.email.is_some() {
        n += 1;
        sql.push_str(&format!(" AND email = ${n}"));
    }
    if f.status.is_some() {
        n += 1;
        sql.push_str(&format!(" AND status = ${n}"));
    }
    sql.push_str(&format!(
        " ORDER BY created_at DESC, uuid DESC LIMIT ${} OFFSET ${}",
        n + 1,
        n + 2
    ));
    let limit = i64::from(f.limit) + 1;
    let offset = i64::try_from(f.offset).unwrap_or(i64::MAX);
    on_db!(db, c => {
        let mut q = sqlx::query_as::<_, AccountRow>(&sql).bind(f.app_uuid);
        if let Some(email) = f.email {
            q = q.bind(email);
        }
        if let Some(status) = f.status {
            q = q.bind(status);
        }
        q.bind(limit).bind(offset).fetch_all(c).await
    })
}

pub async fn set_client_agent_accepted_at(
    tx: &mut Tx,
    account_uuid: Uuid,
    accepted_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "UPDATE accounts SET client_agent_accepted_at = $1, updated_at = $2 WHERE uuid = $3";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(accepted_at)
        .bind(now)
        .bind(account_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Stores a newly derived status.
pub async fn update_status(
    tx: &mut Tx,
    account_uuid: Uuid,
    status: AccountStatus,
    status_reason: StatusReason,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql =
        "UPDATE accounts SET status = $1, status_reason = $2, updated_at = $3 WHERE uuid = $4";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(status)
        .bind(status_reason)
        .bind(now)
        .bind(account_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

pub async fn insert_status_history(
    tx: &mut Tx,
    account_uuid: Uuid,
    status: AccountStatus,
    status_reason: StatusReason,
    at: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO account_status_history \
        (uuid, account_uuid, status, status_reason, changed_at) VALUES ($1, $2, $3, $4, $5)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(Uuid::new_v4())
        .bind(account_uuid)
        .bind(status)
        .bind(status_reason)
        .bind(at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StatusChange {
    pub status: AccountStatus,
    pub status_reason: StatusReason,
    pub changed_at: DateTime<Utc>,
}

pub async fn status_history(db: &Db, account_uuid: Uuid) -> Result<Vec<StatusChange>> {
    let sql = "SELECT status, status_reason, changed_at FROM account_status_history \
        WHERE account_uuid = $1 ORDER BY changed_at, uuid";
    on_db!(db, c => sqlx::query_as::<_, StatusChange>(sql).bind(account_uuid).fetch_all(c).await)
}

pub async fn insert_account_token(
    tx: &mut Tx,
    token_hash: &str,
    account_uuid: Uuid,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO account_tokens (token_hash, account_uuid, expires_at, created_at) \
        VALUES ($1, $2, $3, $4)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(token_hash)
        .bind(account_uuid)
        .bind(expires_at)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AccountTokenRow {
    pub account_uuid: Uuid,
    pub app_uuid: Uuid,
    pub expires_at: DateTime<Utc>,
}

/// Who an AccountToken belongs to, expired or not (the caller tells expired from unknown).
pub async fn account_token(db: &Db, token_hash: &str) -> Result<Option<AccountTokenRow>> {
    let sql = "SELECT t.account_uuid, a.app_uuid, t.expires_at FROM account_tokens t \
        JOIN accounts a ON a.uuid = t.account_uuid WHERE t.token_hash = $1";
    on_db!(db, c => sqlx::query_as::<_, AccountTokenRow>(sql)
        .bind(token_hash)
        .fetch_optional(c)
        .await)
}

impl AccountRow {
    /// A new account's row, in its first status.
    pub fn new(
        uuid: Uuid,
        app_uuid: Uuid,
        account_number: String,
        profile: &Profile,
        status: (AccountStatus, StatusReason),
        now: DateTime<Utc>,
    ) -> serde_json::Result<AccountRow> {
        let mut row = AccountRow {
            uuid,
            app_uuid,
            account_number,
            email: String::new(),
            first_name: String::new(),
            last_name: String::new(),
            phone: None,
            date_of_birth: None,
            preliminary_address: None,
            renewals_url: None,
            metadata: String::new(),
            status: status.0,
            status_reason: status.1,
            client_agent_accepted_at: None,
            created_at: now,
            updated_at: now,
            has_payment_method: false,
            has_credit_check: false,
            has_confirmed_address: false,
            has_accepted_plan: false,
            is_enrollment_finalized: false,
            is_identity_verified: false,
            is_billing_address_confirmed: false,
            is_service_active: false,
        };
        row.set_profile(profile)?;
        Ok(row)
    }

    /// The profile stored in this row.
    pub fn profile(&self) -> serde_json::Result<Profile> {
        Ok(Profile {
            email: self.email.clone(),
            first_name: self.first_name.clone(),
            last_name: self.last_name.clone(),
            phone: self.phone.clone(),
            date_of_birth: self.date_of_birth,
            preliminary_address: self
                .preliminary_address
                .as_deref()
                .map(serde_json::from_str)
                .transpose()?,
            renewals_url: self.renewals_url.clone(),
            metadata: serde_json::from_str(&self.metadata)?,
        })
    }

    pub fn set_profile(&mut self, p: &Profile) -> serde_json::Result<()> {
        self.email.clone_from(&p.email);
        self.first_name.clone_from(&p.first_name);
        self.last_name.clone_from(&p.last_name);
        self.phone.clone_from(&p.phone);
        self.date_of_birth = p.date_of_birth;
        self.preliminary_address = p
            .preliminary_address
            .as_ref()
            .map(serde_json::to_string)
            .transpose()?;
        self.renewals_url.clone_from(&p.renewals_url);
        self.metadata = serde_json::to_string(&p.metadata)?;
        Ok(())
    }
}

/// Accounts of the apps an organisation owns (every app's when `organisation` is `None`) whose
/// e-mail, account number or ESI ID is `exact`, or whose e-mail or full name contains
/// `contains` (lower-case); newest first, at most `limit`.
pub async fn search_accounts(
    db: &Db,
    organisation: Option<Uuid>,
    exact: &str,
    contains: &str,
    limit: i64,
) -> Result<Vec<AccountRow>> {
    let pattern = format!(
        "%{}%",
        contains
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    let sql = format!(
        "SELECT {SELECT_COLUMNS} FROM accounts WHERE app_uuid IN \
         (SELECT uuid FROM apps WHERE $1 IS NULL OR organisation_uuid = $1) \
         AND (email = $2 OR account_number = $2 \
           OR EXISTS (SELECT 1 FROM locations l WHERE l.account_uuid = accounts.uuid AND l.esi_id = $2) \
           OR email LIKE $3 ESCAPE '\\' \
           OR LOWER(first_name || ' ' || last_name) LIKE $3 ESCAPE '\\') \
         ORDER BY created_at DESC, uuid DESC LIMIT $4"
    );
    on_db!(db, c => sqlx::query_as::<_, AccountRow>(&sql)
        .bind(organisation)
        .bind(exact)
        .bind(&pattern)
        .bind(limit)
        .fetch_all(c)
        .await)
}
