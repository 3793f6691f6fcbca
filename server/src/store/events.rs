//! Events, written in the transaction of the change that causes them, together with one
//! delivery job per webhook endpoint of the app that subscribes to the event's type.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{jobs, on_db, on_tx, webhooks, Db, Result, Tx};
use crate::domain::{
    events::{endpoint_wants, Event},
    jobs::Job,
};

/// An event's row. Changes build it from their `Event` (`NewEvent::of`); an e-mail's event,
/// kept in its job until the e-mail is sent, is stored as type and data.
pub struct NewEvent<'a> {
    pub app_uuid: Uuid,
    pub account_uuid: Option<Uuid>,
    pub kind: &'a str,
    pub data: serde_json::Value,
    pub created_at: DateTime<Utc>,
}

impl NewEvent<'static> {
    /// The row of `event`, which happened in `app_uuid` at `created_at`.
    pub fn of(app_uuid: Uuid, event: &Event, created_at: DateTime<Utc>) -> Self {
        NewEvent {
            app_uuid,
            account_uuid: event.account_uuid(),
            kind: event.kind(),
            data: event.data(),
            created_at,
        }
    }
}

/// Writes the event and schedules its delivery to every enabled endpoint that wants it.
pub async fn insert_event(tx: &mut Tx, event: &NewEvent<'_>) -> Result<Uuid> {
    let endpoints = subscribers(tx, event.app_uuid).await?;
    insert_fanned_out(tx, event, &endpoints.endpoints).await
}

/// An app's enabled webhook endpoints with the event types each wants, read once for several
/// events of one transaction (`insert_event_to`).
pub struct Subscribers {
    app_uuid: Uuid,
    endpoints: Vec<(Uuid, Vec<String>)>,
}

/// The enabled endpoints of `app_uuid`, as `insert_event` reads them for each event.
pub async fn subscribers(tx: &mut Tx, app_uuid: Uuid) -> Result<Subscribers> {
    let endpoints = webhooks::enabled_endpoint_filters(tx, app_uuid)
        .await?
        .into_iter()
        .map(|(uuid, filter)| (uuid, serde_json::from_str(&filter).unwrap_or_default()))
        .collect();
    Ok(Subscribers {
        app_uuid,
        endpoints,
    })
}

/// `insert_event` with the app's endpoints read before (`subscribers`, in the same
/// transaction): the event and one delivery to each endpoint that wants it.
pub async fn insert_event_to(
    tx: &mut Tx,
    event: &NewEvent<'_>,
    endpoints: &Subscribers,
) -> Result<Uuid> {
    if endpoints.app_uuid != event.app_uuid {
        // Another app's endpoints never receive the event: its own are read.
        return insert_event(tx, event).await;
    }
    insert_fanned_out(tx, event, &endpoints.endpoints).await
}

async fn insert_fanned_out(
    tx: &mut Tx,
    event: &NewEvent<'_>,
    endpoints: &[(Uuid, Vec<String>)],
) -> Result<Uuid> {
    let uuid = insert_event_only(tx, event).await?;
    for (endpoint_uuid, filter) in endpoints {
        if endpoint_wants(filter, event.kind) {
            enqueue_delivery(tx, *endpoint_uuid, uuid, event.account_uuid).await?;
        }
    }
    Ok(uuid)
}

