//! Webhook delivery: the job that sends one event to one endpoint, signed the Standard Webhooks
//! way, and records the attempt, the retry, or the endpoint's disabling (rules in
//! `domain::webhooks`). Endpoint management is in `http::webhooks`; the fan-out of an event to
//! its endpoints happens in `store::events::insert_event`, in the event's transaction.

use std::{
    net::{IpAddr, SocketAddr},
    sync::Arc,
    time::Duration as StdDuration,
};

use app::api::{background::Event, Environment, Timestamp};
use axum::http::{HeaderName, HeaderValue};
use chrono::Utc;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use uuid::Uuid;

use crate::{
    config::Config,
    crypto::PiiKey,
    domain::webhooks::{
        after_failure, judge_response, next_attempt_at, response_excerpt, signature_header,
        target_allowed, AttemptResult, DeliveryStatus, EndpointVerdict, WebhookSecret,
        RESPONSE_EXCERPT_BYTES,
    },
    outbox::{JobRun, Outcome},
    store::{self, events::EventRow, webhooks::DeliveryRow},
};

/// The HTTP clients deliveries go out with. Every address a delivery connects to is checked
/// after DNS resolution (`Guarded`), so that a name cannot point a delivery at the service's
/// own network: live apps reach public addresses only; sandbox apps too, unless the operator
/// allows private targets (`webhooks.allow_private_targets`, for local development), and never
/// link-local ones (cloud metadata). URLs naming an address are checked before sending.
#[derive(Clone)]
pub struct Sender {
    sandbox: reqwest::Client,
    live: reqwest::Client,
    allow_private: bool,
}

impl Sender {
    pub fn new(config: &Config) -> anyhow::Result<Sender> {
        let timeout = StdDuration::from_millis(config.jobs.webhook_timeout_ms);
        // Deliveries go out directly, never through an HTTP proxy of the environment (which
        // would resolve names itself, past the guard above). Redirects are failures.
        let builder = || {
            reqwest::Client::builder()
                .timeout(timeout)
                .connect_timeout(timeout)
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .user_agent("Switchboard-Webhooks/1")
                .pool_max_idle_per_host(256)
        };
        let allow_private = config.webhooks_allow_private_targets();
        Ok(Sender {
            sandbox: builder()
                .dns_resolver(Arc::new(Guarded { allow_private }))
                .build()?,
            live: builder()
                .dns_resolver(Arc::new(Guarded {
                    allow_private: false,
                }))
                .build()?,
            allow_private,
        })
    }

    fn client(&self, environment: Environment) -> &reqwest::Client {
        match environment {
            Environment::Sandbox => &self.sandbox,
            Environment::Live => &self.live,
        }
    }

    /// Whether a delivery of an app of `environment` may go to `url`, as far as its text tells
    /// (an address in it; names are checked when they resolve).
    fn may_send_to(&self, url: &str, environment: Environment) -> bool {
        let allow_private = environment == Environment::Sandbox && self.allow_private;
        let ip = match url::Url::parse(url)
            .ok()
            .and_then(|u| u.host().map(|h| h.to_owned()))
        {
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
            Some(url::Host::Domain(_)) => return true,
            None => return false,
        };
        target_allowed(ip, allow_private)
    }
}

/// Resolves names to the addresses deliveries may reach only.
struct Guarded {
    allow_private: bool,
}

