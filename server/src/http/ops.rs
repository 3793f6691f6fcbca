//! Operational endpoints: liveness, readiness (the database answers; where rate limits are
//! counted), Prometheus metrics, and the bare route benchmarks compare the API against.

use app::api::Health;
use axum::{
    extract::State,
    http::{header::CONTENT_TYPE, HeaderValue},
    response::{IntoResponse, Response},
    routing::get,
};

use super::{
    error::{ApiError, ErrorCode},
    ratelimit::Mode,
    routes, ApiRouter, AppState,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        // Scraped by Prometheus, not part of the API.
        .route("/metrics", get(metrics))
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "Alive", body = Health)))]
pub async fn healthz() -> axum::Json<Health> {
    axum::Json(Health {
        status: "ok".to_owned(),
        rate_limits: None,
    })
}

/// The process can serve: its database answers.
///
/// Rate limits do not decide readiness: without Redis the instance still serves, limiting
/// alone (`rate_limits: "local"`).
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, description = "Ready; `rate_limits` says where limits are counted", body = Health),
              (status = 503, description = "The database does not answer", body = app::api::ErrorEnvelope)))]
pub async fn readyz(State(state): State<AppState>) -> Result<axum::Json<Health>, ApiError> {
    match state.db.ping().await {
        Ok(()) => Ok(axum::Json(Health {
            status: "ready".to_owned(),
            rate_limits: Some(rate_limits(&state).await.as_str().to_owned()),
        })),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            Err(ApiError::new(
                ErrorCode::ServiceUnavailable,
                "The database is not reachable",
            ))
        }
    }
}

async fn rate_limits(state: &AppState) -> Mode {
    if state.config.rate_limits.enabled {
        state.http.limiter.mode().await
    } else {
        Mode::Off
    }
}

/// Prometheus text exposition.
pub async fn metrics(State(state): State<AppState>) -> Response {
    let body = state
        .http
        .metrics
        .as_ref()
        .map(|m| m.render())
        .unwrap_or_default();
    let mut response = body.into_response();
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// A JSON route that touches nothing, for benchmarks (enabled by `bench_routes`).
pub async fn bare() -> axum::Json<Health> {
    axum::Json(Health {
        status: "ok".to_owned(),
        rate_limits: None,
    })
}