/// Writes the event without fanning it out (`send-test` delivers to one endpoint only).
pub async fn insert_event_only(tx: &mut Tx, event: &NewEvent<'_>) -> Result<Uuid> {
    let uuid = Uuid::new_v4();
    let sql = "INSERT INTO events (uuid, app_uuid, account_uuid, type, data, created_at) \
        VALUES ($1, $2, $3, $4, $5, $6)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(uuid)
        .bind(event.app_uuid)
        .bind(event.account_uuid)
        .bind(event.kind)
        .bind(event.data.to_string())
        .bind(event.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(uuid)
}

/// Schedules one delivery of an event to an endpoint, due at once.
pub async fn enqueue_delivery(
    tx: &mut Tx,
    endpoint_uuid: Uuid,
    event_uuid: Uuid,
    account_uuid: Option<Uuid>,
) -> Result<Uuid> {
    // Due "now": the system time is never ahead of the service clock (which only moves
    // forward), so the job is due at once whatever the clock says.
    let now = Utc::now();
    let job = Job::WebhookDelivery {
        endpoint_uuid,
        event_uuid,
    };
    let (kind, payload) = job.stored().map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    jobs::insert_job(
        tx,
        &jobs::NewJob {
            kind,
            payload: &payload,
            account_uuid,
            run_at_ms: now.timestamp_millis(),
            max_attempts: job.max_attempts(),
            created_at: now,
        },
    )
    .await
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EventRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub account_uuid: Option<Uuid>,
    #[sqlx(rename = "type")]
    pub kind: String,
    /// JSON object.
    pub data: String,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "uuid, app_uuid, account_uuid, type, data, created_at";

pub struct EventFilter<'a> {
    pub app_uuid: Uuid,
    pub kind: Option<&'a str>,
    pub account_uuid: Option<Uuid>,
    pub limit: u32,
    pub offset: u64,
}

/// A page of the app's events, newest first (plus one row).
pub async fn list_events(db: &Db, f: &EventFilter<'_>) -> Result<Vec<EventRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM events WHERE app_uuid = $1 \
         AND ($2 IS NULL OR type = $2) AND ($3 IS NULL OR account_uuid = $3) \
         ORDER BY created_at DESC, uuid DESC LIMIT $4 OFFSET $5"
    );
    on_db!(db, c => sqlx::query_as::<_, EventRow>(&sql)
        .bind(f.app_uuid)
        .bind(f.kind)
        .bind(f.account_uuid)
        .bind(i64::from(f.limit) + 1)
        .bind(i64::try_from(f.offset).unwrap_or(i64::MAX))
        .fetch_all(c)
        .await)
}

pub async fn event_of_app(db: &Db, app_uuid: Uuid, uuid: Uuid) -> Result<Option<EventRow>> {
    let sql = format!("SELECT {COLUMNS} FROM events WHERE uuid = $1 AND app_uuid = $2");
    on_db!(db, c => sqlx::query_as::<_, EventRow>(&sql)
        .bind(uuid)
        .bind(app_uuid)
        .fetch_optional(c)
        .await)
}

pub async fn event_by_uuid(db: &Db, uuid: Uuid) -> Result<Option<EventRow>> {
    let sql = format!("SELECT {COLUMNS} FROM events WHERE uuid = $1");
    on_db!(db, c => sqlx::query_as::<_, EventRow>(&sql).bind(uuid).fetch_optional(c).await)
}

/// The app's events created at or after `since`, oldest first, at most `limit`.
pub async fn events_of_app_since(
    tx: &mut Tx,
    app_uuid: Uuid,
    since: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<EventRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM events WHERE app_uuid = $1 AND created_at >= $2 \
         ORDER BY created_at, uuid LIMIT $3"
    );
    on_tx!(tx, c => sqlx::query_as::<_, EventRow>(&sql)
        .bind(app_uuid)
        .bind(since)
        .bind(limit)
        .fetch_all(c)
        .await)
}

/// The account's events created in `(after, until]`, oldest first.
pub async fn account_events_between(
    db: &Db,
    account_uuid: Uuid,
    after: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<EventRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM events WHERE account_uuid = $1 AND created_at > $2 \
         AND created_at <= $3 ORDER BY created_at, uuid"
    );
    on_db!(db, c => sqlx::query_as::<_, EventRow>(&sql)
        .bind(account_uuid)
        .bind(after)
        .bind(until)
        .fetch_all(c)
        .await)
}

/// An account's events, oldest first.
pub async fn events_of_account(db: &Db, account_uuid: Uuid) -> Result<Vec<EventRow>> {
    let sql =
        format!("SELECT {COLUMNS} FROM events WHERE account_uuid = $1 ORDER BY created_at, uuid");
    on_db!(db, c => sqlx::query_as::<_, EventRow>(&sql).bind(account_uuid).fetch_all(c).await)
}
