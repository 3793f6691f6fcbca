//! `switchboard backup --to FILE`: a consistent copy of the SQLite database taken while billing
//! runs, restored as the README says (the copy in place of the database file, the same PII key),
//! holds every invoice as it was; PostgreSQL is pointed at pg_dump.

use std::process::Command;

use reqwest::StatusCode;
use serde_json::json;
use tokio::task::JoinSet;

use crate::{
    cli::operator,
    enrollment::{customer, relaxed, with_meters},
    helpers::{Engine, TestApp},
};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_during_billing_restores_with_its_invoices() {
    let app = TestApp::spawn_with(Engine::Sqlite, relaxed).await;
    with_meters(&app).await;
    let mut accounts = Vec::new();
    for i in 0..4 {
        let (uuid, token) = customer(&app, &format!("backup{i}@example.com")).await;
        let r = app
            .post("/v1/account/sandbox/seed-demo-data", &token, &json!(null))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        accounts.push((uuid.parse::<uuid::Uuid>().unwrap(), token));
    }
    // Billing runs while the copy is taken: every account's clock moves a year, a month at a time.
    let mut billing = JoinSet::new();
    for (_, token) in &accounts {
        let (client, url, token) = (
            app.client.clone(),
            app.url("/v1/account/sandbox/advance-clock"),
            token.clone(),
        );
        billing.spawn(async move {
            for _ in 0..12 {
                let r = client
                    .post(&url)
                    .bearer_auth(&token)
                    .json(&json!({"days": 30}))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), StatusCode::OK);
            }
        });
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.db");
    let out = operator(&app, &["backup", "--to", copy.to_str().unwrap()]);
    let stdout = crate::cli::succeeds(&out);
    assert!(stdout.contains("Backed up"), "{stdout}");
    assert!(stdout.contains("PII key"), "{stdout}");
    // A second copy to the same file is refused: a backup never overwrites.
    let again = operator(&app, &["backup", "--to", copy.to_str().unwrap()]);
    assert!(!again.status.success());
    while let Some(done) = billing.join_next().await {
        done.unwrap();
    }

    // Restore: the copy becomes the database file of a new install, with the same key.
    let restored_dir = tempfile::tempdir().unwrap();
    let restored_path = restored_dir.path().join("switchboard.db");
    std::fs::copy(&copy, &restored_path).unwrap();
    let url = format!("sqlite:{}", restored_path.display());
    let mut migrate = Command::new(BIN);
    migrate
        .arg("migrate")
        .env("DATABASE_URL", &url)
        .env_remove("REDIS_URL");
    if let Some(key) = &app.config.pii_key {
        migrate.env("SWITCHBOARD_PII_KEY", key.expose());
    }
    let out = migrate.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let restored = server::store::Db::connect(&url, 2).await.unwrap();

    // Every invoice of the copy is the invoice as the live database has it, and each account
    // kept at least the cycles its seed billed.
    let mut copied = 0;
    for (account, _) in &accounts {
        let then = server::store::billing::invoices_of_account(&restored, *account, 1000, 0)
            .await
            .unwrap();
        let now = server::store::billing::invoices_of_account(&app.state.db, *account, 1000, 0)
            .await
            .unwrap();
        assert!(then.len() >= 3, "{} invoices in the copy", then.len());
        assert!(then.len() <= now.len());
        for invoice in &then {
            let live = now
                .iter()
                .find(|i| i.uuid == invoice.uuid)
                .expect("an invoice of the copy is gone");
            assert_eq!(
                (&live.number, live.total_cents, live.invoice_date),
                (&invoice.number, invoice.total_cents, invoice.invoice_date)
            );
        }
        copied += then.len();
    }
    // The copy is one moment: its invoice numbers have no gaps.
    let mut numbers: Vec<i64> = Vec::new();
    for (account, _) in &accounts {
        for i in server::store::billing::invoices_of_account(&restored, *account, 1000, 0)
            .await
            .unwrap()
        {
            numbers.push(i.number[4..].parse().unwrap());
        }
    }
    numbers.sort_unstable();
    assert_eq!(numbers.len(), copied);
    assert!(
        numbers.windows(2).all(|w| w[1] == w[0] + 1),
        "gaps in {numbers:?}"
    );
    restored.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_on_postgres_says_to_use_pg_dump() {
    let app = TestApp::spawn(Engine::Postgres).await;
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.db");
    let out = operator(&app, &["backup", "--to", copy.to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("pg_dump"), "{stderr}");
    assert!(!copy.exists());
}
