//! Collections as the market's rules ask: a bill's due date on the market's business calendar,
//! the one-time late fee on the next bill (per-app percent, exempt customers), and what the
//! bill prints (the contract's end, the regulator's contacts, the deposit held, the late fee).

use chrono::{Datelike, Duration, NaiveDate, Weekday};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::{
    dashboard::signed_in,
    enrollment::{
        accept, add_card, add_card_number, advance, customer, event_types, first_plan, pair,
        relaxed, settles_at, walk_to_active, with_meters, HOUSE, OTHER_HOUSE,
    },
    helpers::TestApp,
};
use server::domain::users::Role;

/// A card that attaches but declines every charge: auto-pay fails and bills turn past due.
pub(crate) const DECLINES_LATER: &str = "4000000000000341";

pub(crate) fn date(v: &Value) -> NaiveDate {
    NaiveDate::parse_from_str(v.as_str().unwrap(), "%Y-%m-%d").unwrap()
}

/// The account's market date now.
pub(crate) async fn today(app: &TestApp, uuid: &str) -> NaiveDate {
    app.state
        .clock
        .for_account(&app.state.db, uuid.parse().unwrap())
        .await
        .unwrap()
        .today()
}

pub(crate) async fn simulate(
    app: &TestApp,
    token: &str,
    event: &str,
) -> crate::helpers::TestResponse {
    app.post(
        "/v1/account/sandbox/simulate",
        token,
        &json!({ "event": event }),
    )
    .await
}

/// The newest invoice's detail.
pub(crate) async fn newest_invoice(app: &TestApp, token: &str) -> Value {
    let r = app.get("/v1/account/billing/invoices?limit=1", token).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let number = r.body["data"][0]["number"].as_str().unwrap().to_owned();
    let r = app
        .get(&format!("/v1/account/billing/invoices/{number}"), token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body
}

/// Issues a bill today (an off-cycle read through today) and answers its detail.
pub(crate) async fn bill_today(app: &TestApp, token: &str) -> Value {
    let r = simulate(app, token, "invoice_generated").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    newest_invoice(app, token).await
}

/// Moves the account's clock on (0 to 6 days) until `today + offset` falls on `weekday`.
async fn on_to_weekday(app: &TestApp, (uuid, token): (&str, &str), offset: i64, weekday: Weekday) {
    let now = today(app, uuid).await;
    let days = (0..7)
        .find(|d| (now + Duration::days(d + offset)).weekday() == weekday)
        .unwrap();
    if days > 0 {
        advance(app, token, days).await;
    }
}

pub(crate) async fn holidays(app: &TestApp) -> Vec<NaiveDate> {
    server::store::market::federal_holidays(&app.state.db)
        .await
        .unwrap()
}

both_engines! {
    at [default, fall_back_night];
    with relaxed;
    async fn a_bill_due_on_a_weekend_falls_due_the_next_business_day(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "due-date@example.com").await;
        walk_to_active(&app, &token, HOUSE).await;
        // A bill issued 16 days before a Saturday.
        on_to_weekday(&app, (&uuid, &token), 16, Weekday::Sat).await;
        let issued = today(&app, &uuid).await;
        let bill = bill_today(&app, &token).await;
        assert_eq!(date(&bill["invoice_date"]), issued);
        let due = date(&bill["payment_due_date"]);
        // Not the Saturday nor the Sunday: the Monday, or the Tuesday when the Monday is a
        // holiday of the market's calendar.
        let monday = issued + Duration::days(18);
        assert_eq!(monday.weekday(), Weekday::Mon);
        let expected = if holidays(&app).await.contains(&monday) {
            monday + Duration::days(1)
        } else {
            monday
        };
        assert_eq!(due, expected, "{bill}");

        // The e-mail and the PDF carry the same day.
        let r = app
            .get(&format!("/v1/app/sandbox/emails?account_uuid={uuid}&limit=100"), &app.app_token)
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let number = bill["number"].as_str().unwrap();
        let mail = r.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["template"] == "bill_ready" && m["text"].as_str().unwrap().contains(number))
            .cloned()
            .unwrap();
        let long = app::format::long_date(due);
        assert!(mail["text"].as_str().unwrap().contains(&format!("Payment is due by {long}")), "{mail}");
        let r = app
            .get(&format!("/v1/account/billing/invoices/{number}/pdf"), &token)
            .await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(r.text.contains(&format!("({})", app::format::short_date(due))), "the PDF prints the due date");

        // Auto-pay waits for that day: nothing is charged over the weekend.
        advance(&app, &token, 17).await;
        let r = app.get(&format!("/v1/account/billing/invoices/{number}"), &token).await;
        assert_eq!(r.body["status"], "open", "{}", r.text);
        assert!(r.body["payments"].as_array().unwrap().is_empty(), "{}", r.text);
        let types = event_types(&app, &uuid).await;
        assert!(!types.iter().any(|t| t == "invoice.past_due"), "{types:?}");
    }
}

