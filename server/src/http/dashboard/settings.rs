//! The forms of an app's page that change its settings: brand, allowed origins, support
//! contacts, renewal link, landing text, late fee, payment keys and the processor's webhook
//! signing secret.

use axum::{
    extract::{Path, State},
    Form,
};
use serde::Deserialize;
use uuid::Uuid;

use super::apps::after_form;
use super::{member_app, Dash, PageResult};
use crate::http::AppState;
use crate::services::{
    self,
    apps::{BrandingChange, SupportInput},
};

#[derive(Deserialize)]
pub(super) struct BrandingForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    primary_color: String,
    #[serde(default)]
    logo_url: String,
}

pub(super) fn non_blank(s: &str) -> Option<&str> {
    let s = s.trim();
    (!s.is_empty()).then_some(s)
}

pub(super) async fn set_branding(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<BrandingForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let change = BrandingChange {
        display_name: Some(form.display_name.as_str()),
        primary_color: non_blank(&form.primary_color),
        logo_url: non_blank(&form.logo_url),
    };
    let result =
        services::apps::set_branding(&state.db, &state.clock, &dash.actor(), app.uuid, &change)
            .await;
    let typed = vec![
        ("display_name", form.display_name.clone()),
        ("primary_color", form.primary_color.clone()),
        ("logo_url", form.logo_url.clone()),
    ];
    after_form(&state, &dash, &app, result, "branding", typed).await
}

#[derive(Deserialize)]
pub(super) struct OriginsForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    origins: String,
}

pub(super) async fn set_origins(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<OriginsForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let result = match services::apps::parse_origins(&form.origins) {
        Ok(origins) => {
            services::apps::set_allowed_origins(
                &state.db,
                &state.clock,
                &dash.actor(),
                app.uuid,
                origins,
            )
            .await
        }
        Err(why) => Err(services::Error::Refused(why)),
    };
    let typed = vec![("origins", form.origins.clone())];
    after_form(&state, &dash, &app, result, "origins", typed).await
}

#[derive(Deserialize)]
pub(super) struct SupportForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    phone: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    hours: String,
    #[serde(default)]
    url: String,
}

pub(super) async fn set_support(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<SupportForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let input = SupportInput {
        name: &form.name,
        phone: &form.phone,
        email: &form.email,
        hours: &form.hours,
        url: &form.url,
    };
    let result =
        services::apps::set_support(&state.db, &state.clock, &dash.actor(), app.uuid, &input).await;
    let typed = vec![
        ("name", form.name.clone()),
        ("phone", form.phone.clone()),
        ("email", form.email.clone()),
        ("hours", form.hours.clone()),
        ("url", form.url.clone()),
    ];
    after_form(&state, &dash, &app, result, "support", typed).await
}

#[derive(Deserialize)]
pub(super) struct RenewalForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    renewals_url: String,
}

pub(super) async fn set_renewal(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<RenewalForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let result = services::apps::set_renewals_url(
        &state.db,
        &state.clock,
        &dash.actor(),
        app.uuid,
        &form.renewals_url,
    )
    .await;
    let typed = vec![("renewals_url", form.renewals_url.clone())];
    after_form(&state, &dash, &app, result, "renewal", typed).await
}

#[derive(Deserialize)]
pub(super) struct LandingForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    landing_text: String,
}

pub(super) async fn set_landing(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<LandingForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let result = services::apps::set_landing_text(
        &state.db,
        &state.clock,
        &dash.actor(),
        app.uuid,
        &form.landing_text,
    )
    .await;
    let typed = vec![("landing_text", form.landing_text.clone())];
    after_form(&state, &dash, &app, result, "landing", typed).await
}

#[derive(Deserialize)]
pub(super) struct LateFeeForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    late_fee_percent: String,
}

/// The app's late fee (blank or `off`: none); the operator's to set.
pub(super) async fn set_late_fee(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<LateFeeForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    dash.operator_only("sets the late fee")?;
    let result = services::collections::set_late_fee(
        &state.db,
        &state.clock,
        &dash.actor(),
        app.uuid,
        &form.late_fee_percent,
    )
    .await;
    let typed = vec![("late_fee_percent", form.late_fee_percent.clone())];
    after_form(&state, &dash, &app, result, "late_fee", typed).await
}

#[derive(Deserialize)]
pub(super) struct PaymentKeysForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    publishable_key: String,
    #[serde(default)]
    secret_key: String,
}

pub(super) async fn set_payment_keys(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<PaymentKeysForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    dash.operator_only("sets a live app's payment keys")?;
    let result = services::apps::set_payment_keys(
        &state.db,
        &state.clock,
        &state.pii,
        &dash.actor(),
        app.uuid,
        &form.publishable_key,
        &form.secret_key,
    )
    .await;
    // The secret key is never written back into the page; the publishable one is no secret.
    let typed = vec![("publishable_key", form.publishable_key.clone())];
    after_form(&state, &dash, &app, result, "keys", typed).await
}

#[derive(Deserialize)]
pub(super) struct WebhookSecretForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    webhook_secret: String,
}

pub(super) async fn set_payment_webhook_secret(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<WebhookSecretForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    dash.operator_only("sets a live app's webhook signing secret")?;
    let result = services::apps::set_payment_webhook_secret(
        &state.db,
        &state.clock,
        &state.pii,
        &dash.actor(),
        app.uuid,
        &form.webhook_secret,
    )
    .await;
    after_form(&state, &dash, &app, result, "webhook_secret", Vec::new()).await
}
