//! The documents of each location (those in force first, each a PDF), and where each location
//! stands with its renewal.

use app::format::{long_date, short_date};
use axum::{extract::State, http::StatusCode, response::Response};
use leptos::prelude::*;
use tower_sessions::Session;
use uuid::Uuid;

use super::{address_of, open_flow, portal_page};
use crate::{
    domain::documents::DocumentStatus,
    http::{
        error::{ApiError, ApiResult},
        extract::Path,
        portal::render::paragraph,
        AppState,
    },
    services::portal::{self as portal_service, RenewalState},
};

/// The documents of each location, those in force first.
pub async fn documents_page(
    State(state): State<AppState>,
    session: Session,
) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let all = portal_service::documents(&state, c.account.uuid).await?;
    let none = all
        .iter()
        .all(|(_, d)| d.is_empty())
        .then(|| paragraph("Your documents show here once you have accepted a plan."));
    let sections = all
        .into_iter()
        .filter(|(_, documents)| !documents.is_empty())
        .map(|(location, mut documents)| {
            documents.sort_by_key(|d| {
                (
                    d.status != DocumentStatus::Active,
                    d.status != DocumentStatus::Queued,
                    std::cmp::Reverse(d.effective_date),
                )
            });
            let items = documents
                .into_iter()
                .map(|d| {
                    let status = match d.status {
                        DocumentStatus::Active => "in force",
                        DocumentStatus::Queued => "from",
                        DocumentStatus::Superseded => "replaced; from",
                    };
                    let when = match d.status {
                        DocumentStatus::Active => format!("since {}", short_date(d.effective_date)),
                        _ => short_date(d.effective_date),
                    };
                    let href = format!("/portal/documents/{}", d.uuid);
                    let said = format!("{status} {when}");
                    view! {
                        <li>
                            <a href=href data-testid="document">{d.kind.title()}</a>
                            " "
                            <span class="muted">{said}</span>
                        </li>
                    }
                })
                .collect_view();
            view! {
                <section class="card">
                    <h2>{address_of(&location)}</h2>
                    <ul class="documents-list" data-testid="documents">{items}</ul>
                </section>
            }
        })
        .collect_view();
    Ok(portal_page(
        StatusCode::OK,
        &c,
        "/portal/documents",
        "Your documents",
        "portal-documents",
        view! { {none} {sections} }.into_any(),
    ))
}

/// One of the account's documents as a PDF.
pub async fn document_pdf(
    State(state): State<AppState>,
    session: Session,
    Path(document): Path<Uuid>,
) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let (name, bytes) = portal_service::document_pdf(&state, c.account.uuid, document)
        .await
        .map_err(|e| ApiError::from(e).as_page())?;
    Ok(crate::http::market::pdf_response(bytes, &name))
}

/// Where each location stands with its renewal, and the renewal flow when it is open.
pub async fn renewal_page(State(state): State<AppState>, session: Session) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let renewals = portal_service::renewals(&state, c.account.uuid).await?;
    let mut open = false;
    let mut sections = Vec::new();
    for r in &renewals {
        let plan = r.plan.as_ref().map(|plan| {
            paragraph(match plan.end_date {
                Some(end) => format!(
                    "Your plan: {}, from {} to {}.",
                    plan.plan_name,
                    long_date(plan.start_date),
                    long_date(end)
                ),
                None => format!(
                    "Your plan: {}, month to month since {}.",
                    plan.plan_name,
                    long_date(plan.start_date)
                ),
            })
        });
        let (text, can_renew) = match &r.state {
            RenewalState::Open { end } => (
                format!(
                    "Renewal is open: choose your next plan. It starts on {}, the day after \
                     your contract ends, with no gap in your service.",
                    long_date(*end + chrono::Duration::days(1))
                ),
                true,
            ),
            RenewalState::Opens { opens, .. } => (
                format!(
                    "Renewal opens on {}: we e-mail you then with your plans.",
                    long_date(*opens)
                ),
                false,
            ),
            RenewalState::MonthToMonth => (
                "You are month to month: you can choose a fixed-price plan, starting tomorrow."
                    .to_owned(),
                true,
            ),
            RenewalState::Queued { plan, start } => (
                format!(
                    "You have renewed: {plan} starts on {}. Nothing else to do.",
                    long_date(*start)
                ),
                false,
            ),
            RenewalState::Nothing => ("There is no plan to renew here.".to_owned(), false),
        };
        sections.push(view! {
            <section class="card stack" data-testid="renewal">
                <h2>{address_of(&r.location)}</h2>
                {plan}
                <p data-testid="renewal-state">{text}</p>
            </section>
        });
        open |= can_renew;
    }
    let none = renewals.is_empty().then(|| {
        paragraph("There is nothing to renew yet: your plan shows here once your service starts.")
    });
    let renew = open.then(|| open_flow("renewal", &c.csrf, "See renewal plans"));
    Ok(portal_page(
        StatusCode::OK,
        &c,
        "/portal/renewal",
        "Renew your plan",
        "portal-renewal",
        view! { {sections} {none} {renew} }.into_any(),
    ))
}
