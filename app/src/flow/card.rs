//! The card component: card data goes from the browser to the payment processor with the
//! app's publishable key and a single-use client secret; `/v1` only ever sees the `pm_...` id.
//! In sandbox the form is ours and posts to the built-in test-mode processor, and the test
//! cards are listed; for live apps the card processor's own component (from its script, on its
//! origin) takes the card and confirms the setup session, so the number never reaches this
//! code. A declined card is reported at the card number and another card can be tried at once.

use leptos::prelude::*;

use super::{
    input::{card_network, digits, group_card_number, parse_expiry, shape_expiry},
    session::{ErrorNotice, Flow, Submit, Task},
    CardEntry,
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
    match flow.card_entry.get_value() {
        CardEntry::BuiltIn => view! { <BuiltInCardForm flow reread label/> }.into_any(),
        CardEntry::Processor {
            publishable_key, ..
        } => view! { <ProcessorCardForm flow reread label publishable_key/> }.into_any(),
        CardEntry::Unavailable => view! {
            <div class="notice" role="status" data-testid="card-unavailable">
                <p>"Cards cannot be added here yet. Please contact us to set up your payment."</p>
            </div>
        }
        .into_any(),
    }
}

/// Where Save takes the card from.
enum CardSource {
    /// Typed into our own form (sandbox): posted to the built-in test-mode processor.
    Typed(CardInput),
    /// In the card processor's component, which confirms the setup session itself (live).
    #[cfg(feature = "hydrate")]
    Processor,
}

