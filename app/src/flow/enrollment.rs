//! The enrollment flow (`/flow/enrollment`): one screen per step, resumed at the first step
//! the account still needs, then review, finalize and done. Every call goes through the v1
//! API with the flow session; errors show where they happen and can be fixed or retried.

use leptos::{html, prelude::*};

use super::{
    address::AddressStep,
    card::PaymentStep,
    forms::{BillingStep, CreditStep, IdentityStep},
    plans::PlanStep,
    session::{ErrorNotice, Flow, Submit, Task},
    steps::{step_of_missing, Step},
};
use crate::{
    format::{average, card_brand, dollars, long_date, phone},
    views::Summary,
};

#[component]
pub fn EnrollmentFlow(flow: Flow) -> impl IntoView {
    let heading: NodeRef<html::H2> = NodeRef::new();
    // Move keyboard and screen reader focus to each new step's heading (not on first load).
    Effect::new(move |previous: Option<Step>| {
        let step = flow.step.get();
        if previous.is_some_and(|p| p != step) {
            if let Some(h) = heading.get() {
                let _ = h.focus();
            }
        }
        step
    });
    view! {
        <section class="steps" data-step=move || flow.step.get().slug()>
            <p class="progress" aria-hidden=move || flow.step.get().number().is_none().to_string()>
                {move || {
                    flow.step
                        .get()
                        .number()
                        .map(|n| format!("Step {n} of {}", Step::FORMS.len()))
                }}
            </p>
            <h2 node_ref=heading tabindex="-1">
                {move || {
                    // A customer whose service runs is past "enrollment received".
                    let step = flow.step.get();
                    let active = flow
                        .account
                        .with(|a| a.as_ref().is_some_and(|a| a.enrollment.is_service_active));
                    if step == Step::Done && active { "Your service" } else { step.title() }
                }}
            </h2>
            {move || match flow.step.get() {
                Step::Address => view! { <AddressStep flow/> }.into_any(),
                Step::Plan => view! { <PlanStep flow/> }.into_any(),
                Step::Identity => view! { <IdentityStep flow/> }.into_any(),
                Step::Credit => view! { <CreditStep flow/> }.into_any(),
                Step::Payment => view! { <PaymentStep flow/> }.into_any(),
                Step::Billing => view! { <BillingStep flow/> }.into_any(),
                Step::Review => view! { <Review flow/> }.into_any(),
                Step::Done => view! { <Done flow/> }.into_any(),
            }}
            {move || {
                flow.step
                    .get()
                    .previous()
                    // The plan step has its own Back: to the list from a chosen plan.
                    .filter(|_| flow.step.get() != Step::Plan)
                    .map(|back| {
                        view! {
                            <button type="button" class="link back" data-testid="back" on:click=move |_| flow.step.set(back)>
                                "Back"
                            </button>
                        }
                    })
            }}
        </section>
    }
}

