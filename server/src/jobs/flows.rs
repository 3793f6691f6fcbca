//! A flow session's end: its summary (`flow.session_ended`) once it is over.

use super::JobContext;
use crate::services::flows::{self, SessionEndPayload};

pub async fn session_end(ctx: &JobContext) -> anyhow::Result<()> {
    let payload: SessionEndPayload = serde_json::from_str(&ctx.job.payload)?;
    let (mut tx, outcome) = flows::end_session(&ctx.state, &ctx.clock, &payload).await?;
    if ctx.finish(&mut tx, &outcome).await? {
        tx.commit().await?;
    }
    Ok(())
}
