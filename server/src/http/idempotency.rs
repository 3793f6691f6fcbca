//! `Idempotency-Key` on POST, PUT and PATCH: the first completed response for a key is stored for
//! 24 hours and replayed for the same request; the same key with another request is 422, and a
//! key whose first request is still running is 409.

use axum::{
    body::{to_bytes, Body},
    extract::{OriginalUri, Request},
    http::{header::CONTENT_TYPE, HeaderName, HeaderValue, Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
};
use chrono::Duration;
use sha2::{Digest, Sha256};

use super::{
    error::{ApiError, ErrorCode},
    AppState,
};
use crate::store::{self, idempotency::Claim};

const HEADER: &str = "idempotency-key";
const MAX_BODY: usize = 1024 * 1024;
const KEEP_FOR: Duration = Duration::hours(24);
/// A claim still running after this long belongs to a request whose server went away.
const ABANDONED_AFTER: Duration = Duration::minutes(2);

/// Runs `req` under its idempotency key, if it has one; `owner` names whose keys they are.
pub async fn guard(
    state: &AppState,
    owner: impl FnOnce() -> String,
    req: Request,
    next: Next,
) -> Response {
    if !matches!(*req.method(), Method::POST | Method::PUT | Method::PATCH) {
        return next.run(req).await;
    }
    let Some(raw_key) = req.headers().get(HEADER) else {
        return next.run(req).await;
    };
    let key = match raw_key.to_str() {
        Ok(k) if (1..=255).contains(&k.len()) => k.to_owned(),
        _ => {
            return ApiError::new(
                ErrorCode::ParameterInvalid,
                "Idempotency-Key must be 1 to 255 visible ASCII characters",
            )
            .with_param("Idempotency-Key")
            .into_response()
        }
    };
    match run(state, &owner(), &key, req, next).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn run(
    state: &AppState,
    owner: &str,
    key: &str,
    req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let (parts, body) = req.into_parts();
    let bytes = to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| ApiError::new(ErrorCode::BodyTooLarge, "The request body is too large"))?;
    let request_hash = {
        let mut h = Sha256::new();
        h.update(parts.method.as_str());
        h.update(b"\n");
        // The full path: inside a nested router `parts.uri` has lost its prefix.
        let uri = parts
            .extensions
            .get::<OriginalUri>()
            .map_or(&parts.uri, |o| &o.0);
        h.update(uri.path_and_query().map_or("", |p| p.as_str()));
        h.update(b"\n");
        h.update(&bytes);
        format!("{:x}", h.finalize())
    };

    let now = state.clock.now();
    let mut tx = state.db.begin().await?;
    let claim = store::idempotency::claim(
        &mut tx,
        owner,
        key,
        &request_hash,
        now,
        now - KEEP_FOR,
        now - ABANDONED_AFTER,
    )
    .await?;
    tx.commit().await?;

    if let Claim::Existing(row) = claim {
        if row.request_hash != request_hash {
            return Err(ApiError::new(
                ErrorCode::IdempotencyKeyReused,
                "This Idempotency-Key was used with another request",
            )
            .with_param("Idempotency-Key"));
        }
        let (Some(status), Some(body)) = (row.response_status, row.response_body) else {
            return Err(ApiError::new(
                ErrorCode::IdempotencyKeyInProgress,
                "A request with this Idempotency-Key is still running; retry shortly",
            ));
        };
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = StatusCode::from_u16(u16::try_from(status).unwrap_or(500))
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if let Some(ct) = row
            .response_content_type
            .and_then(|c| HeaderValue::from_str(&c).ok())
        {
            response.headers_mut().insert(CONTENT_TYPE, ct);
        }
        response.headers_mut().insert(
            HeaderName::from_static("idempotent-replayed"),
            HeaderValue::from_static("true"),
        );
        return Ok(response);
    }

    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let (parts, body) = response.into_parts();
    let body = match to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(e) => {
            release(state, owner, key).await;
            return Err(ApiError::internal(anyhow::anyhow!("response body: {e}")));
        }
    };
    if is_kept(parts.status) {
        let content_type = parts
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        let mut tx = state.db.begin().await?;
        store::idempotency::complete(
            &mut tx,
            owner,
            key,
            parts.status.as_u16(),
            content_type,
            &body,
        )
        .await?;
        tx.commit().await?;
    } else {
        release(state, owner, key).await;
    }
    Ok(Response::from_parts(parts, Body::from(body)))
}

/// Responses worth replaying: everything but failures that say the request never ran (malformed
/// input, limits) or that it may succeed when retried (our own errors).
fn is_kept(status: StatusCode) -> bool {
    !(status.is_server_error()
        || status == StatusCode::TOO_MANY_REQUESTS
        || status == StatusCode::BAD_REQUEST
        || status == StatusCode::PAYLOAD_TOO_LARGE
        || status == StatusCode::UNSUPPORTED_MEDIA_TYPE)
}

async fn release(state: &AppState, owner: &str, key: &str) {
    let released = async {
        let mut tx = state.db.begin().await?;
        store::idempotency::release(&mut tx, owner, key).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = released {
        tracing::warn!(error = %e, "could not release an idempotency claim");
    }
}
