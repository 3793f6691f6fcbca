//! The use cases that both the HTTP handlers and the background jobs run, so that neither calls
//! the other: each takes the core state (`state::Core`), does its work in one transaction that
//! also writes the events and jobs it causes, and returns a typed error that `http::error`
//! renders and a job records.
