//! Authentication of the two path groups: `/v1/app/*` takes AppTokens, `/v1/account/*` takes
//! AccountTokens. Each group's middleware authenticates, applies the group's rate limit, then
//! the idempotency layer, and leaves the principal in the request for the handlers.

use std::sync::Arc;

use app::api::Environment;
use axum::{
    extract::{FromRequestParts, MatchedPath, Request, State},
    http::{header::AUTHORIZATION, request::Parts, HeaderMap},
    middleware::Next,
    response::{IntoResponse, Response},
};
use uuid::Uuid;

use super::{
    error::{ApiError, ApiResult, ErrorCode},
    idempotency, AppState,
};
use crate::{
    domain::{
        flows::FlowScope,
        tokens::{self, TokenKind},
    },
    store::{self, apps::AppRow},
};

/// The app behind an AppToken.
#[derive(Clone)]
pub struct AppPrincipal {
    pub app: Arc<AppRow>,
}

impl AppPrincipal {
    pub fn environment(&self) -> Environment {
        Environment::parse(&self.app.environment).unwrap_or(Environment::Live)
    }
}

/// The account behind an AccountToken (or a flow session), and its app.
#[derive(Clone)]
pub struct AccountPrincipal {
    pub app: Arc<AppRow>,
    pub account_uuid: Uuid,
    /// Set for flow sessions: the only endpoints they may call.
    pub scope: Option<FlowScope>,
    /// The plan group a flow link was made for: its plans are the only ones offered.
    pub plan_group: Option<Uuid>,
}

pub(crate) fn bearer(headers: &HeaderMap) -> ApiResult<&str> {
    let value = headers.get(AUTHORIZATION).ok_or_else(|| {
        ApiError::new(
            ErrorCode::TokenMissing,
            "Send a token as Authorization: Bearer <token>",
        )
    })?;
    value
        .to_str()
        .ok()
        .and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::TokenInvalid,
                "The Authorization header must be Bearer <token>",
            )
        })
}

pub(crate) fn invalid_token() -> ApiError {
    ApiError::new(ErrorCode::TokenInvalid, "The token is not valid")
}

/// Who a token belongs to.
#[derive(Clone)]
pub enum Principal {
    App(AppPrincipal),
    Account {
        principal: AccountPrincipal,
        expires_at: chrono::DateTime<chrono::Utc>,
    },
}

async fn authenticate(state: &AppState, headers: &HeaderMap) -> ApiResult<Principal> {
    let token = bearer(headers)?;
    let kind = tokens::classify(token).ok_or_else(invalid_token)?;
    let digest = tokens::token_digest(token);
    let now = state.clock.now();
    let principal = match state.http.caches.principals.get(&digest, now) {
        Some(p) => p,
        None => {
            let p = lookup(state, kind, &tokens::hex_of(&digest)).await?;
            state.http.caches.principals.insert(digest, p.clone(), now);
            p
        }
    };
    if let Principal::Account { expires_at, .. } = &principal {
        if *expires_at <= now {
            return Err(ApiError::new(
                ErrorCode::TokenExpired,
                "The token has expired; request a new one",
            ));
        }
    }
    Ok(principal)
}

async fn lookup(state: &AppState, kind: TokenKind, hash: &str) -> ApiResult<Principal> {
    match kind {
        TokenKind::App(_) => {
            let app = store::apps::app_by_token_hash(&state.db, hash)
                .await?
                .ok_or_else(invalid_token)?;
            Ok(Principal::App(AppPrincipal { app: Arc::new(app) }))
        }
        TokenKind::Account => {
            let row = store::accounts::account_token(&state.db, hash)
                .await?
                .ok_or_else(invalid_token)?;
            account_principal(
                state,
                (row.app_uuid, row.account_uuid),
                None,
                None,
                row.expires_at,
            )
            .await
        }
        TokenKind::Flow => {
            let row = store::flows::flow_session(&state.db, hash)
                .await?
                .ok_or_else(invalid_token)?;
            let scope = FlowScope::parse(&row.scope).ok_or_else(invalid_token)?;
            account_principal(
                state,
                (row.app_uuid, row.account_uuid),
                Some(scope),
                row.plan_group_uuid,
                row.expires_at,
            )
            .await
        }
    }
}

