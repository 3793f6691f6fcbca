//! The card processor: setup sessions for the browser's card component, the card behind a
//! payment method, and off-session charges of a saved payment method.
//!
//! Sandbox apps use `BuiltInProcessor`, the test-mode processor this service runs itself
//! (`/processor/v1/payment_methods`, the documented test cards). Live apps use
//! `RemoteProcessor`, an adapter for the real processor's REST API (form-encoded requests,
//! `Authorization: Bearer sk_...`) with the app's own keys; the processor's customer of each
//! account is kept in `processor_customers`.
//!
//! `PaymentProcessor` is a trait whose methods return `impl Future + Send` (so that handlers
//! stay `Send` without boxing), and `Processor` dispatches over the two implementations with an
//! enum: the set is closed and known here, and `processor_for` picks one per app.

use std::{fmt, future::Future, time::Duration};

use chrono::{DateTime, Utc};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::{
    clock::Clock,
    config::{Config, Secret},
    crypto::PiiKey,
    domain::{cards, tokens},
    store::{self, apps::AppRow, payments::CardRow, Db},
};

/// How long a built-in payment session's client secret can be used (and how long a remote
/// setup session is offered for).
pub const SESSION_TTL: chrono::Duration = chrono::Duration::hours(1);

/// How long the service waits for the real processor.
const REMOTE_TIMEOUT: Duration = Duration::from_secs(10);

/// What the browser's card component needs.
#[derive(Clone, PartialEq, Eq)]
pub struct SetupSession {
    pub client_secret: String,
    pub publishable_key: String,
    pub expires_at: DateTime<Utc>,
}

impl fmt::Debug for SetupSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SetupSession")
            .field("client_secret", &"[redacted]")
            .field("publishable_key", &self.publishable_key)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// An off-session charge of a saved payment method.
#[derive(Debug, Clone)]
pub struct ChargeRequest {
    pub account_uuid: Uuid,
    pub payment_method_id: String,
    pub amount_cents: i64,
    /// The same key answers the same charge, however often it is sent.
    pub idempotency_key: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChargeOutcome {
    Succeeded {
        payment_id: String,
    },
    Declined {
        decline_code: String,
    },
    /// The card's bank wants the customer to confirm this payment (strong customer
    /// authentication): it waits at the processor until they do it in its component, and its
    /// webhook then says how it ended.
    NeedsAuthentication {
        payment_id: String,
    },
}

/// A refund of (part of) a succeeded charge.
#[derive(Debug, Clone)]
pub struct RefundRequest {
    /// The processor's id of the payment (`pi_...`).
    pub payment_id: String,
    pub amount_cents: i64,
    /// The same key answers the same refund, however often it is sent.
    pub idempotency_key: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefundOutcome {
    Refunded {
        refund_id: String,
    },
    /// The processor would not refund it (already refunded, more than is left, a failed
    /// payment): its own words, shown to the operator.
    Refused {
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessorError {
    /// No such payment method for this account.
    NotFound,
    /// This app cannot take cards (no keys, or no processor API configured).
    NotConfigured(&'static str),
    /// The processor did not answer usably; trying later may work. Never holds a key.
    Unavailable(String),
    /// This service's own database failed.
    Database(String),
}

impl fmt::Display for ProcessorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessorError::NotFound => f.write_str("no such payment method"),
            ProcessorError::NotConfigured(why) => f.write_str(why),
            ProcessorError::Unavailable(why) => write!(f, "payment processor unavailable: {why}"),
            ProcessorError::Database(why) => write!(f, "database: {why}"),
        }
    }
}

impl std::error::Error for ProcessorError {}

pub type ProcessorResult<T> = Result<T, ProcessorError>;

pub trait PaymentProcessor: Send + Sync {
    /// A setup session for the account's next card.
    fn start_session(
        &self,
        account_uuid: Uuid,
    ) -> impl Future<Output = ProcessorResult<SetupSession>> + Send;

