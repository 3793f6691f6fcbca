//! Persistence: the connection pools of both engines, transactions, and every SQL statement of
//! the product. One SQL text serves SQLite and PostgreSQL through the `on_tx!`/`on_db!` macros;
//! only the migrations (`migrations/<engine>`) differ.
//!
//! Query functions take the transaction (or the `Db` for reads) from their caller, so that a
//! handler's whole change — rows, history, events, jobs — commits or rolls back together.

pub mod accounts;
pub mod app_requests;
pub mod apps;
pub mod audit;
pub mod backup;
pub mod billing;
pub mod collections;
pub mod corrections;
pub mod counters;
pub mod credit;
pub mod credit_reviews;
pub mod deposits;
pub mod disconnections;
pub mod documents;
pub mod emails;
pub mod enrollment;
pub mod events;
pub mod flows;
pub mod hosted_links;
pub mod idempotency;
pub mod jobs;
pub mod market;
pub mod payments;
pub mod renewal;
pub mod users;
pub mod utility;
pub mod web_sessions;
pub mod webhooks;

use std::{str::FromStr, time::Duration};

use sqlx::{
    postgres::PgPoolOptions,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
    PgPool, SqlitePool,
};

/// Runs `$body` with `$c` bound to the transaction's connection, whichever the engine.
macro_rules! on_tx {
    ($tx:expr, $c:ident => $body:expr) => {
        match $tx {
            $crate::store::Tx::Sqlite(t) => {
                let $c = &mut **t;
                $body
            }
            $crate::store::Tx::Postgres(t) => {
                let $c = &mut **t;
                $body
            }
        }
    };
}

/// Runs `$body` with `$c` bound to a read pool, whichever the engine.
macro_rules! on_db {
    ($db:expr, $c:ident => $body:expr) => {
        match $db {
            $crate::store::Db::Sqlite(s) => {
                let $c = &s.reader;
                $body
            }
            $crate::store::Db::Postgres(p) => {
                let $c = p;
                $body
            }
        }
    };
}

/// Runs `$body` with `$c` bound to the connection of a `Conn`: the read pool, or the
/// transaction.
macro_rules! on_conn {
    ($conn:expr, $c:ident => $body:expr) => {
        match $conn {
            $crate::store::Conn::Db(db) => $crate::store::on_db!(db, $c => $body),
            $crate::store::Conn::Tx(tx) => $crate::store::on_tx!(tx, $c => $body),
        }
    };
}

pub(crate) use {on_conn, on_db, on_tx};

/// Where a read runs: a read pool (`&Db`), or a transaction (`&mut Tx`) whose own writes it
/// must see and whose rows it is about to change. Reads that serve both take
/// `impl Into<Conn>`, so each query is written once.
pub enum Conn<'a> {
    Db(&'a Db),
    Tx(&'a mut Tx),
}

impl<'a> From<&'a Db> for Conn<'a> {
    fn from(db: &'a Db) -> Self {
        Conn::Db(db)
    }
}

impl<'a> From<&'a mut Tx> for Conn<'a> {
    fn from(tx: &'a mut Tx) -> Self {
        Conn::Tx(tx)
    }
}

pub type Result<T, E = sqlx::Error> = std::result::Result<T, E>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// SQLite: one writer connection (SQLite admits one writer at a time; queueing in the pool is
/// cheaper than busy retries) and a pool of readers, which WAL lets run beside the writer.
#[derive(Clone)]
pub struct SqliteDb {
    pub(crate) writer: SqlitePool,
    pub(crate) reader: SqlitePool,
}

#[derive(Clone)]
pub enum Db {
    Sqlite(SqliteDb),
    Postgres(PgPool),
}

pub enum Tx {
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
}

