//! Apps as the dashboard and the CLI change them, through the same functions: creating an app
//! (with its default plan groups and first AppToken), issuing and revoking AppTokens, a live
//! app's keys for the card processor, its brand, the origins that may embed its flows, its
//! support contacts and its default renewal link, and its uploaded logo. Every change is written to the audit log in
//! its own transaction, never with a secret.

use app::api::Environment;
use rand::{distributions::Alphanumeric, Rng};
use uuid::Uuid;

use super::{
    audit::{self, Actor},
    plan_groups, Error,
};
use crate::{
    clock::Clock,
    crypto::PiiKey,
    domain::{
        account::{parse_email, parse_renewals_url, parse_us_phone},
        apps::{
            allowed_origins, brand_color, check_payment_keys, check_webhook_secret,
            logo_dimensions, missing_for_live, slug, Origin, ReadinessFacts, ReadinessItem,
        },
        pricing, tokens, FieldError,
    },
    store::{
        self,
        apps::{AppRow, AppText, NewApp, SupportContacts},
        Db, Tx,
    },
};

/// Why an app was not changed. Nothing is written; the message never repeats a secret.
#[derive(Debug, thiserror::Error)]
pub enum AppRefused {
    #[error("{}", .0.message)]
    Field(FieldError),
    #[error("no such app")]
    AppNotFound,
    #[error("no active token with prefix {0}")]
    TokenNotFound(String),
    #[error("{0}")]
    PaymentKeys(&'static str),
    #[error("sandbox apps use the built-in test processor; keys are for live apps")]
    KeysForSandbox,
    #[error("{0}")]
    WebhookSecret(&'static str),
    #[error("{0}")]
    Origins(String),
}

impl From<FieldError> for Error<AppRefused> {
    fn from(e: FieldError) -> Self {
        Error::Refused(AppRefused::Field(e))
    }
}

fn refused<T>(why: AppRefused) -> Result<T, Error<AppRefused>> {
    Err(Error::Refused(why))
}

/// A new app and its first AppToken (the plain token exists only here).
pub struct CreatedApp {
    pub uuid: Uuid,
    pub slug: String,
    pub token: String,
}

/// An app's name: 1 to 100 characters, trimmed.
fn app_name(param: &str, raw: &str) -> Result<String, FieldError> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(FieldError::invalid(
            param,
            format!("{param} must have 1 to 100 characters"),
        ));
    }
    Ok(name.to_owned())
}

