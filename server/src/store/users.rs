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
}

const USER_COLUMNS: &str = "u.uuid, u.email, u.password_hash, u.role, u.organisation_uuid, \
    o.name AS organisation_name, u.created_at";

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

pub async fn user_by_uuid(db: &Db, uuid: Uuid) -> Result<Option<UserRow>> {
    let sql = format!(
        "SELECT {USER_COLUMNS} FROM dashboard_users u \
         LEFT JOIN organisations o ON o.uuid = u.organisation_uuid WHERE u.uuid = $1"
    );
    on_db!(db, c => sqlx::query_as::<_, UserRow>(&sql).bind(uuid).fetch_optional(c).await)
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
