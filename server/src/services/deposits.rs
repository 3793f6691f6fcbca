//! Deposits: the most one may be for an account (the rule of `domain::deposits`, on the
//! estimate of its next twelve bills), and the deposit a credit review asks for.

use chrono::NaiveDate;
use uuid::Uuid;

use crate::{
    domain::deposits::{
        contract_price, estimated_bills, max_deposit_cents, monthly_kwh, DEFAULT_CENTS_PER_KWH,
    },
    store::{self, Tx},
};

/// The most a deposit of the account may be on `today`, in cents: its meter's estimated usage
/// (a standard home's when no address is confirmed) at its newest contract's price (a typical
/// price when none was accepted yet).
pub async fn max_deposit_for(
    tx: &mut Tx,
    account_uuid: Uuid,
    today: NaiveDate,
) -> store::Result<i64> {
    let address = store::enrollment::confirmed_address(&mut *tx, account_uuid).await?;
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account_uuid).await?;
    let (cents_per_kwh, fixed) = contracts
        .iter()
        .max_by_key(|c| c.accepted_at)
        .and_then(|c| contract_price(&c.rates))
        .unwrap_or((DEFAULT_CENTS_PER_KWH, 0));
    let kwh = monthly_kwh(address.as_ref().map(|a| a.esi_id.as_str()), today);
    Ok(max_deposit_cents(&estimated_bills(
        &kwh,
        cents_per_kwh,
        fixed,
    )))
}
