//! Browser sessions for the pages people sign in to: the dashboard and the customers' hosted
//! pages and portal (never `/v1`, which takes tokens). A session is a cookie naming a row of
//! `web_sessions`; the cookie is `HttpOnly`, `SameSite=Lax` and `Secure` (unless the service is
//! reached over plain `http://`, as in local development), and the session ends after a spell
//! of inactivity. Every form carries the session's CSRF token, checked first by each POST.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
use rand::RngCore;
use subtle::ConstantTimeEq;
use tower_sessions::{
    cookie::time::Duration, cookie::SameSite, Expiry, Session, SessionManagerLayer,
};

use super::{
    error::{ApiError, ApiResult},
    AppState,
};
use crate::{
    config::Config,
    store::{web_sessions::WebSessionStore, Db},
};

/// Whose session: each has its own cookie, path and idle timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKind {
    /// The operator's and partners' dashboard, under `/dashboard`.
    Dashboard,
    /// A customer on the hosted pages and the portal.
    Customer,
}

impl SessionKind {
    pub fn cookie_name(self) -> &'static str {
        match self {
            SessionKind::Dashboard => "sb_dashboard",
            SessionKind::Customer => "sb_customer",
        }
    }

    fn cookie_path(self) -> &'static str {
        match self {
            SessionKind::Dashboard => "/dashboard",
            SessionKind::Customer => "/",
        }
    }
}

const CSRF_KEY: &str = "csrf";

/// The session layer of `kind`, for a router of pages (not for `/v1`).
pub fn layer(state: &AppState, kind: SessionKind) -> SessionManagerLayer<WebSessionStore> {
    layer_on(&state.db, &state.config, kind)
}

fn layer_on(db: &Db, config: &Config, kind: SessionKind) -> SessionManagerLayer<WebSessionStore> {
    let idle_minutes = match kind {
        SessionKind::Dashboard => config.sessions.dashboard_idle_minutes,
        SessionKind::Customer => config.sessions.customer_idle_minutes,
    };
    SessionManagerLayer::new(WebSessionStore::new(db))
        .with_name(kind.cookie_name())
        .with_path(kind.cookie_path())
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(secure_cookies(&config.public_url()))
        .with_expiry(Expiry::OnInactivity(Duration::minutes(i64::from(
            idle_minutes.max(1),
        ))))
}

/// Cookies are `Secure` except when the service is reached over plain HTTP (development on
/// localhost), where a browser would drop them.
fn secure_cookies(public_url: &str) -> bool {
    !public_url.starts_with("http://")
}

/// Call right after a successful sign-in: a new session id (so that an id planted before
/// sign-in is worth nothing) and a new CSRF token.
pub async fn signed_in(session: &Session) -> ApiResult<()> {
    session.cycle_id().await.map_err(session_error)?;
    session
        .insert(CSRF_KEY, new_token())
        .await
        .map_err(session_error)
}

/// The token every form of this session carries as its hidden `csrf` field.
pub async fn csrf_token(session: &Session) -> ApiResult<String> {
    if let Some(token) = session
        .get::<String>(CSRF_KEY)
        .await
        .map_err(session_error)?
    {
        return Ok(token);
    }
    let token = new_token();
    session
        .insert(CSRF_KEY, token.clone())
        .await
        .map_err(session_error)?;
    Ok(token)
}

/// Refuses (403 `csrf_failed`) a form whose `csrf` field is missing or is not this session's
/// token. Call first in every POST handler of a page.
pub async fn check_csrf(session: &Session, submitted: Option<&str>) -> ApiResult<()> {
    let expected = session
        .get::<String>(CSRF_KEY)
        .await
        .map_err(session_error)?;
    match (expected, submitted) {
        (Some(expected), Some(submitted))
            if bool::from(expected.as_bytes().ct_eq(submitted.as_bytes())) =>
        {
            Ok(())
        }
        _ => Err(ApiError::csrf_failed().as_page()),
    }
}

/// Ends the session: its row is deleted and the cookie cleared.
pub async fn sign_out(session: &Session) -> ApiResult<()> {
    session.flush().await.map_err(session_error)
}

fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

fn session_error(e: tower_sessions::session::Error) -> ApiError {
    ApiError::internal(anyhow::anyhow!("web session store: {e}")).as_page()
}

#[cfg(test)]
mod tests {
    use axum::{
        body::Body,
        http::{header, Request, StatusCode},
        routing::get,
        Router,
    };
    use tower::ServiceExt;

    use super::*;

