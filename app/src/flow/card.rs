//! The card component: card data goes from the browser to the payment processor with the
//! app's publishable key and a single-use client secret; `/v1` only ever sees the `pm_...` id.
//! In sandbox the test cards are listed. A declined card is reported at the card number and
//! another card can be tried at once.

use leptos::prelude::*;

use super::{
    input::{card_network, digits, group_card_number, parse_expiry, shape_expiry},
    session::{ErrorNotice, Flow, Submit, Task},
};
use crate::client::{ApiClient, CardInput};

/// The processor's sandbox test cards (`docs/api-conventions.md`, Sandbox).
const TEST_CARDS: [(&str, &str); 5] = [
    ("4242 4242 4242 4242", "succeeds (Visa)"),
    ("5555 5555 5555 4444", "succeeds (Mastercard)"),
    ("4000 0000 0000 0002", "is declined"),
    ("4000 0000 0000 9995", "is declined: insufficient funds"),
    ("4000 0000 0000 0341", "is saved, later charges fail"),
];

/// The enrollment's payment step: the card form, then the next step the account needs.
#[component]
pub fn PaymentStep(flow: Flow) -> impl IntoView {
    view! {
        <p>"Your card pays each bill automatically. We never see or store its full number."</p>
        <CardForm flow reread=true label="Save card"/>
    }
}

/// Takes a card and saves it as the account's payment method; `flow.card` then holds it.
/// `reread`: read the account afterwards and move to the step it needs (enrollment).
#[component]
pub fn CardForm(flow: Flow, reread: bool, label: &'static str) -> impl IntoView {
    let number = RwSignal::new(String::new());
    let expiry = RwSignal::new(String::new());
    let cvc = RwSignal::new(String::new());
    let zip = RwSignal::new(
        flow.account
            .with_untracked(|a| {
                a.as_ref()
                    .and_then(|a| a.locations.first())
                    .map(|l| l.postal_code.clone())
            })
            .unwrap_or_default(),
    );
    let task = Task::new();
    // A declined or mistyped card's message goes as soon as the card changes.
    task.clear_when("number", move || {
        number.track();
        true
    });
    task.clear_when("exp_month", move || {
        expiry.track();
        true
    });
    let save = move || {
        let Some((exp_month, exp_year)) = parse_expiry(&expiry.get_untracked()) else {
            task.fail(
                "Enter the expiry date printed on your card, as MM / YY.",
                Some("exp_month"),
            );
            return;
        };
        let card = CardInput {
            number: digits(&number.get_untracked()),
            exp_month,
            exp_year,
            cvc: digits(&cvc.get_untracked()),
            postal_code: zip.get_untracked(),
        };
        flow.call(
            task,
            async move |c| {
                // A fresh session per attempt: its secret is good for one card only.
                let session = c.payment_session().await?;
                let id = ApiClient::create_card(&session, &card).await?;
                let method = c.attach_payment_method(&id).await?;
                let account = if reread {
                    Some(c.account().await?)
                } else {
                    None
                };
                Ok((method, account))
            },
            move |(method, account)| {
                flow.card.set(Some(method));
                if let Some(account) = account {
                    flow.advance(account);
                }
            },
        );
    };
    let card_error = move || {
        task.error.with(|e| {
            e.as_ref().is_some_and(|e| {
                matches!(e.param.as_deref(), Some("number")) || e.code == "card_declined"
            })
        })
    };
    let sandbox = flow.sandbox();
    view! {
        <form class="stack" on:submit=move |ev| {
            ev.prevent_default();
            save();
        }>
            <Show when=move || sandbox>
                <details class="notice" data-testid="test-cards">
                    <summary>"Test cards (sandbox)"</summary>
                    <p>"Any future expiry date and any 3-digit CVC."</p>
                    <ul>
                        {TEST_CARDS
                            .into_iter()
                            .map(|(n, what)| view! {
                                <li>
                                    <button type="button" class="link" on:click=move |_| {
                                        number.set(n.to_owned());
                                        expiry.set("12 / 34".to_owned());
                                        cvc.set("123".to_owned());
                                    }>
                                        <code>{n}</code>
                                    </button>
                                    " " {what}
                                </li>
                            })
                            .collect_view()}
                    </ul>
                </details>
            </Show>
            <label for="card-number">"Card number"</label>
            <p class="hint" id="card-network" data-testid="card-network" aria-live="polite">
                {move || card_network(&digits(&number.get()))}
            </p>
            <input id="card-number" name="number" inputmode="numeric" autocomplete="cc-number"
                aria-invalid=move || card_error().to_string()
                prop:value=move || number.get()
                on:input=move |ev| number.set(group_card_number(&event_target_value(&ev)))/>
            <div class="row">
                <div class="stack">
                    <label for="card-expiry">"Expiry (MM / YY)"</label>
                    <input id="card-expiry" name="exp_month" inputmode="numeric" autocomplete="cc-exp"
                        placeholder="MM / YY" aria-invalid=task.about("exp_month")
                        prop:value=move || expiry.get()
                        on:input=move |ev| expiry.set(shape_expiry(&event_target_value(&ev)))/>
                </div>
                <div class="stack">
                    <label for="card-cvc">"Security code"</label>
                    <input id="card-cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc"
                        aria-invalid=task.about("cvc") bind:value=cvc/>
                </div>
            </div>
            <label for="card-zip">"Billing ZIP code"</label>
            <input id="card-zip" name="postal" inputmode="numeric" autocomplete="postal-code" bind:value=zip/>
            <ErrorNotice task retry=move |_| save()/>
            <Submit task label testid="card-submit"/>
        </form>
    }
}
