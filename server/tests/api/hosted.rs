//! Hosted pages: the single-use links e-mails carry (read from the sandbox outbox), the hosted
//! sign-up at `/go/<slug>`, and the portal's sign-in by e-mailed code. Driven as a browser
//! drives them: plain forms, the session cookie, the CSRF field, redirects not followed.

use reqwest::{header, StatusCode};
use serde_json::Value;

use crate::{
    enrollment::{add_card_number, advance, customer, relaxed, with_meters},
    helpers::TestApp,
};

/// A browser of one person: its own cookie, redirects shown rather than followed.
pub(crate) struct Browser {
    base: String,
    client: reqwest::Client,
    cookie: Option<String>,
}

pub(crate) struct Page {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Page {
    pub fn location(&self) -> &str {
        self.headers
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    /// The CSRF field of the page's first form.
    pub fn csrf(&self) -> String {
        let at = self
            .text
            .find("name=\"csrf\" value=\"")
            .unwrap_or_else(|| panic!("no csrf field in {}", self.text));
        let rest = &self.text[at + "name=\"csrf\" value=\"".len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    }

    pub fn testid(&self, id: &str) -> bool {
        self.text.contains(&format!("data-testid=\"{id}\""))
    }
}

impl Browser {
    pub fn new(app: &TestApp) -> Browser {
        Browser {
            base: app.url(""),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .build()
                .unwrap(),
            cookie: None,
        }
    }

    async fn read(&mut self, r: reqwest::Response) -> Page {
        let headers = r.headers().clone();
        for set in headers.get_all(header::SET_COOKIE) {
            let set = set.to_str().unwrap();
            if set.starts_with("sb_customer=") {
                let pair = set.split(';').next().unwrap().to_owned();
                // An expired cookie (signed out) clears it.
                if set.to_ascii_lowercase().contains("max-age=0") {
                    self.cookie = None;
                } else {
                    self.cookie = Some(pair);
                }
            }
        }
        Page {
            status: r.status(),
            headers,
            text: r.text().await.unwrap(),
        }
    }

    fn url(&self, path: &str) -> String {
        if path.starts_with("http") {
            path.to_owned()
        } else {
            format!("{}{path}", self.base)
        }
    }

    pub async fn get(&mut self, path: &str) -> Page {
        let mut req = self.client.get(self.url(path));
        if let Some(c) = &self.cookie {
            req = req.header(header::COOKIE, c);
        }
        let r = req.send().await.unwrap();
        self.read(r).await
    }

    pub async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let body: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let mut req = self
            .client
            .post(self.url(path))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        if let Some(c) = &self.cookie {
            req = req.header(header::COOKIE, c);
        }
        let r = req.send().await.unwrap();
        self.read(r).await
    }
}

/// The app's e-mails (newest first), optionally of one account.
pub(crate) async fn outbox(app: &TestApp, account: Option<&str>) -> Vec<Value> {
    let path = match account {
        Some(a) => format!("/v1/app/sandbox/emails?account_uuid={a}&limit=100"),
        None => "/v1/app/sandbox/emails?limit=100".to_owned(),
    };
    let r = app.get(&path, &app.app_token).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let mut list = r.body["data"].as_array().unwrap().clone();
    list.sort_by_key(|e| {
        std::cmp::Reverse(e["created_at"].as_str().unwrap_or_default().to_owned())
    });
    list
}

/// The hosted link an e-mail's text carries.
pub(crate) fn hosted_link(mail: &Value) -> String {
    let text = mail["text"].as_str().unwrap();
    let at = text
        .find("/hosted/link?token=")
        .unwrap_or_else(|| panic!("no hosted link in {text}"));
    let start = text[..at].rfind("http").unwrap();
    let end = text[at..]
        .find(char::is_whitespace)
        .map_or(text.len(), |e| at + e);
    text[start..end].to_owned()
}

/// Opens an e-mail's link as its customer does: the GET shows the link's page (which spends
/// nothing), and its one button posts the token back, which spends it. Answers the POST's page.
pub(crate) async fn click_link(browser: &mut Browser, link: &str) -> Page {
    let shown = browser.get(link).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.text);
    assert!(shown.testid("link-open"), "{}", shown.text);
    let token = link.split("token=").nth(1).unwrap();
    let csrf = shown.csrf();
    browser
        .post("/hosted/link", &[("csrf", &csrf), ("token", token)])
        .await
}

/// The six-digit code of a code e-mail (its subject ends with it).
pub(crate) fn code_of(mail: &Value) -> String {
    let subject = mail["subject"].as_str().unwrap();
    subject.rsplit(' ').next().unwrap().to_owned()
}

pub(crate) async fn slug(app: &TestApp) -> String {
    server::store::apps::app_by_uuid(&app.state.db, app.app_uuid)
        .await
        .unwrap()
        .unwrap()
        .slug
}

pub(crate) fn assert_hosted_headers(page: &Page) {
    let csp = page.headers[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(page.headers[header::X_FRAME_OPTIONS], "DENY");
    assert_eq!(page.headers[header::CACHE_CONTROL], "no-store");
    for set in page.headers.get_all(header::SET_COOKIE) {
        let set = set.to_str().unwrap();
        assert!(set.contains("HttpOnly"), "{set}");
        assert!(set.contains("SameSite=Lax"), "{set}");
    }
}

/// A customer with an active service whose auto-pay was declined: the payment-failed e-mails.
pub(crate) async fn declined_customer(app: &TestApp, email: &str) -> (String, String) {
    with_meters(app).await;
    let (uuid, token) = customer(app, email).await;
    add_card_number(app, &token, "4000000000000341").await;
    let r = app
        .post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    (uuid, token)
}

fn of_template(mails: &[Value], template: &str) -> Vec<Value> {
    mails
        .iter()
        .filter(|m| m["template"] == template)
        .cloned()
        .collect()
}

both_engines! {
    with relaxed;
    async fn an_e_mail_s_link_opens_its_flow_once(app) {
        let (uuid, _) = declined_customer(&app, "link@example.com").await;
        let mails = outbox(&app, Some(&uuid)).await;
        let failed = of_template(&mails, "payment_failed");
        assert!(!failed.is_empty(), "a decline is e-mailed");
        let link = hosted_link(&failed[0]);
        assert!(failed[0]["html"].as_str().unwrap().contains(&link.replace('&', "&amp;")));
        // The links table keeps only a hash of the token.
        let token = link.split("token=").nth(1).unwrap();
        let hashes = app.query_texts("SELECT token_hash FROM hosted_links").await;
        assert!(hashes.contains(&Some(server::domain::tokens::hash_token(token))));
        assert!(!hashes.contains(&Some(token.to_owned())));

        // A mail scanner fetches the link, twice: nothing is spent, the customer's page asks for
        // one click, in the app's brand.
        for _ in 0..2 {
            let scanned = Browser::new(&app).get(&link).await;
            assert_eq!(scanned.status, StatusCode::OK, "{}", scanned.text);
            assert!(scanned.testid("link-open") && scanned.text.contains("Change your card"), "{}", scanned.text);
            assert!(scanned.text.contains("Sunny Homes") && !scanned.text.contains("Switchboard"), "{}", scanned.text);
            assert_hosted_headers(&scanned);
        }
        let used = app.query_texts("SELECT CAST(COUNT(*) AS TEXT) FROM hosted_links WHERE used_at IS NOT NULL").await;
        assert_eq!(used, vec![Some("0".to_owned())], "a GET spends no link");

        let mut browser = Browser::new(&app);
        let shown = browser.get(&link).await;
        let csrf = shown.csrf();
        // The click is CSRF-checked like every other form: without the token nothing is spent.
        let forged = browser.post("/hosted/link", &[("token", token)]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.text);
        let opened = browser.post("/hosted/link", &[("csrf", &csrf), ("token", token)]).await;
        assert_eq!(opened.status, StatusCode::SEE_OTHER, "{}", opened.text);
        let location = opened.location().to_owned();
        assert!(
            location.starts_with(&format!("/flow/update-payment-method?app={}&hosted=done#session=swb_flow_", app.app_uuid)),
            "{location}"
        );
        // The flow's session works for its scope, on this account.
        let session = location.split("#session=").nth(1).unwrap();
        let me = app.get("/v1/account", session).await;
        assert_eq!(me.status, StatusCode::OK, "{}", me.text);
        assert_eq!(me.body["uuid"], uuid);
        let r = app.get("/v1/account/billing/payment-method", session).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);

        // The click spends it once: a second one is refused, with a fresh link offered.
        let twice = browser.post("/hosted/link", &[("csrf", &csrf), ("token", token)]).await;
        assert_eq!(twice.status, StatusCode::GONE, "{}", twice.text);
        assert!(twice.testid("link-expired"), "{}", twice.text);
        let again = browser.get(&link).await;
        assert_eq!(again.status, StatusCode::GONE, "{}", again.text);
        assert!(again.testid("link-expired"));
        // The spent link's page is the app's, never the platform's.
        assert!(again.text.contains("Sunny Homes") && !again.text.contains("Switchboard"), "{}", again.text);
        assert_hosted_headers(&again);
        let csrf = again.csrf();
        let before = outbox(&app, Some(&uuid)).await.len();

        // Without the CSRF field nothing is sent.
        let forged = browser.post("/hosted/link/resend", &[("token", token)]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.text);
        assert_eq!(outbox(&app, Some(&uuid)).await.len(), before);

        let resent = browser.post("/hosted/link/resend", &[("csrf", &csrf), ("token", token)]).await;
        assert_eq!(resent.status, StatusCode::OK, "{}", resent.text);
        assert!(resent.text.contains("l••@example.com"), "{}", resent.text);
        let mails = outbox(&app, Some(&uuid)).await;
        assert_eq!(mails.len(), before + 1);
        let fresh = hosted_link(&mails[0]);
        assert_ne!(fresh, link);
        let opened = click_link(&mut Browser::new(&app), &fresh).await;
        assert_eq!(opened.status, StatusCode::SEE_OTHER, "{}", opened.text);
        assert!(opened.location().starts_with("/flow/update-payment-method?"));

        // Re-sends are limited: three an hour per account.
        for _ in 0..2 {
            let r = browser.post("/hosted/link/resend", &[("csrf", &csrf), ("token", token)]).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        }
        let limited = browser.post("/hosted/link/resend", &[("csrf", &csrf), ("token", token)]).await;
        assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS, "{}", limited.text);
        assert_eq!(outbox(&app, Some(&uuid)).await.len(), before + 3);

        // Not a link of ours: no app's brand, and not the platform's either.
        let bogus = browser.get("/hosted/link?token=swb_link_notarealtokenatallxxxxxxxxxxxx").await;
        assert_eq!(bogus.status, StatusCode::NOT_FOUND);
        assert!(bogus.testid("link-invalid") && !bogus.text.contains("Switchboard"), "{}", bogus.text);
        let r = browser.post("/hosted/link", &[("csrf", &csrf), ("token", "swb_link_notarealtokenatallxxxxxxxxxxxx")]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }

    async fn a_bill_s_link_opens_the_billing_flow_and_expires_after_a_week(app) {
        let (uuid, token) = declined_customer(&app, "bill@example.com").await;
        let mails = outbox(&app, Some(&uuid)).await;
        let bills = of_template(&mails, "bill_ready");
        assert!(!bills.is_empty(), "{mails:?}");
        let opened = click_link(&mut Browser::new(&app), &hosted_link(&bills[0])).await;
        assert_eq!(opened.status, StatusCode::SEE_OTHER, "{}", opened.text);
        assert!(opened.location().starts_with("/flow/billing?"), "{}", opened.location());

        // A week on the account's clock: an unopened link no longer opens, neither its page nor
        // a click from a page shown before.
        let stale = hosted_link(&of_template(&mails, "payment_failed")[0]);
        let mut early = Browser::new(&app);
        let shown = early.get(&stale).await;
        assert!(shown.testid("link-open"), "{}", shown.text);
        advance(&app, &token, 8).await;
        let expired = Browser::new(&app).get(&stale).await;
        assert_eq!(expired.status, StatusCode::GONE, "{}", expired.text);
        assert!(expired.testid("link-expired"));
        let late = early
            .post("/hosted/link", &[("csrf", &shown.csrf()), ("token", stale.split("token=").nth(1).unwrap())])
            .await;
        assert_eq!(late.status, StatusCode::GONE, "{}", late.text);
        assert!(late.testid("link-expired"));
    }

    async fn a_frozen_credit_link_explains_the_freeze_and_checks_again_at_once(app) {
        use crate::credit::{client_agent_account, simulate, submit, wait_reason};
        let (uuid, token) = client_agent_account(&app, "frozen-link@example.com").await;
        submit(&app, &token, "123-45-0001").await;
        wait_reason(&app, &uuid, "needs_attention/credit_check_frozen").await;
        app.eventually("the frozen e-mail", || async {
            !of_template(&outbox(&app, Some(&uuid)).await, "credit_frozen").is_empty()
        })
        .await;
        let mails = of_template(&outbox(&app, Some(&uuid)).await, "credit_frozen");
        let mut browser = Browser::new(&app);
        let opened = click_link(&mut browser, &hosted_link(&mails[0])).await;
        assert_eq!(opened.status, StatusCode::SEE_OTHER, "{}", opened.text);
        assert_eq!(opened.location(), "/hosted/credit");
        let page = browser.get("/hosted/credit").await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.testid("credit-frozen") && page.testid("unfreeze"), "{}", page.text);
        assert_hosted_headers(&page);
        let csrf = page.csrf();
        // Another browser has no business there.
        assert_eq!(Browser::new(&app).get("/hosted/credit").await.status, StatusCode::UNAUTHORIZED);

        simulate(&app, &token, "credit_check_unfrozen").await;
        let forged = browser.post("/hosted/credit", &[]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let retried = browser.post("/hosted/credit", &[("csrf", &csrf)]).await;
        assert_eq!(retried.status, StatusCode::OK, "{}", retried.text);
        assert!(retried.testid("credit-retried"));
        assert!(retried.text.contains("Sunny Homes"), "in the app's brand: {}", retried.text);
        // The check runs again at once, with no clock advanced.
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;
    }

    async fn the_lasting_renewal_address_answers(app) {
        // The renewal page at the lasting address printed on notices answers, branded.
        let page = Browser::new(&app).get(&format!("/go/{}/renew/{}", slug(&app).await, uuid::Uuid::new_v4())).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.testid("renew"));
        assert!(page.text.contains(&format!("/go/{}/portal", slug(&app).await)), "{}", page.text);
        assert_hosted_headers(&page);
    }