    /// The card behind a payment method created for this account (`NotFound` otherwise).
    fn read_card(
        &self,
        account_uuid: Uuid,
        payment_method_id: &str,
    ) -> impl Future<Output = ProcessorResult<CardRow>> + Send;

    /// Charges a saved payment method off-session.
    fn charge(
        &self,
        request: &ChargeRequest,
    ) -> impl Future<Output = ProcessorResult<ChargeOutcome>> + Send;

    /// Refunds (part of) a succeeded payment.
    fn refund(
        &self,
        request: &RefundRequest,
    ) -> impl Future<Output = ProcessorResult<RefundOutcome>> + Send;

    /// The client secret the processor's component confirms a payment waiting for the
    /// customer's authentication with; `None` once it no longer waits (done, failed, cancelled).
    fn authentication_secret(
        &self,
        payment_id: &str,
    ) -> impl Future<Output = ProcessorResult<Option<String>>> + Send;
}

/// The processor of one app.
#[derive(Debug)]
pub enum Processor {
    BuiltIn(BuiltInProcessor),
    Remote(RemoteProcessor),
}

/// The processor of `app`: the built-in one for sandbox apps, the real one with the app's own
/// keys for live apps.
pub async fn processor_for(
    db: &Db,
    clock: &Clock,
    config: &Config,
    pii: &PiiKey,
    http: &reqwest::Client,
    app: &AppRow,
) -> ProcessorResult<Processor> {
    if app.environment == app::api::Environment::Sandbox.as_str() {
        return Ok(Processor::BuiltIn(BuiltInProcessor {
            db: db.clone(),
            clock: clock.clone(),
            app_uuid: app.uuid,
            publishable_key: app.payment_publishable_key.clone(),
        }));
    }
    let base = config
        .payment_processor_api_base
        .as_deref()
        .map(|b| b.trim_end_matches('/').to_owned())
        .ok_or(ProcessorError::NotConfigured(
            "Card payments are not available: no payment processor is configured",
        ))?;
    let sealed = store::payments::app_secret_key_sealed(db, app.uuid)
        .await
        .map_err(database)?
        .ok_or(ProcessorError::NotConfigured(
            "Card payments are not available: this app has no payment processor keys yet",
        ))?;
    let secret = pii
        .open(&sealed)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or(ProcessorError::NotConfigured(
            "Card payments are not available: this app's payment processor keys cannot be read",
        ))?;
    Ok(Processor::Remote(RemoteProcessor {
        db: db.clone(),
        http: http.clone(),
        clock: clock.clone(),
        app_uuid: app.uuid,
        base,
        publishable_key: app.payment_publishable_key.clone(),
        secret_key: Secret::new(secret),
    }))
}

impl PaymentProcessor for Processor {
    async fn start_session(&self, account_uuid: Uuid) -> ProcessorResult<SetupSession> {
        match self {
            Processor::BuiltIn(p) => p.start_session(account_uuid).await,
            Processor::Remote(p) => p.start_session(account_uuid).await,
        }
    }

    async fn read_card(
        &self,
        account_uuid: Uuid,
        payment_method_id: &str,
    ) -> ProcessorResult<CardRow> {
        match self {
            Processor::BuiltIn(p) => p.read_card(account_uuid, payment_method_id).await,
            Processor::Remote(p) => p.read_card(account_uuid, payment_method_id).await,
        }
    }

    async fn charge(&self, request: &ChargeRequest) -> ProcessorResult<ChargeOutcome> {
        match self {
            Processor::BuiltIn(p) => p.charge(request).await,
            Processor::Remote(p) => p.charge(request).await,
        }
    }

    async fn refund(&self, request: &RefundRequest) -> ProcessorResult<RefundOutcome> {
        match self {
            Processor::BuiltIn(p) => p.refund(request).await,
            Processor::Remote(p) => p.refund(request).await,
        }
    }

