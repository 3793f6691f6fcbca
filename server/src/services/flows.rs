//! Flow links: the single-use login link a partner hands its customer, and opening it into a
//! flow session of its scope.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::Error;
use crate::{
    clock::AccountClock,
    domain::{
        apps::ReadinessItem,
        events::Event,
        flow_events::{self, FlowEventName, Funnel, Recorded, SessionState},
        flows::{parse_scope, FlowScope},
        jobs::SessionEndPayload,
        market::start_of_market_day,
        tokens, FieldError,
    },
    outbox::{self, Job, Outcome},
    state::Core,
    store::{
        self,
        apps::AppRow,
        events::NewEvent,
        flows::{FlowEventRow, FlowLoginRow, NewFlowEvent, NewFlowLogin},
        Tx,
    },
};

/// How long a flow link may wait to be opened.
const LOGIN_TTL: Duration = Duration::minutes(10);
/// How long the session an opened link starts lives.
const SESSION_TTL: Duration = Duration::minutes(60);

/// Why no flow link was made. Nothing is written.
#[derive(Debug)]
pub enum FlowLoginRefused {
    Field(FieldError),
    /// No such account in this app.
    AccountNotFound,
    /// The plan group named is not one of this app's.
    PlanGroupNotFound,
    /// A live app that has not passed its readiness checklist opens no enrollment flow: what
    /// it lacks.
    AppNotReady(Vec<ReadinessItem>),
}

/// A new flow link's token (shown once), its scope, and when it expires.
pub struct FlowLogin {
    pub token: String,
    pub scope: FlowScope,
    pub expires_at: DateTime<Utc>,
}

