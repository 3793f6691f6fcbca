//! A contract's whole life through the HTTP API on the account's sandbox clock: the expiration
//! notices before a fixed contract ends (e-mails with the renewal link and their events), the
//! month-to-month rollover when nobody renews, a renewal taking over instead, a move-out in the
//! last days without fee, the Terms of Service promising exactly that, and demo data inside
//! the renewal window.

use reqwest::{Method, StatusCode};
use rust_decimal::Decimal;
use serde_json::{json, Value};

use crate::{
    enrollment::{
        accept as accept_plan, advance, customer, days_after, relaxed, with_meters, HOUSE,
    },
    helpers::TestApp,
};
use server::domain::renewal::NOTICE_DAYS_BEFORE;

/// A seeded account with active service: (uuid, token, location uuid, contract end date).
async fn seeded(app: &TestApp, email: &str) -> (String, String, String, String) {
    with_meters(app).await;
    let (uuid, token) = customer(app, email).await;
    let r = app
        .post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let location = &r.body["locations"][0];
    (
        uuid,
        token,
        location["uuid"].as_str().unwrap().to_owned(),
        location["contract_end"].as_str().unwrap().to_owned(),
    )
}

async fn today(app: &TestApp, uuid: &str) -> String {
    let clock = app
        .state
        .clock
        .for_account(&app.state.db, uuid.parse().unwrap())
        .await
        .unwrap();
    clock.today().to_string()
}

fn days_between(from: &str, to: &str) -> i64 {
    let d = |s: &str| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    (d(to) - d(from)).num_days()
}

/// Moves the account's clock to `days` days after the contract's end (negative: before it).
async fn to_end_plus(app: &TestApp, (uuid, token): (&str, &str), end: &str, days: i64) {
    let today = today(app, uuid).await;
    let step = days_between(&today, end) + days;
    assert!(step > 0, "{today} is already past {end} + {days}");
    advance(app, token, step).await;
}

/// The renewal reminders the sandbox outbox holds for the account, oldest first.
async fn reminders(app: &TestApp, uuid: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/app/sandbox/emails?account_uuid={uuid}&limit=100"),
            &app.app_token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let mut list: Vec<Value> = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["template"] == "renewal_reminder")
        .cloned()
        .collect();
    list.sort_by_key(|e| e["created_at"].as_str().unwrap_or_default().to_owned());
    list
}

/// The data of the account's `location.renewal_email_sent` events, oldest first.
async fn notice_events(app: &TestApp, uuid: &str) -> Vec<Value> {
    server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap())
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "location.renewal_email_sent")
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect()
}

async fn contracts(app: &TestApp, uuid: &str) -> Vec<server::store::enrollment::ContractRow> {
    server::store::enrollment::contracts_of_account(&app.state.db, uuid.parse().unwrap())
        .await
        .unwrap()
}

fn energy_rate(rates: &str) -> Decimal {
    let v: Value = serde_json::from_str(rates).unwrap();
    v["energy_cents_per_kwh"].as_str().unwrap().parse().unwrap()
}

fn decimal(v: &Value) -> Decimal {
    match v.as_str() {
        Some(s) => s.parse().unwrap(),
        None => v.to_string().parse().unwrap(),
    }
}

/// The energy rates of the invoice whose cycle spans the day after `end`, in the order billed.
async fn energy_rates_across(app: &TestApp, token: &str, end: &str) -> Vec<Decimal> {
    let list = app
        .get("/v1/account/billing/invoices?limit=100", token)
        .await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.text);
    let spanning = list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| {
            i["billing_period_start"].as_str().unwrap() <= end
                && i["billing_period_end"].as_str().unwrap() > end
        })
        .unwrap_or_else(|| panic!("no cycle spans {end}: {}", list.text))
        .clone();
    let detail = app
        .get(
            &format!(
                "/v1/account/billing/invoices/{}",
                spanning["number"].as_str().unwrap()
            ),
            token,
        )
        .await;
    assert_eq!(detail.status, StatusCode::OK, "{}", detail.text);
    detail.body["charges_groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["charges"].as_array().unwrap().clone())
        .filter(|c| c["description"] == "Energy charge")
        .map(|c| decimal(&c["rate"]))
        .collect()
}

/// Opens a signed document link: its content type and its text.
pub(crate) async fn pdf(app: &TestApp, url: &str) -> (String, String) {
    let r = app.client.get(url).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK, "{url}");
    let kind = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let bytes = r.bytes().await.unwrap();
    (kind, server::documents::pdf_text(&bytes))
}

