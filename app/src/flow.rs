//! The embedded flows (`/flow/<scope>`). A flow link (`/flow/login?token=...`) lands here with
//! the flow session's token in the URL fragment: the page takes it, removes it from the address
//! bar, keeps it in its window's name (so that a reload of the frame resumes), and calls the v1
//! API with it. Server-rendered with the partner's brand, then
//! hydrated. When the user leaves, the page tells its host (`service-flow-close`).
//!
//! Each scope's flow is its own island, compiled into its own WASM bundle: a browser build
//! enables one flow's feature (`enrollment`, `update-payment-method`, `billing`, `documents`,
//! `renewal`) and so holds that island's code only; the server renders them all. A page loads
//! the bundle its frame names (`data-bundle`), so a consumer who pays a bill never downloads
//! the enrollment flow. What every flow shares (the frame: brand, session, close) is one
//! component that each island renders.

// A browser build holds one flow: what only the others use is unused there.
#![cfg_attr(not(feature = "ssr"), allow(dead_code, unused_imports))]

use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::client::{ApiClient, ClientError};

#[cfg(any(feature = "ssr", feature = "enrollment"))]
mod address;
#[cfg(any(feature = "ssr", feature = "billing"))]
mod billing;
#[cfg(any(
    feature = "ssr",
    feature = "enrollment",
    feature = "update-payment-method"
))]
mod card;
#[cfg(any(feature = "ssr", feature = "billing"))]
mod chart;
#[cfg(any(feature = "ssr", feature = "documents"))]
mod documents;
#[cfg(any(feature = "ssr", feature = "enrollment"))]
mod enrollment;
mod events;
#[cfg(any(feature = "ssr", feature = "enrollment"))]
mod forms;
#[cfg(any(
    feature = "ssr",
    feature = "enrollment",
    feature = "update-payment-method"
))]
mod input;
#[cfg(any(feature = "ssr", feature = "update-payment-method"))]
mod payment;
#[cfg(any(feature = "ssr", feature = "enrollment", feature = "renewal"))]
mod plans;
#[cfg(any(
    feature = "ssr",
    feature = "enrollment",
    feature = "renewal",
    feature = "documents"
))]
mod reader;
#[cfg(any(feature = "ssr", feature = "renewal"))]
mod renewal;
mod session;
mod steps;

use session::{Flow, Task};

/// What a flow page shows of the partner app it runs for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowBranding {
    pub display_name: String,
    /// A checked `#rgb`/`#rrggbb` colour, and the text colour that reads on it.
    pub primary_color: Option<(String, String)>,
    pub logo_url: Option<String>,
    /// Where `service-flow-close` messages go (the partner's registered origins, or `*` for a
    /// sandbox app with none); empty when no host may be told.
    pub post_message_origins: Vec<String>,
    /// The licensed provider's name (`provider.name`), which the credit consent names.
    pub provider: String,
    /// How the app's card steps take a card.
    pub card: CardEntry,
}

/// How a flow's card step takes a card, told by the server with the page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CardEntry {
    /// Sandbox apps: this service's own form, posting to the built-in test-mode processor.
    BuiltIn,
    /// Live apps: the card processor's own component, from its browser script (loaded from
    /// the processor's origin) with the app's publishable key; the card number stays between
    /// the component and the processor.
    Processor {
        script_url: String,
        publishable_key: String,
    },
    /// A live app on a deployment without a card processor: no card can be added here.
    #[default]
    Unavailable,
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

/// The message a flow sends its host at each event (`events::track`).
pub const EVENT_MESSAGE_TYPE: &str = "service-flow-event";

/// Defines `window.switchboardNative(json)`, which hands a flow's message, as JSON text, to
/// each native webview bridge present: React Native's `window.ReactNativeWebView`, an iOS
/// `WKScriptMessageHandler` the app registers as `switchboard`
/// (`window.webkit.messageHandlers.switchboard`) and an Android JavaScript interface it adds as
/// `SwitchboardAndroid`. Page script rather than bundle code: every flow page and the expired
/// link's page define it, and no bundle pays for it. A bridge that throws stops none of the
/// others.
pub const NATIVE_BRIDGES_SCRIPT: &str = "window.switchboardNative=s=>{const w=window,k=w.webkit&&w.webkit.messageHandlers;for(const b of[w.ReactNativeWebView,k&&k.switchboard,w.SwitchboardAndroid])try{b&&b.postMessage(s)}catch(e){}};";

