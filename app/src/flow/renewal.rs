//! The renewal flow (`/flow/renewal`): inside the renewal window (the 90 days before a fixed
//! contract ends), the renewal plans with their rates, average prices and documents; the new
//! contract starts the day after the current one ends; acceptance of its terms, then a done
//! screen. Outside the window: when renewal opens, beside the current contract.

use chrono::{Datelike, Days, NaiveDate};
use leptos::{html, prelude::*};

use super::{
    events::views,
    plans::{estimate_basis, PlanCard, TermsConsent},
    session::{focus_when_shown, ErrorNotice, Flow, Submit, Task},
};
use crate::{
    format::{average, long_date},
    views::{Contract, Plan},
};

/// Renewal opens this many days before a fixed contract ends (the service's rule).
const WINDOW_DAYS: u64 = 90;

/// The day renewal opens for a contract ending on `end` (`YYYY-MM-DD`).
fn opens_on(end: &str) -> Option<String> {
    let mut parts = end.splitn(3, '-').map(str::parse::<u32>);
    let (y, m, d) = (
        parts.next()?.ok()?,
        parts.next()?.ok()?,
        parts.next()?.ok()?,
    );
    let end = NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, m, d)?;
    let opens = end.checked_sub_days(Days::new(WINDOW_DAYS))?;
    Some(format!(
        "{:04}-{:02}-{:02}",
        opens.year(),
        opens.month(),
        opens.day()
    ))
}

#[component]
pub fn RenewalFlow(flow: Flow) -> impl IntoView {
    let location = flow.account.with_untracked(|a| {
        a.as_ref().and_then(|a| a.locations.first()).map(|l| {
            (
                l.uuid.clone(),
                l.plan_name.clone().unwrap_or_default(),
                l.contract_end.clone(),
            )
        })
    });
    let Some((uuid, plan_name, end)) = location else {
        return view! {
            <section class="steps" data-step=views(|| Some("none"))>
                <h2>"Renew your plan"</h2>
                <p data-testid="no-location">"There is no contract to renew on this account yet."</p>
            </section>
        }
        .into_any();
    };
    let uuid = StoredValue::new(uuid);
    let plans = RwSignal::new(None::<Vec<Plan>>);
    let chosen = RwSignal::new(None::<Plan>);
    let renewed = RwSignal::new(None::<Contract>);
    let outside = RwSignal::new(false);
    let load = Task::new();
    let request = move || {
        chosen.set(None);
        let at = uuid.get_value();
        flow.call(
            load,
            async move |c| match c.renewal_plans(&at).await {
                Ok(plans) => Ok(Some(plans)),
                Err(e) if e.code == "renewal_not_eligible" => Ok(None),
                Err(e) => Err(e),
            },
            move |answer| match answer {
                Some(p) => plans.set(Some(p)),
                None => outside.set(true),
            },
        );
    };
    request();
    // Month-to-month has no end: its customer may leave it for a plan from tomorrow.
    let starts = if end.is_some() {
        "Your new plan starts the day after your current plan ends, with no gap in service."
    } else {
        "Your plan is month-to-month: choose a plan with a fixed rate and it starts tomorrow, with no gap in service."
    };
    let current = {
        let (plan_name, end) = (plan_name.clone(), end.clone());
        move || {
            view! {
                <div class="card summary" data-testid="current-contract">
                    <p class="muted">"Your plan now"</p>
                    <p class="lead">{plan_name.clone()}</p>
                    <p>
                        {match &end {
                            Some(day) => format!("Ends on {}.", long_date(day)),
                            None => "Month-to-month, with no end date.".to_owned(),
                        }}
                    </p>
                </div>
            }
        }
    };
    view! {
        // Until the plans come (or the window is found closed), which view this is is not known.
        <section class="steps" data-step=views(move || {
            if renewed.with(Option::is_some) {
                Some("done")
            } else if outside.get() {
                Some("outside")
            } else if chosen.with(Option::is_some) {
                Some("accept")
            } else {
                plans.with(Option::is_some).then_some("plans")
            }
        })>
            {move || {
                if let Some(contract) = renewed.get() {
                    return view! { <Renewed flow contract/> }.into_any();
                }
                if outside.get() {
                    let when = end.as_deref().and_then(opens_on);
                    return view! {
                        <h2>"Renew your plan"</h2>
                        {current()}
                        <p class="notice" data-testid="renewal-closed" role="status">
                            {match when {
                                Some(day) => format!("Renewal opens on {}. Come back then to choose your next plan.", long_date(&day)),
                                None => "Your plan has no end date, so there is nothing to renew.".to_owned(),
                            }}
                        </p>
                    }
                        .into_any();
                }
                match chosen.get() {
                    Some(plan) => view! { <Accept flow uuid plan chosen renewed/> }.into_any(),
                    None => {
                        view! {
                            <h2>"Renew your plan"</h2>
                            {current()}
                            <ErrorNotice task=load retry=move |_| request()/>
                            <Show when=move || load.pending.get()>
                                <p class="muted" role="status">"Finding renewal plans…"</p>
                            </Show>
                            <p data-testid="renewal-when">{starts}</p>
                            {estimate_basis(plans)}
                            <div class="plans" data-testid="plans">
                                <For each=move || plans.get().unwrap_or_default() key=|p| p.plan_uuid.clone() let:plan>
                                    <PlanCard plan chosen/>
                                </For>
                            </div>
                            <Show when=move || plans.with(|p| p.as_ref().is_some_and(Vec::is_empty))>
                                <p>"No renewal plans are offered right now."</p>
                            </Show>
                        }
                            .into_any()
                    }
                }
            }}
        </section>
    }
    .into_any()
}