/// Everything the customer entered, each part with a way back to change it; then finalize.
#[component]
fn Review(flow: Flow) -> impl IntoView {
    let task = Task::new();
    // Read back rather than remembered, so that a reload reviews the same as a first visit.
    let summary = RwSignal::new(None::<Summary>);
    let load = Task::new();
    flow.call(
        load,
        async |c| c.summary().await,
        move |s| summary.set(Some(s)),
    );
    let missing = RwSignal::new(Vec::<String>::new());
    let finalize = move || {
        missing.set(Vec::new());
        flow.call(task, async |c| c.finalize().await, move |a| flow.advance(a));
    };
    // `enrollment_incomplete` names the steps left: offer the first of them.
    Effect::new(move |_| {
        let names = task.error.with(|e| {
            e.as_ref()
                .filter(|e| e.code == "enrollment_incomplete")
                .map(|e| e.missing.clone())
        });
        if let Some(names) = names {
            missing.set(names);
        }
    });
    let account = move || flow.account.get();
    // One row of the review: what it is, what the customer chose, and a way back to change it.
    let row = move |label: &'static str, value: String, step: Step, testid: &'static str| {
        view! {
            <div>
                <dt>{label}</dt>
                <dd>
                    <span data-testid=testid>{value}</span>
                    " "
                    <button type="button" class="link" on:click=move |_| flow.step.set(step)>
                        "Change"
                        <span class="visually-hidden">" " {label.to_ascii_lowercase()}</span>
                    </button>
                </dd>
            </div>
        }
    };
    view! {
        <p>"Check your details, then confirm your enrollment."</p>
        {move || {
            account()
                .map(|a| {
                    let location = a.locations.first().cloned();
                    let home = location
                        .as_ref()
                        .map(|l| {
                            format!(
                                "{}{}, {}, {} {} (ESI ID {})",
                                l.address_1,
                                l.address_2.as_deref().map(|u| format!(" {u}")).unwrap_or_default(),
                                l.city,
                                l.state,
                                l.postal_code,
                                l.esi_id,
                            )
                        })
                        .unwrap_or_default();
                    let summary = summary.get();
                    let summary = summary.as_ref();
                    let plan = summary
                        .and_then(|s| s.plan.as_ref())
                        .map(|p| {
                            let fee = match p.rates.early_termination_fee_cents {
                                0 => "no cancellation fee".to_owned(),
                                fee => format!("{} cancellation fee", dollars(fee)),
                            };
                            format!(
                                "{}: {} per kWh at 1,000 kWh a month, {fee}",
                                p.name,
                                average(&p.average_price_cents_per_kwh.kwh_1000),
                            )
                        })
                        .unwrap_or_default();
                    let start = location
                        .as_ref()
                        .and_then(|l| l.service_start_date.as_deref().or(l.contract_start.as_deref()).map(long_date))
                        .unwrap_or_default();
                    let about = [
                        Some(format!("{} {}", a.first_name, a.last_name)),
                        Some(a.email.clone()),
                        a.phone.as_deref().map(phone),
                    ]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(", ");
                    let card = summary
                        .and_then(|s| s.payment_method.as_ref())
                        .map(|c| format!("{} ending in {}", card_brand(&c.card_brand), c.card_last4))
                        .unwrap_or_default();
                    let bills = summary
                        .and_then(|s| s.billing_address.clone())
                        .map(|b| {
                            if b.same_as_service_address {
                                "Same as your home".to_owned()
                            } else {
                                [b.address_1, b.address_2, b.city, b.state, b.postal_code]
                                    .into_iter()
                                    .flatten()
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            }
                        })
                        .unwrap_or_default();
                    view! {
                        <dl class="review" data-testid="review">
                            {row("Home", home, Step::Address, "review-home")}
                            {row("Plan", plan, Step::Plan, "review-plan")}
                            {row("Start date", start, Step::Plan, "review-start")}
                            {row("About you", about, Step::Identity, "review-you")}
                            {row("Payment", card, Step::Payment, "review-card")}
                            {row("Billing address", bills, Step::Billing, "review-billing")}
                        </dl>
                    }
                })
        }}
        <ErrorNotice task retry=move |_| finalize()/>
        {move || {
            missing
                .get()
                .iter()
                .find_map(|n| step_of_missing(n))
                .map(|step| {
                    view! {
                        <button type="button" class="secondary" on:click=move |_| flow.step.set(step)>
                            {format!("Go to {}", step.title().to_ascii_lowercase())}
                        </button>
                    }
                })
        }}
        <form on:submit=move |ev| {
            ev.prevent_default();
            finalize();
        }>
            <Submit task label="Confirm enrollment" testid="finalize"/>
        </form>
    }
}

