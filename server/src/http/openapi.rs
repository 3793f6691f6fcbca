//! The OpenAPI 3.1 document, served at `/v1/openapi.json`: what is said here of the API as a
//! whole, plus the paths of every mounted route (`ApiRoutes`, from the handlers'
//! `#[utoipa::path]`). A test compares it with the committed `openapi.json`.
//!
//! Fixed limits of a field (lengths, ranges, patterns) are stated where the wire type is
//! declared (`app::api`); the lists the server parses against (event types, flow scopes,
//! simulations...), the listing ranges and the rules that tie fields together are added here
//! from the server's own constants (`Constraints`), so the document cannot drift from them.

use axum::response::{IntoResponse, Response};
use utoipa::{
    openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
    Modify, OpenApi,
};

use super::{error::ErrorCode, pagination::Page, ApiRouter, ApiRoutes};
use crate::domain::{
    credit::SIMULATED_EVENTS,
    enrollment::{CancelReason, EnrollmentType},
    events::EVENT_TYPES,
    flows::FlowScope,
};

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
/// documents: 400 for a malformed request (any operation with parameters or a body), 401 and 429
/// for the token groups (missing or bad token; rate limits and failed authentications), 404 for
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
                        // The handler documents its own answers of this status: the idempotency
                        // one joins them.
                        std::collections::btree_map::Entry::Occupied(mut o)
                            if description.starts_with("`idempotency") =>
                        {
                            if let RefOr::T(response) = o.get_mut() {
                                if !response.description.contains("idempotency") {
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

/// What the server enforces that the derived schemas cannot say: the names each enumerated field
/// takes (from the lists the server parses with), the listing ranges of `limit` and `offset`, and
/// the rules between fields (`esi_id` or `postal_code`; exactly one of `to` and `days`).
struct Constraints;

impl Modify for Constraints {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::schema::{
            AllOfBuilder, AnyOfBuilder, ObjectBuilder, OneOfBuilder, Schema, Type,
        };
        use utoipa::openapi::{path::ParameterIn, Ref, RefOr};

        let names = |list: &[&str]| -> Vec<serde_json::Value> {
            list.iter().map(|n| serde_json::Value::from(*n)).collect()
        };
        let scopes: Vec<&str> = FlowScope::ALL.iter().map(|s| s.as_str()).collect();
        let reasons = [
            CancelReason::Moving,
            CancelReason::Switching,
            CancelReason::Other,
        ]
        .map(CancelReason::as_str);
        let enrollment_types =
            [EnrollmentType::Switch, EnrollmentType::MoveIn].map(EnrollmentType::as_str);

        // Body fields.
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut set_enum = |schema: &str, property: &str, values: &[&str]| {
            let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(schema) else {
                panic!("no schema {schema}");
            };
            let nullable = !object.required.iter().any(|r| r == property);
            match object.properties.get_mut(property) {
                Some(RefOr::T(Schema::Object(field))) => {
                    let mut values = names(values);
                    if nullable {
                        values.push(serde_json::Value::Null);
                    }
                    field.enum_values = Some(values);
                }
                Some(RefOr::T(Schema::Array(array))) => {
                    array.items = utoipa::openapi::schema::ArrayItems::RefOrSchema(Box::new(
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .enum_values(Some(values.iter().copied()))
                            .into(),
                    ));
                }
                _ => panic!("no property {schema}.{property}"),
            }
        };
        set_enum("FlowLoginIn", "scope", &scopes);
        set_enum("SimulateIn", "event", SIMULATED_EVENTS);
        set_enum("CancelServiceIn", "reason", &reasons);
        set_enum("AcceptPlanIn", "enrollment_type", &enrollment_types);
        set_enum("CreateWebhookEndpointIn", "event_types", EVENT_TYPES);
        set_enum("UpdateWebhookEndpointIn", "event_types", EVENT_TYPES);

        // Rules between fields: the object as derived, and one or any of its variants.
        let present = |property: &str, schema: RefOr<Schema>| -> RefOr<Schema> {
            ObjectBuilder::new()
                .required(property)
                .property(property, schema)
                .into()
        };
        let string = || -> RefOr<Schema> { ObjectBuilder::new().schema_type(Type::String).into() };
        let mut combine = |schema: &str, rule: RefOr<Schema>| {
            let derived = components
                .schemas
                .remove(schema)
                .unwrap_or_else(|| panic!("no schema {schema}"));
            components.schemas.insert(
                schema.to_owned(),
                AllOfBuilder::new().item(derived).item(rule).into(),
            );
        };
        for schema in ["AppPlansRequestIn", "BenchmarksIn"] {
            combine(
                schema,
                AnyOfBuilder::new()
                    .item(present("esi_id", string()))
                    .item(present("postal_code", string()))
                    .description(Some(
                        "`esi_id` or `postal_code` (the ESI ID wins when both)",
                    ))
                    .into(),
            );
        }
        combine(
            "AdvanceClockIn",
            OneOfBuilder::new()
                .item(present("to", Ref::from_schema_name("Timestamp").into()))
                .item(present(
                    "days",
                    ObjectBuilder::new().schema_type(Type::Integer).into(),
                ))
                .description(Some("Exactly one of `to` and `days`"))
                .into(),
        );

        // Query parameters.
        for (path, item) in &mut openapi.paths.paths {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for op in operations.into_iter().flatten() {
                for param in op.parameters.iter_mut().flatten() {
                    if !matches!(param.parameter_in, ParameterIn::Query) {
                        continue;
                    }
                    if (path.as_str(), param.name.as_str()) == ("/v1/app/accounts", "status") {
                        // Parsed as the account's own status enum.
                        param.schema = Some(Ref::from_schema_name("AccountStatus").into());
                        continue;
                    }
                    let Some(RefOr::T(Schema::Object(schema))) = param.schema.as_mut() else {
                        continue;
                    };
                    match (path.as_str(), param.name.as_str()) {
                        (_, "limit") => {
                            schema.minimum = Some(1.into());
                            schema.maximum = Some(Page::MAX_LIMIT.into());
                        }
                        (_, "offset") => {
                            schema.minimum = Some(0.into());
                            schema.maximum = Some(Page::MAX_OFFSET.into());
                        }
                        ("/v1/app/events", "type") => {
                            schema.enum_values = Some(names(EVENT_TYPES));
                        }
                        (_, "scope") => schema.enum_values = Some(names(&scopes)),
                        _ => {}
                    }
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

/// The changes from the `old` document to the `new` one that break a client written against
/// `old` (the versioning policy in README: such changes need a new version, or at least an entry
/// in `CHANGELOG.md`): an operation removed, a schema removed, a field of a schema removed or
/// given another type, an enum value removed, and a field newly required in a request body (a
/// schema named `...In`). Each is named by the key the changelog must quote: `GET /v1/x`,
/// `Schema`, `Schema.field`, `Schema: value`; sorted.
pub fn breaking_changes(old: &serde_json::Value, new: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    let mut changes = Vec::new();
    let empty = serde_json::Map::new();
    let object = |v: &Value| v.as_object().cloned().unwrap_or_default();
    for (path, methods) in old["paths"].as_object().unwrap_or(&empty) {
        for method in object(methods).keys() {
            if new["paths"][path][method].is_null() {
                changes.push(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    let new_schemas = object(&new["components"]["schemas"]);
    for (name, before) in old["components"]["schemas"].as_object().unwrap_or(&empty) {
        let Some(after) = new_schemas.get(name) else {
            changes.push(name.clone());
            continue;
        };
        let after_properties = object(&after["properties"]);
        for (field, was) in object(&before["properties"]) {
            match after_properties.get(&field) {
                None => changes.push(format!("{name}.{field}")),
                Some(now) if now["type"] != was["type"] || now["$ref"] != was["$ref"] => {
                    changes.push(format!("{name}.{field}"));
                }
                Some(_) => {}
            }
        }
        let values = |v: &Value| v["enum"].as_array().cloned().unwrap_or_default();
        let after_values = values(after);
        for value in values(before) {
            if !after_values.contains(&value) {
                let value = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned);
                changes.push(format!("{name}: {value}"));
            }
        }
        if name.ends_with("In") {
            let required = |v: &Value| v["required"].as_array().cloned().unwrap_or_default();
            let before_required = required(before);
            for field in required(after) {
                if !before_required.contains(&field) {
                    changes.push(format!("{name}.{}", field.as_str().unwrap_or_default()));
                }
            }
        }
    }
    changes.sort();
    changes
}

/// The breaking changes `changelog` does not record: each must be quoted in it (in backticks).
pub fn unrecorded<'a>(changes: &'a [String], changelog: &str) -> Vec<&'a str> {
    changes
        .iter()
        .map(String::as_str)
        .filter(|key| !changelog.contains(&format!("`{key}`")))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc() -> serde_json::Value {
        json!({
            "paths": {"/v1/account": {"get": {}, "patch": {}}},
            "components": {"schemas": {
                "Account": {"type": "object", "properties": {
                    "uuid": {"type": "string"}, "status": {"$ref": "#/components/schemas/Status"}
                }, "required": ["uuid"]},
                "Status": {"type": "string", "enum": ["active", "cancelled"]},
                "AccountIn": {"type": "object", "properties": {"email": {"type": "string"}}}
            }}
        })
    }

    #[test]
    fn additions_break_nothing() {
        let mut new = doc();
        new["paths"]["/v1/other"] = json!({"get": {}});
        new["components"]["schemas"]["Account"]["properties"]["phone"] = json!({"type": "string"});
        new["components"]["schemas"]["Account"]["required"] = json!(["uuid", "phone"]);
        new["components"]["schemas"]["Status"]["enum"] = json!(["active", "cancelled", "ready"]);
        assert!(breaking_changes(&doc(), &new).is_empty());
        assert!(breaking_changes(&doc(), &doc()).is_empty());
    }

    #[test]
    fn removals_renames_and_new_requirements_break() {
        let mut new = doc();
        new["paths"]["/v1/account"] = json!({"get": {}});
        new["components"]["schemas"]["Account"]["properties"] =
            json!({"uuid": {"type": "integer"}, "state": {"$ref": "#/components/schemas/Status"}});
        new["components"]["schemas"]["Status"]["enum"] = json!(["active"]);
        new["components"]["schemas"]["AccountIn"]["required"] = json!(["email"]);
        let changes = breaking_changes(&doc(), &new);
        assert_eq!(
            changes,
            [
                "Account.status",
                "Account.uuid",
                "AccountIn.email",
                "PATCH /v1/account",
                "Status: cancelled"
            ]
        );
        let changelog = "- `PATCH /v1/account` removed\n- `Account.status` renamed `state`";
        assert_eq!(
            unrecorded(&changes, changelog),
            ["Account.uuid", "AccountIn.email", "Status: cancelled"]
        );
    }
}
