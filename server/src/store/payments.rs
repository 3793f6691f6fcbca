//! Payment sessions and payment methods: those the built-in processor creates, and those
//! attached to accounts (a replaced method is detached, never deleted).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};

pub async fn insert_session(
    tx: &mut Tx,
    app_uuid: Uuid,
    account_uuid: Uuid,
    client_secret_hash: &str,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO payment_sessions (uuid, app_uuid, account_uuid, client_secret_hash, \
        expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(Uuid::new_v4())
        .bind(app_uuid)
        .bind(account_uuid)
        .bind(client_secret_hash)
        .bind(expires_at)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SessionRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub expires_at: DateTime<Utc>,
    pub used_at: Option<DateTime<Utc>>,
}

pub async fn session_by_secret_hash(tx: &mut Tx, hash: &str) -> Result<Option<SessionRow>> {
    let sql = "SELECT uuid, app_uuid, account_uuid, expires_at, used_at FROM payment_sessions \
        WHERE client_secret_hash = $1";
    on_tx!(tx, c => sqlx::query_as::<_, SessionRow>(sql).bind(hash).fetch_optional(c).await)
}

/// Marks a session used; false when another request used it first.
pub async fn use_session(tx: &mut Tx, uuid: Uuid, now: DateTime<Utc>) -> Result<bool> {
    let sql = "UPDATE payment_sessions SET used_at = $1 WHERE uuid = $2 AND used_at IS NULL";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(now).bind(uuid).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// A card as the processor keeps it: never its number.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CardRow {
    pub id: String,
    pub brand: String,
    pub last4: String,
    pub exp_month: i32,
    pub exp_year: i32,
    pub postal_code: Option<String>,
    pub fingerprint: String,
}

pub async fn insert_processor_payment_method(
    tx: &mut Tx,
    app_uuid: Uuid,
    account_uuid: Uuid,
    card: &CardRow,
    charges_fail: bool,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO processor_payment_methods (id, app_uuid, account_uuid, brand, last4, \
        exp_month, exp_year, postal_code, fingerprint, charges_fail, created_at) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(&card.id)
        .bind(app_uuid)
        .bind(account_uuid)
        .bind(&card.brand)
        .bind(&card.last4)
        .bind(card.exp_month)
        .bind(card.exp_year)
        .bind(&card.postal_code)
        .bind(&card.fingerprint)
        .bind(charges_fail)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// A payment method the processor created for this app's account.
pub async fn processor_payment_method(
    db: &Db,
    app_uuid: Uuid,
    account_uuid: Uuid,
    id: &str,
) -> Result<Option<CardRow>> {
    let sql = "SELECT id, brand, last4, exp_month, exp_year, postal_code, fingerprint \
        FROM processor_payment_methods WHERE id = $1 AND app_uuid = $2 AND account_uuid = $3";
    on_db!(db, c => sqlx::query_as::<_, CardRow>(sql)
        .bind(id)
        .bind(app_uuid)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)
}

/// The account's current payment method.
const CURRENT_PAYMENT_METHOD: &str = "SELECT payment_method_id AS id, brand, last4, exp_month, \
    exp_year, postal_code, fingerprint FROM account_payment_methods WHERE account_uuid = $1 \
    AND detached_at IS NULL";

pub async fn current_payment_method(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Option<CardRow>> {
    on_conn!(conn.into(), c => sqlx::query_as::<_, CardRow>(CURRENT_PAYMENT_METHOD)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)
}

/// Attaches `card` to the account, detaching the one it replaces.
pub async fn attach_payment_method(
    tx: &mut Tx,
    account_uuid: Uuid,
    card: &CardRow,
    now: DateTime<Utc>,
) -> Result<()> {
    let detach = "UPDATE account_payment_methods SET detached_at = $1 \
        WHERE account_uuid = $2 AND detached_at IS NULL";
    on_tx!(tx, c => sqlx::query(detach).bind(now).bind(account_uuid).execute(c).await
        .map(|r| r.rows_affected()))?;
    let insert = "INSERT INTO account_payment_methods (uuid, account_uuid, payment_method_id, \
        brand, last4, exp_month, exp_year, postal_code, fingerprint, attached_at) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
    on_tx!(tx, c => sqlx::query(insert)
        .bind(Uuid::new_v4())
        .bind(account_uuid)
        .bind(&card.id)
        .bind(&card.brand)
        .bind(&card.last4)
        .bind(card.exp_month)
        .bind(card.exp_year)
        .bind(&card.postal_code)
        .bind(&card.fingerprint)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Whether charges of a payment method the built-in processor created for this app fail
/// (saved from the `0341` test card); `None` when it created no such payment method.
pub async fn processor_charges_fail(db: &Db, app_uuid: Uuid, id: &str) -> Result<Option<bool>> {
    let sql = "SELECT charges_fail FROM processor_payment_methods WHERE id = $1 AND app_uuid = $2";
    on_db!(db, c => sqlx::query_scalar::<_, bool>(sql)
        .bind(id)
        .bind(app_uuid)
        .fetch_optional(c)
        .await)
}

/// The app's secret key for the real processor, sealed.
pub async fn app_secret_key_sealed(db: &Db, app_uuid: Uuid) -> Result<Option<Vec<u8>>> {
    sealed_of_app(db, app_uuid, "payment_secret_key_sealed").await
}

/// The sealed secret in the app's column `column`, if set.
async fn sealed_of_app(db: &Db, app_uuid: Uuid, column: &'static str) -> Result<Option<Vec<u8>>> {
    let sql = format!("SELECT {column} FROM apps WHERE uuid = $1");
    let row = on_db!(db, c => sqlx::query_scalar::<_, Option<Vec<u8>>>(&sql)
        .bind(app_uuid)
        .fetch_optional(c)
        .await)?;
    Ok(row.flatten())
}

/// Sets an app's processor keys (the secret one sealed); false when there is no such app.
pub async fn set_app_payment_keys(
    tx: &mut Tx,
    app_uuid: Uuid,
    publishable_key: &str,
    secret_key_sealed: &[u8],
) -> Result<bool> {
    let sql = "UPDATE apps SET payment_publishable_key = $1, payment_secret_key_sealed = $2 \
        WHERE uuid = $3";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(publishable_key)
        .bind(secret_key_sealed)
        .bind(app_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// The processor's customer of an account of this app.
pub async fn processor_customer(
    db: &Db,
    app_uuid: Uuid,
    account_uuid: Uuid,
) -> Result<Option<String>> {
    let sql = "SELECT customer_id FROM processor_customers \
        WHERE app_uuid = $1 AND account_uuid = $2";
    on_db!(db, c => sqlx::query_scalar::<_, String>(sql)
        .bind(app_uuid)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)
}

/// The account of the app whose customer at the processor is `customer_id`.
pub async fn account_of_processor_customer(
    db: &Db,
    app_uuid: Uuid,
    customer_id: &str,
) -> Result<Option<Uuid>> {
    let sql = "SELECT account_uuid FROM processor_customers \
        WHERE app_uuid = $1 AND customer_id = $2";
    on_db!(db, c => sqlx::query_scalar::<_, Uuid>(sql)
        .bind(app_uuid)
        .bind(customer_id)
        .fetch_optional(c)
        .await)
}

/// Records the processor's customer of an account unless one is recorded already; answers
/// the one that is recorded afterwards (the first writer wins a race).
pub async fn insert_processor_customer(
    tx: &mut Tx,
    app_uuid: Uuid,
    account_uuid: Uuid,
    customer_id: &str,
    now: DateTime<Utc>,
) -> Result<String> {
    let insert = "INSERT INTO processor_customers (app_uuid, account_uuid, customer_id, \
        created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (app_uuid, account_uuid) DO NOTHING";
    on_tx!(tx, c => sqlx::query(insert)
        .bind(app_uuid)
        .bind(account_uuid)
        .bind(customer_id)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    let select = "SELECT customer_id FROM processor_customers \
        WHERE app_uuid = $1 AND account_uuid = $2";
    on_tx!(tx, c => sqlx::query_scalar::<_, String>(select)
        .bind(app_uuid)
        .bind(account_uuid)
        .fetch_one(c)
        .await)
}

/// The sealed signing secret of the processor's webhooks to an app, if set.
pub async fn app_webhook_secret_sealed(db: &Db, app_uuid: Uuid) -> Result<Option<Vec<u8>>> {
    sealed_of_app(db, app_uuid, "payment_webhook_secret_sealed").await
}

/// Sets the sealed signing secret of the processor's webhooks to an app.
pub async fn set_app_webhook_secret(tx: &mut Tx, app_uuid: Uuid, sealed: &[u8]) -> Result<bool> {
    let sql = "UPDATE apps SET payment_webhook_secret_sealed = $1 WHERE uuid = $2";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(sealed)
        .bind(app_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Records that the processor's event `event_id` to this app is handled: false when it was
/// already (a delivery sent again, which must change nothing).
pub async fn record_processor_event(
    tx: &mut Tx,
    app_uuid: Uuid,
    event_id: &str,
    event_type: &str,
    at: DateTime<Utc>,
) -> Result<bool> {
    let sql = "INSERT INTO processor_events (app_uuid, event_id, event_type, received_at) \
        VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(app_uuid)
        .bind(event_id)
        .bind(event_type)
        .bind(at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// How many of the processor's events of `event_type` to this app were handled.
pub async fn processor_events_handled(db: &Db, app_uuid: Uuid, event_type: &str) -> Result<i64> {
    let sql = "SELECT COUNT(*) FROM processor_events WHERE app_uuid = $1 AND event_type = $2";
    on_db!(db, c => sqlx::query_scalar::<_, i64>(sql)
        .bind(app_uuid)
        .bind(event_type)
        .fetch_one(c)
        .await)
}