/// The chosen plan's start (fixed: the day after the current contract ends) and its terms.
#[component]
fn Accept(
    flow: Flow,
    uuid: StoredValue<String>,
    plan: Plan,
    chosen: RwSignal<Option<Plan>>,
    renewed: RwSignal<Option<Contract>>,
) -> impl IntoView {
    let task = Task::new();
    let summary = NodeRef::<html::P>::new();
    focus_when_shown(summary);
    let terms = RwSignal::new(false);
    task.clear_when("terms_accepted", move || terms.get());
    let (id, start) = (
        StoredValue::new(plan.plan_uuid.clone()),
        StoredValue::new(plan.earliest_start_date.clone()),
    );
    let accept = move || {
        if !terms.get_untracked() {
            task.fail(
                "Please accept the plan's terms to continue.",
                Some("terms_accepted"),
            );
            return;
        }
        let (at, plan, day) = (uuid.get_value(), id.get_value(), start.get_value());
        flow.call(
            task,
            async move |c| c.accept_renewal(&at, &plan, &day).await,
            move |contract| {
                flow.done.set(true);
                renewed.set(Some(contract));
            },
        );
    };
    let docs = plan.documents.clone();
    view! {
        <h2>"Accept your renewal"</h2>
        <form class="stack" on:submit=move |ev| {
            ev.prevent_default();
            accept();
        }>
            <p node_ref=summary tabindex="-1" class="focus-target">
                <strong>{plan.name.clone()}</strong>
                {format!(" · {} per kWh at 1,000 kWh", average(&plan.average_price_cents_per_kwh.kwh_1000))}
            </p>
            <p data-testid="renewal-start">{format!("Starts on {}.", long_date(&plan.earliest_start_date))}</p>
            <TermsConsent task terms docs/>
            <ErrorNotice task retry=move |_| accept()/>
            <Submit task label="Accept renewal" testid="accept-renewal"/>
            <button type="button" class="link" on:click=move |_| chosen.set(None)>
                "Back to plans"
            </button>
        </form>
    }
}

#[component]
fn Renewed(flow: Flow, contract: Contract) -> impl IntoView {
    let lead = NodeRef::<html::P>::new();
    focus_when_shown(lead);
    view! {
        <div class="done" data-testid="done">
            <h2>"Plan renewed"</h2>
            <p class="lead focus-target" node_ref=lead tabindex="-1" role="status">
                {format!("You're renewed on {}.", contract.plan_name)}
            </p>
            <p>
                {format!("It starts on {}", long_date(&contract.start_date))}
                {contract.end_date.as_deref().map(|d| format!(" and runs until {}", long_date(d)))}
                "."
            </p>
            <button type="button" class="primary" data-testid="done-close" on:click=move |_| flow.close.run("completed")>
                "Done"
            </button>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renewal_opens_ninety_days_before_the_end() {
        assert_eq!(opens_on("2027-06-30").as_deref(), Some("2027-04-01"));
        assert_eq!(opens_on("2027-03-01").as_deref(), Some("2026-12-01"));
        assert_eq!(opens_on("not a date"), None);
    }
}