pub(crate) async fn invoice(app: &TestApp, token: &str, number: &str) -> Value {
    let r = app
        .get(&format!("/v1/account/billing/invoices/{number}"), token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body
}

/// Every invoice's detail, oldest first.
pub(crate) async fn all_invoices(app: &TestApp, token: &str) -> Vec<Value> {
    let r = app
        .get("/v1/account/billing/invoices?limit=100", token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let mut out = Vec::new();
    for i in r.body["data"].as_array().unwrap().iter().rev() {
        out.push(invoice(app, token, i["number"].as_str().unwrap()).await);
    }
    out
}

/// The late-fee lines of every invoice: (the invoice carrying it, the line).
pub(crate) fn late_fee_lines(invoices: &[Value]) -> Vec<(String, Value)> {
    invoices
        .iter()
        .flat_map(|i| {
            i["charges_groups"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|g| g["name"] == "Late fee")
                .flat_map(|g| g["charges"].as_array().unwrap().clone())
                .map(|c| (i["number"].as_str().unwrap().to_owned(), c))
                .collect::<Vec<_>>()
        })
        .collect()
}

pub(crate) fn group_total(detail: &Value, name: &str) -> i64 {
    detail["charges_groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["name"] == name)
        .map(|g| g["total_cents"].as_i64().unwrap())
        .sum()
}

/// Issues a bill today and moves the clock on until it turns past due (auto-pay declines).
pub(crate) async fn unpaid_bill(app: &TestApp, (uuid, token): (&str, &str)) -> Value {
    let bill = bill_today(app, token).await;
    past_due(app, (uuid, token), &bill).await
}

/// Moves the clock on past `bill`'s due date until it turns past due.
pub(crate) async fn past_due(app: &TestApp, (uuid, token): (&str, &str), bill: &Value) -> Value {
    let number = bill["number"].as_str().unwrap().to_owned();
    let days = (date(&bill["payment_due_date"]) - today(app, uuid).await).num_days() + 1;
    advance(app, token, days).await;
    app.eventually("the bill turns past due", || async {
        invoice(app, token, &number).await["status"] == "past_due"
    })
    .await;
    invoice(app, token, &number).await
}

/// The text of the past-due e-mail of bill `number`.
async fn past_due_mail(app: &TestApp, uuid: &str, number: &str) -> String {
    let mut text = String::new();
    app.eventually("the past-due e-mail", || async {
        let r = app
            .get(
                &format!("/v1/app/sandbox/emails?account_uuid={uuid}&limit=100"),
                &app.app_token,
            )
            .await;
        let found =
            r.body["data"].as_array().unwrap().iter().find(|m| {
                m["template"] == "past_due" && m["text"].as_str().unwrap().contains(number)
            });
        found.is_some()
    })
    .await;
    let r = app
        .get(
            &format!("/v1/app/sandbox/emails?account_uuid={uuid}&limit=100"),
            &app.app_token,
        )
        .await;
    for m in r.body["data"].as_array().unwrap() {
        if m["template"] == "past_due" && m["text"].as_str().unwrap().contains(number) {
            text = m["text"].as_str().unwrap().to_owned();
        }
    }
    text
}

/// The operator sets the app's late fee in the dashboard.
pub(crate) async fn set_late_fee(app: &TestApp, percent: &str) -> crate::dashboard::Page {
    let ops = signed_in(
        app,
        &format!("ops-{}@example.com", uuid::Uuid::new_v4()),
        Role::Operator,
        None,
    )
    .await;
    let page = format!("/dashboard/apps/{}", app.app_uuid);
    ops.submit(
        &page,
        &format!("{page}/late-fee"),
        &[("late_fee_percent", percent)],
    )
    .await
}

/// An active customer whose card declines every charge.
pub(crate) async fn non_paying_customer(app: &TestApp, email: &str, esi: &str) -> (String, String) {
    let (uuid, token) = customer(app, email).await;
    walk_to_active(app, &token, esi).await;
    add_card_number(app, &token, DECLINES_LATER).await;
    (uuid, token)
}

both_engines! {
    with relaxed;
    async fn a_bill_due_on_a_holiday_of_the_market_falls_due_the_next_business_day(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "holiday@example.com").await;
        walk_to_active(&app, &token, HOUSE).await;
        // The next weekday holiday of the reference table at least 16 days away.
        let now = today(&app, &uuid).await;
        let holidays = holidays(&app).await;
        let holiday = *holidays
            .iter()
            .find(|h| (**h - now).num_days() >= 16 && !matches!(h.weekday(), Weekday::Sat | Weekday::Sun))
            .unwrap();
        let issue = holiday - Duration::days(16);
        if issue > now {
            advance(&app, &token, (issue - now).num_days()).await;
        }
        assert_eq!(today(&app, &uuid).await, issue);
        let bill = bill_today(&app, &token).await;
        assert_eq!(date(&bill["invoice_date"]), issue);
        let due = date(&bill["payment_due_date"]);
        assert_ne!(due, holiday, "{bill}");
        // The first day after the holiday that is neither a weekend nor another holiday.
        let mut expected = holiday + Duration::days(1);
        while matches!(expected.weekday(), Weekday::Sat | Weekday::Sun) || holidays.contains(&expected) {
            expected += Duration::days(1);
        }
        assert_eq!(due, expected, "{holiday} {bill}");
    }

    async fn the_operator_sets_the_late_fee_and_partners_read_it(app) {
        let r = app.get("/v1/app", &app.app_token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["late_fee_percent"], Value::Null, "off unless set");

        let r = set_late_fee(&app, "4.5").await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let r = app.get("/v1/app", &app.app_token).await;
        assert_eq!(r.body["late_fee_percent"], "4.5", "{}", r.text);

        // Above the rule's 5%, or not a percent: refused, nothing changed.
        for bad in ["5.01", "10", "-1", "0", "abc", "1.234"] {
            let r = set_late_fee(&app, bad).await;
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {}", r.text);
            let r = app.get("/v1/app", &app.app_token).await;
            assert_eq!(r.body["late_fee_percent"], "4.5", "{bad}: {}", r.text);
        }

        // Nobody but the operator sets it.
        let member = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let page = format!("/dashboard/apps/{}", app.app_uuid);
        let r = member.post(&format!("{page}/late-fee"), &[("csrf", "x"), ("late_fee_percent", "1")]).await;
        assert_ne!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let r = app.get("/v1/app", &app.app_token).await;
        assert_eq!(r.body["late_fee_percent"], "4.5");

        // Off again.
        let r = set_late_fee(&app, "off").await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let r = app.get("/v1/app", &app.app_token).await;
        assert_eq!(r.body["late_fee_percent"], Value::Null);
    }

    async fn a_late_fee_is_charged_once_on_the_next_bill_never_on_a_penalized_amount(app) {
        with_meters(&app).await;
        let r = set_late_fee(&app, "5").await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let (uuid, token) = non_paying_customer(&app, "late@example.com", HOUSE).await;

        // Bill A goes unpaid past its due date; the next bill charges 5% of it, rounded down.
        let a = unpaid_bill(&app, (&uuid, &token)).await;
        let a_number = a["number"].as_str().unwrap().to_owned();
        let a_total = a["total_cents"].as_i64().unwrap();
        assert_eq!(group_total(&a, "Late fee"), 0, "{a}");
        // The past-due e-mail says what the next bill will add unless A is paid first.
        let notice = past_due_mail(&app, &uuid, &a_number).await;
        let fee = app::format::dollars(a_total * 5 / 100);
        assert!(notice.contains(&format!("one-time late fee of {fee}")), "{notice}");
        bill_today(&app, &token).await;
        let invoices = all_invoices(&app, &token).await;
        let on_a: Vec<_> = late_fee_lines(&invoices).into_iter().filter(|(_, c)| c["description"] == format!("Late fee on {a_number}")).collect();
        assert_eq!(on_a.len(), 1, "{on_a:?}");
        let (b_number, line) = on_a[0].clone();
        assert_eq!(line["amount_cents"].as_i64().unwrap(), a_total * 5 / 100, "{line}");
        assert_eq!(line["quantity"].as_str().unwrap(), a_total.to_string(), "{line}");
        assert_eq!(line["rate"], "5");
        assert_eq!(line["unit"], "%");
        // The first bill issued after A turned past due carries it.
        let b = invoice(&app, &token, &b_number).await;
        assert!(date(&b["invoice_date"]) > date(&a["payment_due_date"]), "{b}");
        let earlier_after_due: Vec<&Value> = invoices.iter().filter(|i| date(&i["invoice_date"]) > date(&a["payment_due_date"]) && date(&i["invoice_date"]) < date(&b["invoice_date"])).collect();
        assert!(earlier_after_due.is_empty(), "{earlier_after_due:?}");
        // Its own line, counted in the bill's total.
        let lines: i64 = b["charges_groups"].as_array().unwrap().iter().map(|g| g["total_cents"].as_i64().unwrap()).sum();
        assert_eq!(b["total_cents"].as_i64().unwrap(), lines);
        // Announced once (another bill issued meanwhile and left unpaid has its own).
        let events = server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        let charged: Vec<Value> = events
            .iter()
            .filter(|e| e.kind == "invoice.late_fee_charged")
            .map(|e| serde_json::from_str::<Value>(&e.data).unwrap())
            .filter(|d| d["penalized_invoice_number"] == a_number.as_str())
            .collect();
        assert_eq!(charged.len(), 1, "{charged:?}");
        assert_eq!(charged[0]["penalized_invoice_number"], a_number.as_str());
        assert_eq!(charged[0]["invoice_number"], b_number.as_str());
        assert_eq!(charged[0]["amount_cents"], line["amount_cents"]);
        // The e-mail of B says so; the PDF prints the line.
        let r = app.get(&format!("/v1/app/sandbox/emails?account_uuid={uuid}&limit=100"), &app.app_token).await;
        let mail = r.body["data"].as_array().unwrap().iter().find(|m| m["template"] == "bill_ready" && m["text"].as_str().unwrap().contains(&b_number)).cloned().unwrap();
        assert!(mail["text"].as_str().unwrap().contains("one-time late fee"), "{mail}");
        let r = app.get(&format!("/v1/account/billing/invoices/{b_number}/pdf"), &token).await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(r.text.contains(&format!("(Late fee on {a_number})")), "the PDF prints the late fee");

        // B goes unpaid too: the fee on B is on B's own charges, not on A's fee again; A is
        // never charged twice.
        let b = past_due(&app, (&uuid, &token), &b).await;
        let b_fee = group_total(&b, "Late fee");
        assert!(b_fee > 0);
        bill_today(&app, &token).await;
        let invoices = all_invoices(&app, &token).await;
        let lines = late_fee_lines(&invoices);
        let on_b: Vec<_> = lines.iter().filter(|(_, c)| c["description"] == format!("Late fee on {b_number}")).collect();
        assert_eq!(on_b.len(), 1, "{lines:?}");
        let b_base = b["total_cents"].as_i64().unwrap() - b_fee;
        assert_eq!(on_b[0].1["quantity"].as_str().unwrap(), b_base.to_string(), "{:?}", on_b[0]);
        assert_eq!(on_b[0].1["amount_cents"].as_i64().unwrap(), b_base * 5 / 100);
        assert_eq!(lines.iter().filter(|(_, c)| c["description"] == format!("Late fee on {a_number}")).count(), 1, "{lines:?}");
        // No fee is ever above 5% of what it is on.
        for (_, c) in &lines {
            let base: i64 = c["quantity"].as_str().unwrap().parse().unwrap();
            assert!(c["amount_cents"].as_i64().unwrap() * 100 <= base * 5, "{c}");
        }

        // The customer pays everything with a new card: nothing is past due any more, and the
        // next bill charges no late fee.
        add_card_number(&app, &token, "4242424242424242").await;
        for i in all_invoices(&app, &token).await {
            if i["status"] == "past_due" || i["status"] == "open" {
                let number = i["number"].as_str().unwrap();
                let r = app.post(&format!("/v1/account/billing/invoices/{number}/pay"), &token, &Value::Null).await;
                assert_eq!(r.status, StatusCode::OK, "{}", r.text);
                assert_eq!(invoice(&app, &token, number).await["status"], "paid");
            }
        }
        let before = late_fee_lines(&all_invoices(&app, &token).await).len();
        advance(&app, &token, 1).await;
        let next = bill_today(&app, &token).await;
        assert_eq!(group_total(&next, "Late fee"), 0, "{next}");
        assert_eq!(late_fee_lines(&all_invoices(&app, &token).await).len(), before);
    }

    async fn no_late_fee_when_the_app_charges_none_or_the_customer_is_exempt(app) {
        with_meters(&app).await;
        // Off (the default): a past-due bill brings no fee.
        let (uuid, token) = non_paying_customer(&app, "off@example.com", HOUSE).await;
        let off = unpaid_bill(&app, (&uuid, &token)).await;
        let notice = past_due_mail(&app, &uuid, off["number"].as_str().unwrap()).await;
        assert!(!notice.contains("late fee"), "{notice}");
        bill_today(&app, &token).await;
        assert!(late_fee_lines(&all_invoices(&app, &token).await).is_empty());
        assert!(!event_types(&app, &uuid).await.iter().any(|t| t == "invoice.late_fee_charged"));

        // On, but the operator marked the customer exempt.
        let r = set_late_fee(&app, "5").await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let (other, other_token) = non_paying_customer(&app, "exempt@example.com", OTHER_HOUSE).await;
        let ops = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let page = format!("/dashboard/accounts/{other}");
        let r = ops.submit(&page, &format!("{page}/late-fee-exemption"), &[("exempt", "on")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(ops.get(&page).await.text.contains("Exempt from late fees"));
        let spared = unpaid_bill(&app, (&other, &other_token)).await;
        let notice = past_due_mail(&app, &other, spared["number"].as_str().unwrap()).await;
        assert!(!notice.contains("late fee"), "{notice}");
        bill_today(&app, &other_token).await;
        assert!(late_fee_lines(&all_invoices(&app, &other_token).await).is_empty());
        assert!(!event_types(&app, &other).await.iter().any(|t| t == "invoice.late_fee_charged"));

        // The first customer, not exempt, is charged on the next bill after one left unpaid
        // now; never on the bill left unpaid while the app charged none (its next bill came
        // and went).
        let first = all_invoices(&app, &token).await[0]["number"].as_str().unwrap().to_owned();
        advance(&app, &token, 1).await;
        let c = unpaid_bill(&app, (&uuid, &token)).await;
        bill_today(&app, &token).await;
        let lines = late_fee_lines(&all_invoices(&app, &token).await);
        let on = |n: &str| lines.iter().filter(|(_, l)| l["description"] == format!("Late fee on {n}")).count();
        assert_eq!(on(c["number"].as_str().unwrap()), 1, "{lines:?}");
        assert_eq!(on(&first), 0, "{lines:?}");
    }
}

both_engines! {
    with relaxed;
    async fn the_bill_prints_the_contract_end_the_deposit_held_and_the_commission(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "deposit-bill@example.com").await;
        // The sandbox's SSN that asks for a deposit; paid with the saved card.
        let r = app.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": HOUSE})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let plan = first_plan(&app, &token, HOUSE).await;
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let r = accept(&app, &token, &plan, HOUSE, &start).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        add_card(&app, &token).await;
        let r = app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-0005", "consent": true})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
        let r = app.post("/v1/account/enroll/finalize", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 1).await;
        app.eventually("the deposit is asked", || async {
            app.get("/v1/account/deposit", &token).await.body["status"] == "required"
        }).await;
        let r = app.post("/v1/account/deposit/pay", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let held = r.body["paid_cents"].as_i64().unwrap();
        assert!(held > 0);
        advance(&app, &token, 6).await;
        advance(&app, &token, 14).await;
        settles_at(&app, &token, pair("active", "active")).await;

        let bill = bill_today(&app, &token).await;
        let number = bill["number"].as_str().unwrap();
        let r = app.get(&format!("/v1/account/billing/invoices/{number}/pdf"), &token).await;
        assert_eq!(r.status, StatusCode::OK);
        for printed in [
            "(Contract ends)".to_owned(),
            "(Deposit held)".to_owned(),
            format!("({})", app::format::dollars(held)),
            "customer@puc.texas.gov".to_owned(),
            "www.puc.texas.gov".to_owned(),
        ] {
            assert!(r.text.contains(&printed), "the PDF prints {printed}");
        }
        // Without a deposit, no deposit line.
        let (_, plain) = customer(&app, "no-deposit@example.com").await;
        walk_to_active(&app, &plain, OTHER_HOUSE).await;
        let bill = bill_today(&app, &plain).await;
        let number = bill["number"].as_str().unwrap();
        let r = app.get(&format!("/v1/account/billing/invoices/{number}/pdf"), &plain).await;
        assert!(!r.text.contains("(Deposit held)"));
        assert!(r.text.contains("customer@puc.texas.gov"));
        assert!(event_types(&app, &uuid).await.iter().any(|t| t == "account.deposit_paid"));
    }
}
