//! Choosing a plan: the app's plans priced for the confirmed meter (rates, the EFL's average
//! prices, the documents), then the start date within the plan's range and acceptance of its
//! terms. An expired price is re-requested in place.

use leptos::prelude::*;

use super::{
    reader::Reader,
    session::{focus_when_shown, ErrorNotice, Flow, Submit, Task},
    steps::Step,
};
use crate::{
    api::market::PlanDocuments,
    format::{average, dollars, long_date},
    views::Plan,
};

#[component]
pub fn PlanStep(flow: Flow) -> impl IntoView {
    let plans = RwSignal::new(None::<Vec<Plan>>);
    let chosen = RwSignal::new(None::<Plan>);
    // The home's size for the yearly estimates; empty: the address's typical home.
    let size = RwSignal::new(String::new());
    let load = Task::new();
    let request = move || {
        chosen.set(None);
        let size = size.get_untracked();
        flow.call(
            load,
            async move |c| c.plans(Some(size.as_str()).filter(|s| !s.is_empty())).await,
            move |p| plans.set(Some(p)),
        );
    };
    request();

    view! {
        {move || match chosen.get() {
            Some(plan) => view! { <Accept flow plan chosen reprice=Callback::new(move |_| request())/> }.into_any(),
            None => {
                view! {
                    <p>"Prices include your utility's delivery charges. Compare the average price at your use; open a plan's details for its rates and documents."</p>
                    <label for="home-size">"Your home's size, for each plan's yearly estimate"</label>
                    <select id="home-size" data-testid="home-size" prop:value=move || size.get() on:change=move |ev| {
                        size.set(event_target_value(&ev));
                        request();
                    }>
                        <option value="">"Not sure: typical for this address"</option>
                        <option value="small">"Small or apartment (under 1,200 sq ft)"</option>
                        <option value="medium">"Mid-size (1,200 to 2,500 sq ft)"</option>
                        <option value="large">"Large (over 2,500 sq ft)"</option>
                    </select>
                    <ErrorNotice task=load retry=move |_| request()/>
                    <Show when=move || load.pending.get()>
                        <p class="muted" role="status">"Finding plans for your home…"</p>
                    </Show>
                    {estimate_basis(plans)}
                    // A plain list (no keyed diffing): the plans are read once per visit.
                    <div class="plans" data-testid="plans">
                        {move || {
                            plans
                                .get()
                                .unwrap_or_default()
                                .into_iter()
                                .map(|plan| view! { <PlanCard plan chosen/> })
                                .collect_view()
                        }}
                    </div>
                    <Show when=move || plans.with(|p| p.as_ref().is_some_and(Vec::is_empty))>
                        <p>"No plans are offered for this home right now."</p>
                    </Show>
                    <button type="button" class="link" data-testid="back" on:click=move |_| flow.step.set(Step::Address)>
                        "Back"
                    </button>
                }
                    .into_any()
            }
        }}
    }
}

