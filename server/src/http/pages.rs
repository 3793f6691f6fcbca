//! The Leptos pages (`/flow/...`): server-rendered with the app's data, then hydrated by the
//! WASM bundle. The pages reach storage only through `FlowBackend`, provided here as context.

use std::{future::Future, pin::Pin, sync::Arc};

use app::{
    api::Environment,
    flow::{CardEntry, FlowBackend, FlowBranding},
};
use axum::{
    extract::{Request, State},
    http::{
        header::{CONTENT_SECURITY_POLICY, REFERRER_POLICY},
        HeaderValue,
    },
    middleware::{self, Next},
    response::Response,
    Router,
};
use leptos::prelude::provide_context;
use leptos_axum::{generate_route_list, LeptosRoutes};
use uuid::Uuid;

use super::AppState;
use crate::{
    config::CardProcessorOrigins,
    domain::{apps, flows},
    store::{self, Db},
};

struct StoreFlowBackend {
    db: Db,
    /// The licensed provider's name (`provider.name`), which the credit consent names.
    provider: String,
    /// The card processor live apps take cards through, when this deployment has one.
    processor: Option<CardProcessorOrigins>,
}

/// How the flows of an app with this environment and publishable key take a card.
fn card_entry(
    environment: Environment,
    publishable_key: &str,
    processor: Option<&CardProcessorOrigins>,
) -> CardEntry {
    match (environment, processor) {
        (Environment::Sandbox, _) => CardEntry::BuiltIn,
        (Environment::Live, Some(p)) => CardEntry::Processor {
            script_url: p.script_url.clone(),
            publishable_key: publishable_key.to_owned(),
        },
        (Environment::Live, None) => CardEntry::Unavailable,
    }
}

impl FlowBackend for StoreFlowBackend {
    fn branding(
        &self,
        app_uuid: Uuid,
    ) -> Pin<Box<dyn Future<Output = Result<Option<FlowBranding>, String>> + Send + '_>> {
        Box::pin(async move {
            let app = store::apps::app_by_uuid(&self.db, app_uuid)
                .await
                .map_err(|e| {
                    tracing::error!(error = %e, "flow branding");
                    "unavailable".to_owned()
                })?;
            Ok(app.map(|a| {
                let origins = a.origins();
                let card = card_entry(
                    a.environment_kind(),
                    &a.payment_publishable_key,
                    self.processor.as_ref(),
                );
                FlowBranding {
                    card,
                    post_message_origins: flows::post_message_origins(
                        a.environment_kind(),
                        &origins,
                    ),
                    display_name: a.display_name,
                    primary_color: a
                        .primary_color
                        .as_deref()
                        .and_then(apps::brand_color)
                        .map(|c| (c.to_owned(), apps::text_on(c).to_owned())),
                    logo_url: a.logo_url,
                    provider: self.provider.clone(),
                }
            }))
        })
    }
}

/// Only the app's registered origins may frame its flow pages; a flow opened full-page from a
/// hosted page (`hosted=...`) may not be framed at all. A live app's page may load scripts,
/// frames and calls from its own origin and the card processor's only.
async fn frame_ancestors(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let query = req.uri().query().unwrap_or_default().to_owned();
    let param = |name: &str| {
        form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    let hosted = param("hosted").is_some();
    let app_uuid = param("app").and_then(|v| Uuid::parse_str(&v).ok());
    let app = match app_uuid {
        Some(uuid) => store::apps::app_by_uuid(&state.db, uuid)
            .await
            .ok()
            .flatten(),
        None => None,
    };
    let mut policy = match &app {
        _ if hosted => "frame-ancestors 'none'".to_owned(),
        Some(a) => flows::frame_ancestors(a.environment_kind(), &a.origins()),
        None => "frame-ancestors 'self'".to_owned(),
    };
    if app
        .as_ref()
        .is_some_and(|a| a.environment_kind() == Environment::Live)
    {
        let processor = state.config.card_processor();
        let sources = flows::live_page_sources(
            processor
                .as_ref()
                .map(|p| (p.script_origin.as_str(), p.api_origin.as_str())),
        );
        policy = format!("{policy}; {sources}");
    }
    let mut response = next.run(req).await;
    if let Ok(v) = HeaderValue::from_str(&policy) {
        response.headers_mut().insert(CONTENT_SECURITY_POLICY, v);
    }
    response
        .headers_mut()
        .insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

pub fn router(state: &AppState) -> Router<AppState> {
    let backend: Arc<dyn FlowBackend> = Arc::new(StoreFlowBackend {
        db: state.db.clone(),
        provider: state.config.provider.name.clone(),
        processor: state.config.card_processor(),
    });
    let routes = generate_route_list(app::App);
    let options = state.http.leptos.clone();
    Router::new()
        .leptos_routes_with_context(
            state,
            routes,
            move || provide_context(backend.clone()),
            move || app::shell(options.clone()),
        )
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            frame_ancestors,
        ))
}
