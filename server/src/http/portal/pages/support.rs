//! Whom to call: the partner for the account and bills (its support contacts, through the one
//! component every branded page uses), the utility for outages and meters.

use app::format::phone;
use axum::{extract::State, http::StatusCode, response::Response};
use leptos::prelude::*;
use tower_sessions::Session;

use super::{address_of, portal_page};
use crate::{
    http::{
        branded::{self, support_contacts, Contacts},
        error::ApiResult,
        AppState,
    },
    services::portal as portal_service,
    store::{self, apps::AppRow},
};

/// What a customer is told to call for an outage at a location: the utility by name with its
/// outage number when known, else its main number, else the generic advice.
fn outage_line(tdu: Option<&store::market::TduRow>) -> AnyView {
    match tdu {
        Some(t) => match t.outage_phone.clone().filter(|p| !p.trim().is_empty()) {
            Some(p) => {
                let (name, href, shown) = (t.display_name.clone(), format!("tel:{p}"), phone(&p));
                view! {
                    "For a power outage or a downed line, call " {name} " at "
                    <a href=href data-testid="outage-phone">{shown}</a>
                    ", day or night."
                }
                .into_any()
            }
            None => format!(
                "For a power outage or a downed line, call {} at {}, day or night.",
                t.display_name,
                phone(&t.phone)
            )
            .into_any(),
        },
        None => "For a power outage or a downed line, call your utility (the number is on your \
                 bill), day or night."
            .into_any(),
    }
}

/// The home's support card: the partner's contacts, and whom to call for an outage: the
/// utility of the customer's location by name and number once known.
pub(in crate::http::portal) fn support_card(
    app: &AppRow,
    utility: Option<&store::market::TduRow>,
) -> impl IntoView {
    let partner = support_contacts(&Contacts::of(app), &app.display_name, true);
    let outage = outage_line(utility);
    view! {
        <section class="card" data-testid="support">
            <h2>"Support"</h2>
            <p>{partner} <br/> {outage}</p>
            <p><a href="/portal/support">"All your contacts"</a></p>
        </section>
    }
}

/// Whom to call: the partner for the account and bills, the utility for outages and meters.
pub async fn support_page(State(state): State<AppState>, session: Session) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let utilities = portal_service::utilities(&state, c.account.uuid).await?;
    let partner = support_contacts(&Contacts::of(&c.app), &c.app.display_name, true);
    let locations = utilities
        .iter()
        .map(|(location, tdu)| {
            let mut lines = vec![outage_line(tdu.as_ref())];
            if let Some(t) = tdu {
                lines.push(
                    format!(
                        "Meters and wires: {} at {}",
                        t.display_name,
                        phone(&t.phone)
                    )
                    .into_any(),
                );
                if t.website.starts_with("https://") {
                    let (href, shown) = (t.website.clone(), t.website.clone());
                    lines.push(view! { <a href=href>{shown}</a> }.into_any());
                }
            }
            let heading = format!("Outages at {}", address_of(location));
            view! {
                <section class="card" data-testid="utility-support">
                    <h2>{heading}</h2>
                    <p>{branded::lines(lines)}</p>
                </section>
            }
        })
        .collect_view();
    let unknown = utilities.is_empty().then(|| {
        view! {
            <section class="card">
                <h2>"Outages"</h2>
                <p>{outage_line(None)}</p>
            </section>
        }
    });
    let body = view! {
        <section class="card" data-testid="partner-support">
            <h2>"Your account and bills"</h2>
            <p>{partner}</p>
        </section>
        {locations}
        {unknown}
    };
    Ok(portal_page(
        StatusCode::OK,
        &c,
        "/portal/support",
        "Support",
        "portal-support",
        body.into_any(),
    ))
}
