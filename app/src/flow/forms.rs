//! The short forms of enrollment: identity (phone, date of birth), the credit check (SSN with
//! consent) and the billing address.

use leptos::prelude::*;

use super::{
    input::digits,
    session::{ErrorNotice, Flow, Submit, Task},
};
use crate::{api::PostalAddress, format::phone};

#[component]
pub fn IdentityStep(flow: Flow) -> impl IntoView {
    let account = flow.account.get_untracked();
    let name = account
        .as_ref()
        .map(|a| format!("{} {}", a.first_name, a.last_name))
        .unwrap_or_default();
    let tel = RwSignal::new(
        account
            .as_ref()
            .and_then(|a| a.phone.as_deref().map(phone))
            .unwrap_or_default(),
    );
    let birth = RwSignal::new(
        account
            .as_ref()
            .and_then(|a| a.date_of_birth.clone())
            .unwrap_or_default(),
    );
    let task = Task::new();
    let save = move || {
        let (p, d) = (tel.get_untracked(), birth.get_untracked());
        if digits(&p).len() < 10 {
            task.fail("Enter a 10-digit US phone number.", Some("phone"));
            return;
        }
        if d.is_empty() {
            task.fail("Enter your date of birth.", Some("date_of_birth"));
            return;
        }
        flow.call(
            task,
            async move |c| {
                c.update_identity(&p, &d).await?;
                c.account().await
            },
            move |a| flow.advance(a),
        );
    };
    view! {
        <form class="stack" on:submit=move |ev| {
            ev.prevent_default();
            save();
        }>
            <p>{format!("We need a few details to confirm it's you, {name}.")}</p>
            <label for="phone">"Mobile phone"</label>
            <input id="phone" name="phone" type="tel" autocomplete="tel" inputmode="tel"
                aria-invalid=task.about("phone") bind:value=tel/>
            <label for="date-of-birth">"Date of birth"</label>
            <input id="date-of-birth" name="date_of_birth" type="date" autocomplete="bday"
                aria-invalid=task.about("date_of_birth") bind:value=birth/>
            <ErrorNotice task retry=move |_| save()/>
            <Submit task label="Continue" testid="identity-submit"/>
        </form>
    }
}

#[component]
pub fn CreditStep(flow: Flow) -> impl IntoView {
    let ssn = RwSignal::new(String::new());
    let consent = RwSignal::new(false);
    let task = Task::new();
    task.clear_when("consent", move || consent.get());
    let (partner, provider) = flow.names.get_value();
    let who = if provider.is_empty() {
        partner
    } else {
        format!("{partner} and {provider}, the retail electric provider,")
    };
    let check = move || {
        let number = digits(&ssn.get_untracked());
        if number.len() != 9 {
            task.fail("A Social Security number has 9 digits.", Some("ssn"));
            return;
        }
        if !consent.get_untracked() {
            task.fail(
                "Please agree to the credit check to continue.",
                Some("consent"),
            );
            return;
        }
        flow.call(
            task,
            async move |c| {
                c.credit_check(&number).await?;
                c.account().await
            },
            move |a| flow.advance(a),
        );
    };
    view! {
        <form class="stack" on:submit=move |ev| {
            ev.prevent_default();
            check();
        }>
            <p>"A soft credit check decides whether a deposit is needed. It does not affect your credit score."</p>
            <label for="ssn">"Social Security number"</label>
            <input id="ssn" name="ssn" type="password" inputmode="numeric" autocomplete="off"
                aria-invalid=task.about("ssn") bind:value=ssn/>
            <label class="option">
                <input type="checkbox" name="consent" data-testid="consent"
                    aria-invalid=task.about("consent") bind:checked=consent/>
                <span data-testid="consent-text">
                    {format!("I authorize {who} to obtain my credit report for this soft credit check.")}
                </span>
            </label>
            <ErrorNotice task retry=move |_| check()/>
            <Submit task label="Run credit check" testid="credit-submit"/>
        </form>
    }
}

#[component]
pub fn BillingStep(flow: Flow) -> impl IntoView {
    let same = RwSignal::new(true);
    let line1 = RwSignal::new(String::new());
    let line2 = RwSignal::new(String::new());
    let city = RwSignal::new(String::new());
    let state = RwSignal::new("TX".to_owned());
    let zip = RwSignal::new(String::new());
    let task = Task::new();
    let home = flow
        .account
        .with_untracked(|a| {
            a.as_ref()
                .and_then(|a| a.locations.first())
                .map(|l| format!("{}, {}, {} {}", l.address_1, l.city, l.state, l.postal_code))
        })
        .unwrap_or_default();
    let save = move || {
        let other = (!same.get_untracked()).then(|| PostalAddress {
            address_1: line1.get_untracked(),
            address_2: Some(line2.get_untracked()).filter(|s| !s.trim().is_empty()),
            city: city.get_untracked(),
            state: state.get_untracked(),
            postal_code: zip.get_untracked(),
        });
        flow.call(
            task,
            async move |c| {
                c.set_billing_address(other.as_ref()).await?;
                c.account().await
            },
            move |a| flow.advance(a),
        );
    };
    let field = move |id: &'static str,
                      label: &'static str,
                      value: RwSignal<String>,
                      auto: &'static str| {
        view! {
            <label for=id>{label}</label>
            <input id=id name=id autocomplete=auto aria-invalid=task.about(id) bind:value=value/>
        }
    };
    view! {
        <form class="stack" on:submit=move |ev| {
            ev.prevent_default();
            save();
        }>
            <fieldset>
                <legend>"Where should we send bills?"</legend>
                <label class="option">
                    <input type="radio" name="same_as_service_address" prop:checked=move || same.get()
                        on:change=move |_| same.set(true)/>
                    <span>"My home: " {home}</span>
                </label>
                <label class="option">
                    <input type="radio" name="same_as_service_address" data-testid="billing-other"
                        prop:checked=move || !same.get() on:change=move |_| same.set(false)/>
                    "A different address"
                </label>
            </fieldset>
            <Show when=move || !same.get()>
                <div class="stack">
                    {field("address_1", "Street address", line1, "address-line1")}
                    {field("address_2", "Apartment or unit (optional)", line2, "address-line2")}
                    {field("city", "City", city, "address-level2")}
                    {field("state", "State", state, "address-level1")}
                    {field("postal_code", "ZIP code", zip, "postal-code")}
                </div>
            </Show>
            <ErrorNotice task retry=move |_| save()/>
            <Submit task label="Continue" testid="billing-submit"/>
        </form>
    }
}
