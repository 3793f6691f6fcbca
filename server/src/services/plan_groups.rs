//! Plan groups as the operator creates and edits them in the dashboard: the rules the pricing
//! model reads. An edit makes a new version of the group, whose values are kept beside the
//! earlier ones with who made it and when (`plan_group_versions`). Plans priced before the edit
//! keep what they were priced with, because a priced plan is its own copy of its group's terms
//! and rates (`plans::plan_row`), and a contract keeps the rates of the plan it accepted; plans
//! priced after it read the new values. Every change is audited in its own transaction.

use serde_json::{json, Value};
use uuid::Uuid;

use super::{
    audit::{self, Actor},
    Error,
};
use crate::{
    clock::Clock,
    domain::{
        market::RateCentsPerKwh,
        plan_groups::{
            keeps_a_month_to_month_group, last_month_to_month_group, parse_group, GroupInput,
            GroupValues,
        },
        pricing::{platform_month_to_month_group, GroupTerms, PlanType},
        FieldError,
    },
    store::{
        self,
        market::{PlanGroupRow, PlanGroupVersionRow},
        Db, Tx,
    },
};

/// Why a plan group was not created or changed; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum PlanGroupRefused {
    /// Fields of the form that are wrong, each with its message.
    #[error("{}", .0.iter().map(|e| e.message.as_str()).collect::<Vec<_>>().join("; "))]
    Fields(Vec<FieldError>),
    #[error("no such plan group")]
    NotFound,
    /// Someone changed the group since the form was read; `current` is its version now.
    #[error("the group was changed meanwhile (it is at version {current} now): review it and edit again")]
    Stale { current: i64 },
}

fn refused<T>(why: PlanGroupRefused) -> Result<T, Error<PlanGroupRefused>> {
    Err(Error::Refused(why))
}

/// The row of a group with these terms.
pub(crate) fn group_row(
    uuid: Uuid,
    app_uuid: Uuid,
    terms: &GroupTerms,
    position: i64,
    version: i64,
    created_at: chrono::DateTime<chrono::Utc>,
) -> PlanGroupRow {
    PlanGroupRow {
        uuid,
        app_uuid,
        name: terms.name.clone(),
        plan_type: terms.plan_type.as_str().to_owned(),
        term_months: i64::from(terms.term_months),
        base_charge_cents_per_month: terms.base_charge_cents_per_month,
        energy_margin_cents_per_kwh: RateCentsPerKwh(terms.energy_margin_cents_per_kwh).to_wire(),
        partner_commission_cents_per_month: terms.partner_commission_cents_per_month,
        solar_buyback_cents_per_kwh: RateCentsPerKwh(terms.solar_buyback_cents_per_kwh).to_wire(),
        early_termination_fee_cents: terms.early_termination_fee_cents,
        renewable_percent: i64::from(terms.renewable_percent),
        tos_version: terms.tos_version.clone(),
        is_month_to_month_default: terms.is_month_to_month_default,
        position,
        created_at,
        version,
    }
}

/// The version row of a group as it is now, made by `actor` at `now`.
fn version_row(
    g: &PlanGroupRow,
    actor: &Actor,
    now: chrono::DateTime<chrono::Utc>,
) -> PlanGroupVersionRow {
    PlanGroupVersionRow {
        plan_group_uuid: g.uuid,
        version: g.version,
        name: g.name.clone(),
        plan_type: g.plan_type.clone(),
        term_months: g.term_months,
        base_charge_cents_per_month: g.base_charge_cents_per_month,
        energy_margin_cents_per_kwh: g.energy_margin_cents_per_kwh.clone(),
        partner_commission_cents_per_month: g.partner_commission_cents_per_month,
        solar_buyback_cents_per_kwh: g.solar_buyback_cents_per_kwh.clone(),
        early_termination_fee_cents: g.early_termination_fee_cents,
        renewable_percent: g.renewable_percent,
        tos_version: g.tos_version.clone(),
        is_month_to_month_default: g.is_month_to_month_default,
        position: g.position,
        changed_by: actor.name().to_owned(),
        changed_by_user_uuid: actor.user(),
        created_at: now,
    }
}