#[cfg(feature = "hydrate")]
mod browser {
    use wasm_bindgen::{JsCast, JsValue};

    /// The name of the frame's window (or the tab's) keeps the flow session while the flow is
    /// open: a reload of the frame keeps it, only this origin's pages can read it, and unlike
    /// session storage a browser that blocks third-party storage does not refuse it to a frame.
    fn kept(scope: &str) -> String {
        format!("switchboard-flow:{scope}:")
    }

    /// Takes the flow session token out of the URL fragment (and out of the history), and
    /// keeps it in the window's name so that a reload of the frame resumes the flow; without a
    /// fragment, the token kept there for this scope.
    pub fn take_session(scope: &str) -> Option<String> {
        let window = web_sys::window()?;
        let location = window.location();
        let hash = location.hash().ok()?;
        let Some(token) = hash.strip_prefix("#session=") else {
            let name = window.name().ok()?;
            return name.strip_prefix(&kept(scope)).map(str::to_owned);
        };
        let url = format!("{}{}", location.pathname().ok()?, location.search().ok()?);
        if let Ok(history) = window.history() {
            let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
        }
        let _ = window.set_name(&format!("{}{token}", kept(scope)));
        Some(token.to_owned())
    }

    /// Forgets the kept session: the flow closed, or its session ended.
    pub fn forget_session() {
        if let Some(window) = web_sys::window() {
            let _ = window.set_name("");
        }
    }

    /// Posts `{type: "service-flow-close", reason, scope}` (and `next`, the flow to open
    /// instead, when there is one) to the parent window and to a React Native webview bridge
    /// when there is one. The message goes to each registered origin in turn: the browser
    /// delivers it only where the parent's origin matches.
    pub fn post_close(reason: &str, scope: &str, next: Option<&str>, origins: &[String]) {
        forget_session();
        let message = js_sys::Object::new();
        for (key, value) in [
            ("type", super::CLOSE_MESSAGE_TYPE),
            ("reason", reason),
            ("scope", scope),
        ] {
            let _ = js_sys::Reflect::set(&message, &key.into(), &value.into());
        }
        if let Some(next) = next {
            let _ = js_sys::Reflect::set(&message, &"next".into(), &next.into());
        }
        post(&message, origins);
    }

    /// Posts `message` to the parent window at each of `origins` (the browser delivers it only
    /// where the parent's origin matches), and to the native webview bridges.
    pub fn post(message: &js_sys::Object, origins: &[String]) {
        let Some(window) = web_sys::window() else {
            return;
        };
        if let Ok(Some(parent)) = window.parent() {
            if !js_sys::Object::is(&parent, &window) {
                for origin in origins {
                    let _ = parent.post_message(message, origin);
                }
            }
        }
        // The page's `NATIVE_BRIDGES_SCRIPT` reaches the webview bridges.
        let native = js_sys::Reflect::get(&window, &"switchboardNative".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        if let (Some(native), Ok(json)) = (native, js_sys::JSON::stringify(message)) {
            let _ = native.call1(&window, &json);
        }
    }
}

/// Where the page stands before a step can show.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    /// Server rendering, and the moment before the page has read its session.
    Starting,
    /// Opened without a session (not through a flow link).
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    NoSession,
    /// The first read of the account failed.
    Failed(ClientError),
    Ready,
}

/// What the server hands a flow island: the partner's brand and where the close message goes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chrome {
    name: String,
    logo: Option<String>,
    /// Where `service-flow-close` goes (see `FlowBranding::post_message_origins`).
    origins: Vec<String>,
    style: Option<String>,
    provider: String,
    card: CardEntry,
}

