//! The Leptos pages (`/flow/...`): server-rendered with the app's data, then hydrated by the
//! WASM bundle. The pages reach storage only through `FlowBackend`, provided here as context.

use std::{future::Future, pin::Pin, sync::Arc};

use app::flow::{FlowBackend, FlowBranding};
use axum::Router;
use leptos::prelude::provide_context;
use leptos_axum::{generate_route_list, LeptosRoutes};
use uuid::Uuid;

use super::AppState;
use crate::store::{self, Db};

struct StoreFlowBackend {
    db: Db,
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
            Ok(app.map(|a| FlowBranding {
                display_name: a.display_name,
                primary_color: a.primary_color,
                logo_url: a.logo_url,
            }))
        })
    }
}

pub fn router(state: &AppState) -> Router<AppState> {
    let backend: Arc<dyn FlowBackend> = Arc::new(StoreFlowBackend {
        db: state.db.clone(),
    });
    let routes = generate_route_list(app::App);
    let options = state.leptos.clone();
    Router::new().leptos_routes_with_context(
        state,
        routes,
        move || provide_context(backend.clone()),
        move || app::shell(options.clone()),
    )
}
