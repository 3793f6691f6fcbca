//! The billing address: where the bills go, and the form that changes it through the same
//! service as the API's.

use app::api::PostalAddressIn;
use axum::{extract::State, http::StatusCode, response::Response, Form};
use leptos::prelude::*;
use serde::Deserialize;
use tower_sessions::Session;

use super::{portal_page, Customer};
use crate::{
    domain::{account::parse_postal_address, FieldError},
    http::{
        branded,
        error::{ApiError, ApiResult},
        extract::Query,
        portal::{
            render::{alert, csrf_field, paragraph},
            see_other,
        },
        websession, AppState,
    },
    services,
};

#[derive(Debug, Default, Deserialize)]
pub struct AddressForm {
    csrf: Option<String>,
    /// "service" or "other".
    which: Option<String>,
    address_1: Option<String>,
    address_2: Option<String>,
    city: Option<String>,
    state: Option<String>,
    postal_code: Option<String>,
}

fn address_form(csrf: &str, same: bool, given: &AddressForm) -> impl IntoView {
    let field = |name: &'static str,
                 label: &'static str,
                 autocomplete: &'static str,
                 v: &Option<String>| {
        let value = v.clone().unwrap_or_default();
        view! {
            <label for=name>{label}</label>
            <input id=name name=name type="text" autocomplete=autocomplete value=value/>
        }
    };
    view! {
        <form method="post" action="/portal/billing-address" class="stack">
            {csrf_field(csrf)}
            <fieldset class="stack">
                <legend>"Send my bills to"</legend>
                <label class="option">
                    <input type="radio" name="which" value="service" checked=same/>
                    " My service address"
                </label>
                <label class="option">
                    <input type="radio" name="which" value="other" checked=!same/>
                    " Another address (below)"
                </label>
            </fieldset>
            {field("address_1", "Street address", "address-line1", &given.address_1)}
            {field("address_2", "Apartment or unit (optional)", "address-line2", &given.address_2)}
            {field("city", "City", "address-level2", &given.city)}
            <div class="row">
                <div class="stack">{field("state", "State", "address-level1", &given.state)}</div>
                <div class="stack">
                    {field("postal_code", "ZIP code", "postal-code", &given.postal_code)}
                </div>
            </div>
            <button type="submit" class="primary" data-testid="save-address">
                "Save billing address"
            </button>
        </form>
    }
}

async fn address_page(
    state: &AppState,
    c: &Customer,
    status: StatusCode,
    given: Option<&AddressForm>,
    message: Option<(&str, bool)>,
) -> ApiResult<Response> {
    let current = services::enrollment::billing_address(&state.db, c.account.uuid).await?;
    let message = message.map(|(text, error)| {
        let text = text.to_owned();
        if error {
            alert(text).into_any()
        } else {
            view! { <p class="notice" role="status" data-testid="saved">{text}</p> }.into_any()
        }
    });
    let Some(current) = current else {
        let body = view! {
            {message}
            {paragraph(
                "Your bills go to your service address, once it is confirmed in your enrollment.",
            )}
        };
        return Ok(portal_page(
            status,
            c,
            "/portal/billing-address",
            "Billing address",
            "portal-billing-address",
            body.into_any(),
        ));
    };
    let b = &current.billing;
    let (same, lines) = match (b.same_as_service_address, current.service.as_ref()) {
        (true, Some(s)) => (
            true,
            [
                Some(s.address_1.clone()),
                s.address_2.clone(),
                Some(format!("{}, {} {}", s.city, s.state, s.postal_code)),
            ],
        ),
        _ => (
            false,
            [
                b.address_1.clone(),
                b.address_2.clone(),
                Some(format!(
                    "{}, {} {}",
                    b.city.clone().unwrap_or_default(),
                    b.state.clone().unwrap_or_default(),
                    b.postal_code.clone().unwrap_or_default()
                )),
            ],
        ),
    };
    let shown: Vec<AnyView> = lines
        .into_iter()
        .flatten()
        .filter(|l| !l.trim().is_empty())
        .map(IntoAny::into_any)
        .collect();
    let heading = if same {
        "Your bills go to your service address"
    } else {
        "Your bills go to"
    };
    let prefill = AddressForm {
        address_1: b.address_1.clone(),
        address_2: b.address_2.clone(),
        city: b.city.clone(),
        state: b.state.clone(),
        postal_code: b.postal_code.clone(),
        ..AddressForm::default()
    };
    let (form_same, form_values) = match given {
        Some(g) => (g.which.as_deref() == Some("service"), g),
        None => (same, &prefill),
    };
    let body = view! {
        {message}
        <section class="card">
            <h2>{heading}</h2>
            <p data-testid="billing-address">{branded::lines(shown)}</p>
        </section>
        <section class="card stack">
            <h2>"Change it"</h2>
            {address_form(&c.csrf, form_same, form_values)}
        </section>
    };
    Ok(portal_page(
        status,
        c,
        "/portal/billing-address",
        "Billing address",
        "portal-billing-address",
        body.into_any(),
    ))
}

#[derive(Debug, Deserialize)]
pub struct SavedQuery {
    saved: Option<String>,
}

pub async fn billing_address_page(
    State(state): State<AppState>,
    session: Session,
    Query(q): Query<SavedQuery>,
) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let message = q
        .saved
        .is_some()
        .then_some(("Saved: your next bills go to this address.", false));
    address_page(&state, &c, StatusCode::OK, None, message).await
}

/// Changes the billing address through the same service as the API's.
pub async fn set_billing_address(
    State(state): State<AppState>,
    session: Session,
    Form(f): Form<AddressForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let c = customer_or_sign_in!(state, session);
    let address = match f.which.as_deref() {
        Some("service") => None,
        Some("other") => match parse_postal_address(
            "address",
            PostalAddressIn {
                address_1: f.address_1.clone(),
                address_2: f.address_2.clone(),
                city: f.city.clone(),
                state: f.state.clone(),
                postal_code: f.postal_code.clone(),
            },
        ) {
            Ok(a) => Some(a),
            Err(e) => {
                let message = address_error(&e);
                return address_page(
                    &state,
                    &c,
                    StatusCode::BAD_REQUEST,
                    Some(&f),
                    Some((message.as_str(), true)),
                )
                .await;
            }
        },
        _ => {
            return address_page(
                &state,
                &c,
                StatusCode::BAD_REQUEST,
                Some(&f),
                Some(("Choose where your bills go.", true)),
            )
            .await
        }
    };
    match services::enrollment::set_billing_address(
        &state,
        c.account.app_uuid,
        c.account.uuid,
        address,
    )
    .await
    {
        Ok(_) => {
            state.account_changed(c.account.uuid);
            Ok(see_other("/portal/billing-address?saved=1"))
        }
        Err(services::Error::Refused(_)) => {
            address_page(
                &state,
                &c,
                StatusCode::CONFLICT,
                Some(&f),
                Some((
                    "Your service address is not confirmed yet: give another address for now.",
                    true,
                )),
            )
            .await
        }
        Err(services::Error::Failed(e)) => Err(ApiError::internal(e)),
    }
}

/// What a refused address says to a person, by the field it names.
fn address_error(e: &FieldError) -> String {
    let field = e.param.rsplit('.').next().unwrap_or_default();
    match field {
        "address_1" => "Type the street address.",
        "city" => "Type the city.",
        "state" => "Type the state as two letters, such as TX.",
        "postal_code" => "Type the ZIP code as five digits (or ZIP+4).",
        _ => "Check the address: a part of it is missing or too long.",
    }
    .to_owned()
}
