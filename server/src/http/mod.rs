//! The HTTP layer: one router per API group (`app`, `account`), the operational endpoints, the
//! Leptos pages, and the middleware every request passes (request id, access log and metrics,
//! panic guard, compression). Handlers are thin: extract, call a service (or the store for a
//! plain read), render; every failure renders through `error::ApiError`.

pub mod accounts;
pub mod apps;
pub mod auth;
pub mod billing;
pub mod branded;
pub mod cache;
pub mod collections;
pub mod dashboard;
pub mod deposits;
pub mod docs;
pub mod enrollment;
pub mod error;
pub mod events;
pub mod extract;
pub mod flows;
pub mod html;
pub mod idempotency;
pub mod identity;
pub mod links;
pub mod market;
pub mod openapi;
pub mod ops;
pub mod pages;
pub mod pagination;
pub mod portal;
pub mod processor;
pub mod ratelimit;
pub mod sandbox;
pub mod usage;
pub mod v1edge;
pub mod webhooks;
pub mod websession;

use std::{sync::Arc, time::Instant};

use axum::{
    extract::{DefaultBodyLimit, FromRef, MatchedPath, Request},
    http::{HeaderName, HeaderValue},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::get,
    Router,
};
use leptos::config::LeptosOptions;
use tower::ServiceBuilder;
use tower_http::{catch_panic::CatchPanicLayer, compression::CompressionLayer, services::ServeDir};

use crate::state::Core;
use error::{ApiError, ErrorCode, REQUEST_ID};
use ratelimit::RateLimiter;

/// What every handler can reach: the core state (`state::Core`, reached through `Deref`) and
/// what only requests need (`http`). Cheap to clone (extractors clone it per request).
#[derive(Clone)]
pub struct AppState {
    core: Core,
    pub http: Arc<HttpParts>,
}

impl AppState {
    pub fn new(core: Core, http: HttpParts) -> Self {
        AppState {
            core,
            http: Arc::new(http),
        }
    }

    /// The state below HTTP, what services and jobs take.
    pub fn core(&self) -> &Core {
        &self.core
    }
}

impl std::ops::Deref for AppState {
    type Target = Core;

    fn deref(&self) -> &Core {
        &self.core
    }
}

/// What only the HTTP layer holds.
pub struct HttpParts {
    pub limiter: RateLimiter,
    /// Shared with the core state's account-change hook, which invalidates `accounts`.
    pub caches: Arc<cache::Caches>,
    pub leptos: LeptosOptions,
    pub metrics: Option<metrics_exporter_prometheus::PrometheusHandle>,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.http.leptos.clone()
    }
}

/// A group of routes and their OpenAPI entries, written once: each handler's
/// `#[utoipa::path]` gives its method and path, and `routes!(handler)` mounts it there.
pub type ApiRouter = utoipa_axum::router::OpenApiRouter<AppState>;
pub(crate) use utoipa_axum::routes;

/// Every documented route, by who may call it. The application mounts these behind their
/// authentication; the OpenAPI document is read off the same lists.
pub struct ApiRoutes {
    /// `/v1/app/*`: an AppToken.
    pub app: ApiRouter,
    /// `/v1/account/*`: an AccountToken.
    pub account: ApiRouter,
    /// Outside `/v1`'s tokens: health and the test-mode processor.
    pub public: ApiRouter,
}

impl ApiRoutes {
    pub fn new() -> Self {
        ApiRoutes {
            app: ApiRouter::new()
                .merge(apps::router())
                .merge(accounts::app_router())
                .merge(flows::app_router())
                .merge(events::router())
                .merge(webhooks::router())
                .merge(sandbox::app_router())
                .merge(market::app_router()),
            account: ApiRouter::new()
                .merge(accounts::account_router())
                .merge(identity::router())
                .merge(enrollment::router())
                .merge(billing::router())
                .merge(deposits::router())
                .merge(collections::router())
                .merge(usage::router())
                .merge(sandbox::account_router())
                .merge(market::account_router())
                .merge(flows::account_router()),
            public: ApiRouter::new()
                .merge(ops::router())
                .merge(processor::router()),
        }
    }
}

