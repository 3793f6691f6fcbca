//! Rate limits: 30 per second per app, 10 per second per account, shared through Redis by
//! several instances.

use reqwest::StatusCode;
use tokio::task::JoinSet;

use crate::helpers::{free_port, Engine, TestApp};

/// Fires `n` requests at once at `path` on each of `apps`; returns the statuses.
async fn burst(
    apps: &[&TestApp],
    path: &str,
    token: &str,
    n: usize,
) -> Vec<(StatusCode, reqwest::header::HeaderMap)> {
    let mut set = JoinSet::new();
    for app in apps {
        for _ in 0..n {
            let req = app.client.get(app.url(path)).bearer_auth(token);
            set.spawn(async move {
                let r = req.send().await.unwrap();
                (r.status(), r.headers().clone())
            });
        }
    }
    let mut out = Vec::new();
    while let Some(r) = set.join_next().await {
        out.push(r.unwrap());
    }
    out
}

/// A burst whose requests all arrived within one second, so that the windows' counts are
/// exact: the windows slide, and a burst a busy machine spreads over longer is admitted in part
/// by the next second. Retries (after the window emptied) until one fits: a loaded machine can
/// need many tries, and a burst that never fits fails the test rather than counting wrong.
async fn burst_in_one_second(
    apps: &[&TestApp],
    path: &str,
    token: &str,
    n: usize,
) -> Vec<(StatusCode, reqwest::header::HeaderMap)> {
    for _ in 0..30 {
        let started = std::time::Instant::now();
        let results = burst(apps, path, token, n).await;
        if started.elapsed() < std::time::Duration::from_millis(900) {
            return results;
        }
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    }
    panic!("no burst of {n} requests fit in one second in 30 tries");
}

/// A burst counted in Redis from start to end: on a loaded machine a Redis call can outlast its
/// time limit, and the instance then counts locally for a moment (as it should), which is not
/// what a test of the shared windows measures. Such a burst is tried again once the limits are
/// shared again.
async fn shared_burst(
    apps: &[&TestApp],
    path: &str,
    token: &str,
    n: usize,
) -> Vec<(StatusCode, reqwest::header::HeaderMap)> {
    for _ in 0..30 {
        let before = redis_outages(apps).await;
        let results = burst_in_one_second(apps, path, token, n).await;
        if redis_outages(apps).await == before {
            return results;
        }
        for app in apps {
            app.eventually("limits shared again", || async {
                readyz_rate_limits(app).await == "shared"
            })
            .await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    }
    panic!("Redis never kept up with a burst of {n} requests in 30 tries");
}

/// How many times each instance has found Redis unavailable so far.
async fn redis_outages(apps: &[&TestApp]) -> Vec<u64> {
    let mut out = Vec::new();
    for app in apps {
        let r = app
            .send(reqwest::Method::GET, "/metrics", None, None, &[])
            .await;
        assert_eq!(r.status, StatusCode::OK);
        let n = r
            .text
            .lines()
            .find_map(|l| l.strip_prefix("rate_limiter_redis_unavailable_total "))
            .map_or(0, |v| v.trim().parse::<f64>().unwrap_or(0.0) as u64);
        out.push(n);
    }
    out
}

fn count(results: &[(StatusCode, reqwest::header::HeaderMap)], status: StatusCode) -> usize {
    results.iter().filter(|(s, _)| *s == status).count()
}

both_engines! {
    async fn forty_requests_in_a_second_admit_exactly_thirty(app) {
        let results = burst_in_one_second(&[&app], "/v1/app", &app.app_token, 40).await;
        assert_eq!(count(&results, StatusCode::OK), 30);
        assert_eq!(count(&results, StatusCode::TOO_MANY_REQUESTS), 10);
        let (_, refused) = results.iter().find(|(s, _)| *s == StatusCode::TOO_MANY_REQUESTS).unwrap();
        assert_eq!(refused["retry-after"], "1");
        assert_eq!(refused["ratelimit-policy"], "30;w=1");
        assert!(refused["ratelimit"].to_str().unwrap().starts_with("limit=30, remaining=0"));
        // After the window slides past, requests pass again.
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        assert_eq!(app.get("/v1/app", &app.app_token).await.status, StatusCode::OK);
    }

    async fn accounts_have_ten_per_second_each(app) {
        let a = app.create_simple_account("a@example.com").await;
        let b = app.create_simple_account("b@example.com").await;
        let ta = app.account_token(a["uuid"].as_str().unwrap()).await;
        let tb = app.account_token(b["uuid"].as_str().unwrap()).await;
        let results = burst_in_one_second(&[&app], "/v1/account", &ta, 15).await;
        assert_eq!(count(&results, StatusCode::OK), 10);
        assert_eq!(count(&results, StatusCode::TOO_MANY_REQUESTS), 5);
        let r = app.get("/v1/account", &tb).await;
        assert_eq!(r.status, StatusCode::OK, "another account has its own window");
        assert_eq!(r.header("ratelimit-policy"), "10;w=1");
        let r = TestApp::read(app.client.get(app.url("/v1/account")).bearer_auth(&ta).send().await.unwrap()).await;
        assert_eq!(r.body["error"]["type"], "rate_limit_error");
        assert_eq!(r.code(), "rate_limited");
    }
}

fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

/// Two instances on one Redis admit 30 together, not 60.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_share_the_limit_through_redis() {
    let prefix = format!("swb-test-{}", uuid::Uuid::new_v4().simple());
    let a = TestApp::spawn_with(Engine::Postgres, |c| {
        c.redis_url = Some(server::config::Secret::new(redis_url()));
        c.redis_prefix.clone_from(&prefix);
    })
    .await;
    let b = a.sibling(|_| {}).await;
    let results = shared_burst(&[&a, &b], "/v1/app", &a.app_token, 20).await;
    assert_eq!(count(&results, StatusCode::OK), 30);
    assert_eq!(count(&results, StatusCode::TOO_MANY_REQUESTS), 10);

    // Without Redis, each instance would have admitted its own 30.
    let c = a.sibling(|c| c.redis_url = None).await;
    let d = a.sibling(|c| c.redis_url = None).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let results = burst(&[&c, &d], "/v1/app", &a.app_token, 20).await;
    assert_eq!(count(&results, StatusCode::OK), 40);
}