    async fn authentication_secret(&self, payment_id: &str) -> ProcessorResult<Option<String>> {
        match self {
            Processor::BuiltIn(p) => p.authentication_secret(payment_id).await,
            Processor::Remote(p) => p.authentication_secret(payment_id).await,
        }
    }
}

fn database(e: sqlx::Error) -> ProcessorError {
    ProcessorError::Database(e.to_string())
}

/// The built-in test-mode processor: sessions and payment methods in this service's database.
pub struct BuiltInProcessor {
    db: Db,
    clock: Clock,
    app_uuid: Uuid,
    publishable_key: String,
}

impl fmt::Debug for BuiltInProcessor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuiltInProcessor")
            .field("app_uuid", &self.app_uuid)
            .finish_non_exhaustive()
    }
}

impl PaymentProcessor for BuiltInProcessor {
    async fn start_session(&self, account_uuid: Uuid) -> ProcessorResult<SetupSession> {
        let now = self.clock.now();
        let expires_at = now + SESSION_TTL;
        let secret = tokens::issue_client_secret();
        let mut tx = self.db.begin().await.map_err(database)?;
        store::payments::insert_session(
            &mut tx,
            self.app_uuid,
            account_uuid,
            &secret.hash,
            expires_at,
            now,
        )
        .await
        .map_err(database)?;
        tx.commit().await.map_err(database)?;
        Ok(SetupSession {
            client_secret: secret.plain,
            publishable_key: self.publishable_key.clone(),
            expires_at,
        })
    }

    async fn read_card(
        &self,
        account_uuid: Uuid,
        payment_method_id: &str,
    ) -> ProcessorResult<CardRow> {
        store::payments::processor_payment_method(
            &self.db,
            self.app_uuid,
            account_uuid,
            payment_method_id,
        )
        .await
        .map_err(database)?
        .ok_or(ProcessorError::NotFound)
    }

    async fn charge(&self, request: &ChargeRequest) -> ProcessorResult<ChargeOutcome> {
        let charges_fail = store::payments::processor_charges_fail(
            &self.db,
            self.app_uuid,
            &request.payment_method_id,
        )
        .await
        .map_err(database)?
        .ok_or(ProcessorError::NotFound)?;
        Ok(match cards::test_charge_decline(charges_fail) {
            Some(code) => ChargeOutcome::Declined {
                decline_code: code.to_owned(),
            },
            None => {
                // The same idempotency key names the same payment.
                let digest = Sha256::digest(
                    format!("{}:{}", self.app_uuid, request.idempotency_key).as_bytes(),
                );
                ChargeOutcome::Succeeded {
                    payment_id: format!("pi_{}", &format!("{digest:x}")[..24]),
                }
            }
        })
    }

    async fn refund(&self, request: &RefundRequest) -> ProcessorResult<RefundOutcome> {
        // The built-in processor moves no money: a refund is its id, the same for the same key.
        let digest = Sha256::digest(
            format!("{}:refund:{}", self.app_uuid, request.idempotency_key).as_bytes(),
        );
        Ok(RefundOutcome::Refunded {
            refund_id: format!("re_{}", &format!("{digest:x}")[..24]),
        })
    }
    async fn authentication_secret(&self, _payment_id: &str) -> ProcessorResult<Option<String>> {
        // Its test cards never ask for the customer's authentication.
        Ok(None)
    }
}

/// The real processor's REST API with one app's keys.
pub struct RemoteProcessor {
    db: Db,
    http: reqwest::Client,
    clock: Clock,
    app_uuid: Uuid,
    base: String,
    publishable_key: String,
    secret_key: Secret,
}

impl fmt::Debug for RemoteProcessor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteProcessor")
            .field("app_uuid", &self.app_uuid)
            .field("base", &self.base)
            .field("secret_key", &self.secret_key)
            .finish_non_exhaustive()
    }
}

