//! Authentication of the two path groups: `/v1/app/*` takes AppTokens, `/v1/account/*` takes
//! AccountTokens. Each group's middleware authenticates, applies the group's rate limit, then
//! the idempotency layer, and leaves the principal in the request for the handlers. A client
//! address that failed to authenticate too often in the last minute is refused (429) before
//! its token is looked at.

use std::sync::Arc;

use app::api::Environment;
use axum::{
    extract::{ConnectInfo, FromRequestParts, MatchedPath, Request, State},
    http::{
        header::{AUTHORIZATION, RETRY_AFTER},
        request::Parts,
        HeaderMap, HeaderValue,
    },
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
        self.app.environment_kind()
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
    /// The flow session's public id (`flow_session_id`), for a flow session opened with one.
    pub flow_session: Option<Uuid>,
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
    let kind = tokens::classify(token).ok_or_else(ApiError::invalid_token)?;
    let digest = tokens::token_digest(token);
    let principal = state
        .http
        .caches
        .principals
        .get_or_fill(
            &digest,
            || state.clock.now(),
            || async move { lookup(state, kind, &tokens::hex_of(&digest)).await },
        )
        .await?;
    let now = state.clock.now();
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
                .ok_or_else(ApiError::invalid_token)?;
            // Only lookups that miss the cache get here, so this writes at most once per token
            // and cache lifetime; the request does not wait for it.
            tokio::spawn(crate::services::apps::note_token_use(
                state.db.clone(),
                hash.to_owned(),
                state.clock.now(),
            ));
            Ok(Principal::App(AppPrincipal { app: Arc::new(app) }))
        }
        TokenKind::Account => {
            let row = store::accounts::account_token(&state.db, hash)
                .await?
                .ok_or_else(ApiError::invalid_token)?;
            account_principal(
                state,
                (row.app_uuid, row.account_uuid),
                (None, None, None),
                row.expires_at,
            )
            .await
        }
        TokenKind::Flow => {
            let row = store::flows::flow_session(&state.db, hash)
                .await?
                .ok_or_else(ApiError::invalid_token)?;
            let scope = FlowScope::parse(&row.scope).ok_or_else(ApiError::invalid_token)?;
            account_principal(
                state,
                (row.app_uuid, row.account_uuid),
                (Some(scope), row.plan_group_uuid, row.uuid),
                row.expires_at,
            )
            .await
        }
    }
}

async fn account_principal(
    state: &AppState,
    (app_uuid, account_uuid): (Uuid, Uuid),
    (scope, plan_group, flow_session): (Option<FlowScope>, Option<Uuid>, Option<Uuid>),
    expires_at: chrono::DateTime<chrono::Utc>,
) -> ApiResult<Principal> {
    let app = store::apps::app_by_uuid(&state.db, app_uuid)
        .await?
        .ok_or_else(ApiError::invalid_token)?;
    Ok(Principal::Account {
        principal: AccountPrincipal {
            app: Arc::new(app),
            account_uuid,
            scope,
            plan_group,
            flow_session,
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

/// The address the request came from (none when the server was not told, as in some tests).
fn client_ip(req: &Request) -> Option<std::net::IpAddr> {
    req.extensions()
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip())
}

/// Authenticates the request unless its address failed too often lately; counts a failure.
async fn authenticate_guarded(
    state: &AppState,
    client: Option<std::net::IpAddr>,
    headers: &HeaderMap,
) -> ApiResult<Principal> {
    let limits = &state.config.rate_limits;
    let limit = if limits.enabled {
        limits.failed_auth_per_minute
    } else {
        0
    };
    let ip = client.filter(|_| limit > 0);
    let failures = &state.http.limiter.failed_auths;
    if let Some(ip) = ip {
        if let Some(wait) = failures.refused(ip, limit, std::time::Instant::now()) {
            let secs = wait.as_millis().div_ceil(1000).max(1);
            return Err(ApiError::new(
                ErrorCode::RateLimited,
                format!(
                    "Too many failed authentications from this address: at most {limit} per \
                     minute. Retry after the Retry-After delay."
                ),
            )
            .with_header(
                RETRY_AFTER,
                HeaderValue::from(u64::try_from(secs).unwrap_or(60)),
            ));
        }
    }
    let result = authenticate(state, headers).await;
    if let (Some(ip), Err(e)) = (ip, &result) {
        // A missing token is no guess; an unknown, malformed or expired one is.
        if matches!(e.code(), ErrorCode::TokenInvalid | ErrorCode::TokenExpired) {
            failures.failed(ip, std::time::Instant::now());
        }
    }
    result
}

/// Gate of `/v1/app/*`.
pub async fn require_app(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let principal = match authenticate_guarded(&state, client_ip(&req), req.headers()).await {
        Ok(Principal::App(p)) => p,
        Ok(Principal::Account { .. }) => return wrong_type("AppToken").into_response(),
        Err(e) => return e.into_response(),
    };
    let owner = Owner::App(principal.app.uuid);
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
    let principal = match authenticate_guarded(&state, client_ip(&req), req.headers()).await {
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
    let owner = Owner::Account(principal.account_uuid);
    let limit = state.config.rate_limits.account_per_second;
    req.extensions_mut().insert(principal);
    limited(&state, owner, limit, req, next).await
}

/// Whom a rate limit and the idempotency keys count for.
#[derive(Clone, Copy)]
enum Owner {
    App(Uuid),
    Account(Uuid),
}

impl Owner {
    /// The owner as the limiter and the idempotency store key it. Built only when one of them
    /// is used: most requests are reads without rate limits' bookkeeping on this path.
    fn key(self) -> String {
        match self {
            Owner::App(uuid) => format!("app:{uuid}"),
            Owner::Account(uuid) => format!("account:{uuid}"),
        }
    }
}

/// Applies the rate limit of `owner`, then idempotency, and adds the limit's headers.
async fn limited(state: &AppState, owner: Owner, limit: u32, req: Request, next: Next) -> Response {
    let decision = if state.config.rate_limits.enabled {
        Some(state.http.limiter.check(&owner.key(), limit).await)
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
        _ => idempotency::guard(state, || owner.key(), req, next).await,
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
