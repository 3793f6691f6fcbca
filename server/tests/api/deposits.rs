//! Deposits through their life (16 TAC §25.478): on the account object; waived by the operator
//! (the enrollment goes on); paid from the e-mail's hosted page, at once or in instalments on
//! the next two bills; earning simple interest at the deployment's yearly rate; and coming back
//! with its interest as a credit on the bills after 12 on-time payments, or applied to the
//! final bill, with `account.deposit_refunded`.

use reqwest::StatusCode;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use server::domain::{credit::ReviewStatus, users::Role};
use uuid::Uuid;

use crate::{
    collections::{all_invoices, bill_today, simulate, today},
    credit::{check_status, client_agent_account, emails, submit, templates, wait_reason},
    dashboard::{signed_in, Browser},
    enrollment::{
        accept, add_card, advance, customer, event_types, first_plan, pair, relaxed, settles_at,
        with_meters, HOUSE,
    },
    helpers::TestApp,
    hosted::{self, assert_hosted_headers, click_link, hosted_link, outbox},
};

/// The yearly rate the interest tests run at.
fn five_percent(c: &mut server::config::Config) {
    relaxed(c);
    c.deposit_interest_percent = Decimal::new(5, 0);
}

/// A client agent account whose credit check (the sandbox's deposit SSN) asked for a deposit;
/// its uuid, token and the deposit's amount.
async fn deposit_asked(app: &TestApp, email: &str) -> (String, String, i64) {
    let (uuid, token) = client_agent_account(app, email).await;
    submit(app, &token, "123-45-0005").await;
    wait_reason(app, &uuid, "needs_attention/credit_declined").await;
    app.eventually("the deposit", || async {
        app.get("/v1/account/deposit", &token).await.body["status"] == "required"
    })
    .await;
    let amount = app.get("/v1/account/deposit", &token).await.body["amount_cents"]
        .as_i64()
        .unwrap();
    (uuid, token, amount)
}

/// The account's review (the deposit's).
async fn review_of(app: &TestApp, account: &str) -> Uuid {
    server::store::credit_reviews::reviews_of_account(&app.state.db, account.parse().unwrap())
        .await
        .unwrap()
        .remove(0)
        .uuid
}

async fn waive(browser: &Browser, review: Uuid, fields: &[(&str, &str)]) -> crate::dashboard::Page {
    let page = format!("/dashboard/credit-reviews/{review}");
    browser
        .submit(&page, &format!("{page}/waive"), fields)
        .await
}

/// What a refused waiver must leave as it was.
async fn snapshot(app: &TestApp, uuid: &str, token: &str) -> (Value, String, usize, Vec<String>) {
    (
        app.get("/v1/account/deposit", token).await.body,
        check_status(app, uuid).await,
        emails(app, uuid).await.len(),
        event_types(app, uuid).await,
    )
}

