//! Disconnection for non-payment and deferred payment plans as the market's rules ask: the
//! written notice at least 10 days before the earliest disconnection date, never on a day the
//! rules forbid nor during a weather emergency, the utility's disconnection and the reconnection
//! after payment; a payment plan that takes the balance over and bills it in instalments, and
//! ends when one goes unpaid; the sandbox walk of a customer who stops paying. While
//! disconnected a location is not active and its days without service are not billed; a
//! final bill left unpaid is told in writing and never leads to a disconnection.

use chrono::{Datelike, Duration, NaiveDate, Weekday};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::{
    collections::{
        all_invoices, bill_today, date, group_total, holidays, invoice, past_due, set_late_fee,
        simulate, today, unpaid_bill, DECLINES_LATER,
    },
    dashboard::signed_in,
    enrollment::{
        add_card_number, advance, customer, event_types, relaxed, walk_to_active, with_meters,
        HOUSE,
    },
    helpers::TestApp,
    payments::session,
    utility::{live_submission_with_processor, worklist},
};
use server::domain::users::Role;

async fn notices(app: &TestApp, token: &str) -> Vec<Value> {
    let r = app.get("/v1/account/billing/disconnections", token).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"].as_array().unwrap().clone()
}

async fn notice_of(app: &TestApp, token: &str, number: &str) -> Value {
    notices(app, token)
        .await
        .into_iter()
        .find(|n| n["invoice_number"] == number)
        .unwrap_or_else(|| panic!("no notice for {number}"))
}

/// Every e-mail of the account, newest first.
async fn emails(app: &TestApp, uuid: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/app/sandbox/emails?account_uuid={uuid}&limit=100"),
            &app.app_token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"].as_array().unwrap().clone()
}

async fn count(app: &TestApp, uuid: &str, kind: &str) -> usize {
    event_types(app, uuid)
        .await
        .iter()
        .filter(|t| *t == kind)
        .count()
}

/// Moves the account's clock to `day` (same time of day).
async fn on_to(app: &TestApp, (uuid, token): (&str, &str), day: NaiveDate) {
    let now = today(app, uuid).await;
    let days = (day - now).num_days();
    assert!(days >= 0, "{day} is before {now}");
    if days > 0 {
        advance(app, token, days).await;
    }
    assert_eq!(today(app, uuid).await, day);
}

/// Whether the rules allow a disconnection on `day`.
fn allowed(day: NaiveDate, holidays: &[NaiveDate], emergencies: &[NaiveDate]) -> bool {
    let business = |d: NaiveDate| {
        !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) && !holidays.contains(&d)
    };
    business(day) && business(day + Duration::days(1)) && !emergencies.contains(&day)
}

async fn pay_everything(app: &TestApp, token: &str) {
    add_card_number(app, token, "4242424242424242").await;
    for i in all_invoices(app, token).await {
        if i["status"] == "past_due" || i["status"] == "open" {
            let number = i["number"].as_str().unwrap();
            let r = app
                .post(
                    &format!("/v1/account/billing/invoices/{number}/pay"),
                    token,
                    &Value::Null,
                )
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        }
    }
}

/// An active customer with nothing left unpaid, whose card from now on declines every charge.
async fn non_paying_customer(app: &TestApp, email: &str, esi: &str) -> (String, String) {
    let (uuid, token) = customer(app, email).await;
    walk_to_active(app, &token, esi).await;
    pay_everything(app, &token).await;
    add_card_number(app, &token, DECLINES_LATER).await;
    (uuid, token)
}

/// The operator adds (or removes) an extreme-weather emergency day in the dashboard.
async fn emergency(app: &TestApp, day: NaiveDate, action: &str) -> crate::dashboard::Page {
    let ops = signed_in(
        app,
        &format!("ops-{}@example.com", uuid::Uuid::new_v4()),
        Role::Operator,
        None,
    )
    .await;
    let page = "/dashboard/weather-emergencies";
    ops.submit(
        page,
        "/dashboard/weather-emergencies/set",
        &[
            ("day", &day.to_string()),
            ("note", "Heat advisory"),
            ("action", action),
        ],
    )
    .await
}

