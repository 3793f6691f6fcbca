//! Webhook delivery: the job that sends one event to one endpoint, signed the Standard Webhooks
//! way, and records the attempt, the retry, or the endpoint's disabling (rules in
//! `domain::webhooks`). Endpoint management is in `http::webhooks`; the fan-out of an event to
//! its endpoints happens in `store::events::insert_event`, in the event's transaction.

use std::{net::SocketAddr, sync::Arc, time::Duration as StdDuration};

use app::api::{background::Event, Environment, Timestamp};
use axum::http::{HeaderName, HeaderValue};
use chrono::Utc;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use serde::Deserialize;
use uuid::Uuid;

use crate::{
    config::Config,
    domain::webhooks::{
        after_failure, is_public_ip, judge_response, next_attempt_at, signature_header,
        AttemptResult, DeliveryStatus, EndpointVerdict, WebhookSecret,
    },
    outbox::{JobRun, Outcome},
    store::{self, events::EventRow, webhooks::DeliveryRow},
};

/// The HTTP clients deliveries go out with: sandbox apps may reach any address (a partner's
/// laptop); live apps only public ones, checked again after DNS resolution so that a name
/// cannot point a delivery at the service's own network.
#[derive(Clone)]
pub struct Sender {
    sandbox: reqwest::Client,
    live: reqwest::Client,
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
        Ok(Sender {
            sandbox: builder().build()?,
            live: builder().dns_resolver(Arc::new(PublicOnly)).build()?,
        })
    }

    fn client(&self, environment: Environment) -> &reqwest::Client {
        match environment {
            Environment::Sandbox => &self.sandbox,
            Environment::Live => &self.live,
        }
    }
}

/// Resolves names to their public addresses only.
struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0))
                .await?
                .filter(|a| is_public_ip(a.ip()))
                .collect();
            if addrs.is_empty() {
                return Err("the endpoint's host has no public address".into());
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

#[derive(Deserialize)]
struct DeliveryPayload {
    endpoint_uuid: Uuid,
    event_uuid: Uuid,
}

/// One attempt of a delivery job.
pub async fn deliver(ctx: &JobRun, sender: &Sender) -> anyhow::Result<()> {
    let payload: DeliveryPayload = serde_json::from_str(&ctx.job.payload)?;
    let endpoint = store::webhooks::endpoint_by_uuid(&ctx.db, payload.endpoint_uuid).await?;
    let Some(endpoint) = endpoint.filter(|e| !e.disabled) else {
        // Deleted or disabled since: nothing to send (recover re-sends once re-enabled).
        return Ok(ctx
            .finish_alone(&Outcome::Failed("endpoint disabled or deleted".into()))
            .await?);
    };
    let Some(event) = store::events::event_by_uuid(&ctx.db, payload.event_uuid).await? else {
        return Ok(ctx
            .finish_alone(&Outcome::Failed("event not found".into()))
            .await?);
    };
    let environment = store::apps::app_by_uuid(&ctx.db, event.app_uuid)
        .await?
        .and_then(|a| Environment::parse(&a.environment))
        .unwrap_or(Environment::Live);
    let body = serde_json::to_vec(&render_event(&event, environment))?;

    let service_now = ctx.service_clock.now();
    let mut secrets = Vec::with_capacity(2);
    secrets.extend(WebhookSecret::parse(&endpoint.secret));
    if endpoint
        .previous_secret_expires_at
        .is_some_and(|until| until > service_now)
    {
        secrets.extend(
            endpoint
                .previous_secret
                .as_deref()
                .and_then(WebhookSecret::parse),
        );
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
    let sent = sender
        .client(environment)
        .post(&endpoint.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(hname("webhook-id"), hvalue(&msg_id)?)
        .header(hname("webhook-timestamp"), hvalue(&timestamp.to_string())?)
        .header(hname("webhook-signature"), hvalue(&signature)?)
        .body(body)
        .send()
        .await;
    let (result, response_status, error) = match sent {
        Ok(resp) => {
            let status = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            drain(resp).await;
            let result = judge_response(status, retry_after.as_deref(), attempted_at);
            let error = (result != AttemptResult::Succeeded).then(|| format!("HTTP {status}"));
            (result, Some(i32::from(status)), error)
        }
        Err(e) => (
            AttemptResult::Failed { retry_after: None },
            None,
            Some(transport_error(&e)),
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
        },
    )
    .await?;
    if ctx.finish(&mut tx, &outcome).await? {
        tx.commit().await?;
    }
    Ok(())
}

/// Reads (and drops) up to 64 KiB of an answer, so that its connection can be reused.
async fn drain(mut resp: reqwest::Response) {
    let mut read = 0;
    while let Ok(Some(chunk)) = resp.chunk().await {
        read += chunk.len();
        if read > 64 * 1024 {
            break;
        }
    }
}

fn hname(name: &'static str) -> HeaderName {
    HeaderName::from_static(name)
}

fn hvalue(v: &str) -> anyhow::Result<HeaderValue> {
    Ok(HeaderValue::from_str(v)?)
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
