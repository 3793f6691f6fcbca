//! The OpenAPI 3.1 document, served at `/v1/openapi.json`: what is said here of the API as a
//! whole, plus the paths of every mounted route (`ApiRoutes`, from the handlers'
//! `#[utoipa::path]`). A test compares it with the committed `openapi.json`.
//!
//! Fixed limits of a field (lengths, ranges, patterns) are stated where the wire type is
//! declared (`app::api`); the lists the server parses against (event types, flow scopes,
//! simulations...), the listing ranges and the rules that tie fields together are added here
//! from the server's own constants (`Constraints`), so the document cannot drift from them.

mod breaking;
mod constraints;

use axum::response::{IntoResponse, Response};
use utoipa::{
    openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
    Modify, OpenApi,
};

use super::{error::ErrorCode, ApiRouter, ApiRoutes};
pub use breaking::{breaking_changes, unrecorded};
use constraints::Constraints;

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
        (name = "flows", description = "Embedded flows: the events a flow records (its session) and an app's funnel (AppToken)"),
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
/// documents: 414 and 431 for a request target or header section over the server's limits
/// (any operation), 400 for a malformed request (any operation with parameters or a body), 401, 403 and
/// 429 for the token groups (missing or bad token; a token of the other kind or, on the account
/// routes, outside its flow's scope; rate limits and failed authentications), 404 for
/// a path naming a resource, and the `Idempotency-Key` header (with its 409 and 422) on every
/// write of the token groups.
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
                        .schema_type(SchemaType::Type(Type::String))
                        .min_length(Some(1))
                        .max_length(Some(255))
                        // Visible ASCII, spaces and tabs, with at least one visible character
                        // (what `http::idempotency` takes once the header's edges are trimmed).
                        .pattern(Some(r"^[\t -~]*[!-~][\t -~]*$")),
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
                    // One header, as `http::idempotency` reads it, where a handler names it too.
                    params.retain(|p| p.name != "Idempotency-Key");
                    params.push(idempotency_key());
                }
                let has_input = op.request_body.is_some()
                    || op.parameters.as_ref().is_some_and(|p| !p.is_empty());
                let mut answers = Vec::new();
                if has_input {
                    answers.push(("400", "The request is malformed or a parameter is invalid"));
                }
                if gated {
                    answers.push(("401", "No token, or one that is invalid or expired"));
                    answers.push((
                        "403",
                        if path.starts_with("/v1/app/") {
                            "`token_wrong_type`: an AccountToken on a route of the AppToken"
                        } else {
                            "`token_wrong_type`: an AppToken on a route of the AccountToken; \
                             `scope_denied`: a flow's token on an endpoint its flow may not call"
                        },
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
                // Before any route: the limits of a request as the server reads it.
                answers.push((
                    "414",
                    "`uri_too_long`: the path and query are longer than 8 KiB",
                ));
                answers.push((
                    "431",
                    "`headers_too_large`: the header fields are larger than 32 KiB in all",
                ));
                if gated && writes {
                    answers.push((
                        "409",
                        "`idempotency_key_in_progress`: a request with this Idempotency-Key is \
                         still in progress",
                    ));
                    answers.push((
                        "422",
                        "`idempotency_key_reused`: this Idempotency-Key came with another request",
                    ));
                }
                for (status, description) in answers {
                    match op.responses.responses.entry(status.to_owned()) {
                        std::collections::btree_map::Entry::Vacant(v) => {
                            v.insert(error(description));
                        }
                        // The handler documents its own answers of this status: the gate's
                        // and the idempotency ones join them.
                        std::collections::btree_map::Entry::Occupied(mut o)
                            if description.starts_with('`') =>
                        {
                            let code = description.split('`').nth(1).unwrap_or_default();
                            if let RefOr::T(response) = o.get_mut() {
                                if !response.description.contains(code) {
                                    response.description =
                                        format!("{}; {description}", response.description);
                                }
                            }
                        }
                        std::collections::btree_map::Entry::Occupied(_) => {}
                    }
                }
            }
        }
    }
}

/// One schema per event type (`Event.<type>`: the event with its `type` fixed and the fields
/// of its `data`), and `WebhookEvent`, any one of them: what an endpoint receives, written
/// from `domain::events::EVENT_DOCS`, which a test holds to what the events carry.
struct EventSchemas;

impl Modify for EventSchemas {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use crate::domain::events::{FieldType, EVENT_DOCS};
        use utoipa::openapi::{
            schema::{
                AllOfBuilder, ArrayBuilder, KnownFormat, ObjectBuilder, OneOfBuilder, SchemaFormat,
                SchemaType, Type,
            },
            Ref, RefOr, Schema,
        };

        let components = openapi.components.get_or_insert_with(Default::default);
        let mut any = OneOfBuilder::new().description(Some(
            "An event as a webhook endpoint receives it (and as `GET /v1/app/events` lists it): \
             one of the `Event.<type>` schemas.",
        ));
        for doc in EVENT_DOCS {
            let mut data = ObjectBuilder::new().schema_type(Type::Object);
            for field in doc.fields {
                let ty = |t: Type| -> SchemaType {
                    if field.nullable {
                        SchemaType::from_iter([t, Type::Null])
                    } else {
                        SchemaType::Type(t)
                    }
                };
                let format = |f: KnownFormat| Some(SchemaFormat::KnownFormat(f));
                let schema: RefOr<Schema> = match field.ty {
                    FieldType::Uuid => ObjectBuilder::new()
                        .schema_type(ty(Type::String))
                        .format(format(KnownFormat::Uuid)),
                    FieldType::Text => ObjectBuilder::new().schema_type(ty(Type::String)),
                    FieldType::Integer => ObjectBuilder::new()
                        .schema_type(ty(Type::Integer))
                        .format(format(KnownFormat::Int64)),
                    FieldType::Boolean => ObjectBuilder::new().schema_type(ty(Type::Boolean)),
                    FieldType::Date => ObjectBuilder::new()
                        .schema_type(ty(Type::String))
                        .format(format(KnownFormat::Date)),
                    FieldType::Timestamp => ObjectBuilder::new()
                        .schema_type(ty(Type::String))
                        .format(format(KnownFormat::DateTime)),
                    FieldType::Uuids | FieldType::Texts => {
                        let item = ObjectBuilder::new().schema_type(Type::String);
                        let item = if field.ty == FieldType::Uuids {
                            item.format(format(KnownFormat::Uuid))
                        } else {
                            item
                        };
                        let list = ArrayBuilder::new()
                            .items(item)
                            .description(Some(field.about));
                        data = data.property(field.name, list).required(field.name);
                        continue;
                    }
                }
                .description(Some(field.about))
                .into();
                data = data.property(field.name, schema).required(field.name);
            }
            let name = format!("Event.{}", doc.kind);
            let typed = ObjectBuilder::new()
                .property(
                    "type",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some([doc.kind])),
                )
                .required("type")
                .property("data", data)
                .required("data");
            components.schemas.insert(
                name.clone(),
                AllOfBuilder::new()
                    .item(Ref::from_schema_name("Event"))
                    .item(typed)
                    .description(Some(doc.about))
                    .into(),
            );
            any = any.item(Ref::from_schema_name(name));
        }
        components
            .schemas
            .insert("WebhookEvent".to_owned(), any.into());
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
    Constraints.modify(&mut doc);
    EventSchemas.modify(&mut doc);
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
