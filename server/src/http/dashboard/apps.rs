//! The apps list, creating an app, and an app's page with what a change of it answers: back
//! to the page saying so, or the page again with why not beside what was typed.

use app::api::Environment;
use axum::{
    extract::{Path, Query, State},
    http::StatusCode,
    Form,
};
use serde::Deserialize;
use uuid::Uuid;

use super::{
    app_changed, html, member_app, refusal, see_other, shown, views, webhooks, Dash, Done,
    PageResult,
};
use crate::http::{
    error::{ApiError, ApiResult},
    AppState,
};
use crate::{
    domain::users::Role,
    services::{self, apps::AppRefused},
    store::{self, apps::AppRow},
};

/// What a `?done=` after a redirect says (only these fixed texts are ever shown).
pub(super) fn done_message(done: Option<&str>) -> Option<&'static str> {
    Some(match done? {
        "password" => "Your password was changed.",
        "branding" => "The brand was saved.",
        "logo" => "The logo was uploaded.",
        "origins" => "The allowed origins were saved.",
        "support" => "The support contacts were saved.",
        "renewal" => "The renewal link was saved.",
        "landing" => "The landing text was saved.",
        "late_fee" => "The late fee was saved.",
        "keys" => "The payment keys were saved.",
        "webhook_secret" => "The webhook signing secret was saved.",
        "revoked" => "The key was revoked.",
        _ => return None,
    })
}

pub(super) async fn home(
    State(state): State<AppState>,
    dash: Dash,
    Query(done): Query<Done>,
) -> PageResult {
    let page = apps_list(
        &state,
        &dash,
        &views::Typed::default(),
        done_message(done.done.as_deref()),
        None,
    )
    .await?;
    Ok(html(StatusCode::OK, page))
}

pub(super) async fn apps_list(
    state: &AppState,
    dash: &Dash,
    typed: &views::Typed,
    notice: Option<&str>,
    error: Option<&str>,
) -> ApiResult<String> {
    let member = dash.member();
    let apps = match member.role {
        Role::Operator => store::apps::apps_of(&state.db, None).await?,
        Role::Partner => match member.organisation {
            Some(org) => store::apps::apps_of(&state.db, Some(org)).await?,
            None => Vec::new(),
        },
    };
    let organisations = if member.is_operator() {
        store::users::organisations(&state.db).await?
    } else {
        Vec::new()
    };
    Ok(views::apps(
        &dash.nav(),
        &apps,
        &organisations,
        typed,
        notice,
        error,
    ))
}

#[derive(Deserialize)]
pub(super) struct CreateAppForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    environment: String,
    /// The operator's choice of owner (blank: the platform's own).
    #[serde(default)]
    organisation: String,
}

