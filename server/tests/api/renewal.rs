//! Renewal through the HTTP API: an account seeded with active service is moved by its sandbox
//! clock into the renewal window (90 days before its contract ends), requests renewal plans,
//! accepts one (or a custom plan the app priced for it), and sees the renewal take over the day
//! after the old contract ends.

use reqwest::StatusCode;
use rust_decimal::Decimal;
use serde_json::{json, Value};

use crate::{
    enrollment::{
        advance, customer, days_after, event_types, on_to_hour, relaxed, with_meters, HOUSE,
    },
    helpers::{TestApp, TestResponse},
};

const OTHER_HOUSE: &str = "10443720000200002";

/// A seeded account with active service: (uuid, token, location uuid, contract end date).
async fn seeded(app: &TestApp, email: &str) -> (String, String, String, String) {
    with_meters(app).await;
    let (uuid, token) = customer(app, email).await;
    let r = app
        .post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let location = &r.body["locations"][0];
    let end = location["contract_end"].as_str().unwrap().to_owned();
    (
        uuid,
        token,
        location["uuid"].as_str().unwrap().to_owned(),
        end,
    )
}

/// Today on the account's clock.
async fn today(app: &TestApp, uuid: &str) -> String {
    let clock = app
        .state
        .clock
        .for_account(&app.state.db, uuid.parse().unwrap())
        .await
        .unwrap();
    clock.today().to_string()
}

/// A decimal the API gives as a string (or a number).
fn decimal(v: &Value) -> Decimal {
    match v.as_str() {
        Some(s) => s.parse().unwrap(),
        None => v.to_string().parse().unwrap(),
    }
}

fn days_between(from: &str, to: &str) -> i64 {
    let d = |s: &str| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    (d(to) - d(from)).num_days()
}

/// Moves the account's clock to `days_before` days before the contract ends.
async fn to_days_before_end(
    app: &TestApp,
    (uuid, token): (&str, &str),
    end: &str,
    days_before: i64,
) {
    let today = today(app, uuid).await;
    let days = days_between(&today, end) - days_before;
    assert!(
        days > 0,
        "{today} is already {days_before} days before {end} or later"
    );
    advance(app, token, days).await;
}

async fn request(app: &TestApp, token: &str, location: &str) -> TestResponse {
    app.post(
        &format!("/v1/account/locations/{location}/renewal-plans/request"),
        token,
        &Value::Null,
    )
    .await
}

async fn accept(app: &TestApp, token: &str, location: &str, body: &Value) -> TestResponse {
    app.post(
        &format!("/v1/account/locations/{location}/renewal-plans/accept"),
        token,
        body,
    )
    .await
}

async fn contracts(app: &TestApp, uuid: &str) -> Vec<server::store::enrollment::ContractRow> {
    server::store::enrollment::contracts_of_account(&app.state.db, uuid.parse().unwrap())
        .await
        .unwrap()
}

