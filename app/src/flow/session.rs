//! What every flow shares: the session (client, account, where the flow is, how it closes),
//! one call at a time per form (`Task`), and the pieces each form shows the same way (errors
//! in place with a retry, the submit button, focus moved to what just appeared).

use leptos::{html, prelude::*};

use crate::{
    client::{ApiClient, ClientError},
    views::{Account, PaymentMethod},
};

use super::steps::{next_step, Step};

/// What every screen of a flow shares: the client, the account as last read, where the
/// enrollment is, whether the flow did what it is for, and how it tells its host that it
/// closes. Copy, so that closures take it freely.
#[derive(Clone, Copy)]
pub struct Flow {
    client: StoredValue<Option<ApiClient>>,
    pub account: RwSignal<Option<Account>>,
    pub step: RwSignal<Step>,
    /// The card added in this session (the enrollment scope cannot read it back).
    pub card: RwSignal<Option<PaymentMethod>>,
    /// Whether the preliminary address was already looked up (only once per session).
    pub prefill_tried: RwSignal<bool>,
    /// The flow did what it is for: Close then says `completed` rather than `exited`.
    pub done: RwSignal<bool>,
    pub close: Callback<&'static str>,
    /// The flow the host should open next, sent with the close message (`next`).
    next: StoredValue<Option<&'static str>>,
}

impl Flow {
    pub fn new(close: Callback<&'static str>, next: StoredValue<Option<&'static str>>) -> Self {
        Flow {
            client: StoredValue::new(None),
            account: RwSignal::new(None),
            step: RwSignal::new(Step::Address),
            card: RwSignal::new(None),
            prefill_tried: RwSignal::new(false),
            done: RwSignal::new(false),
            close,
            next,
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
                Err(e) => self.error.set(Some(e)),
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

/// The error of a step, where the step is; network failures offer to try again.
#[component]
pub fn ErrorNotice(task: Task, #[prop(into)] retry: Callback<()>) -> impl IntoView {
    move || {
        task.error.get().map(|e| {
            let network = e.is_network();
            view! {
                <div class="notice error" role="alert" data-testid="step-error" data-code=e.code.clone()>
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

/// The submit button of a step: says what it does, and that it is working.
#[component]
pub fn Submit(
    task: Task,
    label: &'static str,
    #[prop(optional)] testid: &'static str,
) -> impl IntoView {
    view! {
        <button type="submit" class="primary" data-testid=testid aria-busy=move || task.pending.get().to_string()>
            {move || if task.pending.get() { "Please wait…" } else { label }}
        </button>
    }
}

/// A declined card, said the way the customer can act on it.
pub fn explain_decline(mut e: ClientError) -> ClientError {
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
