//! The dashboard at `/dashboard`, driven like a browser: a cookie-holding client that reads each
//! form's CSRF token from the page and posts the form. Signing in and out, throttling, CSRF,
//! apps, keys, origins, support contacts, the audit log, and tenancy (a member of another
//! organisation gets 404 from every page and form of an app not theirs).

use std::sync::Arc;

use reqwest::{cookie::CookieStore, redirect::Policy, Method, StatusCode};
use server::{domain::users::Role, services, services::audit::Actor};
use uuid::Uuid;

use crate::{
    cli::{operator, succeeds},
    helpers::TestApp,
};

/// A browser on the dashboard: its own cookies, redirects not followed (so they can be seen).
pub(crate) struct Browser {
    client: reqwest::Client,
    jar: Arc<reqwest::cookie::Jar>,
    base: String,
}

pub(crate) struct Page {
    pub(crate) status: StatusCode,
    pub(crate) location: String,
    csp: String,
    pub(crate) text: String,
}

impl Page {
    /// The CSRF token of the page's first form.
    pub(crate) fn csrf(&self) -> String {
        let at = self
            .text
            .find("name=\"csrf\"")
            .unwrap_or_else(|| panic!("no CSRF field in {}", self.text));
        let rest = &self.text[at..];
        let start = rest.find("value=\"").unwrap() + 7;
        let end = rest[start..].find('"').unwrap();
        rest[start..start + end].to_owned()
    }

    /// The value of the read-only secret field (a token shown once).
    pub(crate) fn shown_token(&self) -> String {
        let at = self.text.find("id=\"token\"").expect("a token is shown");
        let rest = &self.text[at..];
        let start = rest.find("value=\"").unwrap() + 7;
        let end = rest[start..].find('"').unwrap();
        rest[start..start + end].to_owned()
    }
}

impl Browser {
    pub(crate) fn new(app: &TestApp) -> Browser {
        let jar = Arc::new(reqwest::cookie::Jar::default());
        let client = reqwest::Client::builder()
            .no_proxy()
            .cookie_provider(jar.clone())
            .redirect(Policy::none())
            .build()
            .unwrap();
        Browser {
            client,
            jar,
            base: app.url(""),
        }
    }

    async fn read(resp: reqwest::Response) -> Page {
        let header = |n: &str| {
            resp.headers()
                .get(n)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned()
        };
        let (location, csp) = (header("location"), header("content-security-policy"));
        Page {
            status: resp.status(),
            location,
            csp,
            text: resp.text().await.unwrap(),
        }
    }

