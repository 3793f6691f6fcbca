//! The operator's refunds from an account's page: a succeeded payment of a live (or sandbox)
//! app refunded in full (no amount) or in part, with a reason, through the app's processor
//! (`services::live_payments::refund_payment`: recorded on the payment, with
//! `account.payment_refunded` and the audit log). CSRF-checked; the operator's only (a partner
//! member gets a 404, as for any account it may not act on).

use axum::{
    extract::{Path, State},
    routing::post,
    Form, Router,
};
use serde::Deserialize;
use uuid::Uuid;

use super::{see_other, Dash, PageResult};
use crate::{
    http::{error::ApiError, AppState},
    services::{self, live_payments::RefundRefused},
};

pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/dashboard/accounts/{account}/payments/{payment}/refund",
        post(refund),
    )
}

#[derive(Deserialize)]
struct RefundForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    amount: String,
    #[serde(default)]
    reason: String,
}

fn dollars(cents: i64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

async fn refund(
    State(state): State<AppState>,
    dash: Dash,
    Path((account, payment)): Path<(Uuid, Uuid)>,
    Form(form): Form<RefundForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let visible = services::dashboard::visible_account(&state.db, dash.member(), account).await?;
    if visible.is_none() || !dash.member().is_operator() {
        return Err(ApiError::not_found("account").into());
    }
    let refused = |message: String| {
        let state = state.clone();
        let dash = &dash;
        async move {
            super::accounts::render(
                &state,
                dash,
                account,
                axum::http::StatusCode::UNPROCESSABLE_ENTITY,
                None,
                Some(&message),
            )
            .await
        }
    };
    match services::live_payments::refund_payment(
        &state,
        &dash.actor(),
        account,
        payment,
        &form.amount,
        &form.reason,
    )
    .await
    {
        Ok(_) => Ok(see_other(&format!(
            "/dashboard/accounts/{account}?done=refunded"
        ))),
        Err(services::Error::Refused(why)) => match why {
            RefundRefused::AccountMissing | RefundRefused::PaymentMissing => {
                Err(ApiError::not_found("payment").into())
            }
            RefundRefused::NotRefundable => {
                refused("Only a succeeded card payment with something left to refund can be refunded.".to_owned()).await
            }
            RefundRefused::AmountInvalid { left_cents } => {
                refused(format!(
                    "Enter an amount in dollars between $0.01 and {} (what is left to refund), or leave it empty to refund all of it.",
                    dollars(left_cents)
                ))
                .await
            }
            RefundRefused::ProcessorRefused(reason) => {
                refused(format!("The card processor refused the refund: {reason}")).await
            }
            RefundRefused::Processor(e) => {
                refused(format!("The card processor could not be asked: {e}")).await
            }
        },
        Err(services::Error::Failed(e)) => Err(ApiError::internal(e).into()),
    }
}