    async fn a_customer_signs_up_on_the_hosted_page(app) {
        let slug = slug(&app).await;
        let mut browser = Browser::new(&app);
        let landing = browser.get(&format!("/go/{slug}")).await;
        assert_eq!(landing.status, StatusCode::OK, "{}", landing.text);
        assert!(landing.testid("sign-up"));
        assert!(landing.text.contains("Sunny Homes"));
        assert!(landing.text.contains("<label for=\"email\">"));
        assert_hosted_headers(&landing);
        let csrf = landing.csrf();
        let first_cookie = browser.cookie.clone().unwrap();

        // A bad address is refused in place; nothing is sent.
        let bad = browser.post(&format!("/go/{slug}"), &[("csrf", &csrf), ("first_name", "Ana"), ("last_name", "Díaz"), ("email", "not-an-address")]).await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.text);
        assert!(bad.testid("form-error"));
        assert!(outbox(&app, None).await.is_empty());

        let form = [("csrf", csrf.as_str()), ("first_name", "Ana"), ("last_name", "Díaz"), ("email", "New@Example.com")];
        let started = browser.post(&format!("/go/{slug}"), &form).await;
        assert_eq!(started.status, StatusCode::SEE_OTHER, "{}", started.text);
        assert_eq!(started.location(), format!("/go/{slug}/confirm"));
        let mails = outbox(&app, None).await;
        assert_eq!(mails.len(), 1);
        assert_eq!(mails[0]["to"], "new@example.com");
        let code = code_of(&mails[0]);
        assert_eq!(code.len(), 6, "{}", mails[0]["subject"]);
        // No account before the address is confirmed.
        let r = app.get("/v1/app/accounts?email=new@example.com", &app.app_token).await;
        assert_eq!(r.body["data"].as_array().unwrap().len(), 0);

