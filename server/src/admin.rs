//! Operator actions shared by the CLI and the first start: creating apps (with their default
//! plan groups) and their tokens, setting a live app's keys for the card processor, its brand
//! and the origins that may embed its flows.

use app::api::Environment;
use rand::{distributions::Alphanumeric, Rng};
use uuid::Uuid;

use crate::{
    clock::Clock,
    crypto::PiiKey,
    domain::{
        apps::{allowed_origins, brand_color, check_payment_keys, slug, Origin},
        enrollment::UtilityRecord,
        pricing, tokens,
    },
    store::{self, apps::NewApp, market::PlanGroupRow, Db},
};

/// A new app and its first AppToken (the plain token exists only here).
pub struct CreatedApp {
    pub uuid: Uuid,
    pub slug: String,
    pub token: String,
}

pub async fn create_app(
    db: &Db,
    clock: &Clock,
    name: &str,
    environment: Environment,
) -> anyhow::Result<CreatedApp> {
    let name = name.trim();
    anyhow::ensure!(
        !name.is_empty() && name.chars().count() <= 100,
        "an app's name is 1 to 100 characters"
    );
    let suffix: String = rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(6)
        .map(|b| char::from(b).to_ascii_lowercase())
        .collect();
    let uuid = Uuid::new_v4();
    let slug = slug(name, &suffix);
    let key = tokens::issue_publishable_key(environment);
    let token = tokens::issue_app_token(environment);
    let now = clock.now();
    let mut tx = db.begin().await?;
    store::apps::insert_app(
        &mut tx,
        &NewApp {
            uuid,
            name,
            slug: &slug,
            environment: environment.as_str(),
            payment_publishable_key: &key,
            created_at: now,
        },
    )
    .await?;
    store::apps::insert_app_token(&mut tx, uuid, &token.prefix, &token.hash, now).await?;
    // Every app starts with plans it can offer at once.
    for (position, group) in pricing::default_groups().into_iter().enumerate() {
        let row = PlanGroupRow {
            uuid: Uuid::new_v4(),
            app_uuid: uuid,
            name: group.name,
            plan_type: group.plan_type.as_str().to_owned(),
            term_months: i64::from(group.term_months),
            base_charge_cents_per_month: group.base_charge_cents_per_month,
            energy_margin_cents_per_kwh: group.energy_margin_cents_per_kwh.to_string(),
            partner_commission_cents_per_month: group.partner_commission_cents_per_month,
            solar_buyback_cents_per_kwh: group.solar_buyback_cents_per_kwh.to_string(),
            early_termination_fee_cents: group.early_termination_fee_cents,
            renewable_percent: i64::from(group.renewable_percent),
            tos_version: group.tos_version,
            is_month_to_month_default: group.is_month_to_month_default,
            position: i64::try_from(position)?,
            created_at: now,
        };
        store::market::insert_plan_group(&mut tx, &row).await?;
    }
    tx.commit().await?;
    Ok(CreatedApp {
        uuid,
        slug,
        token: token.plain,
    })
}

/// Issues another AppToken for an existing app.
pub async fn create_token(db: &Db, clock: &Clock, app_uuid: Uuid) -> anyhow::Result<String> {
    let app = store::apps::app_by_uuid(db, app_uuid)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no app {app_uuid}"))?;
    let environment = Environment::parse(&app.environment).unwrap_or(Environment::Live);
    let token = tokens::issue_app_token(environment);
    let mut tx = db.begin().await?;
    store::apps::insert_app_token(&mut tx, app_uuid, &token.prefix, &token.hash, clock.now())
        .await?;
    tx.commit().await?;
    Ok(token.plain)
}