async fn account_principal(
    state: &AppState,
    (app_uuid, account_uuid): (Uuid, Uuid),
    scope: Option<FlowScope>,
    plan_group: Option<Uuid>,
    expires_at: chrono::DateTime<chrono::Utc>,
) -> ApiResult<Principal> {
    let app = store::apps::app_by_uuid(&state.db, app_uuid)
        .await?
        .ok_or_else(invalid_token)?;
    Ok(Principal::Account {
        principal: AccountPrincipal {
            app: Arc::new(app),
            account_uuid,
            scope,
            plan_group,
        },
        expires_at,
    })
}

fn wrong_type(expected: &str) -> ApiError {
    ApiError::new(
        ErrorCode::TokenWrongType,
        format!("This path needs an {expected}"),
    )
}

/// Gate of `/v1/app/*`.
pub async fn require_app(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let principal = match authenticate(&state, req.headers()).await {
        Ok(Principal::App(p)) => p,
        Ok(Principal::Account { .. }) => return wrong_type("AppToken").into_response(),
        Err(e) => return e.into_response(),
    };
    let owner = format!("app:{}", principal.app.uuid);
    let limit = state.config.rate_limits.app_per_second;
    req.extensions_mut().insert(principal);
    limited(&state, owner, limit, req, next).await
}

/// Gate of `/v1/account/*`.
pub async fn require_account(
    State(state): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    let principal = match authenticate(&state, req.headers()).await {
        Ok(Principal::Account { principal, .. }) => principal,
        Ok(Principal::App(_)) => return wrong_type("AccountToken").into_response(),
        Err(e) => return e.into_response(),
    };
    if let Some(scope) = principal.scope {
        let route = req
            .extensions()
            .get::<MatchedPath>()
            .map_or_else(|| req.uri().path().to_owned(), |p| p.as_str().to_owned());
        if !scope.allows(req.method().as_str(), &route) {
            return ApiError::new(
                ErrorCode::ScopeDenied,
                format!("This flow ({}) may not call this endpoint", scope.as_str()),
            )
            .into_response();
        }
    }
    let owner = format!("account:{}", principal.account_uuid);
    let limit = state.config.rate_limits.account_per_second;
    req.extensions_mut().insert(principal);
    limited(&state, owner, limit, req, next).await
}

/// Applies the rate limit of `owner`, then idempotency, and adds the limit's headers.
async fn limited(
    state: &AppState,
    owner: String,
    limit: u32,
    req: Request,
    next: Next,
) -> Response {
    let decision = if state.config.rate_limits.enabled {
        Some(state.http.limiter.check(&owner, limit).await)
    } else {
        None
    };
    let mut response = match decision {
        Some(d) if !d.allowed => ApiError::new(
            ErrorCode::RateLimited,
            format!(
                "Too many requests: at most {limit} per second. Retry after the Retry-After delay."
            ),
        )
        .into_response(),
        _ => idempotency::guard(state, &owner, req, next).await,
    };
    if let Some(d) = decision {
        response.headers_mut().extend(d.headers());
    }
    response
}

impl<S: Send + Sync> FromRequestParts<S> for AppPrincipal {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> ApiResult<Self> {
        parts
            .extensions
            .get::<AppPrincipal>()
            .cloned()
            .ok_or_else(|| ApiError::internal(anyhow::anyhow!("route outside the app gate")))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for AccountPrincipal {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> ApiResult<Self> {
        parts
            .extensions
            .get::<AccountPrincipal>()
            .cloned()
            .ok_or_else(|| ApiError::internal(anyhow::anyhow!("route outside the account gate")))
    }
}
