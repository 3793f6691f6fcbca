//! Credit-check submissions: the SSN encrypted (AES-256-GCM, sealed by the caller), the last
//! four digits in clear, the consent time. The newest submission of an account is the one
//! that counts.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_tx, Result, Tx};

pub struct NewCreditCheck<'a> {
    pub account_uuid: Uuid,
    pub ssn_ciphertext: &'a [u8],
    pub ssn_last4: &'a str,
    pub consented_at: DateTime<Utc>,
    pub status: &'a str,
}

pub async fn insert_credit_check(tx: &mut Tx, c: &NewCreditCheck<'_>) -> Result<()> {
    let sql = "INSERT INTO credit_checks (uuid, account_uuid, ssn_ciphertext, ssn_last4, \
        consented_at, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";
    on_tx!(tx, conn => sqlx::query(sql)
        .bind(Uuid::new_v4())
        .bind(c.account_uuid)
        .bind(c.ssn_ciphertext)
        .bind(c.ssn_last4)
        .bind(c.consented_at)
        .bind(c.status)
        .bind(c.consented_at)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct CreditCheckRow {
    pub ssn_ciphertext: Vec<u8>,
    pub ssn_last4: String,
    pub status: String,
}

pub async fn latest_credit_check(
    tx: &mut Tx,
    account_uuid: Uuid,
) -> Result<Option<CreditCheckRow>> {
    let sql = "SELECT ssn_ciphertext, ssn_last4, status FROM credit_checks \
        WHERE account_uuid = $1 ORDER BY created_at DESC, uuid DESC LIMIT 1";
    on_tx!(tx, c => sqlx::query_as::<_, CreditCheckRow>(sql)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)
}
