//! The account's payment method and invoices. A card is added with a payment session for the
//! processor's browser component, then `ensure-payment-method-added` with the `pm_...` id it
//! returned: card data never passes through `/v1`. Sandbox apps use the built-in test-mode
//! processor, live apps the real one with their own keys (`adapters::payments`). Invoices are
//! issued by the billing cycle (`services::billing`, run by `jobs::cycle`); here they are
//! listed, shown, printed as PDF and paid early with the saved card (`services::invoices`).

use std::str::FromStr;

use app::api::{
    billing::{
        ChargesGroup, Invoice, InvoiceCharge, InvoiceDetail, InvoiceUsage, InvoiceUsageDay,
        Payment, PaymentRefund,
    },
    EnsurePaymentMethodIn, ErrorEnvelope, List, PaymentMethod, PaymentSession, Timestamp,
};
use axum::{extract::State, http::header, response::IntoResponse, routing::get, Router};
use rust_decimal::Decimal;
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::{
    auth::AccountPrincipal,
    error::{ApiError, ApiResult, ErrorCode},
    extract::{Json, Path, Query},
    links::{signed_url, SignedLink},
    pagination::Page,
    routes, ApiRouter, AppState,
};
use crate::{
    domain::billing::average_cents_per_kwh,
    services::{
        billing::{ensure_card, payment_session},
        invoices::{self, InvoicePdf},
    },
    store::{
        self,
        billing::{InvoiceRow, PaymentRow, RefundRow},
        payments::CardRow,
    },
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(create_payment_session))
        .routes(routes!(ensure_payment_method_added))
        .routes(routes!(get_payment_method))
        .routes(routes!(list_invoices))
        .routes(routes!(get_invoice))
        .routes(routes!(invoice_pdf))
        .routes(routes!(pay_invoice))
}

/// The invoice PDFs' signed links, opened in a browser with no token.
pub fn public_router() -> Router<AppState> {
    Router::new().route(
        "/files/invoices/{account_uuid}/{invoice_number}",
        get(signed_invoice_pdf),
    )
}

/// The path of an invoice's signed link (`links::signed_url` makes it absolute and signs it).
fn invoice_file_path(account_uuid: Uuid, number: &str) -> String {
    format!("/files/invoices/{account_uuid}/{number}")
}

pub fn render(card: &CardRow) -> PaymentMethod {
    PaymentMethod {
        kind: "card".to_owned(),
        card_brand: card.brand.clone(),
        card_last4: card.last4.clone(),
        card_exp_month: u32::try_from(card.exp_month).unwrap_or_default(),
        card_exp_year: card.exp_year,
        card_postal_code: card.postal_code.clone(),
    }
}