/// Saves a card as the account's payment method, whichever form took it: a fresh setup session
/// per attempt (its secret is good for one card only), the card to the processor, then the
/// payment method's id to the account. One routine for both forms, so that the flow's code
/// holds it once.
fn save_card(flow: Flow, task: Task, reread: bool, source: CardSource) {
    flow.call(
        task,
        async move |c| {
            let session = c.payment_session().await?;
            let id = match source {
                CardSource::Typed(card) => ApiClient::create_card(&session, &card).await?,
                #[cfg(feature = "hydrate")]
                CardSource::Processor => processor::confirm(&session.client_secret).await?,
            };
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
}

/// The card processor's component in our page (live apps): it takes the card and confirms the
/// setup session with the processor; Save then attaches the payment method it made.
#[component]
fn ProcessorCardForm(
    flow: Flow,
    reread: bool,
    label: &'static str,
    publishable_key: String,
) -> impl IntoView {
    let task = Task::new();
    let ready = RwSignal::new(false);
    // Mounted once the page shows its place for it: the task runs after this render.
    #[cfg(feature = "hydrate")]
    leptos::task::spawn_local(async move {
        match processor::mount(&publishable_key, "card-number").await {
            Ok(()) => ready.set(true),
            Err(_) => task.error.set(Some(crate::client::ClientError::new(
                "network_error",
                "The card form could not be loaded.",
            ))),
        }
    });
    #[cfg(not(feature = "hydrate"))]
    let _ = publishable_key;
    let save = move || {
        #[cfg(feature = "hydrate")]
        if ready.get_untracked() {
            save_card(flow, task, reread, CardSource::Processor);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (flow, reread);
    };
    view! {
        <form class="stack" data-testid="processor-card" on:submit=move |ev| {
            ev.prevent_default();
            save();
        }>
            <label id="card-label">"Card"</label>
            <div class="processor-card" id="card-number" role="group" aria-labelledby="card-label"
                data-ready=move || ready.get().to_string()></div>
            <ErrorNotice task retry=move |_| save()/>
            <Submit task label testid="card-submit"/>
        </form>
    }
}

/// The card processor's browser component, driven through its script's documented calls: the
/// processor object made with the publishable key, its card element mounted in our page, and
/// the confirmation of a setup session with that element. Nothing of the card passes here.
/// A page has one card step, so the component is kept for the page (`CARD`).
#[cfg(feature = "hydrate")]
mod processor {
    use std::cell::RefCell;

    use js_sys::{Object, Promise, Reflect};
    use wasm_bindgen::{prelude::wasm_bindgen, JsValue};
    use wasm_bindgen_futures::JsFuture;

    use crate::client::ClientError;

    #[wasm_bindgen]
    extern "C" {
        /// The processor's client object, made with the publishable key by the one global its
        /// script defines.
        type Client;
        type Elements;
        type CardElement;
        #[wasm_bindgen(catch, js_name = Stripe)]
        fn client(publishable_key: &str) -> Result<Client, JsValue>;
        #[wasm_bindgen(method)]
        fn elements(this: &Client) -> Elements;
        #[wasm_bindgen(method)]
        fn create(this: &Elements, kind: &str) -> CardElement;
        #[wasm_bindgen(method, catch)]
        fn mount(this: &CardElement, host: &web_sys::Element) -> Result<(), JsValue>;
        #[wasm_bindgen(method, js_name = confirmCardSetup)]
        fn confirm_card_setup(this: &Client, client_secret: &str, data: &Object) -> Promise;
    }

    thread_local! {
        static CARD: RefCell<Option<(Client, CardElement)>> = const { RefCell::new(None) };
    }

    fn get(target: &JsValue, key: &str) -> JsValue {
        Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    }

    /// Waits for the processor's script, which the page loads from the processor's origin (as
    /// the processor requires), then mounts its card element in the element `host_id`.
    pub async fn mount(publishable_key: &str, host_id: &str) -> Result<(), JsValue> {
        let window = web_sys::window().ok_or(JsValue::NULL)?;
        let mut waited = 0;
        while !Reflect::has(&window, &"Stripe".into())? {
            if waited == 150 {
                return Err(JsValue::NULL);
            }
            waited += 1;
            gloo_timers::future::TimeoutFuture::new(100).await;
        }
        let document = window.document().ok_or(JsValue::NULL)?;
        let host = document.get_element_by_id(host_id).ok_or(JsValue::NULL)?;
        let client = client(publishable_key)?;
        let card = client.elements().create("card");
        card.mount(&host)?;
        CARD.with(|c| *c.borrow_mut() = Some((client, card)));
        Ok(())
    }

    /// Confirms the setup session with the card in the component: the new payment method's
    /// id, or the processor's refusal in the customer's words.
    pub async fn confirm(client_secret: &str) -> Result<String, ClientError> {
        let unreachable =
            || ClientError::new("network_error", "The card processor could not be reached.");
        let promise = CARD.with(|c| {
            c.borrow().as_ref().map(|(client, card)| {
                let method = Object::new();
                let _ = Reflect::set(&method, &"card".into(), card);
                let data = Object::new();
                let _ = Reflect::set(&data, &"payment_method".into(), &method);
                client.confirm_card_setup(client_secret, &data)
            })
        });
        let result = JsFuture::from(promise.ok_or_else(unreachable)?)
            .await
            .map_err(|_| unreachable())?;
        let error = get(&result, "error");
        if error.is_object() {
            let message = get(&error, "message")
                .as_string()
                .unwrap_or_else(|| "This card could not be saved. Try another card.".into());
            return Err(match get(&error, "code").as_string().as_deref() {
                Some("card_declined") => ClientError {
                    decline_code: get(&error, "decline_code").as_string(),
                    ..ClientError::new("card_declined", message)
                },
                // The processor's own words about its component, shown at the card.
                _ => ClientError {
                    param: Some("number".to_owned()),
                    ..ClientError::new("invalid_input", message)
                },
            });
        }
        let method = get(&get(&result, "setupIntent"), "payment_method");
        method
            .as_string()
            .or_else(|| get(&method, "id").as_string())
            .ok_or_else(|| {
                ClientError::new(
                    "network_error",
                    "The card processor's answer was not understood.",
                )
            })
    }
}

/// This service's own card form, posting to the built-in test-mode processor (sandbox apps).
#[component]
fn BuiltInCardForm(flow: Flow, reread: bool, label: &'static str) -> impl IntoView {
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
        save_card(flow, task, reread, CardSource::Typed(card));
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
