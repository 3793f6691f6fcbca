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
    estimate::HomeSize,
    events::EVENT_TYPES,
    flow_events::FlowEventName,
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

/// What the server enforces that the derived schemas cannot say: the names each enumerated field
/// takes (from the lists the server parses with), the listing ranges of `limit` and `offset`, and
/// the rules between fields (`esi_id` or `postal_code`; exactly one of `to` and `days`), and the
/// ESI IDs of the known utilities.
struct Constraints;

impl Modify for Constraints {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::schema::{
            AllOfBuilder, AnyOfBuilder, KnownFormat, ObjectBuilder, OneOfBuilder, Schema,
            SchemaFormat, SchemaType, Type,
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
        let sizes: Vec<&str> = HomeSize::ALL.iter().map(|s| s.as_str()).collect();
        set_enum("PlansRequestIn", "home_size", &sizes);
        set_enum("EstimateBasis", "home_size", &sizes);
        set_enum("CreateWebhookEndpointIn", "event_types", EVENT_TYPES);
        set_enum("UpdateWebhookEndpointIn", "event_types", EVENT_TYPES);

        // An ESI ID names a known utility's prefix at its length (the reference data's table).
        let esi_id = crate::domain::market::esi_id_pattern();
        for schema in components.schemas.values_mut() {
            let RefOr::T(Schema::Object(object)) = schema else {
                continue;
            };
            if let Some(RefOr::T(Schema::Object(field))) = object.properties.get_mut("esi_id") {
                if field.pattern.is_some() {
                    field.pattern = Some(esi_id.clone());
                }
            }
        }