/// Start adding (or replacing) a card: a single-use client secret for the processor.
#[utoipa::path(
    post, path = "/v1/account/billing/payment-session", tag = "billing",
    responses(
        (status = 200, description = "The session", body = PaymentSession),
        (status = 503, description = "The app cannot take cards now (`service_unavailable`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn create_payment_session(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<PaymentSession>> {
    let session = payment_session(&state, &principal.app, principal.account_uuid).await?;
    Ok(axum::Json(PaymentSession {
        client_secret: session.client_secret,
        publishable_key: session.publishable_key,
        expires_at: Timestamp(session.expires_at),
    }))
}

/// Attach the payment method the processor created; the card is not charged.
#[utoipa::path(
    post, path = "/v1/account/billing/ensure-payment-method-added", tag = "billing",
    request_body = EnsurePaymentMethodIn,
    responses(
        (status = 200, description = "The account's payment method", body = PaymentMethod),
        (status = 404, description = "No such payment method for this account", body = ErrorEnvelope),
        (status = 503, description = "The processor cannot be reached now (`service_unavailable`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn ensure_payment_method_added(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<EnsurePaymentMethodIn>,
) -> ApiResult<axum::Json<PaymentMethod>> {
    let account = principal.account_uuid;
    let card = ensure_card(&state, &principal.app, account, &input.payment_method_id).await?;
    state.account_changed(account);
    Ok(axum::Json(render(&card)))
}

/// The account's current payment method.
#[utoipa::path(
    get, path = "/v1/account/billing/payment-method", tag = "billing",
    responses(
        (status = 200, description = "The payment method", body = PaymentMethod),
        (status = 404, description = "None yet", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn get_payment_method(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<PaymentMethod>> {
    store::payments::current_payment_method(&state.db, principal.account_uuid)
        .await?
        .map(|c| axum::Json(render(&c)))
        .ok_or_else(|| ApiError::not_found("payment method"))
}

fn render_invoice(state: &AppState, row: &InvoiceRow) -> Invoice {
    // Unreadable kWh shows no average rather than one computed from zero.
    let kwh = Decimal::from_str(&row.total_kwh).ok();
    Invoice {
        number: row.number.clone(),
        invoice_date: row.invoice_date,
        payment_due_date: row.payment_due_date,
        billing_period_start: row.billing_period_start,
        billing_period_end: row.billing_period_end,
        total_cents: row.total_cents,
        total: format!(
            "{:.2}",
            Decimal::from(row.total_cents) / Decimal::ONE_HUNDRED
        ),
        total_kwh: row.total_kwh.clone(),
        avg_cents_per_kwh: kwh
            .and_then(|kwh| average_cents_per_kwh(row.total_cents, kwh))
            .map(|a| a.to_string()),
        status: row.status.to_string(),
        paid_at: row.paid_at.map(Timestamp),
        voided_at: row.voided_at.map(Timestamp),
        pdf: signed_url(state, &invoice_file_path(row.account_uuid, &row.number)),
        location_uuid: row.location_uuid,
    }
}

fn render_payment(row: &PaymentRow, invoice_number: &str, refunds: &[RefundRow]) -> Payment {
    Payment {
        uuid: row.uuid,
        invoice_number: invoice_number.to_owned(),
        amount_cents: row.amount_cents,
        status: row.status.to_string(),
        attempted_at: Timestamp(row.attempted_at),
        failure_code: row.failure_code.clone(),
        refunded_cents: row.refunded_cents,
        refunds: refunds
            .iter()
            .filter(|r| r.payment_uuid == row.uuid)
            .map(|r| PaymentRefund {
                amount_cents: r.amount_cents,
                refunded_at: Timestamp(r.created_at),
            })
            .collect(),
        disputed_at: row.disputed_at.map(Timestamp),
    }
}

fn render_pdf(pdf: InvoicePdf) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "application/pdf".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("inline; filename=\"invoice-{}.pdf\"", pdf.number),
            ),
        ],
        pdf.bytes,
    )
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct InvoicesQuery {
    /// 1 to 100, default 20.
    limit: Option<u32>,
    offset: Option<u64>,
}

/// The account's invoices, newest first.
#[utoipa::path(
    get, path = "/v1/account/billing/invoices", tag = "billing",
    params(InvoicesQuery),
    responses(
        (status = 200, description = "A page of invoices", body = List<Invoice>),
        (status = 400, description = "A parameter is invalid", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn list_invoices(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Query(q): Query<InvoicesQuery>,
) -> ApiResult<axum::Json<List<Invoice>>> {
    let page = Page::parse(q.limit, q.offset)?;
    let rows = store::billing::invoices_of_account(
        &state.db,
        principal.account_uuid,
        i64::from(page.limit) + 1,
        i64::try_from(page.offset).unwrap_or(i64::MAX),
    )
    .await?;
    let invoices = rows.iter().map(|r| render_invoice(&state, r)).collect();
    Ok(axum::Json(page.list(
        invoices,
        "/v1/account/billing/invoices",
        &[],
    )))
}

/// One invoice with its charges, the period's daily usage and its payment attempts.
#[utoipa::path(
    get, path = "/v1/account/billing/invoices/{invoice_number}", tag = "billing",
    params(("invoice_number" = String, Path)),
    responses(
        (status = 200, description = "The invoice", body = InvoiceDetail),
        (status = 404, description = "No such invoice on this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn get_invoice(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(number): Path<String>,
) -> ApiResult<axum::Json<InvoiceDetail>> {
    let detail = invoices::invoice_detail(&state, principal.account_uuid, &number).await?;
    let row = &detail.invoice;
    let charges_groups = detail
        .groups
        .into_iter()
        .map(|g| ChargesGroup {
            name: g.name,
            total_cents: g.total_cents,
            charges: g
                .charges
                .into_iter()
                .map(|c| InvoiceCharge {
                    description: c.description,
                    quantity: c.quantity.normalize().to_string(),
                    unit: c.unit,
                    rate: c.rate.normalize().to_string(),
                    amount_cents: c.amount_cents,
                })
                .collect(),
        })
        .collect();
    Ok(axum::Json(InvoiceDetail {
        invoice: render_invoice(&state, row),
        charges_groups,
        usage: InvoiceUsage {
            total_kwh: row.total_kwh.clone(),
            generation_kwh: row.generation_kwh.clone(),
            daily: detail
                .days
                .into_iter()
                .map(|d| InvoiceUsageDay {
                    date: d.day,
                    consumption: d.consumption_kwh,
                    generation: d.generation_kwh,
                })
                .collect(),
        },
        payments: detail
            .payments
            .iter()
            .map(|p| render_payment(p, &row.number, &detail.refunds))
            .collect(),
    }))
}

/// The invoice as a PDF.
#[utoipa::path(
    get, path = "/v1/account/billing/invoices/{invoice_number}/pdf", tag = "billing",
    params(("invoice_number" = String, Path)),
    responses(
        (status = 200, description = "The invoice", content_type = "application/pdf", body = Vec<u8>),
        (status = 404, description = "No such invoice on this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn invoice_pdf(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(number): Path<String>,
) -> ApiResult<impl IntoResponse> {
    let pdf =
        invoices::invoice_pdf(&state, &principal.app, principal.account_uuid, &number).await?;
    Ok(render_pdf(pdf))
}

/// The invoice as a PDF, through the signed link its `pdf` field gives (no token).
pub async fn signed_invoice_pdf(
    State(state): State<AppState>,
    _link: SignedLink,
    Path((account_uuid, number)): Path<(Uuid, String)>,
) -> ApiResult<impl IntoResponse> {
    let pdf = invoices::linked_invoice_pdf(&state, account_uuid, &number).await?;
    Ok(render_pdf(pdf))
}

/// Pay the invoice now with the saved card. A declined card answers 402 `card_declined` with
/// its `decline_code`; the attempt is kept on the invoice and `account.payment_failed` is
/// emitted. Success emits `account.payment_successful` and `invoice.paid`.
#[utoipa::path(
    post, path = "/v1/account/billing/invoices/{invoice_number}/pay", tag = "billing",
    params(("invoice_number" = String, Path)),
    responses(
        (status = 200, description = "The payment, succeeded", body = Payment),
        (status = 402, description = "The card was declined (`card_declined`, with `decline_code`). `decline_code` `authentication_required` (live apps): the card's bank wants the customer to confirm this payment; they are e-mailed a link to a page where they do it, and the invoice is paid once the bank confirms it", body = ErrorEnvelope),
        (status = 404, description = "No such invoice on this account", body = ErrorEnvelope),
        (status = 409, description = "Already paid or voided (`invoice_not_payable`), or no card on file (`payment_method_missing`)", body = ErrorEnvelope),
        (status = 503, description = "The processor cannot be reached now (`service_unavailable`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn pay_invoice(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(number): Path<String>,
) -> ApiResult<axum::Json<Payment>> {
    let (invoice, payment) =
        invoices::pay_invoice(&state, &principal.app, principal.account_uuid, &number).await?;
    state.account_changed(principal.account_uuid);
    match &payment.failure_code {
        None => Ok(axum::Json(render_payment(&payment, &invoice.number, &[]))),
        Some(code) => Err(
            ApiError::new(ErrorCode::CardDeclined, "The card was declined")
                .with_detail("decline_code", code.clone())
                .with_detail("payment_uuid", payment.uuid.to_string()),
        ),
    }
}
