//! What every flow shares: the session (client, account, where the flow is, how it closes),
//! one call at a time per form (`Task`), and the pieces each form shows the same way (errors
//! in place with a retry, the submit button, focus moved to what just appeared).

use leptos::{html, prelude::*};

use crate::{
    client::{ApiClient, ClientError},
    views::{Account, PaymentMethod},
};

use super::{
    steps::{next_step, Step},
    CardEntry,
};

/// What every screen of a flow shares: the client, the account as last read, where the
/// enrollment is, whether the flow did what it is for, and how it tells its host that it
/// closes. Copy, so that closures take it freely.
#[derive(Clone, Copy)]
pub struct Flow {
    client: StoredValue<Option<ApiClient>>,
    pub account: RwSignal<Option<Account>>,
    pub step: RwSignal<Step>,
    /// The card added in this session.
    pub card: RwSignal<Option<PaymentMethod>>,
    /// Whether the preliminary address was already looked up (only once per session).
    pub prefill_tried: RwSignal<bool>,
    /// The flow did what it is for: Close then says `completed` rather than `exited`.
    pub done: RwSignal<bool>,
    pub close: Callback<&'static str>,
    /// The flow the host should open next, sent with the close message (`next`).
    next: StoredValue<Option<&'static str>>,
    /// The partner's display name and the licensed provider's name, as consents name them.
    pub names: StoredValue<(String, String)>,
    /// How the card steps take a card.
    pub card_entry: StoredValue<CardEntry>,
}

impl Flow {
    pub fn new(
        close: Callback<&'static str>,
        next: StoredValue<Option<&'static str>>,
        names: (String, String),
        card_entry: CardEntry,
    ) -> Self {
        Flow {
            client: StoredValue::new(None),
            account: RwSignal::new(None),
            step: RwSignal::new(Step::Address),
            card: RwSignal::new(None),
            prefill_tried: RwSignal::new(false),
            done: RwSignal::new(false),
            close,
            next,
            names: StoredValue::new(names),
            card_entry: StoredValue::new(card_entry),
        }
    }

    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    pub fn start(&self, client: ApiClient) {
        self.client.set_value(Some(client));
    }

    /// Closes the flow (`exited`) asking the host to open the flow of `scope` next: for what
    /// this flow's scope may not do (the billing flow cannot save a card).
    pub fn hand_over(&self, scope: &'static str) {
        self.next.set_value(Some(scope));
        self.close.run("exited");
    }

    pub fn client(&self) -> ApiClient {
        self.client
            .get_value()
            .unwrap_or_else(|| ApiClient::new(String::new()))
    }

    /// Takes a fresh copy of the account and moves to the first step it still needs.
    pub fn advance(&self, account: Account) {
        self.step.set(next_step(&account));
        self.account.set(Some(account));
    }

    /// Runs one call of the v1 client as `task`; `done` gets its answer.
    pub fn call<T: 'static>(
        &self,
        task: Task,
        call: impl AsyncFnOnce(&ApiClient) -> Result<T, ClientError> + 'static,
        done: impl FnOnce(T) + 'static,
    ) {
        let client = self.client();
        task.run(async move { call(&client).await }, done);
    }

    pub fn sandbox(&self) -> bool {
        self.account
            .with_untracked(|a| {
                a.as_ref()
                    .map(|a| a.app.payment_public_key.starts_with("pk_test_"))
            })
            .unwrap_or(false)
    }
}

/// One call of a step at a time: whether it is under way, and the error it ended with.
#[derive(Clone, Copy)]
pub struct Task {
    pub pending: RwSignal<bool>,
    pub error: RwSignal<Option<ClientError>>,
}

impl Task {
    pub fn new() -> Self {
        Task {
            pending: RwSignal::new(false),
            error: RwSignal::new(None),
        }
    }

    /// Runs `call` unless one is under way; `done` gets its answer, the error stays shown.
    pub fn run<T: 'static>(
        self,
        call: impl std::future::Future<Output = Result<T, ClientError>> + 'static,
        done: impl FnOnce(T) + 'static,
    ) {
        if self.pending.get_untracked() {
            return;
        }
        self.pending.set(true);
        self.error.set(None);
        leptos::task::spawn_local(async move {
            let answer = call.await;
            self.pending.set(false);
            match answer {
                Ok(value) => done(value),
                // The API's own words stay for developers: the response, and the error's
                // `data-code` in the page.
                Err(e) => self.error.set(Some(explain(e))),
            }
        });
    }

    pub fn fail(self, message: &str, param: Option<&str>) {
        self.error.set(Some(ClientError {
            param: param.map(str::to_owned),
            ..ClientError::new("invalid_input", message)
        }));
    }

    /// Clears the error shown about `param` once `fixed` holds (a box ticked after the error
    /// asked for it).
    pub fn clear_when(self, param: &'static str, fixed: impl Fn() -> bool + 'static) {
        Effect::new(move |_| {
            let about = self.error.with_untracked(|e| {
                e.as_ref()
                    .is_some_and(|e| e.param.as_deref() == Some(param))
            });
            if fixed() && about {
                self.error.set(None);
            }
        });
    }

    /// Whether the error shown is about this request field (for `aria-invalid`).
    pub fn about(self, param: &'static str) -> impl Fn() -> &'static str + Copy {
        move || {
            let hit = self.error.with(|e| {
                e.as_ref()
                    .is_some_and(|e| e.param.as_deref() == Some(param))
            });
            if hit {
                "true"
            } else {
                "false"
            }
        }
    }
}

