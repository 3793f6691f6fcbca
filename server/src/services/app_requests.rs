//! Live apps that partners ask for: a member of an organisation requests one (display name,
//! slug, why), the operator approves it, which creates the live app for that organisation
//! through `apps::create_app_in` (the operator's own way of creating apps) in the decision's
//! transaction, or declines it with a reason the partner reads. Every step is audited in its
//! own transaction.

use app::api::Environment;
use serde_json::json;
use uuid::Uuid;

use super::{
    apps::{self, AppRefused, NewAppSpec},
    audit::{self, Actor},
    Error,
};
use crate::{
    clock::Clock,
    domain::{
        app_requests::{parse_decline_reason, parse_request, RequestStatus},
        FieldError,
    },
    store::{self, app_requests::LiveAppRequestRow, Db, Tx},
};

/// How many requests a list shows.
const LISTED: i64 = 200;

/// Why a request was not made or decided; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum AppRequestRefused {
    #[error("{}", .0.iter().map(|e| e.message.as_str()).collect::<Vec<_>>().join("; "))]
    Fields(Vec<FieldError>),
    #[error("the slug {0} is taken: choose another")]
    SlugTaken(String),
    #[error("no such request")]
    NotFound,
    #[error("this request was {0} already")]
    Decided(RequestStatus),
    #[error("{0}")]
    App(AppRefused),
}

fn refused<T>(why: AppRequestRefused) -> Result<T, Error<AppRequestRefused>> {
    Err(Error::Refused(why))
}

/// A partner member's request for a live app of their organisation, as typed.
pub struct LiveAppInput<'a> {
    pub display_name: &'a str,
    pub slug: &'a str,
    pub reason: &'a str,
}

/// Records a request for a live app of `organisation`, pending until the operator decides.
pub async fn request_live_app(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    organisation: Uuid,
    input: &LiveAppInput<'_>,
) -> Result<LiveAppRequestRow, Error<AppRequestRefused>> {
    let asked = parse_request(input.display_name, input.slug, input.reason)
        .map_err(|e| Error::Refused(AppRequestRefused::Fields(e)))?;
    let now = clock.now();
    let mut tx = db.begin().await?;
    if store::app_requests::slug_in_use(&mut tx, &asked.slug, None).await? {
        return refused(AppRequestRefused::SlugTaken(asked.slug));
    }
    let row = LiveAppRequestRow {
        uuid: Uuid::new_v4(),
        organisation_uuid: organisation,
        organisation_name: String::new(),
        requested_by: actor.name().to_owned(),
        requested_by_user_uuid: actor.user(),
        display_name: asked.display_name,
        slug: asked.slug,
        reason: asked.reason,
        status: RequestStatus::Pending,
        decision_reason: None,
        decided_by: None,
        decided_at: None,
        app_uuid: None,
        created_at: now,
    };
    store::app_requests::insert_request(&mut tx, &row).await?;
    audit::record(
        &mut tx,
        actor,
        "live_app_request.created",
        &format!("live_app_request:{}", row.uuid),
        json!({
            "organisation": organisation,
            "display_name": row.display_name,
            "slug": row.slug,
            "reason": row.reason,
        }),
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(row)
}

/// The pending request `uuid`, read in the transaction that decides it.
async fn pending(
    tx: &mut store::Tx,
    uuid: Uuid,
) -> Result<LiveAppRequestRow, Error<AppRequestRefused>> {
    let Some(request) = store::app_requests::request_by_uuid(&mut *tx, uuid).await? else {
        return refused(AppRequestRefused::NotFound);
    };
    if request.status != RequestStatus::Pending {
        return refused(AppRequestRefused::Decided(request.status));
    }
    Ok(request)
}

/// Approves a pending request: the live app is created for the organisation, with the name
/// and slug asked for, and the request notes it. Returns the new app's uuid. The app's first
/// key is never shown here: the organisation's members make their own on the app's page.
pub async fn approve(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    uuid: Uuid,
) -> Result<Uuid, Error<AppRequestRefused>> {
    let now = clock.now();
    let mut tx = db.begin().await?;
    let request = pending(&mut tx, uuid).await?;
    if store::app_requests::slug_in_use(&mut tx, &request.slug, Some(uuid)).await? {
        return refused(AppRequestRefused::SlugTaken(request.slug));
    }
    let created = apps::create_app_in(
        &mut tx,
        now,
        actor,
        &NewAppSpec {
            name: &request.display_name,
            environment: Environment::Live,
            organisation: Some(request.organisation_uuid),
            slug: Some(&request.slug),
        },
    )
    .await
    .map_err(|e| match e {
        Error::Refused(why) => Error::Refused(AppRequestRefused::App(why)),
        Error::Failed(e) => Error::Failed(e),
    })?;
    let detail = json!({
        "organisation": request.organisation_uuid,
        "app": created.uuid,
        "slug": created.slug,
    });
    let decision = (RequestStatus::Approved, None, Some(created.uuid));
    decide(&mut tx, actor, uuid, decision, detail, now).await?;
    tx.commit().await?;
    Ok(created.uuid)
}

/// The operator's decision on the pending request `uuid`, in `tx`: its status (with the
/// reason shown to the partner, and the app an approval created) and the audit entry
/// `live_app_request.<status>` with `detail`.
async fn decide(
    tx: &mut Tx,
    actor: &Actor,
    uuid: Uuid,
    (status, reason, app): (RequestStatus, Option<&str>, Option<Uuid>),
    detail: serde_json::Value,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), Error<AppRequestRefused>> {
    let by = actor.name();
    if !store::app_requests::decide(tx, uuid, status, reason, by, app, now).await? {
        return refused(AppRequestRefused::NotFound);
    }
    let action = format!("live_app_request.{status}");
    let target = format!("live_app_request:{uuid}");
    audit::record(tx, actor, &action, &target, detail, now).await?;
    Ok(())
}

/// Declines a pending request with a reason the partner is shown.
pub async fn decline(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    uuid: Uuid,
    reason: &str,
) -> Result<(), Error<AppRequestRefused>> {
    let reason = parse_decline_reason(reason)
        .map_err(|e| Error::Refused(AppRequestRefused::Fields(vec![e])))?;
    let now = clock.now();
    let mut tx = db.begin().await?;
    let request = pending(&mut tx, uuid).await?;
    let detail = json!({"organisation": request.organisation_uuid, "reason": reason});
    let decision = (RequestStatus::Declined, Some(reason.as_str()), None);
    decide(&mut tx, actor, uuid, decision, detail, now).await?;
    tx.commit().await?;
    Ok(())
}

/// The requests an organisation's members see (theirs), or the operator sees (`None`: all).
pub async fn requests_of(
    db: &Db,
    organisation: Option<Uuid>,
) -> Result<Vec<LiveAppRequestRow>, Error<AppRequestRefused>> {
    Ok(store::app_requests::requests_of(db, organisation, LISTED).await?)
}

/// One request.
pub async fn request(db: &Db, uuid: Uuid) -> Result<LiveAppRequestRow, Error<AppRequestRefused>> {
    match store::app_requests::request_by_uuid(db, uuid).await? {
        Some(r) => Ok(r),
        None => refused(AppRequestRefused::NotFound),
    }
}
