//! The integration suite: every test starts the real server on a random port against a fresh
//! database, once on SQLite and once on PostgreSQL (`both_engines!`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod helpers;

mod abuse;
mod account_routes;
mod accounts;
mod auth;
mod backup;
mod billing;
mod cli;
mod collections;
mod concurrency;
mod conflicts;
mod contract_life;
mod corrections;
mod cors;
mod credit;
mod credit_bureau;
mod credit_review;
mod dashboard;
mod data_at_rest;
mod deposits;
mod disconnection;
mod docs;
mod emails;
mod enrollment;
mod errors;
mod fake_bureau;
mod fake_processor;
mod flow_events;
mod flows;
mod hosted;
mod idempotency;
mod identity;
mod jobs;
mod links;
mod live_payments;
mod market;
mod methods;
mod openapi;
mod openapi_answers;
mod operator_tools;
mod ops;
mod pages;
mod payments;
mod plan_groups;
mod portal;
mod processor_webhooks;
mod rate_limits;
mod readiness;
mod receiver;
mod recovery;
mod renewal;
mod sandbox;
mod utility;
mod webhooks;