impl Default for Task {
    fn default() -> Self {
        Self::new()
    }
}

/// Moves keyboard and screen reader focus to `target` once it is on the page: a view that
/// replaces another within a step (a confirmation, a form after a choice) starts there.
pub fn focus_when_shown(target: NodeRef<html::P>) {
    Effect::new(move |_| {
        if let Some(p) = target.get() {
            let _ = p.focus();
        }
    });
}

/// The error of a step, where the step is; network failures offer to try again. An error about
/// a field (`param`, the field's `name`) moves focus to that field, which the message then
/// describes: the customer hears what is wrong where they fix it.
#[component]
pub fn ErrorNotice(task: Task, #[prop(into)] retry: Callback<()>) -> impl IntoView {
    #[cfg(feature = "hydrate")]
    Effect::new(move |previous: Option<Option<web_sys::Element>>| {
        use wasm_bindgen::JsCast;
        if let Some(Some(field)) = previous {
            let _ = field.remove_attribute("aria-describedby");
        }
        let param = task
            .error
            .with(|e| e.as_ref().and_then(|e| e.param.clone()))?;
        let field = document()
            .query_selector(&format!("[name=\"{param}\"]"))
            .ok()??;
        let _ = field.set_attribute("aria-describedby", "step-error");
        if let Some(input) = field.dyn_ref::<web_sys::HtmlElement>() {
            let _ = input.focus();
        }
        Some(field)
    });
    move || {
        task.error.get().map(|e| {
            super::events::track("error_shown", None, Some(&e.code));
            let network = e.is_network()
                || matches!(e.code.as_str(), "internal_error" | "service_unavailable" | "rate_limited");
            view! {
                <div class="notice error" role="alert" id="step-error" data-testid="step-error" data-code=e.code.clone()>
                    <p>{e.message}</p>
                    <Show when=move || network>
                        <button type="button" class="secondary" on:click=move |_| retry.run(())>
                            "Try again"
                        </button>
                    </Show>
                </div>
            }
        })
    }
}

/// The submit button of a step: says what it does, and that it is working. While its task
/// runs it reads "Please wait…" beside a spinner and is marked disabled; being a polite live
/// region, its change is announced (`aria-busy` would hold the announcement back).
#[component]
pub fn Submit(
    task: Task,
    label: &'static str,
    #[prop(optional)] testid: &'static str,
) -> impl IntoView {
    view! {
        <button type="submit" class="primary" data-testid=testid aria-live="polite" aria-disabled=move || task.pending.get().to_string()>
            {move || if task.pending.get() { "Please wait…" } else { label }}
        </button>
    }
}

