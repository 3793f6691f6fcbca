//! The typed v1 client the flows use in the browser: the same endpoints and shapes partners
//! use, authenticated with the flow session's bearer token (never a cookie). Card data goes to
//! the payment processor with its publishable key, never to `/v1`. Only the parts of answers
//! the flows read are parsed: the bundle a partner's page downloads stays small.

use crate::{
    api::{enrollment::BillingAddressOut, market::Address, PostalAddress},
    json::{Read, Value},
    views::{
        Account, ActiveDocuments, CardOnFile, Contract, Documents, InvoiceDetail, Invoices,
        Payment, PaymentMethod, PaymentPlans, PaymentSession, Plan, Plans, Summary,
    },
};

/// Code of a failure to reach the server at all (the flow offers to try again).
pub const NETWORK_ERROR: &str = "network_error";

/// How often a call answered 429 is sent again (after its `Retry-After`).
#[cfg(feature = "hydrate")]
const RATE_LIMIT_RETRIES: u32 = 3;

/// A failure as the flow shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientError {
    pub code: String,
    pub message: String,
    /// The request field the error is about, when the server named one.
    pub param: Option<String>,
    /// `enrollment_incomplete`: the steps still to do.
    pub missing: Vec<String>,
    /// `card_declined`: why.
    pub decline_code: Option<String>,
}

impl ClientError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        ClientError {
            code: code.to_owned(),
            message: message.into(),
            param: None,
            missing: Vec::new(),
            decline_code: None,
        }
    }

    /// The server could not be reached, or answered what the flow cannot read. (The browser
    /// reports the failed request itself; the flow says it in the customer's words, see
    /// `flow::session::explain`.)
    pub fn network(_cause: impl std::fmt::Display) -> Self {
        ClientError::new(NETWORK_ERROR, "The server could not be reached.")
    }

    pub fn is_network(&self) -> bool {
        self.code == NETWORK_ERROR
    }
}

/// The part of the v1 error envelope (`{"error": {...}}`) the flows use. The API's message is
/// for developers: the flows show their own words.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
struct Envelope(ClientError);

