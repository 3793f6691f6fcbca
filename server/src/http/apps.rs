//! The app of the AppToken (`GET /v1/app`).

use app::api::{AppOut, Branding, Environment, ErrorEnvelope, SupportContacts, Timestamp};

use super::{auth::AppPrincipal, error::ApiResult, routes, ApiRouter};
use crate::store::apps::AppRow;

pub fn router() -> ApiRouter {
    ApiRouter::new().routes(routes!(get_app))
}

pub fn render(app: &AppRow) -> AppOut {
    AppOut {
        uuid: app.uuid,
        name: app.name.clone(),
        environment: Environment::parse(&app.environment).unwrap_or(Environment::Live),
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
        allowed_origins: serde_json::from_str(&app.allowed_origins).unwrap_or_default(),
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
pub async fn get_app(principal: AppPrincipal) -> ApiResult<axum::Json<AppOut>> {
    Ok(axum::Json(render(&principal.app)))
}
