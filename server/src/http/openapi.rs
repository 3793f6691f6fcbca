//! The OpenAPI 3.1 document, served at `/v1/openapi.json`: what is said here of the API as a
//! whole, plus the paths of every mounted route (`ApiRoutes`, from the handlers'
//! `#[utoipa::path]`). A test compares it with the committed `openapi.json`.

use axum::response::{IntoResponse, Response};
use utoipa::{
    openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
    Modify, OpenApi,
};

use super::{error::ErrorCode, ApiRouter, ApiRoutes};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Switchboard API",
        version = "1",
        description = "Branded retail electricity: accounts, enrollment, billing and renewal."
    ),
    components(schemas(ErrorCode, app::api::ErrorEnvelope)),
    modifiers(&BearerTokens),
    tags(
        (name = "app", description = "The partner app (AppToken)"),
        (name = "accounts", description = "Accounts of the app (AppToken)"),
        (name = "account", description = "One account (AccountToken)"),
        (name = "enrollment", description = "Eligibility, address search, plans and the enrollment steps"),
        (name = "billing", description = "Payment method and invoices (AccountToken)"),
        (name = "usage", description = "A location's usage and meter reads (AccountToken)"),
        (name = "processor", description = "The built-in test-mode payment processor (publishable key)"),
        (name = "events", description = "Events of the app (AppToken)"),
        (name = "webhooks", description = "Webhook endpoints and deliveries (AppToken)"),
        (name = "sandbox", description = "Sandbox-only helpers: test clocks, simulated events, sent e-mails"),
        (name = "operations", description = "Health and readiness"),
    )
)]
pub struct ApiDoc;

struct BearerTokens;

impl Modify for BearerTokens {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        for (name, description) in [
            (
                "app_token",
                "AppToken: swb_sandbox_... or swb_live_..., server-side only",
            ),
            (
                "account_token",
                "AccountToken: swb_acct_..., 60 minutes, one account",
            ),
        ] {
            components.add_security_scheme(
                name,
                SecurityScheme::Http(
                    HttpBuilder::new()
                        .scheme(HttpAuthScheme::Bearer)
                        .description(Some(description))
                        .build(),
                ),
            );
        }
    }
}

/// The document as served (and as committed), pretty-printed.
pub fn document() -> String {
    let routes = ApiRoutes::new();
    let doc = ApiRouter::with_openapi(ApiDoc::openapi())
        .merge(routes.app)
        .merge(routes.account)
        .merge(routes.public)
        .into_openapi();
    doc.to_pretty_json().unwrap_or_default() + "\n"
}

pub async fn serve() -> Response {
    static DOCUMENT: std::sync::LazyLock<String> = std::sync::LazyLock::new(document);
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        DOCUMENT.as_str(),
    )
        .into_response()
}
