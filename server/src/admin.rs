//! Operator actions of the CLI and the first start. App changes go through
//! `services::apps`, the functions the dashboard calls too (recorded in the audit log as made
//! by `cli`); the utility's answers through `services::enrollment`.

use app::api::Environment;
use uuid::Uuid;

use crate::{
    clock::Clock,
    crypto::PiiKey,
    domain::{apps::Origin, enrollment::UtilityRecord},
    services::{
        self,
        apps::{self as app_service, AppRefused},
        audit::Actor,
    },
    store::{self, Db},
};

pub use services::apps::{BrandingChange, CreatedApp};

/// A refusal or failure of an app change as the command line prints it.
fn cli_error(e: services::Error<AppRefused>) -> anyhow::Error {
    match e {
        services::Error::Refused(why) => anyhow::anyhow!(why),
        services::Error::Failed(e) => e,
    }
}

/// Creates an app of the platform's own (no organisation), as the CLI and the first start do.
pub async fn create_app(
    db: &Db,
    clock: &Clock,
    name: &str,
    environment: Environment,
) -> anyhow::Result<CreatedApp> {
    app_service::create_app(db, clock, &Actor::Cli, name, environment, None)
        .await
        .map_err(cli_error)
}

/// Issues another AppToken for an existing app.
pub async fn create_token(db: &Db, clock: &Clock, app_uuid: Uuid) -> anyhow::Result<String> {
    app_service::create_token(db, clock, &Actor::Cli, app_uuid, "Made with the CLI")
        .await
        .map_err(cli_error)
}

/// Revokes the AppToken whose display prefix (or whole value) is given.
pub async fn revoke_token(db: &Db, clock: &Clock, prefix_or_token: &str) -> anyhow::Result<()> {
    app_service::revoke_token(db, clock, &Actor::Cli, None, prefix_or_token)
        .await
        .map_err(cli_error)
}

/// Sets a live app's keys for the real card processor (the secret key is stored sealed).
/// Errors never repeat the secret key.
pub async fn set_payment_keys(
    db: &Db,
    pii: &PiiKey,
    app_uuid: Uuid,
    publishable_key: &str,
    secret_key: &str,
) -> anyhow::Result<()> {
    let clock = Clock::system();
    app_service::set_payment_keys(
        db,
        &clock,
        pii,
        &Actor::Cli,
        app_uuid,
        publishable_key,
        secret_key,
    )
    .await
    .map_err(cli_error)
}

/// Sets the signing secret of the card processor's webhooks to a live app (stored sealed).
pub async fn set_payment_webhook_secret(
    db: &Db,
    pii: &PiiKey,
    app_uuid: Uuid,
    secret: &str,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        !secret.trim().is_empty(),
        "the webhook signing secret is empty"
    );
    let app = crate::store::apps::app_by_uuid(db, app_uuid)
        .await?
        .filter(|a| a.environment == Environment::Live.as_str())
        .ok_or_else(|| anyhow::anyhow!("no live app {app_uuid}"))?;
    services::apps::set_webhook_secret(db, &Clock::system(), pii, &Actor::Cli, &app, secret)
        .await?;
    Ok(())
}

/// Sets an app's display name, colour (`#rgb`/`#rrggbb`) and logo (an https URL).
pub async fn set_branding(
    db: &Db,
    app_uuid: Uuid,
    change: &BrandingChange<'_>,
) -> anyhow::Result<()> {
    app_service::set_branding(db, &Clock::system(), &Actor::Cli, app_uuid, change)
        .await
        .map_err(cli_error)
}

/// Sets (blank: clears) the text of the app's hosted landing page.
pub async fn set_landing_text(
    db: &Db,
    app_uuid: Uuid,
    text: &str,
) -> anyhow::Result<Option<String>> {
    app_service::set_landing_text(db, &Clock::system(), &Actor::Cli, app_uuid, text)
        .await
        .map_err(cli_error)
}

/// Replaces the app's support contacts (name, phone, e-mail, hours, web page; blank clears).
pub async fn set_support(
    db: &Db,
    app_uuid: Uuid,
    input: &app_service::SupportInput<'_>,
) -> anyhow::Result<()> {
    app_service::set_support(db, &Clock::system(), &Actor::Cli, app_uuid, input)
        .await
        .map(|_| ())
        .map_err(cli_error)
}

/// Where the app stands against a live app's readiness checklist.
pub async fn readiness(db: &Db, app_uuid: Uuid) -> anyhow::Result<app_service::Readiness> {
    let app = store::apps::app_by_uuid(db, app_uuid)
        .await?
        .ok_or_else(|| anyhow::anyhow!("no such app"))?;
    Ok(app_service::readiness(db, &app).await?)
}

/// Replaces the origins that may frame the app's flows and receive their close message.
pub async fn set_allowed_origins(
    db: &Db,
    app_uuid: Uuid,
    origins: Vec<Origin>,
) -> anyhow::Result<Vec<Origin>> {
    app_service::set_allowed_origins(db, &Clock::system(), &Actor::Cli, app_uuid, origins)
        .await
        .map_err(cli_error)
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
