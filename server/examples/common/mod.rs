//! What the benchmarks share: a fresh database of either engine, dropped afterwards.

use sqlx::Connection;
use uuid::Uuid;

pub struct BenchDatabase {
    pub url: String,
    /// The PostgreSQL database to drop, with the server's admin URL.
    postgres: Option<(String, String)>,
}

fn admin_url() -> String {
    std::env::var("TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// A database for `engine` (`sqlite` or `postgres`): a file in `dir`, or a new PostgreSQL
/// database on `TEST_POSTGRES_URL`'s server (default the local one).
pub async fn fresh_database(engine: &str, dir: &std::path::Path) -> anyhow::Result<BenchDatabase> {
    if engine != "postgres" {
        return Ok(BenchDatabase {
            url: format!("sqlite:{}", dir.join("bench.db").display()),
            postgres: None,
        });
    }
    let admin = admin_url();
    let name = format!("swb_bench_{}", Uuid::new_v4().simple());
    let mut c = sqlx::PgConnection::connect(&admin).await?;
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut c)
        .await?;
    Ok(BenchDatabase {
        url: format!("{}/{name}", admin.rsplit_once('/').map_or("", |(b, _)| b)),
        postgres: Some((admin, name)),
    })
}

impl BenchDatabase {
    /// Drops a PostgreSQL database (a SQLite file goes with its directory).
    pub async fn drop(self) -> anyhow::Result<()> {
        if let Some((admin, name)) = self.postgres {
            let mut c = sqlx::PgConnection::connect(&admin).await?;
            sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .execute(&mut c)
                .await?;
        }
        Ok(())
    }
}

/// The `p` quantile (0 to 1) of durations sorted ascending.
pub fn percentile(sorted: &[std::time::Duration], p: f64) -> std::time::Duration {
    if sorted.is_empty() {
        return std::time::Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}
