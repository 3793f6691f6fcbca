//! The billing flow (`/flow/billing`): what is owed and when, usage of the last twelve bills,
//! the bills a page at a time with their status, and a bill's detail (charges grouped as on
//! the PDF, daily usage, the PDF itself) with paying it now by the saved card. A decline is
//! shown at the button, with a way into the card change: the billing scope may not save a
//! card, so the flow closes and tells its host to open `update-payment-method` (`next`).
//! With bills past due and a payment plan offered, the summary offers the plan (its
//! instalments) and accepts it; a running plan is shown instead.

use leptos::{html, prelude::*};

use super::{
    chart::{kwh, milli, Bar, BarChart},
    events::views,
    session::{focus_when_shown, ErrorNotice, Flow, Submit, Task},
};
use crate::{
    format::{card_brand, dollars, long_date, month_day, short_date},
    views::{CardOnFile, Invoice, InvoiceDetail, Invoices, PaymentPlans},
};

/// Bills per page of the list.
const PAGE: u32 = 6;
/// Bills the summary and the year's usage read (monthly bills: a year).
const YEAR: u32 = 12;

/// What the screens of the flow share.
#[derive(Clone, Copy)]
struct Billing {
    flow: Flow,
    /// The last twelve bills (summary and usage chart).
    recent: RwSignal<Option<Vec<Invoice>>>,
    card: RwSignal<Option<Option<CardOnFile>>>,
    /// The bill shown in detail.
    open: RwSignal<Option<String>>,
    /// Bumped after a payment: lists read again.
    changed: RwSignal<u32>,
}

#[component]
pub fn BillingFlow(flow: Flow) -> impl IntoView {
    let b = Billing {
        flow,
        recent: RwSignal::new(None),
        card: RwSignal::new(None),
        open: RwSignal::new(None),
        changed: RwSignal::new(0),
    };
    let load = Task::new();
    let read = move || {
        flow.call(
            load,
            async |c| {
                let recent = c.invoices(YEAR, 0).await?.data;
                let card = match c.payment_method().await {
                    Ok(card) => Some(card),
                    Err(e) if e.code == "resource_missing" => None,
                    Err(e) => return Err(e),
                };
                Ok((recent, card))
            },
            move |(recent, card)| {
                b.recent.set(Some(recent));
                b.card.set(Some(card));
            },
        );
    };
    read();
    Effect::new(move |first: Option<()>| {
        b.changed.track();
        if first.is_some() {
            read();
        }
    });
    view! {
        <section class="steps" data-step=views(move || Some(if b.open.with(Option::is_some) { "invoice" } else { "summary" }))>
            {move || match b.open.get() {
                Some(number) => view! { <Detail b number/> }.into_any(),
                None => {
                    view! {
                        <h2>"Billing"</h2>
                        <ErrorNotice task=load retry=move |_| read()/>
                        <Show when=move || load.pending.get() && b.recent.with(Option::is_none)>
                            <p class="muted" role="status">"Loading your bills…"</p>
                        </Show>
                        <Summary b/>
                        <PlanCard b/>
                        <List b/>
                        <YearChart b/>
                    }
                        .into_any()
                }
            }}
        </section>
    }
}

/// Balance (open and past-due bills) and the next due date.
#[component]
fn Summary(b: Billing) -> impl IntoView {
    move || {
        b.recent.get().map(|bills| {
            let unpaid: Vec<&Invoice> = bills.iter().filter(|i| payable(&i.status)).collect();
            let balance: i64 = unpaid.iter().map(|i| i.total_cents).sum();
            let next = unpaid.iter().map(|i| i.payment_due_date.clone()).min();
            let past_due = unpaid.iter().any(|i| i.status == "past_due");
            let card = b.card.get().flatten();
            view! {
                <div class="card summary" data-testid="summary">
                    <p class="muted">"Balance"</p>
                    <p class="amount" data-testid="balance">{dollars(balance)}</p>
                    <p data-testid="next-due">
                        {match next {
                            Some(day) if past_due => format!("Past due. It was due on {}.", long_date(&day)),
                            Some(day) => format!("Due on {}.", long_date(&day)),
                            None => "Nothing is due.".to_owned(),
                        }}
                    </p>
                    <p class="muted">
                        {match card {
                            Some(c) => format!(
                                "Bills are paid automatically with your {} ending in {}.",
                                card_brand(&c.card_brand),
                                c.card_last4,
                            ),
                            None => "No card is on file for automatic payment.".to_owned(),
                        }}
                    </p>
                </div>
            }
        })
    }
}

