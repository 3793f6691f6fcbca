//! The dashboard at `/dashboard`, driven like a browser: a cookie-holding client that reads each
//! form's CSRF token from the page and posts the form. Signing in and out, throttling, CSRF,
//! password resets by e-mailed link, apps, keys, origins, support contacts, webhook answers and
//! recovering failed deliveries, an account's payments, documents and sandbox buttons, the
//! audit log, and tenancy (a member of another organisation gets 404 from every page and form
//! of an app or account not theirs).

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

    /// The page a form's redirect leads to.
    pub(crate) async fn follow(&self, r: &Page) -> Page {
        assert_eq!(r.status, StatusCode::SEE_OTHER, "a redirect: {}", r.text);
        self.get(&r.location).await
    }

    /// The secret a form just made, from the page its redirect leads to (shown once).
    pub(crate) async fn shown(&self, r: &Page) -> Page {
        assert_eq!(r.location, "/dashboard/shown", "{}", r.text);
        let page = self.follow(r).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        page
    }

    fn session_cookie(&self) -> String {
        let url = format!("{}/dashboard", self.base).parse().unwrap();
        self.jar
            .cookies(&url)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    }

    /// Posts a file as the multipart form at `path`, with the CSRF token of the page at `from`
    /// (or `csrf` as given).
    async fn upload(
        &self,
        from: &str,
        path: &str,
        csrf: Option<&str>,
        file: (&str, &str, &[u8]),
    ) -> Page {
        let csrf = match csrf {
            Some(c) => c.to_owned(),
            None => self.get(from).await.csrf(),
        };
        let (name, content_type, bytes) = file;
        let boundary = "switchboard-test-boundary";
        let mut body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"logo\"; filename=\"{name}\"\r\n\
             Content-Type: {content_type}\r\n\r\n"
        )
        .into_bytes();
        body.extend_from_slice(bytes);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        Self::read(
            self.client
                .post(format!("{}{path}", self.base))
                .header(
                    "content-type",
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .body(body)
                .send()
                .await
                .unwrap(),
        )
        .await
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
    let r = browser.shown(&r).await;
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
        let r = browser.submit(&page, &format!("{page}/tokens"), &[("name", "Billing server")]).await;
        let r = browser.shown(&r).await;
        let second = r.shown_token();
        assert_ne!(second, first);
        assert_eq!(app.get("/v1/app", &second).await.status, StatusCode::OK);

        let listed = browser.get(&page).await;
        assert!(!listed.text.contains(&second), "a key is shown only once");
        let prefix = prefix_of(&second);
        assert!(listed.text.contains(prefix), "keys are listed by prefix");

        let r = browser.submit(&page, &format!("{page}/tokens/revoke"), &[("prefix", prefix), ("confirm", "yes")]).await;
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

    async fn an_uploaded_logo_is_served_from_our_origin_and_printed_on_bills(app) {
        let browser = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let page = format!("/dashboard/apps/{}", app.app_uuid);
        let upload = format!("{page}/logo");
        let logo: &[u8] = include_bytes!("fixtures/logo.png");
        let logo_url = || async { app.get("/v1/app", &app.app_token).await.body["branding"]["logo_url"].clone() };
        let before = logo_url().await;

        // Not a PNG, or without the form's token: refused, and nothing changes.
        let r = browser.upload(&page, &upload, None, ("logo.svg", "image/svg+xml", b"<svg onload=\"alert(1)\"/>")).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains("The logo must be a PNG image."), "{}", r.text);
        let r = browser.upload(&page, &upload, Some("forged"), ("logo.png", "image/png", logo)).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
        let stranger = signed_in(&app, "other@example.com", Role::Partner, Some("Other")).await;
        let r = stranger.upload("/dashboard", &upload, None, ("logo.png", "image/png", logo)).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "another organisation's app: {}", r.text);
        assert_eq!(logo_url().await, before);

        let r = browser.upload(&page, &upload, None, ("logo.png", "image/png", logo)).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(browser.get(&r.location).await.text.contains("The logo was uploaded."));
        let url = logo_url().await.as_str().unwrap().to_owned();
        assert!(url.starts_with(&app.url(&format!("/apps/{}/logo/", app.app_uuid))) && url.ends_with(".png"), "{url}");
        let served = reqwest::Client::builder().no_proxy().build().unwrap().get(&url).send().await.unwrap();
        assert_eq!(served.status(), StatusCode::OK);
        assert_eq!(served.headers()["content-type"], "image/png");
        assert!(served.headers()["cache-control"].to_str().unwrap().contains("immutable"));
        assert_eq!(served.bytes().await.unwrap().as_ref(), logo, "served exactly as uploaded");
        let r = reqwest::get(url.replace(".png", "0.png")).await.unwrap();
        assert_eq!(r.status(), StatusCode::NOT_FOUND);

        // The customer's bill prints it (an image with its transparency as a soft mask).
        crate::enrollment::with_meters(&app).await;
        let (_, token) = crate::enrollment::customer(&app, "logo@example.com").await;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &serde_json::Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let list = app.get("/v1/account/billing/invoices?limit=1", &token).await;
        let number = list.body["data"][0]["number"].as_str().unwrap().to_owned();
        let pdf = app.get(&format!("/v1/account/billing/invoices/{number}/pdf"), &token).await;
        assert_eq!(pdf.status, StatusCode::OK);
        assert!(pdf.text.contains("/Subtype /Image") && pdf.text.contains("/SMask"), "the logo is drawn");

        let audit = browser.get("/dashboard/audit").await;
        assert!(audit.text.contains("app.logo_uploaded"), "{}", audit.text);
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
        let r = stranger.submit(&own_page, &format!("{own_page}/tokens/revoke"), &[("prefix", prefix), ("confirm", "yes")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
        let r = stranger.get(&format!("{own_page}/tokens/revoke?prefix={prefix}")).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "nor is it named on a confirmation");
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
        let token = browser.shown(&r).await.shown_token();
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
        let secret = browser.shown(&r).await.shown_token();
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
        // The log shows what was sent.
        let log = browser.get(&endpoint).await.text;
        assert!(log.contains("data-testid=\"delivery-payload\""), "{log}");
        assert!(log.contains("endpoint_uuid") && log.contains(&endpoint[endpoint.len() - 36..]), "{log}");

        let r = browser.submit(&endpoint, &format!("{endpoint}/rotate"), &[("confirm", "yes")]).await;
        let rotated = browser.shown(&r).await.shown_token();
        assert!(rotated.starts_with("whsec_") && rotated != secret, "a new secret, shown once");
        assert!(!browser.get(&endpoint).await.text.contains(&rotated));
        // A member asks to see it again: the current one, and the look is audited.
        let r = browser.submit(&endpoint, &format!("{endpoint}/reveal"), &[]).await;
        assert_eq!(browser.shown(&r).await.shown_token(), rotated);

        let r = browser.submit(&endpoint, &format!("{endpoint}/enabled"), &[("disabled", "true"), ("confirm", "yes")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(browser.get(&endpoint).await.text.contains("disabled"));

        // Each change is in the audit log, written with the change, and never with its secret.
        let operator = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let audit = operator.get("/dashboard/audit").await;
        assert_eq!(audit.status, StatusCode::OK);
        for action in ["webhook_endpoint.created", "webhook_endpoint.secret_rotated", "webhook_endpoint.secret_revealed", "webhook_endpoint.disabled"] {
            assert!(audit.text.contains(action), "{action} is audited");
        }
        assert!(audit.text.contains("member@example.com"));
        assert!(!audit.text.contains(&secret) && !audit.text.contains(&rotated), "no secret in the audit log");

        let stranger = signed_in(&app, "stranger@example.com", Role::Partner, Some("Globex")).await;
        assert_eq!(stranger.get(&endpoint).await.status, StatusCode::NOT_FOUND);
        for form in ["test", "rotate", "enabled", "reveal"] {
            let r = stranger.submit("/dashboard", &format!("{endpoint}/{form}"), &[("confirm", "yes")]).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{form}");
        }
        let r = stranger.submit("/dashboard", &format!("{page}/webhooks"), &[("url", "https://evil.example/hook")]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }

    async fn a_visit_to_a_forms_target_gets_a_page(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, _) = create_sandbox_app(&browser, "Acme Energy").await;
        for path in [format!("/dashboard/apps/{uuid}/tokens"), "/dashboard/sign-out".to_owned()] {
            let r = browser.client.get(app.url(&path)).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED, "{path}");
            assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/html"), "{path}");
            let text = r.text().await.unwrap();
            assert!(text.contains("takes a form"), "{path}: {text}");
        }
        // The API still answers JSON.
        let r = app.client.get(app.url("/v1/account/enroll/finalize")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
    }

    async fn an_endpoints_event_types_are_ticked_from_the_list(app) {
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, _) = create_sandbox_app(&browser, "Acme Energy").await;
        let page = format!("/dashboard/apps/{uuid}");
        let form = browser.get(&page).await.text;
        for kind in server::domain::events::EVENT_TYPES.iter().filter(|k| **k != "webhook.test") {
            assert!(form.contains(&format!("name=\"event_types\" value=\"{kind}\"")), "{kind} offered: {form}");
        }
        let r = browser
            .submit(&page, &format!("{page}/webhooks"), &[("url", "https://hooks.example.com/in"), ("event_types", "account.created"), ("event_types", "invoice.paid")])
            .await;
        browser.shown(&r).await;
        let listed = browser.get(&page).await;
        let at = listed.text.find(&format!("{page}/webhooks/")).unwrap() + page.len() + "/webhooks/".len();
        let endpoint = browser.get(&format!("{page}/webhooks/{}", &listed.text[at..at + 36])).await;
        assert!(endpoint.text.contains("account.created, invoice.paid"), "{}", endpoint.text);
        // A type that does not exist (a hand-made form) is refused, naming the valid ones.
        let r = browser
            .submit(&page, &format!("{page}/webhooks"), &[("url", "https://hooks.example.com/two"), ("event_types", "invoice.payed")])
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains("unknown event type invoice.payed; the event types are: account.created"), "{}", r.text);
        assert!(!browser.get(&page).await.text.contains("hooks.example.com/two"), "nothing made");
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

/// The path of the newest password reset link e-mailed to `email` (read from the outbox).
async fn reset_link(app: &TestApp, email: &str) -> String {
    let bodies = app
        .query_texts(&format!(
            "SELECT text_body FROM emails WHERE to_address = '{email}' ORDER BY created_at DESC"
        ))
        .await;
    let body = bodies
        .into_iter()
        .flatten()
        .next()
        .unwrap_or_else(|| panic!("no e-mail to {email}"));
    let at = body.find("/dashboard/reset/").expect("a reset link");
    let end = body[at..]
        .find(char::is_whitespace)
        .map_or(body.len(), |n| at + n);
    body[at..end].to_owned()
}

/// How many e-mails were written to `email`.
async fn emails_to(app: &TestApp, email: &str) -> usize {
    app.query_texts(&format!(
        "SELECT subject FROM emails WHERE to_address = '{email}'"
    ))
    .await
    .len()
}

/// A past delivery attempt: when, whether it succeeded, and when the next was due.
type Attempt = (
    chrono::DateTime<chrono::Utc>,
    bool,
    Option<chrono::DateTime<chrono::Utc>>,
);

/// The path of the first webhook endpoint listed on the app's page.
async fn first_endpoint(browser: &Browser, page: &str) -> String {
    let listed = browser.get(page).await;
    let at =
        listed.text.find(&format!("{page}/webhooks/")).unwrap() + page.len() + "/webhooks/".len();
    format!("{page}/webhooks/{}", &listed.text[at..at + 36])
}

both_engines! {
    async fn a_forgotten_password_is_reset_once_through_the_e_mailed_link(app) {
        let old = user(&app, "ops@example.com", Role::Operator, None).await;
        // A session signed in before the reset, which the reset must end.
        let earlier = Browser::new(&app);
        assert_eq!(earlier.sign_in("ops@example.com", &old).await.status, StatusCode::SEE_OTHER);
        assert_eq!(earlier.get("/dashboard").await.status, StatusCode::OK);

        let visitor = Browser::new(&app);
        let sign_in = visitor.get("/dashboard/sign-in").await;
        assert!(sign_in.text.contains("href=\"/dashboard/forgot\""), "a link to the reset form");
        let known = visitor.submit("/dashboard/forgot", "/dashboard/forgot", &[("email", "OPS@example.com ")]).await;
        assert_eq!(known.status, StatusCode::OK, "{}", known.text);
        assert!(known.text.contains("If that address has an account, we sent a link"), "{}", known.text);
        // An unknown e-mail gets the very same page, and no e-mail is written.
        let unknown = visitor.submit("/dashboard/forgot", "/dashboard/forgot", &[("email", "nobody@example.com")]).await;
        assert_eq!(unknown.status, known.status);
        assert_eq!(unknown.text, known.text, "the answer tells nothing of who has an account");
        assert_eq!(emails_to(&app, "nobody@example.com").await, 0);
        assert_eq!(emails_to(&app, "ops@example.com").await, 1);
        // The platform's own e-mail, in its own brand, belonging to no app.
        let apps = app
            .query_texts("SELECT CAST(COUNT(*) AS TEXT) FROM emails WHERE to_address = 'ops@example.com' AND app_uuid IS NULL")
            .await;
        assert_eq!(apps, vec![Some("1".to_owned())]);

        let link = reset_link(&app, "ops@example.com").await;
        let token = link.trim_start_matches("/dashboard/reset/").to_owned();
        assert!(token.starts_with("swb_reset_"), "{token}");
        let stored = app.query_texts("SELECT token_hash FROM dashboard_password_resets").await;
        assert_eq!(stored.len(), 1);
        assert!(!stored[0].as_deref().unwrap().contains(&token), "only the token's hash is stored");

        let page = visitor.get(&link).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("Set a new password"));
        // CSRF first: a form without the session's token changes nothing.
        let r = visitor.post(&link, &[("new", "a brand new passphrase")]).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN);
        let r = visitor.submit(&link, &link, &[("new", "short")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "the change-password rules: {}", r.text);
        let r = visitor.submit(&link, &link, &[("new", "a brand new passphrase")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(r.location, "/dashboard/sign-in?done=reset");
        assert!(visitor.get("/dashboard/sign-in?done=reset").await.text.contains("Your password was reset"));
        assert_eq!(visitor.get("/dashboard").await.status, StatusCode::SEE_OTHER, "a reset signs nobody in");

        // The session signed in before is over; the old password is too.
        let r = earlier.get("/dashboard").await;
        assert_eq!((r.status, r.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/sign-in"));
        let again = Browser::new(&app);
        assert_eq!(again.sign_in("ops@example.com", &old).await.status, StatusCode::UNAUTHORIZED);
        assert_eq!(again.sign_in("ops@example.com", "a brand new passphrase").await.status, StatusCode::SEE_OTHER);
        assert_eq!(again.get("/dashboard").await.status, StatusCode::OK, "a session signed in after the reset works");

        // The link works once.
        assert_eq!(visitor.get(&link).await.status, StatusCode::GONE);
        let r = visitor.submit("/dashboard/forgot", &link, &[("new", "yet another passphrase")]).await;
        assert_eq!(r.status, StatusCode::GONE, "{}", r.text);
        assert_eq!(Browser::new(&app).sign_in("ops@example.com", "yet another passphrase").await.status, StatusCode::UNAUTHORIZED);
        // A made-up link is refused the same way.
        assert_eq!(visitor.get("/dashboard/reset/swb_reset_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").await.status, StatusCode::GONE);

        let audit = again.get("/dashboard/audit").await;
        assert!(audit.text.contains("user.password_reset"), "the reset is audited");
        assert!(!audit.text.contains(&token) && !audit.text.contains("brand new passphrase"), "without secrets");
    }

    async fn an_expired_reset_link_is_refused(app) {
        let old = user(&app, "ops@example.com", Role::Operator, None).await;
        let visitor = Browser::new(&app);
        let r = visitor.submit("/dashboard/forgot", "/dashboard/forgot", &[("email", "ops@example.com")]).await;
        assert_eq!(r.status, StatusCode::OK);
        let link = reset_link(&app, "ops@example.com").await;
        assert_eq!(visitor.get(&link).await.status, StatusCode::OK);
        app.clock.advance(chrono::Duration::minutes(61));
        assert_eq!(visitor.get(&link).await.status, StatusCode::GONE, "valid for an hour");
        let r = visitor.submit("/dashboard/forgot", &link, &[("new", "a brand new passphrase")]).await;
        assert_eq!(r.status, StatusCode::GONE, "{}", r.text);
        assert_eq!(Browser::new(&app).sign_in("ops@example.com", &old).await.status, StatusCode::SEE_OTHER, "unchanged");
    }

    async fn reset_requests_are_throttled_alike_for_known_and_unknown_e_mails(app) {
        user(&app, "ops@example.com", Role::Operator, None).await;
        let visitor = Browser::new(&app);
        for email in ["ops@example.com", "nobody@example.com"] {
            for _ in 0..3 {
                let r = visitor.submit("/dashboard/forgot", "/dashboard/forgot", &[("email", email)]).await;
                assert_eq!(r.status, StatusCode::OK, "{}", r.text);
            }
            let r = visitor.submit("/dashboard/forgot", "/dashboard/forgot", &[("email", email)]).await;
            assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{email}: {}", r.text);
            assert!(r.text.contains("Too many requests for a reset link"));
        }
        assert_eq!(emails_to(&app, "ops@example.com").await, 3);
        // Another e-mail is not held up.
        let r = visitor.submit("/dashboard/forgot", "/dashboard/forgot", &[("email", "someone@example.com")]).await;
        assert_eq!(r.status, StatusCode::OK);
    }
}

both_engines! {
    with |c| c.rate_limits.enabled = false;
    async fn at_most_three_reset_links_an_hour_are_sent_even_without_the_throttle(app) {
        user(&app, "ops@example.com", Role::Operator, None).await;
        let visitor = Browser::new(&app);
        for _ in 0..5 {
            let r = visitor.submit("/dashboard/forgot", "/dashboard/forgot", &[("email", "ops@example.com")]).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        }
        assert_eq!(emails_to(&app, "ops@example.com").await, 3);
        app.clock.advance(chrono::Duration::minutes(61));
        let r = visitor.submit("/dashboard/forgot", "/dashboard/forgot", &[("email", "ops@example.com")]).await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(emails_to(&app, "ops@example.com").await, 4, "an hour later, one more");
    }
}

both_engines! {
    async fn a_delivery_keeps_the_start_of_the_answer_and_the_log_shows_it(app) {
        let receiver = crate::receiver::Receiver::start().await;
        receiver.set(crate::receiver::Behavior::Body(200, format!("thanks <b>{}</b>", "x".repeat(600))));
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, _) = create_sandbox_app(&browser, "Acme Energy").await;
        let page = format!("/dashboard/apps/{uuid}");
        let r = browser.submit(&page, &format!("{page}/webhooks"), &[("url", &receiver.url)]).await;
        browser.shown(&r).await;
        let endpoint = first_endpoint(&browser, &page).await;
        let r = browser.submit(&endpoint, &format!("{endpoint}/test"), &[]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        app.eventually("the delivery is logged", || async {
            browser.get(&endpoint).await.text.contains("thanks &lt;b")
        })
        .await;
        let stored = app.query_texts("SELECT response_excerpt FROM webhook_deliveries").await;
        assert_eq!(stored.len(), 1);
        let excerpt = stored[0].clone().expect("an excerpt");
        assert_eq!(excerpt.len(), 500, "the first 500 bytes");
        assert!(excerpt.starts_with("thanks <b>xxx"));
    }

    async fn recovering_requeues_only_the_deliveries_that_failed_since_the_day(app) {
        use server::{
            domain::{events::Event, webhooks::DeliveryStatus},
            store::{events::NewEvent, webhooks::DeliveryRow},
        };
        let receiver = crate::receiver::Receiver::start().await;
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, _) = create_sandbox_app(&browser, "Acme Energy").await;
        let page = format!("/dashboard/apps/{uuid}");
        let r = browser.submit(&page, &format!("{page}/webhooks"), &[("url", &receiver.url)]).await;
        browser.shown(&r).await;
        let endpoint = first_endpoint(&browser, &page).await;
        let endpoint_uuid: Uuid = endpoint.rsplit('/').next().unwrap().parse().unwrap();

        // Past deliveries, written as the delivery job writes them.
        let now = app.clock.now();
        let days = chrono::Duration::days;
        let mut tx = app.state.db.begin().await.unwrap();
        let event = |at| NewEvent::of(uuid, &Event::WebhookTest { endpoint_uuid }, at);
        let mut attempts = Vec::new();
        let plan: Vec<(&str, Vec<Attempt>)> = vec![
            ("failed since", vec![(now - days(2), false, Some(now - days(2) + chrono::Duration::seconds(5))), (now - days(2) + chrono::Duration::seconds(5), false, None)]),
            ("failed, then succeeded", vec![(now - days(2), false, Some(now - days(1))), (now - days(1), true, None)]),
            ("failed before the day", vec![(now - days(10), false, None)]),
            ("waiting for a retry", vec![(now - chrono::Duration::minutes(1), false, Some(now + chrono::Duration::hours(2)))]),
            ("succeeded", vec![(now - days(1), true, None)]),
        ];
        let mut events = Vec::new();
        for (what, tries) in &plan {
            let created = event(tries[0].0);
            let event_uuid = server::store::events::insert_event_only(&mut tx, &created).await.unwrap();
            events.push((*what, event_uuid));
            for (n, (at, ok, next)) in tries.iter().enumerate() {
                attempts.push(DeliveryRow {
                    uuid: Uuid::new_v4(),
                    endpoint_uuid,
                    event_uuid,
                    event_type: "webhook.test".to_owned(),
                    attempt: i32::try_from(n + 1).unwrap(),
                    status: if *ok { DeliveryStatus::Succeeded } else { DeliveryStatus::Failed },
                    response_status: Some(if *ok { 200 } else { 500 }),
                    error: (!ok).then(|| "HTTP 500".to_owned()),
                    attempted_at: *at,
                    next_attempt_at: *next,
                    response_excerpt: None,
                });
            }
        }
        for d in &attempts {
            server::store::webhooks::insert_delivery(&mut tx, d).await.unwrap();
        }
        tx.commit().await.unwrap();

        let since = (now - days(3)).format("%Y-%m-%d").to_string();
        let r = browser.submit(&endpoint, &format!("{endpoint}/recover"), &[("since", "not a day")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        let r = browser.submit(&endpoint, &format!("{endpoint}/recover"), &[("since", &since)]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(r.location.ends_with("done=recovered&queued=1"), "{}", r.location);
        assert!(browser.get(&r.location).await.text.contains("1 failed delivery was queued again."));

        let recovered = events[0].1.to_string();
        app.eventually("the failed event is delivered again", || async { receiver.count() > 0 }).await;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let ids: Vec<String> = receiver.hits().iter().map(|h| h.header("webhook-id").to_owned()).collect();
        assert_eq!(ids, vec![recovered], "only the delivery that failed for good since the day: {events:?}");

        let operator = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        assert!(operator.get("/dashboard/audit").await.text.contains("webhook_endpoint.failed_recovered"));
        let stranger = signed_in(&app, "stranger@example.com", Role::Partner, Some("Globex")).await;
        let r = stranger.submit("/dashboard", &format!("{endpoint}/recover"), &[("since", &since)]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }

    async fn an_accounts_page_lists_payments_and_documents_and_runs_the_sandbox(app) {
        crate::enrollment::with_meters(&app).await;
        let (account, token) = crate::enrollment::customer(&app, "ana@example.com").await;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &serde_json::Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let operator = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let page = format!("/dashboard/accounts/{account}");
        let shown = operator.get(&page).await;
        assert_eq!(shown.status, StatusCode::OK, "{}", shown.text);
        assert!(shown.text.contains("Payments") && shown.text.contains("succeeded"), "the auto-paid bills");

        // Each document opens as a PDF, served by the dashboard itself.
        let prefix = format!("{page}/documents/");
        let at = shown.text.find(&prefix).expect("a document link");
        let document = shown.text[at..at + prefix.len() + 36].to_owned();
        let pdf = operator.client.get(format!("{}{document}", operator.base)).send().await.unwrap();
        assert_eq!(pdf.status(), StatusCode::OK);
        assert_eq!(pdf.headers()["content-type"], "application/pdf");
        assert!(pdf.bytes().await.unwrap().starts_with(b"%PDF"));
        let unknown = format!("{prefix}{}", Uuid::new_v4());
        assert_eq!(operator.get(&unknown).await.status, StatusCode::NOT_FOUND);

        // The sandbox buttons: simulate a bill, a refusal shown on the page, a declined payment.
        let r = operator.submit(&page, &format!("{page}/sandbox/simulate"), &[("event", "invoice_generated")]).await;
        assert_eq!((r.status, r.location.as_str()), (StatusCode::SEE_OTHER, format!("{page}?done=simulated").as_str()), "{}", r.text);
        let r = operator.submit(&page, &format!("{page}/sandbox/simulate"), &[("event", "invoice_generated")]).await;
        assert_eq!(r.status, StatusCode::CONFLICT, "read through today already: {}", r.text);
        let r = operator.submit(&page, &format!("{page}/sandbox/simulate"), &[("event", "no_such_event")]).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
        let r = operator.submit(&page, &format!("{page}/sandbox/simulate"), &[("event", "payment_failed")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(operator.get(&page).await.text.contains("card_declined"), "the failure code is listed");

        let clock = || async {
            app.state.clock.for_account(&app.state.db, account.parse().unwrap()).await.unwrap().ahead()
        };
        let before = clock().await;
        let r = operator.submit(&page, &format!("{page}/sandbox/advance-clock"), &[("days", "0")]).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
        assert!(r.text.contains("between 1 and 3650"), "{}", r.text);
        let r = operator.submit(&page, &format!("{page}/sandbox/advance-clock"), &[("days", "3")]).await;
        assert_eq!((r.status, r.location.as_str()), (StatusCode::SEE_OTHER, format!("{page}?done=advanced").as_str()), "{}", r.text);
        // Three days from the account's present when it moved: the offset grows by three days
        // less the moment the request took.
        let moved = clock().await - before;
        assert!(moved > chrono::Duration::days(3) - chrono::Duration::minutes(1) && moved <= chrono::Duration::days(3), "the account's clock moved: {moved}");
        // CSRF first.
        let r = operator.post(&format!("{page}/sandbox/advance-clock"), &[("days", "3")]).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN);

        let audit = operator.get("/dashboard/audit").await.text;
        assert!(audit.contains("account.sandbox_clock_advanced") && audit.contains("account.sandbox_event_simulated"));

        // Another organisation's member: 404 everywhere.
        let stranger = signed_in(&app, "stranger@example.com", Role::Partner, Some("Globex")).await;
        assert_eq!(stranger.get(&page).await.status, StatusCode::NOT_FOUND);
        assert_eq!(stranger.get(&document).await.status, StatusCode::NOT_FOUND);
        for (form, fields) in [("sandbox/advance-clock", vec![("days", "1")]), ("sandbox/simulate", vec![("event", "invoice_generated")])] {
            let r = stranger.submit("/dashboard", &format!("{page}/{form}"), &fields).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{form}: {}", r.text);
        }
    }

    async fn an_e_mail_preview_shows_no_live_link_and_every_look_is_audited(app) {
        let (account, _) = crate::hosted::declined_customer(&app, "seen@example.com").await;
        let mails = crate::hosted::outbox(&app, Some(&account)).await;
        let failed = mails.iter().find(|m| m["template"] == "payment_failed").expect("a decline is e-mailed").clone();
        let link = crate::hosted::hosted_link(&failed);
        let token = link.split("token=").nth(1).unwrap().to_owned();
        let operator = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let page = format!("/dashboard/accounts/{account}");
        let shown = operator.get(&page).await;
        assert_eq!(shown.status, StatusCode::OK, "{}", shown.text);
        assert!(!shown.text.contains(&token));

        // The preview: the e-mail's words, its button's label, no link that goes anywhere, and no
        // token of the customer's anywhere in it.
        let preview_path = format!("{page}/emails/{}", failed["uuid"].as_str().unwrap());
        assert!(shown.text.contains(&preview_path), "the page links the preview");
        let preview = operator.get(&preview_path).await;
        assert_eq!(preview.status, StatusCode::OK, "{}", preview.text);
        assert!(preview.text.contains("Change your card"), "{}", preview.text);
        assert!(preview.text.contains("data-testid=\"preview-note\""), "{}", preview.text);
        assert!(!preview.text.contains(&token), "no usable token: {}", preview.text);
        assert!(!preview.text.contains("/hosted/link?token=swb_link_") || preview.text.contains("swb_link_[hidden]"), "{}", preview.text);
        assert!(!preview.text.to_ascii_lowercase().contains("href="), "no link goes anywhere: {}", preview.text);
        assert!(preview.csp.contains("sandbox"), "{}", preview.csp);

        // The customer's link still works afterwards, for the customer.
        let mut customer = crate::hosted::Browser::new(&app);
        let opened = crate::hosted::click_link(&mut customer, &link).await;
        assert_eq!(opened.status, StatusCode::SEE_OTHER, "{}", opened.text);
        assert!(opened.location().starts_with("/flow/update-payment-method?"), "{}", opened.location());

        // An invoice's and a document's PDF.
        let number = {
            let token = app.account_token(&account).await;
            let r = app.get("/v1/account/billing/invoices?limit=1", &token).await;
            r.body["data"][0]["number"].as_str().unwrap().to_owned()
        };
        let pdf = operator.client.get(format!("{}{page}/invoices/{number}", operator.base)).send().await.unwrap();
        assert_eq!(pdf.status(), StatusCode::OK);
        let prefix = format!("{page}/documents/");
        let at = shown.text.find(&prefix).expect("a document link");
        let document = shown.text[at..at + prefix.len() + 36].to_owned();
        let pdf = operator.client.get(format!("{}{document}", operator.base)).send().await.unwrap();
        assert_eq!(pdf.status(), StatusCode::OK);
        let search = operator.get("/dashboard/accounts?q=seen%40example.com").await;
        assert!(search.text.contains(&page));

        // Each look is in the audit log, with who looked and at whose account; never a token.
        let entries = app
            .query_texts("SELECT actor || '|' || action || '|' || target || '|' || detail FROM audit_log WHERE action LIKE 'account%'")
            .await
            .into_iter()
            .flatten()
            .collect::<Vec<_>>();
        for action in ["account.viewed", "account.email_viewed", "account.invoice_viewed", "account.document_viewed"] {
            let prefix = format!("ops@example.com|{action}|account:{account}|");
            assert!(entries.iter().any(|e| e.starts_with(&prefix)), "{action} in {entries:?}");
        }
        assert!(entries.iter().any(|e| e.starts_with("ops@example.com|accounts.searched|accounts|") && e.contains(&account)), "{entries:?}");
        assert!(entries.iter().all(|e| !e.contains(&token)), "{entries:?}");
        let log = operator.get("/dashboard/audit").await;
        assert!(log.text.contains("account.email_viewed") && !log.text.contains(&token));

        // Nothing is audited for a look that was refused.
        let before = entries.len();
        let stranger = signed_in(&app, "stranger@example.com", Role::Partner, Some("Globex")).await;
        assert_eq!(stranger.get(&preview_path).await.status, StatusCode::NOT_FOUND);
        assert_eq!(stranger.get(&page).await.status, StatusCode::NOT_FOUND);
        let after = app.query_texts("SELECT action FROM audit_log WHERE action LIKE 'account%'").await.len();
        assert_eq!(after, before);
    }

    async fn a_reset_link_survives_a_mail_scanner(app) {
        let old = user(&app, "ops@example.com", Role::Operator, None).await;
        let visitor = Browser::new(&app);
        let r = visitor.submit("/dashboard/forgot", "/dashboard/forgot", &[("email", "ops@example.com")]).await;
        assert_eq!(r.status, StatusCode::OK);
        let link = reset_link(&app, "ops@example.com").await;
        // A scanner's two GETs spend nothing: the page only asks for the new password.
        for _ in 0..2 {
            let scanned = Browser::new(&app).get(&link).await;
            assert_eq!(scanned.status, StatusCode::OK, "{}", scanned.text);
            assert!(scanned.text.contains("Set a new password"));
        }
        let used = app.query_texts("SELECT CAST(COUNT(*) AS TEXT) FROM dashboard_password_resets WHERE used_at IS NOT NULL").await;
        assert_eq!(used, vec![Some("0".to_owned())]);
        assert_eq!(Browser::new(&app).sign_in("ops@example.com", &old).await.status, StatusCode::SEE_OTHER, "unchanged by a GET");
        // The user's one POST sets the password and spends the link, once.
        let r = visitor.submit(&link, &link, &[("new", "a brand new passphrase")]).await;
        assert_eq!((r.status, r.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/sign-in?done=reset"), "{}", r.text);
        let r = visitor.submit("/dashboard/forgot", &link, &[("new", "yet another passphrase")]).await;
        assert_eq!(r.status, StatusCode::GONE, "{}", r.text);
        assert_eq!(visitor.get(&link).await.status, StatusCode::GONE, "a spent link gets its page");
    }

    async fn the_sandbox_buttons_are_refused_on_a_live_account(app) {
        let (_, live_token) = app.live_app().await;
        let r = app
            .post("/v1/app/accounts", &live_token, &serde_json::json!({"email": "live@example.com", "first_name": "Lia", "last_name": "Vance"}))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let account = r.body["uuid"].as_str().unwrap().to_owned();
        let operator = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let page = format!("/dashboard/accounts/{account}");
        let shown = operator.get(&page).await;
        assert_eq!(shown.status, StatusCode::OK);
        assert!(!shown.text.contains("sandbox/advance-clock"), "no sandbox buttons on a live account");
        let before = app.state.clock.for_account(&app.state.db, account.parse().unwrap()).await.unwrap().ahead();
        for (form, fields) in [("sandbox/advance-clock", vec![("days", "1")]), ("sandbox/simulate", vec![("event", "invoice_generated")])] {
            let r = operator.submit(&page, &format!("{page}/{form}"), &fields).await;
            assert_eq!(r.status, StatusCode::FORBIDDEN, "{form}: {}", r.text);
        }
        let after = app.state.clock.for_account(&app.state.db, account.parse().unwrap()).await.unwrap().ahead();
        assert_eq!(before, after, "a live account's clock never moves");
    }
}