/// As the server writes it into the page (serde's shape: a variant without data by its name,
/// one with data as `{"Processor": {...}}`).
impl crate::json::Read for Chrome {
    fn read(v: &crate::json::Value) -> Option<Self> {
        let card = match v.get("card") {
            Some(card) if card.as_str().as_deref() == Some("BuiltIn") => CardEntry::BuiltIn,
            Some(card) => match card.get("Processor") {
                Some(p) => CardEntry::Processor {
                    script_url: p.str("script_url")?,
                    publishable_key: p.str("publishable_key")?,
                },
                None => CardEntry::Unavailable,
            },
            None => return None,
        };
        Some(Chrome {
            name: v.str("name")?,
            logo: v.str("logo"),
            origins: v.list("origins")?,
            style: v.str("style"),
            provider: v.str("provider")?,
            card,
        })
    }
}

/// Where a flow opened full-page returns: the portal, or the "done" page of its app.
fn hosted_return(mode: Option<&str>, app: Option<Uuid>) -> Option<String> {
    match mode? {
        "portal" => Some("/portal".to_owned()),
        "done" => Some(match app {
            Some(app) => format!("/hosted/done?app={app}"),
            None => "/hosted/done".to_owned(),
        }),
        _ => None,
    }
}

/// The server side of a flow page: the partner's brand, then the scope's flow as an island
/// (only islands ship to the browser and hydrate).
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
    let back = move || hosted_return(query.read().get("hosted").as_deref(), app_uuid());
    let branding = Resource::new(app_uuid, |id| async move {
        match id {
            Some(id) => load_flow_branding(id).await.ok().flatten(),
            None => None,
        }
    });
    view! {
        <Suspense fallback=|| view! { <main class="flow"><p class="muted">"Loading…"</p></main> }>
            {move || {
                branding
                    .get()
                    .map(|b| {
                        let name = b
                            .as_ref()
                            .map(|b| b.display_name.clone())
                            .unwrap_or_else(|| "Switchboard".to_owned());
                        let page_head = head(&name, b.as_ref(), back());
                        let chrome = Chrome {
                            name,
                            provider: b.as_ref().map(|b| b.provider.clone()).unwrap_or_default(),
                            card: b.as_ref().map(|b| b.card.clone()).unwrap_or(CardEntry::Unavailable),
                            logo: b.as_ref().and_then(|b| b.logo_url.clone()),
                            origins: b
                                .as_ref()
                                .map(|b| b.post_message_origins.clone())
                                .unwrap_or_default(),
                            style: b.and_then(|b| b.primary_color).map(|(c, text)| {
                                format!(
                                    "--brand:{c};--brand-contrast:{text};--brand-text:{}",
                                    crate::format::readable_on_white(&c)
                                )
                            }),
                        };
                        // The islands read it from the page (`page_chrome`), not from props:
                        // an island's props are serialized again in the browser, which would
                        // ship a serializer and its error messages in every bundle.
                        let chrome_json = serde_json::to_string(&chrome)
                            .unwrap_or_default()
                            .replace('<', "\\u003c");
                        // The card processor's script, from its own origin, for the flows with
                        // a card step of a live app: loaded with the page rather than by the
                        // bundle, which only waits for it (`card::processor`).
                        let processor_script = match (&chrome.card, scope().as_str()) {
                            (
                                CardEntry::Processor { script_url, .. },
                                "enrollment" | "update-payment-method",
                            ) => Some(view! {
                                <script src=script_url.clone() async="" data-card-processor=""></script>
                            }),
                            _ => None,
                        };
                        provide_context(chrome);
                        let flow = match scope().as_str() {
                            #[cfg(any(feature = "ssr", feature = "enrollment"))]
                            "enrollment" => view! { <Preload bundle="switchboard"/> <EnrollmentApp/> }.into_any(),
                            #[cfg(any(feature = "ssr", feature = "update-payment-method"))]
                            "update-payment-method" => view! { <Preload bundle="flow-update-payment-method" styles=true/> <PaymentMethodApp/> }.into_any(),
                            #[cfg(any(feature = "ssr", feature = "billing"))]
                            "billing" => view! { <Preload bundle="flow-billing" styles=true/> <BillingApp/> }.into_any(),
                            #[cfg(any(feature = "ssr", feature = "documents"))]
                            "documents" => view! { <Preload bundle="flow-documents" styles=true/> <DocumentsApp/> }.into_any(),
                            #[cfg(any(feature = "ssr", feature = "renewal"))]
                            "renewal" => view! { <Preload bundle="flow-renewal" styles=true/> <RenewalApp/> }.into_any(),
                            _ => {
                                view! {
                                    <main class="page">
                                        <h1>"Page not found"</h1>
                                        <p>"This link is not valid. Close this window and start again from the app."</p>
                                    </main>
                                }
                                    .into_any()
                            }
                        };
                        view! {
                            {page_head}
                            <script type="application/json" id=CHROME_ID inner_html=chrome_json></script>
                            {processor_script}
                            {flow}
                        }
                        .into_any()
                    })
            }}
        </Suspense>
    }
}

