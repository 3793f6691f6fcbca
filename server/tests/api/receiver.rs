//! A webhook receiver for tests: a local axum server on a random loopback port that records
//! what it receives and answers as told (2xx, an error status, late, or never).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::any,
    Router,
};

#[derive(Debug, Clone)]
pub enum Behavior {
    Ok,
    Status(u16),
    StatusRetryAfter(u16, &'static str),
    /// Answers this status with this body.
    Body(u16, String),
    /// Answers 200 after this long.
    Slow(Duration),
    /// Never answers.
    Hang,
}

#[derive(Debug, Clone)]
pub struct Hit {
    pub headers: HashMap<String, String>,
    pub body: Bytes,
}

impl Hit {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

#[derive(Default)]
struct Inner {
    hits: Vec<Hit>,
    behavior: Option<Behavior>,
}

#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    inner: Arc<Mutex<Inner>>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .route("/hook", any(receive))
            .with_state(inner.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            url: format!("http://{addr}/hook"),
            inner,
        }
    }

    /// A URL where nothing listens.
    pub async fn down_url() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        format!("http://{addr}/hook")
    }

    pub fn set(&self, behavior: Behavior) {
        self.inner.lock().unwrap().behavior = Some(behavior);
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.inner.lock().unwrap().hits.clone()
    }

    pub fn count(&self) -> usize {
        self.inner.lock().unwrap().hits.len()
    }
}

async fn receive(
    State(inner): State<Arc<Mutex<Inner>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let behavior = {
        let mut inner = inner.lock().unwrap();
        inner.hits.push(Hit {
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
                .collect(),
            body,
        });
        inner.behavior.clone().unwrap_or(Behavior::Ok)
    };
    match behavior {
        Behavior::Ok => StatusCode::NO_CONTENT.into_response(),
        Behavior::Status(s) => StatusCode::from_u16(s).unwrap().into_response(),
        Behavior::StatusRetryAfter(s, after) => (
            StatusCode::from_u16(s).unwrap(),
            [(axum::http::header::RETRY_AFTER, after)],
        )
            .into_response(),
        Behavior::Body(s, body) => (StatusCode::from_u16(s).unwrap(), body).into_response(),
        Behavior::Slow(d) => {
            tokio::time::sleep(d).await;
            StatusCode::OK.into_response()
        }
        Behavior::Hang => {
            std::future::pending::<()>().await;
            StatusCode::OK.into_response()
        }
    }
}

/// Verifies a delivery with the Standard Webhooks reference library for Python (PyPI
/// `standardwebhooks`), an implementation independent of ours. Returns whether it verified.
pub fn verify_with_reference(secret: &str, hit: &Hit) -> bool {
    let input = serde_json::json!({
        "secret": secret,
        "body": String::from_utf8(hit.body.to_vec()).unwrap(),
        "headers": {
            "webhook-id": hit.header("webhook-id"),
            "webhook-timestamp": hit.header("webhook-timestamp"),
            "webhook-signature": hit.header("webhook-signature"),
        },
    });
    let script = r#"
import json, sys
from standardwebhooks.webhooks import Webhook
d = json.load(sys.stdin)
try:
    Webhook(d["secret"]).verify(d["body"], d["headers"])
    print("verified")
except Exception as e:
    print("refused", e)
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 with the standardwebhooks package (pip install standardwebhooks)");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("verified") || said.starts_with("refused"),
        "the reference verifier did not run: {said}"
    );
    said.starts_with("verified")
}
