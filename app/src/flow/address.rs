//! Finding the customer's home: the address the partner gave (looked up once, confirmed
//! directly when it matches exactly), type-ahead search, or the ESI ID printed on a bill; then
//! the customer confirms the address and meter.

use std::time::Duration;

use leptos::prelude::*;

use super::{
    input::digits,
    session::{focus_when_shown, ErrorNotice, Flow, Submit, Task},
};
use crate::api::{market::Address, PostalAddress};

/// Type-ahead waits for a pause in typing this long before it searches.
const TYPE_AHEAD_PAUSE: Duration = Duration::from_millis(250);

#[component]
pub fn AddressStep(flow: Flow) -> impl IntoView {
    let found = RwSignal::new(None::<Address>);
    let results = RwSignal::new(None::<Vec<Address>>);
    let by_esi = RwSignal::new(false);
    let query = RwSignal::new(String::new());
    let esi_id = RwSignal::new(String::new());
    let search = Task::new();
    // The result the arrow keys are on (the combobox's active option).
    let active = RwSignal::new(None::<usize>);
    // Each keystroke supersedes the searches before it; late answers are dropped.
    let generation = StoredValue::new(0u64);

    // Answers and timers may outlive this step (the customer moved on): then they do nothing.
    let current = move |this: u64| generation.try_get_value() == Some(this);
    let run_search = move |text: String| {
        let Some(this) = generation.try_get_value() else {
            return;
        };
        flow.call(
            search,
            async move |c| c.address_search(&text).await,
            move |list| {
                if current(this) {
                    active.set(None);
                    results.set(Some(list));
                }
            },
        );
    };
    let on_type = move |text: String| {
        query.set(text.clone());
        generation.update_value(|g| *g += 1);
        let this = generation.get_value();
        if text.trim().len() < 3 {
            results.set(None);
            return;
        }
        set_timeout(
            move || {
                if current(this) {
                    run_search(text);
                }
            },
            TYPE_AHEAD_PAUSE,
        );
    };

    // The partner's address for this customer, looked up once: an exact single match goes
    // straight to confirmation; several meters are offered; none starts a search with it.
    if !flow.prefill_tried.get_untracked() {
        flow.prefill_tried.set(true);
        let preliminary = flow
            .account
            .with_untracked(|a| a.as_ref().and_then(|a| a.preliminary_address.clone()));
        if let Some(address) = preliminary {
            let lookup = address.clone();
            flow.call(
                search,
                async move |c| c.full_address_search(&lookup).await,
                move |list| match list.len() {
                    1 => found.set(list.into_iter().next()),
                    0 => on_type(street_query(&address)),
                    _ => {
                        query.set(street_query(&address));
                        results.set(Some(list));
                    }
                },
            );
        }
    }

    let find_esi = Task::new();
    let submit_esi = move || {
        let id = digits(&esi_id.get_untracked());
        if !matches!(id.len(), 17 | 22) {
            find_esi.fail("An ESI ID has 17 or 22 digits.", Some("esi_id"));
            return;
        }
        flow.call(
            find_esi,
            async move |c| c.esi_id_search(&id).await,
            move |a| found.set(Some(a)),
        );
    };

    view! {
        {move || match found.get() {
            Some(address) => view! { <Confirm flow address found/> }.into_any(),
            None if by_esi.get() => {
                view! {
                    <form class="stack" on:submit=move |ev| {
                        ev.prevent_default();
                        submit_esi();
                    }>
                        <p>"Your ESI ID is on your electricity bill: 17 or 22 digits, often starting with 10."</p>
                        <label for="esi-id">"ESI ID"</label>
                        <input
                            id="esi-id"
                            name="esi_id"
                            inputmode="numeric"
                            autocomplete="off"
                            aria-invalid=find_esi.about("esi_id")
                            bind:value=esi_id
                        />
                        <ErrorNotice task=find_esi retry=move |_| submit_esi()/>
                        <Submit task=find_esi label="Find my meter" testid="esi-submit"/>
                        <button type="button" class="link" on:click=move |_| by_esi.set(false)>
                            "Search by address instead"
                        </button>
                    </form>
                }
                    .into_any()
            }
            None => {
                view! {
                    <div class="stack">
                        <label for="address-query">"Service address"</label>
                        <p class="hint" id="address-hint">"Start typing your street address, then choose it from the list."</p>
                        // A combobox: arrow keys move through the results, Enter chooses,
                        // Escape closes the list; focus stays in the field.
                        <input
                            id="address-query"
                            name="address"
                            type="text"
                            role="combobox"
                            aria-autocomplete="list"
                            aria-expanded=move || results.with(|r| r.as_ref().is_some_and(|r| !r.is_empty())).to_string()
                            aria-activedescendant=move || active.get().map(|i| format!("address-option-{i}"))
                            autocomplete="street-address"
                            aria-describedby="address-hint"
                            aria-controls="address-results"
                            prop:value=move || query.get()
                            on:input=move |ev| on_type(event_target_value(&ev))
                            on:keydown=move |ev| {
                                let count = results.with(|r| r.as_ref().map_or(0, Vec::len));
                                let now = active.get_untracked();
                                match ev.key().as_str() {
                                    "ArrowDown" if count > 0 => {
                                        ev.prevent_default();
                                        active.set(Some(now.map_or(0, |i| (i + 1) % count)));
                                    }
                                    "ArrowUp" if count > 0 => {
                                        ev.prevent_default();
                                        active.set(Some(now.map_or(count - 1, |i| (i + count - 1) % count)));
                                    }
                                    "Enter" => {
                                        ev.prevent_default();
                                        if let Some(i) = now {
                                            found.set(results.with_untracked(|r| r.as_ref().and_then(|r| r.get(i).cloned())));
                                        }
                                    }
                                    "Escape" => {
                                        results.set(None);
                                        active.set(None);
                                    }
                                    _ => {}
                                }
                            }
                        />
                        <p class="hint" role="status" data-testid="address-status">
                            {move || {
                                if search.pending.get() {
                                    return Some("Searching for addresses…".to_owned());
                                }
                                results
                                    .get()
                                    .map(|r| match r.len() {
                                        0 => "No addresses found".to_owned(),
                                        1 => "1 address found".to_owned(),
                                        n => format!("{n} addresses found. Use the arrow keys to choose one."),
                                    })
                            }}
                        </p>
                        <ErrorNotice task=search retry=move |_| run_search(query.get_untracked())/>
                        <ul class="choices" id="address-results" role="listbox" aria-label="Addresses found" data-testid="address-results">
                            {move || {
                                results
                                    .get()
                                    .unwrap_or_default()
                                    .into_iter()
                                    .enumerate()
                                    .map(|(i, address)| {
                                        let line = street_line(&address);
                                        let place = format!("{}, {} {}", address.city, address.state, address.postal_code);
                                        view! {
                                            <li
                                                role="option"
                                                class="choice"
                                                id=format!("address-option-{i}")
                                                aria-selected=move || (active.get() == Some(i)).to_string()
                                                on:click=move |_| found.set(Some(address.clone()))
                                            >
                                                <strong>{line}</strong>
                                                <span class="muted">{place}</span>
                                            </li>
                                        }
                                    })
                                    .collect_view()
                            }}
                        </ul>
                        <Show when=move || results.with(|r| r.as_ref().is_some_and(Vec::is_empty))>
                            <p class="muted">"We could not find that address. Check the spelling, or search by ESI ID."</p>
                        </Show>
                        <button type="button" class="link" data-testid="by-esi" on:click=move |_| by_esi.set(true)>
                            "Search by ESI ID instead"
                        </button>
                    </div>
                }
                    .into_any()
            }
        }}
    }
}

