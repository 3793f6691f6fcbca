//! What happens in a flow, told to its host and recorded by the server alike: each event is
//! one `{type: "service-flow-event", flow_session_id, scope, name, step, error_code}` object,
//! posted where the close message goes (the same origins, the same native bridges) and sent as
//! is to `POST /v1/account/flow-events`, which answers the session's public id. Names:
//! `opened`, `step_viewed`, `error_shown`, `exited`, `completed`, `handed_off`; an error is
//! told by its code only, never by what the customer typed.
//!
//! The first event waits for the server's answer to learn the id; later ones go to the host at
//! once. Nothing here fails the flow: an event that cannot be recorded is dropped.

use leptos::prelude::{Effect, Get, Memo};

#[cfg(feature = "hydrate")]
use crate::client::ApiClient;

#[cfg(feature = "hydrate")]
struct Tracker {
    client: ApiClient,
    scope: &'static str,
    origins: Vec<String>,
    id: Option<String>,
    step: Option<&'static str>,
}

#[cfg(feature = "hydrate")]
thread_local! {
    static TRACKER: std::cell::RefCell<Option<Tracker>> = const { std::cell::RefCell::new(None) };
}

/// Starts telling the events of the flow session `client` holds.
#[cfg(feature = "hydrate")]
pub fn start(client: ApiClient, scope: &'static str, origins: Vec<String>) {
    TRACKER.with_borrow_mut(|t| {
        *t = Some(Tracker {
            client,
            scope,
            origins,
            id: None,
            step: None,
        })
    });
}

/// Tells the event `name` (at `step`, or the step last shown; with the error's code for
/// `error_shown`). A step shown again is not told twice in a row.
pub fn track(name: &'static str, step: Option<&'static str>, error_code: Option<&str>) {
    #[cfg(feature = "hydrate")]
    {
        use js_sys::{Object, Reflect, JSON};
        let Some((client, scope, origins, id, step)) = TRACKER.with_borrow_mut(|t| {
            let t = t.as_mut()?;
            if name == "step_viewed" && step == t.step {
                return None;
            }
            t.step = step.or(t.step);
            Some((
                t.client.clone(),
                t.scope,
                t.origins.clone(),
                t.id.clone(),
                t.step,
            ))
        }) else {
            return;
        };
        let message = Object::new();
        let set = |key: &str, value: &str| {
            let _ = Reflect::set(&message, &key.into(), &value.into());
        };
        set("type", super::EVENT_MESSAGE_TYPE);
        set("scope", scope);
        set("name", name);
        if let Some(step) = step {
            set("step", step);
        }
        if let Some(code) = error_code {
            set("error_code", code);
        }
        let Some(json) = JSON::stringify(&message).ok().and_then(|j| j.as_string()) else {
            return;
        };
        if let Some(id) = &id {
            set("flow_session_id", id);
            super::browser::post(&message, &origins);
        }
        leptos::task::spawn_local(async move {
            let answer = client.flow_event(json).await;
            if id.is_some() {
                return;
            }
            let Some(id) = answer.ok().and_then(|v| v.str("flow_session_id")) else {
                return;
            };
            TRACKER.with_borrow_mut(|t| {
                if let Some(t) = t.as_mut() {
                    t.id = Some(id.clone());
                }
            });
            let _ = Reflect::set(&message, &"flow_session_id".into(), &id.into());
            super::browser::post(&message, &origins);
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (name, step, error_code);
}

/// Tells each view of a flow as it is shown: `view` names the one showing now (a slug, such as
/// `summary` or `invoice`; `None` while what to show is not known yet), and each change of it
/// is a `step_viewed`. Answers the name for the page's `data-step`. (The enrollment's steps
/// are told by the frame, from its `Step`.)
pub fn views(
    view: impl Fn() -> Option<&'static str> + Send + Sync + 'static,
) -> impl Fn() -> Option<&'static str> + Copy {
    let shown = Memo::new(move |_| view());
    Effect::new(move |_| {
        if let Some(step) = shown.get() {
            track("step_viewed", Some(step), None);
        }
    });
    move || shown.get()
}
