//! The update-payment-method flow (`/flow/update-payment-method`): the card on file, a new
//! card through the same card component as enrollment (declines shown at the card number,
//! another card tried at once), then a success screen whose Done says `completed`.

use leptos::{html, prelude::*};

use super::{
    card::CardForm,
    events::views,
    session::{focus_when_shown, ErrorNotice, Flow, Task},
};
use crate::{
    format::card_brand,
    views::{CardOnFile, PaymentMethod},
};

#[component]
pub fn PaymentMethodFlow(flow: Flow) -> impl IntoView {
    let on_file = RwSignal::new(None::<Option<CardOnFile>>);
    let load = Task::new();
    let read = move || {
        flow.call(
            load,
            async |c| match c.payment_method().await {
                Ok(card) => Ok(Some(card)),
                // No card yet: the form alone.
                Err(e) if e.code == "resource_missing" => Ok(None),
                Err(e) => Err(e),
            },
            move |card| on_file.set(Some(card)),
        );
    };
    read();
    // The form saved a card: the flow did what it is for.
    Effect::new(move |_| {
        if flow.card.with(Option::is_some) {
            flow.done.set(true);
        }
    });
    view! {
        <section class="steps" data-step=views(move || Some(if flow.card.with(Option::is_some) { "done" } else { "card" }))>
            {move || match flow.card.get() {
                Some(card) => view! { <Saved flow card/> }.into_any(),
                None => {
                    view! {
                        <h2>"Payment method"</h2>
                        <ErrorNotice task=load retry=move |_| read()/>
                        <Show when=move || load.pending.get()>
                            <p class="muted" role="status">"Loading your card…"</p>
                        </Show>
                        {move || {
                            on_file
                                .get()
                                .map(|card| match card {
                                    Some(card) => {
                                        view! {
                                            <div class="card on-file" data-testid="card-on-file">
                                                <p class="muted">"Card on file"</p>
                                                <p class="lead">{describe(&card.card_brand, &card.card_last4)}</p>
                                                <p>{expiry(&card)}</p>
                                            </div>
                                        }
                                            .into_any()
                                    }
                                    None => {
                                        view! { <p data-testid="no-card">"There is no card on file yet."</p> }
                                            .into_any()
                                    }
                                })
                        }}
                        <h3>"New card"</h3>
                        <p>"The new card pays your next bills automatically. We never see or store its full number."</p>
                        <CardForm flow reread=false label="Save new card"/>
                    }
                        .into_any()
                }
            }}
        </section>
    }
}

#[component]
fn Saved(flow: Flow, card: PaymentMethod) -> impl IntoView {
    let lead: NodeRef<html::P> = NodeRef::new();
    focus_when_shown(lead);
    view! {
        <div class="done" data-testid="done">
            <h2>"Card saved"</h2>
            <p class="lead focus-target" node_ref=lead tabindex="-1" role="status">
                {format!("{} now pays your bills.", describe(&card.card_brand, &card.card_last4))}
            </p>
            <button type="button" class="primary" data-testid="done-close" on:click=move |_| flow.close.run("completed")>
                "Done"
            </button>
        </div>
    }
}

/// "Visa ending in 4242".
fn describe(brand: &str, last4: &str) -> String {
    format!("{} ending in {last4}", card_brand(brand))
}

/// "Expires 12/2034".
fn expiry(card: &CardOnFile) -> String {
    format!("Expires {:02}/{}", card.card_exp_month, card.card_exp_year)
}
