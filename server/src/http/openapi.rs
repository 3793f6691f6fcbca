//! The OpenAPI 3.1 document, generated from the handlers' annotations and served at
//! `/v1/openapi.json`. A test compares it with the committed `openapi.json`.

use axum::response::{IntoResponse, Response};
use utoipa::{
    openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
    Modify, OpenApi,
};

use super::{
    accounts, apps, billing, enrollment, error::ErrorCode, events, flows, identity, market, ops,
    processor, sandbox, usage, webhooks,
};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Switchboard API",
        version = "1",
        description = "Branded retail electricity: accounts, enrollment, billing and renewal."
    ),
    paths(
        apps::get_app,
        accounts::create_account,
        accounts::list_accounts,
        accounts::get_account,
        accounts::update_account,
        accounts::create_account_token,
        accounts::record_client_agent,
        flows::create_flow_login,
        accounts::get_own_account,
        enrollment::confirm_address,
        enrollment::accept_plan,
        enrollment::finalize,
        enrollment::get_billing_address,
        enrollment::put_billing_address,
        enrollment::get_location,
        enrollment::location_support_info,
        enrollment::cancel_service,
        enrollment::location_plan,
        enrollment::location_documents,
        enrollment::location_all_documents,
        enrollment::request_renewal_plans,
        enrollment::accept_renewal_plan,
        identity::update_identity,
        identity::submit_credit_check,
        billing::create_payment_session,
        billing::ensure_payment_method_added,
        billing::get_payment_method,
        billing::list_invoices,
        billing::get_invoice,
        billing::invoice_pdf,
        billing::pay_invoice,
        usage::monthly,
        usage::daily,
        usage::intervals,
        usage::meter_reads,
        processor::create_payment_method,
        events::list_events,
        events::get_event,
        events::redeliver_event,
        webhooks::create_endpoint,
        webhooks::list_endpoints,
        webhooks::get_endpoint,
        webhooks::update_endpoint,
        webhooks::delete_endpoint,
        webhooks::rotate_secret,
        webhooks::list_deliveries,
        webhooks::recover,
        webhooks::send_test,
        sandbox::advance_clock,
        sandbox::simulate,
        sandbox::delete_enrollment,
        sandbox::seed_demo_data,
        sandbox::list_emails,
        market::list_plan_groups,
        market::app_eligibility,
        market::account_eligibility,
        market::app_address_search,
        market::account_address_search,
        market::app_full_address_search,
        market::account_full_address_search,
        market::esi_id_search,
        market::app_request_plans,
        market::app_request_account_plans,
        market::account_request_plans,
        market::benchmarks,
        ops::healthz,
        ops::readyz,
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
    let doc = ApiDoc::openapi();
    doc.to_pretty_json().unwrap_or_default() + "\n"
}

pub async fn serve() -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        document(),
    )
        .into_response()
}
