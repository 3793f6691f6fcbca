//! Online backups of the embedded SQLite database: `VACUUM INTO` writes a consistent copy of
//! one moment (the committed state, write-ahead log included) to a new file, while the service
//! keeps reading and writing. PostgreSQL has its own tools (`pg_dump`).

use std::{path::Path, str::FromStr};

use sqlx::{
    sqlite::{SqliteConnectOptions, SqliteJournalMode},
    ConnectOptions, Connection,
};

/// Copies the SQLite database at `database_url` (`sqlite:...`) to `to`, which must not exist.
pub async fn copy_sqlite(database_url: &str, to: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(
        database_url.starts_with("sqlite:"),
        "backup copies SQLite databases only"
    );
    anyhow::ensure!(
        !to.exists(),
        "{} exists already; name a new file",
        to.display()
    );
    let options = SqliteConnectOptions::from_str(database_url)?
        .create_if_missing(false)
        // The service's own setting; a connection must not change it.
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(std::time::Duration::from_secs(30));
    let mut conn = options.connect().await?;
    let target = to.to_string_lossy().into_owned();
    sqlx::query("VACUUM INTO $1")
        .bind(target)
        .execute(&mut conn)
        .await?;
    conn.close().await?;
    Ok(())
}