    pub(crate) async fn get(&self, path: &str) -> Page {
        Self::read(
            self.client
                .get(format!("{}{path}", self.base))
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    pub(crate) async fn post(&self, path: &str, form: &[(&str, &str)]) -> Page {
        Self::read(
            self.client
                .post(format!("{}{path}", self.base))
                .form(form)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// Posts a form with the CSRF token of the page at `from`.
    pub(crate) async fn submit(&self, from: &str, path: &str, fields: &[(&str, &str)]) -> Page {
        let csrf = self.get(from).await.csrf();
        let mut form = vec![("csrf", csrf.as_str())];
        form.extend_from_slice(fields);
        self.post(path, &form).await
    }

    fn session_cookie(&self) -> String {
        let url = format!("{}/dashboard", self.base).parse().unwrap();
        self.jar
            .cookies(&url)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    }

    async fn sign_in(&self, email: &str, password: &str) -> Page {
        self.submit(
            "/dashboard/sign-in",
            "/dashboard/sign-in",
            &[("email", email), ("password", password)],
        )
        .await
    }
}

/// A token's display prefix: its kind and the first 8 characters of its secret.
fn prefix_of(token: &str) -> &str {
    let kind = ["swb_sandbox_", "swb_live_"]
        .into_iter()
        .find(|k| token.starts_with(k))
        .expect("an AppToken");
    &token[..kind.len() + 8]
}

/// A user made through the same service as the CLI; returns the one-time password.
async fn user(app: &TestApp, email: &str, role: Role, organisation: Option<&str>) -> String {
    let created = services::users::create_user(
        &app.state.db,
        &app.clock,
        &Actor::Cli,
        email,
        role,
        organisation,
    )
    .await
    .unwrap_or_else(|_| panic!("creating {email}"));
    created.password.expose().to_owned()
}

/// A signed-in browser of a new user.
pub(crate) async fn signed_in(
    app: &TestApp,
    email: &str,
    role: Role,
    organisation: Option<&str>,
) -> Browser {
    let password = user(app, email, role, organisation).await;
    let browser = Browser::new(app);
    let r = browser.sign_in(email, &password).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(r.location, "/dashboard");
    browser
}

/// Creates a sandbox app from the dashboard; its uuid and first AppToken.
pub(crate) async fn create_sandbox_app(browser: &Browser, name: &str) -> (Uuid, String) {
    let r = browser
        .submit(
            "/dashboard",
            "/dashboard/apps",
            &[("name", name), ("environment", "sandbox")],
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let token = r.shown_token();
    let at = r.text.find("/dashboard/apps/").unwrap() + "/dashboard/apps/".len();
    let uuid = Uuid::parse_str(&r.text[at..at + 36]).unwrap();
    (uuid, token)
}

both_engines! {
    async fn a_user_signs_in_with_a_rotated_session_and_signs_out(app) {
        let password = user(&app, "ops@example.com", Role::Operator, None).await;
        let browser = Browser::new(&app);

        let r = browser.get("/dashboard").await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "signed out, the dashboard sends you to sign in");
        assert_eq!(r.location, "/dashboard/sign-in");

        let page = browser.get("/dashboard/sign-in").await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.csp.contains("frame-ancestors 'none'"), "{}", page.csp);
        assert!(page.text.contains("<label for=\"email\">"), "inputs are labelled");
        let before = browser.session_cookie();
        assert!(before.contains("sb_dashboard="), "{before}");

        let r = browser
            .post("/dashboard/sign-in", &[("csrf", &page.csrf()), ("email", "OPS@example.com "), ("password", &password)])
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_ne!(browser.session_cookie(), before, "signing in rotates the session id");

        let home = browser.get("/dashboard").await;
        assert_eq!(home.status, StatusCode::OK);
        assert!(home.text.contains("ops@example.com"));
        assert!(home.text.contains("Sunny Homes"), "the operator sees every app");

        let r = browser.submit("/dashboard", "/dashboard/sign-out", &[]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER);
        let r = browser.get("/dashboard").await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "signed out again");
        assert_eq!(r.location, "/dashboard/sign-in");
    }

    async fn wrong_passwords_are_refused_and_then_throttled_per_email(app) {
        let password = user(&app, "ops@example.com", Role::Operator, None).await;
        let browser = Browser::new(&app);
        for _ in 0..5 {
            let r = browser.sign_in("ops@example.com", "not the password").await;
            assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
            assert!(r.text.contains("not right"));
        }
        let r = browser.sign_in("ops@example.com", &password).await;
        assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "even the right password waits now");
        assert!(r.text.contains("Too many failed sign-ins"));
        assert_eq!(browser.get("/dashboard").await.status, StatusCode::SEE_OTHER, "not signed in");

        // Another e-mail from elsewhere is not held up.
        let other = user(&app, "other@example.com", Role::Operator, None).await;
        let r = Browser::new(&app).sign_in("other@example.com", &other).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    }

    async fn a_form_without_the_sessions_csrf_token_changes_nothing(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let r = browser
            .post("/dashboard/apps", &[("csrf", "forged"), ("name", "Forged"), ("environment", "sandbox")])
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
        let r = browser.post("/dashboard/apps", &[("name", "Forged"), ("environment", "sandbox")]).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN);
        let home = browser.get("/dashboard").await;
        assert!(!home.text.contains("Forged"), "no app was created");

        // Another session's token is no good either.
        let other = Browser::new(&app);
        let foreign = other.get("/dashboard/sign-in").await.csrf();
        let r = browser
            .post("/dashboard/apps", &[("csrf", &foreign), ("name", "Forged"), ("environment", "sandbox")])
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN);
    }

    async fn a_partner_creates_a_sandbox_app_and_manages_its_keys(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let home = browser.get("/dashboard").await;
        assert!(!home.text.contains("Sunny Homes"), "a partner sees only their organisation's apps");

        let (uuid, first) = create_sandbox_app(&browser, "Acme Energy").await;
        let r = app.get("/v1/app", &first).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["uuid"], uuid.to_string());
        assert_eq!(r.body["environment"], "sandbox");

        let page = format!("/dashboard/apps/{uuid}");
        let r = browser.submit(&page, &format!("{page}/tokens"), &[]).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let second = r.shown_token();
        assert_ne!(second, first);
        assert_eq!(app.get("/v1/app", &second).await.status, StatusCode::OK);

        let listed = browser.get(&page).await;
        assert!(!listed.text.contains(&second), "a key is shown only once");
        let prefix = prefix_of(&second);
        assert!(listed.text.contains(prefix), "keys are listed by prefix");

        let r = browser.submit(&page, &format!("{page}/tokens/revoke"), &[("prefix", prefix)]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let r = app.get("/v1/app", &second).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "a revoked key is refused at once");
        assert_eq!(app.get("/v1/app", &first).await.status, StatusCode::OK, "the other key still works");
        assert!(browser.get(&page).await.text.contains("revoked"));
    }

    async fn a_partner_may_not_create_a_live_app(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let r = browser
            .submit("/dashboard", "/dashboard/apps", &[("name", "Acme Live"), ("environment", "live")])
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
        assert!(!browser.get("/dashboard").await.text.contains("Acme Live"));
    }

    async fn allowed_origins_set_the_flow_pages_frame_ancestors(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, _) = create_sandbox_app(&browser, "Acme Energy").await;
        let flow = format!("/flow/enrollment?app={uuid}");
        let r = app.send(Method::GET, &flow, None, None, &[]).await;
        assert_eq!(r.header("content-security-policy"), "frame-ancestors *");

        let page = format!("/dashboard/apps/{uuid}");
        let r = browser
            .submit(&page, &format!("{page}/origins"), &[("origins", "https://acme.example\nhttps://www.acme.example/")])
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let r = app.send(Method::GET, &flow, None, None, &[]).await;
        assert_eq!(
            r.header("content-security-policy"),
            "frame-ancestors 'self' https://acme.example https://www.acme.example"
        );

        let r = browser
            .submit(&page, &format!("{page}/origins"), &[("origins", "https://acme.example/path")])
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(r.text.contains("origin only"), "{}", r.text);
        let r = app.send(Method::GET, &flow, None, None, &[]).await;
        assert!(r.header("content-security-policy").contains("https://www.acme.example"), "unchanged");
    }

    async fn branding_and_support_contacts_reach_the_api(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, token) = create_sandbox_app(&browser, "Acme Energy").await;
        let page = format!("/dashboard/apps/{uuid}");
        let r = browser
            .submit(&page, &format!("{page}/branding"), &[("display_name", "Acme Power"), ("primary_color", "#123456"), ("logo_url", "")])
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let r = browser
            .submit(&page, &format!("{page}/support"), &[
                ("name", "Acme Care"), ("phone", "(512) 555-0134"), ("email", "care@acme.example"),
                ("hours", "Mon-Fri 8-6"), ("url", "https://acme.example/help"),
            ])
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let r = app.get("/v1/app", &token).await;
        assert_eq!(r.body["branding"]["display_name"], "Acme Power");
        assert_eq!(r.body["branding"]["primary_color"], "#123456");
        assert_eq!(r.body["support"]["name"], "Acme Care");
        assert_eq!(r.body["support"]["email"], "care@acme.example");
        assert_eq!(r.body["support"]["url"], "https://acme.example/help");

        let r = browser
            .submit(&page, &format!("{page}/support"), &[("email", "not an e-mail")])
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
        let r = browser.submit(&page, &format!("{page}/branding"), &[("display_name", "X"), ("primary_color", "red")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
        let r = app.get("/v1/app", &token).await;
        assert_eq!(r.body["support"]["name"], "Acme Care", "a refused change changes nothing");
        assert_eq!(r.body["branding"]["display_name"], "Acme Power");
    }

    async fn another_organisations_member_gets_404_from_every_page_and_form(app) {
        let owner = signed_in(&app, "owner@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, token) = create_sandbox_app(&owner, "Acme Energy").await;
        let stranger = signed_in(&app, "stranger@example.com", Role::Partner, Some("Globex")).await;

        let home = stranger.get("/dashboard").await;
        assert_eq!(home.status, StatusCode::OK);
        assert!(!home.text.contains("Acme Energy"));
        let page = format!("/dashboard/apps/{uuid}");
        assert_eq!(stranger.get(&page).await.status, StatusCode::NOT_FOUND);
        assert_eq!(stranger.get(&format!("/dashboard/apps/{}", app.app_uuid)).await.status, StatusCode::NOT_FOUND, "nor the platform's own apps");
        let prefix = prefix_of(&token);
        for (form, fields) in [
            ("branding", vec![("display_name", "Hijacked")]),
            ("origins", vec![("origins", "https://evil.example")]),
            ("support", vec![("name", "Evil")]),
            ("renewal", vec![("renewals_url", "https://evil.example")]),
            ("payment-keys", vec![("publishable_key", "pk_test_abcdefgh"), ("secret_key", "sk_test_abcdefgh")]),
            ("tokens", vec![]),
            ("tokens/revoke", vec![("prefix", prefix)]),
        ] {
            let r = stranger.submit("/dashboard", &format!("{page}/{form}"), &fields).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{form}: {}", r.text);
        }
        // A token of another app cannot be revoked through one's own app either.
        let (own, _) = create_sandbox_app(&stranger, "Globex Energy").await;
        let own_page = format!("/dashboard/apps/{own}");
        let r = stranger.submit(&own_page, &format!("{own_page}/tokens/revoke"), &[("prefix", prefix)]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(stranger.get("/dashboard/audit").await.status, StatusCode::NOT_FOUND, "the audit log is the operator's");

        let r = app.get("/v1/app", &token).await;
        assert_eq!(r.status, StatusCode::OK, "the owner's key still works");
        assert_eq!(r.body["branding"]["display_name"], "Acme Energy");
        assert_eq!(r.body["allowed_origins"], serde_json::json!([]));
        assert!(r.body["support"]["name"].is_null());
    }

    async fn the_operator_sets_live_payment_keys_and_reads_the_audit_log(app) {
        let browser = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let r = browser
            .submit("/dashboard", "/dashboard/apps", &[("name", "Partner Live"), ("environment", "live")])
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let token = r.shown_token();
        let r = app.get("/v1/app", &token).await;
        assert_eq!(r.body["environment"], "live");
        let uuid = r.body["uuid"].as_str().unwrap().to_owned();
        let page = format!("/dashboard/apps/{uuid}");
        let secret = "sk_live_verysecretvalue123";
        let r = browser
            .submit(&page, &format!("{page}/payment-keys"), &[("publishable_key", "pk_live_publicvalue123"), ("secret_key", secret)])
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(!browser.get(&page).await.text.contains(secret), "the secret key is never shown again");

        let audit = browser.get("/dashboard/audit").await;
        assert_eq!(audit.status, StatusCode::OK);
        assert!(audit.text.contains("app.created"));
        assert!(audit.text.contains("app.payment_keys_set"));
        assert!(audit.text.contains("ops@example.com"));
        assert!(audit.text.contains("user.created"), "the CLI's changes are there too");
        assert!(!audit.text.contains(secret), "no secret in the audit log");
        assert!(!audit.text.contains(&token), "no token in the audit log");
    }

    async fn a_password_can_be_changed(app) {
        let password = user(&app, "ops@example.com", Role::Operator, None).await;
        let browser = Browser::new(&app);
        assert_eq!(browser.sign_in("ops@example.com", &password).await.status, StatusCode::SEE_OTHER);
        let r = browser
            .submit("/dashboard/password", "/dashboard/password", &[("current", &password), ("new", "short")])
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
        let r = browser
            .submit("/dashboard/password", "/dashboard/password", &[("current", &password), ("new", "a much longer passphrase")])
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let again = Browser::new(&app);
        assert_eq!(again.sign_in("ops@example.com", &password).await.status, StatusCode::UNAUTHORIZED);
        assert_eq!(again.sign_in("ops@example.com", "a much longer passphrase").await.status, StatusCode::SEE_OTHER);
    }

    async fn users_are_created_from_the_command_line(app) {
        let out = succeeds(&operator(&app, &["users", "create", "--email", "new@acme.example", "--role", "partner", "--organisation", "Acme"]));
        let password = out
            .lines()
            .find_map(|l| l.trim().strip_prefix("password: "))
            .and_then(|l| l.split_whitespace().next())
            .expect("a one-time password is printed")
            .to_owned();
        let browser = Browser::new(&app);
        let r = browser.sign_in("new@acme.example", &password).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(browser.get("/dashboard").await.text.contains("Acme"));

        let out = operator(&app, &["users", "create", "--email", "new@acme.example", "--role", "partner", "--organisation", "Acme"]);
        assert!(!out.status.success(), "one user per e-mail");
        let out = operator(&app, &["users", "create", "--email", "p@acme.example", "--role", "partner"]);
        assert!(!out.status.success(), "a partner member needs an organisation");
    }

    async fn the_first_start_creates_one_operator(app) {
        let first = services::users::ensure_first_operator(&app.state.db, &app.clock).await.ok().flatten();
        let first = first.expect("an empty database gets an operator");
        assert!(services::users::ensure_first_operator(&app.state.db, &app.clock).await.ok().flatten().is_none(), "only once");
        let browser = Browser::new(&app);
        let r = browser.sign_in(&first.email, first.password.expose()).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    }

    async fn a_webhook_endpoint_is_added_tested_and_its_deliveries_listed(app) {
        let receiver = crate::receiver::Receiver::start().await;
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, _) = create_sandbox_app(&browser, "Acme Energy").await;
        let page = format!("/dashboard/apps/{uuid}");
        let r = browser.submit(&page, &format!("{page}/webhooks"), &[("url", &receiver.url), ("event_types", "")]).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let secret = r.shown_token();
        assert!(secret.starts_with("whsec_"), "{secret}");
        let listed = browser.get(&page).await;
        assert!(listed.text.contains(&receiver.url));
        assert!(!listed.text.contains(&secret), "the secret is shown once");
        let at = listed.text.find(&format!("{page}/webhooks/")).unwrap() + page.len() + "/webhooks/".len();
        let endpoint = format!("{page}/webhooks/{}", &listed.text[at..at + 36]);

        let r = browser.submit(&endpoint, &format!("{endpoint}/test"), &[]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        app.eventually("the test event is delivered", || async { receiver.count() > 0 }).await;
        app.eventually("the delivery is logged", || async {
            browser.get(&endpoint).await.text.contains("webhook.test")
        })
        .await;

        let r = browser.submit(&endpoint, &format!("{endpoint}/rotate"), &[]).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let rotated = r.shown_token();
        assert!(rotated.starts_with("whsec_") && rotated != secret, "a new secret, shown once");
        assert!(!browser.get(&endpoint).await.text.contains(&rotated));

        let r = browser.submit(&endpoint, &format!("{endpoint}/enabled"), &[("disabled", "true")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(browser.get(&endpoint).await.text.contains("disabled"));

        // Each change is in the audit log, written with the change, and never with its secret.
        let operator = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let audit = operator.get("/dashboard/audit").await;
        assert_eq!(audit.status, StatusCode::OK);
        for action in ["webhook_endpoint.created", "webhook_endpoint.secret_rotated", "webhook_endpoint.disabled"] {
            assert!(audit.text.contains(action), "{action} is audited");
        }
        assert!(audit.text.contains("member@example.com"));
        assert!(!audit.text.contains(&secret) && !audit.text.contains(&rotated), "no secret in the audit log");

        let stranger = signed_in(&app, "stranger@example.com", Role::Partner, Some("Globex")).await;
        assert_eq!(stranger.get(&endpoint).await.status, StatusCode::NOT_FOUND);
        for form in ["test", "rotate", "enabled"] {
            let r = stranger.submit("/dashboard", &format!("{endpoint}/{form}"), &[]).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{form}");
        }
        let r = stranger.submit("/dashboard", &format!("{page}/webhooks"), &[("url", "https://evil.example/hook")]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }

    async fn accounts_are_found_within_the_members_apps_only(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let (_, token) = create_sandbox_app(&browser, "Acme Energy").await;
        let r = app
            .post("/v1/app/accounts", &token, &serde_json::json!({"email": "zoe@example.com", "first_name": "Zoe", "last_name": "Quinn"}))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let account = r.body["uuid"].as_str().unwrap().to_owned();
        let number = r.body["account_number"].as_str().unwrap().to_owned();
        let status = r.body["status"].as_str().unwrap().to_owned();
        // An account of the platform's own app, which a partner must never find.
        app.create_simple_account("zoe.other@example.com").await;

        for q in ["zoe@example.com", "Zoe Quinn", "quinn", &number] {
            let r = browser.get(&format!("/dashboard/accounts?q={}", q.replace(' ', "+"))).await;
            assert_eq!(r.status, StatusCode::OK);
            assert!(r.text.contains(&format!("/dashboard/accounts/{account}")), "{q}");
            assert!(!r.text.contains("zoe.other@example.com"), "{q}: another organisation's account");
        }
        let page = browser.get(&format!("/dashboard/accounts/{account}")).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.text.contains("Zoe Quinn"));
        assert!(page.text.contains(&number));
        assert!(page.text.contains(&status), "its status and history are shown");

        let stranger = signed_in(&app, "stranger@example.com", Role::Partner, Some("Globex")).await;
        assert_eq!(stranger.get(&format!("/dashboard/accounts/{account}")).await.status, StatusCode::NOT_FOUND);
        assert_eq!(stranger.get(&format!("/dashboard/accounts/{account}/invoices/000000001")).await.status, StatusCode::NOT_FOUND);
        let r = stranger.get("/dashboard/accounts?q=zoe%40example.com").await;
        assert!(!r.text.contains(&account));
        let operator = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let r = operator.get("/dashboard/accounts?q=zoe").await;
        assert!(r.text.contains(&account) && r.text.contains("zoe.other@example.com"), "the operator finds every app's");
    }
}

both_engines! {
    async fn the_landing_text_set_here_shows_on_the_hosted_sign_up_page(app) {
        let browser = signed_in(&app, "landing@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, _) = create_sandbox_app(&browser, "Acme Energy").await;
        let page = format!("/dashboard/apps/{uuid}");
        let r = browser
            .submit(&page, &format!("{page}/landing"), &[("landing_text", "Acme solar owners: switch in two minutes <today>.")])
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let slug = server::store::apps::app_by_uuid(&app.state.db, uuid).await.unwrap().unwrap().slug;
        let landing = reqwest::get(app.url(&format!("/go/{slug}"))).await.unwrap().text().await.unwrap();
        assert!(landing.contains("Acme solar owners: switch in two minutes &lt;today&gt;."), "{landing}");
        // Bounded: too long is refused and changes nothing.
        let long = "x".repeat(601);
        let r = browser.submit(&page, &format!("{page}/landing"), &[("landing_text", &long)]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        let landing = reqwest::get(app.url(&format!("/go/{slug}"))).await.unwrap().text().await.unwrap();
        assert!(landing.contains("Acme solar owners"), "{landing}");
    }
}
