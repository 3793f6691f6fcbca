//! The embedded flows (`/flow/<scope>`). For now the shell: the partner's brand and the first
//! step's call to action, rendered on the server and hydrated in the browser.

use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What a flow page shows of the partner app it runs for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowBranding {
    pub display_name: String,
    pub primary_color: Option<String>,
    pub logo_url: Option<String>,
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
    Effect::new(move |_| set_hydrated.set(true));

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
            <p>"Electricity for your home, in a few minutes."</p>
            <button type="button" class="primary" data-testid="start" on:click=move |_| set_started.set(true)>
                "Get started"
            </button>
            <Show when=move || started.get()>
                <p data-testid="started" role="status">"Let's find your home."</p>
            </Show>
        </main>
    }
}
