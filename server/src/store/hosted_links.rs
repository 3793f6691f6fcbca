//! Hosted pages: the single-use links e-mails carry (`hosted_links`) and the one-time codes that
//! confirm an e-mail address (`hosted_codes`). Only hashes of tokens and codes are stored.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};

pub struct NewHostedLink<'a> {
    pub token_hash: &'a str,
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub purpose: &'a str,
    pub target: Option<&'a str>,
    /// The hash of the spent or expired link this one replaces.
    pub replaces: Option<&'a str>,
    pub expires_at: DateTime<Utc>,
    pub now: DateTime<Utc>,
}

pub async fn insert_hosted_link(tx: &mut Tx, l: &NewHostedLink<'_>) -> Result<()> {
    let sql = "INSERT INTO hosted_links (token_hash, app_uuid, account_uuid, purpose, target, \
        replaces, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(l.token_hash)
        .bind(l.app_uuid)
        .bind(l.account_uuid)
        .bind(l.purpose)
        .bind(l.target)
        .bind(l.replaces)
        .bind(l.expires_at)
        .bind(l.now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct HostedLinkRow {
    pub token_hash: String,
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub purpose: String,
    pub target: Option<String>,
    pub expires_at: DateTime<Utc>,
    pub used_at: Option<DateTime<Utc>>,
}

pub async fn hosted_link(
    conn: impl Into<Conn<'_>>,
    token_hash: &str,
) -> Result<Option<HostedLinkRow>> {
    let sql = "SELECT token_hash, app_uuid, account_uuid, purpose, target, expires_at, used_at \
        FROM hosted_links WHERE token_hash = $1";
    on_conn!(conn.into(), c => sqlx::query_as::<_, HostedLinkRow>(sql)
        .bind(token_hash)
        .fetch_optional(c)
        .await)
}

/// Spends a link; false when it was already spent.
pub async fn use_hosted_link(tx: &mut Tx, token_hash: &str, now: DateTime<Utc>) -> Result<bool> {
    let sql = "UPDATE hosted_links SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(now).bind(token_hash).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// How many links were sent to the account since `since` in place of spent or expired ones.
pub async fn count_resent_links(
    tx: &mut Tx,
    account_uuid: Uuid,
    since: DateTime<Utc>,
) -> Result<i64> {
    let sql = "SELECT COUNT(*) FROM hosted_links WHERE account_uuid = $1 AND replaces IS NOT NULL \
        AND created_at > $2";
    on_tx!(tx, c => sqlx::query_scalar::<_, i64>(sql)
        .bind(account_uuid)
        .bind(since)
        .fetch_one(c)
        .await)
}

pub struct NewHostedCode<'a> {
    pub uuid: Uuid,
    pub app_uuid: Option<Uuid>,
    pub account_uuid: Option<Uuid>,
    pub purpose: &'a str,
    pub email: &'a str,
    pub code_hash: &'a str,
    pub ip: &'a str,
    pub expires_at: DateTime<Utc>,
    pub now: DateTime<Utc>,
}

pub async fn insert_hosted_code(tx: &mut Tx, c: &NewHostedCode<'_>) -> Result<()> {
    let sql = "INSERT INTO hosted_codes (uuid, app_uuid, account_uuid, purpose, email, code_hash, \
        ip, attempts, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $9)";
    on_tx!(tx, conn => sqlx::query(sql)
        .bind(c.uuid)
        .bind(c.app_uuid)
        .bind(c.account_uuid)
        .bind(c.purpose)
        .bind(c.email)
        .bind(c.code_hash)
        .bind(c.ip)
        .bind(c.expires_at)
        .bind(c.now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Codes sent to `email`, and codes asked for from `ip`, since `since`.
pub async fn count_codes(
    tx: &mut Tx,
    email: &str,
    ip: &str,
    since: DateTime<Utc>,
) -> Result<(i64, i64)> {
    let by_email = "SELECT COUNT(*) FROM hosted_codes WHERE email = $1 AND created_at > $2";
    let by_ip = "SELECT COUNT(*) FROM hosted_codes WHERE ip = $1 AND created_at > $2";
    let e = on_tx!(&mut *tx, c => sqlx::query_scalar::<_, i64>(by_email)
        .bind(email).bind(since).fetch_one(c).await)?;
    let i = on_tx!(tx, c => sqlx::query_scalar::<_, i64>(by_ip)
        .bind(ip).bind(since).fetch_one(c).await)?;
    Ok((e, i))
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct HostedCodeRow {
    pub uuid: Uuid,
    pub app_uuid: Option<Uuid>,
    pub account_uuid: Option<Uuid>,
    pub email: String,
    pub code_hash: String,
    pub attempts: i32,
    pub expires_at: DateTime<Utc>,
    pub used_at: Option<DateTime<Utc>>,
}

/// The code sent last for `purpose` to `email` from `app_uuid`'s pages (only the latest one
/// counts; each app's pages confirm their own codes).
pub async fn latest_hosted_code(
    tx: &mut Tx,
    purpose: &str,
    app_uuid: Uuid,
    email: &str,
) -> Result<Option<HostedCodeRow>> {
    let sql =
        "SELECT uuid, app_uuid, account_uuid, email, code_hash, attempts, expires_at, used_at \
        FROM hosted_codes WHERE purpose = $1 AND app_uuid = $2 AND email = $3 \
        ORDER BY created_at DESC LIMIT 1";
    on_tx!(tx, c => sqlx::query_as::<_, HostedCodeRow>(sql)
        .bind(purpose)
        .bind(app_uuid)
        .bind(email)
        .fetch_optional(c)
        .await)
}

/// Counts a wrong guess.
pub async fn add_code_attempt(tx: &mut Tx, uuid: Uuid) -> Result<()> {
    let sql = "UPDATE hosted_codes SET attempts = attempts + 1 WHERE uuid = $1";
    on_tx!(tx, c => sqlx::query(sql).bind(uuid).execute(c).await.map(|r| r.rows_affected()))?;
    Ok(())
}

/// Spends a code; false when it was already spent.
pub async fn use_hosted_code(tx: &mut Tx, uuid: Uuid, now: DateTime<Utc>) -> Result<bool> {
    let sql = "UPDATE hosted_codes SET used_at = $1 WHERE uuid = $2 AND used_at IS NULL";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(now).bind(uuid).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// The accounts with this e-mail address in one app, newest first: the portal signs in per
/// app, and a hosted sign-up finds the address's accounts there.
pub async fn accounts_with_email_in_app(db: &Db, app_uuid: Uuid, email: &str) -> Result<Vec<Uuid>> {
    let sql = "SELECT uuid FROM accounts WHERE app_uuid = $1 AND email = $2 \
        ORDER BY created_at DESC LIMIT 20";
    on_db!(db, c => sqlx::query_scalar::<_, Uuid>(sql).bind(app_uuid).bind(email).fetch_all(c).await)
}

/// The app whose hosted pages answer at `/go/<slug>`.
pub async fn app_by_slug(db: &Db, slug: &str) -> Result<Option<Uuid>> {
    let sql = "SELECT uuid FROM apps WHERE slug = $1";
    on_db!(db, c => sqlx::query_scalar::<_, Uuid>(sql).bind(slug).fetch_optional(c).await)
}

/// Deletes up to `limit` links made before `before` (their e-mails are gone by then); returns
/// how many.
pub async fn prune_hosted_links(tx: &mut Tx, before: DateTime<Utc>, limit: i64) -> Result<u64> {
    let sql = "DELETE FROM hosted_links WHERE token_hash IN (SELECT token_hash FROM hosted_links \
        WHERE created_at < $1 LIMIT $2)";
    on_tx!(tx, c => sqlx::query(sql).bind(before).bind(limit).execute(c).await
        .map(|r| r.rows_affected()))
}

/// Deletes up to `limit` codes asked for before `before` (long expired, and out of the limits'
/// window); returns how many.
pub async fn prune_hosted_codes(tx: &mut Tx, before: DateTime<Utc>, limit: i64) -> Result<u64> {
    let sql = "DELETE FROM hosted_codes WHERE uuid IN (SELECT uuid FROM hosted_codes \
        WHERE created_at < $1 LIMIT $2)";
    on_tx!(tx, c => sqlx::query(sql).bind(before).bind(limit).execute(c).await
        .map(|r| r.rows_affected()))
}
