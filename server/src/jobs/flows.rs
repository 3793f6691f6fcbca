//! A flow session's end: its summary (`flow.session_ended`) once it is over.

use super::JobContext;
use crate::{domain::jobs::SessionEndPayload, services::flows};

pub async fn session_end(ctx: &JobContext, payload: &SessionEndPayload) -> anyhow::Result<()> {
    let (mut tx, outcome) = flows::end_session(&ctx.state, &ctx.clock, payload).await?;
    if ctx.finish(&mut tx, &outcome).await? {
        tx.commit().await?;
    }
    Ok(())
}
