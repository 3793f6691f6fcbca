//! An app's webhook endpoints: creating and changing them, rotating their secrets, and
//! scheduling deliveries (a recover of past events, a recover of the failed deliveries, a test
//! event).

use app::api::{
    background::{CreateWebhookEndpointIn, UpdateWebhookEndpointIn},
    Environment, Patch,
};
use uuid::Uuid;

use super::{
    audit::{self, Actor},
    Error,
};
use crate::{
    crypto::is_sealed_text,
    domain::{
        events::Event,
        webhooks::{
            check_target, disabled_change, endpoint_wants_text, parse_description,
            parse_endpoint_url, parse_event_types, recovers, DisableReason, DisabledChange,
            UrlRefusal, WebhookSecret, ROTATION_OVERLAP,
        },
        FieldError,
    },
    state::Core,
    store::{
        self,
        events::NewEvent,
        webhooks::{DeliveryRow, EndpointRow},
    },
};

/// Most events one recover schedules; a partner asks again from the last one for more.
const RECOVER_LIMIT: i64 = 10_000;

/// Why an endpoint was not changed. Nothing is written.
#[derive(Debug)]
pub enum WebhookRefused {
    /// No such endpoint in this app.
    EndpointNotFound,
    /// No such event in this app.
    EventNotFound,
    /// The endpoint a redelivery names is not one of this app's.
    TargetEndpointNotFound,
    /// A live app aimed at a non-public address (the message says which).
    UrlNotAllowed(String),
    Field(FieldError),
}

impl From<FieldError> for Error<WebhookRefused> {
    fn from(e: FieldError) -> Self {
        Error::Refused(WebhookRefused::Field(e))
    }
}

/// An endpoint URL of an app of `environment`: well formed, and pointing where deliveries may
/// go (private networks only for sandbox apps, and only when the operator allows them).
fn parse_url(
    core: &Core,
    raw: &str,
    environment: Environment,
) -> Result<String, Error<WebhookRefused>> {
    let allow_private =
        environment == Environment::Sandbox && core.config.webhooks_allow_private_targets();
    match parse_endpoint_url(raw, environment)
        .and_then(|url| check_target(&url, allow_private).map(|()| url))
    {
        Ok(url) => Ok(url.to_string()),
        Err(UrlRefusal::NotAllowed(m)) => Err(Error::Refused(WebhookRefused::UrlNotAllowed(m))),
        Err(invalid) => Err(FieldError::from(invalid).into()),
    }
}

fn json_list(types: &[String]) -> Result<String, Error<WebhookRefused>> {
    serde_json::to_string(types).map_err(|e| Error::Failed(e.into()))
}

fn not_found<T>() -> Result<T, Error<WebhookRefused>> {
    Err(Error::Refused(WebhookRefused::EndpointNotFound))
}

/// The audit entry of a change made from the dashboard (`actor`), in the change's transaction.
/// Changes made through the API carry no actor: the app's own token made them.
async fn audited(
    tx: &mut store::Tx,
    core: &Core,
    actor: &Actor,
    action: &str,
    app_uuid: Uuid,
    detail: serde_json::Value,
) -> store::Result<()> {
    let target = format!("app:{app_uuid}");
    audit::record(tx, actor, action, &target, detail, core.clock.now()).await
}