/// The HTTP client of one server's calls to the processor. Each server builds its own: its
/// pooled connections are driven by the runtime that opened them, so a client shared by two
/// runtimes (a process that starts several servers) can pick a connection whose runtime is
/// gone and fail a request that would have gone through.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(REMOTE_TIMEOUT)
        .connect_timeout(REMOTE_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent("Switchboard/1")
        .build()
        // Building fails only without a TLS backend; the default client still works.
        .unwrap_or_default()
}

#[derive(Deserialize)]
struct IdOut {
    id: String,
}

#[derive(Deserialize)]
struct SetupIntentOut {
    client_secret: String,
}

#[derive(Deserialize)]
struct RemoteCard {
    brand: String,
    last4: String,
    exp_month: i32,
    exp_year: i32,
    #[serde(default)]
    fingerprint: Option<String>,
}

#[derive(Deserialize, Default)]
struct RemoteAddress {
    #[serde(default)]
    postal_code: Option<String>,
}

#[derive(Deserialize, Default)]
struct RemoteBillingDetails {
    #[serde(default)]
    address: Option<RemoteAddress>,
}

#[derive(Deserialize)]
struct RemotePaymentMethod {
    id: String,
    #[serde(default)]
    customer: Option<String>,
    card: Option<RemoteCard>,
    #[serde(default)]
    billing_details: Option<RemoteBillingDetails>,
}

#[derive(Deserialize)]
struct PaymentIntentOut {
    id: String,
    status: String,
    #[serde(default)]
    client_secret: Option<String>,
}

#[derive(Deserialize)]
struct ErrorOut {
    error: RemoteError,
}

#[derive(Deserialize)]
struct RemoteError {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    decline_code: Option<String>,
    #[serde(default)]
    message: Option<String>,
    /// The payment a refused charge made, when the processor made one.
    #[serde(default)]
    payment_intent: Option<IdOut>,
}

fn request_failed(e: reqwest::Error) -> ProcessorError {
    // Neither the URL nor the request (with its key) goes into the reason.
    ProcessorError::Unavailable(format!("request failed: {}", e.without_url()))
}

fn unexpected(status: reqwest::StatusCode) -> ProcessorError {
    if matches!(
        status,
        reqwest::StatusCode::UNAUTHORIZED | reqwest::StatusCode::FORBIDDEN
    ) {
        return ProcessorError::Unavailable(format!(
            "the processor refused this app's secret key ({status}); set it again with \
             `apps set-payment-keys`"
        ));
    }
    ProcessorError::Unavailable(format!("the processor answered {status}"))
}

/// Processor ids are letters, digits and underscores; anything else is no id of theirs.
fn plausible_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 255 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl RemoteProcessor {
    fn post(&self, path: &str, form: &[(&str, &str)]) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .bearer_auth(self.secret_key.expose())
            .form(form)
    }

    async fn json<T: serde::de::DeserializeOwned>(resp: reqwest::Response) -> ProcessorResult<T> {
        let status = resp.status();
        if !status.is_success() {
            return Err(unexpected(status));
        }
        resp.json::<T>().await.map_err(|_| {
            ProcessorError::Unavailable("the processor's answer was not understood".to_owned())
        })
    }

    /// Makes a payment method the customer's.
    async fn attach(&self, payment_method_id: &str, customer: &str) -> ProcessorResult<()> {
        let resp = self
            .post(
                &format!("/v1/payment_methods/{payment_method_id}/attach"),
                &[("customer", customer)],
            )
            .send()
            .await
            .map_err(request_failed)?;
        let status = resp.status();
        if status.is_client_error() && !matches!(status.as_u16(), 401 | 403 | 429) {
            return Err(ProcessorError::NotFound);
        }
        Self::json::<IdOut>(resp).await.map(|_| ())
    }

    /// The processor's customer of the account, created on first use.
    async fn customer(&self, account_uuid: Uuid, create: bool) -> ProcessorResult<Option<String>> {
        if let Some(id) = store::payments::processor_customer(&self.db, self.app_uuid, account_uuid)
            .await
            .map_err(database)?
        {
            return Ok(Some(id));
        }
        if !create {
            return Ok(None);
        }
        let account = account_uuid.to_string();
        let resp = self
            .post(
                "/v1/customers",
                &[("metadata[switchboard_account_uuid]", account.as_str())],
            )
            // Two sessions started at once create one customer.
            .header(
                "Idempotency-Key",
                format!("customer-{}-{account}", self.app_uuid),
            )
            .send()
            .await
            .map_err(request_failed)?;
        let created: IdOut = Self::json(resp).await?;
        let mut tx = self.db.begin().await.map_err(database)?;
        let id = store::payments::insert_processor_customer(
            &mut tx,
            self.app_uuid,
            account_uuid,
            &created.id,
            self.clock.now(),
        )
        .await
        .map_err(database)?;
        tx.commit().await.map_err(database)?;
        Ok(Some(id))
    }
}