/// The end of enrollment, as things stand: service active (a customer who comes back), the
/// switch scheduled, or what is still being checked and when the customer hears of it. Only
/// an answered credit check lets the page say the enrollment is through; an answer that needs
/// the customer says what they do next.
#[component]
fn Done(flow: Flow) -> impl IntoView {
    // Finalized (here, or before the flow opened): closing the flow is completing it.
    flow.done.set(true);
    let account = flow.account.get_untracked();
    let (name, email, active) = account
        .as_ref()
        .map(|a| {
            (
                a.first_name.clone(),
                a.email.clone(),
                a.enrollment.is_service_active,
            )
        })
        .unwrap_or_default();
    let (status, reason) = account
        .as_ref()
        .map(|a| (a.status.clone(), a.status_reason.clone()))
        .unwrap_or_default();
    let deposit_due = account
        .as_ref()
        .and_then(|a| a.deposit.as_ref())
        .filter(|d| d.status == "required")
        .map(|d| dollars(d.amount_cents));
    let location = account.as_ref().and_then(|a| a.locations.first().cloned());
    let start = location
        .as_ref()
        .and_then(|l| {
            l.service_start_date
                .as_deref()
                .or(l.contract_start.as_deref())
        })
        .map(long_date)
        .unwrap_or_default();
    let plan = location
        .as_ref()
        .and_then(|l| l.plan_name.clone())
        .unwrap_or_default();
    let home = location
        .map(|l| format!("{}, {}", l.address_1, l.city))
        .unwrap_or_default();
    let mail = format!("We e-mail {email} as soon as it has answered, and again when your service is scheduled and when it starts.");
    let (lead, status_line, next, outcome) = if let Some(amount) = deposit_due.clone() {
        (
            format!("One more step, {name}: a security deposit of {amount}."),
            "We reviewed your credit check: your enrollment goes on once the deposit is paid. It earns interest and comes back after twelve bills in a row paid on time, or is applied to your final bill.".to_owned(),
            format!("Pay it here with the card you saved, or with the link we e-mailed {email}."),
            "deposit",
        )
    } else if active {
        (
            format!("Your electricity service is active, {name}."),
            format!("{plan} has supplied {home} since {start}."),
            "Your bills and documents are in your app.".to_owned(),
            "active",
        )
    } else {
        match (status.as_str(), reason.as_str()) {
            ("ready", _) => (
                format!("Your switch is scheduled, {name}."),
                format!("Your utility will switch {home} to {plan} on {start}."),
                format!("There is nothing more to do: we e-mail {email} when your service starts."),
                "scheduled",
            ),
            (_, "credit_check_frozen") => (
                format!("One more step, {name}: your credit file is frozen."),
                "The credit bureau could not run the soft credit check because your file is frozen. Lift the freeze (a temporary lift is enough) on the bureau's site.".to_owned(),
                format!("We sent {email} the link to the bureau. We check again every 6 hours and continue your switch to {plan} once the check goes through."),
                "frozen",
            ),
            (_, "credit_declined" | "credit_not_found") => (
                format!("We received your enrollment, {name}, but cannot approve it on the credit check alone."),
                "Your enrollment now goes to review: we decide whether it can go ahead as it is, with a deposit, or not.".to_owned(),
                format!("We e-mail {email} the decision, with a link to act on it."),
                "review",
            ),
            ("needs_attention", _) => (
                format!("We received your enrollment, {name}, but it is held up."),
                format!("Something stops the switch to {plan} for now, and we are looking into it."),
                format!("We e-mail {email} what happens next."),
                "attention",
            ),
            (_, "utility_submitted") => (
                format!("Your credit check is done, {name}."),
                format!("We asked your utility to switch {home} to {plan}; that takes 2 to 72 business hours. Start date you asked for: {start}."),
                format!("We e-mail {email} when your service is scheduled and when it starts."),
                "submitted",
            ),
            _ => (
                format!("We received your enrollment, {name}."),
                format!("Next, the credit bureau answers your soft credit check, usually within minutes; then we ask your utility to switch {home} to {plan}. Start date you asked for: {start}."),
                mail,
                "pending",
            ),
        }
    };
    let task = Task::new();
    let paid = RwSignal::new(false);
    let run = move || {
        flow.call(
            task,
            async |c| c.pay_deposit().await,
            move |_| paid.set(true),
        )
    };
    let pay = deposit_due.map(|amount| {
        view! {
            <Show
                when=move || !paid.get()
                fallback=|| view! { <p role="status" data-testid="deposit-paid">"Your deposit is paid: your enrollment goes on."</p> }
            >
                <button type="button" class="primary" data-testid="pay-deposit" disabled=move || task.pending.get()
                    on:click=move |_| run()>
                    {format!("Pay the deposit ({amount})")}
                </button>
                <ErrorNotice task retry=move |_| run()/>
            </Show>
        }
    });
    view! {
        <div class="done" data-testid="done" data-active=active.to_string() data-outcome=outcome>
            <p class="lead">{lead}</p>
            <p>{status_line}</p>
            <p>{next}</p>
            {pay}
            <button type="button" class="primary" data-testid="done-close" on:click=move |_| flow.close.run("completed")>
                "Done"
            </button>
        </div>
    }
}
