//! Dashboard users and the organisations partner members belong to.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};
use crate::domain::users::Role;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UserRow {
    pub uuid: Uuid,
    pub email: String,
    pub password_hash: String,
    pub role: Role,
    pub organisation_uuid: Option<Uuid>,
    pub organisation_name: Option<String>,
    pub created_at: DateTime<Utc>,
    /// Raised by a password reset: a session signed in under an older generation has ended.
    pub session_generation: i32,
}

const USER_COLUMNS: &str = "u.uuid, u.email, u.password_hash, u.role, u.organisation_uuid, \
    o.name AS organisation_name, u.created_at, u.session_generation";

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct OrganisationRow {
    pub uuid: Uuid,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

pub async fn count_users(db: &Db) -> Result<i64> {
    on_db!(db, c => sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM dashboard_users")
        .fetch_one(c).await)
}

pub async fn user_by_email(conn: impl Into<Conn<'_>>, email: &str) -> Result<Option<UserRow>> {
    let sql = format!(
        "SELECT {USER_COLUMNS} FROM dashboard_users u \
         LEFT JOIN organisations o ON o.uuid = u.organisation_uuid WHERE u.email = $1"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, UserRow>(&sql).bind(email).fetch_optional(c).await)
}

pub async fn user_by_uuid(conn: impl Into<Conn<'_>>, uuid: Uuid) -> Result<Option<UserRow>> {
    let sql = format!(
        "SELECT {USER_COLUMNS} FROM dashboard_users u \
         LEFT JOIN organisations o ON o.uuid = u.organisation_uuid WHERE u.uuid = $1"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, UserRow>(&sql).bind(uuid).fetch_optional(c).await)
}

pub async fn insert_user(
    tx: &mut Tx,
    uuid: Uuid,
    email: &str,
    password_hash: &str,
    role: Role,
    organisation: Option<Uuid>,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO dashboard_users (uuid, email, password_hash, role, organisation_uuid, \
        created_at) VALUES ($1, $2, $3, $4, $5, $6)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(uuid)
        .bind(email)
        .bind(password_hash)
        .bind(role)
        .bind(organisation)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

pub async fn update_password_hash(tx: &mut Tx, uuid: Uuid, password_hash: &str) -> Result<bool> {
    let n = on_tx!(tx, c => sqlx::query("UPDATE dashboard_users SET password_hash = $1 WHERE uuid = $2")
        .bind(password_hash)
        .bind(uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Sets a new password hash and raises the session generation, so that every session signed
/// in before ends.
pub async fn reset_password_hash(tx: &mut Tx, uuid: Uuid, password_hash: &str) -> Result<()> {
    let sql = "UPDATE dashboard_users SET password_hash = $1, \
        session_generation = session_generation + 1 WHERE uuid = $2";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(password_hash)
        .bind(uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// A password reset link as stored: never its token, only the token's SHA-256.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PasswordResetRow {
    pub token_hash: String,
    pub user_uuid: Uuid,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub used_at: Option<DateTime<Utc>>,
}

pub async fn insert_password_reset(tx: &mut Tx, r: &PasswordResetRow) -> Result<()> {
    let sql = "INSERT INTO dashboard_password_resets (token_hash, user_uuid, created_at, \
        expires_at, used_at) VALUES ($1, $2, $3, $4, $5)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(&r.token_hash)
        .bind(r.user_uuid)
        .bind(r.created_at)
        .bind(r.expires_at)
        .bind(r.used_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// How many reset links were made for the user since `since`.
pub async fn count_password_resets_since(
    tx: &mut Tx,
    user_uuid: Uuid,
    since: DateTime<Utc>,
) -> Result<i64> {
    let sql = "SELECT COUNT(*) FROM dashboard_password_resets \
        WHERE user_uuid = $1 AND created_at >= $2";
    on_tx!(tx, c => sqlx::query_scalar::<_, i64>(sql)
        .bind(user_uuid)
        .bind(since)
        .fetch_one(c)
        .await)
}

pub async fn password_reset_by_hash(
    conn: impl Into<Conn<'_>>,
    token_hash: &str,
) -> Result<Option<PasswordResetRow>> {
    let sql = "SELECT token_hash, user_uuid, created_at, expires_at, used_at \
        FROM dashboard_password_resets WHERE token_hash = $1";
    on_conn!(conn.into(), c => sqlx::query_as::<_, PasswordResetRow>(sql)
        .bind(token_hash)
        .fetch_optional(c)
        .await)
}

/// Spends a reset link that is unused and unexpired at `now`; false when it is not (anymore).
pub async fn use_password_reset(tx: &mut Tx, token_hash: &str, now: DateTime<Utc>) -> Result<bool> {
    let sql = "UPDATE dashboard_password_resets SET used_at = $1 \
        WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(now).bind(token_hash).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Spends every other unused link of the user (a reset ends them all).
pub async fn use_all_password_resets(
    tx: &mut Tx,
    user_uuid: Uuid,
    now: DateTime<Utc>,
) -> Result<u64> {
    let sql = "UPDATE dashboard_password_resets SET used_at = $1 \
        WHERE user_uuid = $2 AND used_at IS NULL";
    on_tx!(tx, c => sqlx::query(sql).bind(now).bind(user_uuid).execute(c).await
        .map(|r| r.rows_affected()))
}

/// Deletes up to `limit` reset links made before `before` (long expired, and out of the
/// limit's window); returns how many.
pub async fn prune_password_resets(tx: &mut Tx, before: DateTime<Utc>, limit: i64) -> Result<u64> {
    let sql = "DELETE FROM dashboard_password_resets WHERE token_hash IN \
        (SELECT token_hash FROM dashboard_password_resets WHERE created_at < $1 LIMIT $2)";
    on_tx!(tx, c => sqlx::query(sql).bind(before).bind(limit).execute(c).await
        .map(|r| r.rows_affected()))
}

pub async fn organisation_by_name(
    conn: impl Into<Conn<'_>>,
    name: &str,
) -> Result<Option<OrganisationRow>> {
    let sql = "SELECT uuid, name, created_at FROM organisations WHERE name = $1";
    on_conn!(conn.into(), c => sqlx::query_as::<_, OrganisationRow>(sql).bind(name).fetch_optional(c).await)
}

pub async fn organisations(db: &Db) -> Result<Vec<OrganisationRow>> {
    let sql = "SELECT uuid, name, created_at FROM organisations ORDER BY name";
    on_db!(db, c => sqlx::query_as::<_, OrganisationRow>(sql).fetch_all(c).await)
}

pub async fn insert_organisation(
    tx: &mut Tx,
    uuid: Uuid,
    name: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    on_tx!(tx, c => sqlx::query("INSERT INTO organisations (uuid, name, created_at) VALUES ($1, $2, $3)")
        .bind(uuid)
        .bind(name)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}
