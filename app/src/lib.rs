//! What the server and the browser share: the v1 wire types (`api`), the Leptos pages and
//! components (`flow`), and the HTML shell the server renders them into.

pub mod api;
pub mod client;
pub mod flow;
pub mod format;
pub mod json;
pub mod views;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, Link, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    path, SsrMode,
};

/// Hydrates the islands of a page: only the interactive parts of pages ship to the browser.
/// (Called from the WASM entry, which also links this crate's island exports into it.)
#[cfg(feature = "hydrate")]
pub fn hydrate_islands() {
    leptos::mount::hydrate_islands();
}

/// Hydrates a flow page with the bundle its frame names (`data-bundle`: each flow ships its own
/// WASM and JS, see `flow`): loads it, starts it, then hydrates each island of the page.
const FLOW_LOADER: &str = r#"const m=document.querySelector("main[data-bundle]");if(m){const b="/pkg/"+m.dataset.bundle;import(b+".js").then(async(f)=>{await f.default({module_or_path:b+".wasm"});f.hydrate();for(const el of document.querySelectorAll("leptos-island")){const h=f[el.dataset.component];if(h){await h(el)}else{console.warn("no code for the island "+el.dataset.component)}}})}"#;

/// The document every page is rendered into on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <AutoReload options/>
                // Runs once the page is parsed (a module), without waiting for the browser to
                // be idle: a busy host page or webview may never leave the flow idle.
                <script type="module" inner_html=FLOW_LOADER></script>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// Root component: the routes of every page the product serves.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Stylesheet id="leptos" href="/pkg/switchboard.css"/>
        <Link rel="icon" href="/favicon.svg"/>
        <Title text="Switchboard"/>
        <Router>
            <Routes fallback=|| view! { <NotFound/> }>
                <Route path=path!("/flow/:scope") view=flow::FlowShell ssr=SsrMode::Async/>
            </Routes>
        </Router>
    }
}

#[component]
fn NotFound() -> impl IntoView {
    view! {
        <main class="page">
            <h1>"Page not found"</h1>
            <p>"This link is not valid. Close this window and start again from the app."</p>
        </main>
    }
}