impl Read for Envelope {
    fn read(v: &Value) -> Option<Self> {
        let e = v.get("error")?;
        Some(Envelope(ClientError {
            code: e.str("code")?,
            message: e.str("message")?,
            param: e.str("param"),
            missing: e.list("missing").unwrap_or_default(),
            decline_code: e.str("decline_code"),
        }))
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

    /// Sends a JSON body and its bearer token, waiting out rate limits; the answer, parsed.
    /// (Not generic, so that its code exists once in the bundle whatever the types.)
    #[cfg(feature = "hydrate")]
    async fn exchange(
        method: gloo_net::http::Method,
        path: &str,
        bearer: &str,
        body: Option<String>,
    ) -> Result<Value, ClientError> {
        let mut attempt = 0;
        let response = loop {
            let builder = gloo_net::http::RequestBuilder::new(path)
                .method(method.clone())
                .header("Authorization", &format!("Bearer {bearer}"));
            let request = match &body {
                Some(json) => builder
                    .header("Content-Type", "application/json")
                    .body(json.as_str()),
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
        let text = response.text().await.map_err(ClientError::network)?;
        let answer = crate::json::parse(&text).map_err(ClientError::network)?;
        if response.ok() {
            return Ok(answer);
        }
        match Envelope::read(&answer) {
            Some(Envelope(e)) => Err(e),
            None => Err(ClientError::network(crate::json::Invalid)),
        }
    }

    #[cfg(feature = "hydrate")]
    async fn send<T: Read>(
        method: gloo_net::http::Method,
        path: &str,
        bearer: &str,
        body: Option<Body>,
    ) -> Result<T, ClientError> {
        let answer = Self::exchange(method, path, bearer, body.map(Body::end)).await?;
        T::read(&answer).ok_or_else(|| ClientError::network(crate::json::Invalid))
    }

    #[cfg(not(feature = "hydrate"))]
    async fn send<T>(
        _method: Method,
        _path: &str,
        _bearer: &str,
        _body: Option<Body>,
    ) -> Result<T, ClientError> {
        Err(ClientError::network("the client runs in the browser only"))
    }

    async fn call<T: Read>(
        &self,
        method: Method,
        path: &str,
        body: Option<Body>,
    ) -> Result<T, ClientError> {
        Self::send(method, path, &self.token, body).await
    }

    /// `POST /v1/account/flow-events` with an event's JSON; the answer.
    #[cfg(feature = "hydrate")]
    pub async fn flow_event(&self, json: String) -> Result<Value, ClientError> {
        let path = "/v1/account/flow-events";
        Self::exchange(gloo_net::http::Method::POST, path, &self.token, Some(json)).await
    }

    /// `GET /v1/account`.
    pub async fn account(&self) -> Result<Account, ClientError> {
        self.call(Method::GET, "/v1/account", NO_BODY).await
    }

    /// `POST /v1/account/enroll/address-search`: type-ahead.
    pub async fn address_search(&self, query: &str) -> Result<Vec<Address>, ClientError> {
        let body = Body::new().str("query", query).int("limit", 8);
        let path = "/v1/account/enroll/address-search";
        self.call(Method::POST, path, Some(body)).await
    }

    /// `POST /v1/account/enroll/full-address-search`.
    pub async fn full_address_search(
        &self,
        address: &PostalAddress,
    ) -> Result<Vec<Address>, ClientError> {
        let path = "/v1/account/enroll/full-address-search";
        self.call(Method::POST, path, Some(Body::address(address)))
            .await
    }

    /// `POST /v1/account/enroll/esi-id-search`.
    pub async fn esi_id_search(&self, esi_id: &str) -> Result<Address, ClientError> {
        let path = "/v1/account/enroll/esi-id-search";
        let body = Body::new().str("esi_id", esi_id);
        self.call(Method::POST, path, Some(body)).await
    }

    /// `POST /v1/account/enroll/confirm-address`.
    pub async fn confirm_address(&self, esi_id: &str) -> Result<Account, ClientError> {
        let path = "/v1/account/enroll/confirm-address";
        let body = Body::new().str("esi_id", esi_id);
        self.call(Method::POST, path, Some(body)).await
    }

    /// `POST /v1/account/enroll/plans/request` for the confirmed address, each plan with its
    /// yearly estimate for a typical home of `home_size` there.
    pub async fn plans(&self, home_size: Option<&str>) -> Result<Vec<Plan>, ClientError> {
        let path = "/v1/account/enroll/plans/request";
        // `null`: the address's typical home.
        let body = Body::new().opt_str("home_size", home_size);
        let out: Plans = self.call(Method::POST, path, Some(body)).await?;
        Ok(out.plans)
    }

    /// `POST /v1/account/enroll/plans/accept` (the plan's meter, terms accepted); the account
    /// afterwards.
    pub async fn accept_plan(
        &self,
        plan_uuid: &str,
        start_date: &str,
        enrollment_type: &str,
    ) -> Result<Account, ClientError> {
        let body = Body::new()
            .str("plan_uuid", plan_uuid)
            .str("service_start_date", start_date)
            .str("enrollment_type", enrollment_type)
            .bool("terms_accepted", true);
        let path = "/v1/account/enroll/plans/accept";
        let out: Accepted = self.call(Method::POST, path, Some(body)).await?;
        Ok(out.0)
    }

    /// `PATCH /v1/account/enroll/identity`.
    pub async fn update_identity(
        &self,
        phone: &str,
        date_of_birth: &str,
    ) -> Result<(), ClientError> {
        let body = Body::new()
            .str("phone", phone)
            .str("date_of_birth", date_of_birth);
        let path = "/v1/account/enroll/identity";
        let _: () = self.call(Method::PATCH, path, Some(body)).await?;
        Ok(())
    }

    /// `POST /v1/account/enroll/credit-check` (the customer consented).
    pub async fn credit_check(&self, ssn: &str) -> Result<(), ClientError> {
        let body = Body::new().str("ssn", ssn).bool("consent", true);
        let path = "/v1/account/enroll/credit-check";
        let _: () = self.call(Method::POST, path, Some(body)).await?;
        Ok(())
    }

    /// `POST /v1/account/billing/payment-session`.
    pub async fn payment_session(&self) -> Result<PaymentSession, ClientError> {
        let path = "/v1/account/billing/payment-session";
        self.call(Method::POST, path, NO_BODY).await
    }

    /// `POST /processor/v1/payment_methods`: card data to the processor, with the session's
    /// publishable key and single-use client secret; the new `pm_...` id.
    pub async fn create_card(
        session: &PaymentSession,
        card: &CardInput,
    ) -> Result<String, ClientError> {
        let fields = Body::new()
            .str("number", &card.number)
            .int("exp_month", card.exp_month.into())
            .int("exp_year", card.exp_year.into())
            .str("cvc", &card.cvc);
        let body = Body::new()
            .str("client_secret", &session.client_secret)
            .obj("card", fields)
            .obj(
                "billing_details",
                Body::new().str("postal_code", &card.postal_code),
            );
        let path = "/processor/v1/payment_methods";
        let created: Created =
            Self::send(Method::POST, path, &session.publishable_key, Some(body)).await?;
        Ok(created.0)
    }

    /// `POST /v1/account/billing/ensure-payment-method-added`.
    pub async fn attach_payment_method(&self, id: &str) -> Result<PaymentMethod, ClientError> {
        let body = Body::new().str("payment_method_id", id);
        let path = "/v1/account/billing/ensure-payment-method-added";
        self.call(Method::POST, path, Some(body)).await
    }

    /// `GET /v1/account/enroll/summary`: the plan, card and billing address chosen so far.
    pub async fn summary(&self) -> Result<Summary, ClientError> {
        self.call(Method::GET, "/v1/account/enroll/summary", NO_BODY)
            .await
    }

    /// `PUT /v1/account/billing/address`: the service address, or another one.
    pub async fn set_billing_address(
        &self,
        other: Option<&PostalAddress>,
    ) -> Result<BillingAddressOut, ClientError> {
        let body = Body::new().bool("same_as_service_address", other.is_none());
        let body = match other {
            Some(address) => body.obj("address", Body::address(address)),
            None => body.null("address"),
        };
        self.call(Method::PUT, "/v1/account/billing/address", Some(body))
            .await
    }

    /// `GET /v1/account/billing/payment-method` (`resource_missing` when there is none).
    pub async fn payment_method(&self) -> Result<CardOnFile, ClientError> {
        let path = "/v1/account/billing/payment-method";
        self.call(Method::GET, path, NO_BODY).await
    }

    /// `GET /v1/account/billing/invoices`: a page, newest first.
    pub async fn invoices(&self, limit: u32, offset: u32) -> Result<Invoices, ClientError> {
        let path = format!("/v1/account/billing/invoices?limit={limit}&offset={offset}");
        self.call(Method::GET, &path, NO_BODY).await
    }

    /// `GET /v1/account/billing/invoices/{number}`.
    pub async fn invoice(&self, number: &str) -> Result<InvoiceDetail, ClientError> {
        let path = format!("/v1/account/billing/invoices/{number}");
        self.call(Method::GET, &path, NO_BODY).await
    }

    /// `POST /v1/account/billing/invoices/{number}/pay`: pays now with the saved card.
    pub async fn pay_invoice(&self, number: &str) -> Result<Payment, ClientError> {
        let path = format!("/v1/account/billing/invoices/{number}/pay");
        self.call(Method::POST, &path, Some(Body::new())).await
    }

    /// `GET /v1/account/billing/payment-plan`: the plan offered, and the account's plans.
    pub async fn payment_plan(&self) -> Result<PaymentPlans, ClientError> {
        let path = "/v1/account/billing/payment-plan";
        self.call(Method::GET, path, NO_BODY).await
    }

    /// `POST /v1/account/billing/payment-plan`: accepts the plan offered, in `months`
    /// instalments.
    pub async fn accept_payment_plan(&self, months: u32) -> Result<PaymentPlans, ClientError> {
        let path = "/v1/account/billing/payment-plan";
        let body = Body::new().int("months", months.into());
        self.call(Method::POST, path, Some(body)).await
    }

    /// `GET /v1/account/locations/{uuid}/documents`: the documents in force.
    pub async fn documents(&self, location: &str) -> Result<ActiveDocuments, ClientError> {
        let path = format!("/v1/account/locations/{location}/documents");
        self.call(Method::GET, &path, NO_BODY).await
    }

    /// `GET /v1/account/locations/{uuid}/all-documents`: superseded and queued ones too.
    pub async fn all_documents(&self, location: &str) -> Result<Documents, ClientError> {
        let path = format!("/v1/account/locations/{location}/all-documents");
        self.call(Method::GET, &path, NO_BODY).await
    }

    /// `POST /v1/account/locations/{uuid}/renewal-plans/request`.
    pub async fn renewal_plans(&self, location: &str) -> Result<Vec<Plan>, ClientError> {
        let path = format!("/v1/account/locations/{location}/renewal-plans/request");
        let out: Plans = self.call(Method::POST, &path, Some(Body::new())).await?;
        Ok(out.plans)
    }

    /// `POST /v1/account/locations/{uuid}/renewal-plans/accept` (terms accepted).
    pub async fn accept_renewal(
        &self,
        location: &str,
        plan_uuid: &str,
        start_date: &str,
    ) -> Result<Contract, ClientError> {
        let body = Body::new()
            .str("plan_uuid", plan_uuid)
            .str("service_start_date", start_date)
            .bool("terms_accepted", true);
        let path = format!("/v1/account/locations/{location}/renewal-plans/accept");
        let out: Renewed = self.call(Method::POST, &path, Some(body)).await?;
        Ok(out.0)
    }

    /// `POST /v1/account/deposit/pay`: pays the deposit a credit review asked for with the
    /// saved card.
    #[cfg(any(feature = "ssr", feature = "enrollment"))]
    pub async fn pay_deposit(&self) -> Result<(), ClientError> {
        self.call(Method::POST, "/v1/account/deposit/pay", Some(Body::new()))
            .await
    }

    /// `POST /v1/account/enroll/finalize`.
    pub async fn finalize(&self) -> Result<Account, ClientError> {
        let path = "/v1/account/enroll/finalize";
        self.call(Method::POST, path, Some(Body::new())).await
    }
}

// The parts of answers the flows read of answers that wrap them (the rest is never read).

struct Accepted(Account);

impl Read for Accepted {
    fn read(v: &Value) -> Option<Self> {
        v.read("account").map(Accepted)
    }
}

struct Renewed(Contract);

impl Read for Renewed {
    fn read(v: &Value) -> Option<Self> {
        v.read("contract").map(Renewed)
    }
}

/// The processor's new payment method: its id.
struct Created(String);

impl Read for Created {
    fn read(v: &Value) -> Option<Self> {
        v.str("id").map(Created)
    }
}

const NO_BODY: Option<Body> = None;

/// A request body: one JSON object, written field by field. The bodies are a few flat objects
/// of text, whole numbers and booleans; written here rather than by serde_json, whose
/// serializer (with its escaping tables, number formatting and error type) was code in every
/// flow's bundle.
#[derive(Debug)]
struct Body(String);

impl Body {
    fn new() -> Self {
        Body("{".to_owned())
    }

    fn key(&mut self, key: &str) {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        quote(&mut self.0, key);
        self.0.push(':');
    }

    fn str(mut self, key: &str, value: &str) -> Self {
        self.key(key);
        quote(&mut self.0, value);
        self
    }

    /// The text, or `null`.
    fn opt_str(self, key: &str, value: Option<&str>) -> Self {
        match value {
            Some(value) => self.str(key, value),
            None => self.null(key),
        }
    }

    fn null(mut self, key: &str) -> Self {
        self.key(key);
        self.0.push_str("null");
        self
    }

    fn int(mut self, key: &str, value: i64) -> Self {
        self.key(key);
        self.0.push_str(&value.to_string());
        self
    }

    fn bool(mut self, key: &str, value: bool) -> Self {
        self.key(key);
        self.0.push_str(if value { "true" } else { "false" });
        self
    }

    fn obj(mut self, key: &str, value: Body) -> Self {
        self.key(key);
        self.0.push_str(&value.end());
        self
    }

    /// `api::PostalAddress`.
    fn address(a: &PostalAddress) -> Self {
        Body::new()
            .str("address_1", &a.address_1)
            .opt_str("address_2", a.address_2.as_deref())
            .str("city", &a.city)
            .str("state", &a.state)
            .str("postal_code", &a.postal_code)
    }

    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    fn end(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

/// `text` as a JSON string: quotes, backslashes and control characters escaped.
fn quote(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let b = u32::from(c) as usize;
                out.push_str("\\u00");
                out.push(char::from(HEX[b >> 4]));
                out.push(char::from(HEX[b & 15]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each body reads back as the JSON object it stands for.
    #[test]
    fn bodies_are_json() {
        let address = PostalAddress {
            address_1: "1 \"Main\" St\\ \u{1}\n".to_owned(),
            address_2: None,
            city: "Austin é".to_owned(),
            state: "TX".to_owned(),
            postal_code: "78701".to_owned(),
        };
        let body = Body::new()
            .bool("same_as_service_address", false)
            .obj("address", Body::address(&address))
            .opt_str("home_size", Some("large"))
            .null("other")
            .int("exp_year", -2030)
            .end();
        let read: serde_json::Value = serde_json::from_str(&body).expect(&body);
        assert_eq!(
            read,
            serde_json::json!({
                "same_as_service_address": false,
                "address": address,
                "home_size": "large",
                "other": null,
                "exp_year": -2030,
            })
        );
        assert_eq!(Body::new().end(), "{}");
    }

    /// The v1 error envelope: the flows' fields, the optional ones defaulted.
    #[test]
    fn errors_read() {
        let text = r#"{"error":{"type":"invalid_request_error","code":"enrollment_incomplete","message":"m","missing":["plan"]}}"#;
        let Ok(Envelope(e)) = crate::json::from_str::<Envelope>(text) else {
            panic!("not read: {text}");
        };
        assert_eq!(
            e,
            ClientError {
                missing: vec!["plan".to_owned()],
                ..ClientError::new("enrollment_incomplete", "m")
            }
        );
        assert!(crate::json::from_str::<Envelope>(r#"{"error":{"code":"x"}}"#).is_err());
    }
}
