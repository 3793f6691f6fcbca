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

/// What the gates and extractors answer for every operation beside the answers its handler
/// documents: 400 for a malformed request (any operation with parameters or a body), 401 and 429
/// for the token groups (missing or bad token; rate limits and failed authentications), 404 for
/// a path naming a resource, and the `Idempotency-Key` header (with its 409) on every write of
/// the token groups.
struct StandardAnswers;

impl Modify for StandardAnswers {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{
            path::{ParameterBuilder, ParameterIn},
            schema::{ObjectBuilder, SchemaType, Type},
            ContentBuilder, Ref, RefOr, Required, ResponseBuilder,
        };
        let error = |description: &str| {
            RefOr::T(
                ResponseBuilder::new()
                    .description(description)
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("ErrorEnvelope")))
                            .build(),
                    )
                    .build(),
            )
        };
        let idempotency_key = || {
            ParameterBuilder::new()
                .name("Idempotency-Key")
                .parameter_in(ParameterIn::Header)
                .description(Some("Replays the first response for the same key"))
                .required(Required::False)
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(SchemaType::from_iter([Type::String, Type::Null])),
                ))
                .build()
        };
        for (path, item) in &mut openapi.paths.paths {
            let gated = path.starts_with("/v1/app/") || path.starts_with("/v1/account");
            let names_resource = path.contains('{');
            let operations = [
                (false, &mut item.get),
                (true, &mut item.put),
                (true, &mut item.post),
                (false, &mut item.delete),
                (true, &mut item.patch),
            ];
            for (writes, operation) in operations {
                let Some(op) = operation.as_mut() else {
                    continue;
                };
                if gated && writes {
                    let params = op.parameters.get_or_insert_with(Vec::new);
                    if !params.iter().any(|p| p.name == "Idempotency-Key") {
                        params.push(idempotency_key());
                    }
                }
                let has_input = op.request_body.is_some()
                    || op.parameters.as_ref().is_some_and(|p| !p.is_empty());
                let mut answers = Vec::new();
                if has_input {
                    answers.push(("400", "The request is malformed or a parameter is invalid"));
                }
                if gated {
                    answers.push((
                        "401",
                        "No token, or one that is invalid, expired or of the other kind",
                    ));
                    answers.push((
                        "429",
                        "Rate limited, or too many failed authentications from this address \
                         (see Retry-After)",
                    ));
                }
                if names_resource {
                    answers.push(("404", "No such resource here"));
                }
                if gated && writes {
                    answers.push((
                        "409",
                        "A request with this Idempotency-Key is still in progress",
                    ));
                }
                for (status, description) in answers {
                    op.responses
                        .responses
                        .entry(status.to_owned())
                        .or_insert_with(|| error(description));
                }
            }
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
    let mut doc = doc;
    StandardAnswers.modify(&mut doc);
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