#[tokio::test]
async fn limits_can_be_lifted_by_configuration() {
    let app = TestApp::spawn_with(Engine::Sqlite, |c| c.rate_limits.enabled = false).await;
    let results = burst(&[&app], "/v1/app", &app.app_token, 40).await;
    assert_eq!(count(&results, StatusCode::OK), 40);
    assert!(!results[0].1.contains_key("ratelimit"));
}

async fn readyz_rate_limits(app: &TestApp) -> String {
    let r = app
        .send(reqwest::Method::GET, "/readyz", None, None, &[])
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["status"], "ready");
    r.body["rate_limits"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// One GET of `/v1/app`, which must answer within a second.
async fn prompt_get(app: &TestApp) -> StatusCode {
    let started = std::time::Instant::now();
    let r = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        app.client
            .get(app.url("/v1/app"))
            .bearer_auth(&app.app_token)
            .send(),
    )
    .await
    .expect("an authenticated request waited over a second for Redis")
    .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    r.status()
}

/// Redis configured but nothing listening: the server starts at once, serves, limits per
/// instance, and says so in `/readyz`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_the_api_serves_and_limits_locally() {
    let started = std::time::Instant::now();
    let app = TestApp::spawn_with(Engine::Sqlite, |c| {
        c.redis_url = Some(server::config::Secret::new("redis://127.0.0.1:1"));
    })
    .await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "start took {:?}",
        started.elapsed()
    );
    assert_eq!(prompt_get(&app).await, StatusCode::OK);
    assert_eq!(readyz_rate_limits(&app).await, "local");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let results = burst_in_one_second(&[&app], "/v1/app", &app.app_token, 40).await;
    assert_eq!(count(&results, StatusCode::OK), 30, "still limited");
    let r = app
        .send(reqwest::Method::GET, "/metrics", None, None, &[])
        .await;
    assert!(
        r.text.contains("rate_limiter_redis_unavailable_total"),
        "{}",
        r.text
    );
}

/// A Redis that accepts connections and never answers (a hung server, a black-holed network)
/// holds neither the start nor a request up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_redis_holds_nothing_up() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("redis://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut sockets = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            sockets.push(socket);
        }
    });
    let started = std::time::Instant::now();
    let app = TestApp::spawn_with(Engine::Sqlite, |c| {
        c.redis_url = Some(server::config::Secret::new(url));
    })
    .await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "start took {:?}",
        started.elapsed()
    );
    for _ in 0..3 {
        assert_eq!(prompt_get(&app).await, StatusCode::OK);
    }
    assert_eq!(readyz_rate_limits(&app).await, "local");
    held.abort();
}

/// A `redis-server` of this test's own, on a free port, gone when dropped.
struct RedisServer {
    port: u16,
    child: tokio::process::Child,
}

impl RedisServer {
    async fn start(port: u16) -> RedisServer {
        let child = tokio::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("redis-server must be installed");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                std::time::Instant::now() < deadline,
                "redis-server did not start"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        RedisServer { port, child }
    }

    async fn stop(mut self) {
        self.child.kill().await.unwrap();
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

/// Redis going away mid-run: requests keep answering at once with per-instance limits; when it
/// comes back, the instances share their limits again by themselves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_outlive_a_redis_outage_and_share_again_after_it() {
    let port = free_port();
    let redis = RedisServer::start(port).await;
    let a = TestApp::spawn_with(Engine::Sqlite, |c| {
        c.redis_url = Some(server::config::Secret::new(redis.url()));
    })
    .await;
    let b = a.sibling(|_| {}).await;
    assert_eq!(readyz_rate_limits(&a).await, "shared");
    let results = shared_burst(&[&a, &b], "/v1/app", &a.app_token, 20).await;
    assert_eq!(
        count(&results, StatusCode::OK),
        30,
        "shared before the outage"
    );

    redis.stop().await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    for app in [&a, &b] {
        for _ in 0..3 {
            assert_eq!(prompt_get(app).await, StatusCode::OK);
        }
        assert_eq!(readyz_rate_limits(app).await, "local");
    }
    // Per instance now: each admits its own 30.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let results = burst_in_one_second(&[&a, &b], "/v1/app", &a.app_token, 40).await;
    assert_eq!(
        count(&results, StatusCode::OK),
        60,
        "local during the outage"
    );

    let _redis = RedisServer::start(port).await;
    for app in [&a, &b] {
        app.eventually("limits shared again", || async {
            readyz_rate_limits(app).await == "shared"
        })
        .await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let results = shared_burst(&[&a, &b], "/v1/app", &a.app_token, 20).await;
    assert_eq!(
        count(&results, StatusCode::OK),
        30,
        "shared after the outage"
    );
}
