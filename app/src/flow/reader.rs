//! Documents read inside the flow. A host may frame a flow in a sandboxed iframe, which blocks
//! new tabs, and a sandboxed frame does not render a PDF: a customer could then not read what
//! they are asked to accept. Each document link opens, over the flow, a dialog with the
//! document's HTML rendition (`?format=html` of the same signed link) and the PDF beside it.
//! Without script, or opened in a new tab on purpose, the link still opens the PDF.

use leptos::{ev, prelude::*};

/// The document a dialog shows: its name and its link.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Open {
    name: String,
    url: String,
}

/// What the dialog holds while it is open (the server renders it closed).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
enum Text {
    Loading,
    Ready(String),
    Failed,
}

/// One dialog for the links of a part of a page (a plan card, the terms' consent, a list of
/// documents): `link` makes the links, `dialog` the dialog they open. The dialog belongs
/// outside any `<label>`, whose clicks would otherwise reach its checkbox.
#[derive(Debug, Clone, Copy)]
pub struct Reader {
    open: RwSignal<Option<Open>>,
    text: RwSignal<Text>,
}

/// The HTML rendition of a signed document link.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn html_url(url: &str) -> String {
    let joint = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joint}format=html")
}

impl Reader {
    pub fn new() -> Reader {
        Reader {
            open: RwSignal::new(None),
            text: RwSignal::new(Text::Loading),
        }
    }

    /// A link to the document at `url`, opened in the dialog (a modified click still opens the
    /// PDF in a tab where the host allows it).
    pub fn link(self, name: impl Into<String>, url: String) -> impl IntoView {
        let name = name.into();
        let href = url.clone();
        let text = name.clone();
        view! {
            <a href=href target="_blank" rel="noopener" on:click=move |e: ev::MouseEvent| {
                if e.ctrl_key() || e.meta_key() || e.shift_key() || e.button() != 0 {
                    return;
                }
                e.prevent_default();
                self.show(name.clone(), url.clone());
            }>{text}</a>
        }
    }

    fn show(self, name: String, url: String) {
        self.text.set(Text::Loading);
        self.open.set(Some(Open {
            name,
            url: url.clone(),
        }));
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            let text = match gloo_net::http::Request::get(&html_url(&url)).send().await {
                Ok(r) if r.ok() => r.text().await.map_or(Text::Failed, Text::Ready),
                _ => Text::Failed,
            };
            // Only the document still open takes the answer.
            if self.open.get_untracked().is_some_and(|o| o.url == url) {
                self.text.set(text);
            }
        });
    }

    /// The dialog, shown modal while a document is open.
    pub fn dialog(self, id: String) -> impl IntoView {
        let node = NodeRef::<leptos::html::Dialog>::new();
        Effect::new(move |_| {
            let open = self.open.get().is_some();
            if let Some(d) = node.get() {
                if open && !d.open() {
                    let _ = d.show_modal();
                } else if !open && d.open() {
                    d.close();
                }
            }
        });
        let title = format!("{id}-title");
        let labelled = title.clone();
        let name = move || self.open.get().map(|o| o.name).unwrap_or_default();
        let pdf = move || self.open.get().map(|o| o.url).unwrap_or_default();
        view! {
            <dialog class="reader" node_ref=node aria-labelledby=labelled data-testid="reader"
                on:close=move |_| self.open.set(None)>
                <div class="reader-bar">
                    <h2 id=title>{name}</h2>
                    <button type="button" on:click=move |_| self.open.set(None)>"Close"</button>
                </div>
                {move || match self.text.get() {
                    Text::Loading => view! { <p class="hint" aria-live="polite">"Loading the document…"</p> }.into_any(),
                    Text::Ready(html) => view! { <div class="reader-text" data-testid="reader-text" inner_html=html></div> }.into_any(),
                    Text::Failed => view! { <p class="hint" role="alert">"This document could not be shown here. Open the PDF below."</p> }.into_any(),
                }}
                <p><a href=pdf target="_blank" rel="noopener">"Open the PDF"</a></p>
            </dialog>
        }
    }
}

#[cfg(test)]
mod tests {
    use super::html_url;

    #[test]
    fn the_html_rendition_keeps_the_links_signature() {
        assert_eq!(
            html_url("/documents/tos/2026.1?expires=1&signature=ab"),
            "/documents/tos/2026.1?expires=1&signature=ab&format=html"
        );
        assert_eq!(
            html_url("/documents/tos/2026.1"),
            "/documents/tos/2026.1?format=html"
        );
    }
}