/// Creates an app owned by `organisation` (none: the platform's own) with its default plan
/// groups and a first AppToken.
pub async fn create_app(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    name: &str,
    environment: Environment,
    organisation: Option<Uuid>,
) -> Result<CreatedApp, Error<AppRefused>> {
    let mut tx = db.begin().await?;
    let created = create_app_in(
        &mut tx,
        clock.now(),
        actor,
        &NewAppSpec {
            name,
            environment,
            organisation,
            slug: None,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(created)
}

/// What a new app is made of; a slug chosen beforehand (a partner's approved request) is kept,
/// else one is made from the name.
pub struct NewAppSpec<'a> {
    pub name: &'a str,
    pub environment: Environment,
    pub organisation: Option<Uuid>,
    pub slug: Option<&'a str>,
}

/// Creates an app in the caller's transaction: the one way apps are made, whether the operator
/// creates one or approves a partner's request for it.
pub async fn create_app_in(
    tx: &mut Tx,
    now: chrono::DateTime<chrono::Utc>,
    actor: &Actor,
    spec: &NewAppSpec<'_>,
) -> Result<CreatedApp, Error<AppRefused>> {
    let name = app_name("name", spec.name)?;
    let environment = spec.environment;
    let organisation = spec.organisation;
    let slug = match spec.slug {
        Some(chosen) => chosen.to_owned(),
        None => {
            let suffix: String = rand::thread_rng()
                .sample_iter(&Alphanumeric)
                .take(6)
                .map(|b| char::from(b).to_ascii_lowercase())
                .collect();
            slug(&name, &suffix)
        }
    };
    let uuid = Uuid::new_v4();
    let key = tokens::issue_publishable_key(environment);
    let token = tokens::issue_app_token(environment);
    store::apps::insert_app(
        tx,
        &NewApp {
            uuid,
            name: &name,
            slug: &slug,
            environment: environment.as_str(),
            payment_publishable_key: &key,
            created_at: now,
            organisation_uuid: organisation,
        },
    )
    .await?;
    store::apps::insert_app_token(tx, uuid, &token.prefix, &token.hash, FIRST_KEY_NAME, now)
        .await?;
    // Every app starts with plans it can offer at once.
    for (position, group) in pricing::default_groups().into_iter().enumerate() {
        let position = i64::try_from(position).unwrap_or(i64::MAX);
        let row = plan_groups::group_row(Uuid::new_v4(), uuid, &group, position, 1, now);
        plan_groups::insert_group(tx, actor, &row, now).await?;
    }
    audit::record(
        tx,
        actor,
        "app.created",
        &format!("app:{uuid}"),
        serde_json::json!({
            "name": name,
            "environment": environment.as_str(),
            "organisation": organisation,
            "slug": slug,
            "token_prefix": token.prefix,
        }),
        now,
    )
    .await?;
    Ok(CreatedApp {
        uuid,
        slug,
        token: token.plain,
    })
}

pub(crate) async fn existing_app(db: &Db, app_uuid: Uuid) -> Result<AppRow, Error<AppRefused>> {
    match store::apps::app_by_uuid(db, app_uuid).await? {
        Some(app) => Ok(app),
        None => refused(AppRefused::AppNotFound),
    }
}

/// The name of the key every new app starts with.
pub const FIRST_KEY_NAME: &str = "First key";

/// Issues another AppToken, named `name`, for an existing app; the plain token is returned
/// once.
pub async fn create_token(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    name: &str,
) -> Result<String, Error<AppRefused>> {
    let name = tokens::key_name(name)?;
    let app = existing_app(db, app_uuid).await?;
    let environment = app.environment_kind();
    let token = tokens::issue_app_token(environment);
    let now = clock.now();
    let mut tx = db.begin().await?;
    store::apps::insert_app_token(&mut tx, app_uuid, &token.prefix, &token.hash, &name, now)
        .await?;
    audit::record(
        &mut tx,
        actor,
        "token.created",
        &format!("app:{app_uuid}"),
        serde_json::json!({"token_prefix": token.prefix, "name": name}),
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(token.plain)
}

/// Revokes the AppToken whose display prefix (or whole value) is given; with `app`, only a
/// token of that app.
pub async fn revoke_token(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app: Option<Uuid>,
    prefix_or_token: &str,
) -> Result<(), Error<AppRefused>> {
    let prefix = display_prefix(prefix_or_token.trim());
    let owner = store::apps::app_of_token_prefix(db, &prefix).await?;
    if owner.is_none() || (app.is_some() && owner != app) {
        return refused(AppRefused::TokenNotFound(prefix));
    }
    let owner = owner.unwrap_or_default();
    let name = store::apps::app_token(db, owner, &prefix)
        .await?
        .map(|t| t.name)
        .unwrap_or_default();
    let now = clock.now();
    let mut tx = db.begin().await?;
    if !store::apps::revoke_app_token(&mut tx, &prefix, now).await? {
        return refused(AppRefused::TokenNotFound(prefix));
    }
    audit::record(
        &mut tx,
        actor,
        "token.revoked",
        &format!("app:{owner}"),
        serde_json::json!({"token_prefix": prefix, "name": name}),
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The stored display prefix of a token: its kind and the first 8 characters of its secret.
fn display_prefix(value: &str) -> String {
    for kind in [tokens::SANDBOX_PREFIX, tokens::LIVE_PREFIX] {
        if let Some(secret) = value.strip_prefix(kind) {
            return format!("{kind}{}", secret.chars().take(8).collect::<String>());
        }
    }
    value.to_owned()
}

/// Sets a live app's keys for the real card processor: the publishable key replaces
/// `payment_publishable_key`, the secret key is stored sealed with `pii`. Neither refusals nor
/// the audit log ever repeat the secret key.
pub async fn set_payment_keys(
    db: &Db,
    clock: &Clock,
    pii: &PiiKey,
    actor: &Actor,
    app_uuid: Uuid,
    publishable_key: &str,
    secret_key: &str,
) -> Result<(), Error<AppRefused>> {
    let (publishable_key, secret_key) = (publishable_key.trim(), secret_key.trim());
    if let Err(why) = check_payment_keys(publishable_key, secret_key) {
        return refused(AppRefused::PaymentKeys(why));
    }
    let app = existing_app(db, app_uuid).await?;
    if app.environment != Environment::Live.as_str() {
        return refused(AppRefused::KeysForSandbox);
    }
    let sealed = pii.seal(secret_key.as_bytes());
    let mut tx = db.begin().await?;
    store::payments::set_app_payment_keys(&mut tx, app_uuid, publishable_key, &sealed).await?;
    audit_setting(
        &mut tx,
        clock,
        actor,
        app_uuid,
        "app.payment_keys_set",
        serde_json::json!(app.payment_publishable_key),
        serde_json::json!(publishable_key),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Sets the signing secret of the card processor's webhooks to a live app (stored sealed),
/// audited: until it is set, the processor's events about the app's payments are refused.
pub async fn set_payment_webhook_secret(
    db: &Db,
    clock: &Clock,
    pii: &PiiKey,
    actor: &Actor,
    app_uuid: Uuid,
    secret: &str,
) -> Result<(), Error<AppRefused>> {
    let secret = secret.trim();
    if let Err(why) = check_webhook_secret(secret) {
        return refused(AppRefused::WebhookSecret(why));
    }
    let app = existing_app(db, app_uuid).await?;
    if app.environment != Environment::Live.as_str() {
        return refused(AppRefused::KeysForSandbox);
    }
    set_webhook_secret(db, clock, pii, actor, &app, secret).await?;
    Ok(())
}

/// Whether a live app has the signing secret of the processor's webhooks.
pub async fn has_payment_webhook_secret(db: &Db, app_uuid: Uuid) -> store::Result<bool> {
    Ok(store::payments::app_webhook_secret_sealed(db, app_uuid)
        .await?
        .is_some())
}

/// What may be set of an app's brand; `None` leaves a field as it is.
#[derive(Debug, Default)]
pub struct BrandingChange<'a> {
    pub display_name: Option<&'a str>,
    pub primary_color: Option<&'a str>,
    pub logo_url: Option<&'a str>,
}

/// Sets an app's display name, colour (`#rgb`/`#rrggbb`) and logo (an https URL).
pub async fn set_branding(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    change: &BrandingChange<'_>,
) -> Result<(), Error<AppRefused>> {
    let name = change
        .display_name
        .map(|n| app_name("display_name", n))
        .transpose()?;
    let color = change
        .primary_color
        .map(|c| {
            brand_color(c.trim()).map(str::to_owned).ok_or_else(|| {
                FieldError::invalid("primary_color", "primary_color must look like #1b4d3e")
            })
        })
        .transpose()?;
    let logo = change
        .logo_url
        .map(|logo| {
            let url = url::Url::parse(logo.trim())
                .map_err(|_| FieldError::invalid("logo_url", "logo_url must be a URL"))?;
            let local = matches!(url.host_str(), Some("localhost" | "127.0.0.1"));
            if url.scheme() == "https" || (url.scheme() == "http" && local) {
                Ok(url.to_string())
            } else {
                Err(FieldError::invalid(
                    "logo_url",
                    "logo_url must be an https URL",
                ))
            }
        })
        .transpose()?;
    let before = existing_app(db, app_uuid).await?;
    let mut tx = db.begin().await?;
    store::apps::update_branding(
        &mut tx,
        app_uuid,
        name.as_deref(),
        color.as_deref(),
        logo.as_deref(),
    )
    .await?;
    audit_setting(
        &mut tx,
        clock,
        actor,
        app_uuid,
        "app.branding_set",
        serde_json::json!({"display_name": before.display_name, "primary_color": before.primary_color, "logo_url": before.logo_url}),
        serde_json::json!({"display_name": name, "primary_color": color, "logo_url": logo}),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The address an uploaded logo is served at: named by its digest, so a new logo gets a new
/// address and every copy may be cached for good.
pub fn logo_path(app_uuid: Uuid, sha256: &str) -> String {
    format!("/apps/{app_uuid}/logo/{sha256}.png")
}

/// Stores an uploaded logo (a PNG, checked and decoded here so that a bill never meets a
/// broken one) and makes it the app's logo: `logo_url` becomes its address under `public_url`,
/// which flows, e-mails, hosted pages and bills show. Returns that address.
pub async fn set_logo(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    public_url: &str,
    app_uuid: Uuid,
    bytes: Vec<u8>,
) -> Result<String, Error<AppRefused>> {
    let (width, height) = logo_dimensions(&bytes)?;
    if !crate::documents::image_decodes(&bytes) {
        return Err(
            FieldError::invalid("logo", "The logo could not be read as a PNG image.").into(),
        );
    }
    let before = existing_app(db, app_uuid).await?;
    let sha256 = super::documents::sha256_hex(&bytes);
    let url = format!(
        "{}{}",
        public_url.trim_end_matches('/'),
        logo_path(app_uuid, &sha256)
    );
    let size = bytes.len();
    let mut tx = db.begin().await?;
    store::apps::upsert_logo(
        &mut tx,
        &store::apps::LogoRow {
            app_uuid,
            content_type: "image/png".to_owned(),
            sha256: sha256.clone(),
            bytes,
            width: i32::try_from(width).unwrap_or(i32::MAX),
            height: i32::try_from(height).unwrap_or(i32::MAX),
            updated_at: clock.now(),
        },
    )
    .await?;
    store::apps::update_branding(&mut tx, app_uuid, None, None, Some(&url)).await?;
    audit_setting(
        &mut tx,
        clock,
        actor,
        app_uuid,
        "app.logo_uploaded",
        serde_json::json!({"logo_url": before.logo_url}),
        serde_json::json!({"logo_url": url, "sha256": sha256, "bytes": size, "width": width, "height": height}),
    )
    .await?;
    tx.commit().await?;
    Ok(url)
}

/// The app's uploaded logo, when it is the one the app shows (a logo URL set later elsewhere
/// takes its place).
pub async fn uploaded_logo(db: &Db, app: &AppRow) -> store::Result<Option<store::apps::LogoRow>> {
    let Some(url) = app.logo_url.as_deref() else {
        return Ok(None);
    };
    Ok(store::apps::logo_of_app(db, app.uuid)
        .await?
        .filter(|logo| url.ends_with(&logo_path(app.uuid, &logo.sha256))))
}

/// An uploaded logo by the address it is served at, for anyone (logos are public).
pub async fn served_logo(
    db: &Db,
    app_uuid: Uuid,
    sha256: &str,
) -> store::Result<Option<store::apps::LogoRow>> {
    Ok(store::apps::logo_of_app(db, app_uuid)
        .await?
        .filter(|logo| logo.sha256 == sha256))
}

/// Replaces the origins that may frame the app's flows and receive their close message (none:
/// a sandbox app may then be framed anywhere, a live app nowhere else).
pub async fn set_allowed_origins(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    origins: Vec<Origin>,
) -> Result<Vec<Origin>, Error<AppRefused>> {
    let origins = allowed_origins(origins).map_err(|e| Error::Refused(AppRefused::Origins(e)))?;
    let stored: Vec<String> = origins.iter().map(|o| o.as_str().to_owned()).collect();
    let before = existing_app(db, app_uuid).await?;
    let mut tx = db.begin().await?;
    store::apps::update_allowed_origins(&mut tx, app_uuid, &stored).await?;
    audit_setting(
        &mut tx,
        clock,
        actor,
        app_uuid,
        "app.origins_set",
        serde_json::from_str(&before.allowed_origins).unwrap_or_default(),
        serde_json::json!(stored),
    )
    .await?;
    tx.commit().await?;
    Ok(origins)
}

/// Origins from a text with one per line (or separated by spaces or commas).
pub fn parse_origins(text: &str) -> Result<Vec<Origin>, AppRefused> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .map(Origin::parse)
        .collect::<Result<Vec<_>, _>>()
        .map_err(AppRefused::Origins)
}

/// The support contacts as typed (blank fields are cleared).
#[derive(Debug, Default)]
pub struct SupportInput<'a> {
    pub name: &'a str,
    pub phone: &'a str,
    pub email: &'a str,
    pub hours: &'a str,
    pub url: &'a str,
}

fn optional_text(param: &str, raw: &str, max: usize) -> Result<Option<String>, FieldError> {
    let value = raw.trim();
    if value.is_empty() {
        return Ok(None);
    }
    if value.chars().count() > max || value.chars().any(char::is_control) {
        return Err(FieldError::invalid(
            param,
            format!("{param} must be at most {max} characters of text"),
        ));
    }
    Ok(Some(value.to_owned()))
}

/// Replaces the partner's support contacts that `support-info` serves beside the utility's.
pub async fn set_support(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    input: &SupportInput<'_>,
) -> Result<SupportContacts, Error<AppRefused>> {
    let app = existing_app(db, app_uuid).await?;
    let environment = app.environment_kind();
    let blank = |s: &str| s.trim().is_empty();
    let contacts = SupportContacts {
        name: optional_text("support_name", input.name, 100)?,
        phone: (!blank(input.phone))
            .then(|| parse_us_phone("support_phone", input.phone))
            .transpose()?,
        email: (!blank(input.email))
            .then(|| parse_email("support_email", input.email))
            .transpose()?,
        hours: optional_text("support_hours", input.hours, 200)?,
        url: (!blank(input.url))
            .then(|| parse_renewals_url("support_url", input.url, environment))
            .transpose()?,
    };
    let mut tx = db.begin().await?;
    store::apps::update_support(&mut tx, app_uuid, &contacts).await?;
    audit_setting(
        &mut tx,
        clock,
        actor,
        app_uuid,
        "app.support_set",
        serde_json::json!({"name": app.support_name, "phone": app.support_phone, "email": app.support_email, "hours": app.support_hours, "url": app.support_url}),
        serde_json::json!(contacts),
    )
    .await?;
    tx.commit().await?;
    Ok(contacts)
}

/// Sets (or, blank, clears) where renewal notices send customers whose account has no link of
/// its own.
pub async fn set_renewals_url(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    raw: &str,
) -> Result<Option<String>, Error<AppRefused>> {
    let parse = |app: &AppRow| {
        (!raw.trim().is_empty())
            .then(|| parse_renewals_url("renewals_url", raw, app.environment_kind()))
            .transpose()
    };
    let (field, action) = (AppText::RenewalsUrl, "app.renewals_url_set");
    set_text(db, clock, actor, app_uuid, field, action, parse).await
}

/// Sets (or, blank, clears) the short text the app's hosted landing page shows.
pub async fn set_landing_text(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    raw: &str,
) -> Result<Option<String>, Error<AppRefused>> {
    let parse = |_: &AppRow| crate::domain::hosted::parse_landing_text(raw);
    let (field, action) = (AppText::LandingText, "app.landing_text_set");
    set_text(db, clock, actor, app_uuid, field, action, parse).await
}

/// Sets (or clears) the app's text `field` to what `parse` makes of the input, audited as
/// `action`. Answers what was set.
async fn set_text(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    field: AppText,
    action: &str,
    parse: impl FnOnce(&AppRow) -> Result<Option<String>, FieldError>,
) -> Result<Option<String>, Error<AppRefused>> {
    let app = existing_app(db, app_uuid).await?;
    let value = parse(&app)?;
    let mut tx = db.begin().await?;
    store::apps::update_text(&mut tx, app_uuid, field, value.as_deref()).await?;
    audit_setting(
        &mut tx,
        clock,
        actor,
        app_uuid,
        action,
        serde_json::json!(app.text(field)),
        serde_json::json!(value),
    )
    .await?;
    tx.commit().await?;
    Ok(value)
}

/// Writes a change of one of the app's settings to the audit log: what it was and what it is.
async fn audit_setting(
    tx: &mut Tx,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    action: &str,
    before: serde_json::Value,
    after: serde_json::Value,
) -> store::Result<()> {
    audit::record(
        tx,
        actor,
        action,
        &format!("app:{app_uuid}"),
        serde_json::json!({"before": before, "after": after}),
        clock.now(),
    )
    .await
}

/// Notes that the AppToken with this hash was just used (for the dashboard's "last used"),
/// at most once a minute; a failure is only logged, never the caller's.
pub async fn note_token_use(db: Db, token_hash: String, now: chrono::DateTime<chrono::Utc>) {
    let result = async {
        let mut tx = db.begin().await?;
        store::apps::touch_app_token(&mut tx, &token_hash, now).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = result {
        tracing::warn!(error = %e, "could not note an AppToken's last use");
    }
}

/// Where an app stands against the checklist a live app must pass before customers may start
/// (a sandbox app is always open).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    pub live: bool,
    /// What a live app still lacks, in the checklist's order.
    pub missing: Vec<ReadinessItem>,
}

impl Readiness {
    /// Whether customers may start: sign up on the hosted page, open an enrollment flow, give
    /// their SSN.
    pub fn is_open(&self) -> bool {
        !self.live || self.missing.is_empty()
    }
}

/// The app's readiness, read from its settings as they are now.
pub async fn readiness(conn: impl Into<store::Conn<'_>>, app: &AppRow) -> store::Result<Readiness> {
    if app.environment_kind() != Environment::Live {
        return Ok(Readiness {
            live: false,
            missing: Vec::new(),
        });
    }
    let counts = store::apps::readiness_counts(conn, app.uuid).await?;
    let given = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
    let facts = ReadinessFacts {
        has_color: given(&app.primary_color),
        has_logo: given(&app.logo_url) || counts.logos > 0,
        has_support_email: given(&app.support_email),
        has_support_phone: given(&app.support_phone),
        has_payment_keys: !app.payment_publishable_key.trim().is_empty() && counts.secret_keys > 0,
        has_processor_webhook_secret: counts.webhook_secrets > 0,
        allowed_origins: app.origins().len(),
        has_month_to_month_default: counts.month_to_month_defaults > 0,
        unverified_webhook_endpoints: usize::try_from(counts.unverified_endpoints)
            .unwrap_or(usize::MAX),
    };
    Ok(Readiness {
        live: true,
        missing: missing_for_live(&facts),
    })
}

/// Sets the signing secret of the processor's webhooks to a live app (sealed), audited.
pub async fn set_webhook_secret(
    db: &Db,
    clock: &Clock,
    pii: &PiiKey,
    actor: &Actor,
    app: &AppRow,
    secret: &str,
) -> store::Result<()> {
    let sealed = pii.seal(secret.trim().as_bytes());
    let mut tx = db.begin().await?;
    store::payments::set_app_webhook_secret(&mut tx, app.uuid, &sealed).await?;
    audit::record(
        &mut tx,
        actor,
        "app.payment_webhook_secret_set",
        &format!("app:{}", app.uuid),
        serde_json::json!({}),
        clock.now(),
    )
    .await?;
    tx.commit().await
}
