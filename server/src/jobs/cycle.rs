//! The billing cycle's jobs on the account's clock: on each cycle's read date the read and its
//! invoice (`services::billing::bill_cycle`), then auto-pay on the due date, 16 days later,
//! retried after a decline, and the invoice turning past due the day after its due date when
//! unpaid.

use anyhow::Context as _;
use chrono::Duration;
use uuid::Uuid;

use app::format::{dollars, long_date};

use crate::{
    domain::{
        billing::{auto_pay_retry_after, BillingError, InvoiceStatus},
        jobs::backoff,
        usage,
    },
    jobs::JobContext,
    outbox::{JobKind, Outcome},
    services::billing::{
        bill_cycle, charge_invoice, notify, record_payment, schedule_invoice_job, schedule_read,
        Charged, InvoicePayload, ReadPayload,
    },
    store::{self, events::NewEvent, Tx},
};

/// The job's end, committed with `tx` unless another worker took the job over.
async fn finish(
    ctx: &JobContext,
    mut tx: Tx,
    outcome: &Outcome,
    account: Uuid,
) -> anyhow::Result<()> {
    if ctx.finish(&mut tx, outcome).await? {
        tx.commit().await?;
        ctx.state.account_changed(account);
    }
    Ok(())
}
/// The cycle's read: bills it and schedules the next read while service lasts.
pub async fn meter_read(ctx: &JobContext) -> anyhow::Result<()> {
    let payload: ReadPayload = serde_json::from_str(&ctx.job.payload)?;
    let account_uuid = ctx
        .job
        .account_uuid
        .context("a meter read without account")?;
    let state = &ctx.state;
    let app = store::apps::app_by_uuid(&state.db, payload.app_uuid)
        .await?
        .context("the app of a meter read is gone")?;
    let mut tx = state.db.begin().await?;
    let Some(account) =
        store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid).await?
    else {
        return finish(ctx, tx, &Outcome::Done, account_uuid).await;
    };
    let location = store::enrollment::locations_of_account_tx(&mut tx, account_uuid)
        .await?
        .into_iter()
        .find(|l| l.uuid == payload.location_uuid);
    let Some(location) = location.filter(|l| l.is_service_active) else {
        return finish(ctx, tx, &Outcome::Done, account_uuid).await;
    };
    let when = payload.at.min(ctx.now());
    let period_end = payload.read_date - Duration::days(1);
    let billed = bill_cycle(
        &mut tx,
        &ctx.clock,
        &app,
        &account,
        &location,
        payload.read_date,
        period_end,
        when,
    )
    .await;
    let unbillable = match &billed {
        Err(sqlx::Error::Decode(e)) => e.downcast_ref::<BillingError>().map(ToString::to_string),
        _ => None,
    };
    if let Some(why) = unbillable {
        // Retrying cannot repair stored data; nothing of the cycle is kept, and the failed job
        // tells the operator why.
        drop(tx);
        tracing::error!(location = %location.uuid, error = %why, "a cycle could not be billed");
        ctx.finish_alone(&Outcome::Failed(format!("billing stopped: {why}")))
            .await?;
        return Ok(());
    }
    billed?;
    let next = usage::next_read_date(&location.esi_id, payload.read_date);
    schedule_read(&mut tx, &ctx.clock, app.uuid, &location, next).await?;
    finish(ctx, tx, &Outcome::Done, account_uuid).await
}
fn invoice_payload(ctx: &JobContext) -> anyhow::Result<(InvoicePayload, Uuid)> {
    let payload: InvoicePayload = serde_json::from_str(&ctx.job.payload)?;
    let account = ctx
        .job
        .account_uuid
        .context("an invoice job without account")?;
    Ok((payload, account))
}
/// Auto-pay on the due date: charges the saved card for an invoice still to be paid; a decline
/// is retried 2, 4 and 6 days later.
pub async fn auto_pay(ctx: &JobContext) -> anyhow::Result<()> {
    let (payload, account_uuid) = invoice_payload(ctx)?;
    let state = &ctx.state;
    let mut tx = state.db.begin().await?;
    let invoice = store::billing::invoice_tx(&mut tx, payload.invoice_uuid).await?;
    let earlier = store::billing::payments_of_invoice_tx(&mut tx, payload.invoice_uuid).await?;
    tx.commit().await?;
    let Some(invoice) =
        invoice.filter(|i| InvoiceStatus::parse(&i.status).is_some_and(InvoiceStatus::is_payable))
    else {
        return Ok(ctx.finish_alone(&Outcome::Done).await?);
    };
    let (Some(app), Some(card)) = (
        store::apps::app_by_uuid(&state.db, payload.app_uuid).await?,
        store::payments::current_payment_method(&state.db, account_uuid).await?,
    ) else {
        // No card on file: the invoice waits for the customer and turns past due.
        return Ok(ctx.finish_alone(&Outcome::Done).await?);
    };
    let failures = earlier
        .iter()
        .filter(|p| p.initiated_by == "auto_pay" && p.status == "failed")
        .count();
    let processor = match state.processor_for(&app).await {
        Ok(p) => p,
        Err(e) => return Ok(ctx.finish_alone(&Outcome::Failed(e.to_string())).await?),
    };
    let key = format!("invoice-{}-auto-{}", invoice.uuid, failures + 1);
    let charged = match charge_invoice(&processor, &invoice, &card.id, key).await {
        Ok(charged) => charged,
        Err(e) => {
            tracing::warn!(error = %e, "auto-pay could not reach the processor");
            let retry = ctx.now() + backoff(ctx.attempt());
            return Ok(ctx
                .finish_alone(&Outcome::RetryAt(retry, "processor unavailable".into()))
                .await?);
        }
    };
    let when = payload.at.min(ctx.now());
    let mut tx = state.db.begin().await?;
    let Some(account) =
        store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid).await?
    else {
        return finish(ctx, tx, &Outcome::Done, account_uuid).await;
    };
    let failed = matches!(charged, Charged::Failed { .. });
    // Paid meanwhile by the customer: a decline no longer matters, while a success is still
    // recorded so that no money goes unaccounted.
    let still_payable = store::billing::invoice_tx(&mut tx, invoice.uuid)
        .await?
        .and_then(|i| InvoiceStatus::parse(&i.status))
        .is_some_and(InvoiceStatus::is_payable);
    if failed && !still_payable {
        return finish(ctx, tx, &Outcome::Done, account_uuid).await;
    }
    record_payment(
        &mut tx, &ctx.clock, &app, &account, &invoice, charged, "auto_pay", when,
    )
    .await?;
    if failed {
        let next_failures = u32::try_from(failures + 1).unwrap_or(u32::MAX);
        if let Some(wait) = auto_pay_retry_after(next_failures) {
            schedule_invoice_job(&mut tx, &ctx.clock, JobKind::AutoPay, &invoice, when + wait)
                .await?;
        }
    }
    finish(ctx, tx, &Outcome::Done, account_uuid).await
}
/// The day after the due date: an invoice still open turns past due (`invoice.past_due`).
pub async fn past_due(ctx: &JobContext) -> anyhow::Result<()> {
    let (payload, account_uuid) = invoice_payload(ctx)?;
    let state = &ctx.state;
    let Some(app) = store::apps::app_by_uuid(&state.db, payload.app_uuid).await? else {
        return Ok(ctx.finish_alone(&Outcome::Done).await?);
    };
    let mut tx = state.db.begin().await?;
    let Some(account) =
        store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid).await?
    else {
        return finish(ctx, tx, &Outcome::Done, account_uuid).await;
    };
    let Some(invoice) = store::billing::invoice_tx(&mut tx, payload.invoice_uuid)
        .await?
        .filter(|i| i.status == InvoiceStatus::Open.as_str())
    else {
        return finish(ctx, tx, &Outcome::Done, account_uuid).await;
    };
    let when = payload.at.min(ctx.now());
    store::billing::set_invoice_status(
        &mut tx,
        invoice.uuid,
        InvoiceStatus::PastDue.as_str(),
        None,
        when,
    )
    .await?;
    store::events::insert_event(
        &mut tx,
        &NewEvent {
            app_uuid: app.uuid,
            account_uuid: Some(account.uuid),
            kind: "invoice.past_due",
            data: serde_json::json!({
                "account_uuid": account.uuid,
                "location_uuid": invoice.location_uuid,
                "invoice_number": invoice.number,
                "total_cents": invoice.total_cents,
                "payment_due_date": invoice.payment_due_date,
            }),
            created_at: ctx.now(),
        },
    )
    .await?;
    notify(
        &mut tx,
        &ctx.clock,
        &app,
        &account,
        "Your electricity bill is past due".to_owned(),
        vec![format!(
            "Invoice {} for {} was due on {} and has not been paid. Please pay it as soon as \
             possible.",
            invoice.number,
            dollars(invoice.total_cents),
            long_date(invoice.payment_due_date)
        )],
    )
    .await?;
    finish(ctx, tx, &Outcome::Done, account_uuid).await
}
