//! Browser sessions (the dashboard's and the customers' of the hosted pages and portal), kept
//! in our own database on either engine through the session stores of
//! `tower-sessions-sqlx-store`. Their table (`web_sessions`) is one of our migrations, so that
//! several instances starting at once never race to create it.

use tower_sessions::{
    session::{Id, Record},
    session_store::{self, ExpiredDeletion},
    SessionStore,
};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

use super::Db;

const TABLE: &str = "web_sessions";

#[derive(Clone, Debug)]
pub enum WebSessionStore {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

impl WebSessionStore {
    /// The store of `db`'s engine (on SQLite, on the writer: loading a session also renews it).
    pub fn new(db: &Db) -> Self {
        match db {
            Db::Sqlite(s) => WebSessionStore::Sqlite(
                SqliteStore::new(s.writer.clone())
                    .with_table_name(TABLE)
                    .expect("a valid table name"),
            ),
            Db::Postgres(p) => WebSessionStore::Postgres(
                PostgresStore::new(p.clone())
                    .with_schema_name("public")
                    .expect("a valid schema name")
                    .with_table_name(TABLE)
                    .expect("a valid table name"),
            ),
        }
    }
}

#[async_trait::async_trait]
impl SessionStore for WebSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        match self {
            WebSessionStore::Sqlite(s) => s.create(record).await,
            WebSessionStore::Postgres(p) => p.create(record).await,
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        match self {
            WebSessionStore::Sqlite(s) => s.save(record).await,
            WebSessionStore::Postgres(p) => p.save(record).await,
        }
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        match self {
            WebSessionStore::Sqlite(s) => s.load(id).await,
            WebSessionStore::Postgres(p) => p.load(id).await,
        }
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        match self {
            WebSessionStore::Sqlite(s) => s.delete(id).await,
            WebSessionStore::Postgres(p) => p.delete(id).await,
        }
    }
}

#[async_trait::async_trait]
impl ExpiredDeletion for WebSessionStore {
    async fn delete_expired(&self) -> session_store::Result<()> {
        match self {
            WebSessionStore::Sqlite(s) => s.delete_expired().await,
            WebSessionStore::Postgres(p) => p.delete_expired().await,
        }
    }
}
