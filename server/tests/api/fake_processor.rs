//! A fake of the real card processor's REST API for tests: a local axum server on a random
//! loopback port answering with the processor's shapes (customers, setup intents, payment
//! methods, payment intents), form-encoded requests with `Authorization: Bearer sk_...`.
//! `confirm_card` does what the browser component does with a setup intent's client secret.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Form, Json, Router,
};
use serde_json::{json, Value};

type Params = HashMap<String, String>;

#[derive(Debug, Clone)]
pub struct Request {
    pub method: &'static str,
    pub path: String,
    pub authorization: String,
    pub idempotency_key: Option<String>,
    pub params: Params,
}

#[derive(Debug, Clone)]
struct PaymentMethod {
    customer: String,
    brand: &'static str,
    last4: String,
    fingerprint: String,
    /// Charges fail with this decline code.
    declines_with: Option<&'static str>,
}

#[derive(Default)]
struct Inner {
    secret_key: String,
    customers: Vec<String>,
    /// client secret -> customer
    setup_intents: HashMap<String, String>,
    payment_methods: HashMap<String, PaymentMethod>,
    /// idempotency key -> (status, body)
    charges: HashMap<String, (u16, Value)>,
    requests: Vec<Request>,
    down: bool,
}

#[derive(Clone)]
pub struct FakeProcessor {
    pub base: String,
    inner: Arc<Mutex<Inner>>,
}

impl FakeProcessor {
    /// Starts a fake that accepts `secret_key` only.
    pub async fn start(secret_key: &str) -> FakeProcessor {
        let inner = Arc::new(Mutex::new(Inner {
            secret_key: secret_key.to_owned(),
            ..Inner::default()
        }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new()
            .route("/v1/customers", post(create_customer))
            .route("/v1/setup_intents", post(create_setup_intent))
            .route("/v1/payment_methods/{id}", get(get_payment_method))
            .route("/v1/payment_intents", post(create_payment_intent))
            .with_state(inner.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeProcessor {
            base: format!("http://{addr}"),
            inner,
        }
    }

    /// A base URL where nothing listens.
    pub async fn down_base() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        format!("http://{addr}")
    }

    /// From now on every request is answered 500 (or, with `false`, served again).
    pub fn set_down(&self, down: bool) {
        self.inner.lock().unwrap().down = down;
    }

    pub fn requests(&self) -> Vec<Request> {
        self.inner.lock().unwrap().requests.clone()
    }

    /// What the browser component does: collects a card for the setup intent of
    /// `client_secret` and answers the new payment method's id (`pm_...`), attached to the
    /// intent's customer. Cards ending `0341` save fine and decline every charge with
    /// `card_declined`; `9995` with `insufficient_funds`.
    pub fn confirm_card(&self, client_secret: &str, number: &str) -> String {
        let mut inner = self.inner.lock().unwrap();
        let customer = inner
            .setup_intents
            .get(client_secret)
            .cloned()
            .expect("a client secret of this fake");
        let id = format!("pm_fake{}", inner.payment_methods.len() + 1);
        let last4 = number[number.len() - 4..].to_owned();
        let declines_with = match last4.as_str() {
            "0341" => Some("card_declined"),
            "9995" => Some("insufficient_funds"),
            _ => None,
        };
        let brand = if number.starts_with('5') {
            "mastercard"
        } else {
            "visa"
        };
        inner.payment_methods.insert(
            id.clone(),
            PaymentMethod {
                customer,
                brand,
                fingerprint: format!("fp{last4}"),
                last4,
                declines_with,
            },
        );
        id
    }
}

fn error(status: StatusCode, kind: &str, code: &str) -> Response {
    (
        status,
        Json(json!({"error": {"type": kind, "code": code, "message": code}})),
    )
        .into_response()
}

/// Records the request; answers an error when the fake is down or the key is not its own.
fn admit(
    inner: &mut Inner,
    method: &'static str,
    path: String,
    headers: &HeaderMap,
    params: Params,
) -> Option<Response> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let authorization = header("authorization").unwrap_or_default();
    inner.requests.push(Request {
        method,
        path,
        authorization: authorization.clone(),
        idempotency_key: header("idempotency-key"),
        params,
    });
    if inner.down {
        return Some(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "internal",
        ));
    }
    if authorization != format!("Bearer {}", inner.secret_key) {
        return Some(error(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "api_key_invalid",
        ));
    }
    None
}

