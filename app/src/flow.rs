//! The embedded flows (`/flow/<scope>`). A flow link (`/flow/login?token=...`) lands here with
//! the flow session's token in the URL fragment: the page takes it into memory, removes it from
//! the address bar, and calls the v1 API with it. Server-rendered with the partner's brand, then
//! hydrated. When the user leaves, the page tells its host (`service-flow-close`).

use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    api::Account,
    client::{ApiClient, ClientError},
};

/// What a flow page shows of the partner app it runs for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowBranding {
    pub display_name: String,
    pub primary_color: Option<String>,
    pub logo_url: Option<String>,
    /// Where `service-flow-close` messages go (the partner's registered origin, or `*` for a
    /// sandbox app with none); `None` when no host may be told.
    pub post_message_origin: Option<String>,
}

/// The server side of the flow pages, provided as Leptos context by the server crate so that
/// this crate never touches storage.
#[cfg(feature = "ssr")]
pub trait FlowBackend: Send + Sync {
    fn branding(
        &self,
        app_uuid: Uuid,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Option<FlowBranding>, String>> + Send + '_>,
    >;
}

#[server]
pub async fn load_flow_branding(app_uuid: Uuid) -> Result<Option<FlowBranding>, ServerFnError> {
    let backend = expect_context::<std::sync::Arc<dyn FlowBackend>>();
    backend.branding(app_uuid).await.map_err(ServerFnError::new)
}

/// The message a flow sends its host when it closes.
pub const CLOSE_MESSAGE_TYPE: &str = "service-flow-close";

#[cfg(feature = "hydrate")]
mod browser {
    use wasm_bindgen::{JsCast, JsValue};

    /// Takes the flow session token out of the URL fragment (and out of the history).
    pub fn take_session_from_fragment() -> Option<String> {
        let window = web_sys::window()?;
        let location = window.location();
        let hash = location.hash().ok()?;
        let token = hash.strip_prefix("#session=")?.to_owned();
        let url = format!("{}{}", location.pathname().ok()?, location.search().ok()?);
        if let Ok(history) = window.history() {
            let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
        }
        Some(token)
    }

    /// Posts `{type: "service-flow-close", reason, scope}` to the parent window and to a
    /// React Native webview bridge when there is one.
    pub fn post_close(reason: &str, scope: &str, origin: Option<&str>) {
        let Some(window) = web_sys::window() else {
            return;
        };
        let message = js_sys::Object::new();
        for (key, value) in [
            ("type", super::CLOSE_MESSAGE_TYPE),
            ("reason", reason),
            ("scope", scope),
        ] {
            let _ = js_sys::Reflect::set(&message, &key.into(), &value.into());
        }
        if let (Ok(Some(parent)), Some(origin)) = (window.parent(), origin) {
            if !js_sys::Object::is(&parent, &window) {
                let _ = parent.post_message(&message, origin);
            }
        }
        let bridge = js_sys::Reflect::get(&window, &"ReactNativeWebView".into()).ok();
        if let Some(bridge) = bridge.filter(|b| !b.is_undefined() && !b.is_null()) {
            let post = js_sys::Reflect::get(&bridge, &"postMessage".into())
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
            if let (Some(post), Ok(json)) = (post, js_sys::JSON::stringify(&message)) {
                let _ = post.call1(&bridge, &json);
            }
        }
    }
}

#[component]
pub fn FlowShell() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let scope = move || params.read().get("scope").unwrap_or_default();
    let app_uuid = move || {
        query
            .read()
            .get("app")
            .and_then(|s| Uuid::parse_str(&s).ok())
    };
    let branding = Resource::new(app_uuid, |id| async move {
        match id {
            Some(id) => load_flow_branding(id).await.ok().flatten(),
            None => None,
        }
    });
    let (started, set_started) = signal(false);
    // Effects run only in the browser: this marks the page as hydrated (tests wait for it).
    let (hydrated, set_hydrated) = signal(false);
    let (account, set_account) = signal(None::<Result<Account, ClientError>>);
    let (closed, set_closed) = signal(false);
    Effect::new(move |_| {
        set_hydrated.set(true);
        #[cfg(feature = "hydrate")]
        if let Some(token) = browser::take_session_from_fragment() {
            leptos::task::spawn_local(async move {
                set_account.set(Some(ApiClient::new(token).account().await));
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (set_account, ApiClient::new);
    });
    let close = move |reason: &'static str| {
        set_closed.set(true);
        #[cfg(feature = "hydrate")]
        {
            let origin = branding
                .get_untracked()
                .flatten()
                .and_then(|b| b.post_message_origin);
            browser::post_close(reason, &scope(), origin.as_deref());
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = reason;
    };

    view! {
        <main class="flow" data-scope=scope data-hydrated=move || hydrated.get().to_string()>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || {
                    branding
                        .get()
                        .map(|b| {
                            let name = b
                                .map(|b| b.display_name)
                                .unwrap_or_else(|| "Switchboard".to_owned());
                            view! { <h1 data-testid="app-name">{name}</h1> }
                        })
                }}
            </Suspense>
            {move || match account.get() {
                Some(Ok(a)) => {
                    view! { <p data-testid="greeting">"Hi " {a.first_name} "."</p> }.into_any()
                }
                Some(Err(e)) => {
                    view! { <p role="alert" class="error" data-testid="flow-error">{e.message}</p> }
                        .into_any()
                }
                None => ().into_any(),
            }}
            <p>"Electricity for your home, in a few minutes."</p>
            <button type="button" class="primary" data-testid="start" on:click=move |_| set_started.set(true)>
                "Get started"
            </button>
            <Show when=move || started.get()>
                <p data-testid="started" role="status">"Let's find your home."</p>
            </Show>
            <button type="button" class="link" data-testid="close" on:click=move |_| close("exited")>
                "Close"
            </button>
            <Show when=move || closed.get()>
                <p role="status" data-testid="closed">"You can close this window."</p>
            </Show>
        </main>
    }
}