        // What the parsers take, where the derived schema says less.
        fn field_of<'a>(
            components: &'a mut utoipa::openapi::Components,
            schema: &str,
            property: &str,
        ) -> &'a mut utoipa::openapi::schema::Object {
            let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(schema) else {
                panic!("no schema {schema}");
            };
            match object.properties.get_mut(property) {
                Some(RefOr::T(Schema::Object(field))) => field,
                _ => panic!("no property {schema}.{property}"),
            }
        }
        // Text: no control characters, something besides blanks.
        let text = format!("^{TEXT}*[^\\s{CONTROL}]{TEXT}*$");
        for (schema, property) in [
            ("CreateAccountIn", "first_name"),
            ("CreateAccountIn", "last_name"),
            ("UpdateAccountIn", "first_name"),
            ("UpdateAccountIn", "last_name"),
            ("IdentityIn", "first_name"),
            ("IdentityIn", "last_name"),
        ] {
            field_of(components, schema, property).pattern = Some(text.clone());
        }
        field_of(components, "PostalAddressIn", "address_1").pattern = Some(text.clone());
        field_of(components, "PostalAddressIn", "city").pattern = Some(text.clone());
        field_of(components, "PostalAddressIn", "address_2").pattern = Some(format!("^{TEXT}*$"));
        // Fields a patch may leave out but not clear; a postal address's lines but the second.
        let address = ["address_1", "city", "state", "postal_code"];
        for property in address {
            field_of(components, "PostalAddressIn", property).schema_type =
                SchemaType::Type(Type::String);
        }
        for (schema, property) in [
            ("UpdateAccountIn", "email"),
            ("UpdateAccountIn", "first_name"),
            ("UpdateAccountIn", "last_name"),
        ] {
            field_of(components, schema, property).schema_type = SchemaType::Type(Type::String);
        }
        for (schema, property) in [
            ("CreateAccountIn", "phone"),
            ("UpdateAccountIn", "phone"),
            ("IdentityIn", "phone"),
        ] {
            field_of(components, schema, property).pattern = Some(US_PHONE.to_owned());
        }
        for (schema, property) in [
            ("CreateAccountIn", "renewals_url"),
            ("UpdateAccountIn", "renewals_url"),
        ] {
            field_of(components, schema, property).pattern = Some(renewals_url());
        }
        for (schema, property) in [
            ("CreateWebhookEndpointIn", "url"),
            ("UpdateWebhookEndpointIn", "url"),
        ] {
            let url = field_of(components, schema, property);
            url.pattern = Some(endpoint_url());
            url.max_length = Some(2048);
        }
        for property in ["url", "disabled"] {
            let field = field_of(components, "UpdateWebhookEndpointIn", property);
            if let SchemaType::Array(types) = &field.schema_type {
                let kind = types.iter().find(|t| **t != Type::Null).cloned();
                field.schema_type = SchemaType::Type(kind.unwrap_or(Type::String));
            }
        }
        field_of(components, "IdentityIn", "date_of_birth").format =
            Some(SchemaFormat::KnownFormat(KnownFormat::Date));
        field_of(components, "CreditCheckIn", "ssn").pattern = Some(SSN.to_owned());
        // `domain::account::parse_metadata`.
        for schema in ["CreateAccountIn", "UpdateAccountIn"] {
            let metadata = field_of(components, schema, "metadata");
            metadata.max_properties = Some(20);
            metadata.property_names = Some(Box::new(Schema::Object(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .max_length(Some(40))
                    .pattern(Some(format!("^{TEXT}*$")))
                    .build(),
            )));
            metadata.additional_properties = Some(Box::new(
                utoipa::openapi::schema::AdditionalProperties::RefOr(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .max_length(Some(500))
                        .into(),
                ),
            ));
        }
        // A date, an instant or a UUID is never shorter than its shortest form: the length
        // keeps a generator that ignores formats from taking `""` for one.
        for (name, schema) in components.schemas.iter_mut() {
            let RefOr::T(Schema::Object(object)) = schema else {
                continue;
            };
            if !name.ends_with("In") {
                continue;
            }
            for property in object.properties.values_mut() {
                let RefOr::T(Schema::Object(field)) = property else {
                    continue;
                };
                let shortest = match &field.format {
                    Some(SchemaFormat::KnownFormat(KnownFormat::Date)) => 10,
                    Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)) => 20,
                    Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)) => 32,
                    _ => continue,
                };
                field.min_length.get_or_insert(shortest);
            }
        }
        // Dollars of a partner's commission (`domain::market::parse_dollars_to_cents`).
        if let Some(RefOr::T(Schema::Object(object))) =
            components.schemas.get_mut("AppPlansRequestIn")
        {
            if let Some(RefOr::T(Schema::OneOf(one_of))) = object
                .properties
                .get_mut("partner_commission_per_month_dollars")
            {
                for item in &mut one_of.items {
                    if matches!(item, RefOr::Ref(_)) {
                        *item = AllOfBuilder::new()
                            .item(item.clone())
                            .item(ObjectBuilder::new().pattern(Some(DOLLARS)))
                            .into();
                    }
                }
            }
        }
        // A flow event (`domain::flow_events::parse_event`): a known name; its step and error
        // code are short slugs, never free text.
        let event_names: Vec<&str> = FlowEventName::ALL.iter().map(|n| n.as_str()).collect();
        let name = field_of(components, "FlowEventIn", "name");
        name.schema_type = SchemaType::Type(Type::String);
        name.enum_values = Some(names(&event_names));
        for (property, longest) in [("step", STEP_MAX), ("error_code", ERROR_CODE_MAX)] {
            let field = field_of(components, "FlowEventIn", property);
            field.pattern = Some(SLUG.to_owned());
            field.min_length = Some(1);
            field.max_length = Some(longest);
        }
        // Agreements that must be given.
        field_of(components, "CreditCheckIn", "consent").enum_values = Some(vec![true.into()]);
        let agreements = ["AcceptPlanIn", "AcceptRenewalIn"];
        for schema in agreements {
            let terms = field_of(components, schema, "terms_accepted");
            terms.schema_type = SchemaType::Type(Type::Boolean);
            terms.enum_values = Some(vec![true.into()]);
        }
        let mut require = |schema: &str, property: &str| {
            if let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(schema) {
                object.required.push(property.to_owned());
            }
        };
        for schema in agreements {
            require(schema, "terms_accepted");
        }
        require("FlowEventIn", "name");
        for property in address {
            require("PostalAddressIn", property);
        }

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
            "BillingAddressIn",
            AnyOfBuilder::new()
                .item(present(
                    "same_as_service_address",
                    ObjectBuilder::new()
                        .schema_type(Type::Boolean)
                        .enum_values(Some([true]))
                        .into(),
                ))
                .item(present(
                    "address",
                    Ref::from_schema_name("PostalAddressIn").into(),
                ))
                .description(Some("`address` unless `same_as_service_address` is true"))
                .into(),
        );
        // A step for `step_viewed`, an error code for `error_shown` and never elsewhere.
        let event = |names: &[FlowEventName], needs: Option<&str>, error_code: bool| {
            let values: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
            let mut variant = ObjectBuilder::new()
                .property(
                    "name",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some(values)),
                )
                .required("name");
            if !error_code {
                variant =
                    variant.property("error_code", ObjectBuilder::new().schema_type(Type::Null));
            }
            if let Some(property) = needs {
                variant = variant
                    .property(property, ObjectBuilder::new().schema_type(Type::String))
                    .required(property);
            }
            RefOr::<Schema>::from(variant)
        };
        let plain: Vec<FlowEventName> = FlowEventName::ALL
            .iter()
            .copied()
            .filter(|n| !matches!(n, FlowEventName::StepViewed | FlowEventName::ErrorShown))
            .collect();
        combine(
            "FlowEventIn",
            OneOfBuilder::new()
                .item(event(&plain, None, false))
                .item(event(&[FlowEventName::StepViewed], Some("step"), false))
                .item(event(
                    &[FlowEventName::ErrorShown],
                    Some("error_code"),
                    true,
                ))
                .description(Some(
                    "`step` with `step_viewed`; `error_code` with `error_shown`, and only there",
                ))
                .into(),
        );
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

        // A body whose every field is optional may be left out (read as `{}`).
        let all_optional: Vec<String> = components
            .schemas
            .iter()
            .filter_map(|(name, schema)| match schema {
                RefOr::T(Schema::Object(o)) if o.required.is_empty() => {
                    Some(format!("#/components/schemas/{name}"))
                }
                _ => None,
            })
            .collect();
        for item in openapi.paths.paths.values_mut() {
            let operations = [&mut item.put, &mut item.post, &mut item.patch];
            for op in operations.into_iter().flatten() {
                let Some(body) = op.request_body.as_mut() else {
                    continue;
                };
                let optional = body.content.get("application/json").is_some_and(|c| {
                    matches!(&c.schema, Some(RefOr::Ref(r)) if all_optional.contains(&r.ref_location))
                });
                if optional {
                    body.required = Some(utoipa::openapi::Required::False);
                }
            }
        }

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
                        // `domain::usage`'s range of years, and the months of one.
                        (_, "year") => {
                            schema.minimum = Some(2000.into());
                            schema.maximum = Some(2100.into());
                        }
                        (_, "month") => {
                            schema.minimum = Some(1.into());
                            schema.maximum = Some(12.into());
                        }
                        (path, "date") if path.contains("/usage/") => {
                            schema.pattern = Some(r"^(20[0-9]{2}|2100)-".to_owned());
                        }
                        ("/v1/app/events", "type") => {
                            schema.enum_values = Some(names(EVENT_TYPES));
                        }
                        (_, "scope") => schema.enum_values = Some(names(&scopes)),
                        _ => {}
                    }
                    // As for the bodies' dates: never shorter than the shortest date.
                    if matches!(
                        schema.format,
                        Some(SchemaFormat::KnownFormat(KnownFormat::Date))
                    ) {
                        schema.min_length.get_or_insert(10);
                    }
                }
            }
        }
    }
}

