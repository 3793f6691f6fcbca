//! Billing through the HTTP API: cycle reads and invoices on the account's clock, auto-pay on
//! the due date (at least 16 days after the invoice, on a business day), declines and past-due invoices, paying early, the sandbox's billing
//! simulations and demo data, invoice PDFs, and a location's usage and meter reads.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::{
    enrollment::{
        add_card_number, advance, customer, event_types, pair, relaxed, settles_at, walk_to_active,
        with_meters, HOUSE,
    },
    flows::{flow_link, open_link},
    helpers::TestApp,
};

/// Cards the built-in processor knows.
const DECLINES_LATER: &str = "4000000000000341";
const GOOD_CARD: &str = "4242424242424242";

async fn invoices(app: &TestApp, token: &str) -> Vec<Value> {
    let r = app
        .get("/v1/account/billing/invoices?limit=100", token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"].as_array().unwrap().clone()
}

async fn invoice(app: &TestApp, token: &str, number: &str) -> Value {
    let r = app
        .get(&format!("/v1/account/billing/invoices/{number}"), token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body
}

async fn seed(app: &TestApp, token: &str) -> Value {
    let r = app
        .post("/v1/account/sandbox/seed-demo-data", token, &Value::Null)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body
}

async fn simulate(app: &TestApp, token: &str, event: &str) -> crate::helpers::TestResponse {
    app.post(
        "/v1/account/sandbox/simulate",
        token,
        &json!({ "event": event }),
    )
    .await
}

fn date(v: &Value) -> chrono::NaiveDate {
    chrono::NaiveDate::parse_from_str(v.as_str().unwrap(), "%Y-%m-%d").unwrap()
}

async fn email_subjects(app: &TestApp, account: &str) -> Vec<String> {
    email_log(app, account)
        .await
        .into_iter()
        .map(|(subject, _, _)| subject)
        .collect()
}

/// Every line of a detail adds up to its group, and the groups to the total.
fn assert_adds_up(detail: &Value) {
    let groups = detail["charges_groups"].as_array().unwrap();
    let mut total = 0;
    for g in groups {
        let lines: i64 = g["charges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["amount_cents"].as_i64().unwrap())
            .sum();
        assert_eq!(g["total_cents"].as_i64().unwrap(), lines, "{g}");
        total += lines;
    }
    assert_eq!(detail["total_cents"].as_i64().unwrap(), total, "{detail}");
}

both_engines! {
    at [early_morning, fall_back_night, spring_forward_eve];
    with relaxed;
    async fn the_cycle_read_issues_an_invoice_that_auto_pay_settles_sixteen_days_later(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "cycle@example.com").await;
        walk_to_active(&app, &token, HOUSE).await;
        let account = app.get("/v1/account", &token).await.body;
        let location = account["locations"][0]["uuid"].as_str().unwrap().to_owned();
        assert!(date(&account["locations"][0]["estimated_next_reading_date"]) > date(&account["locations"][0]["service_start_date"]));

        // Within a month, the cycle read comes and bills from the service start.
        for _ in 0..32 {
            if !invoices(&app, &token).await.is_empty() {
                break;
            }
            advance(&app, &token, 1).await;
        }
        let list = invoices(&app, &token).await;
        assert_eq!(list.len(), 1, "{list:?}");
        let first = &list[0];
        // The next read is a cycle later, on the same day of the month.
        let next_read = date(&app.get("/v1/account", &token).await.body["locations"][0]["estimated_next_reading_date"]);
        assert!(next_read > date(&first["invoice_date"]));
        assert_eq!(chrono::Datelike::day(&next_read), chrono::Datelike::day(&date(&first["invoice_date"])));
        let reads = app.get(&format!("/v1/account/locations/{location}/meter-reads"), &token).await;
        assert_eq!(reads.body["data"].as_array().unwrap().len(), 1, "{}", reads.text);
        assert_eq!(first["status"], "open");
        assert!(first["number"].as_str().unwrap().starts_with("INV-"));
        // At least 16 days, moved on past a weekend or a holiday.
        let gap = (date(&first["payment_due_date"]) - date(&first["invoice_date"])).num_days();
        assert!((16..=20).contains(&gap), "{first}");
        assert!(!matches!(chrono::Datelike::weekday(&date(&first["payment_due_date"])), chrono::Weekday::Sat | chrono::Weekday::Sun), "{first}");
        assert_eq!(first["billing_period_start"], account["locations"][0]["service_start_date"]);
        assert_eq!(date(&first["billing_period_end"]), date(&first["invoice_date"]).pred_opt().unwrap());
        let number = first["number"].as_str().unwrap().to_owned();
        let detail = invoice(&app, &token, &number).await;
        assert_adds_up(&detail);
        let names: Vec<&str> = detail["charges_groups"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Energy", "Delivery", "Taxes and fees"], "{detail}");
        // Oncor's delivery charge per kWh and Dallas' gross-receipts reimbursement.
        let lines: Vec<&Value> = detail["charges_groups"].as_array().unwrap().iter().flat_map(|g| g["charges"].as_array().unwrap()).collect();
        let per_kwh = lines.iter().find(|c| c["description"] == "Delivery charge (utility, per kWh)").unwrap();
        assert_eq!(per_kwh["rate"], "4.5403");
        assert_eq!(per_kwh["quantity"], detail["total_kwh"]);
        let receipts = lines.iter().find(|c| c["description"] == "Gross receipts reimbursement").unwrap();
        assert_eq!(receipts["rate"], "1.997");
        // The period's days add up to the invoice's kWh.
        let days = detail["usage"]["daily"].as_array().unwrap();
        let kwh: rust_decimal::Decimal = days.iter().map(|d| d["consumption"].as_str().unwrap().parse::<rust_decimal::Decimal>().unwrap()).sum();
        assert_eq!(kwh.to_string(), detail["total_kwh"].as_str().unwrap());
        let period = date(&first["billing_period_end"]) - date(&first["billing_period_start"]);
        assert_eq!(days.len() as i64, period.num_days() + 1);
        assert!(detail["payments"].as_array().unwrap().is_empty());
        let types = event_types(&app, &uuid).await;
        assert!(types.iter().any(|t| t == "invoice.created"), "{types:?}");
        assert!(email_subjects(&app, &uuid).await.iter().any(|s| s.contains("bill is ready")));

        // Not charged before the due date; charged on it. (The clock's UTC date may be a day
        // ahead of the market's.)
        let clock = advance(&app, &token, 1).await["clock"].as_str().unwrap()[..10].to_owned();
        let until_due = (date(&first["payment_due_date"]) - date(&json!(clock))).num_days();
        if until_due > 1 {
            advance(&app, &token, until_due - 1).await;
            assert_eq!(invoice(&app, &token, &number).await["status"], "open");
        }
        advance(&app, &token, 3).await;
        app.eventually("auto-pay settles the invoice", || async {
            invoice(&app, &token, &number).await["status"] == "paid"
        })
        .await;
        let detail = invoice(&app, &token, &number).await;
        assert_eq!(detail["payments"][0]["status"], "succeeded");
        assert_eq!(detail["payments"][0]["amount_cents"], detail["total_cents"]);
        assert!(detail["paid_at"].is_string());
        let types = event_types(&app, &uuid).await;
        for expected in ["account.payment_successful", "invoice.paid"] {
            assert!(types.iter().any(|t| t == expected), "{expected} in {types:?}");
        }
        assert!(!types.iter().any(|t| t == "invoice.past_due"), "{types:?}");
        settles_at(&app, &token, pair("active", "active")).await;

        // The next cycle bills from the day after the last read.
        advance(&app, &token, 31).await;
        let list = invoices(&app, &token).await;
        assert!(list.len() >= 2, "{list:?}");
        assert_eq!(date(&list[0]["billing_period_start"]), date(&list[1]["billing_period_end"]).succ_opt().unwrap());
        let n0: i64 = list[0]["number"].as_str().unwrap()[4..].parse().unwrap();
        let n1: i64 = list[1]["number"].as_str().unwrap()[4..].parse().unwrap();
        assert!(n0 > n1);
        let reads = app.get(&format!("/v1/account/locations/{location}/meter-reads"), &token).await;
        assert_eq!(reads.body["data"].as_array().unwrap().len(), list.len(), "{}", reads.text);
        assert_eq!(reads.body["data"][0]["kwh"], list[0]["total_kwh"]);
        assert_eq!(reads.body["data"][0]["type"], "actual");

        // Moving out: the final bill ends on the final service date, and no cycle follows.
        let today = advance(&app, &token, 1).await["clock"].as_str().unwrap()[..10].to_owned();
        let last_day = (date(&json!(today)) + chrono::Duration::days(5)).to_string();
        let r = app.post(&format!("/v1/account/locations/{location}/cancel-service"), &token, &json!({"final_service_date": last_day, "reason": "moving"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 10).await;
        settles_at(&app, &token, pair("cancelled", "cancelled_post_start")).await;
        let list = invoices(&app, &token).await;
        assert_eq!(list[0]["billing_period_end"], last_day.as_str(), "{list:?}");
        assert_eq!(list[0]["invoice_date"], last_day.as_str(), "{list:?}");
        let count = list.len();
        advance(&app, &token, 40).await;
        assert_eq!(invoices(&app, &token).await.len(), count);
    }

    async fn a_declined_auto_pay_retries_turns_past_due_and_can_be_paid_with_a_new_card(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "declined@example.com").await;
        add_card_number(&app, &token, DECLINES_LATER).await;
        seed(&app, &token).await;
        let list = invoices(&app, &token).await;
        assert!(list.len() >= 2, "{list:?}");
        // The invoices already due were tried and turned past due.
        let oldest = list.last().unwrap();
        assert_eq!(oldest["status"], "past_due", "{list:?}");
        let number = oldest["number"].as_str().unwrap().to_owned();
        let detail = invoice(&app, &token, &number).await;
        let payments = detail["payments"].as_array().unwrap();
        assert!(!payments.is_empty());
        assert!(payments.iter().all(|p| p["status"] == "failed" && p["failure_code"].is_string()), "{payments:?}");
        let types = event_types(&app, &uuid).await;
        for expected in ["account.payment_failed", "invoice.past_due"] {
            assert!(types.iter().any(|t| t == expected), "{expected} in {types:?}");
        }
        let subjects = email_subjects(&app, &uuid).await;
        assert!(subjects.iter().any(|s| s == "We could not charge your card"), "{subjects:?}");
        assert!(subjects.iter().any(|s| s == "Your electricity bill is past due"), "{subjects:?}");
        // Retries stop after the fourth decline.
        advance(&app, &token, 20).await;
        let detail = invoice(&app, &token, &number).await;
        let tries = detail["payments"].as_array().unwrap().len();
        assert!((1..=4).contains(&tries), "{detail}");

        // Paying now with the same card is declined, recorded, and changes nothing else.
        let pay = format!("/v1/account/billing/invoices/{number}/pay");
        let r = app.post(&pay, &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::PAYMENT_REQUIRED, "card_declined"), "{}", r.text);
        assert!(r.body["error"]["decline_code"].is_string(), "{}", r.text);
        let detail = invoice(&app, &token, &number).await;
        assert_eq!(detail["status"], "past_due");
        assert_eq!(detail["payments"].as_array().unwrap().len(), tries + 1);

        // A new card pays it; paying again is refused.
        add_card_number(&app, &token, GOOD_CARD).await;
        let r = app.post(&pay, &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["status"], "succeeded");
        assert_eq!(r.body["invoice_number"], number.as_str());
        assert_eq!(r.body["amount_cents"], detail["total_cents"]);
        assert_eq!(invoice(&app, &token, &number).await["status"], "paid");
        let r = app.post(&pay, &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "invoice_not_payable"), "{}", r.text);
        let r = app.post("/v1/account/billing/invoices/INV-99999999/pay", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{}", r.text);
    }

    async fn seed_demo_data_brings_usage_invoices_and_a_pdf(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "seeded@example.com").await;
        let account = seed(&app, &token).await;
        let location = account["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let list = invoices(&app, &token).await;
        assert!((2..=4).contains(&list.len()), "{list:?}");
        // Auto-pay settled those already due; the newest is usually still open.
        for i in &list {
            assert!(i["status"] == "paid" || i["status"] == "open", "{i}");
            assert_adds_up(&invoice(&app, &token, i["number"].as_str().unwrap()).await);
            assert_eq!(i["location_uuid"], location.as_str());
            assert!(i["total"].as_str().unwrap().contains('.'));
        }
        assert_eq!(list.last().unwrap()["status"], "paid", "{list:?}");
        let types = event_types(&app, &uuid).await;
        for expected in ["invoice.created", "account.payment_successful", "invoice.paid"] {
            assert!(types.iter().any(|t| t == expected), "{expected} in {types:?}");
        }

        // Usage: 12 months of history before the start, then the service months.
        let r = app.get(&format!("/v1/account/locations/{location}/usage/monthly"), &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["units"], "kWh");
        assert!(r.body["previous"].is_string(), "{}", r.text);
        assert!(r.body["next"].is_null(), "{}", r.text);
        let previous = app.get(r.body["previous"].as_str().unwrap(), &token).await;
        assert_eq!(previous.status, StatusCode::OK, "{}", previous.text);
        let months = r.body["months"].as_array().unwrap().len() + previous.body["months"].as_array().unwrap().len();
        assert!(months >= 13, "{} {}", r.text, previous.text);
        let first_invoice = list.last().unwrap();
        let d = date(&first_invoice["billing_period_start"]);
        let r = app.get(&format!("/v1/account/locations/{location}/usage/daily?year={}&month={}", chrono::Datelike::year(&d), chrono::Datelike::month(&d)), &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert!(r.body["days"].as_array().unwrap().len() >= 28, "{}", r.text);
        assert!(r.body["previous"].is_string() && r.body["next"].is_string(), "{}", r.text);
        let day = r.body["days"][3].clone();
        let r = app.get(&format!("/v1/account/locations/{location}/usage/intervals?date={}", day["date"].as_str().unwrap()), &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let intervals = r.body["intervals"].as_array().unwrap();
        assert!([92, 96, 100].contains(&intervals.len()), "{}", intervals.len());
        assert_eq!(r.body["interval_minutes"], 15);
        let sum: rust_decimal::Decimal = intervals.iter().map(|i| i["consumption"].as_str().unwrap().parse::<rust_decimal::Decimal>().unwrap()).sum();
        assert_eq!(sum.to_string(), day["consumption"].as_str().unwrap());

        // The PDF.
        let number = list[0]["number"].as_str().unwrap();
        let r = app.get(&format!("/v1/account/billing/invoices/{number}/pdf"), &token).await;
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(r.header("content-type"), "application/pdf");
        assert!(r.text.starts_with("%PDF-"));
        assert!(r.text.contains(number), "the PDF names the invoice");
        for printed in ["(Plan)", "(Contract ends)", "(Meter reads)", "(Actual)"] {
            assert!(r.text.contains(printed), "the PDF prints {printed}");
        }
        let r = app.get("/v1/account/billing/invoices/INV-99999999/pdf", &token).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));

        // Another account sees none of it.
        let (_, other) = customer(&app, "other@example.com").await;
        assert!(invoices(&app, &other).await.is_empty());
        let r = app.get(&format!("/v1/account/billing/invoices/{number}"), &other).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
        let r = app.get(&format!("/v1/account/locations/{location}/usage/monthly"), &other).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));

        // A sandbox reset removes the invoices, reads and usage.
        let r = app.post("/v1/account/sandbox/delete-enrollment", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert!(invoices(&app, &token).await.is_empty());
        let seeded = seed(&app, &token).await;
        assert_eq!(seeded["status"], "active");
        assert!(!invoices(&app, &token).await.is_empty());
    }

    async fn simulated_invoices_and_payment_failures(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "simulated@example.com").await;
        let r = simulate(&app, &token, "invoice_generated").await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "service_not_active"), "{}", r.text);
        let r = simulate(&app, &token, "payment_failed").await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "invoice_not_payable"), "{}", r.text);
        seed(&app, &token).await;
        let before = invoices(&app, &token).await.len();

        let r = simulate(&app, &token, "invoice_generated").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let emitted: Vec<&str> = r.body["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert!(emitted.contains(&"invoice.created"), "{emitted:?}");
        let list = invoices(&app, &token).await;
        assert_eq!(list.len(), before + 1);
        let newest = &list[0];
        assert_eq!(newest["status"], "open");
        assert_eq!(newest["billing_period_end"], newest["invoice_date"]);
        // Read through today already.
        let r = simulate(&app, &token, "invoice_generated").await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "nothing_to_bill"), "{}", r.text);
        assert_eq!(invoices(&app, &token).await.len(), before + 1);

        let r = simulate(&app, &token, "payment_failed").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let emitted: Vec<&str> = r.body["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert!(emitted.contains(&"account.payment_failed"), "{emitted:?}");
        let detail = invoice(&app, &token, newest["number"].as_str().unwrap()).await;
        assert_eq!(detail["status"], "open");
        assert_eq!(detail["payments"][0]["status"], "failed");
        assert_eq!(detail["payments"][0]["failure_code"], "card_declined");
        let failed = server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap())
            .await
            .unwrap()
            .into_iter()
            .find(|e| e.kind == "account.payment_failed")
            .unwrap();
        let data: Value = serde_json::from_str(&failed.data).unwrap();
        assert_eq!(data["invoice_number"], newest["number"]);
        assert_eq!(data["amount_cents"], newest["total_cents"]);

        // The next cycle still comes on its day.
        advance(&app, &token, 32).await;
        assert!(invoices(&app, &token).await.len() >= before + 2);
    }

    async fn a_billing_flow_session_reads_and_pays_invoices(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "flowpay@example.com").await;
        let account = seed(&app, &token).await;
        let r = simulate(&app, &token, "invoice_generated").await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let open = invoices(&app, &token).await[0].clone();
        let number = open["number"].as_str().unwrap();

        let link = flow_link(&app, &uuid, "billing").await;
        let session = open_link(&app, link["login_link"].as_str().unwrap()).await.unwrap();
        assert_eq!(invoices(&app, &session).await.len(), invoices(&app, &token).await.len());
        assert_eq!(invoice(&app, &session, number).await["number"], number);
        let r = app.get(&format!("/v1/account/billing/invoices/{number}/pdf"), &session).await;
        assert_eq!(r.status, StatusCode::OK);
        let r = app.post(&format!("/v1/account/billing/invoices/{number}/pay"), &session, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(invoice(&app, &token, number).await["status"], "paid");
        // Usage and enrollment belong to other scopes; an enrollment session sees no invoices.
        let location = account["locations"][0]["uuid"].as_str().unwrap();
        let r = app.get(&format!("/v1/account/locations/{location}/usage/monthly"), &session).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "scope_denied"));
        let link = flow_link(&app, &uuid, "enrollment").await;
        let enrollment = open_link(&app, link["login_link"].as_str().unwrap()).await.unwrap();
        let r = app.get("/v1/account/billing/invoices", &enrollment).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "scope_denied"));
    }

    async fn usage_runs_through_yesterday_while_billing_waits_for_the_read(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "yesterday@example.com").await;
        let account = seed(&app, &token).await;
        let location = account["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let base = format!("/v1/account/locations/{location}");
        let today = || async {
            app.state.clock.for_account(&app.state.db, uuid.parse().unwrap()).await.unwrap().today()
        };
        let reads = || async {
            let r = app.get(&format!("{base}/meter-reads?limit=100"), &token).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
            r.body["data"].as_array().unwrap().clone()
        };
        // A few days into a cycle, so that the last read is well behind.
        let last_read = date(&reads().await[0]["end_date"]);
        if today().await - last_read < chrono::Duration::days(4) {
            advance(&app, &token, 5).await;
        }
        let (today, read_before, invoices_before) = (today().await, reads().await, invoices(&app, &token).await.len());
        let last_read = date(&read_before[0]["end_date"]);
        let yesterday = today - chrono::Duration::days(1);
        assert!(last_read < yesterday, "{last_read} {yesterday}");
        use chrono::Datelike;

        // Daily usage of yesterday's month runs through yesterday, not past it.
        let r = app.get(&format!("{base}/usage/daily?year={}&month={}", yesterday.year(), yesterday.month()), &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let days = r.body["days"].as_array().unwrap();
        assert_eq!(date(&days.last().unwrap()["date"]), yesterday, "{}", r.text);
        let yesterday_kwh = days.last().unwrap()["consumption"].clone();
        // So do its 15-minute intervals, adding up to the day.
        let r = app.get(&format!("{base}/usage/intervals?date={yesterday}"), &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let intervals = r.body["intervals"].as_array().unwrap();
        assert!([92, 96, 100].contains(&intervals.len()), "{}", r.text);
        let sum: rust_decimal::Decimal = intervals.iter().map(|i| i["consumption"].as_str().unwrap().parse::<rust_decimal::Decimal>().unwrap()).sum();
        assert_eq!(json!(sum.to_string()), yesterday_kwh);
        let r = app.get(&format!("{base}/usage/intervals?date={today}"), &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert!(r.body["intervals"].as_array().unwrap().is_empty(), "today is not reported yet: {}", r.text);
        // Without a query, the intervals are this month's on the account's clock.
        let r = app.get(&format!("{base}/usage/intervals"), &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let first = chrono::NaiveDate::from_ymd_opt(today.year(), today.month(), 1).unwrap();
        assert_eq!(r.body["start"], json!(server::domain::market::start_of_market_day(first).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)), "{}", r.text);

        // Billing did not move: no read, no invoice until the cycle's read, which bills the
        // same figures.
        assert_eq!(reads().await, read_before);
        assert_eq!(invoices(&app, &token).await.len(), invoices_before);
        advance(&app, &token, 35).await;
        let after = reads().await;
        assert!(after.len() > read_before.len(), "read since");
        let r = app.get(&format!("{base}/usage/daily?year={}&month={}", yesterday.year(), yesterday.month()), &token).await;
        let day = r.body["days"].as_array().unwrap().iter().find(|d| date(&d["date"]) == yesterday).unwrap().clone();
        assert_eq!(day["consumption"], yesterday_kwh);
    }

    async fn usage_parameters_are_checked(app) {
        with_meters(&app).await;
        let (_, token) = customer(&app, "params@example.com").await;
        let account = seed(&app, &token).await;
        let location = account["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let base = format!("/v1/account/locations/{location}");
        for (query, code, param) in [
            ("/usage/daily?month=13", "parameter_invalid", "month"),
            ("/usage/monthly?year=1990", "parameter_invalid", "year"),
            ("/usage/monthly?year=abc", "parameter_invalid", "year"),
            ("/usage/intervals?year=2026", "parameter_missing", "month"),
            ("/usage/intervals?date=2026-02-30", "parameter_invalid", "date"),
            ("/usage/intervals?date=2026-01-01&year=2026&month=1", "parameter_invalid", "date"),
            ("/meter-reads?limit=0", "parameter_invalid", "limit"),
        ] {
            let r = app.get(&format!("{base}{query}"), &token).await;
            assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, code), "{query}: {}", r.text);
            assert_eq!(r.body["error"]["param"], param, "{query}: {}", r.text);
        }
        let r = app.get("/v1/account/billing/invoices?limit=101", &token).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"));
        let r = app.get(&format!("/v1/account/locations/{}/usage/monthly", uuid::Uuid::new_v4()), &token).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
        // Pages of invoices link on.
        let r = app.get("/v1/account/billing/invoices?limit=1", &token).await;
        assert_eq!(r.body["data"].as_array().unwrap().len(), 1);
        assert_eq!(r.body["has_more"], true);
        let next = app.get(r.body["next_page_url"].as_str().unwrap(), &token).await;
        assert_ne!(next.body["data"][0]["number"], r.body["data"][0]["number"]);
    }
}

/// Runs `sql` on the test's database, whichever engine it is, and returns its rows.
async fn sql_rows<T>(app: &TestApp, sql: &str) -> Vec<T>
where
    T: Send + Unpin,
    T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>,
    T: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>,
{
    let mut tx = app.state.db.begin().await.unwrap();
    let rows = match &mut tx {
        server::store::Tx::Sqlite(t) => sqlx::query_as(sql).fetch_all(&mut **t).await,
        server::store::Tx::Postgres(t) => sqlx::query_as(sql).fetch_all(&mut **t).await,
    }
    .unwrap();
    tx.commit().await.unwrap();
    rows
}

both_engines! {
    with relaxed;
    async fn unreadable_contract_rates_fail_the_meter_read_and_invoice_nothing(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "broken-rates@example.com").await;
        walk_to_active(&app, &token, HOUSE).await;
        let location = app.get("/v1/account", &token).await.body["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let reads_path = format!("/v1/account/locations/{location}/meter-reads");
        let read_count = || async { app.get(&reads_path, &token).await.body["data"].as_array().unwrap().len() };
        let created = || async { event_types(&app, &uuid).await.iter().filter(|t| *t == "invoice.created").count() };
        let bill_mails = || async { email_subjects(&app, &uuid).await.iter().filter(|s| s.contains("bill is ready")).count() };
        // Whatever was billed while the rates were sound stays as it is.
        let before = (invoices(&app, &token).await, read_count().await, created().await, bill_mails().await);
        sql_rows::<(String,)>(&app, "UPDATE contracts SET rates = 'not rates' RETURNING rates").await;

        let failed_reads = || async {
            sql_rows::<(String, Option<String>)>(&app, "SELECT state, last_error FROM jobs WHERE kind = 'billing.meter_read'")
                .await
                .into_iter()
                .filter(|(state, _)| state == "failed")
                .collect::<Vec<_>>()
        };
        for _ in 0..32 {
            if !failed_reads().await.is_empty() {
                break;
            }
            advance(&app, &token, 1).await;
        }
        let failed = failed_reads().await;
        assert_eq!(failed.len(), 1, "{failed:?}");
        let why = failed[0].1.clone().unwrap_or_default();
        assert!(why.contains("billing stopped: the contract's stored rates cannot be read"), "{why}");

        // Nothing of the stopped cycle is kept: no invoice, no read, no event, no e-mail.
        let numbers = |list: &[Value]| list.iter().map(|i| i["number"].clone()).collect::<Vec<_>>();
        assert_eq!(numbers(&invoices(&app, &token).await), numbers(&before.0));
        assert_eq!(read_count().await, before.1);
        assert_eq!(created().await, before.2);
        assert_eq!(bill_mails().await, before.3);
        // It is not retried on its own, and no later cycle bills around it.
        advance(&app, &token, 40).await;
        assert_eq!(numbers(&invoices(&app, &token).await), numbers(&before.0));
        assert_eq!(failed_reads().await.len(), 1);
    }
}

/// Jobs of `kind` that failed, with their reasons.
async fn failed_jobs(app: &TestApp, kind: &str) -> Vec<String> {
    sql_rows::<(String, String, Option<String>)>(app, "SELECT kind, state, last_error FROM jobs")
        .await
        .into_iter()
        .filter(|(k, state, _)| k == kind && state == "failed")
        .map(|(_, _, why)| why.unwrap_or_default())
        .collect()
}

/// Stores days of usage the way a broken feed would, from the day after `after` on; days already
/// stored keep their figures.
async fn unreadable_usage_after(app: &TestApp, location: &str, after: chrono::NaiveDate) {
    let days: Vec<_> = (1..=60)
        .map(|n| server::store::billing::UsageDayRow {
            day: after + chrono::Duration::days(n),
            consumption_kwh: "n/a".to_owned(),
            generation_kwh: "0".to_owned(),
            vehicle_kwh: "0".to_owned(),
            eligible_vehicle_kwh: "0".to_owned(),
        })
        .collect();
    let mut tx = app.state.db.begin().await.unwrap();
    server::store::billing::insert_usage_days(&mut tx, location.parse().unwrap(), &days)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

both_engines! {
    with relaxed;
    async fn unreadable_rates_or_usage_refuse_a_simulated_invoice_and_keep_nothing(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "broken-simulation@example.com").await;
        let account = seed(&app, &token).await;
        let location = account["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let before = invoices(&app, &token).await;
        let created = || async { event_types(&app, &uuid).await.iter().filter(|t| *t == "invoice.created").count() };
        let created_before = created().await;

        // A usage day that cannot be read stops the invoice instead of counting as 0 kWh.
        unreadable_usage_after(&app, &location, date(&before[0]["billing_period_end"])).await;
        let r = simulate(&app, &token, "invoice_generated").await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "nothing_to_bill"), "{}", r.text);
        let message = r.body["error"]["message"].as_str().unwrap();
        assert!(message.contains("usage of") && message.contains("cannot be read"), "{message}");
        assert_eq!(invoices(&app, &token).await.len(), before.len());
        assert_eq!(created().await, created_before);

        // So do rates that cannot be read.
        sql_rows::<(String,)>(&app, "DELETE FROM usage_days WHERE consumption_kwh = 'n/a' RETURNING consumption_kwh").await;
        sql_rows::<(String,)>(&app, "UPDATE contracts SET rates = 'not rates' RETURNING rates").await;
        let r = simulate(&app, &token, "invoice_generated").await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "nothing_to_bill"), "{}", r.text);
        let message = r.body["error"]["message"].as_str().unwrap();
        assert!(message.contains("the contract's stored rates cannot be read"), "{message}");
        assert_eq!(invoices(&app, &token).await.len(), before.len());
        assert_eq!(created().await, created_before);
    }

    async fn unreadable_usage_fails_the_meter_read_with_its_reason(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "broken-usage@example.com").await;
        walk_to_active(&app, &token, HOUSE).await;
        let location = app.get("/v1/account", &token).await.body["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let today = advance(&app, &token, 1).await["clock"].as_str().unwrap()[..10].to_owned();
        let before = invoices(&app, &token).await;
        unreadable_usage_after(&app, &location, date(&json!(today)) - chrono::Duration::days(1)).await;

        for _ in 0..32 {
            if !failed_jobs(&app, "billing.meter_read").await.is_empty() {
                break;
            }
            advance(&app, &token, 1).await;
        }
        let failed = failed_jobs(&app, "billing.meter_read").await;
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(failed[0].contains("billing stopped: the stored usage of") && failed[0].contains("consumption_kwh \"n/a\""), "{failed:?}");
        assert_eq!(invoices(&app, &token).await.len(), before.len());
        let created = event_types(&app, &uuid).await.iter().filter(|t| *t == "invoice.created").count();
        assert_eq!(created, before.len());
    }

    async fn a_final_bill_that_cannot_be_computed_fails_the_end_of_service_with_its_reason(app) {
        with_meters(&app).await;
        let (_, token) = customer(&app, "broken-final@example.com").await;
        walk_to_active(&app, &token, HOUSE).await;
        let location = app.get("/v1/account", &token).await.body["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let today = advance(&app, &token, 1).await["clock"].as_str().unwrap()[..10].to_owned();
        let last_day = (date(&json!(today)) + chrono::Duration::days(5)).to_string();
        let r = app.post(&format!("/v1/account/locations/{location}/cancel-service"), &token, &json!({"final_service_date": last_day, "reason": "moving"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        sql_rows::<(String,)>(&app, "UPDATE tdu_charges SET cents_per_kwh = 'n/a' RETURNING cents_per_kwh").await;
        let before = invoices(&app, &token).await;

        advance(&app, &token, 10).await;
        let failed = failed_jobs(&app, "service.end").await;
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(failed[0].contains("billing stopped: the delivery charges of utility"), "{failed:?}");
        // Nothing of it is kept: no final invoice, and service has not ended without its bill.
        let list = invoices(&app, &token).await;
        assert!(list.iter().all(|i| i["billing_period_end"] != last_day.as_str()), "{list:?}");
        assert_eq!(list.len(), before.len());
        let account = app.get("/v1/account", &token).await.body;
        assert_ne!(account["status"], "cancelled", "{account}");
    }
}

/// The background workers look at the queue once and then wait an hour: the test runs the due
/// jobs itself, all of them at once.
fn idle_workers(c: &mut server::config::Config) {
    relaxed(c);
    c.jobs.poll_interval_ms = 3_600_000;
}

both_engines! {
    with idle_workers;
    async fn a_cycle_day_of_many_accounts_bills_each_once_with_gap_free_numbers(app) {
        // More accounts than one transaction bills, so that the run takes several batches.
        const ACCOUNTS: usize = 20;
        with_meters(&app).await;
        let core = app.state.core();
        let bench_app = server::store::apps::app_by_uuid(&app.state.db, app.app_uuid).await.unwrap().unwrap();
        let mut accounts = Vec::new();
        for i in 0..ACCOUNTS {
            let (uuid, token) = customer(&app, &format!("cycle-day{i}@example.com")).await;
            let account_uuid = uuid.parse().unwrap();
            let seeded = server::services::sandbox::seed_demo_data(core, &bench_app, account_uuid).await;
            assert!(seeded.is_ok(), "seeding account {i} failed");
            if i == 0 {
                // The first account's rates cannot be read: its read fails alone.
                sql_rows::<(String,)>(&app, "UPDATE contracts SET rates = 'not rates' RETURNING rates").await;
            }
            accounts.push((uuid, token));
        }
        let reads_due: Vec<(String,)> = sql_rows(&app, "SELECT state FROM jobs WHERE kind = 'billing.meter_read' AND state = 'queued'").await;
        assert!(reads_due.len() >= ACCOUNTS, "{reads_due:?}");

        server::jobs::queue::run_due(core).await.unwrap();

        let failed = failed_jobs(&app, "billing.meter_read").await;
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(failed[0].contains("billing stopped"), "{failed:?}");
        assert!(invoices(&app, &accounts[0].1).await.is_empty());
        let mut issued = 0;
        for (uuid, token) in &accounts[1..] {
            let list = invoices(&app, token).await;
            assert!(list.len() >= 2, "{uuid}: {list:?}");
            let created = event_types(&app, uuid).await.iter().filter(|t| *t == "invoice.created").count();
            assert_eq!(created, list.len(), "{uuid}");
            let mails = email_subjects(&app, uuid).await.iter().filter(|s| s.contains("bill is ready")).count();
            assert_eq!(mails, list.len(), "{uuid}");
            issued += list.len();
        }
        // Every number from the first on, none skipped, none twice.
        let mut numbers: Vec<String> = sql_rows::<(String,)>(&app, "SELECT number FROM invoices").await.into_iter().map(|(n,)| n).collect();
        numbers.sort();
        assert_eq!(numbers.len(), issued);
        let expected: Vec<String> = (1..=issued as i64).map(server::domain::billing::invoice_number).collect();
        assert_eq!(numbers, expected);
    }
}

/// The e-mails of `account` as the sandbox's e-mail log shows them: subject, status, sent_at.
async fn email_log(app: &TestApp, account: &str) -> Vec<(String, String, Value)> {
    let r = app
        .get(
            &format!("/v1/app/sandbox/emails?account_uuid={account}&limit=100"),
            &app.app_token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["subject"].as_str().unwrap().to_owned(),
                e["status"].as_str().unwrap().to_owned(),
                e["sent_at"].clone(),
            )
        })
        .collect()
}

both_engines! {
    with idle_workers;
    async fn a_cycle_day_s_e_mails_each_go_out_once_and_a_missing_one_fails_alone(app) {
        // More bills than one transaction of e-mails ends, so that they take several.
        const ACCOUNTS: usize = 20;
        with_meters(&app).await;
        let core = app.state.core();
        let bench_app = server::store::apps::app_by_uuid(&app.state.db, app.app_uuid).await.unwrap().unwrap();
        let mut accounts = Vec::new();
        for i in 0..ACCOUNTS {
            let (uuid, token) = customer(&app, &format!("cycle-mail{i}@example.com")).await;
            let seeded = server::services::sandbox::seed_demo_data(core, &bench_app, uuid.parse().unwrap()).await;
            assert!(seeded.is_ok(), "seeding account {i} failed");
            accounts.push((uuid, token));
        }
        // A few e-mails queued together, and the job of one whose e-mail is gone.
        let first: uuid::Uuid = accounts[0].0.parse().unwrap();
        let clock = core.clock.for_account(&app.state.db, first).await.unwrap();
        let account = server::store::accounts::account_of_app(&app.state.db, app.app_uuid, first).await.unwrap().unwrap();
        let mut tx = app.state.db.begin().await.unwrap();
        for n in 0..3 {
            let card = server::mail::templates::Template::CardChanged(server::mail::templates::CardChanged {
                first_name: format!("Extra {n}"),
                card: "Visa ending in 4242".to_owned(),
                previous: None,
                changed_on: clock.today(),
            });
            server::mail::queue_to_account(&mut tx, &clock, &bench_app, &account, &card).await.unwrap();
        }
        let gone = server::outbox::Job::SendEmail { email_uuid: uuid::Uuid::new_v4(), event_on_send: None };
        server::outbox::enqueue(&mut tx, &clock, &gone, Some(first), clock.now()).await.unwrap();
        tx.commit().await.unwrap();

        server::jobs::queue::run_due(core).await.unwrap();

        // The missing e-mail's job fails alone; every other e-mail job is done.
        let failed = failed_jobs(&app, "email.send").await;
        assert_eq!(failed, vec!["e-mail not found".to_owned()]);
        let extras: Vec<_> = email_log(&app, &accounts[0].0).await.into_iter().filter(|(s, _, _)| s.contains("card on your account changed")).collect();
        assert_eq!(extras.len(), 3, "{extras:?}");
        for (subject, status, sent_at) in &extras {
            assert_eq!(status, "stored", "{subject}");
            assert!(sent_at.is_string(), "{subject}: {sent_at}");
        }
        for (uuid, token) in &accounts {
            let bills = invoices(&app, token).await.len();
            assert!(bills >= 2, "{uuid}: {bills}");
            let log = email_log(&app, uuid).await;
            // Each invoice has its one e-mail, kept (no SMTP here) once.
            let bill_mails: Vec<_> = log.iter().filter(|(s, _, _)| s.contains("bill is ready")).collect();
            assert_eq!(bill_mails.len(), bills, "{uuid}");
            for (subject, status, sent_at) in bill_mails {
                assert_eq!(status, "stored", "{uuid}: {subject}");
                assert!(sent_at.is_string(), "{uuid}: {subject}: {sent_at}");
            }
            let created = event_types(&app, uuid).await.iter().filter(|t| *t == "invoice.created").count();
            assert_eq!(created, bills, "{uuid}");
        }
    }
}