both_engines! {
    with relaxed;
    async fn a_past_due_bill_is_noticed_in_writing_ten_days_ahead_then_disconnected_and_reconnected_once_paid(app) {
        with_meters(&app).await;
        let (uuid, token) = non_paying_customer(&app, "notice@example.com", HOUSE).await;
        let bill = unpaid_bill(&app, (&uuid, &token)).await;
        let number = bill["number"].as_str().unwrap().to_owned();

        // The written notice, the day the bill turned past due.
        let n = notice_of(&app, &token, &number).await;
        assert_eq!(n["status"], "noticed", "{n}");
        assert_eq!(n["amount_cents"], bill["total_cents"]);
        let noticed = date(&n["notice_date"]);
        assert!(noticed > date(&bill["payment_due_date"]), "{n}");
        let earliest = date(&n["earliest_disconnection_date"]);
        assert!((earliest - noticed).num_days() >= 10, "{n}");
        let holidays = holidays(&app).await;
        assert!(allowed(earliest, &holidays, &[]), "{earliest} is a day the rules forbid");
        assert_eq!(count(&app, &uuid, "account.disconnection_notice_sent").await, 1);

        // Its e-mail says the amount and the date, and carries the notice as a PDF with what the
        // rule asks: the amount, how to pay, payment plans, energy assistance, the deposit.
        let mail = emails(&app, &uuid)
            .await
            .into_iter()
            .find(|m| m["template"] == "disconnection_notice")
            .expect("the disconnection notice e-mail");
        let text = mail["text"].as_str().unwrap();
        assert!(text.contains(&number), "{text}");
        assert!(text.contains(&app::format::long_date(earliest)), "{text}");
        assert!(text.contains(&app::format::dollars(bill["total_cents"].as_i64().unwrap())), "{text}");
        assert!(text.contains("payment plan"), "{text}");
        let attachment = &mail["attachments"][0];
        assert_eq!(attachment["content_type"], "application/pdf", "{mail}");
        let r = app.get(attachment["url"].as_str().unwrap(), &app.app_token).await;
        assert_eq!(r.status, StatusCode::OK);
        for printed in [
            app::format::dollars(bill["total_cents"].as_i64().unwrap()),
            app::format::long_date(earliest),
            "How to pay".to_owned(),
            "Payment plans".to_owned(),
            "2-1-1".to_owned(),
            "Your deposit".to_owned(),
            "customer@puc.texas.gov".to_owned(),
        ] {
            assert!(r.text.contains(&printed), "the notice prints {printed}");
        }

        // Nothing happens before the earliest date.
        on_to(&app, (&uuid, &token), earliest - Duration::days(1)).await;
        assert_eq!(notice_of(&app, &token, &number).await["status"], "noticed");
        assert_eq!(count(&app, &uuid, "location.disconnection_requested").await, 0);

        // On it, the utility is asked and (the simulator) disconnects.
        advance(&app, &token, 2).await;
        app.eventually("the location is disconnected", || async {
            notice_of(&app, &token, &number).await["status"] == "disconnected"
        })
        .await;
        let n = notice_of(&app, &token, &number).await;
        assert!(n["requested_at"].is_string() && n["disconnected_at"].is_string(), "{n}");
        assert_eq!(count(&app, &uuid, "location.disconnection_requested").await, 1);
        assert_eq!(count(&app, &uuid, "location.disconnected").await, 1);
        assert!(emails(&app, &uuid).await.iter().any(|m| m["template"] == "service_disconnected"));

        // Paid: reconnection is asked at once and carried out.
        pay_everything(&app, &token).await;
        assert_eq!(notice_of(&app, &token, &number).await["status"], "reconnect_requested");
        assert_eq!(count(&app, &uuid, "location.reconnection_requested").await, 1);
        advance(&app, &token, 1).await;
        app.eventually("the location is reconnected", || async {
            notice_of(&app, &token, &number).await["status"] == "reconnected"
        })
        .await;
        assert_eq!(count(&app, &uuid, "location.reconnected").await, 1);
        assert!(emails(&app, &uuid).await.iter().any(|m| m["template"] == "service_reconnected"));
    }

    async fn a_bill_paid_before_the_date_is_never_disconnected(app) {
        with_meters(&app).await;
        let (uuid, token) = non_paying_customer(&app, "paid-in-time@example.com", HOUSE).await;
        let bill = unpaid_bill(&app, (&uuid, &token)).await;
        let number = bill["number"].as_str().unwrap().to_owned();
        let earliest = date(&notice_of(&app, &token, &number).await["earliest_disconnection_date"]);
        pay_everything(&app, &token).await;
        assert_eq!(notice_of(&app, &token, &number).await["status"], "cancelled");
        on_to(&app, (&uuid, &token), earliest + Duration::days(2)).await;
        assert_eq!(notice_of(&app, &token, &number).await["status"], "cancelled");
        assert_eq!(count(&app, &uuid, "location.disconnection_requested").await, 0);
        assert_eq!(count(&app, &uuid, "location.reconnection_requested").await, 0);
    }

    async fn nobody_is_disconnected_on_a_weather_emergency_day(app) {
        with_meters(&app).await;
        let (uuid, token) = non_paying_customer(&app, "heat@example.com", HOUSE).await;
        let bill = unpaid_bill(&app, (&uuid, &token)).await;
        let number = bill["number"].as_str().unwrap().to_owned();
        let earliest = date(&notice_of(&app, &token, &number).await["earliest_disconnection_date"]);

        // Only the operator keeps the days.
        let member = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let r = member
            .submit(
                "/dashboard/weather-emergencies",
                "/dashboard/weather-emergencies/set",
                &[("day", &earliest.to_string()), ("note", "x"), ("action", "add")],
            )
            .await;
        assert_ne!(r.status, StatusCode::SEE_OTHER, "{}", r.text);

        // The operator declares the earliest date and the two days after it an emergency.
        let days: Vec<NaiveDate> = (0..3).map(|d| earliest + Duration::days(d)).collect();
        for d in &days {
            let r = emergency(&app, *d, "add").await;
            assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        }
        let ops = signed_in(&app, "ops-list@example.com", Role::Operator, None).await;
        assert!(ops.get("/dashboard/weather-emergencies").await.text.contains("Heat advisory"));
        // During it, a plan is owed whatever the notices.
        on_to(&app, (&uuid, &token), earliest).await;
        let r = app.get("/v1/account/billing/payment-plan", &token).await;
        assert_eq!(r.body["offer"]["reason"], "weather_emergency", "{}", r.text);

        on_to(&app, (&uuid, &token), earliest + Duration::days(2)).await;
        assert_eq!(notice_of(&app, &token, &number).await["status"], "noticed");
        assert_eq!(count(&app, &uuid, "location.disconnection_requested").await, 0);

        // The first allowed day after the emergency.
        let holidays = holidays(&app).await;
        let mut next = earliest + Duration::days(3);
        while !allowed(next, &holidays, &days) {
            next += Duration::days(1);
        }
        on_to(&app, (&uuid, &token), next - Duration::days(1)).await;
        assert_eq!(count(&app, &uuid, "location.disconnection_requested").await, 0, "before {next}");
        advance(&app, &token, 2).await;
        app.eventually("disconnected after the emergency", || async {
            notice_of(&app, &token, &number).await["status"] == "disconnected"
        })
        .await;
    }

    async fn a_payment_plan_takes_the_balance_over_and_bills_it_in_instalments(app) {
        with_meters(&app).await;
        let (uuid, token) = non_paying_customer(&app, "plan@example.com", HOUSE).await;
        let bill = unpaid_bill(&app, (&uuid, &token)).await;
        let number = bill["number"].as_str().unwrap().to_owned();
        let total = bill["total_cents"].as_i64().unwrap();
        let earliest = date(&notice_of(&app, &token, &number).await["earliest_disconnection_date"]);

        // Offered, with the unpaid balance.
        let r = app.get("/v1/account/billing/payment-plan", &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["offer"]["reason"], "customer_request", "{}", r.text);
        assert_eq!(r.body["offer"]["unpaid_cents"].as_i64().unwrap(), total);
        assert_eq!(r.body["offer"]["months"], 5);

        // Not 2 to 12 instalments: refused, nothing changed.
        for bad in [json!({"months": 1}), json!({"months": 13}), json!({"months": "x"})] {
            let r = app.post("/v1/account/billing/payment-plan", &token, &bad).await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {}", r.text);
        }
        assert_eq!(invoice(&app, &token, &number).await["status"], "past_due");

        let r = app.post("/v1/account/billing/payment-plan", &token, &json!({"months": 3})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let plan = r.body["plans"][0].clone();
        assert_eq!(plan["status"], "active", "{plan}");
        assert_eq!(plan["total_cents"].as_i64().unwrap(), total);
        let parts: Vec<i64> = plan["instalments"].as_array().unwrap().iter().map(|i| i["amount_cents"].as_i64().unwrap()).collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.iter().sum::<i64>(), total);
        assert_eq!(r.body["offer"], Value::Null, "no second plan while one runs");
        assert_eq!(count(&app, &uuid, "account.payment_plan_accepted").await, 1);
        // The bill is taken over by the plan, and its disconnection is off.
        let taken = invoice(&app, &token, &number).await;
        assert_eq!(taken["status"], "paid", "{taken}");
        assert!(taken["payments"].as_array().unwrap().iter().any(|p| p["status"] == "succeeded"));
        assert_eq!(notice_of(&app, &token, &number).await["status"], "cancelled");
        let r = app.post("/v1/account/billing/payment-plan", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
        on_to(&app, (&uuid, &token), earliest + Duration::days(1)).await;
        assert_eq!(count(&app, &uuid, "location.disconnection_requested").await, 0);

        // The following bills carry one instalment each, as their own line, in order.
        add_card_number(&app, &token, "4242424242424242").await;
        bill_today(&app, &token).await;
        advance(&app, &token, 1).await;
        bill_today(&app, &token).await;
        let with_lines: Vec<Value> = all_invoices(&app, &token)
            .await
            .into_iter()
            .filter(|i| group_total(i, "Payment plan") > 0)
            .collect();
        assert!(with_lines.len() >= 2, "{with_lines:?}");
        for (k, bill) in with_lines.iter().enumerate() {
            let group = bill["charges_groups"].as_array().unwrap().iter().find(|g| g["name"] == "Payment plan").unwrap();
            let charges = group["charges"].as_array().unwrap();
            assert_eq!(charges.len(), 1, "{bill}");
            assert_eq!(charges[0]["description"], format!("Payment plan instalment {} of 3", k + 1), "{bill}");
            assert_eq!(charges[0]["amount_cents"].as_i64().unwrap(), parts[k]);
            let lines: i64 = bill["charges_groups"].as_array().unwrap().iter().map(|g| g["total_cents"].as_i64().unwrap()).sum();
            assert_eq!(bill["total_cents"].as_i64().unwrap(), lines);
        }
    }

    async fn a_missed_instalment_ends_the_plan_and_the_rest_falls_due(app) {
        with_meters(&app).await;
        let (uuid, token) = non_paying_customer(&app, "missed@example.com", HOUSE).await;
        unpaid_bill(&app, (&uuid, &token)).await;
        let r = app.post("/v1/account/billing/payment-plan", &token, &json!({"months": 4})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let total = r.body["plans"][0]["total_cents"].as_i64().unwrap();
        let parts: Vec<i64> = r.body["plans"][0]["instalments"].as_array().unwrap().iter().map(|i| i["amount_cents"].as_i64().unwrap()).collect();

        // The bill with the first instalment goes unpaid (the card declines).
        let with_instalment = bill_today(&app, &token).await;
        assert_eq!(group_total(&with_instalment, "Payment plan"), parts[0]);
        let missed = past_due(&app, (&uuid, &token), &with_instalment).await;
        let missed_number = missed["number"].as_str().unwrap().to_owned();
        let r = app.get("/v1/account/billing/payment-plan", &token).await;
        let plan = &r.body["plans"][0];
        assert_eq!(plan["status"], "defaulted", "{plan}");
        assert!(plan["ended_at"].is_string());
        let events = server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        let ended: Vec<Value> = events.iter().filter(|e| e.kind == "account.payment_plan_ended").map(|e| serde_json::from_str(&e.data).unwrap()).collect();
        assert_eq!(ended.len(), 1, "{ended:?}");
        assert_eq!(ended[0]["status"], "defaulted");
        let remaining = ended[0]["remaining_cents"].as_i64().unwrap();
        assert!(remaining > 0 && remaining <= total - parts[0], "{ended:?}");
        // The missed bill gets its own disconnection notice.
        assert_eq!(notice_of(&app, &token, &missed_number).await["status"], "noticed");
        // What the plan had left is due on the next bill, once; nothing more after.
        bill_today(&app, &token).await;
        advance(&app, &token, 1).await;
        bill_today(&app, &token).await;
        let mut balance_lines = Vec::new();
        let mut billed = 0;
        for i in all_invoices(&app, &token).await {
            for g in i["charges_groups"].as_array().unwrap().iter().filter(|g| g["name"] == "Payment plan") {
                for c in g["charges"].as_array().unwrap() {
                    billed += c["amount_cents"].as_i64().unwrap();
                    if c["description"] == "Payment plan balance (the plan ended)" {
                        balance_lines.push(c.clone());
                    }
                }
            }
        }
        assert_eq!(balance_lines.len(), 1, "{balance_lines:?}");
        assert_eq!(balance_lines[0]["amount_cents"].as_i64().unwrap(), remaining);
        assert_eq!(billed, total, "every cent of the plan billed exactly once");
    }

    async fn the_life_of_a_customer_who_stops_paying_walks_with_advance_clock(app) {
        with_meters(&app).await;
        let r = set_late_fee(&app, "5").await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let (uuid, token) = non_paying_customer(&app, "walk@example.com", HOUSE).await;
        // Issued, due, declined, past due (with the notice).
        let a = unpaid_bill(&app, (&uuid, &token)).await;
        let a_number = a["number"].as_str().unwrap().to_owned();
        let types = event_types(&app, &uuid).await;
        for t in ["invoice.created", "account.payment_failed", "invoice.past_due", "account.disconnection_notice_sent"] {
            assert!(types.iter().any(|x| x == t), "{t}: {types:?}");
        }
        // The next bill charges the late fee.
        let b = bill_today(&app, &token).await;
        assert!(group_total(&b, "Late fee") > 0, "{b}");
        // The earliest date passes: disconnected.
        let earliest = date(&notice_of(&app, &token, &a_number).await["earliest_disconnection_date"]);
        on_to(&app, (&uuid, &token), earliest + Duration::days(1)).await;
        app.eventually("disconnected", || async {
            notice_of(&app, &token, &a_number).await["status"] == "disconnected"
        })
        .await;
        // A plan takes the balance over: reconnected.
        let r = app.post("/v1/account/billing/payment-plan", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 1).await;
        app.eventually("reconnected", || async {
            notice_of(&app, &token, &a_number).await["status"] == "reconnected"
        })
        .await;
        let types = event_types(&app, &uuid).await;
        for t in [
            "invoice.late_fee_charged",
            "location.disconnection_requested",
            "location.disconnected",
            "account.payment_plan_accepted",
            "location.reconnection_requested",
            "location.reconnected",
        ] {
            assert!(types.iter().any(|x| x == t), "{t}: {types:?}");
        }
    }

    async fn simulate_covers_each_step_of_collections(app) {
        with_meters(&app).await;
        let (uuid, token) = non_paying_customer(&app, "simulate@example.com", HOUSE).await;
        // Nothing to do yet.
        for event in ["service_disconnected", "service_reconnected"] {
            let r = simulate(&app, &token, event).await;
            assert_eq!(r.status, StatusCode::CONFLICT, "{event}: {}", r.text);
        }
        let r = simulate(&app, &token, "invoice_past_due").await;
        assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
        let r = simulate(&app, &token, "payment_plan_missed").await;
        assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);

        let bill = bill_today(&app, &token).await;
        let r = simulate(&app, &token, "invoice_past_due").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let kinds: Vec<&str> = r.body["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert!(kinds.contains(&"invoice.past_due") && kinds.contains(&"account.disconnection_notice_sent"), "{kinds:?}");
        assert_eq!(invoice(&app, &token, bill["number"].as_str().unwrap()).await["status"], "past_due");

        let r = simulate(&app, &token, "service_disconnected").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let kinds: Vec<&str> = r.body["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert!(kinds.contains(&"location.disconnection_requested") && kinds.contains(&"location.disconnected"), "{kinds:?}");

        pay_everything(&app, &token).await;
        let r = simulate(&app, &token, "service_reconnected").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert!(r.body["events"].as_array().unwrap().iter().any(|e| e["type"] == "location.reconnected"), "{}", r.text);

        // A plan, its instalment billed, then missed.
        add_card_number(&app, &token, DECLINES_LATER).await;
        advance(&app, &token, 1).await;
        bill_today(&app, &token).await;
        let r = simulate(&app, &token, "invoice_past_due").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let r = app.post("/v1/account/billing/payment-plan", &token, &json!({"months": 2})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 1).await;
        bill_today(&app, &token).await;
        let r = simulate(&app, &token, "payment_plan_missed").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert!(r.body["events"].as_array().unwrap().iter().any(|e| e["type"] == "account.payment_plan_ended"), "{}", r.text);
        let _ = uuid;
    }
}

both_engines! {
    with relaxed;
    async fn the_portal_shows_the_notice_and_accepts_the_payment_plan(app) {
        with_meters(&app).await;
        let (uuid, token) = non_paying_customer(&app, "portal-plan@example.com", HOUSE).await;
        let bill = unpaid_bill(&app, (&uuid, &token)).await;
        let (mut browser, _) = crate::portal::sign_in(&app, "portal-plan@example.com").await;
        let page = browser.get("/portal/invoices").await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("data-testid=\"disconnection\""), "{}", page.text);
        assert!(page.text.contains(&app::format::long_date(date(&notice_of(&app, &token, bill["number"].as_str().unwrap()).await["earliest_disconnection_date"]))), "{}", page.text);
        assert!(page.text.contains("data-testid=\"accept-plan\""), "{}", page.text);
        let csrf = page.csrf();
        let r = browser.post("/portal/payment-plan", &[("csrf", &csrf)]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let r = app.get("/v1/account/billing/payment-plan", &token).await;
        assert_eq!(r.body["plans"][0]["status"], "active", "{}", r.text);
        assert_eq!(r.body["plans"][0]["months"], 5, "{}", r.text);
        let page = browser.get("/portal/invoices?plan=accepted").await;
        assert!(page.text.contains("data-testid=\"payment-plan\""), "{}", page.text);
        assert!(!page.text.contains("data-testid=\"accept-plan\""), "{}", page.text);
        assert!(!page.text.contains("data-testid=\"disconnection\""), "{}", page.text);
    }
}

/// The account as the partner reads it.
async fn account_of(app: &TestApp, uuid: &str) -> Value {
    let r = app
        .get(&format!("/v1/app/accounts/{uuid}"), &app.app_token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body
}

fn market_day(v: &Value) -> NaiveDate {
    let t: chrono::DateTime<chrono::Utc> = v.as_str().unwrap().parse().unwrap();
    server::domain::market::market_date(t)
}

both_engines! {
    with relaxed;
    async fn a_disconnected_location_is_not_active_and_its_days_without_service_are_not_billed(app) {
        with_meters(&app).await;
        let (uuid, token) = non_paying_customer(&app, "off@example.com", HOUSE).await;
        let bill = unpaid_bill(&app, (&uuid, &token)).await;
        let number = bill["number"].as_str().unwrap().to_owned();
        let a = account_of(&app, &uuid).await;
        assert_eq!((a["status"].as_str(), a["status_reason"].as_str()), (Some("active"), Some("active")), "{a}");
        assert_eq!(a["locations"][0]["is_service_active"], true, "{a}");

        let earliest = date(&notice_of(&app, &token, &number).await["earliest_disconnection_date"]);
        on_to(&app, (&uuid, &token), earliest - Duration::days(1)).await;
        advance(&app, &token, 2).await;
        app.eventually("the location is disconnected", || async {
            notice_of(&app, &token, &number).await["status"] == "disconnected"
        })
        .await;
        // Disconnected: not active, wherever the account and its location say so.
        let a = account_of(&app, &uuid).await;
        assert_eq!(a["is_service_active"], false, "{a}");
        assert_eq!(a["enrollment"]["is_service_active"], false, "{a}");
        assert_eq!((a["status"].as_str(), a["status_reason"].as_str()), (Some("needs_attention"), Some("service_disconnected")), "{a}");
        assert_eq!(a["locations"][0]["is_service_active"], false, "{a}");
        assert_eq!(a["locations"][0]["status"], "disconnected", "{a}");
        let own = app.get("/v1/account", &token).await;
        assert_eq!(own.body["is_service_active"], false, "{}", own.text);
        let statuses = server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        assert!(statuses.iter().any(|e| e.kind == "account.status_updated" && e.data.contains("service_disconnected")));

        // Days pass without service; paid, the reconnection is asked: still off until done.
        advance(&app, &token, 6).await;
        pay_everything(&app, &token).await;
        assert_eq!(notice_of(&app, &token, &number).await["status"], "reconnect_requested");
        assert_eq!(account_of(&app, &uuid).await["locations"][0]["is_service_active"], false);
        advance(&app, &token, 1).await;
        app.eventually("the location is reconnected", || async {
            notice_of(&app, &token, &number).await["status"] == "reconnected"
        })
        .await;
        let a = account_of(&app, &uuid).await;
        assert_eq!((a["status"].as_str(), a["status_reason"].as_str()), (Some("active"), Some("active")), "{a}");
        assert_eq!(a["is_service_active"], true, "{a}");
        assert_eq!(a["locations"][0]["is_service_active"], true, "{a}");
        assert_eq!(a["locations"][0]["status"], "active", "{a}");

        // Billing resumes; the days wholly without service bill no energy and no base charge.
        let n = notice_of(&app, &token, &number).await;
        let (cut, restored) = (market_day(&n["disconnected_at"]), market_day(&n["reconnected_at"]));
        let off: Vec<NaiveDate> = cut.iter_days().skip(1).take_while(|d| *d < restored).collect();
        assert!(off.len() >= 5, "{cut} to {restored}");
        advance(&app, &token, 2).await;
        bill_today(&app, &token).await;
        let mut checked = 0;
        for i in all_invoices(&app, &token).await {
            let (start, end) = (date(&i["billing_period_start"]), date(&i["billing_period_end"]));
            if end < cut {
                continue;
            }
            let detail = invoice(&app, &token, i["number"].as_str().unwrap()).await;
            let mut off_here = 0;
            let mut kwh = rust_decimal::Decimal::ZERO;
            let mut served_kwh = rust_decimal::Decimal::ZERO;
            for d in detail["usage"]["daily"].as_array().unwrap() {
                let used: rust_decimal::Decimal = d["consumption"].as_str().unwrap().parse().unwrap();
                kwh += used;
                if off.contains(&date(&d["date"])) {
                    assert!(used.is_zero(), "{d} in {detail}");
                    off_here += 1;
                } else {
                    served_kwh += used;
                }
            }
            let days = (end - start).num_days() + 1;
            let charges: Vec<&Value> = detail["charges_groups"].as_array().unwrap().iter().flat_map(|g| g["charges"].as_array().unwrap()).collect();
            let energy: rust_decimal::Decimal = charges.iter().filter(|c| c["description"] == "Energy charge").map(|c| c["quantity"].as_str().unwrap().parse::<rust_decimal::Decimal>().unwrap()).sum();
            assert_eq!(energy, kwh, "{detail}");
            let base = charges.iter().find(|c| c["description"] == "Base charge").unwrap();
            let months: rust_decimal::Decimal = base["quantity"].as_str().unwrap().parse().unwrap();
            assert_eq!(months, server::domain::billing::months_served(days, off_here), "{detail}");
            if off_here > 0 {
                assert!(months < server::domain::billing::months_billed(days), "{detail}");
                if off_here < days {
                    assert!(served_kwh > rust_decimal::Decimal::ZERO, "{detail}");
                }
                checked += off_here;
            }
        }
        assert_eq!(checked, off.len() as i64, "every day without service was billed once, at nothing");

        // The usage views agree: a day without service has no consumption, by day or by
        // 15-minute interval; a served day's intervals add up to its day.
        let location = account_of(&app, &uuid).await["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let kwh = |v: &Value| v.as_str().unwrap().parse::<rust_decimal::Decimal>().unwrap();
        for (day, served) in [(off[0], false), (*off.last().unwrap(), false), (cut - Duration::days(1), true)] {
            let daily = app.get(&format!("/v1/account/locations/{location}/usage/daily?year={}&month={}", day.year(), day.month()), &token).await;
            assert_eq!(daily.status, StatusCode::OK, "{}", daily.text);
            let row = daily.body["days"].as_array().unwrap().iter().find(|d| date(&d["date"]) == day).cloned().unwrap_or_else(|| panic!("{day} in {}", daily.text));
            let r = app.get(&format!("/v1/account/locations/{location}/usage/intervals?date={day}"), &token).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
            let intervals = r.body["intervals"].as_array().unwrap();
            let sum: rust_decimal::Decimal = intervals.iter().map(|i| kwh(&i["consumption"])).sum();
            assert_eq!(sum, kwh(&row["consumption"]), "{day}: {}", r.text);
            assert_eq!(sum.is_zero(), !served, "{day}: {}", r.text);
            if !served {
                assert!(intervals.iter().all(|i| kwh(&i["consumption"]).is_zero() && kwh(&i["generation"]).is_zero()), "{day}: {}", r.text);
            }
        }
    }

    async fn an_unpaid_final_bill_is_told_in_writing_and_never_leads_to_a_disconnection(app) {
        with_meters(&app).await;
        let (uuid, token) = non_paying_customer(&app, "moved@example.com", HOUSE).await;
        let location = account_of(&app, &uuid).await["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let last_day = today(&app, &uuid).await + Duration::days(5);
        let r = app.post(&format!("/v1/account/locations/{location}/cancel-service"), &token, &json!({"final_service_date": last_day, "reason": "moving"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 7).await;
        let bills = all_invoices(&app, &token).await;
        let final_bill = bills.iter().find(|i| date(&i["billing_period_end"]) == last_day).cloned().expect("the final bill");
        let number = final_bill["number"].as_str().unwrap().to_owned();
        let amount = final_bill["total_cents"].as_i64().unwrap();
        let unpaid = past_due(&app, (&uuid, &token), &final_bill).await;
        assert_eq!(unpaid["status"], "past_due");

        // No disconnection notice: nothing is served to disconnect.
        assert!(notices(&app, &token).await.iter().all(|n| n["invoice_number"] != number.as_str()));
        assert_eq!(count(&app, &uuid, "account.disconnection_notice_sent").await, 0);
        // The written notice of what is owed, how to pay, and whom to ask for arrangements.
        let events = server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        let sent: Vec<Value> = events
            .iter()
            .filter(|e| e.kind == "account.final_bill_notice_sent")
            .map(|e| serde_json::from_str::<Value>(&e.data).unwrap())
            .filter(|d| d["invoice_number"] == number.as_str())
            .collect();
        assert_eq!(sent.len(), 1, "{sent:?}");
        let sent = &sent[0];
        assert_eq!(sent["amount_cents"].as_i64().unwrap(), amount, "{sent}");
        assert_eq!(sent["location_uuid"], location.as_str(), "{sent}");
        let mails = emails(&app, &uuid).await;
        let mail = mails
            .iter()
            .find(|m| m["template"] == "final_bill_past_due" && m["text"].as_str().unwrap().contains(&number))
            .expect("the final bill's notice");
        let text = mail["text"].as_str().unwrap();
        for said in [number.clone(), app::format::dollars(amount), "nothing will be disconnected".to_owned(), "payment arrangement".to_owned(), "2-1-1".to_owned()] {
            assert!(text.contains(&said), "{said}: {text}");
        }
        assert!(!mails.iter().any(|m| m["template"] == "disconnection_notice"), "{mails:?}");
        // No payment plan can ride on bills that will not come.
        let r = app.get("/v1/account/billing/payment-plan", &token).await;
        assert_eq!(r.body["offer"], Value::Null, "{}", r.text);
        let r = app.post("/v1/account/billing/payment-plan", &token, &json!({})).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "payment_plan_not_offered"), "{}", r.text);
        // Weeks later, still nothing asked of the utility; it stays payable.
        advance(&app, &token, 20).await;
        assert_eq!(count(&app, &uuid, "location.disconnection_requested").await, 0);
        pay_everything(&app, &token).await;
        assert_eq!(invoice(&app, &token, &number).await["status"], "paid");
    }
}

/// The market's date on the service clock (a live account's clock).
fn live_today(app: &TestApp) -> NaiveDate {
    server::domain::market::market_date(app.clock.now())
}

/// Moves the service clock on to `day` (same time of day) and lets the workers catch up.
async fn live_on_to(app: &TestApp, day: NaiveDate) {
    let days = (day - live_today(app)).num_days();
    assert!(days >= 0, "{day} is in the past");
    app.clock.advance(Duration::days(days));
}

async fn live_card(
    server: &TestApp,
    fake: &crate::fake_processor::FakeProcessor,
    token: &str,
    number: &str,
) {
    let (_, secret) = session(server, token).await;
    let pm = fake.confirm_card(&secret, number);
    let added = server
        .post(
            "/v1/account/billing/ensure-payment-method-added",
            token,
            &json!({"payment_method_id": pm}),
        )
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.text);
}

both_engines! {
    with relaxed;
    async fn a_live_disconnection_and_reconnection_wait_for_the_operator_on_the_worklist(app) {
        let (fake, server, live_token, token, account, start) = live_submission_with_processor(&app).await;
        // The customer's token, anew after the clock moved past its expiry.
        let fresh = || async {
            let r = server.post(&format!("/v1/app/accounts/{account}/token"), &live_token, &Value::Null).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
            r.body["token"].as_str().unwrap().to_owned()
        };
        let account_uuid: uuid::Uuid = account.parse().unwrap();
        let submission = worklist(&app, true)[0]["uuid"].as_str().unwrap().to_owned();
        let ops = signed_in(&server, "ops@example.com", Role::Operator, None).await;
        for answer in [&[("answer", "accepted"), ("start_date", start.as_str())][..], &[("answer", "active")][..]] {
            let r = ops.submit("/dashboard/utility", &format!("/dashboard/utility/{submission}"), answer).await;
            assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        }
        crate::enrollment::settles_at(&server, &token, crate::enrollment::pair("active", "active")).await;

        // From now on the customer's card declines; the cycle's bill (the meter read stands in
        // for the utility's) goes unpaid past its due date.
        live_card(&server, &fake, &token, DECLINES_LATER).await;
        let started: NaiveDate = start.parse().unwrap();
        live_on_to(&app, live_today(&app).max(started) + Duration::days(5)).await;
        let live = server::store::accounts::account_by_uuid(&app.state.db, account_uuid).await.unwrap().unwrap();
        let live_app = server::store::apps::app_by_uuid(&app.state.db, live.app_uuid).await.unwrap().unwrap();
        let clock = app.clock.for_account(&app.state.db, account_uuid).await.unwrap();
        let mut tx = app.state.db.begin().await.unwrap();
        let bill = server::services::billing::simulate_invoice(&mut tx, &server.state, &clock, &live_app, account_uuid)
            .await
            .unwrap()
            .unwrap();
        tx.commit().await.unwrap();
        let number = bill.number.clone();
        live_on_to(&app, bill.payment_due_date + Duration::days(1)).await;
        let token = fresh().await;
        app.eventually("the bill turns past due and is noticed", || async {
            notices(&server, &token).await.iter().any(|n| n["invoice_number"] == number.as_str() && n["status"] == "noticed")
        })
        .await;
        assert_eq!(invoice(&server, &token, &number).await["status"], "past_due");
        let n = notice_of(&server, &token, &number).await;
        let disconnection = n["uuid"].as_str().unwrap().to_owned();
        let earliest = date(&n["earliest_disconnection_date"]);
        assert!((earliest - date(&n["notice_date"])).num_days() >= 10, "{n}");

        // Nothing before the earliest date.
        live_on_to(&app, earliest - Duration::days(1)).await;
        let token = fresh().await;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert_eq!(notice_of(&server, &token, &number).await["status"], "noticed");

        // On it the request goes to the operator's worklist; no simulator carries it out.
        live_on_to(&app, earliest).await;
        let token = fresh().await;
        app.eventually("the disconnection is requested", || async {
            notice_of(&server, &token, &number).await["status"] == "requested"
        })
        .await;
        assert_eq!(count(&app, &account, "location.disconnection_requested").await, 1);
        app.clock.advance(Duration::hours(6));
        tokio::time::sleep(std::time::Duration::from_millis(800)).await;
        let token = fresh().await;
        assert_eq!(notice_of(&server, &token, &number).await["status"], "requested", "waits for the operator");
        let ops = signed_in(&server, "clerk@example.com", Role::Operator, None).await;
        assert_eq!(count(&app, &account, "location.disconnected").await, 0);

        let page = format!("/dashboard/accounts/{account}");
        let action = format!("{page}/disconnections/{disconnection}/done");
        let shown = ops.get(&page).await;
        assert_eq!(shown.status, StatusCode::OK, "{}", shown.text);
        assert!(shown.text.contains("The utility disconnected") && shown.text.contains(&action), "{}", shown.text);

        // A partner member records nothing.
        let partner = signed_in(&server, "pat@partner.example", Role::Partner, Some("Partner Co")).await;
        let r = partner.submit("/dashboard", &action, &[]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        assert_eq!(notice_of(&server, &token, &number).await["status"], "requested");

        // The operator records the utility's disconnection: audited, the location is off.
        let r = ops.submit(&page, &action, &[]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let n = notice_of(&server, &token, &number).await;
        assert_eq!(n["status"], "disconnected", "{n}");
        assert_eq!(count(&app, &account, "location.disconnected").await, 1);
        server.state.http.caches.accounts.invalidate(&account_uuid);
        let me = server.get("/v1/account", &token).await.body;
        assert_eq!(me["locations"][0]["is_service_active"], false, "{me}");
        let audit = server::store::audit::latest_entries(&app.state.db, 50).await.unwrap();
        let recorded: Vec<_> = audit.iter().filter(|e| e.action == "account.utility_order_recorded").collect();
        assert_eq!(recorded.len(), 1, "{audit:?}");
        assert_eq!(recorded[0].actor, "clerk@example.com");
        assert!(recorded[0].detail.contains(&disconnection) && recorded[0].detail.contains("disconnect"), "{}", recorded[0].detail);
        // Recorded once: again is no order.
        let r = ops.submit(&page, &action, &[]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

        // The customer pays: the reconnection is asked of the worklist, and waits there too.
        live_card(&server, &fake, &token, "4242424242424242").await;
        // Everything past due (the cycle's own read may have billed again meanwhile).
        for i in all_invoices(&server, &token).await {
            if i["status"] == "past_due" || i["status"] == "open" {
                let paid = server.post(&format!("/v1/account/billing/invoices/{}/pay", i["number"].as_str().unwrap()), &token, &Value::Null).await;
                assert_eq!(paid.status, StatusCode::OK, "{}", paid.text);
            }
        }
        assert_eq!(notice_of(&server, &token, &number).await["status"], "reconnect_requested");
        assert_eq!(count(&app, &account, "location.reconnection_requested").await, 1);
        app.clock.advance(Duration::hours(6));
        tokio::time::sleep(std::time::Duration::from_millis(800)).await;
        let token = fresh().await;
        assert_eq!(notice_of(&server, &token, &number).await["status"], "reconnect_requested", "waits for the operator");
        assert_eq!(count(&app, &account, "location.reconnected").await, 0);
        let shown = ops.get(&page).await;
        assert!(shown.text.contains("The utility reconnected"), "{}", shown.text);
        let r = partner.submit("/dashboard", &action, &[]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

        let r = ops.submit(&page, &action, &[]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(notice_of(&server, &token, &number).await["status"], "reconnected");
        assert_eq!(count(&app, &account, "location.reconnected").await, 1);
        server.state.http.caches.accounts.invalidate(&account_uuid);
        let me = server.get("/v1/account", &token).await.body;
        assert_eq!(me["locations"][0]["is_service_active"], true, "{me}");
        let audit = server::store::audit::latest_entries(&app.state.db, 50).await.unwrap();
        assert_eq!(audit.iter().filter(|e| e.action == "account.utility_order_recorded" && e.actor == "clerk@example.com").count(), 2);
    }
}