/// A standard enrollment whose credit check asks for a deposit, with a card on file, finalized
/// and waiting for the deposit; its uuid and token.
async fn enrolling_with_deposit(app: &TestApp, email: &str) -> (String, String) {
    with_meters(app).await;
    let (uuid, token) = customer(app, email).await;
    let r = app
        .post(
            "/v1/account/enroll/confirm-address",
            &token,
            &json!({"esi_id": HOUSE}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let plan = first_plan(app, &token, HOUSE).await;
    let start = plan["earliest_switch_start_date"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = accept(app, &token, &plan, HOUSE, &start).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    add_card(app, &token).await;
    let r = app
        .post(
            "/v1/account/enroll/credit-check",
            &token,
            &json!({"ssn": "123-45-0005", "consent": true}),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    let r = app
        .post("/v1/account/enroll/finalize", &token, &json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    advance(app, &token, 1).await;
    app.eventually("the deposit is asked", || async {
        app.get("/v1/account/deposit", &token).await.body["status"] == "required"
    })
    .await;
    (uuid, token)
}

/// After the deposit is paid: the utility, then service starts.
async fn on_to_active(app: &TestApp, token: &str) {
    advance(app, token, 6).await;
    advance(app, token, 14).await;
    settles_at(app, token, pair("active", "active")).await;
}

/// The deposit lines of a bill's detail.
fn deposit_lines(detail: &Value) -> Vec<Value> {
    detail["charges_groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["name"] == "Deposit")
        .flat_map(|g| g["charges"].as_array().unwrap().clone())
        .collect()
}

/// What the bills credited of the deposit in all.
fn refund_credits(bills: &[Value]) -> i64 {
    bills
        .iter()
        .flat_map(deposit_lines)
        .filter(|l| l["description"] == "Deposit refund with its interest")
        .map(|l| -l["amount_cents"].as_i64().unwrap())
        .sum()
}

fn described(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l["description"].as_str().unwrap().to_owned())
        .collect()
}

async fn event_of(app: &TestApp, account: &str, kind: &str) -> Value {
    let r = app
        .get(
            &format!("/v1/app/events?account_uuid={account}&type={kind}&limit=10"),
            &app.app_token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"][0]["data"].clone()
}

/// Simple interest at 5 % a year on `cents` for `days`, rounded half up.
fn five_percent_for(cents: i64, days: i64) -> i64 {
    (cents * 5 * days * 2 + 365 * 100) / (365 * 100 * 2)
}

both_engines! {
    with five_percent;
    async fn the_account_carries_its_deposit_and_the_interest_it_earns(app) {
        let (uuid, token) = client_agent_account(&app, "object@example.com").await;
        let own = app.get("/v1/account", &token).await;
        assert_eq!(own.status, StatusCode::OK, "{}", own.text);
        assert!(own.body.get("deposit").is_some_and(Value::is_null), "no deposit asked: {}", own.text);
        submit(&app, &token, "123-45-0005").await;
        wait_reason(&app, &uuid, "needs_attention/credit_declined").await;
        app.eventually("the deposit on the account", || async {
            app.get("/v1/account", &token).await.body["deposit"]["status"] == "required"
        }).await;
        let own = app.get("/v1/account", &token).await.body;
        let partner = app.get(&format!("/v1/app/accounts/{uuid}"), &app.app_token).await;
        assert_eq!(partner.status, StatusCode::OK);
        assert_eq!(partner.body["deposit"], own["deposit"], "the app's view carries the same deposit");
        let amount = own["deposit"]["amount_cents"].as_i64().unwrap();
        assert!(amount > 0);
        assert_eq!(own["deposit"], app.get("/v1/account/deposit", &token).await.body);
        let listed = app.get("/v1/app/accounts?email=object@example.com", &app.app_token).await;
        assert_eq!(listed.body["data"][0]["deposit"]["status"], "required");

        let r = app.post("/v1/account/deposit/pay", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        app.eventually("the paid deposit on the account", || async {
            app.get("/v1/account", &token).await.body["deposit"]["status"] == "paid"
        }).await;
        let d = app.get("/v1/account", &token).await.body["deposit"].clone();
        assert_eq!((d["paid_cents"].as_i64(), d["interest_cents"].as_i64(), d["refunded_cents"].as_i64()), (Some(amount), Some(0), Some(0)));
        assert!(d["paid_at"].is_string());

        // Simple interest at the deployment's 5 % a year, day by day.
        advance(&app, &token, 73).await;
        let expected = five_percent_for(amount, 73);
        assert!(expected > 0);
        app.eventually("the interest to date", || async {
            app.get("/v1/account", &token).await.body["deposit"]["interest_cents"].as_i64() == Some(expected)
        }).await;
        assert_eq!(app.get("/v1/account/deposit", &token).await.body["interest_cents"].as_i64(), Some(expected));
        advance(&app, &token, 292).await;
        assert_eq!(app.get("/v1/account/deposit", &token).await.body["interest_cents"].as_i64(), Some(five_percent_for(amount, 365)));
    }

    async fn a_null_body_or_none_pays_the_whole_deposit(app) {
        for (email, body) in [("null-body@example.com", Some("null")), ("no-body@example.com", None)] {
            let (uuid, token, amount) = deposit_asked(&app, email).await;
            let mut req = app.client.post(app.url("/v1/account/deposit/pay")).bearer_auth(&token);
            if let Some(body) = body {
                req = req.header("content-type", "application/json").body(body);
            }
            let r = TestApp::read(req.send().await.unwrap()).await;
            assert_eq!(r.status, StatusCode::OK, "{body:?}: {}", r.text);
            assert_eq!((r.body["status"].as_str(), r.body["paid_cents"].as_i64()), (Some("paid"), Some(amount)), "{body:?}: {}", r.text);
            assert_eq!(r.body["instalments_due_cents"].as_i64(), Some(0), "{}", r.text);
            assert!(event_types(&app, &uuid).await.contains(&"account.deposit_paid".to_owned()));
        }
        // Anything else that is not an object is refused, and pays nothing.
        let (_, token, _) = deposit_asked(&app, "list-body@example.com").await;
        let req = app.client.post(app.url("/v1/account/deposit/pay")).bearer_auth(&token).header("content-type", "application/json").body("[]");
        let r = TestApp::read(req.send().await.unwrap()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
        assert_eq!(app.get("/v1/account/deposit", &token).await.body["status"], "required");
    }

    async fn the_operator_waives_a_deposit_for_a_family_violence_certificate(app) {
        let (uuid, token, _) = deposit_asked(&app, "violence@example.com").await;
        let review = review_of(&app, &uuid).await;
        let ops = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let page = ops.get(&format!("/dashboard/credit-reviews/{review}")).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("Record a waiver") && page.text.contains("family-violence certificate"), "{}", page.text);

        // Claimed without the certificate: refused, nothing changes.
        let before = snapshot(&app, &uuid, &token).await;
        let r = waive(&ops, review, &[("waiver", "family_violence")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains("certificate"), "{}", r.text);
        let r = waive(&ops, review, &[("waiver", "rich")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        // Without the form's CSRF token.
        let r = ops.post(&format!("/dashboard/credit-reviews/{review}/waive"), &[("waiver", "family_violence"), ("certificate", "yes")]).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN);
        // A partner member may not.
        let partner = signed_in(&app, "zoe@other.example", Role::Partner, Some("Other Co")).await;
        let r = partner.submit("/dashboard/credit-reviews", &format!("/dashboard/credit-reviews/{review}/waive"), &[("waiver", "family_violence"), ("certificate", "yes")]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        assert_eq!(snapshot(&app, &uuid, &token).await, before);

        let r = waive(&ops, review, &[("waiver", "family_violence"), ("certificate", "yes")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(r.location, format!("/dashboard/credit-reviews/{review}?done=waived"));
        let d = app.get("/v1/account/deposit", &token).await.body;
        assert_eq!((d["status"].as_str(), d["waiver"].as_str(), d["paid_cents"].as_i64()), (Some("waived"), Some("family_violence"), Some(0)));
        // A waived deposit counts as a passed check: the enrollment goes on.
        assert_eq!(check_status(&app, &uuid).await, "passed");
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;
        app.eventually("the waiver e-mail", || async {
            templates(&emails(&app, &uuid).await).contains(&"credit_deposit_waived")
        }).await;
        let mail = emails(&app, &uuid).await.into_iter().find(|e| e["template"] == "credit_deposit_waived").unwrap();
        assert!(mail["text"].as_str().unwrap().contains("family-violence certificate"), "{mail}");
        let audit = ops.get("/dashboard/audit").await;
        assert!(audit.text.contains("deposit.waived"), "{}", audit.text);
        // Waived once: nothing is left to pay or to waive.
        let r = app.post("/v1/account/deposit/pay", &token, &json!({})).await;
        assert_eq!((r.status, r.body["status"].as_str()), (StatusCode::OK, Some("waived")), "{}", r.text);
        assert!(!event_types(&app, &uuid).await.contains(&"account.deposit_paid".to_owned()));
        let r = waive(&ops, review, &[("waiver", "family_violence"), ("certificate", "yes")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        let row = server::store::credit_reviews::reviews_of_account(&app.state.db, uuid.parse().unwrap()).await.unwrap().remove(0);
        assert_eq!(row.status, ReviewStatus::DepositRequired);
    }

    async fn age_and_a_letter_waive_only_as_the_rule_says(app) {
        // 39 years old: age waives nothing.
        let (uuid, token, _) = deposit_asked(&app, "young@example.com").await;
        let review = review_of(&app, &uuid).await;
        let ops = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let before = snapshot(&app, &uuid, &token).await;
        let r = waive(&ops, review, &[("waiver", "senior")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains("not 65 or older"), "{}", r.text);
        // A letter covering 11 months is not enough.
        let r = waive(&ops, review, &[("waiver", "good_credit_letter"), ("letter_months", "11")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains("12 months"), "{}", r.text);
        assert_eq!(snapshot(&app, &uuid, &token).await, before);
        let r = waive(&ops, review, &[("waiver", "good_credit_letter"), ("letter_months", "12")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(app.get("/v1/account/deposit", &token).await.body["waiver"], "good_credit_letter");
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;

        // 65 today, with no past-due balance: waived.
        let (uuid, token, _) = deposit_asked(&app, "senior@example.com").await;
        let born = today(&app, &uuid).await - chrono::Months::new(65 * 12);
        let r = app.patch(&format!("/v1/app/accounts/{uuid}"), &app.app_token, &json!({"date_of_birth": born.to_string()})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let review = review_of(&app, &uuid).await;
        let r = waive(&ops, review, &[("waiver", "senior")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(app.get("/v1/account/deposit", &token).await.body["waiver"], "senior");
        assert_eq!(check_status(&app, &uuid).await, "passed");
    }

    async fn the_e_mailed_link_pays_the_deposit_in_instalments(app) {
        let (uuid, token, amount) = deposit_asked(&app, "hosted@example.com").await;
        app.eventually("the deposit e-mail", || async {
            templates(&emails(&app, &uuid).await).contains(&"credit_deposit_required")
        }).await;
        let mail = outbox(&app, Some(&uuid)).await.into_iter().find(|m| m["template"] == "credit_deposit_required").unwrap();
        assert!(mail["text"].as_str().unwrap().contains("Pay the deposit"), "{mail}");
        let mut browser = hosted::Browser::new(&app);
        let opened = click_link(&mut browser, &hosted_link(&mail)).await;
        assert_eq!(opened.status, StatusCode::SEE_OTHER, "{}", opened.text);
        assert_eq!(opened.location(), "/hosted/deposit");
        let page = browser.get("/hosted/deposit").await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.testid("deposit") && page.testid("pay-instalments"), "{}", page.text);
        assert!(page.text.contains(&app::format::dollars(amount)), "{}", page.text);
        assert!(page.text.contains("Pay the deposit") && page.text.contains("ending 4242"), "{}", page.text);
        assert!(page.text.contains("Sunny Homes"), "in the app's brand: {}", page.text);
        assert_hosted_headers(&page);
        let csrf = page.csrf();
        // Another browser has no business there; a forged form changes nothing.
        assert_eq!(hosted::Browser::new(&app).get("/hosted/deposit").await.status, StatusCode::UNAUTHORIZED);
        let forged = browser.post("/hosted/deposit", &[("how", "instalments")]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        assert_eq!(app.get("/v1/account/deposit", &token).await.body["status"], "required");

        let paid = browser.post("/hosted/deposit", &[("csrf", &csrf), ("how", "instalments")]).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.text);
        assert_eq!(paid.location(), "/hosted/deposit");
        let half = amount - amount / 2;
        let d = app.get("/v1/account/deposit", &token).await.body;
        assert_eq!((d["status"].as_str(), d["paid_cents"].as_i64(), d["instalments_due_cents"].as_i64()), (Some("paid"), Some(half), Some(amount - half)), "{d}");
        assert_eq!(event_of(&app, &uuid, "account.deposit_paid").await["amount_cents"].as_i64(), Some(half));
        // The first half passes the check: the enrollment goes on.
        assert_eq!(check_status(&app, &uuid).await, "passed");
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;
        let page = browser.get("/hosted/deposit").await;
        assert!(page.testid("deposit-settled") && page.text.contains("paid in part"), "{}", page.text);
        // Paying again charges nothing more.
        let again = browser.post("/hosted/deposit", &[("csrf", &csrf), ("how", "whole")]).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER);
        assert_eq!(app.get("/v1/account/deposit", &token).await.body["paid_cents"].as_i64(), Some(half));
    }
}

both_engines! {
    with relaxed;
    async fn instalments_bill_on_the_next_two_bills_and_the_refund_is_a_credit(app) {
        let (uuid, token) = enrolling_with_deposit(&app, "instalments@example.com").await;
        // Nothing to give back yet: the sandbox's simulation is refused.
        let r = simulate(&app, &token, "deposit_refund_due").await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "nothing_pending"), "{}", r.text);
        let r = app.post("/v1/account/deposit/pay", &token, &json!({"instalments": true})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let amount = r.body["amount_cents"].as_i64().unwrap();
        let half = amount - amount / 2;
        assert_eq!(r.body["paid_cents"].as_i64(), Some(half));
        let r = app.post("/v1/account/deposit/pay", &token, &json!({"instalments": "yes"})).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
        on_to_active(&app, &token).await;

        // The rest on the next two bills, one line each.
        bill_today(&app, &token).await;
        advance(&app, &token, 1).await;
        bill_today(&app, &token).await;
        let bills = all_invoices(&app, &token).await;
        assert!(bills.len() >= 2);
        assert_eq!(described(&deposit_lines(&bills[0])), vec!["Deposit instalment 1 of 2"], "{}", bills[0]);
        assert_eq!(described(&deposit_lines(&bills[1])), vec!["Deposit instalment 2 of 2"], "{}", bills[1]);
        assert!(bills[2..].iter().all(|b| deposit_lines(b).is_empty()));
        let billed: i64 = bills[..2].iter().map(|b| deposit_lines(b)[0]["amount_cents"].as_i64().unwrap()).sum();
        assert_eq!(half + billed, amount);
        let d = app.get("/v1/account/deposit", &token).await.body;
        assert_eq!((d["paid_cents"].as_i64(), d["instalments_due_cents"].as_i64()), (Some(amount), Some(0)));
        advance(&app, &token, 1).await;
        let next = bill_today(&app, &token).await;
        assert!(deposit_lines(&next).is_empty(), "{next}");

        // Earned back (the sandbox's simulation): the next bills credit it, none below zero.
        let r = simulate(&app, &token, "deposit_refund_due").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let mut credited = 0;
        for _ in 0..12 {
            advance(&app, &token, 30).await;
            credited = refund_credits(&all_invoices(&app, &token).await);
            if credited >= amount {
                break;
            }
        }
        assert_eq!(credited, amount, "the deposit comes back whole (no interest at 0 %)");
        let bills = all_invoices(&app, &token).await;
        for bill in &bills {
            assert!(bill["total_cents"].as_i64().unwrap() >= 0, "{bill}");
        }
        let carrying = bills.iter().filter(|b| !deposit_lines(b).is_empty()).count();
        assert!(carrying >= 3, "two instalments, then the credit: {carrying}");
        let d = app.get("/v1/account/deposit", &token).await.body;
        assert_eq!((d["status"].as_str(), d["refunded_cents"].as_i64()), (Some("refunded"), Some(amount)));
        let refunded = event_of(&app, &uuid, "account.deposit_refunded").await;
        assert_eq!((refunded["reason"].as_str(), refunded["refunded_cents"].as_i64()), (Some("on_time_payments"), Some(amount)));
        let number = refunded["invoice_number"].as_str().unwrap();
        let pdf = app.get(&format!("/v1/account/billing/invoices/{number}/pdf"), &token).await;
        assert_eq!(pdf.status, StatusCode::OK);
        assert!(pdf.text.contains("(Deposit refund"), "the PDF prints the credit");
        // Once back, nothing more comes.
        let r = simulate(&app, &token, "deposit_refund_due").await;
        assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
        advance(&app, &token, 30).await;
        assert_eq!(refund_credits(&all_invoices(&app, &token).await), amount);
    }
}

both_engines! {
    with five_percent;
    async fn twelve_on_time_payments_earn_the_deposit_back_on_the_next_bill(app) {
        let (uuid, token) = enrolling_with_deposit(&app, "year@example.com").await;
        let r = app.post("/v1/account/deposit/pay", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let amount = r.body["amount_cents"].as_i64().unwrap();
        on_to_active(&app, &token).await;
        // A year of bills, each paid by auto-pay on its due date.
        for _ in 0..16 {
            advance(&app, &token, 30).await;
            if all_invoices(&app, &token).await.len() >= 13 {
                break;
            }
        }
        let bills = all_invoices(&app, &token).await;
        assert!(bills.len() >= 13, "{}", bills.len());
        for (i, bill) in bills.iter().take(12).enumerate() {
            assert!(deposit_lines(bill).is_empty(), "bill {} comes before 12 on-time payments: {bill}", i + 1);
        }
        assert!(bills.iter().take(12).all(|b| b["status"] == "paid"), "every bill paid on time");
        let thirteenth = &bills[12];
        assert_eq!(described(&deposit_lines(thirteenth)), vec!["Deposit refund with its interest"], "{thirteenth}");
        let refunded = event_of(&app, &uuid, "account.deposit_refunded").await;
        assert_eq!(refunded["invoice_number"], thirteenth["number"]);
        assert_eq!(refunded["reason"], "on_time_payments");
        let interest = refunded["interest_cents"].as_i64().unwrap();
        assert!(interest > 0, "a year at 5 %: {refunded}");
        assert_eq!(refunded["refunded_cents"].as_i64(), Some(amount + interest));
        let d = app.get("/v1/account/deposit", &token).await.body;
        assert_eq!((d["status"].as_str(), d["interest_cents"].as_i64()), (Some("refunded"), Some(interest)));
    }

    async fn the_deposit_is_applied_to_the_final_bill(app) {
        let (uuid, token) = enrolling_with_deposit(&app, "final@example.com").await;
        let r = app.post("/v1/account/deposit/pay", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let amount = r.body["amount_cents"].as_i64().unwrap();
        on_to_active(&app, &token).await;
        let first = bill_today(&app, &token).await;
        assert!(deposit_lines(&first).is_empty(), "held while service lasts: {first}");
        let location = app.get("/v1/account", &token).await.body["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let last_day = (today(&app, &uuid).await + chrono::Duration::days(5)).to_string();
        let r = app.post(&format!("/v1/account/locations/{location}/cancel-service"), &token, &json!({"final_service_date": last_day, "reason": "moving"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 10).await;
        settles_at(&app, &token, pair("cancelled", "cancelled_post_start")).await;
        let bills = all_invoices(&app, &token).await;
        let last = bills.last().unwrap();
        assert_eq!(last["billing_period_end"], last_day.as_str());
        let lines = deposit_lines(last);
        assert_eq!(described(&lines), vec!["Deposit with its interest, applied to the final bill"], "{last}");
        let refunded = event_of(&app, &uuid, "account.deposit_refunded").await;
        assert_eq!(refunded["reason"], "final_bill");
        assert_eq!(refunded["invoice_number"], last["number"]);
        let back = refunded["refunded_cents"].as_i64().unwrap();
        assert_eq!(back, amount + refunded["interest_cents"].as_i64().unwrap());
        assert!(refunded["interest_cents"].as_i64().unwrap() > 0, "{refunded}");
        // Never more than the final bill.
        assert_eq!(-lines[0]["amount_cents"].as_i64().unwrap(), back.min(last["total_cents"].as_i64().unwrap() - lines[0]["amount_cents"].as_i64().unwrap()));
        assert!(last["total_cents"].as_i64().unwrap() >= 0);
        let d = app.get("/v1/account/deposit", &token).await.body;
        assert_eq!((d["status"].as_str(), d["refunded_cents"].as_i64()), (Some("applied"), Some(back)));

        // What the final bill could not take goes back to the card that paid the deposit (at
        // most what it charged), and the customer is told.
        let rest = back + lines[0]["amount_cents"].as_i64().unwrap();
        assert!(rest > 0, "a short final bill leaves some of the deposit: {last}");
        let paid_out = rest.min(amount);
        app.eventually("the rest paid out", || async {
            app.get("/v1/account/deposit", &token).await.body["paid_out_cents"].as_i64() == Some(paid_out)
        })
        .await;
        let d = app.get("/v1/account/deposit", &token).await.body;
        assert_eq!(d["owed_cents"].as_i64(), Some(rest - paid_out), "{d}");
        let mails = emails(&app, &uuid).await;
        let told: Vec<&Value> = mails.iter().filter(|m| m["template"] == "deposit_paid_out").collect();
        assert_eq!(told.len(), 1, "{mails:?}");
        let dollars = format!("${}.{:02}", paid_out / 100, paid_out % 100);
        assert!(told[0]["subject"].as_str().unwrap().contains(&dollars), "{}", told[0]);
        // Once: the job again (another bill run) pays nothing more.
        advance(&app, &token, 30).await;
        assert_eq!(app.get("/v1/account/deposit", &token).await.body["paid_out_cents"].as_i64(), Some(paid_out));
        // The operator's page of the account shows it.
        let operator = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let page = operator.get(&format!("/dashboard/accounts/{uuid}")).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.text.contains("data-testid=\"deposit\""), "{}", page.text);
        assert!(page.text.contains(&format!("Refunded to the card</th><td>{dollars}")), "{}", page.text);
    }
}

both_engines! {
    async fn the_sandbox_simulates_a_deposit_required_on_any_check(app) {
        let (uuid, token) = client_agent_account(&app, "simulated@example.com").await;
        submit(&app, &token, "123-45-6789").await;
        app.eventually("the check passes", || async { check_status(&app, &uuid).await == "passed" })
            .await;
        let own = app.get("/v1/account", &token).await;
        assert!(own.body["deposit"].is_null(), "no deposit asked yet: {}", own.text);

        let r = simulate(&app, &token, "deposit_required").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        wait_reason(&app, &uuid, "needs_attention/credit_declined").await;
        app.eventually("the deposit", || async {
            app.get("/v1/account/deposit", &token).await.body["status"] == "required"
        })
        .await;
        let deposit = app.get("/v1/account/deposit", &token).await.body;
        assert!(deposit["amount_cents"].as_i64().unwrap() > 0, "{deposit}");
        let event = event_of(&app, &uuid, "account.deposit_required").await;
        assert_eq!(event["amount_cents"], deposit["amount_cents"], "{event}");
        let review = review_of(&app, &uuid).await;
        let reviews = server::store::credit_reviews::reviews_of_account(&app.state.db, uuid.parse().unwrap())
            .await
            .unwrap();
        assert_eq!(reviews[0].uuid, review);
        assert_eq!(reviews[0].status, ReviewStatus::DepositRequired);
        assert!(templates(&emails(&app, &uuid).await).contains(&"credit_deposit_required"));
    }
}
