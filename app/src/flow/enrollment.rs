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
    api::enrollment::BillingAddressOut,
    format::{card_brand, long_date, phone},
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
            <h2 node_ref=heading tabindex="-1">{move || flow.step.get().title()}</h2>
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
        </section>
    }
}

/// Everything the customer entered, each part with a way back to change it; then finalize.
#[component]
fn Review(flow: Flow) -> impl IntoView {
    let task = Task::new();
    let billing = RwSignal::new(None::<BillingAddressOut>);
    let load = Task::new();
    flow.call(
        load,
        async |c| c.billing_address().await,
        move |b| billing.set(Some(b)),
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
    let change = move |step: Step| {
        view! {
            <button type="button" class="link" on:click=move |_| flow.step.set(step)>
                "Change"
                <span class="visually-hidden">" " {step.title().to_ascii_lowercase()}</span>
            </button>
        }
    };
    view! {
        <p>"Check your details, then confirm your enrollment."</p>
        {move || {
            account()
                .map(|a| {
                    let location = a.locations.first().cloned();
                    view! {
                        <dl class="review" data-testid="review">
                            <div>
                                <dt>"Home"</dt>
                                <dd>
                                    {location
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
                                        })}
                                </dd>
                            </div>
                            <div>
                                <dt>"Plan"</dt>
                                <dd data-testid="review-plan">
                                    {location
                                        .as_ref()
                                        .map(|l| {
                                            let start = l
                                                .service_start_date
                                                .as_deref()
                                                .or(l.contract_start.as_deref())
                                                .map(|d| format!(", starting {}", long_date(d)))
                                                .unwrap_or_default();
                                            format!("{}{start}", l.plan_name.clone().unwrap_or_default())
                                        })}
                                </dd>
                            </div>
                            <div>
                                <dt>"About you"</dt>
                                <dd>
                                    {format!("{} {}", a.first_name, a.last_name)}
                                    <br/>
                                    {a.email.clone()}
                                    <br/>
                                    {a.phone.as_deref().map(phone)}
                                </dd>
                                {change(Step::Identity)}
                            </div>
                            <div>
                                <dt>"Credit check"</dt>
                                <dd>"Submitted; it runs once you confirm."</dd>
                            </div>
                            <div>
                                <dt>"Payment"</dt>
                                <dd data-testid="review-card">
                                    {move || {
                                        flow.card
                                            .get()
                                            .map(|c| format!("{} ending in {}", card_brand(&c.card_brand), c.card_last4))
                                            .unwrap_or_else(|| "Card on file".to_owned())
                                    }}
                                </dd>
                                {change(Step::Payment)}
                            </div>
                            <div>
                                <dt>"Billing address"</dt>
                                <dd>
                                    {move || {
                                        billing
                                            .get()
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
                                    }}
                                </dd>
                                {change(Step::Billing)}
                            </div>
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

#[component]
fn Done(flow: Flow) -> impl IntoView {
    // Finalized (here, or before the flow opened): closing the flow is completing it.
    flow.done.set(true);
    let account = flow.account.get_untracked();
    let name = account
        .as_ref()
        .map(|a| a.first_name.clone())
        .unwrap_or_default();
    let email = account
        .as_ref()
        .map(|a| a.email.clone())
        .unwrap_or_default();
    let start = account
        .as_ref()
        .and_then(|a| a.locations.first())
        .and_then(|l| {
            l.service_start_date
                .as_deref()
                .or(l.contract_start.as_deref())
        })
        .map(long_date);
    view! {
        <div class="done" data-testid="done">
            <p class="lead">{format!("You're all set, {name}.")}</p>
            <p>
                "We are checking your details and arranging the switch with your utility."
                {start.map(|d| format!(" Your service is planned to start on {d}."))}
            </p>
            <p>{format!("We will e-mail {email} at each step.")}</p>
            <button type="button" class="primary" data-testid="done-close" on:click=move |_| flow.close.run("completed")>
                "Done"
            </button>
        </div>
    }
}
