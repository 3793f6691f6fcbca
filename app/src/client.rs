//! The typed v1 client the flows use in the browser: the same endpoints and shapes partners
//! use, authenticated with the flow session's bearer token (never a cookie). Card data goes to
//! the payment processor with its publishable key, never to `/v1`.

use serde::{de::DeserializeOwned, Serialize};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::api::{
    enrollment::{AcceptPlanOut, BillingAddressOut},
    market::{Address, Plan, PlansOut},
    Account, CreditCheckOut, ErrorEnvelope, IdentityOut, PaymentMethod, PaymentSession,
    PostalAddress, ProcessorPaymentMethodOut,
};

/// Code of a failure to reach the server at all (the flow offers to try again).
pub const NETWORK_ERROR: &str = "network_error";

/// How often a call answered 429 is sent again (after its `Retry-After`).
#[cfg(feature = "hydrate")]
const RATE_LIMIT_RETRIES: u32 = 3;

/// A failure as the flow shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientError {
    pub code: String,
    pub message: String,
    /// The request field the error is about, when the server named one.
    pub param: Option<String>,
    /// `missing`, `earliest_start_date`, `decline_code`, ... as the server sent them.
    pub details: serde_json::Map<String, Value>,
}

impl ClientError {
    pub fn network(e: impl std::fmt::Display) -> Self {
        ClientError {
            code: NETWORK_ERROR.to_owned(),
            message: format!(
                "We could not reach the server ({e}). Check your connection and try again."
            ),
            param: None,
            details: Default::default(),
        }
    }

    pub fn is_network(&self) -> bool {
        self.code == NETWORK_ERROR
    }

    /// A detail the server sent as a string.
    pub fn detail(&self, key: &str) -> Option<&str> {
        self.details.get(key).and_then(Value::as_str)
    }
}

impl From<ErrorEnvelope> for ClientError {
    fn from(e: ErrorEnvelope) -> Self {
        // A consumer cannot request a new token: tell them what to do instead.
        let message = if e.error.code.starts_with("token_") {
            "This session has ended. Close this window and start again from your app.".to_owned()
        } else {
            e.error.message
        };
        ClientError {
            code: e.error.code,
            message,
            param: e.error.param,
            details: e.error.details.into_iter().collect(),
        }
    }
}

/// Calls `/v1/account/*` with a flow session token.
#[derive(Debug, Clone)]
pub struct ApiClient {
    token: String,
}

impl ApiClient {
    pub fn new(token: String) -> Self {
        ApiClient { token }
    }

