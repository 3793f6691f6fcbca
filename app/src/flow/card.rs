//! The card component: card data goes from the browser to the payment processor with the
//! app's publishable key and a single-use client secret; `/v1` only ever sees the `pm_...` id.
//! In sandbox the test cards are listed. A declined card is reported at the card number and
//! another card can be tried at once.

use leptos::prelude::*;

use super::{
    enrollment::{ErrorNotice, Flow, Submit, Task},
    input::{digits, parse_expiry},
};
use crate::client::{ApiClient, CardInput, ClientError};

/// The processor's sandbox test cards (`docs/api-conventions.md`, Sandbox).
const TEST_CARDS: [(&str, &str); 5] = [
    ("4242 4242 4242 4242", "succeeds (Visa)"),
    ("5555 5555 5555 4444", "succeeds (Mastercard)"),
    ("4000 0000 0000 0002", "is declined"),
    ("4000 0000 0000 9995", "is declined: insufficient funds"),
    ("4000 0000 0000 0341", "is saved, later charges fail"),
];

#[component]
pub fn PaymentStep(flow: Flow) -> impl IntoView {
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
    let save = move || {
        let Some((exp_month, exp_year)) = parse_expiry(&expiry.get_untracked()) else {
            task.fail("Enter the expiry date as MM/YY.", Some("exp_month"));
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
                let id = ApiClient::create_card(&session, &card)
                    .await
                    .map_err(explain_decline)?;
                let method = c.attach_payment_method(&id).await?;
                Ok((method, c.account().await?))
            },
            move |(method, account)| {
                flow.card.set(Some(method));
                flow.advance(account);
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
            <p>"Your card pays each bill automatically. We never see or store its full number."</p>
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
                                        expiry.set("12/34".to_owned());
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
            <input id="card-number" name="cardnumber" inputmode="numeric" autocomplete="cc-number"
                aria-invalid=move || card_error().to_string() bind:value=number/>
            <div class="row">
                <div class="stack">
                    <label for="card-expiry">"Expiry (MM/YY)"</label>
                    <input id="card-expiry" name="exp-date" inputmode="numeric" autocomplete="cc-exp"
                        placeholder="MM/YY" aria-invalid=task.about("exp_month") bind:value=expiry/>
                </div>
                <div class="stack">
                    <label for="card-cvc">"CVC"</label>
                    <input id="card-cvc" name="cvc" inputmode="numeric" autocomplete="cc-csc"
                        aria-invalid=task.about("cvc") bind:value=cvc/>
                </div>
            </div>
            <label for="card-zip">"Billing ZIP code"</label>
            <input id="card-zip" name="postal" inputmode="numeric" autocomplete="postal-code" bind:value=zip/>
            <ErrorNotice task retry=move |_| save()/>
            <Submit task label="Save card" testid="card-submit"/>
        </form>
    }
}

/// A declined card, said the way the customer can act on it.
fn explain_decline(mut e: ClientError) -> ClientError {
    if e.code == "card_declined" {
        e.message = match e.decline_code.as_deref() {
            Some("insufficient_funds") => "This card has insufficient funds. Try another card.",
            Some("expired_card") => "This card has expired. Try another card.",
            _ => "Your card was declined. Try another card, or call your bank.",
        }
        .to_owned();
        e.param.get_or_insert_with(|| "number".to_owned());
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declined(code: &str) -> ClientError {
        ClientError {
            decline_code: Some(code.to_owned()),
            ..ClientError::new("card_declined", "The card was declined")
        }
    }

    #[test]
    fn declines_say_what_to_do() {
        let e = explain_decline(declined("insufficient_funds"));
        assert_eq!(
            e.message,
            "This card has insufficient funds. Try another card."
        );
        assert_eq!(e.param.as_deref(), Some("number"));
        assert!(explain_decline(declined("generic_decline"))
            .message
            .starts_with("Your card was declined"));
        let other = ClientError::network("offline");
        assert_eq!(explain_decline(other.clone()), other);
    }
}