/// A priced plan, compact: the average price at a typical home's use first, then term,
/// cancellation fee and renewable share, what kind of price it is; the rates, the EFL's
/// averages and the documents on demand; a button to choose it.
#[component]
pub fn PlanCard(plan: Plan, chosen: RwSignal<Option<Plan>>) -> impl IntoView {
    let id = format!("plan-{}", plan.plan_uuid);
    let r = &plan.rates;
    let avg = &plan.average_price_cents_per_kwh;
    let fixed = plan.plan_type != "month_to_month";
    let rows = [
        ("500 kWh", avg.kwh_500.clone()),
        ("1,000 kWh", avg.kwh_1000.clone()),
        ("2,000 kWh", avg.kwh_2000.clone()),
    ];
    let terms = [
        if fixed {
            format!("{} months", plan.term_months)
        } else {
            "Month to month".to_owned()
        },
        match r.early_termination_fee_cents {
            0 => "No cancellation fee".to_owned(),
            fee => format!("{} cancellation fee", dollars(fee)),
        },
        format!("{}% renewable", plan.renewable_percent),
    ];
    let kind = if fixed {
        format!(
            "Fixed rate: the energy charge stays the same for {} months.",
            plan.term_months
        )
    } else {
        "Variable rate: the energy charge can change each month with the market. No term: leave any time.".to_owned()
    };
    let details = [
        (
            "Energy charge",
            format!("{} per kWh", average(&r.energy_cents_per_kwh)),
        ),
        (
            "Base charge",
            format!("{} per month", dollars(r.base_charge_cents_per_month)),
        ),
        (
            "Utility delivery",
            match r.tdu_fixed_cents_per_month {
                0 => format!("{} per kWh", average(&r.tdu_cents_per_kwh)),
                fixed => format!(
                    "{} per month + {} per kWh",
                    dollars(fixed),
                    average(&r.tdu_cents_per_kwh)
                ),
            },
        ),
    ];
    let estimate = estimate(&plan);
    let docs = plan.documents.clone();
    let name = plan.name.clone();
    let pick = plan.clone();
    let heading = id.clone();
    let reader = Reader::new();
    let reader_id = format!("{id}-reader");
    view! {
        <article class="card plan" aria-labelledby=id data-testid="plan">
            <h3 id=heading>{name.clone()}</h3>
            <p class="price">
                <strong>{average(&avg.kwh_1000)}</strong>
                " per kWh"
                <span class="muted">" average at 1,000 kWh a month, a typical home's use"</span>
            </p>
            {estimate}
            <ul class="terms" data-testid="plan-terms">
                {terms.into_iter().map(|t| view! { <li>{t}</li> }).collect_view()}
            </ul>
            <p class="hint">{kind}</p>
            <details>
                <summary>"Price details and documents"</summary>
                <table class="averages">
                    <caption>"Average price per kWh by monthly use"</caption>
                    <tbody>
                        {rows
                            .into_iter()
                            .map(|(usage, price)| view! { <tr><th scope="row">{usage}</th><td>{average(&price)}</td></tr> })
                            .collect_view()}
                    </tbody>
                </table>
                <dl class="facts">
                    {details
                        .into_iter()
                        .map(|(k, v)| view! { <div><dt>{k}</dt><dd>{v}</dd></div> })
                        .collect_view()}
                </dl>
                <p class="hint">"Your utility sets its delivery charges; they pass through at cost."</p>
                <p class="documents">
                    {reader.link("Electricity Facts Label", docs.efl)}
                    {reader.link("Terms of Service", docs.tos)}
                    {reader.link("Your Rights as a Customer", docs.yrac)}
                </p>
                {reader.dialog(reader_id)}
            </details>
            <button type="button" class="primary" data-testid="choose-plan" on:click=move |_| {
                chosen.set(Some(pick.clone()))
            }>
                "Choose " {name}
            </button>
        </article>
    }
}

/// What the plan would cost over a year. What the estimates rest on (the home's own last year
/// for a renewal, whose plans come cheapest first by it; a typical home of the size chosen for
/// enrollment) is the same for every plan of a list: `EstimateBasis` says it once, above them.
fn estimate(plan: &Plan) -> Option<impl IntoView> {
    let cents = plan.estimated_annual_cost_cents?;
    Some(view! {
        <p class="estimate" data-testid="plan-estimate">
            <strong>{dollars(cents)}</strong>
            " a year"
        </p>
    })
}

/// What the plans' yearly estimates rest on, in the server's words, once above the plans
/// (nothing while there are none, or without estimates).
pub(super) fn estimate_basis(plans: RwSignal<Option<Vec<Plan>>>) -> impl IntoView {
    move || {
        plans
            .with(|p| {
                p.iter()
                    .flatten()
                    .find_map(|p| p.estimate_basis.as_ref())
                    .map(|b| b.description.clone())
            })
            .map(|basis| {
                view! {
                    <p class="muted" data-testid="estimate-basis">
                        "Each plan's yearly cost is " {basis} "."
                    </p>
                }
            })
    }
}

