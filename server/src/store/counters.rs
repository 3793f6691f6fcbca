//! Named counters for gap-free numbers (account numbers, invoice numbers). The increment
//! happens inside the caller's transaction, so a rolled-back change leaves no gap. On
//! PostgreSQL the counter's row stays locked until that transaction ends, so callers take their
//! number as late as they can.

use super::{on_tx, Result, Tx};

pub async fn next_value(tx: &mut Tx, name: &str) -> Result<i64> {
    let sql = "INSERT INTO counters (name, value) VALUES ($1, 1) \
        ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value";
    on_tx!(tx, c => sqlx::query_scalar::<_, i64>(sql).bind(name).fetch_one(c).await)
}

/// A block of `count` (at least 1) consecutive values of the counter, in one statement: answers
/// the first; the block is the first and the `count - 1` after it.
pub async fn next_values(tx: &mut Tx, name: &str, count: i64) -> Result<i64> {
    let count = count.max(1);
    let sql = "INSERT INTO counters (name, value) VALUES ($1, $2) \
        ON CONFLICT (name) DO UPDATE SET value = counters.value + $2 RETURNING value";
    let last = on_tx!(tx, c => sqlx::query_scalar::<_, i64>(sql).bind(name).bind(count).fetch_one(c).await)?;
    Ok(last - count + 1)
}
