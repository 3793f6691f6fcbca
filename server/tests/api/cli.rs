//! The `switchboard` binary: operator commands, first start, logs and graceful shutdown.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{free_port, TestApp};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

/// Runs the binary on the database (and with the PII key) of a running test server.
pub(crate) fn operator(app: &TestApp, args: &[&str]) -> std::process::Output {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env("DATABASE_URL", app.config.database_url.expose())
        .env("SWITCHBOARD_CLOCK_START", app.clock.now().to_rfc3339())
        .env_remove("REDIS_URL");
    if let Some(key) = &app.config.pii_key {
        command.env("SWITCHBOARD_PII_KEY", key.expose());
    }
    command.output().unwrap()
}

/// The standard output of a command that must succeed.
pub(crate) fn succeeds(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn switchboard(database_url: &str, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env("DATABASE_URL", database_url)
        .env_remove("REDIS_URL")
        .output()
        .unwrap()
}

#[test]
fn apps_and_tokens_are_managed_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("cli.db").display());

    let help = switchboard(&db, &["--help"]);
    let help = String::from_utf8(help.stdout).unwrap();
    for command in ["serve", "migrate", "apps", "tokens"] {
        assert!(help.contains(command), "{help}");
    }

    assert!(switchboard(&db, &["migrate"]).status.success());
    let out = switchboard(
        &db,
        &[
            "apps",
            "create",
            "--name",
            "Sunny",
            "--environment",
            "sandbox",
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let created: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let app_uuid = created["app_uuid"].as_str().unwrap();
    let token = created["token"].as_str().unwrap();
    assert!(
        token.starts_with("swb_sandbox_") && token.len() == 44,
        "{token}"
    );

    let live = switchboard(
        &db,
        &["apps", "create", "--name", "Live", "--environment", "live"],
    );
    let live = String::from_utf8(live.stdout).unwrap();
    assert!(live.contains("swb_live_"), "{live}");

    let second = switchboard(&db, &["tokens", "create", "--app", app_uuid]);
    let second = String::from_utf8(second.stdout).unwrap().trim().to_owned();
    assert!(second.starts_with("swb_sandbox_") && second != token);

    let revoke = switchboard(&db, &["tokens", "revoke", &token[..20]]);
    assert!(
        revoke.status.success(),
        "{}",
        String::from_utf8_lossy(&revoke.stderr)
    );
    let again = switchboard(&db, &["tokens", "revoke", &token[..20]]);
    assert!(
        !again.status.success(),
        "a revoked token cannot be revoked twice"
    );
    let bad = switchboard(
        &db,
        &["apps", "create", "--name", "X", "--environment", "staging"],
    );
    assert!(!bad.status.success());
}

#[test]
fn first_start_creates_a_sandbox_app_logs_no_secrets_and_shuts_down_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("serve.db").display());
    let port = free_port();
    let mut child = Command::new(BIN)
        .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .env("DATABASE_URL", &db)
        .env("SWITCHBOARD_LOG_FORMAT", "json")
        .env("RUST_LOG", "info")
        .env_remove("REDIS_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // The welcome banner names the new sandbox app's token. The deadlines guard against a hang,
    // not a slow start: the first start generates the address directory first.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut token = String::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while token.is_empty() && Instant::now() < deadline {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(rest) = line.trim().strip_prefix("token: ") {
            token = rest.split_whitespace().next().unwrap().to_owned();
        }
    }
    assert!(token.starts_with("swb_sandbox_"), "no token in the banner");

    let base = format!("http://127.0.0.1:{port}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = reqwest::Client::builder().no_proxy().build().unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        while c.get(format!("{base}/readyz")).send().await.is_err() {
            assert!(Instant::now() < deadline, "the server did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let r = c.get(format!("{base}/v1/app")).bearer_auth(&token).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let account: serde_json::Value = c
            .post(format!("{base}/v1/app/accounts"))
            .bearer_auth(&token)
            .json(&serde_json::json!({"email": "a@example.com", "first_name": "Ana", "last_name": "D", "date_of_birth": "1971-03-04"}))
            .send().await.unwrap().json().await.unwrap();
        assert_eq!(account["date_of_birth"], "1971-03-04");
        // A token in a query string (as flow links carry them) must not reach the logs either.
        c.get(format!("{base}/flow/enrollment?token={token}"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
    });

    // SIGTERM: the server drains and exits cleanly.
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the server did not shut down");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");

    let mut logs = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut logs).unwrap();
    assert!(logs.contains("/v1/app/accounts"), "{logs}");
    for line in logs.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "not JSON: {line}"
        );
    }
    assert!(!logs.contains(&token[12..]), "a token reached the logs");
    assert!(
        !logs.contains("1971-03-04"),
        "a date of birth reached the logs"
    );
}