/// A flow's step or error code (`domain::flow_events::parse_event`): a lowercase letter, then
/// lowercase letters, digits, `-` or `_`, never four digits in a row.
const SLUG: &str = r"^[a-z]([a-z_-]|[0-9]{1,3}[a-z_-])*[0-9]{0,3}$";
const STEP_MAX: usize = 40;
const ERROR_CODE_MAX: usize = 64;

/// A character of text: anything but a control character (`char::is_control`).
const TEXT: &str = r"[^\x00-\x1f\x7f-\x9f]";
const CONTROL: &str = r"\x00-\x1f\x7f-\x9f";

/// A US number as `domain::account::parse_us_phone` takes it: ten digits (after an optional
/// country code 1), area code and exchange from 2 to 9, spaces, dashes, dots and parentheses
/// anywhere, a `+` first.
const US_PHONE: &str = r"^\s*\+?[ .()-]*(1[ .()-]*)?[2-9]([ .()-]*[0-9]){2}[ .()-]*[2-9]([ .()-]*[0-9]){6}[ .()-]*\s*$";

/// A Social Security number the SSA could have issued (`domain::account::parse_ssn`): no area
/// 000, 666 or 900-999, no group 00, no serial 0000; with both dashes or none.
const SSN: &str = r"^\s*(00[1-9]|0[1-9][0-9]|[1-5][0-9]{2}|6[0-5][0-9]|66[0-57-9]|6[7-9][0-9]|[78][0-9]{2})(-(0[1-9]|[1-9][0-9])-|(0[1-9]|[1-9][0-9]))(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})\s*$";

