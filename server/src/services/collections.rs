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
    domain::{
        billing::ChargeGroup,
        collections::{late_fee_cents, penalizable_cents, LateFeePercent},
    },
    store::{self, billing::InvoiceRow, Db, Tx},
};

/// The app's late fee; none when it charges none.
pub async fn late_fee_setting(db: &Db, app_uuid: Uuid) -> store::Result<Option<LateFeePercent>> {
    Ok(store::collections::late_fee_percent(db, app_uuid)
        .await?
        .as_deref()
        .and_then(LateFeePercent::from_stored))
}

/// The late fee the next bill will charge on `invoice` (past due now) unless it is paid
/// first, in `tx`; none when the app charges none or the account is exempt.
pub async fn upcoming_late_fee(
    tx: &mut Tx,
    app_uuid: Uuid,
    invoice: &InvoiceRow,
) -> store::Result<Option<i64>> {
    let Some(percent) = store::collections::late_fee_percent(&mut *tx, app_uuid)
        .await?
        .as_deref()
        .and_then(LateFeePercent::from_stored)
    else {
        return Ok(None);
    };
    if store::collections::is_late_fee_exempt(&mut *tx, invoice.account_uuid).await? {
        return Ok(None);
    }
    let Ok(groups) = serde_json::from_str::<Vec<ChargeGroup>>(&invoice.charges) else {
        return Ok(None);
    };
    let fee = late_fee_cents(penalizable_cents(&groups), percent.value());
    Ok((fee > 0).then_some(fee))
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