pub(super) async fn create_app(
    State(state): State<AppState>,
    dash: Dash,
    Form(form): Form<CreateAppForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let member = dash.member();
    let kept = views::Typed {
        value: form.name.clone(),
        error: None,
    };
    let environment = match Environment::parse(form.environment.trim()) {
        Some(e) => e,
        None => {
            let page =
                apps_list(&state, &dash, &kept, None, Some("Choose sandbox or live.")).await?;
            return Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page));
        }
    };
    let organisation = if member.is_operator() {
        match form.organisation.trim() {
            "" => None,
            raw => {
                let known = store::users::organisations(&state.db).await?;
                let found = Uuid::parse_str(raw)
                    .ok()
                    .filter(|u| known.iter().any(|o| o.uuid == *u));
                match found {
                    Some(u) => Some(u),
                    None => return Err(ApiError::not_found("organisation").into()),
                }
            }
        }
    } else {
        if environment == Environment::Live {
            let page = apps_list(
                &state,
                &dash,
                &kept,
                None,
                Some("Live apps are created by the operator; ask them for one."),
            )
            .await?;
            return Ok(html(StatusCode::FORBIDDEN, page));
        }
        member.organisation
    };
    match services::apps::create_app(
        &state.db,
        &state.clock,
        &dash.actor(),
        &form.name,
        environment,
        organisation,
    )
    .await
    {
        Ok(created) => {
            shown::show_once(
                &state,
                &dash.session,
                shown::Secret {
                    made: shown::Made::App,
                    app: created.uuid,
                    endpoint: None,
                    label: services::apps::FIRST_KEY_NAME,
                    secret: &created.token,
                },
            )
            .await
        }
        Err(services::Error::Refused(AppRefused::Field(e))) if e.param == "name" => {
            let typed = views::Typed::refused(
                &form.name,
                "Give the app a name of 1 to 100 characters, on one line.",
            );
            let page = apps_list(&state, &dash, &typed, None, None).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
        Err(e) => {
            let why = refusal(e)?;
            let page = apps_list(&state, &dash, &kept, None, Some(&why)).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
    }
}

pub(super) async fn app_page(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Query(done): Query<Done>,
) -> PageResult {
    let app = member_app(&state, &dash, app).await?;
    let page = render_app(
        &state,
        &dash,
        &app,
        done_message(done.done.as_deref()),
        None,
    )
    .await?;
    Ok(html(StatusCode::OK, page))
}

pub(super) async fn render_app(
    state: &AppState,
    dash: &Dash,
    app: &AppRow,
    notice: Option<&str>,
    error: Option<&str>,
) -> ApiResult<String> {
    render_app_typed(state, dash, app, notice, error, &views::Refill::default()).await
}

/// The app page, with what was typed into its key or webhook form kept after a refusal.
pub(super) async fn render_app_typed(
    state: &AppState,
    dash: &Dash,
    app: &AppRow,
    notice: Option<&str>,
    error: Option<&str>,
    refill: &views::Refill,
) -> ApiResult<String> {
    let tokens = store::apps::app_tokens(&state.db, app.uuid).await?;
    let endpoints = webhooks::endpoints(state, app.uuid).await?;
    let flow_url = format!(
        "{}/flow/enrollment?app={}",
        state.config.public_url(),
        app.uuid
    );
    let late_fee = services::collections::late_fee_setting(&state.db, app.uuid).await?;
    let webhook_secret_set =
        services::apps::has_payment_webhook_secret(&state.db, app.uuid).await?;
    let processor_webhook_url = format!(
        "{}/processor/webhooks/{}",
        state.config.public_url(),
        app.uuid
    );
    let readiness = services::apps::readiness(&state.db, app).await?;
    Ok(views::app(
        &dash.nav(),
        &views::AppPage {
            app,
            late_fee_percent: late_fee.map(|p| p.to_wire()),
            tokens: &tokens,
            endpoints: &endpoints,
            flow_url: &flow_url,
            webhook_secret_set,
            processor_webhook_url: &processor_webhook_url,
            operator: dash.member().is_operator(),
            readiness: &readiness,
            key_name: &refill.key_name,
            webhook_url: &refill.webhook_url,
            kept: refill.kept.as_ref(),
            notice,
            error,
        },
    ))
}

/// After a change of `app`: back to its page saying so, or the page again with why not.
pub(super) async fn after_change<T>(
    state: &AppState,
    dash: &Dash,
    app: &AppRow,
    result: Result<T, services::Error<AppRefused>>,
    done: &str,
) -> PageResult {
    match result {
        Ok(_) => {
            app_changed(state);
            Ok(see_other(&format!(
                "/dashboard/apps/{}?done={done}",
                app.uuid
            )))
        }
        Err(e) => {
            let why = refusal(e)?;
            let page = render_app(state, dash, app, None, Some(&why)).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
    }
}

/// After a form of the app page (`form`, its `done` name too) changed `app`: back to its page
/// saying so, or the page again with what was typed (`typed`, by field name) in that form and
/// why not beside it, so that nothing typed is lost to one refused value.
pub(super) async fn after_form<T>(
    state: &AppState,
    dash: &Dash,
    app: &AppRow,
    result: Result<T, services::Error<AppRefused>>,
    form: &'static str,
    typed: Vec<(&'static str, String)>,
) -> PageResult {
    match result {
        Ok(_) => {
            app_changed(state);
            Ok(see_other(&format!(
                "/dashboard/apps/{}?done={form}",
                app.uuid
            )))
        }
        Err(e) => {
            let refill = views::Refill {
                kept: Some(views::Kept {
                    form,
                    values: typed,
                    error: refusal(e)?,
                }),
                ..views::Refill::default()
            };
            let page = render_app_typed(state, dash, app, None, None, &refill).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
    }
}
