//! The credit review queue (checks the bureau did not approve, waiting for the operator's
//! decision) and the deposits such decisions ask for.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};
use crate::domain::credit::{ReviewCause, ReviewStatus};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct CreditReviewRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub credit_check_uuid: Uuid,
    pub cause: ReviewCause,
    pub status: ReviewStatus,
    pub max_deposit_cents: i64,
    pub deposit_cents: Option<i64>,
    pub decision_reason: Option<String>,
    pub decided_by: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// Of the app and the account, for the queue's pages.
    pub app_name: String,
    pub organisation_uuid: Option<Uuid>,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
}

const COLUMNS: &str = "r.uuid, r.app_uuid, r.account_uuid, r.credit_check_uuid, r.cause, \
    r.status, r.max_deposit_cents, r.deposit_cents, r.decision_reason, r.decided_by, \
    r.decided_at, r.created_at, p.display_name AS app_name, p.organisation_uuid, \
    a.first_name, a.last_name, a.email";

const FROM: &str = "FROM credit_reviews r JOIN apps p ON p.uuid = r.app_uuid \
    JOIN accounts a ON a.uuid = r.account_uuid";

pub struct NewReview {
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub credit_check_uuid: Uuid,
    pub cause: ReviewCause,
    pub max_deposit_cents: i64,
    pub created_at: DateTime<Utc>,
}

/// Opens a review of the check unless one is open already; answers the new review's id.
pub async fn open_review(tx: &mut Tx, r: &NewReview) -> Result<Option<Uuid>> {
    let uuid = Uuid::new_v4();
    let sql = "INSERT INTO credit_reviews (uuid, app_uuid, account_uuid, credit_check_uuid, \
        cause, status, max_deposit_cents, created_at) \
        SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE NOT EXISTS \
        (SELECT 1 FROM credit_reviews WHERE credit_check_uuid = $4 AND status = $6)";
    let inserted = on_tx!(tx, c => sqlx::query(sql)
        .bind(uuid)
        .bind(r.app_uuid)
        .bind(r.account_uuid)
        .bind(r.credit_check_uuid)
        .bind(r.cause)
        .bind(ReviewStatus::Open)
        .bind(r.max_deposit_cents)
        .bind(r.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok((inserted > 0).then_some(uuid))
}

/// Withdraws the open reviews of the account's checks other than `keep` (none: every one),
/// when a later answer or a new submission settled them. Answers how many.
pub async fn withdraw_open_reviews(
    tx: &mut Tx,
    account_uuid: Uuid,
    keep: Option<Uuid>,
    now: DateTime<Utc>,
) -> Result<u64> {
    // Nil matches no check: every open review goes.
    let sql = "UPDATE credit_reviews SET status = $1, decided_at = $2, decided_by = 'system' \
        WHERE account_uuid = $3 AND status = $4 AND credit_check_uuid <> $5";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(ReviewStatus::Withdrawn)
        .bind(now)
        .bind(account_uuid)
        .bind(ReviewStatus::Open)
        .bind(keep.unwrap_or(Uuid::nil()))
        .execute(c)
        .await
        .map(|r| r.rows_affected()))
}

/// Withdraws the open review of one check (it passed after all).
pub async fn withdraw_review_of_check(
    tx: &mut Tx,
    credit_check_uuid: Uuid,
    now: DateTime<Utc>,
) -> Result<u64> {
    let sql = "UPDATE credit_reviews SET status = $1, decided_at = $2, decided_by = 'system' \
        WHERE credit_check_uuid = $3 AND status = $4";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(ReviewStatus::Withdrawn)
        .bind(now)
        .bind(credit_check_uuid)
        .bind(ReviewStatus::Open)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))
}

pub struct Decision<'a> {
    pub status: ReviewStatus,
    pub deposit_cents: Option<i64>,
    pub reason: Option<&'a str>,
    pub decided_by: &'a str,
    pub decided_by_user_uuid: Option<Uuid>,
    pub decided_at: DateTime<Utc>,
}

/// Records the decision on a review that is still open; answers whether it was.
pub async fn decide(tx: &mut Tx, uuid: Uuid, d: &Decision<'_>) -> Result<bool> {
    let sql = "UPDATE credit_reviews SET status = $1, deposit_cents = $2, decision_reason = $3, \
        decided_by = $4, decided_by_user_uuid = $5, decided_at = $6 \
        WHERE uuid = $7 AND status = $8";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(d.status)
        .bind(d.deposit_cents)
        .bind(d.reason)
        .bind(d.decided_by)
        .bind(d.decided_by_user_uuid)
        .bind(d.decided_at)
        .bind(uuid)
        .bind(ReviewStatus::Open)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n > 0)
}

/// The review `uuid`, in the caller's transaction or from the pool.
pub async fn review_by_uuid(
    conn: impl Into<Conn<'_>>,
    uuid: Uuid,
) -> Result<Option<CreditReviewRow>> {
    let sql = format!("SELECT {COLUMNS} {FROM} WHERE r.uuid = $1");
    on_conn!(conn.into(), c => sqlx::query_as::<_, CreditReviewRow>(&sql).bind(uuid)
        .fetch_optional(c).await)
}