/// An error as the customer reads it: what went wrong, in their words, and what to do next,
/// about the field to fix (`param`, the name of the field in the form). The API's message is
/// written for developers and never shown.
pub fn explain(mut e: ClientError) -> ClientError {
    let field = e
        .param
        .as_deref()
        .map(|p| p.strip_prefix("address.").unwrap_or(p).to_owned());
    let code = e.code.clone();
    let (message, param) = match (code.as_str(), field.as_deref()) {
        // The flow's own checks are already written for the customer.
        ("invalid_input", p) => return ClientError { param: p.map(str::to_owned), ..e },
        ("network_error", _) => (
            "We could not reach the server. Check your connection, then try again.",
            None,
        ),
        ("card_declined", _) => (
            match e.decline_code.as_deref() {
                Some("insufficient_funds") => {
                    "This card has insufficient funds. Try another card."
                }
                Some("expired_card") => "This card has expired. Try another card.",
                _ => "Your card was declined. Try another card, or call your bank.",
            },
            Some("number"),
        ),
        ("invalid_number", _) | (_, Some("number")) => (
            "Check the card number: it should be the 15 or 16 digits on the front of your card.",
            Some("number"),
        ),
        ("invalid_expiry_month" | "invalid_expiry_year", _)
        | (_, Some("exp_month" | "exp_year")) => (
            "Check the expiry date: enter the month and year printed on your card, as MM / YY.",
            Some("exp_month"),
        ),
        ("invalid_cvc", _) | (_, Some("cvc")) => (
            "Check the security code: the 3 digits on the back of your card (4 on the front for American Express).",
            Some("cvc"),
        ),
        ("terms_not_accepted", _) | (_, Some("terms_accepted")) => (
            "Tick the box to accept the plan's terms, then try again.",
            Some("terms_accepted"),
        ),
        ("consent_required", _) | (_, Some("consent")) => (
            "Tick the box to agree to the credit check, then try again.",
            Some("consent"),
        ),
        ("start_date_out_of_range", _) | (_, Some("service_start_date")) => (
            "Choose a start date between the dates shown under the field.",
            Some("service_start_date"),
        ),
        ("plan_expired", _) => (
            "The prices of this plan have changed since you opened it. See today's prices, then choose again.",
            None,
        ),
        ("esi_id_not_found" | "esi_id_invalid", _) | (_, Some("esi_id")) => (
            "We could not find a meter with this ESI ID. Check the number on your electricity bill, or search by address instead.",
            Some("esi_id"),
        ),
        ("not_in_retail_choice_area", _) => (
            "Homes in this area cannot choose their electricity provider, so we cannot serve this one. Your local utility supplies it.",
            None,
        ),
        (_, Some("phone")) => (
            "Enter a 10-digit US mobile number, like (512) 555-0123.",
            Some("phone"),
        ),
        (_, Some("date_of_birth")) => (
            "Check your date of birth: you must be 18 or older to sign up for electricity.",
            Some("date_of_birth"),
        ),
        (_, Some("ssn")) => (
            "Check your Social Security number: it has 9 digits, like 123-45-6789.",
            Some("ssn"),
        ),
        (_, Some("address_1")) => ("Enter the street address.", Some("address_1")),
        (_, Some("city")) => ("Enter the city.", Some("city")),
        (_, Some("state")) => ("Enter the state as two letters, like TX.", Some("state")),
        (_, Some("postal_code")) => ("Enter a 5-digit ZIP code.", Some("postal_code")),
        ("enrollment_incomplete", _) => (
            "A step is not finished yet. Complete it, then confirm again.",
            None,
        ),
        ("already_finalized" | "plan_already_accepted", _) => (
            "This was already done. Close this window and open it again from your app to see where you stand.",
            None,
        ),
        ("rate_limited", _) => ("Too many tries at once. Wait a moment, then try again.", None),
        (code, _) if code.starts_with("token_") => (
            "This session has ended. Close this window and start again from your app.",
            None,
        ),
        _ => (
            "Something went wrong on our side. Try again in a moment, or close this window and start again from your app.",
            None,
        ),
    };
    e.message = message.to_owned();
    e.param = param.map(str::to_owned);
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

    fn about(code: &str, param: &str, message: &str) -> ClientError {
        ClientError {
            param: Some(param.to_owned()),
            ..ClientError::new(code, message)
        }
    }

    #[test]
    fn declines_say_what_to_do() {
        let e = explain(declined("insufficient_funds"));
        assert_eq!(
            e.message,
            "This card has insufficient funds. Try another card."
        );
        assert_eq!(e.param.as_deref(), Some("number"));
        assert!(explain(declined("generic_decline"))
            .message
            .starts_with("Your card was declined"));
    }

    #[test]
    fn api_words_never_reach_the_customer() {
        let cases = [
            about(
                "parameter_invalid",
                "date_of_birth",
                "the customer must be at least 18 years old",
            ),
            about(
                "parameter_missing",
                "address.address_1",
                "address.address_1 is required",
            ),
            ClientError::new(
                "esi_id_not_found",
                "No meter with this ESI ID is in the directory",
            ),
            ClientError::network("TypeError: Failed to fetch"),
            ClientError::new("internal_error", "internal error"),
            ClientError::new("token_expired", "the token has expired"),
        ];
        for e in cases {
            let api = e.message.clone();
            let shown = explain(e);
            assert!(!shown.message.contains(&api), "{api} reached the customer");
            assert!(!shown.message.contains('_'), "{}", shown.message);
        }
    }

    #[test]
    fn errors_about_a_field_name_the_field_the_form_has() {
        let e = explain(about("parameter_missing", "address.address_1", "required"));
        assert_eq!(e.param.as_deref(), Some("address_1"));
        assert_eq!(e.message, "Enter the street address.");
        let age = explain(about("parameter_invalid", "date_of_birth", "too young"));
        assert!(age.message.contains("18 or older"));
        assert_eq!(age.param.as_deref(), Some("date_of_birth"));
        let esi = explain(ClientError::new("esi_id_not_found", "none"));
        assert_eq!(esi.param.as_deref(), Some("esi_id"));
        assert!(esi.message.contains("search by address instead"));
        let offline = explain(ClientError::network("TypeError: Failed to fetch"));
        assert!(offline.is_network());
        assert!(offline.message.contains("try again"));
        let own = explain(about(
            "invalid_input",
            "ssn",
            "A Social Security number has 9 digits.",
        ));
        assert_eq!(own.message, "A Social Security number has 9 digits.");
    }
}
