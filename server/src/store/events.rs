//! Events, written in the transaction of the change that causes them.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_tx, Result, Tx};

pub struct NewEvent<'a> {
    pub app_uuid: Uuid,
    pub account_uuid: Option<Uuid>,
    pub kind: &'a str,
    pub data: serde_json::Value,
    pub created_at: DateTime<Utc>,
}

pub async fn insert_event(tx: &mut Tx, event: &NewEvent<'_>) -> Result<Uuid> {
    let uuid = Uuid::new_v4();
    let sql = "INSERT INTO events (uuid, app_uuid, account_uuid, type, data, created_at) \
        VALUES ($1, $2, $3, $4, $5, $6)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(uuid)
        .bind(event.app_uuid)
        .bind(event.account_uuid)
        .bind(event.kind)
        .bind(event.data.to_string())
        .bind(event.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(uuid)
}

/// The types and data of an account's events, oldest first.
pub async fn events_of_account(
    db: &super::Db,
    account_uuid: Uuid,
) -> Result<Vec<(String, String)>> {
    let sql = "SELECT type, data FROM events WHERE account_uuid = $1 ORDER BY created_at, uuid";
    super::on_db!(db, c => sqlx::query_as::<_, (String, String)>(sql)
        .bind(account_uuid)
        .fetch_all(c)
        .await)
}
