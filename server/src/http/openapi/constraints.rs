//! What the server enforces that the derived schemas cannot say, added to the document from the
//! server's own lists and patterns: each enumerated field's names, the listing ranges, the
//! patterns of text, phone numbers, SSNs, amounts and URLs, and the rules between fields.

use utoipa::Modify;

use crate::domain::{
    credit::SIMULATED_EVENTS,
    enrollment::{CancelReason, EnrollmentType},
    estimate::HomeSize,
    events::EVENT_TYPES,
    flow_events::FlowEventName,
    flows::FlowScope,
};
use crate::http::pagination::Page;

/// What the server enforces that the derived schemas cannot say: the names each enumerated field
/// takes (from the lists the server parses with), the listing ranges of `limit` and `offset`, and
/// the rules between fields (`esi_id` or `postal_code`; exactly one of `to` and `days`), and the
/// ESI IDs of the known utilities.
pub(super) struct Constraints;

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
