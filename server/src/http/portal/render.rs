//! How a hosted or portal page is answered: the branded shell (`http::branded`) with this
//! origin's strict Content-Security-Policy, and the small pieces every form of these pages
//! shares.

use axum::{
    http::{
        header::{self, HeaderValue},
        StatusCode,
    },
    response::{IntoResponse, Response},
};
use base64::{engine::general_purpose::STANDARD, Engine};
use leptos::prelude::*;
use sha2::{Digest, Sha256};

use crate::{
    config::CardProcessorOrigins,
    http::branded::{self, Brand, Shell},
};

/// A whole page: the brand's header, then `body`, then the app's support contacts. The brand's
/// colour is one inline `<style>`, allowed by its hash alone.
pub(super) fn page(
    status: StatusCode,
    brand: &Brand,
    title: &str,
    testid: &'static str,
    body: AnyView,
) -> Response {
    page_with(status, brand, title, testid, None, body)
}

/// A whole page with `above` (the portal's navigation) between the header and the title. A page
/// without it ends with the app's support contacts (the signed-in portal has its own support
/// page and card).
pub(super) fn page_with(
    status: StatusCode,
    brand: &Brand,
    title: &str,
    testid: &'static str,
    above: Option<AnyView>,
    body: AnyView,
) -> Response {
    page_with_scripts(status, brand, title, testid, above, body, None)
}

/// A page that runs scripts: the processor's (from its origin) and our own file beside the
/// page's stylesheet, never inline ones; it may call and frame the processor's origins only.
pub(super) struct Scripts<'a> {
    pub processor: &'a CardProcessorOrigins,
    pub own: &'static str,
}

pub(super) fn page_with_scripts(
    status: StatusCode,
    brand: &Brand,
    title: &str,
    testid: &'static str,
    above: Option<AnyView>,
    body: AnyView,
    scripts: Option<Scripts<'_>>,
) -> Response {
    let head = scripts.as_ref().map(|s| {
        let (processor, own) = (s.processor.script_url.clone(), s.own);
        view! {
            <script src=processor></script>
            <script src=own defer></script>
        }
        .into_any()
    });
    let contacts = above.is_none();
    let html = branded::page(
        brand,
        Shell {
            title: title.to_owned(),
            testid,
            hosted_styles: true,
            head,
            above,
            body,
            contacts,
            after: None,
        },
    );
    let digest = STANDARD.encode(Sha256::digest(brand.style().as_bytes()));
    let sources = scripts.as_ref().map_or_else(String::new, |s| {
        let p = s.processor;
        format!(
            "script-src 'self' {script}; frame-src {script}; connect-src {api} {script}; ",
            script = p.script_origin,
            api = p.api_origin
        )
    });
    let policy = format!(
        "default-src 'none'; {sources}style-src 'self' 'sha256-{digest}'; img-src 'self' https: data:; \
         form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    );
    let mut response = (status, axum::response::Html(html)).into_response();
    if let Ok(v) = HeaderValue::from_str(&policy) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, v);
    }
    response
}

/// The session's CSRF token, as the hidden field of a form.
pub(super) fn csrf_field(csrf: &str) -> impl IntoView {
    let csrf = csrf.to_owned();
    view! { <input type="hidden" name="csrf" value=csrf/> }
}

/// A form posting to `action` with the session's CSRF token, `fields`, and its button.
pub(super) fn form(
    action: impl Into<String>,
    csrf: &str,
    fields: impl IntoView + 'static,
    button: &'static str,
) -> AnyView {
    let action = action.into();
    view! {
        <form method="post" action=action class="stack">
            {csrf_field(csrf)}
            {fields}
            <button type="submit" class="primary">{button}</button>
        </form>
    }
    .into_any()
}

/// A hidden field of a form.
pub(super) fn hidden(name: &'static str, value: impl Into<String>) -> AnyView {
    let value = value.into();
    view! { <input type="hidden" name=name value=value/> }.into_any()
}

/// A labelled text input.
pub(super) fn input(
    name: &'static str,
    label: &'static str,
    kind: &'static str,
    autocomplete: &'static str,
    value: impl Into<String>,
) -> AnyView {
    let value = value.into();
    view! {
        <label for=name>{label}</label>
        <input id=name name=name type=kind autocomplete=autocomplete value=value required/>
    }
    .into_any()
}

/// A message shown above a form: what went wrong, read out when the page loads.
pub(super) fn alert(message: impl Into<String>) -> AnyView {
    let message = message.into();
    view! { <p class="error" role="alert" data-testid="form-error">{message}</p> }.into_any()
}

/// A paragraph of plain text.
pub(super) fn paragraph(text: impl Into<String>) -> AnyView {
    let text = text.into();
    view! { <p>{text}</p> }.into_any()
}
