//! The use cases that both the HTTP handlers and the background jobs run, so that neither calls
//! the other: each takes the core state (`state::Core`) or the caller's transaction, writes the
//! events and jobs it causes in that transaction, and says why it refused in a typed error that
//! `http::error` renders and a job records.

pub mod accounts;
pub mod app_requests;
pub mod apps;
pub mod audit;
pub mod billing;
pub mod collections;
pub mod corrections;
pub mod credit;
pub mod dashboard;
pub mod deposits;
pub mod disconnection;
pub mod documents;
pub mod enrollment;
pub mod flows;
pub mod follow_up;
pub mod hosted;
pub mod invoices;
pub mod live_payments;
pub mod plan_groups;
pub mod plans;
pub mod portal;
pub mod processor;
pub mod renewal;
pub mod sandbox;
pub mod usage;
pub mod users;
pub mod webhooks;

/// A use case's failure: refused for a reason of its own (`R`, rendered by `http::error`, and
/// nothing written), or failed inside (the database, a broken row).
#[derive(Debug)]
pub enum Error<R> {
    Refused(R),
    Failed(anyhow::Error),
}

impl<R> From<sqlx::Error> for Error<R> {
    fn from(err: sqlx::Error) -> Self {
        Error::Failed(err.into())
    }
}