impl PaymentProcessor for RemoteProcessor {
    async fn start_session(&self, account_uuid: Uuid) -> ProcessorResult<SetupSession> {
        let customer = self
            .customer(account_uuid, true)
            .await?
            .ok_or(ProcessorError::NotFound)?;
        let resp = self
            .post(
                "/v1/setup_intents",
                &[
                    ("customer", customer.as_str()),
                    ("usage", "off_session"),
                    ("payment_method_types[]", "card"),
                ],
            )
            .send()
            .await
            .map_err(request_failed)?;
        let intent: SetupIntentOut = Self::json(resp).await?;
        Ok(SetupSession {
            client_secret: intent.client_secret,
            publishable_key: self.publishable_key.clone(),
            expires_at: self.clock.now() + SESSION_TTL,
        })
    }

    async fn read_card(
        &self,
        account_uuid: Uuid,
        payment_method_id: &str,
    ) -> ProcessorResult<CardRow> {
        if !plausible_id(payment_method_id) {
            return Err(ProcessorError::NotFound);
        }
        let Some(customer) = self.customer(account_uuid, false).await? else {
            return Err(ProcessorError::NotFound);
        };
        let resp = self
            .http
            .get(format!(
                "{}/v1/payment_methods/{payment_method_id}",
                self.base
            ))
            .bearer_auth(self.secret_key.expose())
            .send()
            .await
            .map_err(request_failed)?;
        if resp.status() == reqwest::StatusCode::NOT_FOUND {
            return Err(ProcessorError::NotFound);
        }
        let pm: RemotePaymentMethod = Self::json(resp).await?;
        match pm.customer.as_deref() {
            Some(c) if c == customer => {}
            // Confirmed in the browser but no customer's yet: it becomes this account's
            // customer's, so that off-session charges may use it. The processor refuses to
            // attach one that is already another customer's.
            None => self.attach(&pm.id, &customer).await?,
            Some(_) => return Err(ProcessorError::NotFound),
        }
        let card = pm.card.ok_or(ProcessorError::NotFound)?;
        let postal_code = pm
            .billing_details
            .and_then(|b| b.address)
            .and_then(|a| a.postal_code)
            .filter(|p| !p.trim().is_empty());
        Ok(CardRow {
            id: pm.id,
            brand: card.brand,
            last4: card.last4,
            exp_month: card.exp_month,
            exp_year: card.exp_year,
            postal_code,
            fingerprint: card.fingerprint.unwrap_or_default(),
        })
    }