/// Revokes the AppToken whose display prefix (or whole value) is given.
pub async fn revoke_token(db: &Db, clock: &Clock, prefix_or_token: &str) -> anyhow::Result<()> {
    let prefix = display_prefix(prefix_or_token);
    let mut tx = db.begin().await?;
    let revoked = store::apps::revoke_app_token(&mut tx, &prefix, clock.now()).await?;
    tx.commit().await?;
    anyhow::ensure!(revoked, "no active token with prefix {prefix}");
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
/// `payment_publishable_key`, the secret key is stored sealed with `pii`. Errors never repeat
/// the secret key.
pub async fn set_payment_keys(
    db: &Db,
    pii: &PiiKey,
    app_uuid: Uuid,
    publishable_key: &str,
    secret_key: &str,
) -> anyhow::Result<()> {
    let (publishable_key, secret_key) = (publishable_key.trim(), secret_key.trim());
    check_payment_keys(publishable_key, secret_key).map_err(|e| anyhow::anyhow!(e))?;
    let app = store::apps::app_by_uuid(db, app_uuid)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no app {app_uuid}"))?;
    anyhow::ensure!(
        app.environment == Environment::Live.as_str(),
        "sandbox apps use the built-in test processor; keys are for live apps"
    );
    let sealed = pii.seal(secret_key.as_bytes());
    let mut tx = db.begin().await?;
    let set =
        store::payments::set_app_payment_keys(&mut tx, app_uuid, publishable_key, &sealed).await?;
    tx.commit().await?;
    anyhow::ensure!(set, "no app {app_uuid}");
    Ok(())
}

/// What an operator may set of an app's brand until the dashboard does it.
#[derive(Debug, Default)]
pub struct BrandingChange<'a> {
    pub display_name: Option<&'a str>,
    pub primary_color: Option<&'a str>,
    pub logo_url: Option<&'a str>,
}

/// Sets an app's display name, colour (`#rgb`/`#rrggbb`) and logo (an https URL).
pub async fn set_branding(
    db: &Db,
    app_uuid: Uuid,
    change: &BrandingChange<'_>,
) -> anyhow::Result<()> {
    let name = change.display_name.map(str::trim);
    if let Some(name) = name {
        anyhow::ensure!(
            !name.is_empty() && name.chars().count() <= 100,
            "the display name must have 1 to 100 characters"
        );
    }
    let color = change
        .primary_color
        .map(|c| {
            brand_color(c.trim())
                .ok_or_else(|| anyhow::anyhow!("the colour must look like #1b4d3e"))
        })
        .transpose()?;
    if let Some(logo) = change.logo_url {
        let url = url::Url::parse(logo).map_err(|_| anyhow::anyhow!("the logo must be a URL"))?;
        let local = matches!(url.host_str(), Some("localhost" | "127.0.0.1"));
        anyhow::ensure!(
            url.scheme() == "https" || (url.scheme() == "http" && local),
            "the logo must be an https URL"
        );
    }
    let mut tx = db.begin().await?;
    let set = store::apps::update_branding(&mut tx, app_uuid, name, color, change.logo_url).await?;
    tx.commit().await?;
    anyhow::ensure!(set, "no app {app_uuid}");
    Ok(())
}

/// Replaces the origins that may frame the app's flows and receive their close message (none:
/// a sandbox app may then be framed anywhere, a live app nowhere else).
pub async fn set_allowed_origins(
    db: &Db,
    app_uuid: Uuid,
    origins: Vec<Origin>,
) -> anyhow::Result<Vec<Origin>> {
    let origins = allowed_origins(origins).map_err(|e| anyhow::anyhow!(e))?;
    let stored: Vec<String> = origins.iter().map(|o| o.as_str().to_owned()).collect();
    let mut tx = db.begin().await?;
    let set = store::apps::update_allowed_origins(&mut tx, app_uuid, &stored).await?;
    tx.commit().await?;
    anyhow::ensure!(set, "no app {app_uuid}");
    Ok(origins)
}

/// The live submissions to the utility, oldest first (only those waiting for an answer when
/// `pending_only`).
pub async fn utility_submissions(
    db: &Db,
    pending_only: bool,
) -> anyhow::Result<Vec<store::utility::SubmissionRow>> {
    Ok(store::utility::submissions(db, pending_only).await?)
}

/// Records the utility's answer to a live submission and moves the enrollment on, all in one
/// transaction.
pub async fn record_utility_answer(
    db: &Db,
    clock: &Clock,
    submission_uuid: Uuid,
    record: &UtilityRecord,
) -> anyhow::Result<store::utility::SubmissionRow> {
    let submission = store::utility::submission(db, submission_uuid)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no submission {submission_uuid}"))?;
    let clock = clock.for_account(db, submission.account_uuid).await?;
    let mut tx = db.begin().await?;
    let recorded = crate::services::enrollment::record_utility_answer(
        &mut tx,
        &clock,
        submission_uuid,
        record,
    )
    .await?
    .map_err(|why| anyhow::anyhow!(why))?;
    tx.commit().await?;
    Ok(recorded)
}