/// Start date and acceptance of the chosen plan.
#[component]
fn Accept(
    flow: Flow,
    plan: Plan,
    chosen: RwSignal<Option<Plan>>,
    reprice: Callback<()>,
) -> impl IntoView {
    let task = Task::new();
    let summary = NodeRef::<leptos::html::P>::new();
    focus_when_shown(summary);
    let moving = RwSignal::new(false);
    let start = RwSignal::new(plan.earliest_switch_start_date.clone());
    let terms = RwSignal::new(false);
    task.clear_when("terms_accepted", move || terms.get());
    let (move_in_from, switch_from, latest) = (
        StoredValue::new(plan.earliest_start_date.clone()),
        StoredValue::new(plan.earliest_switch_start_date.clone()),
        plan.latest_start_date.clone(),
    );
    let earliest = move || {
        if moving.get() {
            move_in_from.get_value()
        } else {
            switch_from.get_value()
        }
    };
    // Moving the window keeps the chosen date when it still fits, else takes the earliest.
    // (`YYYY-MM-DD` dates compare as text.)
    let last = latest.clone();
    Effect::new(move |_| {
        let from = earliest();
        let chosen = start.get_untracked();
        let fits = chosen.len() == 10 && chosen >= from && chosen <= last;
        if !fits {
            start.set(from);
        }
    });
    let plan_uuid = StoredValue::new(plan.plan_uuid.clone());
    let accept = move || {
        if !terms.get_untracked() {
            task.fail(
                "Please accept the plan's terms to continue.",
                Some("terms_accepted"),
            );
            return;
        }
        let date = start.get_untracked();
        let kind = if moving.get_untracked() {
            "move_in"
        } else {
            "switch"
        };
        let id = plan_uuid.get_value();
        flow.call(
            task,
            async move |c| c.accept_plan(&id, &date, kind).await,
            move |account| flow.advance(account),
        );
    };
    let expired = move || {
        task.error
            .with(|e| e.as_ref().is_some_and(|e| e.code == "plan_expired"))
    };
    let docs = plan.documents.clone();
    view! {
        <form class="stack" on:submit=move |ev| {
            ev.prevent_default();
            accept();
        }>
            <p node_ref=summary tabindex="-1" class="focus-target">
                <strong>{plan.name.clone()}</strong>
                {format!(" · {} per kWh at 1,000 kWh", average(&plan.average_price_cents_per_kwh.kwh_1000))}
            </p>
            <fieldset>
                <legend>"Why do you need service?"</legend>
                <label class="option">
                    <input type="radio" name="enrollment_type" value="switch"
                        prop:checked=move || !moving.get()
                        on:change=move |_| moving.set(false)/>
                    "I'm switching providers at my current home"
                </label>
                <label class="option">
                    <input type="radio" name="enrollment_type" value="move_in"
                        prop:checked=move || moving.get()
                        on:change=move |_| moving.set(true)/>
                    "I'm moving into this home"
                </label>
            </fieldset>
            <label for="start-date">"Start date"</label>
            <p class="hint" id="start-hint">
                {
                    let latest = latest.clone();
                    move || format!("Between {} and {}.", long_date(&earliest()), long_date(&latest))
                }
            </p>
            <input
                id="start-date"
                type="date"
                name="service_start_date"
                aria-describedby="start-hint"
                aria-invalid=task.about("service_start_date")
                min=earliest
                max=latest
                bind:value=start
            />
            <TermsConsent task terms docs/>
            <ErrorNotice task retry=move |_| accept()/>
            <Show when=expired>
                <button type="button" class="secondary" data-testid="reprice" on:click=move |_| reprice.run(())>
                    "See today's prices"
                </button>
            </Show>
            <Submit task label="Accept plan" testid="accept-plan"/>
            <button type="button" class="link" data-testid="back" on:click=move |_| chosen.set(None)>
                "Back to plans"
            </button>
        </form>
    }
}

/// The acceptance of a plan's documents (its EFL, the Terms of Service and Your Rights as a
/// Customer), each a link, marked invalid when the step's error is about `terms_accepted`.
#[component]
pub(super) fn TermsConsent(
    task: Task,
    terms: RwSignal<bool>,
    docs: PlanDocuments,
) -> impl IntoView {
    let reader = Reader::new();
    view! {
        <label class="option">
            <input type="checkbox" name="terms_accepted" data-testid="terms"
                aria-invalid=task.about("terms_accepted") bind:checked=terms/>
            <span>
                "I have read and accept the "
                {reader.link("Electricity Facts Label", docs.efl)}
                ", the "
                {reader.link("Terms of Service", docs.tos)}
                " and "
                {reader.link("Your Rights as a Customer", docs.yrac)}
                "."
            </span>
        </label>
        {reader.dialog("terms-reader".to_owned())}
    }
}