impl Resolve for Guarded {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0))
                .await?
                .filter(|a| target_allowed(a.ip(), allow_private))
                .collect();
            if addrs.is_empty() {
                return Err("the endpoint's host has no address deliveries may reach".into());
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// An event as listed and delivered.
pub fn render_event(row: &EventRow, environment: Environment) -> Event {
    Event {
        uuid: row.uuid,
        kind: row.kind.clone(),
        created_at: Timestamp(row.created_at),
        environment,
        data: serde_json::from_str(&row.data).unwrap_or(serde_json::Value::Null),
    }
}

/// One attempt of a delivery job: the event `event_uuid` to the endpoint `endpoint_uuid`.
/// The endpoint's secrets are stored sealed with `pii`.
pub async fn deliver(
    ctx: &JobRun,
    sender: &Sender,
    pii: &PiiKey,
    (endpoint_uuid, event_uuid): (Uuid, Uuid),
) -> anyhow::Result<()> {
    let endpoint = store::webhooks::endpoint_by_uuid(&ctx.db, endpoint_uuid).await?;
    let Some(endpoint) = endpoint.filter(|e| !e.disabled) else {
        // Deleted or disabled since: nothing to send (recover re-sends once re-enabled).
        return Ok(ctx
            .finish_alone(&Outcome::Failed("endpoint disabled or deleted".into()))
            .await?);
    };
    let Some(event) = store::events::event_by_uuid(&ctx.db, event_uuid).await? else {
        return Ok(ctx
            .finish_alone(&Outcome::Failed("event not found".into()))
            .await?);
    };
    let environment = store::apps::app_by_uuid(&ctx.db, event.app_uuid)
        .await?
        .map_or(Environment::Live, |a| a.environment_kind());
    let body = serde_json::to_vec(&render_event(&event, environment))?;

    let service_now = ctx.service_clock.now();
    let mut secrets = Vec::with_capacity(2);
    secrets.extend(WebhookSecret::parse(&pii.open_text(&endpoint.secret)?));
    if endpoint
        .previous_secret_expires_at
        .is_some_and(|until| until > service_now)
    {
        if let Some(previous) = endpoint.previous_secret.as_deref() {
            secrets.extend(WebhookSecret::parse(&pii.open_text(previous)?));
        }
    }
    let msg_id = event.uuid.to_string();
    // The signature's timestamp is the real time of sending, not the (possibly simulated)
    // clock: receivers compare it with their own clock to refuse replays.
    let timestamp = Utc::now().timestamp();
    let signature = signature_header(
        &secrets.iter().collect::<Vec<_>>(),
        &msg_id,
        timestamp,
        &body,
    );

    let attempted_at = ctx.now();
    let sent = if !sender.may_send_to(&endpoint.url, environment) {
        Err(Blocked)
    } else {
        sender
            .client(environment)
            .post(&endpoint.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(hname("webhook-id"), hvalue(&msg_id)?)
            .header(hname("webhook-timestamp"), hvalue(&timestamp.to_string())?)
            .header(hname("webhook-signature"), hvalue(&signature)?)
            .body(body)
            .send()
            .await
            .map_err(NotSent::from)
    };
    let (result, response_status, error, excerpt) = match sent {
        Ok(resp) => {
            let status = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let head = drain(resp).await;
            let result = judge_response(status, retry_after.as_deref(), attempted_at);
            let error = (result != AttemptResult::Succeeded).then(|| format!("HTTP {status}"));
            (
                result,
                Some(i32::from(status)),
                error,
                response_excerpt(&head),
            )
        }
        Err(e) => (
            AttemptResult::Failed { retry_after: None },
            None,
            Some(e.reason()),
            None,
        ),
    };

    let attempt = ctx.attempt();
    let mut tx = ctx.db.begin().await?;
    let (outcome, next) = match &result {
        AttemptResult::Succeeded => {
            store::webhooks::clear_failing(&mut tx, endpoint.uuid).await?;
            (Outcome::Done, None)
        }
        failed => {
            let failing_since =
                store::webhooks::mark_failing(&mut tx, endpoint.uuid, service_now).await?;
            match after_failure(failed, failing_since, service_now) {
                EndpointVerdict::Disable(reason) => {
                    store::webhooks::disable_endpoint(&mut tx, endpoint.uuid, reason.as_str())
                        .await?;
                    (
                        Outcome::Failed(format!("endpoint disabled: {}", reason.as_str())),
                        None,
                    )
                }
                EndpointVerdict::KeepTrying => {
                    let retry_after = match failed {
                        AttemptResult::Failed { retry_after } => *retry_after,
                        _ => None,
                    };
                    match next_attempt_at(attempt, attempted_at, retry_after) {
                        Some(at) => (
                            Outcome::RetryAt(at, error.clone().unwrap_or_default()),
                            Some(at),
                        ),
                        None => (Outcome::Failed("retries exhausted".into()), None),
                    }
                }
            }
        }
    };
    store::webhooks::insert_delivery(
        &mut tx,
        &DeliveryRow {
            uuid: Uuid::new_v4(),
            endpoint_uuid: endpoint.uuid,
            event_uuid: event.uuid,
            event_type: event.kind.clone(),
            attempt: ctx.job.attempts,
            status: if result == AttemptResult::Succeeded {
                DeliveryStatus::Succeeded
            } else {
                DeliveryStatus::Failed
            },
            response_status,
            error,
            attempted_at,
            next_attempt_at: next,
            response_excerpt: excerpt,
        },
    )
    .await?;
    if ctx.finish(&mut tx, &outcome).await? {
        tx.commit().await?;
    }
    Ok(())
}

/// Reads up to 64 KiB of an answer, so that its connection can be reused, and returns its
/// first `RESPONSE_EXCERPT_BYTES` (what the delivery log keeps).
async fn drain(mut resp: reqwest::Response) -> Vec<u8> {
    let mut head = Vec::new();
    let mut read = 0;
    while let Ok(Some(chunk)) = resp.chunk().await {
        let room = RESPONSE_EXCERPT_BYTES.saturating_sub(head.len());
        head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        read += chunk.len();
        if read > 64 * 1024 {
            break;
        }
    }
    head
}

fn hname(name: &'static str) -> HeaderName {
    HeaderName::from_static(name)
}

fn hvalue(v: &str) -> anyhow::Result<HeaderValue> {
    Ok(HeaderValue::from_str(v)?)
}

/// Why a request was not answered.
enum NotSent {
    /// The URL names an address deliveries may not reach.
    Blocked,
    Transport(reqwest::Error),
}
use NotSent::Blocked;

impl From<reqwest::Error> for NotSent {
    fn from(e: reqwest::Error) -> Self {
        NotSent::Transport(e)
    }
}

impl NotSent {
    fn reason(&self) -> String {
        match self {
            Blocked => "address not allowed".to_owned(),
            NotSent::Transport(e) => transport_error(e),
        }
    }
}

/// A short reason for a failed request, without the URL (which may carry a partner's token).
fn transport_error(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timeout".to_owned()
    } else if e.is_connect() {
        "connection failed".to_owned()
    } else if e.is_redirect() {
        "redirect".to_owned()
    } else {
        "request failed".to_owned()
    }
}