/// A date as the documents print it (`November 30, 2027`).
fn end_long(day: &str) -> String {
    app::format::long_date(chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").unwrap())
}

async fn app_slug(app: &TestApp) -> String {
    server::store::apps::app_by_uuid(&app.state.db, app.app_uuid)
        .await
        .unwrap()
        .unwrap()
        .slug
}

both_engines! {
    at [early_morning, fall_back_night, spring_forward_eve];
    with relaxed;
    async fn nobody_renews_three_notices_then_month_to_month(app) {
        let (uuid, token, location, end) = seeded(&app, "life-m2m@example.com").await;
        let old = contracts(&app, &uuid).await.remove(0);
        // The app's month-to-month product now comes under newer terms: the rollover still
        // keeps the terms the customer agreed to.
        let groups = server::store::market::plan_groups_of_app(&app.state.db, app.app_uuid).await.unwrap();
        let monthly_group = groups.iter().find(|g| g.is_month_to_month_default).unwrap();
        let newer = server::store::market::PlanGroupRow {
            uuid: uuid::Uuid::new_v4(),
            name: "Month-to-Month Variable 2099".to_owned(),
            tos_version: "2099.1".to_owned(),
            position: -1,
            ..monthly_group.clone()
        };
        // An app has one month-to-month default: the newer group takes it over.
        let former = server::store::market::PlanGroupRow {
            is_month_to_month_default: false,
            version: monthly_group.version + 1,
            ..monthly_group.clone()
        };
        let mut tx = app.state.db.begin().await.unwrap();
        assert!(server::store::market::update_plan_group(&mut tx, &former, monthly_group.version).await.unwrap());
        server::store::market::insert_plan_group(&mut tx, &newer).await.unwrap();
        tx.commit().await.unwrap();
        assert_ne!(newer.tos_version, old.tos_version);

        // The day before the first notice nothing has gone out.
        to_end_plus(&app, (&uuid, &token), &end, -91).await;
        assert!(reminders(&app, &uuid).await.is_empty());
        assert!(notice_events(&app, &uuid).await.is_empty());

        // Thirteen months after the start: past the end, and a cycle after it billed.
        to_end_plus(&app, (&uuid, &token), &end, 35).await;
        let sent = reminders(&app, &uuid).await;
        assert_eq!(sent.len(), 3, "{sent:#?}");
        // Each notice's button is a single-use link to the hosted renewal.
        let link = format!("Choose a renewal plan: {}/hosted/link?token=swb_link_", app.state.config.public_url());
        for (e, days) in sent.iter().zip(NOTICE_DAYS_BEFORE) {
            assert_eq!(e["subject"], json!(format!("Your electricity plan ends in {days} days")), "{e}");
            assert!(e["text"].as_str().unwrap().contains(&link), "{e}");
            assert_eq!(e["to"], "life-m2m@example.com");
        }
        // The notice itself (and its PDF, kept for good) names the lasting address.
        let lasting = format!("{}/go/{}/renew/{location}", app.state.config.public_url(), app_slug(&app).await);
        let kept = app.query_texts("SELECT renewal_url FROM renewal_notices").await;
        assert!(kept.iter().all(|u| u.as_deref() == Some(lasting.as_str())), "{kept:?}");
        let events = notice_events(&app, &uuid).await;
        let days: Vec<i64> = events.iter().map(|e| e["days_left"].as_i64().unwrap()).collect();
        assert_eq!(days, NOTICE_DAYS_BEFORE);
        assert!(events.iter().all(|e| e["location_uuid"] == json!(location) && e["contract_end"] == json!(end)));

        // The day after the end the location is on the month-to-month plan, same terms.
        let all = contracts(&app, &uuid).await;
        assert_eq!(all.len(), 2, "{all:?}");
        let old_now = all.iter().find(|c| c.uuid == old.uuid).unwrap();
        assert_eq!(old_now.status.as_str(), "ended");
        let monthly = all.iter().find(|c| c.uuid != old.uuid).unwrap();
        assert_eq!(monthly.status.as_str(), "active");
        assert_eq!(monthly.plan_type, "month_to_month");
        assert_eq!(monthly.start_date.to_string(), days_after(&end, 1));
        assert_eq!(monthly.end_date, None);
        assert_eq!(monthly.plan_name, newer.name, "the app's month-to-month product");
        assert_eq!(monthly.tos_version, old.tos_version, "under the same terms");
        // The final notice told the customer that plan's rate; only it did.
        let rate = energy_rate(&monthly.rates);
        let stated = format!("{rate}\u{a2} per kWh for energy");
        assert!(sent[2]["text"].as_str().unwrap().contains(&stated), "{}", sent[2]["text"]);
        assert!(sent[2]["text"].as_str().unwrap().contains(&monthly.plan_name));
        assert!(!sent[0]["text"].as_str().unwrap().contains(&stated));

        let me = app.get(&format!("/v1/account/locations/{location}"), &token).await;
        assert_eq!(me.status, StatusCode::OK, "{}", me.text);
        assert_eq!(me.body["status"], "active");
        assert_eq!(me.body["plan_uuid"], json!(monthly.plan_uuid.to_string()));
        assert_eq!(me.body["contract_start"], json!(days_after(&end, 1)));
        assert_eq!(me.body["contract_end"], Value::Null);
        let plan = app.get(&format!("/v1/account/locations/{location}/plan"), &token).await;
        assert_eq!(plan.body["plan_type"], "month_to_month", "{}", plan.text);
        assert_eq!(plan.body["contract"]["status"], "active");

        // Billing goes on: the cycle across the end bills each part at its own contract's rate.
        assert_eq!(
            energy_rates_across(&app, &token, &end).await,
            [energy_rate(&old.rates), rate]
        );

        // Each notice is kept as a PDF, listed with the location's documents and attached to
        // its e-mail; the final one carries the month-to-month plan's EFL.
        let docs = app.get(&format!("/v1/account/locations/{location}/all-documents"), &token).await;
        assert_eq!(docs.status, StatusCode::OK, "{}", docs.text);
        let notices: Vec<Value> = docs.body["data"].as_array().unwrap().iter().filter(|d| d["kind"] == "renewal_notice").cloned().collect();
        assert_eq!(notices.len(), 3, "{}", docs.text);
        let mut texts = Vec::new();
        for n in &notices {
            let (kind, text) = pdf(&app, n["url"].as_str().unwrap()).await;
            assert_eq!(kind, "application/pdf");
            assert!(text.contains(&end_long(&end)), "{text}");
            texts.push(text);
        }
        let with_rate: Vec<&String> = texts.iter().filter(|t| t.contains(&format!("Energy charge {}\u{a2} per kWh", rate.normalize()))).collect();
        assert_eq!(with_rate.len(), 1, "only the final notice states the month-to-month rate: {texts:#?}");
        assert!(with_rate[0].contains(&format!("Electricity Facts Label: {}", monthly.plan_name)));
        // Every notice offers a fixed plan, priced the day it was made, with its EFL.
        for text in &texts {
            assert!(text.contains("A plan you can renew onto"), "{text}");
            assert_eq!(text.matches("Electricity Facts Label: ").count(), if text == with_rate[0] { 2 } else { 1 }, "{text}");
        }
        for e in &sent {
            assert!(e["text"].as_str().unwrap().contains("One plan you can renew onto: "), "{e}");
        }
        let attached = app.query_texts("SELECT e.subject FROM stored_documents d JOIN emails e ON e.uuid = d.email_uuid ORDER BY e.created_at").await;
        assert_eq!(attached.len(), 3, "{attached:?}");
        // The month-to-month contract's own documents are in force.
        let active = app.get(&format!("/v1/account/locations/{location}/documents"), &token).await;
        let (_, efl) = pdf(&app, active.body["efl"].as_str().unwrap()).await;
        assert!(efl.contains(&monthly.plan_name) && efl.contains("Variable rate, month to month"), "{efl}");
        // Its HTML rendition, for reading inside a flow, says the same.
        let efl_url = active.body["efl"].as_str().unwrap().trim_start_matches(&app.state.config.public_url()).to_owned();
        let html = app.send(Method::GET, &format!("{efl_url}&format=html"), None, None, &[]).await;
        assert_eq!(html.status, StatusCode::OK, "{}", html.text);
        assert!(html.header("content-type").starts_with("text/html"));
        assert!(html.text.contains(&monthly.plan_name) && html.text.contains("Variable rate, month to month"), "{}", html.text);

        // The lasting address the notices name answers: sign in to renew.
        let path = lasting.trim_start_matches(&app.state.config.public_url()).to_owned();
        let page = app.send(Method::GET, &path, None, None, &[]).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("Sign in to renew"), "{}", page.text);
        // A notice's button is a week-long link: long expired now, it offers a fresh one by
        // e-mail, which opens the hosted renewal flow.
        let button = crate::hosted::hosted_link(&sent[0]);
        let mut browser = crate::hosted::Browser::new(&app);
        let stale = browser.get(&button).await;
        assert_eq!(stale.status, StatusCode::GONE, "{}", stale.text);
        let token = button.split("token=").nth(1).unwrap();
        let csrf = stale.csrf();
        let r = browser.post("/hosted/link/resend", &[("csrf", &csrf), ("token", token)]).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let fresh = crate::hosted::outbox(&app, Some(&uuid)).await;
        assert_eq!(fresh[0]["subject"], "Your new link");
        let opened = crate::hosted::click_link(&mut browser, &crate::hosted::hosted_link(&fresh[0])).await;
        assert_eq!(opened.status, StatusCode::SEE_OTHER, "{}", opened.text);
        assert!(opened.location().starts_with("/flow/renewal?"), "{}", opened.location());
    }

    async fn a_month_to_month_customer_leaves_for_a_plan_from_tomorrow(app) {
        let (uuid, token, location, end) = seeded(&app, "life-leave@example.com").await;
        to_end_plus(&app, (&uuid, &token), &end, 20).await;
        let monthly = contracts(&app, &uuid).await.into_iter().find(|c| c.plan_type == "month_to_month").unwrap();
        assert_eq!(monthly.status.as_str(), "active");

        // Month-to-month has no window: plans from tomorrow, any day.
        let today = today(&app, &uuid).await;
        let tomorrow = days_after(&today, 1);
        let plans = app.post(&format!("/v1/account/locations/{location}/renewal-plans/request"), &token, &Value::Null).await;
        assert_eq!(plans.status, StatusCode::OK, "{}", plans.text);
        let plan = plans.body["plans"].as_array().unwrap().iter().find(|p| p["plan_type"] == "fixed").unwrap().clone();
        assert_eq!(plan["earliest_start_date"], json!(tomorrow), "{plan}");
        let accept = |start: String| json!({"plan_uuid": plan["plan_uuid"], "service_start_date": start, "terms_accepted": true});
        let r = app.post(&format!("/v1/account/locations/{location}/renewal-plans/accept"), &token, &accept(today.clone())).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "not today: {}", r.text);
        let r = app.post(&format!("/v1/account/locations/{location}/renewal-plans/accept"), &token, &accept(tomorrow.clone())).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let fixed_uuid = r.body["contract"]["uuid"].as_str().unwrap().to_owned();

        advance(&app, &token, 2).await;
        let all = contracts(&app, &uuid).await;
        let fixed = all.iter().find(|c| c.uuid.to_string() == fixed_uuid).unwrap();
        assert_eq!((fixed.status.as_str(), fixed.start_date.to_string()), ("active", tomorrow.clone()));
        let left = all.iter().find(|c| c.uuid == monthly.uuid).unwrap();
        assert_eq!(left.status.as_str(), "ended");
        assert_eq!(left.end_date.map(|d| d.to_string()), Some(today), "month-to-month ends the day before the new plan");
        let me = app.get(&format!("/v1/account/locations/{location}"), &token).await;
        assert_eq!(me.body["plan_uuid"], plan["plan_uuid"], "{}", me.text);
        assert!(me.body["contract_end"].is_string(), "{}", me.text);
    }

    async fn an_accepted_renewal_stops_the_notices_and_takes_over(app) {
        let (uuid, token, location, end) = seeded(&app, "life-renew@example.com").await;
        let partner = "https://partner.example/renew?account=7";
        let r = app.patch(&format!("/v1/app/accounts/{uuid}"), &app.app_token, &json!({"renewals_url": partner})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);

        to_end_plus(&app, (&uuid, &token), &end, -85).await;
        let sent = reminders(&app, &uuid).await;
        assert_eq!(sent.len(), 1, "{sent:#?}");
        assert!(sent[0]["text"].as_str().unwrap().contains(partner), "the partner's renewal page");
        assert!(!sent[0]["text"].as_str().unwrap().contains("/go/"));

        let plans = app.post(&format!("/v1/account/locations/{location}/renewal-plans/request"), &token, &Value::Null).await;
        assert_eq!(plans.status, StatusCode::OK, "{}", plans.text);
        let plan = plans.body["plans"].as_array().unwrap().iter().find(|p| p["plan_type"] == "fixed").unwrap().clone();
        let start = days_after(&end, 1);
        let r = app.post(
            &format!("/v1/account/locations/{location}/renewal-plans/accept"),
            &token,
            &json!({"plan_uuid": plan["plan_uuid"], "service_start_date": start, "terms_accepted": true}),
        ).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let renewal_uuid = r.body["contract"]["uuid"].as_str().unwrap().to_owned();
        let docs = app.get(&format!("/v1/account/locations/{location}/all-documents"), &token).await;
        let queued = docs.body["data"].as_array().unwrap().iter().filter(|d| d["status"] == "queued").count();
        assert_eq!(queued, 3, "{}", docs.text);

        to_end_plus(&app, (&uuid, &token), &end, 35).await;
        assert_eq!(reminders(&app, &uuid).await.len(), 1, "no notice after the acceptance");
        assert_eq!(notice_events(&app, &uuid).await.len(), 1);
        let all = contracts(&app, &uuid).await;
        assert_eq!(all.len(), 2, "no month-to-month contract: {all:?}");
        let renewal = all.iter().find(|c| c.uuid.to_string() == renewal_uuid).unwrap();
        assert_eq!(renewal.status.as_str(), "active");
        assert_eq!(renewal.start_date.to_string(), start);
        let old = all.iter().find(|c| c.uuid.to_string() != renewal_uuid).unwrap();
        assert_eq!(old.status.as_str(), "ended");
        let docs = app.get(&format!("/v1/account/locations/{location}/all-documents"), &token).await;
        let data = docs.body["data"].as_array().unwrap();
        assert!(data.iter().filter(|d| d["status"] == "active").all(|d| d["effective_date"] == json!(start)));
        assert_eq!(data.iter().filter(|d| d["status"] == "queued").count(), 0);
        assert_eq!(
            energy_rates_across(&app, &token, &end).await,
            [energy_rate(&old.rates), energy_rate(&renewal.rates)]
        );
    }

    async fn a_move_out_in_the_last_days_ends_the_contract_without_fee(app) {
        let (uuid, token, location, end) = seeded(&app, "life-move@example.com").await;
        to_end_plus(&app, (&uuid, &token), &end, -10).await;
        let final_day = days_after(&end, -3);
        let r = app.post(
            &format!("/v1/account/locations/{location}/cancel-service"),
            &token,
            &json!({"final_service_date": final_day, "reason": "moving"}),
        ).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        to_end_plus(&app, (&uuid, &token), &end, 5).await;
        app.eventually("the location is cancelled", || async {
            app.get(&format!("/v1/account/locations/{location}"), &token).await.body["status"] == "cancelled"
        }).await;
        let all = contracts(&app, &uuid).await;
        assert_eq!(all.len(), 1, "no month-to-month after a move-out: {all:?}");
        assert_eq!(all[0].status.as_str(), "ended");
        // The final bill holds the energy used and nothing for leaving early.
        let list = app.get("/v1/account/billing/invoices?limit=100", &token).await;
        let last = list.body["data"].as_array().unwrap().iter()
            .find(|i| i["billing_period_end"] == json!(final_day))
            .unwrap_or_else(|| panic!("no final bill through {final_day}: {}", list.text)).clone();
        let detail = app.get(&format!("/v1/account/billing/invoices/{}", last["number"].as_str().unwrap()), &token).await;
        assert_eq!(detail.status, StatusCode::OK, "{}", detail.text);
        let charges: Vec<Value> = detail.body["charges_groups"].as_array().unwrap().iter()
            .flat_map(|g| g["charges"].as_array().unwrap().clone()).collect();
        assert!(!charges.is_empty());
        for c in &charges {
            let d = c["description"].as_str().unwrap().to_lowercase();
            assert!(!d.contains("termination") && !d.contains("cancel"), "{c}");
        }
        let groups: i64 = detail.body["charges_groups"].as_array().unwrap().iter().map(|g| g["total_cents"].as_i64().unwrap()).sum();
        assert_eq!(groups, last["total_cents"].as_i64().unwrap());
    }

    async fn the_terms_of_service_promise_what_the_service_does(app) {
        // What the text promises is what the tests above watch happen: the notices at
        // NOTICE_DAYS_BEFORE, the month-to-month rollover under the same terms, a move-out in
        // the last days without fee.
        let (_, token, _, _) = seeded(&app, "life-tos@example.com").await;
        let plans = app.post("/v1/account/enroll/plans/request", &token, &json!({"esi_id": HOUSE})).await;
        assert_eq!(plans.status, StatusCode::OK, "{}", plans.text);
        let (kind, tos) = pdf(&app, plans.body["plans"][0]["documents"]["tos"].as_str().unwrap()).await;
        assert_eq!(kind, "application/pdf");
        let days: Vec<String> = NOTICE_DAYS_BEFORE.iter().map(i64::to_string).collect();
        let promised = format!("{}, {} and {} days before its last day", days[0], days[1], days[2]);
        for promise in [
            promised.as_str(),
            "month-to-month variable plan",
            "under these same terms",
            "No early termination fee is charged",
            "never in the last 14 days of a term",
            "it starts the day after the term ends",
        ] {
            assert!(tos.contains(promise), "{promise}: {tos}");
        }
        assert!(!tos.contains("the last third of a fixed term, the last at least 30 days"));
    }

    async fn demo_data_lands_inside_the_renewal_window_with_a_short_custom_term(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "life-seed@example.com").await;
        let custom = app.post(
            "/v1/app/accounts/enroll/plans/request",
            &app.app_token,
            &json!({"esi_id": HOUSE, "account_uuid": uuid, "term_months": 5}),
        ).await;
        assert_eq!(custom.status, StatusCode::OK, "{}", custom.text);
        let plan = custom.body["plans"].as_array().unwrap().iter().find(|p| p["plan_type"] == "fixed").unwrap().clone();
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let r = accept_plan(&app, &token, &plan, HOUSE, &start).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let location = r.body["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let end = r.body["locations"][0]["contract_end"].as_str().unwrap().to_owned();
        let left = days_between(&today(&app, &uuid).await, &end);
        assert!((31..=90).contains(&left), "{left} days left");
        let renew = app.post(&format!("/v1/account/locations/{location}/renewal-plans/request"), &token, &Value::Null).await;
        assert_eq!(renew.status, StatusCode::OK, "inside the window at once: {}", renew.text);
        // The short term's three notices come in its last third, the last 30 days before the end.
        to_end_plus(&app, (&uuid, &token), &end, -29).await;
        let events = notice_events(&app, &uuid).await;
        let days: Vec<i64> = events.iter().map(|e| e["days_left"].as_i64().unwrap()).collect();
        assert_eq!(days.len(), 3, "{days:?}");
        assert_eq!(days[2], 30);
        assert!(days.windows(2).all(|w| w[0] > w[1]) && days[0] <= left, "{days:?}");
    }

}

