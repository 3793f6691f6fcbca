//! Retention: finished jobs, webhook delivery attempts and e-mails done with are deleted once
//! older than their configured retention (`config::Retention`), by a background pass of every
//! worker process. Each pass deletes in small batches, one short transaction each, with a pause
//! between them, so that it never holds the database (SQLite's one writer) long enough to slow
//! the workers. Passes of several processes at once delete each row once.

use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, Utc};

use crate::{
    config::Retention,
    state::Core,
    store::{self, Tx},
};

/// Pause between two batches of one pass.
const BETWEEN_BATCHES: StdDuration = StdDuration::from_millis(20);

/// Runs a pass every `retention.interval_seconds`, the first one interval after start.
pub async fn run(state: Core) {
    let every = StdDuration::from_secs(state.config.retention.interval_seconds.max(1));
    loop {
        tokio::time::sleep(every).await;
        match prune(&state).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(rows = n, "retention pass deleted old rows"),
            Err(e) => tracing::warn!(error = %e, "retention pass failed"),
        }
    }
}

/// One pass: deletes what is past its retention; returns how many rows.
pub async fn prune(state: &Core) -> store::Result<u64> {
    let config: &Retention = &state.config.retention;
    let now = state.clock.now();
    let batch = i64::from(config.batch_size.max(1));
    let mut deleted = 0;
    if let Some(before) = cutoff(now, config.jobs_days) {
        deleted += in_batches(state, batch, |tx| {
            Box::pin(store::jobs::prune_finished(tx, before, batch))
        })
        .await?;
    }
    if let Some(before) = cutoff(now, config.webhook_deliveries_days) {
        deleted += in_batches(state, batch, |tx| {
            Box::pin(store::webhooks::prune_deliveries(tx, before, batch))
        })
        .await?;
    }
    if let Some(before) = cutoff(now, config.emails_days) {
        deleted += in_batches(state, batch, |tx| {
            Box::pin(store::emails::prune_emails(tx, before, batch))
        })
        .await?;
        // An e-mail's single-use link goes with the e-mail.
        deleted += in_batches(state, batch, |tx| {
            Box::pin(store::hosted_links::prune_hosted_links(tx, before, batch))
        })
        .await?;
    }
    // One-time codes live minutes and count against limits for an hour: a day is plenty.
    let codes_before = now - Duration::days(1);
    deleted += in_batches(state, batch, |tx| {
        Box::pin(store::hosted_links::prune_hosted_codes(
            tx,
            codes_before,
            batch,
        ))
    })
    .await?;
    // A password reset link lives an hour and counts against its limit for an hour.
    deleted += in_batches(state, batch, |tx| {
        Box::pin(store::users::prune_password_resets(tx, codes_before, batch))
    })
    .await?;
    // Browser sessions past their idle timeout: the store deletes them in one statement.
    use tower_sessions::session_store::ExpiredDeletion;
    if let Err(e) = store::web_sessions::WebSessionStore::new(&state.db)
        .delete_expired()
        .await
    {
        tracing::warn!(error = %e, "deleting expired browser sessions failed");
    }
    Ok(deleted)
}

/// `days` before `now`; none when kept forever (0).
fn cutoff(now: DateTime<Utc>, days: u32) -> Option<DateTime<Utc>> {
    (days > 0).then(|| now - Duration::days(i64::from(days)))
}

type Batch<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = store::Result<u64>> + Send + 'a>>;

/// Runs `delete` (one batch of at most `batch` rows) in its own transaction until a batch
/// deletes less than a full batch.
async fn in_batches<F>(state: &Core, batch: i64, delete: F) -> store::Result<u64>
where
    F: for<'a> Fn(&'a mut Tx) -> Batch<'a>,
{
    let mut total = 0;
    loop {
        let mut tx = state.db.begin().await?;
        let n = delete(&mut tx).await?;
        tx.commit().await?;
        total += n;
        if i64::try_from(n).unwrap_or(i64::MAX) < batch {
            return Ok(total);
        }
        tokio::time::sleep(BETWEEN_BATCHES).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_retention_keeps_forever() {
        let now = Utc::now();
        assert_eq!(cutoff(now, 0), None);
        assert_eq!(cutoff(now, 14), Some(now - Duration::days(14)));
    }
}
