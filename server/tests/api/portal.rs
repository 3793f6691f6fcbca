//! The customer portal's own pages, driven as a browser drives them (plain forms, the session
//! cookie, the CSRF field, redirects not followed): usage charts, bills with their PDF and Pay
//! now, the billing address, documents, renewal and support; choosing among the accounts of
//! one address; and that a portal session sees its own account and nothing else.

use reqwest::{header, StatusCode};
use serde_json::{json, Value};

use crate::{
    enrollment::{add_card_number, customer, relaxed, with_meters},
    helpers::TestApp,
    hosted::{assert_hosted_headers, declined_customer, slug, Browser, Page},
};

/// The code of the newest portal sign-in e-mail to `email`.
async fn latest_code(app: &TestApp, email: &str) -> String {
    let subjects = app
        .query_texts(&format!(
            "SELECT subject FROM emails WHERE to_address = '{email}' \
             AND subject LIKE '%sign-in code:%' ORDER BY created_at DESC"
        ))
        .await;
    let subject = subjects
        .first()
        .cloned()
        .flatten()
        .unwrap_or_else(|| panic!("no sign-in code was sent to {email}"));
    subject.rsplit(' ').next().unwrap().to_owned()
}

/// Signs in to the test app's portal with the code e-mailed to `email`; answers the browser and
/// where the code sent it.
pub(crate) async fn sign_in(app: &TestApp, email: &str) -> (Browser, String) {
    sign_in_at(app, &slug(app).await, email).await
}

/// Signs in to the portal of the app at `/go/<slug>` with the code e-mailed to `email`.
async fn sign_in_at(app: &TestApp, slug: &str, email: &str) -> (Browser, String) {
    let mut browser = Browser::new(app);
    let page = browser.get(&format!("/go/{slug}/portal")).await;
    assert_page(&page, "portal-sign-in");
    let csrf = page.csrf();
    let r = browser
        .post(
            &format!("/go/{slug}/portal"),
            &[("csrf", &csrf), ("email", email)],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let code = latest_code(app, email).await;
    let csrf = browser.get("/portal/code").await.csrf();
    let r = browser
        .post("/portal/code", &[("csrf", &csrf), ("code", &code)])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let to = r.location().to_owned();
    (browser, to)
}

/// A customer with an active service, a year of usage and bills, whose auto-pay was declined
/// (so a bill is open), and who then saved a card that pays. The first of a test sets up the
/// meters (`declined_customer`); later ones use them.
async fn billed_customer(app: &TestApp, email: &str, first: bool) -> (String, String) {
    let (uuid, token) = if first {
        declined_customer(app, email).await
    } else {
        let (uuid, token) = customer(app, email).await;
        add_card_number(app, &token, "4000000000000341").await;
        let r = app
            .post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null)
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        (uuid, token)
    };
    add_card_number(app, &token, "4242424242424242").await;
    (uuid, token)
}