both_engines! {
    at [early_morning, fall_back_night, spring_forward_eve];
    with relaxed;
    async fn renewal_plans_are_offered_only_inside_the_window(app) {
        let (uuid, token, location, end) = seeded(&app, "renew-window@example.com").await;
        let r = request(&app, &token, &location).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "renewal_not_eligible"), "{}", r.text);
        to_days_before_end(&app, (&uuid, &token), &end, 91).await;
        let r = request(&app, &token, &location).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "renewal_not_eligible"), "{}", r.text);
        assert!(!event_types(&app, &uuid).await.iter().any(|t| t == "location.renewal_plan_requested"));

        advance(&app, &token, 1).await;
        let count = |types: Vec<String>, kind: &str| types.iter().filter(|t| *t == kind).count();
        let plan_requests = count(event_types(&app, &uuid).await, "enrollment.plan_requested");
        let r = request(&app, &token, &location).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let plans = r.body["plans"].as_array().unwrap();
        assert!(!plans.is_empty(), "{}", r.text);
        let start = days_after(&end, 1);
        for p in plans {
            assert_eq!(p["earliest_start_date"], json!(start), "{p}");
            assert_eq!(p["latest_start_date"], json!(start), "{p}");
            assert_eq!(p["is_renewal"], true, "{p}");
        }
        // Priced with the same model as a new customer's plans: the same groups.
        let fresh = app.post(&format!("/v1/app/accounts/{uuid}/enroll/plans/request"), &app.app_token, &json!({"esi_id": HOUSE})).await;
        assert_eq!(fresh.status, StatusCode::OK, "{}", fresh.text);
        let groups = |ps: &Value| {
            let mut g: Vec<String> = ps.as_array().unwrap().iter().map(|p| p["plan_group_uuid"].as_str().unwrap().to_owned()).collect();
            g.sort();
            g
        };
        assert_eq!(groups(&r.body["plans"]), groups(&fresh.body["plans"]));
        let events = server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        let requested: Vec<_> = events.iter().filter(|e| e.kind == "location.renewal_plan_requested").collect();
        assert_eq!(requested.len(), 1);
        let data: Value = serde_json::from_str(&requested[0].data).unwrap();
        assert_eq!(data["location_uuid"], json!(location));
        assert_eq!(data["plan_uuids"].as_array().unwrap().len(), plans.len());
        // The renewal request is not an enrollment plan request (the app's own request is).
        assert_eq!(count(event_types(&app, &uuid).await, "enrollment.plan_requested"), plan_requests + 1);

        // Another account's location is not found.
        let (_, other) = customer(&app, "renew-other@example.com").await;
        let r = request(&app, &other, &location).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
    }

    async fn an_accepted_renewal_is_queued_then_takes_over_after_the_end(app) {
        let (uuid, token, location, end) = seeded(&app, "renew-accept@example.com").await;
        let r = request(&app, &token, &location).await;
        assert_eq!(r.code(), "renewal_not_eligible");
        // Outside the window even a well-formed acceptance is refused.
        to_days_before_end(&app, (&uuid, &token), &end, 60).await;
        // The 60-day notice goes out at its hour that day; accept after it.
        on_to_hour(&app, (&uuid, &token), server::domain::renewal::NOTICE_HOUR as u32).await;
        let plans = request(&app, &token, &location).await;
        assert_eq!(plans.status, StatusCode::OK, "{}", plans.text);
        let plan = plans.body["plans"].as_array().unwrap().iter().find(|p| p["plan_type"] == "fixed").unwrap().clone();
        let start = days_after(&end, 1);
        // The start date may be left out: a renewal has one allowed day.
        let ok = json!({"plan_uuid": plan["plan_uuid"], "terms_accepted": true});

        for (body, status, code, param) in [
            (json!({"plan_uuid": plan["plan_uuid"], "service_start_date": start, "terms_accepted": false}), StatusCode::UNPROCESSABLE_ENTITY, "terms_not_accepted", "terms_accepted"),
            (json!({"plan_uuid": plan["plan_uuid"], "service_start_date": start}), StatusCode::BAD_REQUEST, "parameter_missing", "terms_accepted"),
            (json!({"plan_uuid": plan["plan_uuid"], "service_start_date": end, "terms_accepted": true}), StatusCode::UNPROCESSABLE_ENTITY, "start_date_out_of_range", "service_start_date"),
            (json!({"plan_uuid": plan["plan_uuid"], "service_start_date": days_after(&end, 2), "terms_accepted": true}), StatusCode::UNPROCESSABLE_ENTITY, "start_date_out_of_range", "service_start_date"),
            (json!({"plan_uuid": uuid::Uuid::new_v4(), "service_start_date": start, "terms_accepted": true}), StatusCode::NOT_FOUND, "resource_missing", "plan_uuid"),
        ] {
            let r = accept(&app, &token, &location, &body).await;
            assert_eq!((r.status, r.code()), (status, code), "{body}: {}", r.text);
            assert_eq!(r.body["error"]["param"], param, "{}", r.text);
            if code == "start_date_out_of_range" {
                assert_eq!(r.body["error"]["earliest_start_date"], json!(start), "{}", r.text);
                assert_eq!(r.body["error"]["latest_start_date"], json!(start), "{}", r.text);
            }
        }
        assert_eq!(contracts(&app, &uuid).await.len(), 1, "nothing written by a refusal");

        let r = accept(&app, &token, &location, &ok).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let contract = &r.body["contract"];
        assert_eq!(contract["status"], "pending");
        assert_eq!(contract["start_date"], json!(start));
        assert_eq!(contract["plan_uuid"], plan["plan_uuid"]);
        let renewal_uuid = contract["uuid"].as_str().unwrap().to_owned();
        let types = event_types(&app, &uuid).await;
        assert_eq!(types.iter().filter(|t| *t == "location.renewal_plan_accepted").count(), 1, "{types:?}");

        // Once is enough.
        let r = accept(&app, &token, &location, &ok).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "plan_already_accepted"), "{}", r.text);
        assert_eq!(contracts(&app, &uuid).await.len(), 2);

        // One confirmation, carrying the new contract's documents.
        let sent = app.get(&format!("/v1/app/sandbox/emails?account_uuid={uuid}&limit=100"), &app.app_token).await;
        let confirmed: Vec<&Value> = sent.body["data"].as_array().unwrap().iter().filter(|e| e["template"] == "renewal_confirmed").collect();
        assert_eq!(confirmed.len(), 1, "{}", sent.text);
        assert_eq!(confirmed[0]["subject"], "Your renewal is confirmed");
        let text = confirmed[0]["text"].as_str().unwrap();
        let starts = app::format::long_date(chrono::NaiveDate::parse_from_str(&start, "%Y-%m-%d").unwrap());
        assert!(text.contains(plan["name"].as_str().unwrap()) && text.contains(&format!("starting on {starts}")), "{text}");
        assert!(text.contains("Attached are the documents of your new contract"), "{text}");
        let kinds: Vec<&str> = confirmed[0]["attachments"].as_array().unwrap().iter()
            .map(|a| a["filename"].as_str().unwrap().split('-').next().unwrap())
            .collect();
        let mut kinds = kinds;
        kinds.sort_unstable();
        assert_eq!(kinds, ["efl", "tos", "yrac"], "{}", confirmed[0]);

        // The renewal's documents are queued; the current contract's stay active.
        let docs = app.get(&format!("/v1/account/locations/{location}/all-documents"), &token).await;
        assert_eq!(docs.status, StatusCode::OK, "{}", docs.text);
        let data = docs.body["data"].as_array().unwrap();
        let queued: Vec<&Value> = data.iter().filter(|d| d["status"] == "queued").collect();
        assert_eq!(queued.len(), 3, "{}", docs.text);
        assert!(queued.iter().all(|d| d["effective_date"] == json!(start)));
        let plan_documents = |status: &str| data.iter().filter(|d| d["status"] == status && d["kind"] != "renewal_notice").count();
        assert_eq!(plan_documents("active"), 3);
        // The 90- and 60-day expiration notices went out before the acceptance.
        let notices: Vec<&Value> = data.iter().filter(|d| d["kind"] == "renewal_notice").collect();
        assert_eq!(notices.len(), 2, "{}", docs.text);
        assert!(notices.iter().all(|d| d["status"] == "active"));
        let me = app.get(&format!("/v1/account/locations/{location}"), &token).await;
        assert_eq!(me.body["contract_end"], json!(end), "the current contract is still in force");

        // The utility confirming service again does not start the renewal early.
        let r = app.post("/v1/account/sandbox/simulate", &token, &json!({"event": "service_active"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 1).await;
        let all = contracts(&app, &uuid).await;
        assert_eq!(all.iter().find(|c| c.uuid.to_string() == renewal_uuid).unwrap().status.as_str(), "pending", "{all:?}");
        assert_eq!(all.iter().filter(|c| c.status.as_str() == "active").count(), 1, "{all:?}");

        // The day it ends nothing changes; the day after, the renewal is in force.
        to_days_before_end(&app, (&uuid, &token), &end, 0).await;
        let all = contracts(&app, &uuid).await;
        assert_eq!(all.iter().find(|c| c.uuid.to_string() == renewal_uuid).unwrap().status.as_str(), "pending");
        advance(&app, &token, 1).await;
        app.eventually("the renewal starts", || async {
            contracts(&app, &uuid).await.iter().any(|c| c.uuid.to_string() == renewal_uuid && c.status.as_str() == "active")
        }).await;
        let all = contracts(&app, &uuid).await;
        let statuses: Vec<(&str, bool)> = all.iter().map(|c| (c.status.as_str(), c.uuid.to_string() == renewal_uuid)).collect();
        assert_eq!(statuses.len(), 2);
        assert!(statuses.contains(&("ended", false)) && statuses.contains(&("active", true)), "{statuses:?}");
        let me = app.get(&format!("/v1/account/locations/{location}"), &token).await;
        assert_eq!(me.body["contract_start"], json!(start), "{}", me.text);
        assert_eq!(me.body["plan_uuid"], plan["plan_uuid"]);
        assert_eq!(me.body["is_service_active"], true);
        let docs = app.get(&format!("/v1/account/locations/{location}/all-documents"), &token).await;
        let data = docs.body["data"].as_array().unwrap();
        assert_eq!(data.iter().filter(|d| d["status"] == "queued").count(), 0, "{}", docs.text);
        assert!(data.iter().filter(|d| d["status"] == "active").all(|d| d["effective_date"] == json!(start)));
        let mut superseded: Vec<&str> = data.iter().filter(|d| d["status"] == "superseded").map(|d| d["kind"].as_str().unwrap()).collect();
        superseded.sort_unstable();
        assert_eq!(superseded, ["efl", "renewal_notice", "renewal_notice", "tos", "yrac"], "no notice after the acceptance");

        // The cycle that spans the switch bills each day at its own contract's energy rate.
        advance(&app, &token, 35).await;
        let list = app.get("/v1/account/billing/invoices?limit=100", &token).await;
        let spanning = list.body["data"].as_array().unwrap().iter()
            .find(|i| i["billing_period_start"].as_str().unwrap() <= end.as_str() && i["billing_period_end"].as_str().unwrap() > end.as_str())
            .unwrap_or_else(|| panic!("no cycle spans {end}: {}", list.text)).clone();
        let detail = app.get(&format!("/v1/account/billing/invoices/{}", spanning["number"].as_str().unwrap()), &token).await;
        assert_eq!(detail.status, StatusCode::OK, "{}", detail.text);
        let energy: Vec<Value> = detail.body["charges_groups"].as_array().unwrap().iter()
            .flat_map(|g| g["charges"].as_array().unwrap().clone())
            .filter(|c| c["description"] == "Energy charge")
            .collect();
        let rate_of = |raw: &str| -> Decimal {
            let v: Value = serde_json::from_str(raw).unwrap();
            v["energy_cents_per_kwh"].as_str().unwrap().parse().unwrap()
        };
        let all = contracts(&app, &uuid).await;
        let old = all.iter().find(|c| c.uuid.to_string() != renewal_uuid).unwrap();
        let new = all.iter().find(|c| c.uuid.to_string() == renewal_uuid).unwrap();
        let rates: Vec<Decimal> = energy.iter().map(|c| decimal(&c["rate"])).collect();
        assert_eq!(rates, [rate_of(&old.rates), rate_of(&new.rates)], "{}", detail.text);
        let through_end: Decimal = detail.body["usage"]["daily"].as_array().unwrap().iter()
            .filter(|d| d["date"].as_str().unwrap() <= end.as_str())
            .map(|d| decimal(&d["consumption"]))
            .sum();
        assert_eq!(decimal(&energy[0]["quantity"]), through_end, "the old contract's days");
        let kwh: Decimal = energy.iter().map(|c| decimal(&c["quantity"])).sum();
        assert_eq!(kwh, decimal(&spanning["total_kwh"]), "{}", detail.text);
        for c in &energy {
            let exact = decimal(&c["quantity"]) * decimal(&c["rate"]);
            let cents = exact.round_dp_with_strategy(0, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
            assert_eq!(Decimal::from(c["amount_cents"].as_i64().unwrap()), cents, "{c}");
        }
    }

    async fn a_custom_plan_of_the_app_renews_and_stale_or_foreign_plans_do_not(app) {
        let (uuid, token, location, end) = seeded(&app, "renew-custom@example.com").await;
        to_days_before_end(&app, (&uuid, &token), &end, 80).await;
        let start = days_after(&end, 1);
        let custom = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &json!({"esi_id": HOUSE, "account_uuid": uuid, "term_months": 24})).await;
        assert_eq!(custom.status, StatusCode::OK, "{}", custom.text);
        let custom = custom.body["plans"].as_array().unwrap().iter().find(|p| p["plan_type"] == "fixed").unwrap().clone();
        let foreign = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &json!({"esi_id": OTHER_HOUSE})).await;
        assert_eq!(foreign.status, StatusCode::OK, "{}", foreign.text);
        let foreign = foreign.body["plans"][0].clone();
        let renewal = request(&app, &token, &location).await.body["plans"][0].clone();
        let body = |p: &Value| json!({"plan_uuid": p["plan_uuid"], "service_start_date": start, "terms_accepted": true});

        let r = accept(&app, &token, &location, &body(&foreign)).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{}", r.text);
        // A week later the renewal plan's price has expired.
        advance(&app, &token, 8).await;
        let r = accept(&app, &token, &location, &body(&renewal)).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "plan_expired"), "{}", r.text);
        assert_eq!(contracts(&app, &uuid).await.len(), 1);

        // A fresh custom plan of the app for this account is accepted as the renewal.
        let custom_fresh = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &json!({"esi_id": HOUSE, "account_uuid": uuid, "term_months": 24})).await;
        let custom_fresh = custom_fresh.body["plans"].as_array().unwrap().iter().find(|p| p["plan_type"] == "fixed").unwrap().clone();
        assert_ne!(custom_fresh["plan_uuid"], custom["plan_uuid"]);
        let r = accept(&app, &token, &location, &body(&custom_fresh)).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["contract"]["term_months"], 24);
        assert_eq!(r.body["contract"]["start_date"], json!(start));
        assert_eq!(r.body["contract"]["status"], "pending");
        // Cancelling the location drops the queued renewal.
        let today = today(&app, &uuid).await;
        let r = app.post(&format!("/v1/account/locations/{location}/cancel-service"), &token, &json!({"final_service_date": days_after(&today, 2), "reason": "moving"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 3).await;
        app.eventually("the location is cancelled", || async {
            contracts(&app, &uuid).await.iter().all(|c| c.status.as_str() == "ended" || c.status.as_str() == "cancelled")
        }).await;
        let all = contracts(&app, &uuid).await;
        assert!(all.iter().any(|c| c.status.as_str() == "cancelled" && c.start_date.to_string() == start), "{all:?}");
    }
}