impl Db {
    /// Opens the database named by `url` (`sqlite:...` or `postgres://...`).
    pub async fn connect(url: &str, max_connections: u32) -> anyhow::Result<Db> {
        if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            let pool = PgPoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(Duration::from_secs(10))
                .before_acquire(|conn, _| Box::pin(async move { Ok(outside_transaction(conn)) }))
                .connect(url)
                .await?;
            return Ok(Db::Postgres(pool));
        }
        if !url.starts_with("sqlite:") {
            anyhow::bail!("DATABASE_URL must start with sqlite: or postgres://");
        }
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        if let Some(parent) = options.get_filename().parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent)?;
            }
        }
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(30))
            .before_acquire(|conn, _| Box::pin(async move { Ok(outside_transaction(conn)) }))
            .connect_with(options.clone())
            .await?;
        let reader = SqlitePoolOptions::new()
            .max_connections(max_connections.clamp(1, 8))
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.read_only(true))
            .await?;
        Ok(Db::Sqlite(SqliteDb { writer, reader }))
    }

    pub fn engine(&self) -> Engine {
        match self {
            Db::Sqlite(_) => Engine::Sqlite,
            Db::Postgres(_) => Engine::Postgres,
        }
    }

    /// Applies the migrations of this engine that have not run yet.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        match self {
            Db::Sqlite(s) => {
                sqlx::migrate!("../migrations/sqlite")
                    .run(&s.writer)
                    .await?
            }
            Db::Postgres(p) => sqlx::migrate!("../migrations/postgres").run(p).await?,
        }
        Ok(())
    }

    pub async fn begin(&self) -> Result<Tx> {
        Ok(match self {
            // IMMEDIATE takes the write lock up front. A deferred transaction that reads first
            // cannot become a writer once another process (the operator's CLI, a second server
            // on the same file) has committed since its read: SQLite refuses at once instead of
            // waiting out the busy timeout.
            Db::Sqlite(s) => Tx::Sqlite(s.writer.begin_with("BEGIN IMMEDIATE").await?),
            Db::Postgres(p) => Tx::Postgres(p.begin().await?),
        })
    }

    /// A round trip to the database, for readiness checks.
    pub async fn ping(&self) -> Result<()> {
        on_db!(self, c => sqlx::query("SELECT 1").execute(c).await.map(|r| r.rows_affected()))?;
        Ok(())
    }

    pub async fn close(&self) {
        match self {
            Db::Sqlite(s) => {
                s.reader.close().await;
                s.writer.close().await;
            }
            Db::Postgres(p) => p.close().await,
        }
    }
}

/// Whether a pooled connection may be handed out: not when it is still inside a transaction.
/// A task cancelled between its `BEGIN` and the moment the transaction existed on our side (a
/// request whose client went away, a job aborted at shutdown) leaves no handle that could roll
/// it back; handed out again, the connection would refuse every `BEGIN IMMEDIATE` after it and
/// hold the write lock meanwhile. The pool closes such a connection instead (closing rolls the
/// transaction back) and opens a fresh one.
fn outside_transaction<C: sqlx::Connection>(conn: &mut C) -> bool {
    if conn.is_in_transaction() {
        tracing::warn!("a pooled connection was left inside a transaction; replacing it");
        return false;
    }
    true
}

impl Tx {
    pub async fn commit(self) -> Result<()> {
        match self {
            Tx::Sqlite(t) => t.commit().await,
            Tx::Postgres(t) => t.commit().await,
        }
    }
}

/// True when `err` is a unique-constraint violation (the caller maps it to a client error).
pub fn is_unique_violation(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .is_some_and(|e| e.is_unique_violation())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Connection;

    #[tokio::test]
    async fn a_connection_left_inside_a_transaction_is_not_handed_out_again() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("t.db").display());
        let db = Db::connect(&url, 2).await.unwrap();
        let Db::Sqlite(s) = &db else { unreachable!() };
        {
            // The state a cancelled task leaves: BEGIN ran, nothing on our side will end it.
            let mut conn = s.writer.acquire().await.unwrap();
            let tx = conn.begin_with("BEGIN IMMEDIATE").await.unwrap();
            std::mem::forget(tx);
        }
        let tx = db
            .begin()
            .await
            .expect("a fresh transaction on a fresh connection");
        tx.commit().await.unwrap();
    }
}