async fn create_customer(
    State(inner): State<Arc<Mutex<Inner>>>,
    headers: HeaderMap,
    Form(params): Form<Params>,
) -> Response {
    let mut inner = inner.lock().unwrap();
    if let Some(r) = admit(&mut inner, "POST", "/v1/customers".into(), &headers, params) {
        return r;
    }
    let id = format!("cus_fake{}", inner.customers.len() + 1);
    inner.customers.push(id.clone());
    Json(json!({"id": id, "object": "customer"})).into_response()
}

async fn create_setup_intent(
    State(inner): State<Arc<Mutex<Inner>>>,
    headers: HeaderMap,
    Form(params): Form<Params>,
) -> Response {
    let mut inner = inner.lock().unwrap();
    let customer = params.get("customer").cloned().unwrap_or_default();
    if let Some(r) = admit(
        &mut inner,
        "POST",
        "/v1/setup_intents".into(),
        &headers,
        params,
    ) {
        return r;
    }
    if !inner.customers.contains(&customer) {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "resource_missing",
        );
    }
    let n = inner.setup_intents.len() + 1;
    let secret = format!("seti_fake{n}_secret_abc{n}");
    inner.setup_intents.insert(secret.clone(), customer.clone());
    Json(json!({
        "id": format!("seti_fake{n}"), "object": "setup_intent", "client_secret": secret,
        "customer": customer, "usage": "off_session", "status": "requires_payment_method"
    }))
    .into_response()
}

async fn get_payment_method(
    State(inner): State<Arc<Mutex<Inner>>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let mut inner = inner.lock().unwrap();
    if let Some(r) = admit(
        &mut inner,
        "GET",
        format!("/v1/payment_methods/{id}"),
        &headers,
        Params::new(),
    ) {
        return r;
    }
    let Some(pm) = inner.payment_methods.get(&id) else {
        return error(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "resource_missing",
        );
    };
    Json(json!({
        "id": id, "object": "payment_method", "type": "card", "customer": pm.customer,
        "card": {"brand": pm.brand, "last4": pm.last4, "exp_month": 12, "exp_year": 2034,
                 "fingerprint": pm.fingerprint, "funding": "credit"},
        "billing_details": {"address": {"postal_code": "75201", "country": "US"}, "name": null}
    }))
    .into_response()
}

async fn create_payment_intent(
    State(inner): State<Arc<Mutex<Inner>>>,
    headers: HeaderMap,
    Form(params): Form<Params>,
) -> Response {
    let mut inner = inner.lock().unwrap();
    if let Some(r) = admit(
        &mut inner,
        "POST",
        "/v1/payment_intents".into(),
        &headers,
        params.clone(),
    ) {
        return r;
    }
    let key = inner
        .requests
        .last()
        .and_then(|r| r.idempotency_key.clone())
        .unwrap_or_default();
    if let Some((status, body)) = inner.charges.get(&key) {
        return (StatusCode::from_u16(*status).unwrap(), Json(body.clone())).into_response();
    }
    let p = |k: &str| params.get(k).map_or("", String::as_str);
    let pm = inner.payment_methods.get(p("payment_method")).cloned();
    let (status, body) = match pm {
        Some(pm)
            if pm.customer == p("customer")
                && p("currency") == "usd"
                && p("confirm") == "true"
                && p("off_session") == "true" =>
        {
            let id = format!("pi_fake{}", inner.charges.len() + 1);
            match pm.declines_with {
                Some(code) => (
                    402,
                    json!({"error": {"type": "card_error", "code": "card_declined",
                        "decline_code": code, "message": "Your card was declined.",
                        "payment_intent": {"id": id, "status": "requires_payment_method"}}}),
                ),
                None => (
                    200,
                    json!({"id": id, "object": "payment_intent", "status": "succeeded",
                        "amount": p("amount").parse::<i64>().unwrap_or(0), "currency": "usd"}),
                ),
            }
        }
        _ => (
            400,
            json!({"error": {"type": "invalid_request_error", "code": "resource_missing"}}),
        ),
    };
    inner.charges.insert(key, (status, body.clone()));
    (StatusCode::from_u16(status).unwrap(), Json(body)).into_response()
}