/// A single-use flow link for the account, in the scope of the body or the query (the same when
/// both are given; optionally limited to a plan group of the app).
pub async fn create_flow_login(
    core: &Core,
    app_uuid: Uuid,
    account_uuid: Uuid,
    scope: Option<&str>,
    query_scope: Option<&str>,
    plan_group_uuid: Option<Uuid>,
) -> Result<FlowLogin, Error<FlowLoginRefused>> {
    let scope =
        parse_scope(scope, query_scope).map_err(|e| Error::Refused(FlowLoginRefused::Field(e)))?;
    if store::accounts::account_of_app(&core.db, app_uuid, account_uuid)
        .await?
        .is_none()
    {
        return Err(Error::Refused(FlowLoginRefused::AccountNotFound));
    }
    if scope == FlowScope::Enrollment {
        let app = store::apps::app_by_uuid(&core.db, app_uuid)
            .await?
            .ok_or(Error::Refused(FlowLoginRefused::AccountNotFound))?;
        let readiness = super::apps::readiness(&core.db, &app).await?;
        if !readiness.is_open() {
            return Err(Error::Refused(FlowLoginRefused::AppNotReady(
                readiness.missing,
            )));
        }
    }
    if let Some(group) = plan_group_uuid {
        let groups = store::market::plan_groups_of_app(&core.db, app_uuid).await?;
        if !groups.iter().any(|g| g.uuid == group) {
            return Err(Error::Refused(FlowLoginRefused::PlanGroupNotFound));
        }
    }
    let now = core.clock.now();
    let expires_at = now + LOGIN_TTL;
    let token = tokens::issue_flow_login_token();
    let mut tx = core.db.begin().await?;
    store::flows::insert_flow_login(
        &mut tx,
        &NewFlowLogin {
            token_hash: &token.hash,
            app_uuid,
            account_uuid,
            scope: scope.as_str(),
            plan_group_uuid,
            expires_at,
            now,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(FlowLogin {
        token: token.plain,
        scope,
        expires_at,
    })
}

/// The flow session an opened link started: the page it goes to and its bearer token.
pub struct OpenedFlow {
    pub scope: String,
    pub app_uuid: Uuid,
    pub session_token: String,
}

/// What opening a flow link came to.
pub enum LinkOpening {
    Opened(OpenedFlow),
    /// The link was already spent or is too old: the customer sees one page for both, in the
    /// branding of the app that made it when the link is one of ours (`None` for a token that
    /// is not).
    Spent(Option<Box<AppRow>>),
}

/// Spends a flow link's token and opens its session.
pub async fn open_flow_link(core: &Core, token: &str) -> store::Result<LinkOpening> {
    if !tokens::is_flow_login_token(token) {
        return Ok(LinkOpening::Spent(None));
    }
    let hash = tokens::hash_token(token);
    let now = core.clock.now();
    let mut tx = core.db.begin().await?;
    let Some(login) = store::flows::flow_login(&mut tx, &hash).await? else {
        return Ok(LinkOpening::Spent(None));
    };
    // Two tabs opening one link: only the first spends it.
    if login.expires_at <= now
        || login.used_at.is_some()
        || !store::flows::use_flow_login(&mut tx, &hash, now).await?
    {
        drop(tx);
        let app = store::apps::app_by_uuid(&core.db, login.app_uuid).await?;
        return Ok(LinkOpening::Spent(app.map(Box::new)));
    }
    let session = tokens::issue_flow_session_token();
    start_session(&mut tx, core, &session.hash, &login, now + SESSION_TTL, now).await?;
    tx.commit().await?;
    Ok(LinkOpening::Opened(OpenedFlow {
        scope: login.scope,
        app_uuid: login.app_uuid,
        session_token: session.plain,
    }))
}

/// Opens a flow session in `tx` with a new public id, and schedules the look at its end
/// (`end_session`) for when it would be abandoned if nothing happened in it.
pub(crate) async fn start_session(
    tx: &mut Tx,
    core: &Core,
    token_hash: &str,
    login: &FlowLoginRow,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> store::Result<Uuid> {
    let uuid = Uuid::new_v4();
    store::flows::insert_flow_session(tx, uuid, token_hash, login, expires_at, now).await?;
    let clock = core.clock.for_account(&core.db, login.account_uuid).await?;
    schedule_end(
        tx,
        &clock,
        login.account_uuid,
        uuid,
        clock.now() + flow_events::IDLE,
    )
    .await?;
    Ok(uuid)
}

async fn schedule_end(
    tx: &mut Tx,
    clock: &AccountClock,
    account_uuid: Uuid,
    session: Uuid,
    at: DateTime<Utc>,
) -> store::Result<Uuid> {
    outbox::enqueue(
        tx,
        clock,
        &Job::FlowSessionEnd(SessionEndPayload {
            flow_session_id: session,
        }),
        Some(account_uuid),
        at,
    )
    .await
}

/// Why an event was not recorded. Nothing is written.
#[derive(Debug)]
pub enum FlowEventRefused {
    Field(FieldError),
    /// Only a flow session records flow events (an AccountToken has no flow).
    NotAFlow,
}

/// Records an event of the flow session `session` (of the account): a session's events are
/// written on the account's clock; one that ends the session (`completed`, `exited`,
/// `handed_off`) schedules its summary at once. Answers the session's public id.
pub async fn record_event(
    core: &Core,
    account_uuid: Uuid,
    session: Option<Uuid>,
    name: Option<&str>,
    step: Option<&str>,
    error_code: Option<&str>,
) -> Result<Uuid, Error<FlowEventRefused>> {
    let event = flow_events::parse_event(name, step, error_code)
        .map_err(|e| Error::Refused(FlowEventRefused::Field(e)))?;
    let session = session.ok_or(Error::Refused(FlowEventRefused::NotAFlow))?;
    let clock = core.clock.for_account(&core.db, account_uuid).await?;
    let now = clock.now();
    let mut tx = core.db.begin().await?;
    store::flows::insert_flow_event(
        &mut tx,
        &NewFlowEvent {
            session_uuid: session,
            name: event.name,
            step: event.step.as_deref(),
            error_code: event.error_code.as_deref(),
            now,
        },
    )
    .await?;
    if event.name.ends_session() {
        schedule_end(&mut tx, &clock, account_uuid, session, now).await?;
    }
    tx.commit().await?;
    Ok(session)
}

fn recorded(rows: &[FlowEventRow]) -> Vec<Recorded> {
    rows.iter()
        .filter_map(|r| {
            Some(Recorded {
                name: FlowEventName::parse(&r.name)?,
                step: r.step.clone(),
                at: r.created_at,
            })
        })
        .collect()
}

/// The `flow.session_end` job: a session that has ended (`flow_events::session_state`) gets
/// its `flow.session_ended` event, once; one still in use is looked at again when it would be
/// abandoned. Returns the transaction to finish the job in, and how.
pub async fn end_session(
    core: &Core,
    clock: &AccountClock,
    payload: &SessionEndPayload,
) -> store::Result<(Tx, Outcome)> {
    let id = payload.flow_session_id;
    let mut tx = core.db.begin().await?;
    let Some(session) = store::flows::session_by_uuid(&mut tx, id).await? else {
        return Ok((tx, Outcome::Done));
    };
    if session.ended_at.is_some() {
        return Ok((tx, Outcome::Done));
    }
    let events = recorded(&store::flows::session_events(&mut tx, id).await?);
    let now = clock.now();
    let summary = match flow_events::session_state(&events, now) {
        SessionState::OpenUntil(at) => return Ok((tx, Outcome::RetryAt(at, "in use".into()))),
        SessionState::Ended(summary) => summary,
    };
    if store::flows::mark_session_ended(&mut tx, id, now).await? {
        let event = Event::FlowSessionEnded {
            account_uuid: session.account_uuid,
            flow_session_id: id,
            scope: session.scope,
            outcome: summary.outcome.to_owned(),
            steps_reached: summary.steps_reached,
            last_step: summary.last_step,
            duration_seconds: summary.duration_seconds,
            started_at: session.created_at,
        };
        store::events::insert_event(&mut tx, &NewEvent::of(session.app_uuid, &event, now)).await?;
    }
    Ok((tx, Outcome::Done))
}

/// How long a funnel's period may be.
const MAX_FUNNEL_DAYS: i64 = 366;

/// A funnel's period: market days (America/Chicago) `from` through `to`, by default the 30
/// days ending today, read on the service's clock. A session counts on the market day it
/// opened, as the service's clock stamped it: one timeline for every account of the app,
/// whatever a sandbox account's own clock says (its events, and so the time to complete, are
/// on its own clock, which moves with the service's).
pub struct FunnelPeriod {
    pub from: chrono::NaiveDate,
    pub to: chrono::NaiveDate,
}

/// Parses a funnel's scope and period.
pub fn funnel_query(
    core: &Core,
    scope: Option<&str>,
    from: Option<&str>,
    to: Option<&str>,
) -> Result<(FlowScope, FunnelPeriod), FieldError> {
    let scope = parse_scope(scope, None)?;
    let date = |param: &str, raw: Option<&str>| {
        raw.map(|r| {
            r.parse::<chrono::NaiveDate>().map_err(|_| {
                FieldError::invalid(param, format!("{param} must be a date, YYYY-MM-DD"))
            })
        })
        .transpose()
    };
    let to = date("to", to)?.unwrap_or_else(|| core.clock.today());
    let from = date("from", from)?.unwrap_or(to - Duration::days(29));
    if from > to {
        return Err(FieldError::invalid("from", "from must not be after to"));
    }
    if (to - from).num_days() >= MAX_FUNNEL_DAYS {
        return Err(FieldError::invalid("from", "a period is at most 366 days"));
    }
    Ok((scope, FunnelPeriod { from, to }))
}

/// The funnel of the app's flow sessions of `scope` opened in the period.
pub async fn funnel(
    core: &Core,
    app_uuid: Uuid,
    scope: FlowScope,
    period: &FunnelPeriod,
) -> store::Result<Funnel> {
    let from = start_of_market_day(period.from);
    let to = start_of_market_day(period.to + Duration::days(1));
    let started =
        store::flows::sessions_started(&core.db, app_uuid, scope.as_str(), from, to).await?;
    let rows =
        store::flows::events_of_sessions_started(&core.db, app_uuid, scope.as_str(), from, to)
            .await?;
    let sessions: Vec<Vec<Recorded>> = rows
        .chunk_by(|a, b| a.session_uuid == b.session_uuid)
        .map(recorded)
        .collect();
    Ok(flow_events::funnel(scope.as_str(), started, &sessions))
}