        let confirm = browser.get(&format!("/go/{slug}/confirm")).await;
        assert_eq!(confirm.status, StatusCode::OK);
        let csrf = confirm.csrf();
        let wrong = if code == "000000" { "111111" } else { "000000" };
        let r = browser.post(&format!("/go/{slug}/confirm"), &[("csrf", &csrf), ("code", wrong)]).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
        assert!(r.text.contains("not the code we sent"));

        let done = browser.post(&format!("/go/{slug}/confirm"), &[("csrf", &csrf), ("code", &code)]).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
        let location = done.location().to_owned();
        assert!(location.starts_with(&format!("/flow/enrollment?app={}&hosted=portal#session=", app.app_uuid)), "{location}");
        // Signed in on a new session id.
        assert_ne!(browser.cookie.clone().unwrap(), first_cookie);

        // The account belongs to the app as if the partner had created it.
        let r = app.get("/v1/app/accounts?email=new@example.com", &app.app_token).await;
        let accounts = r.body["data"].as_array().unwrap();
        assert_eq!(accounts.len(), 1, "{}", r.text);
        assert_eq!(accounts[0]["first_name"], "Ana");
        assert_eq!(accounts[0]["status"], "not_enrolled");
        let session = location.split("#session=").nth(1).unwrap();
        let me = app.get("/v1/account", session).await;
        assert_eq!(me.body["uuid"], accounts[0]["uuid"]);

