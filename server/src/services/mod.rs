//! The use cases that both the HTTP handlers and the background jobs run, so that neither calls
//! the other: each takes the core state (`state::Core`) or the caller's transaction, writes the
//! events and jobs it causes in that transaction, and says why it refused in a typed error that
//! `http::error` renders and a job records.

pub mod billing;
pub mod credit;
pub mod enrollment;
pub mod status;
