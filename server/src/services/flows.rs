//! Flow links: the single-use login link a partner hands its customer, and opening it into a
//! flow session of its scope.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::Error;
use crate::{
    domain::{
        apps::ReadinessItem,
        flows::{parse_scope, FlowScope},
        tokens, FieldError,
    },
    state::Core,
    store::{self, apps::AppRow, flows::NewFlowLogin},
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
    store::flows::insert_flow_session(&mut tx, &session.hash, &login, now + SESSION_TTL, now)
        .await?;
    tx.commit().await?;
    Ok(LinkOpening::Opened(OpenedFlow {
        scope: login.scope,
        app_uuid: login.app_uuid,
        session_token: session.plain,
    }))
}
