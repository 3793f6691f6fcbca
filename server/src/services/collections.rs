//! Collections settings as the operator changes them (the dashboard): an app's late-fee
//! percent (or none) and the accounts exempt from late fees. Each change is audited in its own
//! transaction. Charging the fee is the billing cycle's (`services::billing`).

use uuid::Uuid;

use super::{
    apps::{existing_app, AppRefused},
    audit::{self, Actor},
    Error,
};
use crate::{
    clock::Clock,
    domain::collections::LateFeePercent,
    store::{self, Db},
};

/// The app's late fee; none when it charges none.
pub async fn late_fee_setting(db: &Db, app_uuid: Uuid) -> store::Result<Option<LateFeePercent>> {
    Ok(store::collections::late_fee_percent(db, app_uuid)
        .await?
        .as_deref()
        .and_then(LateFeePercent::from_stored))
}

/// Sets the app's late fee from the operator's `raw` percent (blank or `off`: none).
pub async fn set_late_fee(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    raw: &str,
) -> Result<Option<LateFeePercent>, Error<AppRefused>> {
    let app = existing_app(db, app_uuid).await?;
    let percent = LateFeePercent::parse_setting("late_fee_percent", raw)?;
    let before = late_fee_setting(db, app.uuid).await?;
    let wire = percent.map(LateFeePercent::to_wire);
    let mut tx = db.begin().await?;
    store::collections::set_late_fee_percent(&mut tx, app.uuid, wire.as_deref(), clock.now())
        .await?;
    audit::record(
        &mut tx,
        actor,
        "app.late_fee_set",
        &format!("app:{app_uuid}"),
        serde_json::json!({
            "before": before.map(LateFeePercent::to_wire),
            "after": wire,
        }),
        clock.now(),
    )
    .await?;
    tx.commit().await?;
    Ok(percent)
}

/// Marks the account of `app_uuid` exempt from late fees, or clears the mark; answers whether
/// anything changed. `None` when the account is not the app's.
pub async fn set_late_fee_exempt(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    app_uuid: Uuid,
    account_uuid: Uuid,
    exempt: bool,
) -> store::Result<Option<bool>> {
    if store::accounts::account_of_app(db, app_uuid, account_uuid)
        .await?
        .is_none()
    {
        return Ok(None);
    }
    let mut tx = db.begin().await?;
    let changed = store::collections::set_late_fee_exempt(
        &mut tx,
        app_uuid,
        account_uuid,
        exempt,
        clock.now(),
    )
    .await?;
    if changed {
        audit::record(
            &mut tx,
            actor,
            "account.late_fee_exemption_set",
            &format!("account:{account_uuid}"),
            serde_json::json!({ "exempt": exempt }),
            clock.now(),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(Some(changed))
}