    /// A page with a form, and the POST that form sends.
    fn form_router(db: &Db, config: &Config) -> Router {
        async fn show(session: Session) -> ApiResult<String> {
            csrf_token(&session).await
        }
        async fn send(
            session: Session,
            axum::extract::Query(q): axum::extract::Query<
                std::collections::HashMap<String, String>,
            >,
        ) -> ApiResult<&'static str> {
            check_csrf(&session, q.get("csrf").map(String::as_str)).await?;
            Ok("sent")
        }
        async fn sign_in(session: Session) -> ApiResult<&'static str> {
            signed_in(&session).await?;
            Ok("in")
        }
        Router::new()
            .route("/dashboard/form", get(show).post(send))
            .route("/dashboard/sign-in", axum::routing::post(sign_in))
            .layer(layer_on(db, config, SessionKind::Dashboard))
    }

    async fn database() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("s.db").display());
        let db = Db::connect(&url, 2).await.unwrap();
        db.migrate().await.unwrap();
        (dir, db)
    }

    async fn call(
        router: &Router,
        method: &str,
        uri: &str,
        cookie: Option<&str>,
    ) -> (StatusCode, Option<String>, String) {
        let mut req = Request::builder().method(method).uri(uri);
        if let Some(c) = cookie {
            req = req.header(header::COOKIE, c);
        }
        let res = router
            .clone()
            .oneshot(req.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = res.status();
        let set_cookie = res
            .headers()
            .get(header::SET_COOKIE)
            .map(|v| v.to_str().unwrap().to_owned());
        let body = axum::body::to_bytes(res.into_body(), 1 << 16)
            .await
            .unwrap();
        (
            status,
            set_cookie,
            String::from_utf8(body.to_vec()).unwrap(),
        )
    }

    fn cookie_pair(set_cookie: &str) -> String {
        set_cookie.split(';').next().unwrap().to_owned()
    }

    #[tokio::test]
    async fn a_form_is_accepted_only_with_its_sessions_token() {
        let (_dir, db) = database().await;
        let config = Config {
            public_url: Some("https://switchboard.example".to_owned()),
            ..Config::default()
        };
        let router = form_router(&db, &config);

        let (status, set_cookie, token) = call(&router, "GET", "/dashboard/form", None).await;
        assert_eq!(status, StatusCode::OK);
        let set_cookie = set_cookie.expect("a session cookie");
        for flag in ["HttpOnly", "SameSite=Lax", "Secure", "Path=/dashboard"] {
            assert!(
                set_cookie.contains(flag),
                "{flag} missing from {set_cookie}"
            );
        }
        assert!(set_cookie.starts_with("sb_dashboard="), "{set_cookie}");
        let cookie = cookie_pair(&set_cookie);

        let (status, _, body) = call(
            &router,
            "POST",
            &format!("/dashboard/form?csrf={token}"),
            Some(&cookie),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body, "sent");

        // Another token, none, or the right token without the session: refused.
        let (status, _, _) = call(
            &router,
            "POST",
            "/dashboard/form?csrf=forged",
            Some(&cookie),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, _, _) = call(&router, "POST", "/dashboard/form", Some(&cookie)).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, _, _) = call(
            &router,
            "POST",
            &format!("/dashboard/form?csrf={token}"),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }

    #[tokio::test]
    async fn signing_in_changes_the_session_id_and_the_token() {
        let (_dir, db) = database().await;
        let router = form_router(&db, &Config::default());
        let (_, set_cookie, token) = call(&router, "GET", "/dashboard/form", None).await;
        let before = cookie_pair(&set_cookie.unwrap());
        assert!(!before.is_empty());

        let (status, set_cookie, _) =
            call(&router, "POST", "/dashboard/sign-in", Some(&before)).await;
        assert_eq!(status, StatusCode::OK);
        let after = cookie_pair(&set_cookie.expect("a new session cookie"));
        assert_ne!(before, after);

        // The id from before sign-in no longer names a session; the old token is void.
        let (status, _, _) = call(
            &router,
            "POST",
            &format!("/dashboard/form?csrf={token}"),
            Some(&after),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (_, _, fresh) = call(&router, "GET", "/dashboard/form", Some(&after)).await;
        assert_ne!(fresh, token);
        let (status, _, _) = call(
            &router,
            "POST",
            &format!("/dashboard/form?csrf={fresh}"),
            Some(&after),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let (status, _, _) = call(
            &router,
            "POST",
            &format!("/dashboard/form?csrf={fresh}"),
            Some(&before),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }

    #[test]
    fn cookies_are_secure_unless_served_over_plain_http() {
        assert!(secure_cookies("https://switchboard.example"));
        assert!(!secure_cookies("http://127.0.0.1:3000"));
    }

    #[test]
    fn tokens_are_long_and_fresh() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 43);
        assert_ne!(a, b);
    }
}