both_engines! {
    with relaxed;

    async fn plan_documents_are_pdfs_holding_what_the_api_reports_and_never_change(app) {
        with_meters(&app).await;
        // A group that still names a fee: its plans state none, as the Terms of Service promise.
        app.execute_sql("UPDATE plan_groups SET early_termination_fee_cents = 15000 WHERE plan_type = 'fixed'").await;
        let (_, token) = customer(&app, "life-docs@example.com").await;
        let plan = crate::enrollment::first_plan(&app, &token, HOUSE).await;
        assert_eq!(plan["plan_type"], "fixed");
        assert_eq!(plan["rates"]["early_termination_fee_cents"], 0, "{}", plan["rates"]);
        // The plan's own links answer PDFs holding its figures.
        let (kind, efl) = pdf(&app, plan["documents"]["efl"].as_str().unwrap()).await;
        assert_eq!(kind, "application/pdf");
        let rates = &plan["rates"];
        let energy: Decimal = rates["energy_cents_per_kwh"].as_str().unwrap().parse().unwrap();
        let tdu: Decimal = rates["tdu_cents_per_kwh"].as_str().unwrap().parse().unwrap();
        for figure in [
            plan["name"].as_str().unwrap().to_owned(),
            format!("Energy charge {}\u{a2} per kWh", energy.normalize()),
            format!("{}\u{a2} per kWh", tdu.normalize()),
            app::format::dollars(rates["base_charge_cents_per_month"].as_i64().unwrap()),
            app::format::dollars(rates["tdu_fixed_cents_per_month"].as_i64().unwrap()),
            app::format::dollars(rates["early_termination_fee_cents"].as_i64().unwrap()),
            format!("{} months", plan["term_months"]),
            app.state.config.provider.certificate.clone(),
        ] {
            assert!(efl.contains(&figure), "{figure}: {efl}");
        }
        for (usage, key) in [("500", "kwh_500"), ("1,000", "kwh_1000"), ("2,000", "kwh_2000")] {
            let exact: Decimal = plan["average_price_cents_per_kwh"][key].as_str().unwrap().parse().unwrap();
            assert!(efl.contains(plan["average_price_cents_per_kwh"][key].as_str().unwrap()), "{key}: {efl}");
            let printed = server::domain::pricing::efl_printed_cents(exact);
            assert!(efl.contains(&format!("{usage} kWh a month {printed}\u{a2} per kWh")), "{key}: {efl}");
        }
        assert!(efl.contains("None ($0.00)"), "{efl}");
        assert!(!efl.contains("$150.00"), "{efl}");
        let (kind, tos) = pdf(&app, plan["documents"]["tos"].as_str().unwrap()).await;
        assert_eq!(kind, "application/pdf");
        assert!(tos.contains("Terms of Service, version"));
        assert!(tos.contains("No early termination fee is charged"), "{tos}");
        let (kind, yrac) = pdf(&app, plan["documents"]["yrac"].as_str().unwrap()).await;
        assert_eq!(kind, "application/pdf");
        assert!(yrac.contains("Your Rights as a Customer"));

        // Accepted: the location's documents are the ones stored with the contract.
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let r = accept_plan(&app, &token, &plan, HOUSE, &start).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let location = r.body["location"]["uuid"].as_str().unwrap().to_owned();
        let docs = app.get(&format!("/v1/account/locations/{location}/documents"), &token).await;
        assert_eq!(docs.status, StatusCode::OK, "{}", docs.text);
        let url = docs.body["efl"].as_str().unwrap().to_owned();
        let before = app.client.get(&url).send().await.unwrap().bytes().await.unwrap();
        let stored = app.query_texts("SELECT sha256 FROM stored_documents WHERE kind = 'efl'").await;
        assert_eq!(stored, [Some(server::services::documents::sha256_hex(&before))]);
        let brand = server::store::apps::app_by_uuid(&app.state.db, app.app_uuid).await.unwrap().unwrap().display_name;
        assert!(server::documents::pdf_text(&before).contains(&brand));

        // The operator renames the app: what the template reads changed. The plan's live EFL
        // follows; the document the customer accepted does not.
        server::admin::set_branding(&app.state.db, app.app_uuid, &server::admin::BrandingChange {
            display_name: Some("Renamed Power"),
            primary_color: Some("#123456"),
            logo_url: None,
        }).await.unwrap();
        let (_, live) = pdf(&app, plan["documents"]["efl"].as_str().unwrap()).await;
        assert!(live.contains("Renamed Power"), "{live}");
        let docs = app.get(&format!("/v1/account/locations/{location}/documents"), &token).await;
        let after = app.client.get(docs.body["efl"].as_str().unwrap()).send().await.unwrap().bytes().await.unwrap();
        assert_eq!(before, after, "the accepted EFL never changes");
        let all = app.get(&format!("/v1/account/locations/{location}/all-documents"), &token).await;
        for d in all.body["data"].as_array().unwrap() {
            let (kind, text) = pdf(&app, d["url"].as_str().unwrap()).await;
            assert_eq!(kind, "application/pdf", "{d}");
            assert!(!text.contains("Renamed Power"), "{d}: {text}");
        }
    }

    async fn a_client_agent_enrollment_keeps_its_letter_of_authorization_as_a_pdf(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "life-agent@example.com").await;
        let r = app.post(&format!("/v1/app/accounts/{uuid}/record-client-agent"), &app.app_token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let plan = crate::enrollment::first_plan(&app, &token, HOUSE).await;
        let today = server::domain::market::market_date(app.clock.now());
        let start = (today + chrono::Duration::days(10)).to_string();
        let r = accept_plan(&app, &token, &plan, HOUSE, &start).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let location = r.body["location"]["uuid"].as_str().unwrap().to_owned();
        let docs = app.get(&format!("/v1/account/locations/{location}/documents"), &token).await;
        assert_eq!(docs.status, StatusCode::OK, "{}", docs.text);
        let (kind, loa) = pdf(&app, docs.body["loa"].as_str().unwrap_or_else(|| panic!("no loa: {}", docs.text))).await;
        assert_eq!(kind, "application/pdf");
        for figure in [
            "Ana D\u{ed}az".to_owned(),
            "100 ELM ST, DALLAS, TX 75201".to_owned(),
            format!("ESI ID {HOUSE}"),
            format!("Plan {}", plan["name"].as_str().unwrap()),
            format!("Energy price {}\u{a2} per kWh", plan["rates"]["energy_cents_per_kwh"].as_str().unwrap()),
            format!("Term {} months", plan["term_months"]),
            format!("Service start date {}", end_long(&start)),
            "How to cancel".to_owned(),
        ] {
            assert!(loa.contains(&figure), "{figure}: {loa}");
        }
        let all = app.get(&format!("/v1/account/locations/{location}/all-documents"), &token).await;
        let kinds: Vec<&str> = all.body["data"].as_array().unwrap().iter().map(|d| d["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["efl", "tos", "yrac", "loa"], "{}", all.text);

        // A customer's own enrollment has none.
        let (_, own) = customer(&app, "life-own@example.com").await;
        let plan = crate::enrollment::first_plan(&app, &own, HOUSE).await;
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let r = accept_plan(&app, &own, &plan, HOUSE, &start).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let location = r.body["location"]["uuid"].as_str().unwrap().to_owned();
        let docs = app.get(&format!("/v1/account/locations/{location}/documents"), &own).await;
        assert_eq!(docs.body["loa"], Value::Null, "{}", docs.text);
    }
}

both_engines! {
    with relaxed;
    async fn the_outbox_shows_and_serves_a_notices_attachment(app) {
        let (uuid, token, _location, end) = seeded(&app, "life-outbox@example.com").await;
        to_end_plus(&app, (&uuid, &token), &end, -85).await;
        let sent = reminders(&app, &uuid).await;
        assert_eq!(sent.len(), 1, "{sent:#?}");
        let attachments = sent[0]["attachments"].as_array().unwrap();
        assert_eq!(attachments.len(), 1, "{attachments:#?}");
        let a = &attachments[0];
        assert_eq!(a["filename"], format!("renewal-notice-{end}.pdf"));
        assert_eq!(a["content_type"], "application/pdf");
        let url = a["url"].as_str().unwrap();
        assert_eq!(url, format!("/v1/app/sandbox/emails/{}/attachments/{}", sent[0]["uuid"].as_str().unwrap(), a["uuid"].as_str().unwrap()));

        // The bytes the message carried, whole.
        let r = app.client.get(app.url(url)).bearer_auth(&app.app_token).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()["content-type"], "application/pdf");
        assert_eq!(
            r.headers()["content-disposition"].to_str().unwrap(),
            format!("attachment; filename=\"renewal-notice-{end}.pdf\"")
        );
        let bytes = r.bytes().await.unwrap();
        assert!(bytes.starts_with(b"%PDF"));
        assert_eq!(a["size_bytes"], bytes.len());
        use sha2::Digest;
        assert_eq!(a["sha256"], format!("{:x}", sha2::Sha256::digest(&bytes)));
        assert!(server::documents::pdf_text(&bytes).contains(&end_long(&end)));

        // Other e-mails carry nothing; another app, an unknown attachment or no token get no bytes.
        let all = app.get(&format!("/v1/app/sandbox/emails?account_uuid={uuid}&limit=100"), &app.app_token).await;
        assert!(all.body["data"].as_array().unwrap().iter()
            .any(|e| e["template"] != "renewal_reminder" && e["attachments"] == json!([])), "{}", all.text);
        let (_, other) = app.other_app().await;
        assert_eq!(app.get(url, &other).await.status, StatusCode::NOT_FOUND);
        let unknown = format!("/v1/app/sandbox/emails/{}/attachments/{}", sent[0]["uuid"].as_str().unwrap(), uuid::Uuid::new_v4());
        assert_eq!(app.get(&unknown, &app.app_token).await.status, StatusCode::NOT_FOUND);
        assert_eq!(app.send(Method::GET, url, None, None, &[]).await.status, StatusCode::UNAUTHORIZED);
    }
}

both_engines! {
    with relaxed;
    async fn an_app_without_a_month_to_month_group_still_rolls_over(app) {
        let (uuid, token, _, end) = seeded(&app, "no-group@example.com").await;
        // Stored as an app whose month-to-month group was turned fixed before edits refused it.
        let groups = server::store::market::plan_groups_of_app(&app.state.db, app.app_uuid).await.unwrap();
        let mut tx = app.state.db.begin().await.unwrap();
        for g in groups.iter().filter(|g| g.plan_type == "month_to_month") {
            let fixed = server::store::market::PlanGroupRow {
                plan_type: "fixed".to_owned(),
                term_months: 12,
                is_month_to_month_default: false,
                version: g.version + 1,
                ..g.clone()
            };
            assert!(server::store::market::update_plan_group(&mut tx, &fixed, g.version).await.unwrap());
        }
        tx.commit().await.unwrap();

        to_end_plus(&app, (&uuid, &token), &end, 2).await;
        // The contract did not run on past its end: the location rolled onto the platform's
        // month-to-month plan, now the app's, and the operator reads why in the audit log.
        let all = contracts(&app, &uuid).await;
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all.iter().any(|c| c.status.as_str() == "ended" && c.plan_type == "fixed"), "{all:?}");
        let monthly = all.iter().find(|c| c.plan_type == "month_to_month").unwrap();
        assert_eq!(monthly.status.as_str(), "active");
        assert_eq!(monthly.start_date.to_string(), days_after(&end, 1));
        let groups = server::store::market::plan_groups_of_app(&app.state.db, app.app_uuid).await.unwrap();
        let added: Vec<_> = groups.iter().filter(|g| g.plan_type == "month_to_month").collect();
        assert_eq!(added.len(), 1, "{groups:?}");
        assert!(added[0].is_month_to_month_default);
        let audit = app.query_texts("SELECT detail FROM audit_log WHERE actor = 'system' AND action = 'plan_group.created'").await;
        assert_eq!(audit.len(), 1, "{audit:?}");
        assert!(audit[0].as_deref().unwrap().contains("no month-to-month group"), "{audit:?}");
    }
}