        // The code was spent, and the portal knows the customer.
        let home = browser.get("/portal").await;
        assert_eq!(home.status, StatusCode::OK);
        assert!(home.testid("portal-home"), "{}", home.text);
        assert!(home.text.contains("Hello Ana"));
        assert!(home.testid("open-enrollment"));
    }

    async fn a_hosted_sign_up_with_an_address_already_a_customer_signs_in_instead(app) {
        let slug = slug(&app).await;
        let existing = app.create_simple_account("known@example.com").await;
        let existing = existing["uuid"].as_str().unwrap().to_owned();
        // The same address in another app plays no part here.
        let (_, other_token) = app.other_app().await;
        let r = app.post("/v1/app/accounts", &other_token, &serde_json::json!({"email": "known@example.com", "first_name": "Kim", "last_name": "Other"})).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);

        let mut browser = Browser::new(&app);
        let csrf = browser.get(&format!("/go/{slug}")).await.csrf();
        let form = [("csrf", csrf.as_str()), ("first_name", "Kim"), ("last_name", "Again"), ("email", "Known@Example.com")];
        let started = browser.post(&format!("/go/{slug}"), &form).await;
        // The page says what it says to anyone: nobody learns who is a customer.
        assert_eq!(started.status, StatusCode::SEE_OTHER, "{}", started.text);
        assert_eq!(started.location(), format!("/go/{slug}/confirm"));
        let confirm = browser.get(&format!("/go/{slug}/confirm")).await;
        assert!(confirm.testid("confirm-code"), "{}", confirm.text);
        // The e-mail says the code signs in to the account there is.
        let mail = outbox(&app, None).await.into_iter().find(|m| m["to"] == "known@example.com").unwrap();
        assert!(mail["subject"].as_str().unwrap().contains("sign-in code"), "{}", mail["subject"]);
        assert!(mail["text"].as_str().unwrap().contains("already have an account with Sunny Homes"), "{}", mail["text"]);

        let done = browser.post(&format!("/go/{slug}/confirm"), &[("csrf", &confirm.csrf()), ("code", &code_of(&mail))]).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.text);
        assert_eq!(done.location(), "/portal", "signed in, not sent to a new enrollment");
        let home = browser.get("/portal").await;
        assert!(home.testid("portal-home"), "{}", home.text);
        // No second account: still the one, and the portal shows it.
        let r = app.get("/v1/app/accounts?email=known@example.com", &app.app_token).await;
        let accounts = r.body["data"].as_array().unwrap();
        assert_eq!(accounts.len(), 1, "{}", r.text);
        assert_eq!(accounts[0]["uuid"], existing.as_str());
        let count = app.query_texts("SELECT CAST(COUNT(*) AS TEXT) FROM accounts WHERE email = 'known@example.com'").await;
        assert_eq!(count, vec![Some("2".to_owned())], "this app's and the other app's, no third");
        let opened = browser.post("/portal/open/enrollment", &[("csrf", &home.csrf())]).await;
        let session = opened.location().split("#session=").nth(1).unwrap().to_owned();
        assert_eq!(app.get("/v1/account", &session).await.body["uuid"], existing.as_str());
    }

    async fn sign_up_codes_are_limited(app) {
        let slug = slug(&app).await;
        let mut browser = Browser::new(&app);
        let csrf = browser.get(&format!("/go/{slug}")).await.csrf();
        let form = [("csrf", csrf.as_str()), ("first_name", "Ana"), ("last_name", "Díaz"), ("email", "many@example.com")];
        for _ in 0..5 {
            let r = browser.post(&format!("/go/{slug}"), &form).await;
            assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        }
        let limited = browser.post(&format!("/go/{slug}"), &form).await;
        assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS, "{}", limited.text);
        assert_eq!(outbox(&app, None).await.len(), 5);

        // Five wrong guesses void the code: the right one is refused after them.
        let code = code_of(&outbox(&app, None).await[0]);
        let wrong = if code == "000000" { "111111" } else { "000000" };
        for _ in 0..5 {
            let r = browser.post(&format!("/go/{slug}/confirm"), &[("csrf", &csrf), ("code", wrong)]).await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST);
        }
        let r = browser.post(&format!("/go/{slug}/confirm"), &[("csrf", &csrf), ("code", &code)]).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
        assert!(r.text.contains("no longer works"), "{}", r.text);
        let accounts = app.get("/v1/app/accounts?email=many@example.com", &app.app_token).await;
        assert_eq!(accounts.body["data"].as_array().unwrap().len(), 0);

        // An unknown slug has no page.
        let r = browser.get("/go/no-such-partner").await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }

    async fn the_portal_signs_in_by_code_and_sees_only_its_account(app) {
        let (uuid, _) = declined_customer(&app, "portal@example.com").await;
        let (other, other_token) = customer(&app, "other@example.com").await;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &other_token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let other_location = app.get("/v1/account", &other_token).await.body["locations"][0]["uuid"]
            .as_str()
            .unwrap()
            .to_owned();

        let slug = slug(&app).await;
        let sign_in = format!("/go/{slug}/portal");
        let mut browser = Browser::new(&app);
        // Knowing no app, the portal says where to sign in, in nobody's brand.
        let nowhere = browser.get("/portal").await;
        assert!(nowhere.testid("portal-find") && !nowhere.text.contains("Switchboard"), "{}", nowhere.text);
        let home = browser.get(&sign_in).await;
        assert!(home.testid("portal-sign-in"));
        assert!(home.text.contains("Sunny Homes") && !home.text.contains("Switchboard"), "{}", home.text);
        assert_hosted_headers(&home);
        let csrf = home.csrf();
        let before = outbox(&app, Some(&uuid)).await.len();

        // An unknown address gets the same answer, and no e-mail goes anywhere.
        let all_before = outbox(&app, None).await.len();
        let r = browser.post(&sign_in, &[("csrf", &csrf), ("email", "nobody@example.com")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(r.location(), "/portal/code");
        assert_eq!(outbox(&app, None).await.len(), all_before);

        let r = browser.post(&sign_in, &[("csrf", &csrf), ("email", "portal@example.com")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let mails = outbox(&app, Some(&uuid)).await;
        assert_eq!(mails.len(), before + 1);
        let code = code_of(&mails[0]);
        let page = browser.get("/portal/code").await;
        assert!(page.text.contains("Sunny Homes"), "{}", page.text);
        let csrf = page.csrf();
        let r = browser.post("/portal/code", &[("csrf", &csrf), ("code", &code)]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(r.location(), "/portal");
        // Spent: the same code does not sign in twice.
        let mut thief = Browser::new(&app);
        let t = thief.get(&sign_in).await.csrf();
        thief.post(&sign_in, &[("csrf", &t), ("email", "portal@example.com")]).await;
        let reuse = thief.post("/portal/code", &[("csrf", &t), ("code", &code)]).await;
        assert_eq!(reuse.status, StatusCode::BAD_REQUEST, "{}", reuse.text);

        let home = browser.get("/portal").await;
        assert!(home.testid("portal-home"), "{}", home.text);
        assert!(home.text.contains("Your electricity service is active."), "{}", home.text);
        assert!(home.testid("next-bill") && home.testid("support"));
        let csrf = home.csrf();

        // Each flow opens full-page on this account only.
        let forged = browser.post("/portal/open/billing", &[]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        let opened = browser.post("/portal/open/documents", &[("csrf", &csrf)]).await;
        assert_eq!(opened.status, StatusCode::SEE_OTHER, "{}", opened.text);
        let location = opened.location().to_owned();
        assert!(location.starts_with("/flow/documents?") && location.contains("hosted=portal"), "{location}");
        let session = location.split("#session=").nth(1).unwrap();
        let r = app.get(&format!("/v1/account/locations/{other_location}/all-documents"), session).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        let me = app.get("/v1/account", session).await;
        assert_eq!(me.body["uuid"], uuid);
        assert_ne!(me.body["uuid"].as_str().unwrap(), other);
        let r = browser.post("/portal/open/admin", &[("csrf", &csrf)]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);

        // Signed out: back to the app's sign-in.
        let r = browser.post("/portal/sign-out", &[("csrf", &csrf)]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER);
        assert_eq!(r.location(), sign_in);
        let home = browser.get(r.location()).await;
        assert!(home.testid("portal-sign-in"), "{}", home.text);
    }
}