async fn invoices(app: &TestApp, token: &str) -> Vec<Value> {
    let r = app
        .get("/v1/account/billing/invoices?limit=100", token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"].as_array().unwrap().clone()
}

async fn location_of(app: &TestApp, token: &str) -> String {
    let me = app.get("/v1/account", token).await;
    me.body["locations"][0]["uuid"].as_str().unwrap().to_owned()
}

async fn document_ids(app: &TestApp, token: &str, location: &str) -> Vec<String> {
    let r = app
        .get(
            &format!("/v1/account/locations/{location}/all-documents"),
            token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["uuid"].as_str().unwrap().to_owned())
        .collect()
}

fn open_invoice(list: &[Value]) -> String {
    list.iter()
        .find(|i| i["status"] == "open" || i["status"] == "past_due")
        .unwrap_or_else(|| panic!("an open bill in {list:?}"))["number"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn assert_page(page: &Page, testid: &str) {
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    assert!(page.testid(testid), "{}", page.text);
    assert_hosted_headers(page);
}

both_engines! {
    with relaxed;
    async fn the_portal_shows_usage_bills_documents_renewal_and_support(app) {
        let (_, token) = billed_customer(&app, "pages@example.com", true).await;
        let (mut browser, to) = sign_in(&app, "pages@example.com").await;
        assert_eq!(to, "/portal");
        let home = browser.get("/portal").await;
        assert_page(&home, "portal-home");
        for nav in ["nav-usage", "nav-invoices", "nav-billing-address", "nav-documents", "nav-renewal", "nav-support", "sign-out"] {
            assert!(home.testid(nav), "{nav} in {}", home.text);
        }

        // The utility's name and outage number, never the generic sentence, once known.
        let oncor = server::store::market::tdu(&app.state.db, "ONCOR").await.unwrap().unwrap();
        let outage = app::format::phone(oncor.outage_phone.as_deref().unwrap());
        assert!(home.text.contains(&outage) && home.text.contains(&oncor.display_name), "{}", home.text);
        assert!(!home.text.contains("the number is on your bill"), "{}", home.text);
        let support = browser.get("/portal/support").await;
        assert_page(&support, "portal-support");
        assert!(support.testid("outage-phone") && support.text.contains(&outage), "{}", support.text);

        // Usage: twelve months and the days of a month, each with its figures as a table.
        let usage = browser.get("/portal/usage").await;
        assert_page(&usage, "portal-usage");
        assert!(usage.testid("usage-months") && usage.testid("usage-days"), "{}", usage.text);
        let months = &usage.text[usage.text.find("data-testid=\"usage-months\"").unwrap()..];
        let months = &months[..months.find("</figure>").unwrap()];
        assert_eq!(months.matches("<rect").count(), 12, "{months}");
        assert_eq!(months.matches("<tr>").count(), 12, "{months}");
        assert!(usage.text.contains("<svg viewBox="));
        let previous = usage.testid("previous-month");
        assert!(previous, "a year of usage links the month before: {}", usage.text);
        let bad = browser.get("/portal/usage?month=13-2027").await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.text);

        // Bills: the list, one bill with its chart and PDF, and Pay now.
        let list = invoices(&app, &token).await;
        let number = open_invoice(&list);
        let page = browser.get("/portal/invoices").await;
        assert_page(&page, "portal-invoices");
        assert_eq!(page.text.matches("data-testid=\"invoice-row\"").count(), list.len().min(12));
        let bill = browser.get(&format!("/portal/invoices/{number}")).await;
        assert_page(&bill, "portal-invoice");
        assert!(bill.testid("invoice-days") && bill.testid("invoice-pdf") && bill.testid("pay-now"), "{}", bill.text);
        let pdf = browser.get(&format!("/portal/invoices/{number}/pdf")).await;
        assert_eq!(pdf.status, StatusCode::OK);
        assert_eq!(pdf.headers[header::CONTENT_TYPE], "application/pdf");
        assert!(pdf.text.starts_with("%PDF"));
        let csrf = bill.csrf();
        let forged = browser.post(&format!("/portal/invoices/{number}/pay"), &[]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.text);
        let paid = browser.post(&format!("/portal/invoices/{number}/pay"), &[("csrf", &csrf)]).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        assert_eq!(paid.location(), format!("/portal/invoices/{number}?paid=1"));
        let now = invoices(&app, &token).await;
        let this = now.iter().find(|i| i["number"] == number.as_str()).unwrap();
        assert_eq!(this["status"], "paid", "{this}");
        let shown = browser.get(paid.location()).await;
        assert!(shown.testid("paid") && !shown.testid("pay-now"), "{}", shown.text);
        // Paid already: nothing is charged twice.
        let again = browser.post(&format!("/portal/invoices/{number}/pay"), &[("csrf", &csrf)]).await;
        assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.text);

        // Documents: listed, each opens as a PDF.
        let docs = browser.get("/portal/documents").await;
        assert_page(&docs, "portal-documents");
        let location = location_of(&app, &token).await;
        let ids = document_ids(&app, &token, &location).await;
        assert!(!ids.is_empty());
        for id in &ids {
            assert!(docs.text.contains(&format!("/portal/documents/{id}")), "{id} in {}", docs.text);
        }
        let one = browser.get(&format!("/portal/documents/{}", ids[0])).await;
        assert_eq!(one.status, StatusCode::OK, "{}", one.text);
        assert_eq!(one.headers[header::CONTENT_TYPE], "application/pdf");

        // Renewal: where the contract stands.
        let renewal = browser.get("/portal/renewal").await;
        assert_page(&renewal, "portal-renewal");
        assert!(renewal.testid("renewal-state"), "{}", renewal.text);
    }

    async fn the_billing_address_changes_from_the_portal(app) {
        let (_, token) = billed_customer(&app, "address@example.com", true).await;
        let (mut browser, _) = sign_in(&app, "address@example.com").await;
        let page = browser.get("/portal/billing-address").await;
        assert_page(&page, "portal-billing-address");
        let api = app.get("/v1/account/billing/address", &token).await;
        let street = api.body["address_1"].as_str().unwrap().to_owned();
        assert!(page.text.contains(&street), "the service address by default: {}", page.text);
        let csrf = page.csrf();
        let other = [
            ("csrf", csrf.as_str()), ("which", "other"), ("address_1", "9 Post Office Box <b>"),
            ("address_2", ""), ("city", "Austin"), ("state", "tx"), ("postal_code", "78701"),
        ];

        // Without the CSRF field, or with a bad ZIP: refused in place, nothing changed.
        let forged = browser.post("/portal/billing-address", &other[1..]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.text);
        let mut bad = other;
        bad[6] = ("postal_code", "7870");
        let refused = browser.post("/portal/billing-address", &bad).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        assert!(refused.testid("form-error") && refused.text.contains("ZIP"), "{}", refused.text);
        let api = app.get("/v1/account/billing/address", &token).await;
        assert_eq!(api.body["same_as_service_address"], true, "{}", api.text);

        let saved = browser.post("/portal/billing-address", &other).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.text);
        let shown = browser.get(saved.location()).await;
        assert!(shown.testid("saved"), "{}", shown.text);
        assert!(shown.text.contains("9 Post Office Box &lt;b&gt;") && !shown.text.contains("Box <b>"), "{}", shown.text);
        let api = app.get("/v1/account/billing/address", &token).await;
        assert_eq!(api.body, json!({
            "same_as_service_address": false, "address_1": "9 Post Office Box <b>", "address_2": null,
            "city": "Austin", "state": "TX", "postal_code": "78701",
        }));
        // And back to the service address.
        let csrf = shown.csrf();
        let back = browser.post("/portal/billing-address", &[("csrf", &csrf), ("which", "service")]).await;
        assert_eq!(back.status, StatusCode::SEE_OTHER, "{}", back.text);
        let api = app.get("/v1/account/billing/address", &token).await;
        assert_eq!(api.body["same_as_service_address"], true, "{}", api.text);
    }

    async fn a_declined_pay_now_says_so_and_leaves_the_bill_open(app) {
        let (_, token) = declined_customer(&app, "declined-pay@example.com").await;
        let (mut browser, _) = sign_in(&app, "declined-pay@example.com").await;
        let number = open_invoice(&invoices(&app, &token).await);
        let bill = browser.get(&format!("/portal/invoices/{number}")).await;
        let r = browser.post(&format!("/portal/invoices/{number}/pay"), &[("csrf", &bill.csrf())]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(r.location(), format!("/portal/invoices/{number}?declined=1"));
        let shown = browser.get(r.location()).await;
        assert!(shown.testid("form-error") && shown.text.contains("declined"), "{}", shown.text);
        let this = invoices(&app, &token).await.into_iter().find(|i| i["number"] == number.as_str()).unwrap();
        assert_ne!(this["status"], "paid");
    }

    async fn another_customer_s_ids_are_404_on_every_portal_page(app) {
        let (_, _) = billed_customer(&app, "mine@example.com", true).await;
        let (_, theirs) = billed_customer(&app, "theirs@example.com", false).await;
        let (mut browser, _) = sign_in(&app, "mine@example.com").await;
        let csrf = browser.get("/portal").await.csrf();
        let mine: Vec<String> = {
            let me = app.get("/v1/app/accounts?email=mine@example.com", &app.app_token).await;
            let uuid = me.body["data"][0]["uuid"].as_str().unwrap().to_owned();
            let token = app.account_token(&uuid).await;
            invoices(&app, &token).await.iter().map(|i| i["number"].as_str().unwrap().to_owned()).collect()
        };
        let their_bills = invoices(&app, &theirs).await;
        let number = their_bills
            .iter()
            .map(|i| i["number"].as_str().unwrap().to_owned())
            .find(|n| !mine.contains(n))
            .unwrap();
        let their_open = open_invoice(&their_bills);
        let location = location_of(&app, &theirs).await;
        let documents = document_ids(&app, &theirs, &location).await;

        for path in [
            format!("/portal/usage?location={location}"),
            format!("/portal/invoices/{number}"),
            format!("/portal/invoices/{number}/pdf"),
            format!("/portal/documents/{}", documents[0]),
            format!("/portal/documents/{}", uuid::Uuid::new_v4()),
            "/portal/invoices/INV-99999999".to_owned(),
        ] {
            let r = browser.get(&path).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{path}: {}", r.text);
            assert!(!r.text.contains("theirs@example.com"));
        }
        if !mine.contains(&their_open) {
            let r = browser.post(&format!("/portal/invoices/{their_open}/pay"), &[("csrf", &csrf)]).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
            let still = invoices(&app, &theirs).await.into_iter().find(|i| i["number"] == their_open.as_str()).unwrap();
            assert_ne!(still["status"], "paid", "nobody pays another's bill");
        }
        // Choosing an account is only for an address that has several.
        let r = browser.post("/portal/choose", &[("csrf", &csrf), ("account", &location)]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

        // Signed out, every page goes back to sign in.
        let mut stranger = Browser::new(&app);
        for path in ["/portal/usage", "/portal/invoices", &format!("/portal/invoices/{number}"), "/portal/billing-address", "/portal/documents", "/portal/renewal", "/portal/support", "/portal/choose"] {
            let r = stranger.get(path).await;
            assert_eq!(r.status, StatusCode::SEE_OTHER, "{path}");
            assert_eq!(r.location(), "/portal", "{path}");
        }
        let csrf = stranger.get(&format!("/go/{}/portal", slug(&app).await)).await.csrf();
        let r = stranger.post(&format!("/portal/invoices/{their_open}/pay"), &[("csrf", &csrf)]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER);
        let r = stranger.post("/portal/billing-address", &[("csrf", &csrf), ("which", "service")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER);
        // Forms without the token are refused before anything else.
        for path in ["/portal/choose", "/portal/billing-address", &format!("/portal/invoices/{their_open}/pay")] {
            let r = stranger.post(path, &[]).await;
            assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.text);
        }
    }

    async fn one_address_with_accounts_in_two_apps_signs_in_per_app_and_sees_only_that_app_s(app) {
        with_meters(&app).await;
        let (other_app, other_token) = app.other_app().await;
        let other_slug = server::store::apps::app_by_uuid(&app.state.db, other_app).await.unwrap().unwrap().slug;
        // The same person in another app (created first, so this app's accounts are the newest).
        let r = app.post("/v1/app/accounts", &other_token, &json!({"email": "both@example.com", "first_name": "Bea", "last_name": "Other"})).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let theirs = r.body["uuid"].as_str().unwrap().to_owned();
        let r = app.post(&format!("/v1/app/accounts/{theirs}/token"), &other_token, &Value::Null).await;
        let their_token = r.body["token"].as_str().unwrap().to_owned();
        let r = app.post("/v1/account/sandbox/seed-demo-data", &their_token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        // Two accounts in this app: the chooser lists these, never the other app's.
        let (mine, my_token) = customer(&app, "both@example.com").await;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &my_token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let second = app.create_simple_account("both@example.com").await["uuid"].as_str().unwrap().to_owned();

        let (mut browser, to) = sign_in(&app, "both@example.com").await;
        assert_eq!(to, "/portal/choose");
        // Not yet in either account: the home sends to the choice.
        let home = browser.get("/portal").await;
        assert_eq!(home.location(), "/portal/choose");
        let choose = browser.get("/portal/choose").await;
        assert_page(&choose, "portal-choose");
        assert_eq!(choose.text.matches("data-testid=\"choose-account\"").count(), 2, "{}", choose.text);
        assert!(choose.text.contains(&mine) && choose.text.contains(&second), "{}", choose.text);
        assert!(!choose.text.contains(&theirs) && !choose.text.contains("Other App"), "no other app's account: {}", choose.text);
        assert!(choose.text.contains("Sunny Homes") && !choose.text.contains("Switchboard"), "this app's brand: {}", choose.text);
        let csrf = choose.csrf();
        let forged = browser.post("/portal/choose", &[("account", &mine)]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        // Another app's account is not a choice here.
        let r = browser.post("/portal/choose", &[("csrf", &csrf), ("account", &theirs)]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        let r = browser.post("/portal/choose", &[("csrf", &csrf), ("account", &mine)]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let home = browser.get("/portal").await;
        assert_page(&home, "portal-home");
        assert!(home.text.contains("Hello Ana") && home.testid("switch-account"), "{}", home.text);
        assert!(!home.text.contains("Other App"), "{}", home.text);

        // This app's session sees nothing of the other app's account.
        let their_location = location_of(&app, &their_token).await;
        let their_bill = invoices(&app, &their_token).await[0]["number"].as_str().unwrap().to_owned();
        let my_bills: Vec<String> = invoices(&app, &my_token).await.iter().map(|i| i["number"].as_str().unwrap().to_owned()).collect();
        let r = browser.get(&format!("/portal/usage?location={their_location}")).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        if !my_bills.contains(&their_bill) {
            let r = browser.get(&format!("/portal/invoices/{their_bill}")).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        }
        let docs = document_ids(&app, &their_token, &their_location).await;
        let r = browser.get(&format!("/portal/documents/{}", docs[0])).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

        // At the other app's portal: its sign-in, its brand, its one account straight away.
        let (mut other, to) = sign_in_at(&app, &other_slug, "both@example.com").await;
        assert_eq!(to, "/portal", "one account there: no choice");
        let home = other.get("/portal").await;
        assert_page(&home, "portal-home");
        assert!(home.text.contains("Hello Bea") && home.text.contains("Other App"), "{}", home.text);
        assert!(!home.text.contains("Sunny Homes") && !home.testid("switch-account"), "{}", home.text);
        let r = other.get(&format!("/portal/usage?location={their_location}")).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        // A code sent from one app's page signs in to nothing at another's.
        let mut crossed = Browser::new(&app);
        let csrf = crossed.get(&format!("/go/{other_slug}/portal")).await.csrf();
        crossed.post(&format!("/go/{other_slug}/portal"), &[("csrf", &csrf), ("email", "both@example.com")]).await;
        let mut sunny = Browser::new(&app);
        let csrf = sunny.get(&format!("/go/{}/portal", slug(&app).await)).await.csrf();
        sunny.post(&format!("/go/{}/portal", slug(&app).await), &[("csrf", &csrf), ("email", "both@example.com")]).await;
        // The newest code is Sunny's; the other app's code page refuses it.
        let code = latest_code(&app, "both@example.com").await;
        let csrf = crossed.get("/portal/code").await.csrf();
        let r = crossed.post("/portal/code", &[("csrf", &csrf), ("code", &code)]).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
    }

    async fn the_landing_page_shows_the_app_s_own_text_escaped(app) {
        use crate::cli::{operator, succeeds};
        let slug = slug(&app).await;
        let uuid = app.app_uuid.to_string();
        let out = succeeds(&operator(&app, &["apps", "set-landing-text", "--app", &uuid, "--text", "Solar homes save more.\r\n<script>alert(1)</script>"]));
        assert!(out.contains("Landing text set"), "{out}");
        let page = Browser::new(&app).get(&format!("/go/{slug}")).await;
        assert_page(&page, "sign-up");
        assert!(page.testid("landing-text"), "{}", page.text);
        assert!(page.text.contains("Solar homes save more.\n&lt;script&gt;alert(1)&lt;/script&gt;"), "{}", page.text);
        assert!(!page.text.contains("<script>"));
        // Bounded: too long is refused and the text stays.
        let long = "a".repeat(601);
        let refused = operator(&app, &["apps", "set-landing-text", "--app", &uuid, "--text", &long]);
        assert!(!refused.status.success());
        assert!(String::from_utf8_lossy(&refused.stderr).contains("at most 600"), "{refused:?}");
        let page = Browser::new(&app).get(&format!("/go/{slug}")).await;
        assert!(page.text.contains("Solar homes save more."));
        // Blank clears it: the general promise again.
        let out = succeeds(&operator(&app, &["apps", "set-landing-text", "--app", &uuid, "--text", " "]));
        assert!(out.contains("cleared"), "{out}");
        let page = Browser::new(&app).get(&format!("/go/{slug}")).await;
        assert!(!page.testid("landing-text"), "{}", page.text);
    }
}
