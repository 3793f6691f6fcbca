//! Credit-check submissions: the SSN encrypted (AES-256-GCM, sealed by the caller), the last
//! four digits in clear, the consent time. The newest submission of an account is the one
//! that counts.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_tx, Result, Tx};
use crate::domain::status::CreditState;

pub struct NewCreditCheck<'a> {
    pub account_uuid: Uuid,
    pub ssn_ciphertext: &'a [u8],
    pub ssn_last4: &'a str,
    pub consented_at: DateTime<Utc>,
    pub status: CreditState,
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

#[derive(Clone, sqlx::FromRow)]
pub struct CreditCheckRow {
    pub uuid: Uuid,
    pub ssn_ciphertext: Vec<u8>,
    pub ssn_last4: String,
    /// An unknown stored name fails the read.
    pub status: CreditState,
    /// The job that runs this check now (older jobs of the same check stand down).
    pub job_uuid: Option<Uuid>,
}

impl std::fmt::Debug for CreditCheckRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreditCheckRow")
            .field("uuid", &self.uuid)
            .field("status", &self.status)
            .field("job_uuid", &self.job_uuid)
            .finish_non_exhaustive()
    }
}

const CHECK_COLUMNS: &str = "uuid, ssn_ciphertext, ssn_last4, status, job_uuid";

pub async fn latest_credit_check(
    tx: &mut Tx,
    account_uuid: Uuid,
) -> Result<Option<CreditCheckRow>> {
    let sql = format!(
        "SELECT {CHECK_COLUMNS} FROM credit_checks \
        WHERE account_uuid = $1 ORDER BY created_at DESC, uuid DESC LIMIT 1"
    );
    on_tx!(tx, c => sqlx::query_as::<_, CreditCheckRow>(&sql)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)
}

/// Hands the check to a (new) job and sets its status (`pending`).
pub async fn set_credit_check_job(
    tx: &mut Tx,
    uuid: Uuid,
    job_uuid: Uuid,
    status: CreditState,
) -> Result<()> {
    let sql = "UPDATE credit_checks SET job_uuid = $1, status = $2 WHERE uuid = $3";
    on_tx!(tx, c => sqlx::query(sql).bind(job_uuid).bind(status).bind(uuid).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Records the bureau's answer.
pub async fn set_credit_check_answer(
    tx: &mut Tx,
    uuid: Uuid,
    status: CreditState,
    checked_at: DateTime<Utc>,
) -> Result<()> {
    let sql = "UPDATE credit_checks SET status = $1, checked_at = $2 WHERE uuid = $3";
    on_tx!(tx, c => sqlx::query(sql).bind(status).bind(checked_at).bind(uuid).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// What the sandbox credit bureau remembers of one submission.
#[derive(Debug, Clone, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct SandboxCreditFile {
    pub forced: Option<String>,
    pub unfrozen: bool,
    pub errors_served: i32,
}

pub async fn sandbox_credit_file(
    tx: &mut Tx,
    credit_check_uuid: Uuid,
) -> Result<Option<SandboxCreditFile>> {
    let sql = "SELECT forced, unfrozen, errors_served FROM sandbox_credit_files \
        WHERE credit_check_uuid = $1";
    on_tx!(tx, c => sqlx::query_as::<_, SandboxCreditFile>(sql)
        .bind(credit_check_uuid)
        .fetch_optional(c)
        .await)
}

pub async fn put_sandbox_credit_file(
    tx: &mut Tx,
    credit_check_uuid: Uuid,
    file: &SandboxCreditFile,
) -> Result<()> {
    let sql = "INSERT INTO sandbox_credit_files (credit_check_uuid, forced, unfrozen, \
        errors_served) VALUES ($1, $2, $3, $4) ON CONFLICT (credit_check_uuid) DO UPDATE SET \
        forced = excluded.forced, unfrozen = excluded.unfrozen, \
        errors_served = excluded.errors_served";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(credit_check_uuid)
        .bind(file.forced.as_deref())
        .bind(file.unfrozen)
        .bind(file.errors_served)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}
