//! Webhook endpoints of the app (`/v1/app/webhook-endpoints`): managed, their secrets rotated,
//! their delivery log read, past events recovered, a test event sent.

use app::api::{
    background::{
        CreateWebhookEndpointIn, Deleted, DeliveriesScheduled, Delivery, RecoverIn,
        UpdateWebhookEndpointIn, WebhookEndpoint,
    },
    ErrorEnvelope, List, Timestamp,
};
use axum::{extract::State, http::StatusCode};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::{
    auth::AppPrincipal,
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    pagination::Page,
    routes, ApiRouter, AppState,
};
use crate::{
    services::webhooks,
    store::{
        self,
        webhooks::{DeliveryRow, EndpointRow},
    },
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(create_endpoint, list_endpoints))
        .routes(routes!(get_endpoint, update_endpoint, delete_endpoint))
        .routes(routes!(rotate_secret))
        .routes(routes!(list_deliveries))
        .routes(routes!(recover))
        .routes(routes!(send_test))
}

fn render(row: &EndpointRow, show_secret: bool) -> WebhookEndpoint {
    WebhookEndpoint {
        uuid: row.uuid,
        url: row.url.clone(),
        event_types: row.event_type_list(),
        description: row.description.clone(),
        disabled: row.disabled,
        disabled_reason: row.disabled_reason.clone(),
        created_at: Timestamp(row.created_at),
        secret: show_secret.then(|| row.secret.clone()),
    }
}

fn render_delivery(d: &DeliveryRow) -> Delivery {
    Delivery {
        uuid: d.uuid,
        event_uuid: d.event_uuid,
        event_type: d.event_type.clone(),
        attempt: u32::try_from(d.attempt).unwrap_or(0),
        status: d.status.to_string(),
        response_status: d.response_status.and_then(|s| u16::try_from(s).ok()),
        error: d.error.clone(),
        attempted_at: Timestamp(d.attempted_at),
        next_attempt_at: d.next_attempt_at.map(Timestamp),
    }
}