/// The address and meter found, for the customer to confirm.
#[component]
fn Confirm(flow: Flow, address: Address, found: RwSignal<Option<Address>>) -> impl IntoView {
    let task = Task::new();
    let question = NodeRef::<leptos::html::P>::new();
    focus_when_shown(question);
    let esi = address.esi_id.clone();
    let confirm = move || {
        let esi = esi.clone();
        flow.call(
            task,
            async move |c| c.confirm_address(&esi).await,
            move |a| flow.advance(a),
        );
    };
    let retry = confirm.clone();
    view! {
        <form class="stack" on:submit=move |ev| {
            ev.prevent_default();
            confirm();
        }>
            <p node_ref=question tabindex="-1" class="focus-target">"Is this your home and its meter?"</p>
            <div class="card" data-testid="address-confirm">
                <p class="address">
                    <strong>{street_line(&address)}</strong>
                    <br/>
                    {format!("{}, {} {}", address.city, address.state, address.postal_code)}
                </p>
                <dl class="facts">
                    <div>
                        <dt>"ESI ID"</dt>
                        <dd data-testid="esi-id">{address.esi_id.clone()}</dd>
                    </div>
                    <div>
                        <dt>"Utility"</dt>
                        <dd>{address.utility.display_name.clone()}</dd>
                    </div>
                </dl>
            </div>
            <ErrorNotice task retry=move |_| retry()/>
            <Submit task label="Yes, this is my home" testid="confirm-address"/>
            <button type="button" class="link" on:click=move |_| found.set(None)>
                "No, search again"
            </button>
        </form>
    }
}

fn street_line(a: &Address) -> String {
    match a.address_2.as_deref() {
        Some(unit) if !unit.is_empty() => format!("{} {unit}", a.address_1),
        _ => a.address_1.clone(),
    }
}

/// What to type-ahead with when the partner's address matched nothing exactly.
fn street_query(a: &PostalAddress) -> String {
    a.address_1.clone()
}