#[test]
fn a_live_app_gets_its_payment_keys_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("cli.db").display());
    let secret = "sk_live_cliSECRET0123456789";
    let out = switchboard(
        &db,
        &[
            "apps",
            "create",
            "--name",
            "Live",
            "--environment",
            "live",
            "--json",
        ],
    );
    let created: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let app_uuid = created["app_uuid"].as_str().unwrap();

    let set = |pk: &str| {
        Command::new(BIN)
            .args([
                "apps",
                "set-payment-keys",
                "--app",
                app_uuid,
                "--publishable-key",
                pk,
            ])
            .env("DATABASE_URL", &db)
            .env("SWITCHBOARD_PAYMENT_SECRET_KEY", secret)
            .env_remove("REDIS_URL")
            .output()
            .unwrap()
    };
    let ok = set("pk_live_cliPUBLIC0123456789");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&ok.stdout),
        String::from_utf8_lossy(&ok.stderr),
    );
    assert!(ok.status.success(), "{stderr}");
    assert!(stdout.contains("Payment keys set"), "{stdout}");
    let refused = set("pk_test_cliPUBLIC0123456789");
    assert!(!refused.status.success());
    let refused_err = String::from_utf8_lossy(&refused.stderr);
    assert!(refused_err.contains("same mode"), "{refused_err}");
    for text in [&stdout, &stderr, &refused_err] {
        assert!(
            !text.contains("cliSECRET"),
            "the secret key is never printed"
        );
    }
    for file in ["cli.db", "cli.db-wal"] {
        let bytes = std::fs::read(dir.path().join(file)).unwrap_or_default();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "stored sealed"
        );
    }
}

#[tokio::test]
async fn an_operator_sets_an_apps_branding_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("cli.db").display());
    let out = switchboard(
        &db,
        &[
            "apps",
            "create",
            "--name",
            "Brand",
            "--environment",
            "sandbox",
            "--json",
        ],
    );
    let created: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let app_uuid = created["app_uuid"].as_str().unwrap();
    let brand = |extra: &[&str]| {
        let mut args = vec!["apps", "set-branding", "--app", app_uuid];
        args.extend_from_slice(extra);
        switchboard(&db, &args)
    };
    for bad in [
        &["--primary-color", "red;x"][..],
        &["--logo-url", "http://example.com/logo.png"][..],
        &["--display-name", " "][..],
    ] {
        let out = brand(bad);
        assert!(!out.status.success(), "{bad:?} was accepted");
    }
    let out = brand(&[
        "--display-name",
        "Bright Home",
        "--primary-color",
        "#7a2e8e",
        "--logo-url",
        "https://example.com/logo.svg",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A later change of one field leaves the others.
    assert!(brand(&["--primary-color", "#fc0"]).status.success());
    let pool = sqlx::SqlitePool::connect(&db).await.unwrap();
    let row: (String, String, String) =
        sqlx::query_as("SELECT display_name, primary_color, logo_url FROM apps WHERE uuid = ?")
            .bind(uuid::Uuid::parse_str(app_uuid).unwrap())
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(
        row,
        (
            "Bright Home".to_owned(),
            "#fc0".to_owned(),
            "https://example.com/logo.svg".to_owned()
        )
    );
}

both_engines! {
    async fn a_live_app_registers_the_origins_that_embed_its_flows(app) {
        let created = succeeds(&operator(&app, &["apps", "create", "--name", "Live Partner", "--environment", "live", "--json"]));
        let created: serde_json::Value = serde_json::from_str(&created).unwrap();
        let (live, token) = (created["app_uuid"].as_str().unwrap(), created["token"].as_str().unwrap());
        let page = format!("/flow/enrollment?app={live}");
        let r = app.send(Method::GET, &page, None, None, &[]).await;
        assert_eq!(r.header("content-security-policy").split("; ").next().unwrap(), "frame-ancestors 'self'", "a live app with no origin");

        for bad in [
            &["--origin", "https://a.example/embed"][..],
            &["--origin", "ftp://a.example"][..],
            &["--origin", "a.example"][..],
            &["--origin", "https://a.example?x=1"][..],
            &[][..],
            &["--origin", "https://a.example", "--clear"][..],
        ] {
            let mut args = vec!["apps", "set-origins", "--app", live];
            args.extend_from_slice(bad);
            let out = operator(&app, &args);
            assert!(!out.status.success(), "{bad:?} was accepted");
        }
        let r = app.get("/v1/app", token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["allowed_origins"], json!([]), "refused input changes nothing");

        let out = succeeds(&operator(&app, &["apps", "set-origins", "--app", live, "--origin", "https://A.example/", "--origin", "https://b.example:8443"]));
        assert!(out.contains("https://a.example") && out.contains("https://b.example:8443"), "{out}");
        // A token's app is read from memory for up to a second.
        app.eventually("GET /v1/app shows the origins", || async {
            app.get("/v1/app", token).await.body["allowed_origins"] != json!([])
        })
        .await;
        let r = app.get("/v1/app", token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["environment"], "live");
        assert_eq!(r.body["allowed_origins"], json!(["https://a.example", "https://b.example:8443"]));
        let r = app.send(Method::GET, &page, None, None, &[]).await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(r.header("content-security-policy").split("; ").next().unwrap(), "frame-ancestors 'self' https://a.example https://b.example:8443");
        assert!(r.text.contains("https://b.example:8443"), "the page knows whom to tell when it closes");

        succeeds(&operator(&app, &["apps", "set-origins", "--app", live, "--clear"]));
        let r = app.send(Method::GET, &page, None, None, &[]).await;
        assert_eq!(r.header("content-security-policy").split("; ").next().unwrap(), "frame-ancestors 'self'");
        app.eventually("GET /v1/app shows no origin", || async {
            app.get("/v1/app", token).await.body["allowed_origins"] == json!([])
        })
        .await;
        let unknown = operator(&app, &["apps", "set-origins", "--app", &uuid::Uuid::new_v4().to_string(), "--clear"]);
        assert!(!unknown.status.success(), "an unknown app");
    }
}