/// Dollars from 0 to 1,000 with at most two decimal places.
const DOLLARS: &str = r"^\s*([0-9]{1,3}(\.[0-9]{1,2})?|1000(\.00?)?)\s*$";

/// A host name whose last label begins with a letter (not an address), an optional port (up to
/// 65535), then anything: the URLs every parser reads alike.
const HOST_AND_PATH: &str = r"([A-Za-z0-9_-]+\.)*[A-Za-z][A-Za-z0-9_-]*(:0*(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})?)?([/?#][\s\S]*)?";

/// Where renewal notices send the customer (`domain::account::parse_renewals_url`): https, or
/// http on the local machine (in sandbox).
fn renewals_url() -> String {
    format!(r"^\s*(https://{HOST_AND_PATH}|http://localhost(:[0-9]{{1,4}})?([/?#][\s\S]*)?)\s*$")
}

/// A webhook endpoint (`domain::webhooks::parse_endpoint_url`): http or https (a live app's must
/// be https and public, else `422 url_not_allowed`).
fn endpoint_url() -> String {
    format!(r"^\s*https?://{HOST_AND_PATH}\s*$")
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
/// given another type, an enum value removed; in a request body (a schema named `...In`) a field
/// newly required, a field that took `null` and no longer does, or one newly limited to a list
/// of values; in an answer, a field that may now be left out or `null`. A schema's fields are
/// read through its `allOf` (its own object and the rules added to it), so wrapping a schema in
/// one changes nothing by itself. Each is named by the key the changelog must quote:
/// `GET /v1/x`, `Schema`, `Schema.field`, `Schema: value`; sorted, each once.
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
        let request = name.ends_with("In");
        let (was, now) = (Fields::of(old, before), Fields::of(new, after));
        for (field, before) in &was.properties {
            let key = format!("{name}.{field}");
            let Some(after) = now.properties.get(field) else {
                changes.push(key);
                continue;
            };
            let (b, a) = (Shape::of(before), Shape::of(after));
            let retyped = b.types != a.types || b.refs != a.refs;
            let narrowed = request
                && ((b.nullable && !a.nullable)
                    || (b.values.is_none() && a.values.is_some())
                    || b.values
                        .as_ref()
                        .zip(a.values.as_ref())
                        .is_some_and(|(b, a)| b.iter().any(|v| !a.contains(v) && !v.is_null())));
            let widened = !request && !b.nullable && a.nullable;
            if retyped || narrowed || widened {
                changes.push(key);
            }
        }
        if request {
            for field in now.required.difference(&was.required) {
                changes.push(format!("{name}.{field}"));
            }
        } else {
            for field in was.required.difference(&now.required) {
                if now.properties.contains_key(field) {
                    changes.push(format!("{name}.{field}"));
                }
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
    }
    changes.sort();
    changes.dedup();
    changes
}

/// A schema's fields as a client reads them: its own properties and required fields with those
/// of its `allOf`'s members (objects, or schemas of the document they name).
#[derive(Default)]
struct Fields {
    properties: std::collections::BTreeMap<String, serde_json::Value>,
    required: std::collections::BTreeSet<String>,
}

impl Fields {
    fn of(doc: &serde_json::Value, schema: &serde_json::Value) -> Fields {
        let mut fields = Fields::default();
        fields.add(doc, schema, 0);
        fields
    }

    fn add(&mut self, doc: &serde_json::Value, schema: &serde_json::Value, depth: usize) {
        if depth > 8 {
            return;
        }
        if let Some(target) = schema["$ref"].as_str() {
            if let Some(name) = target.strip_prefix("#/components/schemas/") {
                self.add(doc, &doc["components"]["schemas"][name], depth + 1);
            }
            return;
        }
        for (field, property) in schema["properties"].as_object().into_iter().flatten() {
            self.properties
                .entry(field.clone())
                .or_insert_with(|| property.clone());
        }
        for field in schema["required"].as_array().into_iter().flatten() {
            if let Some(field) = field.as_str() {
                self.required.insert(field.to_owned());
            }
        }
        for member in schema["allOf"].as_array().into_iter().flatten() {
            self.add(doc, member, depth + 1);
        }
    }
}

/// What a field holds: its types but `null`, the schemas it names, whether it may be `null`,
/// and the values it is limited to (if any), through `oneOf`, `anyOf` and `allOf`.
#[derive(Default)]
struct Shape {
    types: std::collections::BTreeSet<String>,
    refs: std::collections::BTreeSet<String>,
    nullable: bool,
    values: Option<Vec<serde_json::Value>>,
}

impl Shape {
    fn of(schema: &serde_json::Value) -> Shape {
        let mut shape = Shape::default();
        shape.add(schema);
        shape
    }

    fn add(&mut self, schema: &serde_json::Value) {
        if let Some(target) = schema["$ref"].as_str() {
            self.refs.insert(target.to_owned());
        }
        let types = match &schema["type"] {
            serde_json::Value::String(t) => vec![t.clone()],
            serde_json::Value::Array(list) => list
                .iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        for t in types {
            if t == "null" {
                self.nullable = true;
            } else {
                self.types.insert(t);
            }
        }
        if let Some(values) = schema["enum"].as_array() {
            if values.iter().any(serde_json::Value::is_null) {
                self.nullable = true;
            }
            self.values
                .get_or_insert_with(Vec::new)
                .extend(values.iter().cloned());
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            for member in schema[key].as_array().into_iter().flatten() {
                self.add(member);
            }
        }
    }
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
    fn a_schema_wrapped_in_all_of_is_read_through_it() {
        let mut new = doc();
        let account_in = new["components"]["schemas"]["AccountIn"].clone();
        new["components"]["schemas"]["AccountIn"] =
            json!({"allOf": [account_in, {"anyOf": [{"required": ["email"]}, {}]}]});
        let account = new["components"]["schemas"]["Account"].clone();
        new["components"]["schemas"]["Account"] = json!({"allOf": [account, {}]});
        assert!(breaking_changes(&doc(), &new).is_empty());

        // A field required by the object inside the `allOf` is required.
        new["components"]["schemas"]["AccountIn"]["allOf"][0]["required"] = json!(["email"]);
        assert_eq!(breaking_changes(&doc(), &new), ["AccountIn.email"]);
    }

    #[test]
    fn a_request_field_that_no_longer_takes_null_or_any_value_breaks() {
        let mut old = doc();
        old["components"]["schemas"]["AccountIn"]["properties"]["status"] =
            json!({"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/Status"}]});
        old["components"]["schemas"]["AccountIn"]["properties"]["name"] =
            json!({"type": ["string", "null"]});
        let mut new = old.clone();
        new["components"]["schemas"]["AccountIn"]["properties"]["status"] =
            json!({"$ref": "#/components/schemas/Status"});
        assert_eq!(breaking_changes(&old, &new), ["AccountIn.status"]);

        let mut new = old.clone();
        new["components"]["schemas"]["AccountIn"]["properties"]["name"] = json!({"type": "string"});
        new["components"]["schemas"]["AccountIn"]["properties"]["email"] =
            json!({"type": "string", "enum": ["a@example.com"]});
        assert_eq!(
            breaking_changes(&old, &new),
            ["AccountIn.email", "AccountIn.name"]
        );
        // Taking more is no break.
        assert!(breaking_changes(&new, &old).is_empty());
    }

    #[test]
    fn an_answer_field_that_may_be_missing_or_null_breaks() {
        let mut new = doc();
        new["components"]["schemas"]["Account"]["required"] = json!([]);
        assert_eq!(breaking_changes(&doc(), &new), ["Account.uuid"]);
        let mut new = doc();
        new["components"]["schemas"]["Account"]["properties"]["uuid"] =
            json!({"type": ["string", "null"]});
        assert_eq!(breaking_changes(&doc(), &new), ["Account.uuid"]);
        // An answer that says less often (a field now always there) breaks nothing.
        assert!(breaking_changes(&new, &doc()).is_empty());
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
