//! Named counters for gap-free numbers (account numbers, later invoice numbers). The increment
//! happens inside the caller's transaction, so a rolled-back change leaves no gap.

use super::{on_tx, Result, Tx};

pub async fn next_value(tx: &mut Tx, name: &str) -> Result<i64> {
    let sql = "INSERT INTO counters (name, value) VALUES ($1, 1) \
        ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value";
    on_tx!(tx, c => sqlx::query_scalar::<_, i64>(sql).bind(name).fetch_one(c).await)
}
