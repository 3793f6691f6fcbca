//! Apps and their AppTokens.

use app::api::Environment;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AppRow {
    pub uuid: Uuid,
    pub name: String,
    pub slug: String,
    pub environment: String,
    pub display_name: String,
    pub logo_url: Option<String>,
    pub primary_color: Option<String>,
    pub support_name: Option<String>,
    pub support_phone: Option<String>,
    pub support_email: Option<String>,
    pub support_hours: Option<String>,
    pub support_url: Option<String>,
    /// JSON array of origins.
    pub allowed_origins: String,
    pub payment_publishable_key: String,
    pub created_at: DateTime<Utc>,
    /// The organisation that owns the app (none: the platform's own, run by operators).
    pub organisation_uuid: Option<Uuid>,
    /// Where renewal notices send customers whose account has no link of its own.
    pub renewals_url: Option<String>,
    /// The short text the hosted landing page (`/go/<slug>`) shows.
    pub landing_text: Option<String>,
}

impl AppRow {
    /// The app's environment; one that cannot be read counts as live, the stricter of the two.
    pub fn environment_kind(&self) -> Environment {
        Environment::parse(&self.environment).unwrap_or(Environment::Live)
    }

    /// The origins registered for the app's flows (none when the stored list cannot be read).
    pub fn origins(&self) -> Vec<String> {
        serde_json::from_str(&self.allowed_origins).unwrap_or_default()
    }
}

pub struct NewApp<'a> {
    pub uuid: Uuid,
    pub name: &'a str,
    pub slug: &'a str,
    pub environment: &'a str,
    pub payment_publishable_key: &'a str,
    pub created_at: DateTime<Utc>,
    pub organisation_uuid: Option<Uuid>,
}

const APP_COLUMNS: &str = "a.uuid, a.name, a.slug, a.environment, a.display_name, a.logo_url, \
    a.primary_color, a.support_name, a.support_phone, a.support_email, a.support_hours, \
    a.support_url, a.allowed_origins, a.payment_publishable_key, a.created_at, a.organisation_uuid, \
    a.renewals_url, a.landing_text";