    #[cfg(feature = "hydrate")]
    async fn send<T: DeserializeOwned>(
        method: gloo_net::http::Method,
        path: &str,
        bearer: &str,
        body: Option<&impl Serialize>,
    ) -> Result<T, ClientError> {
        let mut attempt = 0;
        let response = loop {
            let builder = gloo_net::http::RequestBuilder::new(path)
                .method(method.clone())
                .header("Authorization", &format!("Bearer {bearer}"));
            let request = match body {
                Some(body) => builder.json(body),
                None => builder.build(),
            }
            .map_err(ClientError::network)?;
            let response = request.send().await.map_err(ClientError::network)?;
            // Over the rate limit nothing happened: wait as told and send it again.
            if response.status() == 429 && attempt < RATE_LIMIT_RETRIES {
                attempt += 1;
                let seconds = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.trim().parse::<u32>().ok())
                    .unwrap_or(1)
                    .clamp(1, 5);
                gloo_timers::future::TimeoutFuture::new(seconds * 1_000).await;
                continue;
            }
            break response;
        };
        if response.ok() {
            return response.json::<T>().await.map_err(ClientError::network);
        }
        match response.json::<ErrorEnvelope>().await {
            Ok(e) => Err(e.into()),
            Err(e) => Err(ClientError::network(e)),
        }
    }

    #[cfg(not(feature = "hydrate"))]
    async fn send<T>(
        _method: Method,
        _path: &str,
        _bearer: &str,
        _body: Option<&impl Serialize>,
    ) -> Result<T, ClientError> {
        Err(ClientError::network("the client runs in the browser only"))
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<T, ClientError> {
        Self::send(method, path, &self.token, body.as_ref()).await
    }

    /// `GET /v1/account`.
    pub async fn account(&self) -> Result<Account, ClientError> {
        self.call(Method::GET, "/v1/account", None).await
    }

    /// `POST /v1/account/enroll/address-search`: type-ahead.
    pub async fn address_search(&self, query: &str) -> Result<Vec<Address>, ClientError> {
        let body = json!({ "query": query, "limit": 8 });
        self.call(
            Method::POST,
            "/v1/account/enroll/address-search",
            Some(body),
        )
        .await
    }

    /// `POST /v1/account/enroll/full-address-search`.
    pub async fn full_address_search(
        &self,
        address: &PostalAddress,
    ) -> Result<Vec<Address>, ClientError> {
        let body = serde_json::to_value(address).ok();
        self.call(Method::POST, "/v1/account/enroll/full-address-search", body)
            .await
    }

    /// `POST /v1/account/enroll/esi-id-search`.
    pub async fn esi_id_search(&self, esi_id: &str) -> Result<Address, ClientError> {
        let body = json!({ "esi_id": esi_id });
        self.call(Method::POST, "/v1/account/enroll/esi-id-search", Some(body))
            .await
    }

    /// `POST /v1/account/enroll/confirm-address`.
    pub async fn confirm_address(&self, esi_id: &str) -> Result<Account, ClientError> {
        let body = json!({ "esi_id": esi_id });
        self.call(
            Method::POST,
            "/v1/account/enroll/confirm-address",
            Some(body),
        )
        .await
    }

    /// `POST /v1/account/enroll/plans/request` for the confirmed address.
    pub async fn plans(&self) -> Result<Vec<Plan>, ClientError> {
        let out: PlansOut = self
            .call(
                Method::POST,
                "/v1/account/enroll/plans/request",
                Some(json!({})),
            )
            .await?;
        Ok(out.plans)
    }

    /// `POST /v1/account/enroll/plans/accept` (the plan's meter, terms accepted).
    pub async fn accept_plan(
        &self,
        plan_uuid: Uuid,
        start_date: &str,
        enrollment_type: &str,
    ) -> Result<AcceptPlanOut, ClientError> {
        let body = json!({
            "plan_uuid": plan_uuid,
            "service_start_date": start_date,
            "enrollment_type": enrollment_type,
            "terms_accepted": true,
        });
        self.call(Method::POST, "/v1/account/enroll/plans/accept", Some(body))
            .await
    }

    /// `PATCH /v1/account/enroll/identity`.
    pub async fn update_identity(
        &self,
        phone: &str,
        date_of_birth: &str,
    ) -> Result<IdentityOut, ClientError> {
        let body = json!({ "phone": phone, "date_of_birth": date_of_birth });
        self.call(Method::PATCH, "/v1/account/enroll/identity", Some(body))
            .await
    }

    /// `POST /v1/account/enroll/credit-check`.
    pub async fn credit_check(&self, ssn: &str) -> Result<CreditCheckOut, ClientError> {
        let body = json!({ "ssn": ssn, "consent": true });
        self.call(Method::POST, "/v1/account/enroll/credit-check", Some(body))
            .await
    }

    /// `POST /v1/account/billing/payment-session`.
    pub async fn payment_session(&self) -> Result<PaymentSession, ClientError> {
        self.call(Method::POST, "/v1/account/billing/payment-session", None)
            .await
    }

    /// `POST /processor/v1/payment_methods`: card data to the processor, with the session's
    /// publishable key and single-use client secret.
    pub async fn create_card(
        session: &PaymentSession,
        card: &CardInput,
    ) -> Result<ProcessorPaymentMethodOut, ClientError> {
        let body = json!({
            "client_secret": session.client_secret,
            "card": {
                "number": card.number,
                "exp_month": card.exp_month,
                "exp_year": card.exp_year,
                "cvc": card.cvc,
            },
            "billing_details": { "postal_code": card.postal_code },
        });
        Self::send(
            Method::POST,
            "/processor/v1/payment_methods",
            &session.publishable_key,
            Some(&body),
        )
        .await
    }

    /// `POST /v1/account/billing/ensure-payment-method-added`.
    pub async fn attach_payment_method(&self, id: &str) -> Result<PaymentMethod, ClientError> {
        let body = json!({ "payment_method_id": id });
        self.call(
            Method::POST,
            "/v1/account/billing/ensure-payment-method-added",
            Some(body),
        )
        .await
    }

    /// `GET /v1/account/billing/address`.
    pub async fn billing_address(&self) -> Result<BillingAddressOut, ClientError> {
        self.call(Method::GET, "/v1/account/billing/address", None)
            .await
    }

    /// `PUT /v1/account/billing/address`: the service address, or another one.
    pub async fn set_billing_address(
        &self,
        other: Option<&PostalAddress>,
    ) -> Result<BillingAddressOut, ClientError> {
        let body = json!({ "same_as_service_address": other.is_none(), "address": other });
        self.call(Method::PUT, "/v1/account/billing/address", Some(body))
            .await
    }

    /// `POST /v1/account/enroll/finalize`.
    pub async fn finalize(&self) -> Result<Account, ClientError> {
        self.call(Method::POST, "/v1/account/enroll/finalize", Some(json!({})))
            .await
    }
}

/// Card details as typed into the card form; they go to the processor only.
#[derive(Clone, Default, PartialEq)]
pub struct CardInput {
    pub number: String,
    pub exp_month: u32,
    pub exp_year: i32,
    pub cvc: String,
    pub postal_code: String,
}

impl std::fmt::Debug for CardInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CardInput([redacted])")
    }
}

#[cfg(feature = "hydrate")]
use gloo_net::http::Method;

/// HTTP methods, for builds without the browser client.
#[cfg(not(feature = "hydrate"))]
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Copy)]
enum Method {
    GET,
    POST,
    PUT,
    PATCH,
}