/// What the audit log records of a group's values.
fn audited(g: &PlanGroupRow) -> Value {
    json!({
        "name": g.name,
        "plan_type": g.plan_type,
        "term_months": g.term_months,
        "base_charge_cents_per_month": g.base_charge_cents_per_month,
        "energy_margin_cents_per_kwh": g.energy_margin_cents_per_kwh,
        "partner_commission_cents_per_month": g.partner_commission_cents_per_month,
        "solar_buyback_cents_per_kwh": g.solar_buyback_cents_per_kwh,
        "early_termination_fee_cents": g.early_termination_fee_cents,
        "renewable_percent": g.renewable_percent,
        "tos_version": g.tos_version,
        "is_month_to_month_default": g.is_month_to_month_default,
        "position": g.position,
    })
}

/// Writes a new group and its version 1 (an app's default groups are written here too).
pub(crate) async fn insert_group(
    tx: &mut Tx,
    actor: &Actor,
    g: &PlanGroupRow,
    now: chrono::DateTime<chrono::Utc>,
) -> store::Result<()> {
    store::market::insert_plan_group(tx, g).await?;
    store::market::insert_plan_group_version(tx, &version_row(g, actor, now)).await
}

/// The rules among an app's groups: names do not repeat, and at most one month-to-month
/// default. `others` are the app's groups but the one being written.
fn sibling_errors(others: &[&PlanGroupRow], terms: &GroupTerms) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if others
        .iter()
        .any(|g| g.name.to_lowercase() == terms.name.to_lowercase())
    {
        errors.push(FieldError::invalid(
            "name",
            "another plan group of this app has this name",
        ));
    }
    if terms.is_month_to_month_default {
        if let Some(other) = others.iter().find(|g| g.is_month_to_month_default) {
            errors.push(FieldError::invalid(
                "is_month_to_month_default",
                format!(
                    "{} is this app's month-to-month default; an app has one, so clear it there first",
                    other.name
                ),
            ));
        }
    }
    errors
}

fn parsed(input: &GroupInput<'_>) -> Result<GroupValues, Error<PlanGroupRefused>> {
    parse_group(input).map_err(|e| Error::Refused(PlanGroupRefused::Fields(e)))
}

/// Makes sure the app has a month-to-month group for a contract nobody renewed to roll onto,
/// in `tx`: an app without one (its last was turned fixed before edits refused that) gets the
/// platform's, as its default, written by the service itself and recorded in the audit log
/// (with the contract that needed it) so the operator sees it. Whether one was added.
pub async fn ensure_month_to_month_group(
    tx: &mut Tx,
    app_uuid: Uuid,
    contract_uuid: Uuid,
    now: chrono::DateTime<chrono::Utc>,
) -> store::Result<bool> {
    let groups = store::market::plan_groups_of_app(&mut *tx, app_uuid).await?;
    let monthly = PlanType::MonthToMonth.as_str();
    if groups.iter().any(|g| g.plan_type == monthly) {
        return Ok(false);
    }
    let mut terms = platform_month_to_month_group();
    if groups
        .iter()
        .any(|g| g.name.to_lowercase() == terms.name.to_lowercase())
    {
        terms.name = format!("{} (platform)", terms.name);
    }
    let position = groups.iter().map(|g| g.position).max().map_or(0, |p| p + 1);
    let row = group_row(Uuid::new_v4(), app_uuid, &terms, position, 1, now);
    insert_group(tx, &Actor::System, &row, now).await?;
    audit::record(
        tx,
        &Actor::System,
        "plan_group.created",
        &format!("plan_group:{}", row.uuid),
        json!({
            "app": app_uuid,
            "version": 1,
            "after": audited(&row),
            "reason": "the app had no month-to-month group for a contract nobody renewed to roll \
                onto; the platform's month-to-month group was added as its default",
            "contract": contract_uuid,
        }),
        now,
    )
    .await?;
    tracing::warn!(%app_uuid, %contract_uuid, group = %row.uuid,
        "app without a month-to-month group: the platform's was added for a rollover");
    Ok(true)
}

