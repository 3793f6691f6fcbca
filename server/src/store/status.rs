//! Keeps an account's stored status equal to what `domain::status::derive_status` says of its
//! facts: called in the transaction of every change to those facts, it writes the new status,
//! its history row and the `account.status_updated` event together with the change.

use app::api::{AccountStatus, StatusReason};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{accounts, credit, enrollment, events, Result, Tx};
use crate::domain::{
    enrollment::{enroller, ContractStatus},
    events::Event,
    market::Enroller,
    status::{
        derive_status, Cancellation, CreditState, StatusFacts, UtilityState, VerificationState,
    },
};

/// Re-derives the account's status; returns the new one when it changed.
pub async fn update_status(
    tx: &mut Tx,
    app_uuid: Uuid,
    account_uuid: Uuid,
    now: DateTime<Utc>,
) -> Result<Option<(AccountStatus, StatusReason)>> {
    let row = accounts::account_of_app_for_update(tx, app_uuid, account_uuid)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    let profile = row
        .profile()
        .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    let credit = credit::latest_credit_check(tx, account_uuid)
        .await?
        .and_then(|c| CreditState::parse(&c.status))
        .unwrap_or_default();
    let enrollment = enrollment::enrollment(&mut *tx, account_uuid).await?;
    let contracts = enrollment::contracts_of_account(&mut *tx, account_uuid).await?;
    let locations = enrollment::locations_of_account(&mut *tx, account_uuid).await?;
    let facts = StatusFacts {
        has_confirmed_address: enrollment::confirmed_address(&mut *tx, account_uuid)
            .await?
            .is_some(),
        has_accepted_plan: contracts
            .iter()
            .any(|c| matches!(c.status, ContractStatus::Pending | ContractStatus::Active)),
        is_identity_complete: profile.is_identity_complete(),
        has_payment_method: row.has_payment_method,
        is_client_agent_flow: enroller(row.client_agent_accepted_at) == Enroller::ClientAgent,
        is_finalized: enrollment.is_some(),
        credit,
        verification: enrollment
            .as_ref()
            .and_then(|e| VerificationState::parse(&e.verification))
            .unwrap_or_default(),
        utility: enrollment
            .as_ref()
            .and_then(|e| UtilityState::parse(&e.utility))
            .unwrap_or_default(),
        is_service_active: locations.iter().any(|l| l.is_energized()),
        is_disconnected: locations
            .iter()
            .any(|l| l.is_service_active && l.is_disconnected),
        cancellation: enrollment
            .as_ref()
            .and_then(|e| e.cancellation.as_deref())
            .and_then(Cancellation::parse),
    };
    let (status, reason) = derive_status(&facts);
    if status.as_str() == row.status && reason.as_str() == row.status_reason {
        return Ok(None);
    }
    accounts::update_status(tx, account_uuid, status.as_str(), reason.as_str(), now).await?;
    accounts::insert_status_history(tx, account_uuid, status.as_str(), reason.as_str(), now)
        .await?;
    events::insert_event(
        tx,
        &events::NewEvent::of(
            app_uuid,
            &Event::StatusUpdated {
                account_uuid,
                status: status.as_str().to_owned(),
                status_reason: reason.as_str().to_owned(),
                previous_status: row.status.clone(),
                previous_status_reason: row.status_reason.clone(),
            },
            now,
        ),
    )
    .await?;
    Ok(Some((status, reason)))
}