impl Default for ApiRoutes {
    fn default() -> Self {
        Self::new()
    }
}

/// The whole application.
pub fn router(state: AppState) -> Router {
    let routes = ApiRoutes::new();
    let app_api = routes.app.route_layer(middleware::from_fn_with_state(
        state.clone(),
        auth::require_app,
    ));
    let account_api = routes.account.route_layer(middleware::from_fn_with_state(
        state.clone(),
        auth::require_account,
    ));
    let (api, _) = ApiRouter::new()
        .merge(app_api)
        .merge(account_api)
        .merge(routes.public)
        .split_for_parts();

    let mut router = api
        .route("/v1/openapi.json", get(openapi::serve))
        .merge(docs::router())
        .merge(flows::page_router())
        .merge(apps::logo_router())
        .merge(market::documents_router())
        .merge(portal::router(&state))
        .merge(billing::public_router())
        .merge(pages::router(&state))
        .merge(dashboard::router(&state));
    if state.config.bench_routes {
        router = router.route("/bench/bare", get(ops::bare));
    }
    let router = router.method_not_allowed_fallback(method_not_allowed);
    let site_root = state.http.leptos.site_root.to_string();
    // A release build's assets come precompressed at the highest brotli quality
    // (`cargo leptos build --release --precompress`); others are compressed on the fly.
    let assets = ServeDir::new(site_root)
        .precompressed_br()
        .precompressed_gzip()
        // A POST to an unknown path is an unknown route (404), not a file that refuses POST.
        .call_fallback_on_method_not_allowed(true)
        .not_found_service(axum::routing::any(not_found));
    edge(
        router
            .fallback_service(assets)
            // The idempotency guard buffers bodies up to the same size, so one limit holds
            // with or without an Idempotency-Key.
            .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
            // Inside the router, so that the matched route is known for the metrics' labels.
            .layer(middleware::from_fn(observe))
            .with_state(state),
    )
}

/// What every answer of the application passes on its way out.
fn edge(router: Router) -> Router {
    router.layer(
        ServiceBuilder::new()
            .layer(middleware::from_fn(request_id))
            // Outside the panic guard and the routes, so that preflights of any /v1 path and
            // every answer of /v1, errors and panics included, carry the CORS headers and
            // `Api-Version`.
            .layer(v1edge::V1EdgeLayer::new())
            .layer(middleware::from_fn(request_size))
            .layer(CatchPanicLayer::custom(panic_response))
            .layer(CompressionLayer::new()),
    )
}

/// What a worker-only process (`serve --role worker`) serves: liveness, readiness and metrics.
pub fn ops_router(state: AppState) -> Router {
    let (ops, _) = ops::router().split_for_parts();
    ops.fallback(not_found)
        .layer(middleware::from_fn(observe))
        .with_state(state)
        .layer(middleware::from_fn(request_id))
}

/// The largest request body the application reads (413 `body_too_large` beyond).
const MAX_BODY_BYTES: usize = 1024 * 1024;
/// The longest request target (path and query) the application reads.
const MAX_URI_BYTES: usize = 8 * 1024;
/// The most bytes of header fields (names and values) a request may carry.
const MAX_HEADER_BYTES: usize = 32 * 1024;

/// Refuses an oversized request target or header section with the error envelope. The HTTP
/// parser has limits of its own (64 KiB of target, 100 header fields, about 400 KiB in all)
/// and answers them with a bare status before any of this code runs; these limits sit well
/// below the first two, so that a request that is merely too big gets a readable answer.
async fn request_size(req: Request, next: Next) -> Response {
    let uri_bytes = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if uri_bytes > MAX_URI_BYTES {
        return ApiError::new(
            ErrorCode::UriTooLong,
            "The request URI is longer than 8 KiB",
        )
        .into_response();
    }
    let header_bytes: usize = req
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    if header_bytes > MAX_HEADER_BYTES {
        return ApiError::new(
            ErrorCode::HeadersTooLarge,
            "The request's header fields are larger than 32 KiB in all",
        )
        .into_response();
    }
    next.run(req).await
}

