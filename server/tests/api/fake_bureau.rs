//! A fake credit bureau that follows `docs/credit-bureau.md`: a local axum server on a random
//! loopback port answering `POST /v1/soft-checks` for one bearer secret. What it answers is
//! chosen by the SSN's last four digits:
//!
//! | last four | answer |
//! |---|---|
//! | `0002` | declined |
//! | `0003` | not_found |
//! | `0001` | frozen, with an unfreeze URL |
//! | `0004` | 503 for the first request of each reference, then passed |
//! | `0005` | 503 forever |
//! | `0006` | passed, but only after `SLOW` |
//! | other | passed |

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::post,
    Json, Router,
};
use serde_json::{json, Value};

pub const UNFREEZE_URL: &str = "https://bureau.test.example/lift-freeze";

/// How long an answer for `...0006` takes.
pub const SLOW: Duration = Duration::from_secs(3);

#[derive(Debug, Clone)]
pub struct Request {
    pub authorization: String,
    pub idempotency_key: Option<String>,
    pub body: Value,
}

#[derive(Default)]
struct Inner {
    secret: String,
    requests: Vec<Request>,
    /// reference -> requests seen
    seen: HashMap<String, u32>,
}

#[derive(Clone)]
pub struct FakeBureau {
    pub base: String,
    inner: Arc<Mutex<Inner>>,
}

impl FakeBureau {
    /// Starts a bureau that accepts `secret` only.
    pub async fn start(secret: &str) -> FakeBureau {
        let inner = Arc::new(Mutex::new(Inner {
            secret: secret.to_owned(),
            ..Inner::default()
        }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .route("/v1/soft-checks", post(soft_check))
            .with_state(inner.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeBureau {
            base: format!("http://{addr}"),
            inner,
        }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.inner.lock().unwrap().requests.clone()
    }
}

async fn soft_check(
    State(inner): State<Arc<Mutex<Inner>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let reference = body["reference"].as_str().unwrap_or_default().to_owned();
    let ssn = body["ssn"].as_str().unwrap_or_default().to_owned();
    let (authorized, seen) = {
        let mut inner = inner.lock().unwrap();
        let authorization = header("authorization").unwrap_or_default();
        let authorized = authorization == format!("Bearer {}", inner.secret);
        inner.requests.push(Request {
            authorization,
            idempotency_key: header("idempotency-key"),
            body: body.clone(),
        });
        let seen = inner.seen.entry(reference.clone()).or_insert(0);
        *seen += 1;
        (authorized, *seen)
    };
    if !authorized {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "unknown secret"})),
        )
            .into_response();
    }
    let busy = || {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"error": "try later"})),
        )
            .into_response()
    };
    let outcome = |outcome: &str| Json(json!({"reference": reference, "outcome": outcome}));
    match &ssn[ssn.len().saturating_sub(4)..] {
        "0002" => outcome("declined").into_response(),
        "0003" => outcome("not_found").into_response(),
        "0001" => Json(json!({"reference": reference, "outcome": "frozen",
            "unfreeze_url": UNFREEZE_URL}))
        .into_response(),
        "0004" if seen == 1 => busy(),
        "0005" => busy(),
        "0006" => {
            tokio::time::sleep(SLOW).await;
            outcome("passed").into_response()
        }
        _ => outcome("passed").into_response(),
    }
}