/// The payment plan: offered while bills are past due, shown while it runs.
#[component]
fn PlanCard(b: Billing) -> impl IntoView {
    let plans = RwSignal::new(None::<PaymentPlans>);
    let load = Task::new();
    let accept = Task::new();
    Effect::new(move |_| {
        b.changed.track();
        b.flow.call(
            load,
            async |c| c.payment_plan().await,
            move |p| plans.set(Some(p)),
        );
    });
    let past_due = move || {
        b.recent.with(|r| {
            r.as_ref()
                .is_some_and(|r| r.iter().any(|i| i.status == "past_due"))
        })
    };
    let done: NodeRef<html::P> = NodeRef::new();
    focus_when_shown(done);
    move || {
        let p = plans.get()?;
        if let Some(plan) = p.plans.iter().find(|p| p.status == "active") {
            let months = plan.instalments.len();
            let billed = plan
                .instalments
                .iter()
                .filter(|i| i.invoice_uuid.is_some())
                .count();
            let first = plan.instalments.first().map_or(0, |i| i.amount_cents);
            return Some(
                view! {
                    <div class="card" data-testid="payment-plan">
                        <h3>"Your payment plan"</h3>
                        <p class="focus-target" node_ref=done tabindex="-1">
                            {format!(
                                "{} in {months} monthly instalments of about {}, one on each of your next bills. {billed} of {months} billed so far.",
                                dollars(plan.total_cents),
                                dollars(first),
                            )}
                        </p>
                    </div>
                }
                    .into_any(),
            );
        }
        let offer = p.offer.filter(|_| past_due())?;
        let months = offer.months;
        let each = instalment(offer.unpaid_cents, months);
        let submit = move || {
            b.flow.call(
                accept,
                async move |c| c.accept_payment_plan(months).await,
                move |p| {
                    plans.set(Some(p));
                    b.changed.update(|n| *n += 1);
                },
            );
        };
        Some(
            view! {
                <form class="card" data-testid="plan-offer" on:submit=move |ev| {
                    ev.prevent_default();
                    submit();
                }>
                    <h3>"Can't pay it all now?"</h3>
                    <p>
                        {format!(
                            "Spread {} over {months} monthly instalments of {}, one on each of your next bills, with no finance charge. Accepting stops a disconnection.",
                            dollars(offer.unpaid_cents),
                            dollars(each),
                        )}
                    </p>
                    <ErrorNotice task=accept retry=move |_| submit()/>
                    <Submit task=accept label="Accept the payment plan" testid="accept-plan"/>
                </form>
            }
                .into_any(),
        )
    }
}

/// The first (largest) instalment of `cents` over `months`, as the plan bills it.
fn instalment(cents: i64, months: u32) -> i64 {
    let n = i64::from(months.max(1));
    cents / n + i64::from(cents % n != 0)
}

