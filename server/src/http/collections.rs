//! What follows a bill left unpaid, as the account reads it: its disconnection notices (and
//! the disconnection and reconnection each led to), and deferred payment plans: the one it is
//! owed, accepting it, and its plans with their instalments (`services::disconnection`).

use app::api::{ErrorEnvelope, Timestamp};
use axum::extract::State;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::{auth::AccountPrincipal, error::ApiResult, extract::Json, routes, ApiRouter, AppState};
use crate::{
    domain::disconnection::parse_months,
    services::disconnection::{self, PlanOverview},
    store::disconnections::{DisconnectionRow, InstalmentRow, PaymentPlanRow},
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(list_disconnections))
        .routes(routes!(get_payment_plan, accept_payment_plan))
}

/// A written disconnection notice for an unpaid bill, and what followed it.
#[derive(Debug, Serialize, ToSchema)]
pub struct DisconnectionNotice {
    pub uuid: Uuid,
    pub invoice_number: String,
    pub location_uuid: Uuid,
    /// The unpaid bill's amount.
    pub amount_cents: i64,
    pub notice_date: NaiveDate,
    /// Service is not disconnected before this day (at least 10 days after the notice, never
    /// on a weekend, a holiday, the day before one, or an extreme-weather emergency day; such
    /// a day moves the disconnection to the next allowed one).
    pub earliest_disconnection_date: NaiveDate,
    /// `noticed` (waiting for its date), `cancelled` (paid or taken over by a payment plan in
    /// time), `requested` (asked of the utility), `disconnected`, `reconnect_requested`,
    /// `reconnected`.
    pub status: String,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub requested_at: Option<Timestamp>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub disconnected_at: Option<Timestamp>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub reconnect_requested_at: Option<Timestamp>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub reconnected_at: Option<Timestamp>,
}

/// The account's disconnection notices, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct DisconnectionNotices {
    pub data: Vec<DisconnectionNotice>,
}

fn render_notice(d: &DisconnectionRow, number: String) -> DisconnectionNotice {
    DisconnectionNotice {
        uuid: d.uuid,
        invoice_number: number,
        location_uuid: d.location_uuid,
        amount_cents: d.amount_cents,
        notice_date: d.notice_date,
        earliest_disconnection_date: d.earliest_date,
        status: d.status.to_string(),
        requested_at: d.requested_at.map(Timestamp),
        disconnected_at: d.disconnected_at.map(Timestamp),
        reconnect_requested_at: d.reconnect_requested_at.map(Timestamp),
        reconnected_at: d.reconnected_at.map(Timestamp),
    }
}

/// The account's disconnection notices and where each stands.
#[utoipa::path(
    get, path = "/v1/account/billing/disconnections", tag = "billing",
    responses(
        (status = 200, description = "The notices, newest first", body = DisconnectionNotices),
    ),
    security(("account_token" = []))
)]
pub async fn list_disconnections(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<DisconnectionNotices>> {
    let rows = disconnection::notices(&state.db, principal.account_uuid).await?;
    Ok(axum::Json(DisconnectionNotices {
        data: rows
            .into_iter()
            .map(|(row, number)| render_notice(&row, number))
            .collect(),
    }))
}

/// The payment plan the account may accept now.
#[derive(Debug, Serialize, ToSchema)]
pub struct PaymentPlanOffer {
    /// `customer_request`, or `weather_emergency` (owed to everyone during one).
    pub reason: String,
    /// The unpaid balance the plan would take over.
    pub unpaid_cents: i64,
    /// The instalments offered unless another number (2 to 12) is asked for.
    pub months: u32,
    pub invoice_numbers: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PaymentPlanInstalment {
    pub number: i32,
    pub amount_cents: i64,
    /// The bill carrying it; null until billed.
    pub invoice_uuid: Option<Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PaymentPlan {
    pub uuid: Uuid,
    /// `active`, `completed`, or `defaulted` (a bill with an instalment went unpaid: the
    /// rest was due on the next bill).
    pub status: String,
    pub reason: String,
    pub total_cents: i64,
    pub months: i32,
    pub instalments: Vec<PaymentPlanInstalment>,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub ended_at: Option<Timestamp>,
}

/// The plan the account is owed (null when none: nothing unpaid, a plan running, or more
/// than two disconnection notices in 12 months outside a weather emergency) and its plans.
#[derive(Debug, Serialize, ToSchema)]
pub struct PaymentPlans {
    pub offer: Option<PaymentPlanOffer>,
    pub plans: Vec<PaymentPlan>,
}

fn render_plan(p: &PaymentPlanRow, lines: &[InstalmentRow]) -> PaymentPlan {
    PaymentPlan {
        uuid: p.uuid,
        status: p.status.to_string(),
        reason: p.reason.clone(),
        total_cents: p.total_cents,
        months: p.months,
        instalments: lines
            .iter()
            .map(|l| PaymentPlanInstalment {
                number: l.seq,
                amount_cents: l.amount_cents,
                invoice_uuid: l.invoice_uuid,
            })
            .collect(),
        created_at: Timestamp(p.created_at),
        ended_at: p.ended_at.map(Timestamp),
    }
}

fn render_plans(o: PlanOverview) -> PaymentPlans {
    PaymentPlans {
        offer: o.offer.map(|f| PaymentPlanOffer {
            reason: f.reason.as_str().to_owned(),
            unpaid_cents: f.unpaid_cents,
            months: f.months,
            invoice_numbers: f.invoice_numbers,
        }),
        plans: o.plans.iter().map(|(p, l)| render_plan(p, l)).collect(),
    }
}

/// The payment plan the account may accept now, and its plans.
#[utoipa::path(
    get, path = "/v1/account/billing/payment-plan", tag = "billing",
    responses(
        (status = 200, description = "The offer (or null) and the plans, newest first", body = PaymentPlans),
    ),
    security(("account_token" = []))
)]
pub async fn get_payment_plan(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<PaymentPlans>> {
    let overview = disconnection::plan_overview(&state, principal.account_uuid).await?;
    Ok(axum::Json(render_plans(overview)))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct AcceptPaymentPlanIn {
    /// Instalments, 2 to 12; 5 when absent.
    #[serde(default)]
    #[schema(minimum = 2, maximum = 12)]
    pub months: Option<i64>,
}

/// Accept the payment plan offered: the unpaid bills are taken over by the plan (each settled
/// by a payment of `initiated_by: payment_plan`), the balance is billed in equal instalments,
/// one on each following bill, as its own `Payment plan` line; a waiting disconnection is
/// cancelled and a disconnected service reconnected.
#[utoipa::path(
    post, path = "/v1/account/billing/payment-plan", tag = "billing",
    request_body = AcceptPaymentPlanIn,
    responses(
        (status = 200, description = "The plan, with its instalments", body = PaymentPlans),
        (status = 400, description = "`months` is not 2 to 12 (`parameter_invalid`)", body = ErrorEnvelope),
        (status = 409, description = "Nothing unpaid (`invoice_not_payable`), or no plan is offered: one is running, or too many notices this year (`payment_plan_not_offered`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn accept_payment_plan(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<AcceptPaymentPlanIn>,
) -> ApiResult<axum::Json<PaymentPlans>> {
    let months = parse_months("months", input.months)?;
    disconnection::accept_plan(&state, &principal.app, principal.account_uuid, months).await?;
    state.account_changed(principal.account_uuid);
    let overview = disconnection::plan_overview(&state, principal.account_uuid).await?;
    Ok(axum::Json(render_plans(overview)))
}