/// The page's title and icon in the partner's brand, and the script that tells the host how
/// tall the page is (`service-flow-resize`, with `height` in CSS pixels, each time it changes),
/// so that the host sizes its frame to the flow: one scroll on a phone, not two. The script is
/// part of the page rather than of a flow's bundle: it reports the loading state's height too,
/// and costs the bundle nothing.
///
/// `back`: the flow was opened full-page from a hosted page, which has no host to tell. The
/// flow tells a webview bridge when there is one, so the page provides that bridge itself: on
/// the close message it goes back to `back`. This keeps the hosted mode out of the bundles.
fn head(name: &str, branding: Option<&FlowBranding>, back: Option<String>) -> impl IntoView {
    use leptos_meta::{Link, Title};
    let origins = branding
        .map(|b| b.post_message_origins.clone())
        .unwrap_or_default();
    let script = format!(
        "{NATIVE_BRIDGES_SCRIPT}(()=>{{const o={};let h=0;new ResizeObserver(()=>{{const n=Math.ceil(document.body.getBoundingClientRect().height);if(n===h)return;h=n;const m={{type:\"{RESIZE_MESSAGE_TYPE}\",height:n}};if(parent!==window)for(const x of o)parent.postMessage(m,x);switchboardNative(JSON.stringify(m))}}).observe(document.body)}})()",
        serde_json::to_string(&origins).unwrap_or_else(|_| "[]".to_owned())
    );
    let hosted = back.map(|url| {
        format!(
            "window.ReactNativeWebView||(window.ReactNativeWebView={{postMessage(s){{try{{if(JSON.parse(s).type===\"{CLOSE_MESSAGE_TYPE}\")location.href={}}}catch(e){{}}}}}})",
            serde_json::to_string(&url).unwrap_or_else(|_| "\"/\"".to_owned())
        )
    });
    let icon = branding
        .and_then(|b| b.logo_url.clone())
        .unwrap_or_else(|| "/favicon.svg".to_owned());
    view! {
        <Title text=name.to_owned()/>
        <Link rel="icon" href=icon/>
        <script inner_html=script></script>
        {hosted.map(|code| view! { <script inner_html=code></script> })}
    }
}

/// The message a flow sends its host each time its height changes.
pub const RESIZE_MESSAGE_TYPE: &str = "service-flow-resize";

/// Starts fetching a flow's bundle while the page is read (`shell`'s loader then finds it in
/// the cache); `styles`: the account flows' own stylesheet too.
#[component]
fn Preload(bundle: &'static str, #[prop(optional)] styles: bool) -> impl IntoView {
    view! {
        {styles.then(|| view! { <link rel="stylesheet" href="/flows.css"/> })}
        <link rel="modulepreload" href=format!("/pkg/{bundle}.js")/>
        <link rel="preload" href=format!("/pkg/{bundle}.wasm") r#as="fetch" r#type="application/wasm" crossorigin=""/>
    }
}

/// The element of a flow page that holds its `Chrome` as JSON.
const CHROME_ID: &str = "flow-chrome";