/// The bills, a page at a time, newest first.
#[component]
fn List(b: Billing) -> impl IntoView {
    // The page asked for, and the page shown with the offset it was read at: the pager names
    // the page shown, so it never names a page whose bills have not arrived yet.
    let offset = RwSignal::new(0u32);
    let page = RwSignal::new(None::<(u32, Invoices)>);
    let load = Task::new();
    let read = move || {
        let at = offset.get_untracked();
        b.flow.call(
            load,
            async move |c| c.invoices(PAGE, at).await,
            move |p| page.set(Some((at, p))),
        );
    };
    Effect::new(move |_| {
        offset.track();
        b.changed.track();
        read();
    });
    let heading: NodeRef<html::H3> = NodeRef::new();
    let turn = move |by: i64| {
        let shown = page.with_untracked(|p| p.as_ref().map_or(0, |(at, _)| *at));
        let next = i64::from(shown) + by * i64::from(PAGE);
        offset.set(u32::try_from(next.max(0)).unwrap_or(0));
        if let Some(h) = heading.get_untracked() {
            let _ = h.focus();
        }
    };
    view! {
        <h3 node_ref=heading tabindex="-1">"Your bills"</h3>
        <ErrorNotice task=load retry=move |_| read()/>
        <Show when=move || load.pending.get()>
            <p class="muted" role="status">"Loading bills…"</p>
        </Show>
        {move || {
            page.get()
                .map(|(at, p)| {
                    if p.data.is_empty() && at == 0 {
                        return view! { <p data-testid="no-invoices">"You have no bills yet."</p> }.into_any();
                    }
                    let more = p.has_more;
                    view! {
                        <ul class="invoices" data-testid="invoices">
                            {p.data
                                .into_iter()
                                .map(|i| {
                                    let number = i.number.clone();
                                    view! {
                                        <li data-testid="invoice" data-status=i.status.clone()>
                                            <button type="button" class="row-button" on:click=move |_| b.open.set(Some(number.clone()))>
                                                <span class="period">{period(&i)}</span>
                                                <span class="total">{dollars(i.total_cents)}</span>
                                                <span class=format!("status {}", i.status)>{status_text(&i.status)}</span>
                                                <span class="visually-hidden">{format!(" (bill {})", i.number)}</span>
                                            </button>
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                        <nav class="pager" aria-label="Bill pages">
                            <button type="button" class="secondary" data-testid="newer" disabled=at == 0
                                on:click=move |_| turn(-1)>
                                "Newer"
                            </button>
                            <span class="muted">{format!("Page {}", at / PAGE + 1)}</span>
                            <button type="button" class="secondary" data-testid="older" disabled=!more
                                on:click=move |_| turn(1)>
                                "Older"
                            </button>
                        </nav>
                    }
                        .into_any()
                })
        }}
    }
}

/// Usage of the last twelve bills (one a month), oldest first.
#[component]
fn YearChart(b: Billing) -> impl IntoView {
    move || {
        b.recent.get().filter(|r| !r.is_empty()).map(|recent| {
            let bars = recent
                .iter()
                .rev()
                .map(|i| {
                    let m = milli(&i.total_kwh);
                    Bar {
                        label: month_day(&i.billing_period_end)
                            .split(' ')
                            .next()
                            .unwrap_or_default()
                            .to_owned(),
                        milli: m,
                        text: format!("{}: {}", period(i), kwh(m)),
                    }
                })
                .collect::<Vec<_>>();
            view! {
                <BarChart caption="Your usage, bill by bill (last 12 months)".to_owned() bars label_every=1 testid="year-usage"/>
            }
        })
    }
}

/// One bill: charges, daily usage, the PDF, paying it now.
#[component]
fn Detail(b: Billing, number: String) -> impl IntoView {
    let detail = RwSignal::new(None::<InvoiceDetail>);
    let load = Task::new();
    let wanted = StoredValue::new(number.clone());
    let read = move || {
        let n = wanted.get_value();
        b.flow.call(
            load,
            async move |c| c.invoice(&n).await,
            move |d| detail.set(Some(d)),
        );
    };
    read();
    // Paid here: the bill's status follows without reading it again.
    let paid = RwSignal::new(false);
    let heading: NodeRef<html::H2> = NodeRef::new();
    Effect::new(move |_| {
        if let Some(h) = heading.get() {
            let _ = h.focus();
        }
    });
    view! {
        <h2 node_ref=heading tabindex="-1">{format!("Bill {number}")}</h2>
        <button type="button" class="link" data-testid="back" on:click=move |_| b.open.set(None)>
            "Back to your bills"
        </button>
        <ErrorNotice task=load retry=move |_| read()/>
        <Show when=move || load.pending.get()>
            <p class="muted" role="status">"Loading the bill…"</p>
        </Show>
        {move || {
            detail
                .get()
                .map(|d| {
                    let i = d.invoice.clone();
                    let days = d.usage.daily.len();
                    let bars = d
                        .usage
                        .daily
                        .iter()
                        .map(|day| {
                            let m = milli(&day.consumption);
                            Bar {
                                label: day.date.get(8..).unwrap_or_default().trim_start_matches('0').to_owned(),
                                milli: m,
                                text: format!("{}: {}", month_day(&day.date), kwh(m)),
                            }
                        })
                        .collect::<Vec<_>>();
                    let (number, total, status) = (i.number.clone(), i.total_cents, i.status.clone());
                    let shown = StoredValue::new(i.status.clone());
                    let now = move || if paid.get() { "paid".to_owned() } else { shown.get_value() };
                    view! {
                        <div class="card summary" data-testid="invoice-detail" data-status=now>
                            <p class="amount">{dollars(i.total_cents)}</p>
                            <p>
                                <span class=move || format!("status {}", now())>{move || status_text(&now())}</span>
                                {format!(" · due {}", long_date(&i.payment_due_date))}
                            </p>
                            <p class="muted">{format!("Service {} · {}", period(&i), kwh(milli(&i.total_kwh)))}</p>
                            <a class="button-link" href=i.pdf.clone() target="_blank" rel="noopener" data-testid="pdf">
                                "Open the PDF"
                            </a>
                        </div>
                        <Show when=move || payable(&status)>
                            <PayNow b number=number.clone() total paid/>
                        </Show>
                        <h3>"Charges"</h3>
                        <div class="charges" data-testid="charges">
                            {d.charges_groups
                                .into_iter()
                                .map(|g| {
                                    view! {
                                        <table class="charges-group">
                                            <caption>{g.name.clone()}</caption>
                                            <tbody>
                                                {g.charges
                                                    .into_iter()
                                                    .map(|c| view! { <tr><th scope="row">{c.description}</th><td>{dollars(c.amount_cents)}</td></tr> })
                                                    .collect_view()}
                                            </tbody>
                                            <tfoot>
                                                <tr><th scope="row">{format!("Total {}", g.name.to_lowercase())}</th><td>{dollars(g.total_cents)}</td></tr>
                                            </tfoot>
                                        </table>
                                    }
                                })
                                .collect_view()}
                        </div>
                        {(days > 0).then(|| view! {
                            <BarChart caption=format!("Daily usage, {}", period(&i)) bars label_every=5 testid="daily-usage"/>
                        })}
                    }
                })
        }}
    }
}

/// Pays a bill now with the saved card; a decline stays at the button, with a way into the
/// card change.
#[component]
fn PayNow(b: Billing, number: String, total: i64, paid: RwSignal<bool>) -> impl IntoView {
    let task = Task::new();
    let number = StoredValue::new(number);
    let pay = move || {
        let n = number.get_value();
        b.flow.call(
            task,
            async move |c| c.pay_invoice(&n).await,
            move |_| {
                paid.set(true);
                b.flow.done.set(true);
                b.changed.update(|n| *n += 1);
            },
        );
    };
    let declined = move || {
        task.error.with(|e| {
            e.as_ref()
                .is_some_and(|e| e.code == "card_declined" || e.code == "payment_method_missing")
        })
    };
    let confirm: NodeRef<html::P> = NodeRef::new();
    focus_when_shown(confirm);
    view! {
        <div class="pay" data-testid="pay">
            {move || {
                if paid.get() {
                    return view! {
                        <p class="notice focus-target" role="status" node_ref=confirm tabindex="-1" data-testid="paid">
                            {format!("Thank you. Your payment of {} went through.", dollars(total))}
                        </p>
                    }
                        .into_any();
                }
                let card = b.card.get().flatten();
                view! {
                    <form on:submit=move |ev| {
                        ev.prevent_default();
                        pay();
                    }>
                        <p>
                            {match &card {
                                Some(c) => format!("Pay {} now with your {} ending in {}.", dollars(total), card_brand(&c.card_brand), c.card_last4),
                                None => format!("Pay {} now.", dollars(total)),
                            }}
                        </p>
                        <ErrorNotice task retry=move |_| pay()/>
                        <Show when=declined>
                            <button type="button" class="secondary" data-testid="change-card"
                                on:click=move |_| b.flow.hand_over("update-payment-method")>
                                "Change your card"
                            </button>
                        </Show>
                        <Submit task label="Pay now" testid="pay-now"/>
                    </form>
                }
                    .into_any()
            }}
        </div>
    }
}

fn payable(status: &str) -> bool {
    status == "open" || status == "past_due"
}

fn status_text(status: &str) -> &'static str {
    match status {
        "open" => "Open",
        "paid" => "Paid",
        "past_due" => "Past due",
        "voided" => "Voided",
        _ => "Unknown",
    }
}

/// "Mar 5 – Apr 3, 2027".
fn period(i: &Invoice) -> String {
    format!(
        "{} – {}",
        month_day(&i.billing_period_start),
        short_date(&i.billing_period_end)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_open_and_past_due_bills_can_be_paid() {
        assert!(payable("open"));
        assert!(payable("past_due"));
        assert!(!payable("paid"));
        assert!(!payable("voided"));
        assert_eq!(status_text("past_due"), "Past due");
    }

    #[test]
    fn the_offer_shows_the_first_instalment_the_plan_bills() {
        assert_eq!(instalment(10_000, 5), 2_000);
        assert_eq!(instalment(10_001, 5), 2_001);
        assert_eq!(instalment(10_004, 3), 3_335);
        assert_eq!(instalment(500, 0), 500);
    }
}
