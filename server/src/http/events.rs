//! Events of the app (`/v1/app/events`): listed, read, and delivered again to its webhook
//! endpoints.

use app::api::{
    background::{DeliveriesScheduled, Event, RedeliverIn},
    ErrorEnvelope, List,
};
use axum::{extract::State, http::StatusCode};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::{
    auth::AppPrincipal,
    error::{ApiError, ApiResult, ErrorCode},
    extract::{Json, Path, Query},
    pagination::Page,
    routes, ApiRouter, AppState,
};
use crate::{
    domain::events::is_known_event_type,
    services::webhooks,
    store::{self, events::EventFilter},
    webhooks::render_event,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(list_events))
        .routes(routes!(get_event))
        .routes(routes!(redeliver_event))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListEventsQuery {
    /// 1 to 100, default 20.
    limit: Option<u32>,
    offset: Option<u64>,
    /// Only events of this type.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    kind: Option<String>,
    /// Only events of this account.
    account_uuid: Option<Uuid>,
}

/// List the app's events, newest first.
#[utoipa::path(
    get, path = "/v1/app/events", tag = "events",
    params(ListEventsQuery),
    responses(
        (status = 200, description = "A page of events", body = List<Event>),
        (status = 400, description = "A parameter is invalid", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn list_events(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Query(q): Query<ListEventsQuery>,
) -> ApiResult<axum::Json<List<Event>>> {
    let page = Page::parse(q.limit, q.offset)?;
    if let Some(kind) = q.kind.as_deref() {
        if !is_known_event_type(kind) {
            return Err(ApiError::new(
                ErrorCode::ParameterInvalid,
                format!(
                    "unknown event type {kind}; the event types are: {}",
                    crate::domain::events::EVENT_TYPES.join(", ")
                ),
            )
            .with_param("type"));
        }
    }
    let rows = store::events::list_events(
        &state.db,
        &EventFilter {
            app_uuid: principal.app.uuid,
            kind: q.kind.as_deref(),
            account_uuid: q.account_uuid,
            limit: page.limit,
            offset: page.offset,
        },
    )
    .await?;
    let environment = principal.environment();
    let events = rows.iter().map(|r| render_event(r, environment)).collect();
    let account = q.account_uuid.map(|u| u.to_string());
    Ok(axum::Json(page.list(
        events,
        "/v1/app/events",
        &[
            ("type", q.kind.as_deref()),
            ("account_uuid", account.as_deref()),
        ],
    )))
}

/// Get one of the app's events.
#[utoipa::path(
    get, path = "/v1/app/events/{event_uuid}", tag = "events",
    params(("event_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "The event", body = Event),
        (status = 404, description = "No such event in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn get_event(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(event_uuid): Path<Uuid>,
) -> ApiResult<axum::Json<Event>> {
    let row = store::events::event_of_app(&state.db, principal.app.uuid, event_uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("event"))?;
    Ok(axum::Json(render_event(&row, principal.environment())))
}

/// Deliver an event again: to one endpoint, or to every enabled endpoint subscribed to its type.
#[utoipa::path(
    post, path = "/v1/app/events/{event_uuid}/redeliver", tag = "webhooks",
    params(("event_uuid" = Uuid, Path)),
    request_body = RedeliverIn,
    responses(
        (status = 202, description = "Deliveries scheduled", body = DeliveriesScheduled),
        (status = 404, description = "No such event or endpoint in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn redeliver_event(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(event_uuid): Path<Uuid>,
    Json(input): Json<RedeliverIn>,
) -> ApiResult<(StatusCode, axum::Json<DeliveriesScheduled>)> {
    let scheduled =
        webhooks::redeliver_event(&state, principal.app.uuid, event_uuid, input.endpoint_uuid)
            .await?;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(DeliveriesScheduled {
            scheduled,
            event_uuid: Some(event_uuid),
        }),
    ))
}