/// The chrome the flow page was rendered with: the server's context while it renders, the
/// page's JSON (`CHROME_ID`) in the browser.
fn page_chrome() -> Chrome {
    #[cfg(feature = "hydrate")]
    {
        web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(CHROME_ID))
            .and_then(|e| e.text_content())
            .and_then(|json| crate::json::from_str(&json).ok())
            .unwrap_or_default()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        use_context::<Chrome>().unwrap_or_default()
    }
}

// One island per scope, each in the browser build of its own flow only. `bundle`: the files
// (`/pkg/<bundle>.js` and `.wasm`) that build ships as; enrollment's is cargo-leptos's own.

#[cfg(any(feature = "ssr", feature = "enrollment"))]
#[island]
fn EnrollmentApp() -> impl IntoView {
    let chrome = page_chrome();
    view! { <Frame scope="enrollment" bundle="switchboard" chrome content=|flow| view! { <enrollment::EnrollmentFlow flow/> }.into_any()/> }
}

#[cfg(any(feature = "ssr", feature = "update-payment-method"))]
#[island]
fn PaymentMethodApp() -> impl IntoView {
    let chrome = page_chrome();
    view! { <Frame scope="update-payment-method" bundle="flow-update-payment-method" chrome content=|flow| view! { <payment::PaymentMethodFlow flow/> }.into_any()/> }
}

#[cfg(any(feature = "ssr", feature = "billing"))]
#[island]
fn BillingApp() -> impl IntoView {
    let chrome = page_chrome();
    view! { <Frame scope="billing" bundle="flow-billing" chrome content=|flow| view! { <billing::BillingFlow flow/> }.into_any()/> }
}

#[cfg(any(feature = "ssr", feature = "documents"))]
#[island]
fn DocumentsApp() -> impl IntoView {
    let chrome = page_chrome();
    view! { <Frame scope="documents" bundle="flow-documents" chrome content=|flow| view! { <documents::DocumentsFlow flow/> }.into_any()/> }
}

#[cfg(any(feature = "ssr", feature = "renewal"))]
#[island]
fn RenewalApp() -> impl IntoView {
    let chrome = page_chrome();
    view! { <Frame scope="renewal" bundle="flow-renewal" chrome content=|flow| view! { <renewal::RenewalFlow flow/> }.into_any()/> }
}