/// A new endpoint of the app, with a fresh secret.
pub async fn create_endpoint(
    core: &Core,
    app_uuid: Uuid,
    environment: Environment,
    input: CreateWebhookEndpointIn,
    actor: Option<&Actor>,
) -> Result<EndpointRow, Error<WebhookRefused>> {
    let url = parse_url(core, &input.url, environment)?;
    let event_types = parse_event_types(input.event_types)?;
    let description = parse_description(input.description)?;
    let row = EndpointRow {
        uuid: Uuid::new_v4(),
        app_uuid,
        url,
        event_types: json_list(&event_types)?,
        description,
        secret: WebhookSecret::generate().expose().to_owned(),
        previous_secret: None,
        previous_secret_expires_at: None,
        disabled: input.disabled,
        disabled_reason: input
            .disabled
            .then(|| DisableReason::Manual.as_str().to_owned()),
        failing_since: None,
        created_at: core.clock.now(),
    };
    // Stored sealed; the answer shows it once, in clear.
    let stored = EndpointRow {
        secret: core.pii.seal_text(&row.secret),
        ..row.clone()
    };
    let mut tx = core.db.begin().await?;
    store::webhooks::insert_endpoint(&mut tx, &stored).await?;
    if let Some(actor) = actor {
        let detail = serde_json::json!({"endpoint": row.uuid, "url": row.url});
        audited(
            &mut tx,
            core,
            actor,
            "webhook_endpoint.created",
            app_uuid,
            detail,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(row)
}

/// Applies a PATCH: the fields are checked before the endpoint is looked up, so a bad field is
/// answered as such even for an unknown endpoint.
pub async fn update_endpoint(
    core: &Core,
    app_uuid: Uuid,
    environment: Environment,
    endpoint_uuid: Uuid,
    input: UpdateWebhookEndpointIn,
    actor: Option<&Actor>,
) -> Result<EndpointRow, Error<WebhookRefused>> {
    let url = match input.url {
        Patch::Absent => None,
        Patch::Null => return Err(FieldError::invalid("url", "url cannot be null").into()),
        Patch::Value(u) => Some(parse_url(core, &u, environment)?),
    };
    let event_types = match input.event_types {
        Patch::Absent => None,
        Patch::Null => Some(Vec::new()),
        Patch::Value(t) => Some(parse_event_types(t)?),
    };
    let description = match input.description {
        Patch::Absent => None,
        Patch::Null => Some(None),
        Patch::Value(d) => Some(parse_description(Some(d))?),
    };
    let disabled = match input.disabled {
        Patch::Absent => None,
        Patch::Null => {
            return Err(FieldError::invalid("disabled", "disabled cannot be null").into())
        }
        Patch::Value(d) => Some(d),
    };
    let mut tx = core.db.begin().await?;
    let Some(mut row) = store::webhooks::endpoint_of_app(&mut tx, app_uuid, endpoint_uuid).await?
    else {
        return not_found();
    };
    if let Some(url) = url {
        row.url = url;
    }
    if let Some(types) = event_types {
        row.event_types = json_list(&types)?;
    }
    if let Some(d) = description {
        row.description = d;
    }
    let change = disabled_change(disabled, row.disabled);
    let action = match change {
        DisabledChange::Disable => "webhook_endpoint.disabled",
        DisabledChange::Enable => "webhook_endpoint.enabled",
        DisabledChange::Keep => "webhook_endpoint.updated",
    };
    match change {
        DisabledChange::Disable => {
            row.disabled = true;
            row.disabled_reason = Some(DisableReason::Manual.as_str().to_owned());
        }
        DisabledChange::Enable => {
            row.disabled = false;
            row.disabled_reason = None;
            row.failing_since = None;
        }
        DisabledChange::Keep => {}
    }
    store::webhooks::update_endpoint(&mut tx, &row).await?;
    if let Some(actor) = actor {
        let detail = serde_json::json!({"endpoint": row.uuid});
        audited(&mut tx, core, actor, action, app_uuid, detail).await?;
    }
    tx.commit().await?;
    Ok(row)
}

/// Deletes the endpoint: nothing more is sent to it.
pub async fn delete_endpoint(
    core: &Core,
    app_uuid: Uuid,
    endpoint_uuid: Uuid,
) -> Result<(), Error<WebhookRefused>> {
    let mut tx = core.db.begin().await?;
    let deleted =
        store::webhooks::delete_endpoint(&mut tx, app_uuid, endpoint_uuid, core.clock.now())
            .await?;
    if !deleted {
        return not_found();
    }
    tx.commit().await?;
    Ok(())
}

/// A new secret for the endpoint; the old one keeps signing beside it for `ROTATION_OVERLAP`.
pub async fn rotate_secret(
    core: &Core,
    app_uuid: Uuid,
    endpoint_uuid: Uuid,
    actor: Option<&Actor>,
) -> Result<EndpointRow, Error<WebhookRefused>> {
    let mut tx = core.db.begin().await?;
    let Some(mut row) = store::webhooks::endpoint_of_app(&mut tx, app_uuid, endpoint_uuid).await?
    else {
        return not_found();
    };
    let new = WebhookSecret::generate();
    row.previous_secret = Some(std::mem::replace(
        &mut row.secret,
        core.pii.seal_text(new.expose()),
    ));
    row.previous_secret_expires_at = Some(core.clock.now() + ROTATION_OVERLAP);
    store::webhooks::update_endpoint(&mut tx, &row).await?;
    if let Some(actor) = actor {
        let detail = serde_json::json!({"endpoint": row.uuid});
        audited(
            &mut tx,
            core,
            actor,
            "webhook_endpoint.secret_rotated",
            app_uuid,
            detail,
        )
        .await?;
    }
    tx.commit().await?;
    // The answer shows the new secret once, in clear.
    row.secret = new.expose().to_owned();
    Ok(row)
}

/// Seals the signing secrets still stored in clear (written before secrets were sealed), in
/// batches; returns how many endpoints were sealed. Runs at start; running it twice, or on two
/// instances at once, seals each secret once.
pub async fn seal_clear_secrets(core: &Core) -> store::Result<usize> {
    let mut sealed = 0;
    loop {
        let clear = store::webhooks::endpoints_with_clear_secrets(&core.db, 200).await?;
        if clear.is_empty() {
            return Ok(sealed);
        }
        let mut tx = core.db.begin().await?;
        let mut changed = 0;
        for (uuid, secret, previous) in &clear {
            let seal = |s: &str| {
                if is_sealed_text(s) {
                    s.to_owned()
                } else {
                    core.pii.seal_text(s)
                }
            };
            let previous = previous.as_deref().map(seal);
            if store::webhooks::replace_secrets(
                &mut tx,
                *uuid,
                secret,
                &seal(secret),
                previous.as_deref(),
            )
            .await?
            {
                changed += 1;
            }
        }
        tx.commit().await?;
        if changed == 0 {
            // Rotated meanwhile by someone else; what is left is theirs to seal.
            return Ok(sealed);
        }
        sealed += changed;
    }
}

/// A page of the endpoint's delivery attempts, newest first.
pub async fn deliveries(
    core: &Core,
    app_uuid: Uuid,
    endpoint_uuid: Uuid,
    limit: u32,
    offset: u64,
) -> Result<Vec<DeliveryRow>, Error<WebhookRefused>> {
    let Some(endpoint) =
        store::webhooks::endpoint_of_app(&core.db, app_uuid, endpoint_uuid).await?
    else {
        return not_found();
    };
    Ok(store::webhooks::deliveries_of_endpoint(&core.db, endpoint.uuid, limit, offset).await?)
}

/// Schedules a delivery to the endpoint of every event of the app since `since` that it
/// subscribes to (at most `RECOVER_LIMIT`), and answers how many.
pub async fn recover(
    core: &Core,
    app_uuid: Uuid,
    endpoint_uuid: Uuid,
    since: chrono::DateTime<chrono::Utc>,
) -> Result<u32, Error<WebhookRefused>> {
    let mut tx = core.db.begin().await?;
    let Some(endpoint) = store::webhooks::endpoint_of_app(&mut tx, app_uuid, endpoint_uuid).await?
    else {
        return not_found();
    };
    let filter = endpoint.event_type_list();
    let events =
        store::events::events_of_app_since(&mut tx, app_uuid, since, RECOVER_LIMIT).await?;
    let mut scheduled = 0u32;
    for event in events.iter().filter(|e| recovers(&filter, &e.kind)) {
        store::events::enqueue_delivery(&mut tx, endpoint.uuid, event.uuid, event.account_uuid)
            .await?;
        scheduled += 1;
    }
    tx.commit().await?;
    Ok(scheduled)
}

/// Schedules again every delivery to the endpoint that failed for good since `since` (its
/// latest attempt failed, with no retry to come; `store::webhooks::failed_deliveries_since`),
/// at most `RECOVER_LIMIT`, and answers how many. Deliveries that succeeded, and those still
/// waiting for a retry, are left alone. Audited when `actor` (the dashboard) asks.
pub async fn recover_failed(
    core: &Core,
    app_uuid: Uuid,
    endpoint_uuid: Uuid,
    since: chrono::DateTime<chrono::Utc>,
    actor: Option<&Actor>,
) -> Result<u32, Error<WebhookRefused>> {
    let mut tx = core.db.begin().await?;
    let Some(endpoint) = store::webhooks::endpoint_of_app(&mut tx, app_uuid, endpoint_uuid).await?
    else {
        return not_found();
    };
    let failed = store::webhooks::failed_deliveries_since(
        &mut tx,
        endpoint.uuid,
        since,
        core.clock.now(),
        RECOVER_LIMIT,
    )
    .await?;
    for (event_uuid, account_uuid) in &failed {
        store::events::enqueue_delivery(&mut tx, endpoint.uuid, *event_uuid, *account_uuid).await?;
    }
    let queued = u32::try_from(failed.len()).unwrap_or(u32::MAX);
    if let Some(actor) = actor {
        let detail = serde_json::json!({
            "endpoint": endpoint.uuid,
            "since": since,
            "queued": queued,
        });
        audited(
            &mut tx,
            core,
            actor,
            "webhook_endpoint.failed_recovered",
            app_uuid,
            detail,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(queued)
}

/// A `webhook.test` event and its one delivery, to this endpoint only; answers the event's id.
pub async fn send_test(
    core: &Core,
    app_uuid: Uuid,
    endpoint_uuid: Uuid,
) -> Result<Uuid, Error<WebhookRefused>> {
    let mut tx = core.db.begin().await?;
    let Some(endpoint) = store::webhooks::endpoint_of_app(&mut tx, app_uuid, endpoint_uuid).await?
    else {
        return not_found();
    };
    let event_uuid = store::events::insert_event_only(
        &mut tx,
        &NewEvent::of(
            app_uuid,
            &Event::WebhookTest {
                endpoint_uuid: endpoint.uuid,
            },
            core.clock.now(),
        ),
    )
    .await?;
    store::events::enqueue_delivery(&mut tx, endpoint.uuid, event_uuid, None).await?;
    tx.commit().await?;
    Ok(event_uuid)
}

/// Schedules the event again: to the one endpoint named, or to every enabled endpoint of the app
/// subscribed to its type. Answers how many deliveries were scheduled.
pub async fn redeliver_event(
    core: &Core,
    app_uuid: Uuid,
    event_uuid: Uuid,
    endpoint_uuid: Option<Uuid>,
) -> Result<u32, Error<WebhookRefused>> {
    let Some(event) = store::events::event_of_app(&core.db, app_uuid, event_uuid).await? else {
        return Err(Error::Refused(WebhookRefused::EventNotFound));
    };
    let mut tx = core.db.begin().await?;
    let targets = match endpoint_uuid {
        Some(endpoint_uuid) => {
            if store::webhooks::endpoint_of_app(&mut tx, app_uuid, endpoint_uuid)
                .await?
                .is_none()
            {
                return Err(Error::Refused(WebhookRefused::TargetEndpointNotFound));
            }
            vec![endpoint_uuid]
        }
        None => store::webhooks::enabled_endpoint_filters(&mut tx, app_uuid)
            .await?
            .into_iter()
            .filter(|(_, filter)| endpoint_wants_text(filter, &event.kind))
            .map(|(uuid, _)| uuid)
            .collect(),
    };
    for endpoint_uuid in &targets {
        store::events::enqueue_delivery(&mut tx, *endpoint_uuid, event.uuid, event.account_uuid)
            .await?;
    }
    tx.commit().await?;
    Ok(u32::try_from(targets.len()).unwrap_or(u32::MAX))
}

/// The endpoint's current signing secret in clear, for a member of the app who asked to see it
/// again; each look is written to the audit log.
pub async fn reveal_secret(
    core: &Core,
    app_uuid: Uuid,
    endpoint_uuid: Uuid,
    actor: &Actor,
) -> Result<EndpointRow, Error<WebhookRefused>> {
    let mut tx = core.db.begin().await?;
    let Some(mut row) = store::webhooks::endpoint_of_app(&mut tx, app_uuid, endpoint_uuid).await?
    else {
        return not_found();
    };
    let detail = serde_json::json!({"endpoint": row.uuid});
    audited(
        &mut tx,
        core,
        actor,
        "webhook_endpoint.secret_revealed",
        app_uuid,
        detail,
    )
    .await?;
    tx.commit().await?;
    row.secret = core.pii.open_text(&row.secret).map_err(Error::Failed)?;
    Ok(row)
}

/// The body each of `deliveries` sent (the event as delivered, pretty-printed), by event.
pub async fn delivery_payloads(
    core: &Core,
    app_uuid: Uuid,
    environment: Environment,
    deliveries: &[DeliveryRow],
) -> store::Result<std::collections::HashMap<Uuid, String>> {
    let mut payloads = std::collections::HashMap::new();
    for d in deliveries {
        if payloads.contains_key(&d.event_uuid) {
            continue;
        }
        let Some(event) = store::events::event_of_app(&core.db, app_uuid, d.event_uuid).await?
        else {
            continue;
        };
        let body = crate::webhooks::render_event(&event, environment);
        payloads.insert(
            d.event_uuid,
            serde_json::to_string_pretty(&body).unwrap_or_default(),
        );
    }
    Ok(payloads)
}
