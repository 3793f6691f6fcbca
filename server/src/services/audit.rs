//! Who made a change from the dashboard or the CLI, written in the change's own transaction.

use serde_json::Value;
use uuid::Uuid;

use crate::store::{self, audit::AuditRow, Tx};

/// Who made a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// A signed-in dashboard user.
    User { uuid: Uuid, email: String },
    /// An operator at the command line.
    Cli,
    /// The server itself (the first start).
    System,
}

impl Actor {
    /// How the audit log and version histories name the actor.
    pub fn name(&self) -> &str {
        match self {
            Actor::User { email, .. } => email,
            Actor::Cli => "cli",
            Actor::System => "system",
        }
    }

    /// The dashboard user, when it was one.
    pub fn user(&self) -> Option<Uuid> {
        match self {
            Actor::User { uuid, .. } => Some(*uuid),
            Actor::Cli | Actor::System => None,
        }
    }
}

/// Records `action` on `target` by `actor`. `detail` must never hold a secret (a token, a
/// password, a key): callers pass what changed, not with what.
pub async fn record(
    tx: &mut Tx,
    actor: &Actor,
    action: &str,
    target: &str,
    detail: Value,
    now: chrono::DateTime<chrono::Utc>,
) -> store::Result<()> {
    store::audit::insert_entry(
        tx,
        &AuditRow {
            uuid: Uuid::new_v4(),
            actor: actor.name().to_owned(),
            user_uuid: actor.user(),
            action: action.to_owned(),
            target: target.to_owned(),
            detail: detail.to_string(),
            created_at: now,
        },
    )
    .await
}