    async fn charge(&self, request: &ChargeRequest) -> ProcessorResult<ChargeOutcome> {
        if !plausible_id(&request.payment_method_id) {
            return Err(ProcessorError::NotFound);
        }
        let customer = self
            .customer(request.account_uuid, false)
            .await?
            .ok_or(ProcessorError::NotFound)?;
        let amount = request.amount_cents.to_string();
        let resp = self
            .post(
                "/v1/payment_intents",
                &[
                    ("amount", amount.as_str()),
                    ("currency", "usd"),
                    ("customer", customer.as_str()),
                    ("payment_method", request.payment_method_id.as_str()),
                    ("confirm", "true"),
                    ("off_session", "true"),
                ],
            )
            .header("Idempotency-Key", request.idempotency_key.as_str())
            .send()
            .await
            .map_err(request_failed)?;
        let status = resp.status();
        if status == reqwest::StatusCode::PAYMENT_REQUIRED {
            // 402 is the processor's "the card did not pay": a decline, whichever type of
            // error it files it under.
            let body: ErrorOut = resp.json().await.map_err(|_| unexpected(status))?;
            // An off-session charge the bank wants confirmed: the processor keeps the payment
            // for the customer to authenticate.
            if body.error.code.as_deref() == Some("authentication_required") {
                if let Some(intent) = body.error.payment_intent.filter(|i| plausible_id(&i.id)) {
                    return Ok(ChargeOutcome::NeedsAuthentication {
                        payment_id: intent.id,
                    });
                }
            }
            let decline_code = body
                .error
                .decline_code
                .or(body.error.code)
                .filter(|c| plausible_id(c))
                .unwrap_or_else(|| "card_declined".to_owned());
            return Ok(ChargeOutcome::Declined { decline_code });
        }
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(ProcessorError::NotFound);
        }
        let intent: PaymentIntentOut = Self::json(resp).await?;
        match intent.status.as_str() {
            "succeeded" => Ok(ChargeOutcome::Succeeded {
                payment_id: intent.id,
            }),
            "requires_action" if plausible_id(&intent.id) => {
                Ok(ChargeOutcome::NeedsAuthentication {
                    payment_id: intent.id,
                })
            }
            "requires_action" | "requires_payment_method" => Ok(ChargeOutcome::Declined {
                decline_code: "authentication_required".to_owned(),
            }),
            other => Err(ProcessorError::Unavailable(format!(
                "the payment is {other}"
            ))),
        }
    }

    async fn refund(&self, request: &RefundRequest) -> ProcessorResult<RefundOutcome> {
        if !plausible_id(&request.payment_id) {
            return Err(ProcessorError::NotFound);
        }
        let amount = request.amount_cents.to_string();
        let resp = self
            .post(
                "/v1/refunds",
                &[
                    ("payment_intent", request.payment_id.as_str()),
                    ("amount", amount.as_str()),
                ],
            )
            .header("Idempotency-Key", request.idempotency_key.as_str())
            .send()
            .await
            .map_err(request_failed)?;
        let status = resp.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(ProcessorError::NotFound);
        }
        if status == reqwest::StatusCode::BAD_REQUEST {
            // The processor's refusal (more than is left, already refunded, a failed payment).
            let reason = resp
                .json::<ErrorOut>()
                .await
                .ok()
                .and_then(|b| b.error.message)
                .map(|m| m.chars().take(200).collect::<String>())
                .unwrap_or_else(|| "The processor refused the refund.".to_owned());
            return Ok(RefundOutcome::Refused { reason });
        }
        let refund: IdOut = Self::json(resp).await?;
        if !plausible_id(&refund.id) {
            return Err(ProcessorError::Unavailable(
                "the processor's answer was not understood".to_owned(),
            ));
        }
        Ok(RefundOutcome::Refunded {
            refund_id: refund.id,
        })
    }
    async fn authentication_secret(&self, payment_id: &str) -> ProcessorResult<Option<String>> {
        if !plausible_id(payment_id) {
            return Err(ProcessorError::NotFound);
        }
        let resp = self
            .http
            .get(format!("{}/v1/payment_intents/{payment_id}", self.base))
            .bearer_auth(self.secret_key.expose())
            .send()
            .await
            .map_err(request_failed)?;
        if resp.status() == reqwest::StatusCode::NOT_FOUND {
            return Err(ProcessorError::NotFound);
        }
        let intent: PaymentIntentOut = Self::json(resp).await?;
        Ok(intent
            .client_secret
            .filter(|_| intent.status == "requires_action"))
    }
}