/// Creates a plan group of the app, as its version 1.
pub async fn create_group(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    input: &GroupInput<'_>,
) -> Result<PlanGroupRow, Error<PlanGroupRefused>> {
    let values = parsed(input)?;
    let now = clock.now();
    let mut tx = db.begin().await?;
    let groups = store::market::plan_groups_of_app(&mut tx, app_uuid).await?;
    let errors = sibling_errors(&groups.iter().collect::<Vec<_>>(), &values.terms);
    if !errors.is_empty() {
        return refused(PlanGroupRefused::Fields(errors));
    }
    let last = groups.iter().map(|g| g.position).max();
    let position = values.position.unwrap_or_else(|| last.map_or(0, |p| p + 1));
    let row = group_row(Uuid::new_v4(), app_uuid, &values.terms, position, 1, now);
    insert_group(&mut tx, actor, &row, now).await?;
    audit::record(
        &mut tx,
        actor,
        "plan_group.created",
        &format!("plan_group:{}", row.uuid),
        json!({"app": app_uuid, "version": 1, "after": audited(&row)}),
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(row)
}

/// An edit's outcome: the group as it is now, and whether the edit changed it (an edit that
/// changes nothing makes no version).
pub struct Edited {
    pub group: PlanGroupRow,
    pub changed: bool,
}

/// Edits a plan group of the app read at version `expected`: its values become its next
/// version. Plans priced before keep their own values; plans priced after read these.
pub async fn edit_group(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    group_uuid: Uuid,
    expected: i64,
    input: &GroupInput<'_>,
) -> Result<Edited, Error<PlanGroupRefused>> {
    let values = parsed(input)?;
    let now = clock.now();
    let mut tx = db.begin().await?;
    let groups = store::market::plan_groups_of_app(&mut tx, app_uuid).await?;
    let Some(current) = groups.iter().find(|g| g.uuid == group_uuid) else {
        return refused(PlanGroupRefused::NotFound);
    };
    if current.version != expected {
        return refused(PlanGroupRefused::Stale {
            current: current.version,
        });
    }
    let others: Vec<&PlanGroupRow> = groups.iter().filter(|g| g.uuid != group_uuid).collect();
    let mut errors = sibling_errors(&others, &values.terms);
    if !keeps_a_month_to_month_group(
        others.iter().map(|g| g.plan_type.as_str()),
        values.terms.plan_type,
    ) {
        errors.push(last_month_to_month_group());
    }
    if !errors.is_empty() {
        return refused(PlanGroupRefused::Fields(errors));
    }
    let position = values.position.unwrap_or(current.position);
    let next = group_row(
        current.uuid,
        app_uuid,
        &values.terms,
        position,
        current.version + 1,
        current.created_at,
    );
    if audited(&next) == audited(current) {
        return Ok(Edited {
            group: current.clone(),
            changed: false,
        });
    }
    if !store::market::update_plan_group(&mut tx, &next, expected).await? {
        return refused(PlanGroupRefused::Stale {
            current: current.version,
        });
    }
    store::market::insert_plan_group_version(&mut tx, &version_row(&next, actor, now)).await?;
    audit::record(
        &mut tx,
        actor,
        "plan_group.edited",
        &format!("plan_group:{group_uuid}"),
        json!({
            "app": app_uuid,
            "version": next.version,
            "before": audited(current),
            "after": audited(&next),
        }),
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(Edited {
        group: next,
        changed: true,
    })
}

/// A plan group of the app and its versions, newest first.
pub struct GroupHistory {
    pub group: PlanGroupRow,
    pub versions: Vec<PlanGroupVersionRow>,
}

pub async fn group_history(
    db: &Db,
    app_uuid: Uuid,
    group_uuid: Uuid,
) -> Result<GroupHistory, Error<PlanGroupRefused>> {
    let Some(group) = store::market::plan_group_of_app(db, app_uuid, group_uuid).await? else {
        return refused(PlanGroupRefused::NotFound);
    };
    let versions = store::market::plan_group_versions(db, group_uuid).await?;
    Ok(GroupHistory { group, versions })
}