/// Create a webhook endpoint; its signing secret is shown only in this answer.
#[utoipa::path(
    post, path = "/v1/app/webhook-endpoints", tag = "webhooks",
    request_body = CreateWebhookEndpointIn,
    responses(
        (status = 201, description = "The endpoint, with its secret", body = WebhookEndpoint),
        (status = 400, description = "A field is missing or invalid", body = ErrorEnvelope),
        (status = 422, description = "A live app aimed at a non-public address (`url_not_allowed`)", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn create_endpoint(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Json(input): Json<CreateWebhookEndpointIn>,
) -> ApiResult<(StatusCode, axum::Json<WebhookEndpoint>)> {
    let row = webhooks::create_endpoint(
        &state,
        principal.app.uuid,
        principal.environment(),
        input,
        None,
    )
    .await?;
    Ok((StatusCode::CREATED, axum::Json(render(&row, true))))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// 1 to 100, default 20.
    limit: Option<u32>,
    offset: Option<u64>,
}

/// List the app's webhook endpoints, newest first.
#[utoipa::path(
    get, path = "/v1/app/webhook-endpoints", tag = "webhooks",
    params(PageQuery),
    responses(
        (status = 200, description = "A page of endpoints (without secrets)", body = List<WebhookEndpoint>),
        (status = 400, description = "A parameter is invalid", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn list_endpoints(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Query(q): Query<PageQuery>,
) -> ApiResult<axum::Json<List<WebhookEndpoint>>> {
    let page = Page::parse(q.limit, q.offset)?;
    let rows =
        store::webhooks::endpoints_of_app(&state.db, principal.app.uuid, page.limit, page.offset)
            .await?;
    let endpoints = rows.iter().map(|r| render(r, false)).collect();
    Ok(axum::Json(page.list(
        endpoints,
        "/v1/app/webhook-endpoints",
        &[],
    )))
}

/// Get one webhook endpoint.
#[utoipa::path(
    get, path = "/v1/app/webhook-endpoints/{endpoint_uuid}", tag = "webhooks",
    params(("endpoint_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "The endpoint (without its secret)", body = WebhookEndpoint),
        (status = 404, description = "No such endpoint in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn get_endpoint(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(endpoint_uuid): Path<Uuid>,
) -> ApiResult<axum::Json<WebhookEndpoint>> {
    let row = store::webhooks::endpoint_of_app(&state.db, principal.app.uuid, endpoint_uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("webhook endpoint"))?;
    Ok(axum::Json(render(&row, false)))
}

/// Update an endpoint. `disabled: false` re-enables it and forgets its past failures.
#[utoipa::path(
    patch, path = "/v1/app/webhook-endpoints/{endpoint_uuid}", tag = "webhooks",
    params(("endpoint_uuid" = Uuid, Path)),
    request_body = UpdateWebhookEndpointIn,
    responses(
        (status = 200, description = "The updated endpoint", body = WebhookEndpoint),
        (status = 400, description = "A field is invalid", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint in this app", body = ErrorEnvelope),
        (status = 422, description = "A live app aimed at a non-public address (`url_not_allowed`)", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn update_endpoint(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(endpoint_uuid): Path<Uuid>,
    Json(input): Json<UpdateWebhookEndpointIn>,
) -> ApiResult<axum::Json<WebhookEndpoint>> {
    let row = webhooks::update_endpoint(
        &state,
        principal.app.uuid,
        principal.environment(),
        endpoint_uuid,
        input,
        None,
    )
    .await?;
    Ok(axum::Json(render(&row, false)))
}

/// Delete an endpoint: nothing more is sent to it.
#[utoipa::path(
    delete, path = "/v1/app/webhook-endpoints/{endpoint_uuid}", tag = "webhooks",
    params(("endpoint_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "Deleted", body = Deleted),
        (status = 404, description = "No such endpoint in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn delete_endpoint(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(endpoint_uuid): Path<Uuid>,
) -> ApiResult<axum::Json<Deleted>> {
    webhooks::delete_endpoint(&state, principal.app.uuid, endpoint_uuid).await?;
    Ok(axum::Json(Deleted {
        uuid: endpoint_uuid,
        deleted: true,
    }))
}

/// Give the endpoint a new secret, shown only in this answer; the old one keeps signing
/// (beside the new one) for 24 hours.
#[utoipa::path(
    post, path = "/v1/app/webhook-endpoints/{endpoint_uuid}/rotate-secret", tag = "webhooks",
    params(("endpoint_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "The endpoint, with its new secret", body = WebhookEndpoint),
        (status = 404, description = "No such endpoint in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn rotate_secret(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(endpoint_uuid): Path<Uuid>,
) -> ApiResult<axum::Json<WebhookEndpoint>> {
    let row = webhooks::rotate_secret(&state, principal.app.uuid, endpoint_uuid, None).await?;
    Ok(axum::Json(render(&row, true)))
}

/// The endpoint's delivery attempts, newest first.
#[utoipa::path(
    get, path = "/v1/app/webhook-endpoints/{endpoint_uuid}/deliveries", tag = "webhooks",
    params(("endpoint_uuid" = Uuid, Path), PageQuery),
    responses(
        (status = 200, description = "A page of delivery attempts", body = List<Delivery>),
        (status = 404, description = "No such endpoint in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn list_deliveries(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(endpoint_uuid): Path<Uuid>,
    Query(q): Query<PageQuery>,
) -> ApiResult<axum::Json<List<Delivery>>> {
    let page = Page::parse(q.limit, q.offset)?;
    let rows = webhooks::deliveries(
        &state,
        principal.app.uuid,
        endpoint_uuid,
        page.limit,
        page.offset,
    )
    .await?;
    let deliveries = rows.iter().map(render_delivery).collect();
    Ok(axum::Json(page.list(
        deliveries,
        &format!("/v1/app/webhook-endpoints/{endpoint_uuid}/deliveries"),
        &[],
    )))
}

/// Send again every event created since `since` that the endpoint subscribes to (for example
/// after an outage of the receiver).
#[utoipa::path(
    post, path = "/v1/app/webhook-endpoints/{endpoint_uuid}/recover", tag = "webhooks",
    params(("endpoint_uuid" = Uuid, Path)),
    request_body = RecoverIn,
    responses(
        (status = 202, description = "Deliveries scheduled", body = DeliveriesScheduled),
        (status = 400, description = "since is missing or invalid", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn recover(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(endpoint_uuid): Path<Uuid>,
    Json(input): Json<RecoverIn>,
) -> ApiResult<(StatusCode, axum::Json<DeliveriesScheduled>)> {
    let scheduled =
        webhooks::recover(&state, principal.app.uuid, endpoint_uuid, input.since.0).await?;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(DeliveriesScheduled {
            scheduled,
            event_uuid: None,
        }),
    ))
}

/// Send a `webhook.test` event to this endpoint only.
#[utoipa::path(
    post, path = "/v1/app/webhook-endpoints/{endpoint_uuid}/send-test", tag = "webhooks",
    params(("endpoint_uuid" = Uuid, Path)),
    responses(
        (status = 202, description = "The test event and its delivery, scheduled", body = DeliveriesScheduled),
        (status = 404, description = "No such endpoint in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn send_test(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(endpoint_uuid): Path<Uuid>,
) -> ApiResult<(StatusCode, axum::Json<DeliveriesScheduled>)> {
    let event_uuid = webhooks::send_test(&state, principal.app.uuid, endpoint_uuid).await?;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(DeliveriesScheduled {
            scheduled: 1,
            event_uuid: Some(event_uuid),
        }),
    ))
}