/// Cents of `x` cents, half away from zero, as every bill line rounds.
fn cents(x: Decimal) -> i64 {
    use rust_decimal::prelude::ToPrimitive;
    x.round_dp_with_strategy(0, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
        .to_i64()
        .unwrap()
}

/// One month billed by hand at a plan's rates: the energy and base charge, the utility's
/// delivery charges, the solar credit, and the taxes on the sum of those lines.
pub(crate) fn month_by_hand(
    plan: &Value,
    kwh: Decimal,
    exported: Decimal,
    gross_receipts: Decimal,
) -> i64 {
    let rates = &plan["rates"];
    let energy = cents(kwh * decimal(&rates["energy_cents_per_kwh"]));
    let base = rates["base_charge_cents_per_month"].as_i64().unwrap();
    let fixed = rates["tdu_fixed_cents_per_month"].as_i64().unwrap();
    let delivery = cents(kwh * decimal(&rates["tdu_cents_per_kwh"]));
    let buyback = decimal(&rates["solar_buyback_cents_per_kwh"]);
    let credit = if exported > Decimal::ZERO && buyback > Decimal::ZERO {
        cents(exported * buyback)
    } else {
        0
    };
    let taxable = energy + base + fixed + delivery - credit;
    let assessment = cents(Decimal::from(taxable) * Decimal::new(1667, 4) / Decimal::ONE_HUNDRED);
    let receipts = if gross_receipts > Decimal::ZERO {
        cents(Decimal::from(taxable) * gross_receipts / Decimal::ONE_HUNDRED)
    } else {
        0
    };
    taxable + assessment + receipts
}

both_engines! {
    with relaxed;
    async fn renewal_plans_are_priced_on_the_homes_own_year_cheapest_first(app) {
        let (uuid, token, location, end) = seeded(&app, "renew-true-cost@example.com").await;
        to_days_before_end(&app, (&uuid, &token), &end, 60).await;
        let r = request(&app, &token, &location).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let plans = r.body["plans"].as_array().unwrap().clone();
        assert!(plans.len() >= 2, "{}", r.text);

        // The twelve whole months before this one.
        let today: chrono::NaiveDate = today(&app, &uuid).await.parse().unwrap();
        let window = server::domain::estimate::last_twelve_months(today);
        let basis = &plans[0]["estimate_basis"];
        assert_eq!(basis["kind"], "usage_history", "{basis}");
        assert_eq!(basis["from"], json!(window[0].to_string()), "{basis}");
        assert_eq!(basis["months_of_usage"].as_i64().unwrap() + basis["months_estimated"].as_i64().unwrap(), 12, "{basis}");

        // The home's usage, month by month, as its daily usage shows it; a month the meter did
        // not report every day of is counted at the average of the whole ones.
        use chrono::Datelike;
        let mut whole = Vec::new();
        for month in &window {
            let r = app
                .get(&format!("/v1/account/locations/{location}/usage/daily?year={}&month={}", month.year(), month.month()), &token)
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
            let days = r.body["days"].as_array().unwrap();
            let length = server::domain::usage::last_of_month(month.year(), month.month()).day() as usize;
            if days.len() == length {
                let sum = |k: &str| days.iter().map(|d| decimal(&d[k])).sum::<Decimal>();
                whole.push((*month, sum("consumption"), sum("generation")));
            }
        }
        assert!(!whole.is_empty());
        assert_eq!(basis["months_of_usage"].as_i64().unwrap() as usize, whole.len(), "{basis}");
        let n = Decimal::from(whole.len());
        let average = |f: fn(&(chrono::NaiveDate, Decimal, Decimal)) -> Decimal| (whole.iter().map(f).sum::<Decimal>() / n).round_dp(3);
        let (avg_kwh, avg_exported) = (average(|w| w.1), average(|w| w.2));
        // The gross receipts percent of the home's city, as its bills show it (none outside
        // city limits).
        let bills = app.get("/v1/account/billing/invoices?limit=1", &token).await;
        let number = bills.body["data"][0]["number"].as_str().unwrap().to_owned();
        let bill = app.get(&format!("/v1/account/billing/invoices/{number}"), &token).await;
        let gross_receipts = bill.body["charges_groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["charges"].as_array().unwrap().clone())
            .find(|c| c["description"] == "Gross receipts reimbursement")
            .map(|c| decimal(&c["rate"]))
            .unwrap_or_default();
        let by_hand = |plan: &Value| -> i64 {
            window
                .iter()
                .map(|m| match whole.iter().find(|w| w.0 == *m) {
                    Some(w) => month_by_hand(plan, w.1, w.2, gross_receipts),
                    None => month_by_hand(plan, avg_kwh, avg_exported, gross_receipts),
                })
                .sum()
        };
        for p in &plans {
            assert_eq!(p["estimated_annual_cost_cents"].as_i64(), Some(by_hand(p)), "{p}");
        }
        // Cheapest first.
        let costs: Vec<i64> = plans.iter().map(|p| p["estimated_annual_cost_cents"].as_i64().unwrap()).collect();
        let mut sorted = costs.clone();
        sorted.sort();
        assert_eq!(costs, sorted);
        // The EFL's averages are still there.
        assert!(plans[0]["average_price_cents_per_kwh"]["kwh_1000"].is_string(), "{}", plans[0]);
    }
}