/// What every flow page shows around its flow: the brand, Close, the session taken from the
/// address, the first read of the account (with its loading and failure states), then the
/// flow itself (`content`).
#[component]
fn Frame(
    scope: &'static str,
    bundle: &'static str,
    chrome: Chrome,
    content: fn(Flow) -> AnyView,
) -> impl IntoView {
    let Chrome {
        name,
        logo,
        origins,
        style,
        provider,
        card,
    } = chrome;
    let phase = RwSignal::new(Phase::Starting);
    let closed = RwSignal::new(false);
    let next = StoredValue::new(None::<&'static str>);
    let origins = StoredValue::new(origins);
    let tell_host = move |reason: &'static str| {
        // Leaving is an event first: it reaches the host before the close message.
        if reason == "exited" {
            events::track(
                if next.get_value().is_some() {
                    "handed_off"
                } else {
                    "exited"
                },
                None,
                None,
            );
        }
        #[cfg(feature = "hydrate")]
        origins.with_value(|o| browser::post_close(reason, scope, next.get_value(), o));
        #[cfg(not(feature = "hydrate"))]
        let _ = (reason, origins, next);
    };
    let close = Callback::new(move |reason: &'static str| {
        closed.set(true);
        tell_host(reason);
    });
    let flow = Flow::new(close, next, (name.clone(), provider), card);
    let first = Task::new();
    let load = move || {
        phase.set(Phase::Starting);
        flow.call(
            first,
            async |c| c.account().await,
            move |a| {
                flow.advance(a);
                phase.set(Phase::Ready);
            },
        );
    };
    // Effects run only in the browser: take the session from the address, read the account.
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| {
        hydrated.set(true);
        #[cfg(feature = "hydrate")]
        match browser::take_session(scope) {
            Some(token) => {
                events::start(ApiClient::new(token.clone()), scope, origins.get_value());
                events::track("opened", None, None);
                flow.start(ApiClient::new(token));
                load();
            }
            None => phase.set(Phase::NoSession),
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (ApiClient::new, load);
    });
    // The enrollment's step shown (the other flows tell their own views, `events::views`),
    // and the flow done.
    Effect::new(move |_| {
        if phase.get() == Phase::Ready && scope == "enrollment" {
            events::track("step_viewed", Some(flow.step.get().slug()), None);
        }
    });
    Effect::new(move |_| {
        if flow.done.get() {
            events::track("completed", None, None);
        }
    });
    Effect::new(move |_| {
        if let Some(e) = first.error.get() {
            // A session that has ended cannot come back: the host hears it and may open a new
            // flow link.
            if e.code.starts_with("token_") {
                tell_host("expired");
            } else {
                events::track("error_shown", None, Some(&e.code));
            }
            phase.set(Phase::Failed(e));
        }
    });
    let has_logo = logo.is_some();
    let header_name = name.clone();

    view! {
        <main
            class="flow"
            style=style
            data-scope=scope
            data-bundle=bundle
            data-hydrated=move || hydrated.get().to_string()
        >
            <header class="flow-header">
                {logo.map(|src| view! { <img class="logo" src=src alt=""/> })}
                // With a logo, the name is for screen readers only: one line at 360 px.
                <span class=if has_logo { "brand visually-hidden" } else { "brand" } data-testid="app-name">{header_name}</span>
                <button
                    type="button"
                    class="link close"
                    data-testid="close"
                    on:click=move |_| close.run(if flow.done.get_untracked() { "completed" } else { "exited" })
                >
                    "Close"
                </button>
            </header>
            {move || {
                if closed.get() {
                    return view! {
                        <p role="status" data-testid="closed">"You can close this window."</p>
                    }
                        .into_any();
                }
                match phase.get() {
                    Phase::Starting => {
                        view! { <p class="muted" role="status">"Loading your details…"</p> }.into_any()
                    }
                    Phase::NoSession => {
                        view! {
                            <div class="notice" data-testid="no-session">
                                <p>"This page opens from your app. Close it and start again from there."</p>
                            </div>
                        }
                            .into_any()
                    }
                    Phase::Failed(e) if e.code.starts_with("token_") => {
                        view! {
                            <div data-testid="expired">
                                <h2>"This page has expired"</h2>
                                <p>
                                    "For your security, this page works for a limited time. Nothing you finished is lost: close it and open it again from "
                                    {name.clone()}
                                    " to carry on where you left off."
                                </p>
                            </div>
                        }
                            .into_any()
                    }
                    Phase::Failed(e) => {
                        view! {
                            <div class="notice error" role="alert" data-testid="flow-error">
                                <p>{e.message}</p>
                                <button type="button" class="secondary" on:click=move |_| load()>
                                    "Try again"
                                </button>
                            </div>
                        }
                            .into_any()
                    }
                    Phase::Ready => content(flow),
                }
            }}
        </main>
    }
}

#[cfg(test)]
mod chrome_tests {
    use super::*;

    /// The chrome the server writes into the page reads back the same in the browser.
    #[test]
    fn chrome_reads_back() {
        for card in [
            CardEntry::BuiltIn,
            CardEntry::Unavailable,
            CardEntry::Processor {
                script_url: "https://js.example/v3/".to_owned(),
                publishable_key: "pk_live_x".to_owned(),
            },
        ] {
            let chrome = Chrome {
                name: "Acme <Energy>".to_owned(),
                logo: None,
                origins: vec!["https://app.example".to_owned()],
                style: Some("--brand:#123".to_owned()),
                provider: "Provider".to_owned(),
                card,
            };
            let json = serde_json::to_string(&chrome).expect("json");
            let read: Chrome = crate::json::from_str(&json).expect("read");
            assert_eq!(read, chrome);
        }
    }
}
