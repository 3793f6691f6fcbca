//! The app of the AppToken (`GET /v1/app`), and the logos apps upload, served to anyone from
//! our own origin.

use app::api::{AppOut, Branding, ErrorEnvelope, SupportContacts, Timestamp};

use axum::{
    http::header,
    response::{IntoResponse, Response},
};
use uuid::Uuid;

use super::{
    auth::AppPrincipal,
    error::{ApiError, ApiResult},
    routes, ApiRouter, AppState,
};
use crate::{domain::collections::LateFeePercent, store::apps::AppRow};

pub fn router() -> ApiRouter {
    ApiRouter::new().routes(routes!(get_app))
}

/// `/apps/{app}/logo/{sha256}.png`: an uploaded logo, cacheable for good (its address changes
/// with its content).
pub fn logo_router() -> axum::Router<AppState> {
    axum::Router::new().route("/apps/{app}/logo/{file}", axum::routing::get(logo))
}

async fn logo(
    axum::extract::State(state): axum::extract::State<AppState>,
    axum::extract::Path((app, file)): axum::extract::Path<(String, String)>,
) -> ApiResult<Response> {
    let found = match (Uuid::parse_str(&app), file.strip_suffix(".png")) {
        (Ok(app), Some(sha256)) => {
            crate::services::apps::served_logo(&state.db, app, sha256).await?
        }
        _ => None,
    };
    let Some(logo) = found else {
        return Err(ApiError::not_found("logo"));
    };
    Ok((
        [
            (header::CONTENT_TYPE, logo.content_type),
            (
                header::CACHE_CONTROL,
                "public, max-age=31536000, immutable".to_owned(),
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; sandbox".to_owned(),
            ),
        ],
        logo.bytes,
    )
        .into_response())
}

pub fn render(app: &AppRow, late_fee: Option<LateFeePercent>) -> AppOut {
    AppOut {
        uuid: app.uuid,
        name: app.name.clone(),
        environment: app.environment_kind(),
        slug: app.slug.clone(),
        branding: Branding {
            display_name: app.display_name.clone(),
            logo_url: app.logo_url.clone(),
            primary_color: app.primary_color.clone(),
        },
        support: SupportContacts {
            name: app.support_name.clone(),
            phone: app.support_phone.clone(),
            email: app.support_email.clone(),
            hours: app.support_hours.clone(),
            url: app.support_url.clone(),
        },
        allowed_origins: app.origins(),
        late_fee_percent: late_fee.map(LateFeePercent::to_wire),
        created_at: Timestamp(app.created_at),
    }
}

/// The app this token belongs to.
#[utoipa::path(
    get, path = "/v1/app", tag = "app",
    responses(
        (status = 200, description = "The app", body = AppOut),
        (status = 401, description = "Missing or invalid token", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn get_app(
    axum::extract::State(state): axum::extract::State<AppState>,
    principal: AppPrincipal,
) -> ApiResult<axum::Json<AppOut>> {
    let late_fee =
        crate::services::collections::late_fee_setting(&state.db, principal.app.uuid).await?;
    Ok(axum::Json(render(&principal.app, late_fee)))
}