async fn not_found() -> ApiError {
    ApiError::new(ErrorCode::ResourceMissing, "No such route")
}

async fn method_not_allowed(uri: axum::http::Uri) -> ApiError {
    let error = ApiError::new(
        ErrorCode::MethodNotAllowed,
        "This route does not take this method",
    );
    // A person who reloads or types the address of a form's target gets a page, not JSON.
    let for_people = ["/dashboard", "/go/", "/portal", "/hosted/"]
        .iter()
        .any(|prefix| uri.path().starts_with(prefix));
    if for_people {
        ApiError::new(
            ErrorCode::MethodNotAllowed,
            "This address takes a form's button, not a visit: go back to the page and use the \
             form there.",
        )
        .as_page()
    } else {
        error
    }
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    ApiError::internal(anyhow::anyhow!("handler panicked")).into_response()
}

/// The version of the API every `/v1` answer speaks (errors and preflights included), as
/// `Api-Version`: the path's version today; a later version may also be chosen by this header
/// (README, "Versioning"); set by `v1edge`.
pub const API_VERSION: &str = "v1";

/// Gives every request an id, visible to errors and logs and returned as `Request-Id`.
async fn request_id(req: Request, next: Next) -> Response {
    let id = format!("req_{}", uuid::Uuid::new_v4().simple());
    let mut response = REQUEST_ID.scope(id.clone(), next.run(req)).await;
    if let Ok(v) = HeaderValue::from_str(&id) {
        response
            .headers_mut()
            .insert(HeaderName::from_static("request-id"), v);
    }
    response
}

/// Access log and metrics. Logs the path without its query (flow links carry tokens there)
/// and never a header; a path that carries a token itself (a dashboard password reset link)
/// is logged as its route.
async fn observe(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned());
    let path = match &route {
        Some(route) if route.contains("{token}") => route.clone(),
        _ => req.uri().path().to_owned(),
    };
    let response = next.run(req).await;
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    let route_label = route.unwrap_or_else(|| "unmatched".to_owned());
    metrics::counter!(
        "http_requests_total",
        "method" => method.to_string(),
        "route" => route_label.clone(),
        "status" => status.to_string()
    )
    .increment(1);
    metrics::histogram!(
        "http_request_duration_seconds",
        "method" => method.to_string(),
        "route" => route_label
    )
    .record(elapsed.as_secs_f64());
    let request_id = REQUEST_ID.try_with(Clone::clone).unwrap_or_default();
    tracing::info!(
        %request_id,
        method = %method,
        path = %path,
        status,
        elapsed_ms = elapsed.as_secs_f64() * 1000.0,
        "request"
    );
    response
}

#[cfg(test)]
mod tests {
    use axum::{body::Body, http::StatusCode};
    use tower::ServiceExt;

    use super::*;

    async fn boom() -> &'static str {
        panic!("a bug")
    }

    #[tokio::test]
    async fn a_panic_under_v1_reaches_browsers_as_json() {
        let app = edge(Router::new().route("/v1/app/boom", get(boom)));
        let request = Request::get("/v1/app/boom")
            .header("origin", "https://partner.example")
            .body(Body::empty())
            .unwrap_or_default();
        let response = app.oneshot(request).await.unwrap_or_else(|e| match e {});
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        assert_eq!(
            header("access-control-allow-origin"),
            "https://partner.example"
        );
        assert!(header("access-control-expose-headers").contains("request-id"));
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap_or_default();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(body["error"]["code"], "internal_error");
        assert!(
            !body.to_string().contains("a bug"),
            "no internals in the body"
        );
    }
}