/// The reviews of one organisation's apps (none: every app's), open ones first (oldest
/// first: the queue's order), then decided ones newest first; at most `limit`.
pub async fn reviews_of(
    db: &Db,
    organisation: Option<Uuid>,
    limit: i64,
) -> Result<Vec<CreditReviewRow>> {
    let filter = if organisation.is_some() {
        "WHERE p.organisation_uuid = $3"
    } else {
        ""
    };
    let sql = format!(
        "SELECT {COLUMNS} {FROM} {filter} \
         ORDER BY CASE WHEN r.status = $1 THEN 0 ELSE 1 END, \
         CASE WHEN r.status = $1 THEN r.created_at END ASC, r.created_at DESC, r.uuid \
         LIMIT $2"
    );
    on_db!(db, c => {
        let q = sqlx::query_as::<_, CreditReviewRow>(&sql)
            .bind(ReviewStatus::Open)
            .bind(limit);
        match organisation {
            Some(org) => q.bind(org).fetch_all(c).await,
            None => q.fetch_all(c).await,
        }
    })
}

/// The reviews of one account, newest first.
pub async fn reviews_of_account(db: &Db, account_uuid: Uuid) -> Result<Vec<CreditReviewRow>> {
    let sql = format!(
        "SELECT {COLUMNS} {FROM} WHERE r.account_uuid = $1 ORDER BY r.created_at DESC, r.uuid"
    );
    on_db!(db, c => sqlx::query_as::<_, CreditReviewRow>(&sql)
        .bind(account_uuid)
        .fetch_all(c)
        .await)
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DepositRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub review_uuid: Option<Uuid>,
    pub amount_cents: i64,
    pub status: String,
    pub paid_cents: i64,
    pub interest_cents: i64,
    pub refunded_cents: i64,
    pub created_at: DateTime<Utc>,
    pub paid_at: Option<DateTime<Utc>>,
    pub refunded_at: Option<DateTime<Utc>>,
    /// Why the operator waived it (`domain::deposits::Waiver`'s names), by whom and when.
    pub waiver: Option<String>,
    pub waived_by: Option<String>,
    pub waived_at: Option<DateTime<Utc>>,
    /// The day through which `interest_cents` is accrued (none: nothing accrued yet).
    pub interest_through: Option<chrono::NaiveDate>,
    /// Of what comes back, what no bill has taken yet.
    pub refund_left_cents: i64,
    /// The sandbox's simulation: the refund is earned whatever the payments.
    pub refund_due: bool,
    /// `on_time_payments` or `final_bill`, once it comes back.
    pub refund_reason: Option<String>,
    /// The processor's payment that paid it by card, and how much that payment was.
    pub processor_payment_id: Option<String>,
    pub charged_cents: i64,
    /// What went back to that card of what the final bill left, and when.
    pub paid_out_cents: i64,
    pub paid_out_at: Option<DateTime<Utc>>,
}

pub(crate) const DEPOSIT_COLUMNS: &str =
    "uuid, app_uuid, account_uuid, review_uuid, amount_cents, \
    status, paid_cents, interest_cents, refunded_cents, created_at, paid_at, refunded_at, waiver, \
    waived_by, waived_at, interest_through, refund_left_cents, refund_due, refund_reason, \
    processor_payment_id, charged_cents, paid_out_cents, paid_out_at";

/// A deposit asked of the account (`required`, nothing paid yet).
pub async fn insert_deposit(
    tx: &mut Tx,
    app_uuid: Uuid,
    account_uuid: Uuid,
    review_uuid: Uuid,
    amount_cents: i64,
    now: DateTime<Utc>,
) -> Result<Uuid> {
    let uuid = Uuid::new_v4();
    let sql = "INSERT INTO deposits (uuid, app_uuid, account_uuid, review_uuid, amount_cents, \
        status, created_at) VALUES ($1, $2, $3, $4, $5, 'required', $6)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(uuid)
        .bind(app_uuid)
        .bind(account_uuid)
        .bind(review_uuid)
        .bind(amount_cents)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(uuid)
}

/// The account's latest deposit.
pub async fn latest_deposit(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Option<DepositRow>> {
    let sql = format!(
        "SELECT {DEPOSIT_COLUMNS} FROM deposits WHERE account_uuid = $1 \
         ORDER BY created_at DESC, uuid DESC LIMIT 1"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, DepositRow>(&sql)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)
}

/// Marks a deposit still `required` as paid (`paid_cents` by the processor's payment
/// `payment_id`); answers whether it was still required.
pub async fn mark_deposit_paid(
    tx: &mut Tx,
    uuid: Uuid,
    paid_cents: i64,
    payment_id: &str,
    now: DateTime<Utc>,
) -> Result<bool> {
    let sql = "UPDATE deposits SET status = 'paid', paid_cents = $1, charged_cents = $1, \
        processor_payment_id = $2, paid_at = $3 WHERE uuid = $4 AND status = 'required'";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(paid_cents)
        .bind(payment_id)
        .bind(now)
        .bind(uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n > 0)
}
