//! An app's AppTokens on its page: creating one (its secret shown once) and revoking one
//! after a confirmation page.

use axum::{
    extract::{Path, Query, State},
    http::StatusCode,
    Form,
};
use serde::Deserialize;
use uuid::Uuid;

use super::apps::{after_change, render_app, render_app_typed};
use super::{html, member_app, refusal, shown, views, Dash, PageResult};
use crate::http::{error::ApiError, AppState};
use crate::{
    services::{self, apps::AppRefused},
    store::{self, apps::AppRow},
};

#[derive(Deserialize)]
pub(super) struct CreateTokenForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
}

pub(super) async fn create_token(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<CreateTokenForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let result =
        services::apps::create_token(&state.db, &state.clock, &dash.actor(), app.uuid, &form.name)
            .await;
    match result {
        Ok(token) => {
            shown::show_once(
                &state,
                &dash.session,
                shown::Secret {
                    made: shown::Made::Key,
                    app: app.uuid,
                    endpoint: None,
                    label: form.name.trim(),
                    secret: &token,
                },
            )
            .await
        }
        Err(services::Error::Refused(AppRefused::Field(e))) if e.param == "name" => {
            let refill = views::Refill {
                key_name: views::Typed::refused(&form.name, e.message),
                ..views::Refill::default()
            };
            let page = render_app_typed(&state, &dash, &app, None, None, &refill).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
        Err(e) => {
            let why = refusal(e)?;
            let page = render_app(&state, &dash, &app, None, Some(&why)).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
    }
}

#[derive(Deserialize)]
pub(super) struct RevokeForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    prefix: String,
    /// `yes` from the confirmation page; anything else asks first.
    #[serde(default)]
    confirm: String,
}

#[derive(Deserialize)]
pub(super) struct RevokeQuery {
    #[serde(default)]
    prefix: String,
}

/// Asks before a key is revoked, naming it and what stops working.
pub(super) async fn revoke_page(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Query(query): Query<RevokeQuery>,
) -> PageResult {
    let app = member_app(&state, &dash, app).await?;
    confirm_revoke(&state, &dash, &app, &query.prefix).await
}

pub(super) async fn confirm_revoke(
    state: &AppState,
    dash: &Dash,
    app: &AppRow,
    prefix: &str,
) -> PageResult {
    let tokens = store::apps::app_tokens(&state.db, app.uuid).await?;
    let key = tokens
        .iter()
        .find(|t| t.prefix == prefix.trim() && t.revoked_at.is_none())
        .ok_or_else(|| ApiError::not_found("key"))?;
    let others = tokens
        .iter()
        .filter(|t| t.revoked_at.is_none() && t.prefix != key.prefix)
        .count();
    let mut effects = vec![format!(
        "The key “{}” ({}…) of {} stops working at once: every API request made with it is refused.",
        key.name, key.prefix, app.display_name
    )];
    effects.push(match others {
        0 => "It is the app's only active key: every program of the app that calls the API stops until a new key is made and put in its place.".to_owned(),
        1 => "The app's other active key keeps working.".to_owned(),
        n => format!("The app's other {n} active keys keep working."),
    });
    effects.push("A revoked key never works again; this cannot be undone.".to_owned());
    let base = format!("/dashboard/apps/{}", app.uuid);
    Ok(html(
        StatusCode::OK,
        views::confirm(
            &dash.nav(),
            views::Confirm {
                title: format!("Revoke the key “{}”?", key.name),
                effects,
                action: format!("{base}/tokens/revoke"),
                fields: vec![("prefix", key.prefix.clone())],
                button: "Revoke the key",
                cancel: base,
            },
        ),
    ))
}

pub(super) async fn revoke_token(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<RevokeForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    if form.confirm != "yes" {
        return confirm_revoke(&state, &dash, &app, &form.prefix).await;
    }
    let result = services::apps::revoke_token(
        &state.db,
        &state.clock,
        &dash.actor(),
        Some(app.uuid),
        &form.prefix,
    )
    .await;
    after_change(&state, &dash, &app, result, "revoked").await
}