pub async fn insert_app(tx: &mut Tx, app: &NewApp<'_>) -> Result<()> {
    let sql = "INSERT INTO apps (uuid, name, slug, environment, display_name, \
        payment_publishable_key, created_at, organisation_uuid) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(app.uuid)
        .bind(app.name)
        .bind(app.slug)
        .bind(app.environment)
        .bind(app.name)
        .bind(app.payment_publishable_key)
        .bind(app.created_at)
        .bind(app.organisation_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

pub async fn app_by_uuid(db: &Db, uuid: Uuid) -> Result<Option<AppRow>> {
    let sql = format!("SELECT {APP_COLUMNS} FROM apps a WHERE a.uuid = $1");
    on_db!(db, c => sqlx::query_as::<_, AppRow>(&sql).bind(uuid).fetch_optional(c).await)
}

/// The app of a payment processor publishable key.
/// The app, read in the caller's transaction (or from the pool).
pub async fn app_in(conn: impl Into<Conn<'_>>, uuid: Uuid) -> Result<Option<AppRow>> {
    let sql = format!("SELECT {APP_COLUMNS} FROM apps a WHERE a.uuid = $1");
    on_conn!(conn.into(), c => sqlx::query_as::<_, AppRow>(&sql).bind(uuid).fetch_optional(c).await)
}

pub async fn app_by_publishable_key(db: &Db, key: &str) -> Result<Option<AppRow>> {
    let sql = format!("SELECT {APP_COLUMNS} FROM apps a WHERE a.payment_publishable_key = $1");
    on_db!(db, c => sqlx::query_as::<_, AppRow>(&sql).bind(key).fetch_optional(c).await)
}

pub async fn count_apps(db: &Db) -> Result<i64> {
    on_db!(db, c => sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM apps").fetch_one(c).await)
}

/// The app of a live (unrevoked) AppToken.
pub async fn app_by_token_hash(db: &Db, token_hash: &str) -> Result<Option<AppRow>> {
    let sql = format!(
        "SELECT {APP_COLUMNS} FROM app_tokens t JOIN apps a ON a.uuid = t.app_uuid \
         WHERE t.token_hash = $1 AND t.revoked_at IS NULL"
    );
    on_db!(db, c => sqlx::query_as::<_, AppRow>(&sql).bind(token_hash).fetch_optional(c).await)
}

pub async fn insert_app_token(
    tx: &mut Tx,
    app_uuid: Uuid,
    prefix: &str,
    token_hash: &str,
    name: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO app_tokens (uuid, app_uuid, prefix, token_hash, name, created_at) \
        VALUES ($1, $2, $3, $4, $5, $6)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(Uuid::new_v4())
        .bind(app_uuid)
        .bind(prefix)
        .bind(token_hash)
        .bind(name)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Sets what flows and e-mails show of the app; `None` leaves a field as it is.
pub async fn update_branding(
    tx: &mut Tx,
    app_uuid: Uuid,
    display_name: Option<&str>,
    primary_color: Option<&str>,
    logo_url: Option<&str>,
) -> Result<bool> {
    let sql = "UPDATE apps SET display_name = COALESCE($1, display_name), \
        primary_color = COALESCE($2, primary_color), logo_url = COALESCE($3, logo_url) \
        WHERE uuid = $4";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(display_name)
        .bind(primary_color)
        .bind(logo_url)
        .bind(app_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Replaces the origins allowed to embed the app's flows (a JSON array); false when there is no
/// such app.
pub async fn update_allowed_origins(
    tx: &mut Tx,
    app_uuid: Uuid,
    origins: &[String],
) -> Result<bool> {
    let json = serde_json::to_string(origins).unwrap_or_else(|_| "[]".to_owned());
    let n = on_tx!(tx, c => sqlx::query("UPDATE apps SET allowed_origins = $1 WHERE uuid = $2")
        .bind(json)
        .bind(app_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Revokes the token with this display prefix; returns whether one was revoked.
pub async fn revoke_app_token(tx: &mut Tx, prefix: &str, now: DateTime<Utc>) -> Result<bool> {
    let sql = "UPDATE app_tokens SET revoked_at = $1 WHERE prefix = $2 AND revoked_at IS NULL";
    let done = on_tx!(tx, c => sqlx::query(sql).bind(now).bind(prefix).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(done > 0)
}

/// The apps an organisation owns (every app when `organisation` is `None`), newest first.
pub async fn apps_of(db: &Db, organisation: Option<Uuid>) -> Result<Vec<AppRow>> {
    let sql = format!(
        "SELECT {APP_COLUMNS} FROM apps a \
         WHERE ($1 IS NULL OR a.organisation_uuid = $1) ORDER BY a.created_at DESC, a.uuid"
    );
    on_db!(db, c => sqlx::query_as::<_, AppRow>(&sql).bind(organisation).fetch_all(c).await)
}

/// An AppToken as the dashboard lists it (never its hash).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AppTokenRow {
    pub prefix: String,
    /// What its member named it (which program uses it).
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// An app's tokens, newest first.
pub async fn app_tokens(db: &Db, app_uuid: Uuid) -> Result<Vec<AppTokenRow>> {
    let sql = "SELECT prefix, name, created_at, last_used_at, revoked_at FROM app_tokens \
        WHERE app_uuid = $1 ORDER BY created_at DESC, prefix";
    on_db!(db, c => sqlx::query_as::<_, AppTokenRow>(sql).bind(app_uuid).fetch_all(c).await)
}

/// One of an app's tokens, by display prefix.
pub async fn app_token(db: &Db, app_uuid: Uuid, prefix: &str) -> Result<Option<AppTokenRow>> {
    let sql = "SELECT prefix, name, created_at, last_used_at, revoked_at FROM app_tokens \
        WHERE app_uuid = $1 AND prefix = $2";
    on_db!(db, c => sqlx::query_as::<_, AppTokenRow>(sql)
        .bind(app_uuid)
        .bind(prefix)
        .fetch_optional(c)
        .await)
}

/// The app a token (by display prefix) belongs to.
pub async fn app_of_token_prefix(db: &Db, prefix: &str) -> Result<Option<Uuid>> {
    let sql = "SELECT app_uuid FROM app_tokens WHERE prefix = $1";
    on_db!(db, c => sqlx::query_scalar::<_, Uuid>(sql).bind(prefix).fetch_optional(c).await)
}

/// Notes that a token was just used, unless that was noted less than a minute ago.
pub async fn touch_app_token(tx: &mut Tx, token_hash: &str, now: DateTime<Utc>) -> Result<()> {
    let sql = "UPDATE app_tokens SET last_used_at = $1 WHERE token_hash = $2 \
        AND (last_used_at IS NULL OR last_used_at < $3)";
    let recent = now - chrono::Duration::minutes(1);
    on_tx!(tx, c => sqlx::query(sql).bind(now).bind(token_hash).bind(recent).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The partner's support contacts that `support-info` serves.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SupportContacts {
    pub name: Option<String>,
    pub phone: Option<String>,
    pub email: Option<String>,
    pub hours: Option<String>,
    pub url: Option<String>,
}

/// Replaces the app's support contacts; false when there is no such app.
pub async fn update_support(tx: &mut Tx, app_uuid: Uuid, s: &SupportContacts) -> Result<bool> {
    let sql = "UPDATE apps SET support_name = $1, support_phone = $2, support_email = $3, \
        support_hours = $4, support_url = $5 WHERE uuid = $6";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(s.name.as_deref())
        .bind(s.phone.as_deref())
        .bind(s.email.as_deref())
        .bind(s.hours.as_deref())
        .bind(s.url.as_deref())
        .bind(app_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Sets (or clears) the app's default renewal link.
/// One of an app's optional texts, set and cleared alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppText {
    /// The short text the hosted landing page shows.
    LandingText,
    /// Where renewal notices send customers whose account has no link of its own.
    RenewalsUrl,
}

impl AppText {
    fn column(self) -> &'static str {
        match self {
            AppText::LandingText => "landing_text",
            AppText::RenewalsUrl => "renewals_url",
        }
    }
}

impl AppRow {
    /// The app's text `field`, if set.
    pub fn text(&self, field: AppText) -> Option<&str> {
        match field {
            AppText::LandingText => self.landing_text.as_deref(),
            AppText::RenewalsUrl => self.renewals_url.as_deref(),
        }
    }
}

pub async fn update_text(
    tx: &mut Tx,
    app_uuid: Uuid,
    field: AppText,
    value: Option<&str>,
) -> Result<bool> {
    let sql = format!("UPDATE apps SET {} = $1 WHERE uuid = $2", field.column());
    let n = on_tx!(tx, c => sqlx::query(&sql)
        .bind(value)
        .bind(app_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// An app's uploaded logo.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct LogoRow {
    pub app_uuid: Uuid,
    pub content_type: String,
    pub sha256: String,
    pub bytes: Vec<u8>,
    pub width: i32,
    pub height: i32,
    pub updated_at: DateTime<Utc>,
}

/// Stores the app's logo, replacing the one it had.
pub async fn upsert_logo(tx: &mut Tx, logo: &LogoRow) -> Result<()> {
    let sql = "INSERT INTO app_logos (app_uuid, content_type, sha256, bytes, width, height, \
        updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
        ON CONFLICT (app_uuid) DO UPDATE SET content_type = excluded.content_type, \
        sha256 = excluded.sha256, bytes = excluded.bytes, width = excluded.width, \
        height = excluded.height, updated_at = excluded.updated_at";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(logo.app_uuid)
        .bind(&logo.content_type)
        .bind(&logo.sha256)
        .bind(&logo.bytes)
        .bind(logo.width)
        .bind(logo.height)
        .bind(logo.updated_at)
        .execute(c)
        .await
        .map(|_| ()))
}

/// The app's uploaded logo, if it has one.
pub async fn logo_of_app(conn: impl Into<Conn<'_>>, app_uuid: Uuid) -> Result<Option<LogoRow>> {
    let sql = "SELECT app_uuid, content_type, sha256, bytes, width, height, updated_at \
        FROM app_logos WHERE app_uuid = $1";
    on_conn!(conn.into(), c => sqlx::query_as::<_, LogoRow>(sql)
        .bind(app_uuid)
        .fetch_optional(c)
        .await)
}

/// What an app's readiness is decided from beyond its own row: whether it has an uploaded
/// logo, a sealed secret key and a month-to-month default group, and how many of its enabled
/// webhook endpoints never answered an event with 2xx.
#[derive(Debug, Clone, Copy, sqlx::FromRow)]
pub struct ReadinessCounts {
    pub logos: i64,
    pub secret_keys: i64,
    pub webhook_secrets: i64,
    pub month_to_month_defaults: i64,
    pub unverified_endpoints: i64,
}

pub async fn readiness_counts(
    conn: impl Into<Conn<'_>>,
    app_uuid: Uuid,
) -> Result<ReadinessCounts> {
    let sql = "SELECT \
        (SELECT COUNT(*) FROM app_logos WHERE app_uuid = $1) AS logos, \
        (SELECT COUNT(*) FROM apps WHERE uuid = $1 AND payment_secret_key_sealed IS NOT NULL) \
            AS secret_keys, \
        (SELECT COUNT(*) FROM apps WHERE uuid = $1 AND payment_webhook_secret_sealed IS NOT NULL) \
            AS webhook_secrets, \
        (SELECT COUNT(*) FROM plan_groups WHERE app_uuid = $1 AND is_month_to_month_default \
            AND plan_type = 'month_to_month') AS month_to_month_defaults, \
        (SELECT COUNT(*) FROM webhook_endpoints e WHERE e.app_uuid = $1 \
            AND e.deleted_at IS NULL AND NOT e.disabled AND NOT EXISTS (SELECT 1 \
            FROM webhook_deliveries d WHERE d.endpoint_uuid = e.uuid AND d.status = 'succeeded')) \
            AS unverified_endpoints";
    on_conn!(conn.into(), c => sqlx::query_as::<_, ReadinessCounts>(sql)
        .bind(app_uuid)
        .fetch_one(c)
        .await)
}
