//! The market through the API: eligibility, address and ESI ID search, plan groups, priced
//! plans with their documents and events, custom terms, start-date windows and benchmarks.

use chrono::{Duration, NaiveDate};
use reqwest::StatusCode;
use serde_json::{json, Value};
use server::{
    domain::market::{market_date, BusinessCalendar},
    store::market::ServiceAddressRow,
};

use crate::helpers::TestApp;

const ONCOR_HOUSE: &str = "10443720000100001";
const ONCOR_APT_1: &str = "10443720000100002";
const ONCOR_APT_2: &str = "10443720000100003";
const CENTERPOINT: &str = "1008901000000000000001";
const TNMP: &str = "10400510000000001";

fn entry(
    esi: &str,
    a1: &str,
    a2: Option<&str>,
    city: &str,
    zip: &str,
    tdu: &str,
) -> ServiceAddressRow {
    ServiceAddressRow {
        esi_id: esi.into(),
        address_1: a1.into(),
        address_2: a2.map(str::to_owned),
        city: city.into(),
        state: "TX".into(),
        postal_code: zip.into(),
        tdu: tdu.into(),
        premise_type: if a2.is_some() {
            "apartment"
        } else {
            "residential"
        }
        .into(),
        status: "active".into(),
    }
}

async fn with_directory(app: &TestApp) {
    app.add_addresses(&[
        entry(
            ONCOR_HOUSE,
            "1500 MAIN ST",
            None,
            "DALLAS",
            "75201",
            "ONCOR",
        ),
        entry(
            ONCOR_APT_1,
            "2200 ROSS AVE",
            Some("APT 101"),
            "DALLAS",
            "75201",
            "ONCOR",
        ),
        entry(
            ONCOR_APT_2,
            "2200 ROSS AVE",
            Some("APT 102"),
            "DALLAS",
            "75201",
            "ONCOR",
        ),
        entry(
            "10443720000100004",
            "4500 N CENTRAL EXPY",
            None,
            "DALLAS",
            "75205",
            "ONCOR",
        ),
        entry(
            CENTERPOINT,
            "900 TRAVIS ST",
            None,
            "HOUSTON",
            "77002",
            "CENTERPOINT",
        ),
        entry(
            TNMP,
            "100 LEAGUE CITY PKWY",
            None,
            "LEAGUE CITY",
            "77573",
            "TNMP",
        ),
    ])
    .await;
}

async fn account_and_token(app: &TestApp) -> (String, String) {
    let account = app.create_simple_account("ana@example.com").await;
    let uuid = account["uuid"].as_str().unwrap().to_owned();
    let token = app.account_token(&uuid).await;
    (uuid, token)
}

fn esi_ids(body: &Value) -> Vec<String> {
    let mut v: Vec<String> = body
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["esi_id"].as_str().unwrap().to_owned())
        .collect();
    v.sort();
    v
}

fn date(v: &Value) -> NaiveDate {
    v.as_str().unwrap().parse().unwrap()
}

async fn calendar(app: &TestApp) -> BusinessCalendar {
    BusinessCalendar::new(
        server::store::market::federal_holidays(&app.state.db)
            .await
            .unwrap(),
    )
}

async fn events(app: &TestApp, account_uuid: &str) -> Vec<(String, Value)> {
    server::store::events::events_of_account(&app.state.db, account_uuid.parse().unwrap())
        .await
        .unwrap()
        .into_iter()
        // Every account starts with its `account.created`: the pricing's events are the rest.
        .filter(|e| e.kind != "account.created")
        .map(|e| (e.kind, serde_json::from_str(&e.data).unwrap()))
        .collect()
}

async fn post(app: &TestApp, path: &str, token: &str, body: Value) -> crate::helpers::TestResponse {
    app.post(path, token, &body).await
}

fn path_of(url: &Value) -> String {
    let url = url.as_str().unwrap();
    let rest = url.split_once("://").unwrap().1;
    rest[rest.find('/').unwrap()..].to_owned()
}

/// `both_engines!` without rate limits: these tests make many calls a second on purpose.
macro_rules! unlimited_on_both_engines {
    ($(async fn $name:ident($app:ident) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    let $app = unlimited($crate::helpers::Engine::Sqlite).await;
                    $body
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    let $app = unlimited($crate::helpers::Engine::Postgres).await;
                    $body
                }
            }
        )*
    };
}

async fn unlimited(engine: crate::helpers::Engine) -> TestApp {
    TestApp::spawn_with(engine, |c| c.rate_limits.enabled = false).await
}

unlimited_on_both_engines! {
    async fn every_new_app_has_the_default_plan_groups(app) {
        let r = app.get("/v1/app/plan-groups", &app.app_token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let groups = r.body["data"].as_array().unwrap();
        let summary: Vec<(&str, &str, u64)> = groups
            .iter()
            .map(|g| (g["name"].as_str().unwrap(), g["plan_type"].as_str().unwrap(), g["term_months"].as_u64().unwrap()))
            .collect();
        assert_eq!(summary, [
            ("12-Month Fixed", "fixed", 12),
            ("24-Month Fixed", "fixed", 24),
            ("12-Month Fixed Solar Buyback", "fixed", 12),
            ("Month-to-Month Variable", "month_to_month", 1),
        ]);
        assert_eq!(groups[2]["solar_buyback_cents_per_kwh"], "7.5000");
        assert_eq!(groups[0]["solar_buyback_cents_per_kwh"], "0.0000");
        assert_eq!(groups[3]["is_month_to_month_default"], true);
        assert_eq!(groups[3]["early_termination_fee_cents"], 0);
        assert_eq!(r.body["has_more"], false);
        // Another app has its own groups.
        let (_, other_token) = app.other_app().await;
        let other = app.get("/v1/app/plan-groups", &other_token).await;
        let other_uuids: Vec<&Value> = other.body["data"].as_array().unwrap().iter().map(|g| &g["uuid"]).collect();
        assert_eq!(other_uuids.len(), 4);
        assert!(groups.iter().all(|g| !other_uuids.contains(&&g["uuid"])));
        let bad = app.get("/v1/app/plan-groups?limit=0", &app.app_token).await;
        assert_eq!((bad.status, bad.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"));
    }

    async fn eligibility_follows_the_zip_table(app) {
        let (_, token) = account_and_token(&app).await;
        for (path, tok) in [("/v1/app/accounts/enroll/eligibility", app.app_token.as_str()), ("/v1/account/enroll/eligibility", token.as_str())] {
            let r = app.post(path, tok, &json!({"postal_code": "75201"})).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
            assert_eq!(r.body, json!({"eligibility_likelihood": 100, "utilities": [{"name": "ONCOR", "display_name": "Oncor Electric Delivery"}]}));
            // Austin and San Antonio are not open to retail choice.
            for closed in ["78701", "78205"] {
                let r = app.post(path, tok, &json!({"postal_code": closed})).await;
                assert_eq!(r.body, json!({"eligibility_likelihood": 0, "utilities": []}), "{closed}");
            }
            // A split ZIP: 60% of Aubrey's premises are Oncor's.
            let r = app.post(path, tok, &json!({"postal_code": "76227"})).await;
            assert_eq!(r.body["eligibility_likelihood"], 60);
            // Friendswood is split between two open utilities.
            let r = app.post(path, tok, &json!({"postal_code": "77546-1234"})).await;
            assert_eq!(r.body["eligibility_likelihood"], 100);
            let names: Vec<&str> = r.body["utilities"].as_array().unwrap().iter().map(|u| u["name"].as_str().unwrap()).collect();
            assert_eq!(names, ["TNMP", "CENTERPOINT"]);
            for (body, code) in [
                (json!({"postal_code": "7520"}), "parameter_invalid"),
                (json!({"postal_code": "ABCDE"}), "parameter_invalid"),
                (json!({"postal_code": 75201}), "parameter_invalid"),
                (json!({}), "parameter_missing"),
            ] {
                let r = app.post(path, tok, &body).await;
                assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, code), "{body}");
                assert_eq!(r.body["error"]["param"], "postal_code");
            }
        }
    }

    async fn a_full_address_found_in_the_directory_is_certain(app) {
        with_directory(&app).await;
        // 76227 alone is 60%; this address is known to be Oncor's.
        app.add_addresses(&[entry("10443720000100099", "12 OAK LN", None, "AUBREY", "76227", "ONCOR")]).await;
        let r = app.post("/v1/app/accounts/enroll/eligibility", &app.app_token,
            &json!({"address_1": "12 Oak Lane", "city": "Aubrey", "state": "TX", "postal_code": "76227"})).await;
        assert_eq!(r.body["eligibility_likelihood"], 100, "{}", r.text);
    }

    async fn esi_id_search_validates_before_lookup(app) {
        with_directory(&app).await;
        let (_, token) = account_and_token(&app).await;
        let path = "/v1/account/enroll/esi-id-search";
        for bad in ["123", "1044372000010000X", "10089010000000001", "99999990000000001", "104437200001000011"] {
            let r = app.post(path, &token, &json!({"esi_id": bad})).await;
            assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "esi_id_invalid"), "{bad}");
            assert_eq!(r.body["error"]["param"], "esi_id");
        }
        let r = app.post(path, &token, &json!({"esi_id": "10443720009999999"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "esi_id_not_found"));
        let r = app.post(path, &token, &json!({"esi_id": format!(" {CENTERPOINT} ")})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body, json!({
            "address_1": "900 TRAVIS ST", "address_2": null, "city": "HOUSTON", "state": "TX",
            "postal_code": "77002", "esi_id": CENTERPOINT,
            "utility": {"name": "CENTERPOINT", "display_name": "CenterPoint Energy Houston Electric"}
        }));
        let r = app.post(path, &token, &json!({})).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_missing"));
        // The AppToken has no account: this path is the account's.
        let r = app.post(path, &app.app_token, &json!({"esi_id": CENTERPOINT})).await;
        assert_eq!(r.code(), "token_wrong_type");
    }

    async fn type_ahead_matches_beginnings_units_and_typos(app) {
        with_directory(&app).await;
        let (_, token) = account_and_token(&app).await;
        for (path, tok) in [("/v1/app/accounts/enroll/address-search", app.app_token.as_str()), ("/v1/account/enroll/address-search", token.as_str())] {
            let app = &app;
            let search = |q: &str| post(app, path, tok, json!({"query": q}));
            assert_eq!(esi_ids(&search("2200 ross").await.body), [ONCOR_APT_1, ONCOR_APT_2]);
            assert_eq!(esi_ids(&search("2200 Ross Avenue #101").await.body), [ONCOR_APT_1]);
            assert_eq!(esi_ids(&search("2200 ross ave apt 102").await.body), [ONCOR_APT_2]);
            assert_eq!(esi_ids(&search("1500 Main Stre").await.body), [ONCOR_HOUSE]);
            assert_eq!(esi_ids(&search("4500 North Central").await.body), ["10443720000100004"]);
            // Small typos.
            assert_eq!(esi_ids(&search("1500 Mian St").await.body), [ONCOR_HOUSE]);
            assert_eq!(esi_ids(&search("900 Travsi").await.body), [CENTERPOINT]);
            assert!(esi_ids(&search("31 Nowhere Rd").await.body).is_empty());
            let r = search("900 travis").await;
            assert_eq!(r.body[0]["utility"]["name"], "CENTERPOINT");
            let r = app.post(path, tok, &json!({"query": "2200 ross", "limit": 1})).await;
            assert_eq!(r.body.as_array().unwrap().len(), 1);
            let r = app.post(path, tok, &json!({"query": "9", "postal_code": "77002"})).await;
            assert_eq!(esi_ids(&r.body), [CENTERPOINT]);
            for (body, code, param) in [
                (json!({"query": "  "}), "parameter_invalid", "query"),
                (json!({}), "parameter_missing", "query"),
                (json!({"query": "1", "limit": 0}), "parameter_invalid", "limit"),
                (json!({"query": "1", "limit": 51}), "parameter_invalid", "limit"),
                (json!({"query": "1", "postal_code": "1"}), "parameter_invalid", "postal_code"),
            ] {
                let r = app.post(path, tok, &body).await;
                assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, code), "{body}");
                assert_eq!(r.body["error"]["param"], param);
            }
        }
    }

    async fn full_address_search_is_exact_after_normalization(app) {
        with_directory(&app).await;
        let (_, token) = account_and_token(&app).await;
        for (path, tok) in [("/v1/app/accounts/enroll/full-address-search", app.app_token.as_str()), ("/v1/account/enroll/full-address-search", token.as_str())] {
            let app = &app;
            let find = |body: Value| post(app, path, tok, body);
            // A building with several meters answers all of them.
            let r = find(json!({"address_1": "2200 Ross Avenue", "city": "Dallas", "state": "TX", "postal_code": "75201"})).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
            assert_eq!(esi_ids(&r.body), [ONCOR_APT_1, ONCOR_APT_2]);
            assert_eq!(r.body[0]["address_2"], "APT 101");
            for unit in ["#101", "Apt 101", "Unit 101", "apartment #101"] {
                let r = find(json!({"address_1": "2200 Ross Ave.", "address_2": unit, "postal_code": "75201"})).await;
                assert_eq!(esi_ids(&r.body), [ONCOR_APT_1], "{unit}");
            }
            let r = find(json!({"address_1": "2200 Ross Ave Apt 102", "postal_code": "75201"})).await;
            assert_eq!(esi_ids(&r.body), [ONCOR_APT_2]);
            let r = find(json!({"address_1": "4500 North Central Expressway", "postal_code": "75205"})).await;
            assert_eq!(esi_ids(&r.body), ["10443720000100004"]);
            // No fuzzy matching: a misspelling, a wrong number, another ZIP or city find nothing.
            for body in [
                json!({"address_1": "1500 Mian St", "postal_code": "75201"}),
                json!({"address_1": "1501 Main St", "postal_code": "75201"}),
                json!({"address_1": "1500 Main", "postal_code": "75201"}),
                json!({"address_1": "1500 Main St", "postal_code": "75202"}),
                json!({"address_1": "1500 Main St", "city": "Houston", "postal_code": "75201"}),
                json!({"address_1": "2200 Ross Ave", "address_2": "Apt 103", "postal_code": "75201"}),
            ] {
                let r = find(body.clone()).await;
                assert_eq!(r.body, json!([]), "{body}");
            }
            for (body, code, param) in [
                (json!({"address_1": "1500 Main St"}), "parameter_missing", "postal_code"),
                (json!({"address_1": "1500 Main St", "postal_code": "752"}), "parameter_invalid", "postal_code"),
                (json!({"address_1": " ", "postal_code": "75201"}), "parameter_invalid", "address_1"),
            ] {
                let r = find(body.clone()).await;
                assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, code), "{body}");
                assert_eq!(r.body["error"]["param"], param);
            }
        }
    }

    async fn plans_are_priced_stored_announced_and_documented(app) {
        with_directory(&app).await;
        let (account_uuid, token) = account_and_token(&app).await;
        let before = app.clock.now();
        let r = app.post("/v1/account/enroll/plans/request", &token, &json!({"esi_id": ONCOR_HOUSE})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let plans = r.body["plans"].as_array().unwrap();
        assert_eq!(plans.len(), 4);
        let today = market_date(before);
        let cal = calendar(&app).await;
        for p in plans {
            assert_eq!(p["utility"]["name"], "ONCOR");
            assert_eq!(p["rates"]["tdu_fixed_cents_per_month"], 423);
            assert_eq!(p["rates"]["tdu_cents_per_kwh"], "4.5403");
            assert_eq!(p["rates"]["base_charge_cents_per_month"], 995 + 500);
            assert_eq!(p["account_uuid"], Value::Null, "not a custom plan");
            assert_eq!(p["is_renewal"], false);
            // A move-in today on a business day (the test's clock stands at noon, before the
            // utility's 17:00 cut-off), else from tomorrow; switches 3 business days out,
            // nothing beyond 90 days.
            let move_in = if cal.is_business_day(today) { today } else { today + Duration::days(1) };
            assert_eq!(date(&p["earliest_start_date"]), move_in);
            assert_eq!(date(&p["earliest_switch_start_date"]), cal.add_business_days(today, 3));
            assert_eq!(date(&p["latest_start_date"]), today + Duration::days(90));
            // Prices hold 5 business days.
            let expires: chrono::DateTime<chrono::Utc> = p["expires_at"].as_str().unwrap().parse().unwrap();
            assert_eq!(market_date(expires), cal.add_business_days(today, 5));
            // The EFL averages follow from the rates shown.
            let energy: rust_decimal::Decimal = p["rates"]["energy_cents_per_kwh"].as_str().unwrap().parse().unwrap();
            let avg = |u: i64| {
                let total = rust_decimal::Decimal::from(1495 + 423) + rust_decimal::Decimal::from(u) * (energy + rust_decimal::Decimal::new(45403, 4));
                format!("{:.4}", (total / rust_decimal::Decimal::from(u)).round_dp_with_strategy(4, rust_decimal::RoundingStrategy::MidpointAwayFromZero))
            };
            assert_eq!(p["average_price_cents_per_kwh"]["kwh_500"], avg(500));
            assert_eq!(p["average_price_cents_per_kwh"]["kwh_1000"], avg(1000));
            assert_eq!(p["average_price_cents_per_kwh"]["kwh_2000"], avg(2000));
            // Each document link resolves.
            for doc in ["efl", "tos", "yrac"] {
                let d = app.send(reqwest::Method::GET, &path_of(&p["documents"][doc]), None, None, &[]).await;
                assert_eq!(d.status, StatusCode::OK, "{doc}: {}", d.text);
                assert!(d.header("content-type").starts_with("application/pdf"));
            }
            let efl = app.send(reqwest::Method::GET, &path_of(&p["documents"]["efl"]), None, None, &[]).await;
            assert!(efl.text.contains(p["average_price_cents_per_kwh"]["kwh_1000"].as_str().unwrap()));
            // Stored as offered.
            let stored = server::store::market::plan_by_uuid(&app.state.db, p["plan_uuid"].as_str().unwrap().parse().unwrap()).await.unwrap().unwrap();
            assert_eq!(stored.energy_cents_per_kwh, p["rates"]["energy_cents_per_kwh"].as_str().unwrap());
            assert_eq!(stored.esi_id.as_deref(), Some(ONCOR_HOUSE));
        }
        let m2m = &plans[3];
        assert_eq!((m2m["plan_type"].as_str(), m2m["term_months"].as_u64()), (Some("month_to_month"), Some(1)));
        assert_eq!(m2m["rates"]["early_termination_fee_cents"], 0);
        assert_eq!(plans[2]["rates"]["solar_buyback_cents_per_kwh"], "7.5000");
        // The event names the account and the plans.
        let evs = events(&app, &account_uuid).await;
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].0, "enrollment.plan_requested");
        assert_eq!(evs[0].1["account_uuid"], account_uuid.as_str());
        assert_eq!(evs[0].1["plan_uuids"].as_array().unwrap().len(), 4);
        // Unsigned document paths are refused; signed links to unknown documents are 404s.
        let unsigned = plans[0]["documents"]["efl"].as_str().unwrap().split('?').next().unwrap().to_owned();
        let r = app.send(reqwest::Method::GET, &path_of(&json!(unsigned)), None, None, &[]).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
        for path in [format!("/documents/efl/{}", uuid::Uuid::new_v4()), "/documents/tos/0.0".to_owned()] {
            let url = server::http::links::signed_url(&app.state, &path);
            let r = app.send(reqwest::Method::GET, &path_of(&json!(url)), None, None, &[]).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{path}: {}", r.text);
        }
    }

    async fn each_plan_document_reads_as_a_page_of_the_same_text(app) {
        with_directory(&app).await;
        let (_, token) = account_and_token(&app).await;
        let r = app.post("/v1/account/enroll/plans/request", &token, &json!({"esi_id": ONCOR_HOUSE})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let p = &r.body["plans"][0];
        let html_of = |doc: &str| format!("{}&format=html", path_of(&p["documents"][doc]));
        for (doc, says) in [
            ("efl", p["name"].as_str().unwrap().to_owned()),
            ("tos", "Terms of Service, version".to_owned()),
            ("yrac", "Your Rights as a Customer".to_owned()),
        ] {
            let page = app.send(reqwest::Method::GET, &html_of(doc), None, None, &[]).await;
            assert_eq!(page.status, StatusCode::OK, "{doc}: {}", page.text);
            assert!(page.header("content-type").starts_with("text/html"), "{doc}");
            assert!(page.text.starts_with("<!doctype html>"), "{doc}");
            assert!(page.text.contains(&says), "{doc}: {}", page.text);
            assert!(!page.text.contains("<script"), "{doc}: a document page runs nothing");
            // The PDF of the same link says the same.
            let pdf = app.send(reqwest::Method::GET, &path_of(&p["documents"][doc]), None, None, &[]).await;
            assert_eq!(pdf.status, StatusCode::OK);
            assert!(pdf.header("content-type").starts_with("application/pdf"));
        }
        // The EFL's figures, as on its PDF.
        let efl = app.send(reqwest::Method::GET, &html_of("efl"), None, None, &[]).await;
        let avg = p["average_price_cents_per_kwh"]["kwh_1000"].as_str().unwrap();
        assert!(efl.text.contains(avg.trim_end_matches('0').trim_end_matches('.')), "{avg}: {}", efl.text);
        // The signature still decides; an unknown format is refused at its parameter.
        let unsigned = format!("{}?format=html", path_of(&p["documents"]["efl"]).split('?').next().unwrap());
        let r = app.send(reqwest::Method::GET, &unsigned, None, None, &[]).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
        let wrong = format!("{}&format=docx", path_of(&p["documents"]["efl"]));
        let r = app.send(reqwest::Method::GET, &wrong, None, None, &[("accept", "application/json")]).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"), "{}", r.text);
        assert_eq!(r.body["error"]["param"], "format");
    }

    async fn plans_request_rejects_bad_input_and_changes_nothing(app) {
        with_directory(&app).await;
        let (account_uuid, token) = account_and_token(&app).await;
        let cases = [
            (json!({}), StatusCode::BAD_REQUEST, "parameter_missing"),
            (json!({"esi_id": "12"}), StatusCode::UNPROCESSABLE_ENTITY, "esi_id_invalid"),
            (json!({"esi_id": "10443720009999999"}), StatusCode::NOT_FOUND, "esi_id_not_found"),
        ];
        for (body, status, code) in &cases {
            let r = app.post("/v1/account/enroll/plans/request", &token, body).await;
            assert_eq!((r.status, r.code()), (*status, *code), "{body}");
            let path = format!("/v1/app/accounts/{account_uuid}/enroll/plans/request");
            let r = app.post(&path, &app.app_token, body).await;
            assert_eq!((r.status, r.code()), (*status, *code), "{body}");
        }
        let r = app.post(&format!("/v1/app/accounts/{}/enroll/plans/request", uuid::Uuid::new_v4()), &app.app_token, &json!({"esi_id": ONCOR_HOUSE})).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
        let path = "/v1/app/accounts/enroll/plans/request";
        for (body, status, code, param) in [
            (json!({}), StatusCode::BAD_REQUEST, "parameter_missing", "esi_id"),
            (json!({"postal_code": "7520"}), StatusCode::BAD_REQUEST, "parameter_invalid", "postal_code"),
            (json!({"postal_code": "78701"}), StatusCode::UNPROCESSABLE_ENTITY, "not_in_retail_choice_area", "postal_code"),
            (json!({"postal_code": "75201", "utility": "CENTERPOINT"}), StatusCode::UNPROCESSABLE_ENTITY, "not_in_retail_choice_area", "utility"),
            (json!({"postal_code": "75201", "utility": "ACME"}), StatusCode::BAD_REQUEST, "parameter_invalid", "utility"),
            (json!({"postal_code": "75201", "term_months": 12}), StatusCode::BAD_REQUEST, "parameter_missing", "account_uuid"),
            (json!({"postal_code": "75201", "account_uuid": account_uuid, "term_months": 0}), StatusCode::BAD_REQUEST, "parameter_invalid", "term_months"),
            (json!({"postal_code": "75201", "account_uuid": account_uuid, "term_months": 37}), StatusCode::BAD_REQUEST, "parameter_invalid", "term_months"),
            (json!({"postal_code": "75201", "account_uuid": account_uuid, "energy_rate_cents_per_kwh": "-1"}), StatusCode::BAD_REQUEST, "parameter_invalid", "energy_rate_cents_per_kwh"),
            (json!({"postal_code": "75201", "account_uuid": account_uuid, "energy_rate_cents_per_kwh": "9.12345"}), StatusCode::BAD_REQUEST, "parameter_invalid", "energy_rate_cents_per_kwh"),
            (json!({"postal_code": "75201", "account_uuid": account_uuid, "energy_rate_cents_per_kwh": true}), StatusCode::BAD_REQUEST, "parameter_invalid", "energy_rate_cents_per_kwh"),
            (json!({"postal_code": "75201", "account_uuid": account_uuid, "partner_commission_per_month_dollars": "5.001"}), StatusCode::BAD_REQUEST, "parameter_invalid", "partner_commission_per_month_dollars"),
            (json!({"postal_code": "75201", "account_uuid": "not-a-uuid"}), StatusCode::BAD_REQUEST, "parameter_invalid", "account_uuid"),
            (json!({"postal_code": "75201", "account_uuid": uuid::Uuid::new_v4()}), StatusCode::NOT_FOUND, "resource_missing", "account_uuid"),
            (json!({"postal_code": "75201", "plan_group_uuid": uuid::Uuid::new_v4()}), StatusCode::NOT_FOUND, "resource_missing", "plan_group_uuid"),
            (json!({"postal_code": "75201", "service_start_date": "tomorrow"}), StatusCode::BAD_REQUEST, "parameter_invalid", "service_start_date"),
        ] {
            let r = app.post(path, &app.app_token, &body).await;
            assert_eq!((r.status, r.code()), (status, code), "{body}: {}", r.text);
            assert_eq!(r.body["error"]["param"], param, "{body}");
        }
        assert!(events(&app, &account_uuid).await.is_empty(), "no event for a refused request");
        // An account of another app is unknown here.
        let (_, other_token) = app.other_app().await;
        let r = app.post(path, &other_token, &json!({"postal_code": "75201", "account_uuid": account_uuid})).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
    }

    async fn plans_by_postal_code_cover_each_utility_of_the_zip(app) {
        let path = "/v1/app/accounts/enroll/plans/request";
        let r = app.post(path, &app.app_token, &json!({"postal_code": "77546"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let utilities: Vec<&str> = r.body["plans"].as_array().unwrap().iter().map(|p| p["utility"]["name"].as_str().unwrap()).collect();
        assert_eq!(utilities, ["TNMP", "TNMP", "TNMP", "TNMP", "CENTERPOINT", "CENTERPOINT", "CENTERPOINT", "CENTERPOINT"]);
        assert_eq!(r.body["plans"][0]["rates"]["tdu_fixed_cents_per_month"], 785);
        assert_eq!(r.body["plans"][4]["rates"]["tdu_cents_per_kwh"], "3.8957");
        let r = app.post(path, &app.app_token, &json!({"postal_code": "77546", "utility": "centerpoint"})).await;
        assert_eq!(r.body["plans"].as_array().unwrap().len(), 4);
        // One group only.
        let groups = app.get("/v1/app/plan-groups", &app.app_token).await;
        let solar = groups.body["data"][2]["uuid"].clone();
        let r = app.post(path, &app.app_token, &json!({"postal_code": "79401", "plan_group_uuid": solar})).await;
        let plans = r.body["plans"].as_array().unwrap();
        assert_eq!(plans.len(), 1);
        assert_eq!(plans[0]["plan_group_uuid"], solar);
        assert_eq!(plans[0]["utility"]["name"], "LPL");
        assert_eq!(plans[0]["rates"]["tdu_fixed_cents_per_month"], 0);
        assert_eq!(plans[0]["rates"]["tdu_cents_per_kwh"], "6.4420");
    }

    async fn custom_terms_bind_the_plan_to_the_account(app) {
        with_directory(&app).await;
        let (account_uuid, _) = account_and_token(&app).await;
        let r = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &json!({
            "esi_id": TNMP, "account_uuid": account_uuid, "term_months": 36,
            "energy_rate_cents_per_kwh": 8.25, "partner_commission_per_month_dollars": "10"
        })).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let plans = r.body["plans"].as_array().unwrap();
        for p in &plans[..3] {
            assert_eq!(p["account_uuid"], account_uuid.as_str());
            assert_eq!(p["term_months"], 36);
            assert_eq!(p["rates"]["energy_cents_per_kwh"], "8.2500");
            assert_eq!(p["rates"]["base_charge_cents_per_month"], 995 + 1000);
        }
        // (1995 + 785 + U x (8.25 + 5.0383)) / U: 2780/1000 + 13.2883 = 16.0683.
        assert_eq!(plans[0]["average_price_cents_per_kwh"]["kwh_1000"], "16.0683");
        // A month-to-month plan keeps its one-month term.
        assert_eq!(plans[3]["term_months"], 1);
        let evs = events(&app, &account_uuid).await;
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].1["is_custom"], true);
        let stored = server::store::market::plans_of_account(&app.state.db, account_uuid.parse().unwrap()).await.unwrap();
        assert_eq!(stored.len(), 4);
        assert!(stored.iter().all(|p| p.is_custom && p.partner_commission_cents_per_month == 1000));
    }

    async fn client_agent_accounts_get_plans_7_to_30_days_out(app) {
        with_directory(&app).await;
        let (account_uuid, token) = account_and_token(&app).await;
        let mut tx = app.state.db.begin().await.unwrap();
        server::store::accounts::set_client_agent_accepted_at(&mut tx, account_uuid.parse().unwrap(), app.clock.now(), app.clock.now()).await.unwrap();
        tx.commit().await.unwrap();
        let today = app.clock.today();
        let r = app.post("/v1/account/enroll/plans/request", &token, &json!({"esi_id": ONCOR_HOUSE})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        for p in r.body["plans"].as_array().unwrap() {
            assert_eq!(date(&p["earliest_start_date"]), today + Duration::days(7));
            assert_eq!(date(&p["latest_start_date"]), today + Duration::days(30));
        }
        // A requested start outside the window is refused with the window.
        let r = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &json!({
            "esi_id": ONCOR_HOUSE, "account_uuid": account_uuid,
            "service_start_date": (today + Duration::days(3)).to_string()
        })).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "start_date_out_of_range"));
        assert_eq!(date(&r.body["error"]["earliest_start_date"]), today + Duration::days(7));
        assert_eq!(date(&r.body["error"]["latest_start_date"]), today + Duration::days(30));
        let r = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &json!({
            "esi_id": ONCOR_HOUSE, "service_start_date": (today + Duration::days(91)).to_string()
        })).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "start_date_out_of_range"));
        let r = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &json!({
            "esi_id": ONCOR_HOUSE, "service_start_date": (today + Duration::days(90)).to_string()
        })).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }

    async fn benchmarks_compare_each_group_with_the_market(app) {
        with_directory(&app).await;
        let r = app.post("/v1/app/accounts/enroll/plans/benchmarks", &app.app_token, &json!({"esi_id": CENTERPOINT})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["utility"]["name"], "CENTERPOINT");
        let b = r.body["benchmarks"].as_array().unwrap();
        assert_eq!(b.len(), 12);
        let usages: Vec<u64> = b[..3].iter().map(|x| x["usage_kwh"].as_u64().unwrap()).collect();
        assert_eq!(usages, [500, 1000, 2000]);
        // Averages fall as usage spreads the fixed charges.
        let price = |x: &Value, k: &str| x[k].as_str().unwrap().parse::<f64>().unwrap();
        assert!(price(&b[0], "plan_cents_per_kwh") > price(&b[1], "plan_cents_per_kwh"));
        assert!(price(&b[0], "market_median_cents_per_kwh") > price(&b[2], "market_median_cents_per_kwh"));
        let r = app.post("/v1/app/accounts/enroll/plans/benchmarks", &app.app_token, &json!({"postal_code": "78205"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "not_in_retail_choice_area"));
        let r = app.post("/v1/app/accounts/enroll/plans/benchmarks", &app.app_token, &json!({})).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_missing"));
    }
}

/// A typical home's kWh in each calendar month, January first, worked out by hand: the year's
/// kWh (7,200 small, 12,000 mid-size, 21,600 large) times the month's share of the load's year
/// (105, 95, 80, 80, 100, 135, 160, 165, 135, 95, 85 and 105 of 1,340), to the kWh.
fn typical_kwh(size: &str) -> [i64; 12] {
    match size {
        "small" => [564, 510, 430, 430, 537, 725, 860, 887, 725, 510, 457, 564],
        "medium" => [
            940, 851, 716, 716, 896, 1209, 1433, 1478, 1209, 851, 761, 940,
        ],
        _ => [
            1693, 1531, 1290, 1290, 1612, 2176, 2579, 2660, 2176, 1531, 1370, 1693,
        ],
    }
}

/// Checks each plan's yearly estimate against twelve bills of a typical home of `size`, worked
/// out by hand, over the twelve whole months before today, in Dallas (1.997 % gross receipts)
/// with Oncor's delivery charges; answers the plans' names in their order.
fn assert_typical_home(app: &TestApp, body: &Value, size: &str, words: &str) -> Vec<String> {
    use chrono::Datelike;
    let window = server::domain::estimate::last_twelve_months(app.clock.today());
    let kwh = typical_kwh(size);
    let dallas = rust_decimal::Decimal::new(1997, 3);
    let plans = body["plans"].as_array().unwrap();
    assert!(plans.len() >= 2, "{body}");
    for plan in plans {
        let by_hand: i64 = window
            .iter()
            .map(|m| {
                let month_kwh = rust_decimal::Decimal::from(kwh[m.month0() as usize]);
                crate::renewal::month_by_hand(plan, month_kwh, rust_decimal::Decimal::ZERO, dallas)
            })
            .sum();
        assert_eq!(
            plan["estimated_annual_cost_cents"].as_i64(),
            Some(by_hand),
            "{plan}"
        );
        let basis = &plan["estimate_basis"];
        assert_eq!(basis["kind"], "home_profile", "{basis}");
        assert_eq!(basis["home_size"], size, "{basis}");
        assert_eq!(
            (
                basis["months_of_usage"].as_i64(),
                basis["months_estimated"].as_i64()
            ),
            (Some(0), Some(0)),
            "{basis}"
        );
        assert_eq!(basis["from"], json!(window[0].to_string()), "{basis}");
        assert_eq!(
            basis["description"],
            format!("estimated for a typical {words} in Oncor Electric Delivery's area, not your home's own use"),
            "{basis}"
        );
    }
    plans
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

unlimited_on_both_engines! {
    async fn a_new_customers_plans_carry_a_typical_homes_yearly_estimate(app) {
        with_directory(&app).await;
        let (uuid, token) = account_and_token(&app).await;
        let path = "/v1/account/enroll/plans/request";
        // A house counts as a mid-size home, an apartment as a small one, unless the customer
        // says otherwise.
        let r = app.post(path, &token, &json!({"esi_id": ONCOR_HOUSE})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let order = assert_typical_home(&app, &r.body, "medium", "mid-size home (1,200 to 2,500 sq ft)");
        let r = app.post(path, &token, &json!({"esi_id": ONCOR_APT_1})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_typical_home(&app, &r.body, "small", "small home or apartment (under 1,200 sq ft)");
        let r = app.post(path, &token, &json!({"esi_id": ONCOR_HOUSE, "home_size": "large"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        // A typical home's estimate leaves the plans in their usual order.
        assert_eq!(assert_typical_home(&app, &r.body, "large", "large home (over 2,500 sq ft)"), order);
        // The app's request for one of its accounts takes the same size.
        let app_path = format!("/v1/app/accounts/{uuid}/enroll/plans/request");
        let r = app.post(&app_path, &app.app_token, &json!({"esi_id": ONCOR_APT_2, "home_size": "medium"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_typical_home(&app, &r.body, "medium", "mid-size home (1,200 to 2,500 sq ft)");

        // A size it does not know is refused before anything is priced.
        let before = events(&app, &uuid).await.len();
        for size in [json!("huge"), json!(""), json!(3)] {
            let r = app.post(path, &token, &json!({"esi_id": ONCOR_HOUSE, "home_size": size})).await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{size}: {}", r.text);
            assert_eq!(r.body["error"]["param"], "home_size", "{}", r.text);
        }
        assert_eq!(events(&app, &uuid).await.len(), before);
    }
}

both_engines! {
    async fn plans_use_the_delivery_charges_in_effect(app) {
        // A new schedule takes effect in three days.
        let mut tx = app.state.db.begin().await.unwrap();
        let from = app.clock.today() + Duration::days(3);
        server::store::market::insert_tdu_charges(&mut tx, "ONCOR", from, 500, "4.9999").await.unwrap();
        tx.commit().await.unwrap();
        let request = json!({"postal_code": "75201"});
        let r = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &request).await;
        assert_eq!(r.body["plans"][0]["rates"]["tdu_fixed_cents_per_month"], 423, "{}", r.text);
        assert_eq!(r.body["plans"][0]["rates"]["tdu_cents_per_kwh"], "4.5403");
        app.clock.advance(Duration::days(3));
        let r = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &request).await;
        assert_eq!(r.body["plans"][0]["rates"]["tdu_fixed_cents_per_month"], 500, "{}", r.text);
        assert_eq!(r.body["plans"][0]["rates"]["tdu_cents_per_kwh"], "4.9999");
        // Other utilities keep theirs.
        let r = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &json!({"postal_code": "77002"})).await;
        assert_eq!(r.body["plans"][0]["rates"]["tdu_fixed_cents_per_month"], 439);
    }

    async fn support_info_names_the_utility_and_the_partner(app) {
        let app_row = server::store::apps::app_by_uuid(&app.state.db, app.app_uuid).await.unwrap().unwrap();
        let info = server::http::market::support_info(&app.state, &app_row, "CENTERPOINT").await.unwrap();
        assert_eq!(info.tdu_name, "CenterPoint Energy Houston Electric");
        assert_eq!(info.tdu_outage_phone.as_deref(), Some("713-207-2222"));
        assert!(info.tdu_website.starts_with("https://"));
        let lpl = server::http::market::support_info(&app.state, &app_row, "LPL").await.unwrap();
        assert_eq!(lpl.tdu_outage_phone, None);
        assert_eq!(serde_json::to_value(&lpl.partner_support).unwrap(), json!({"name": null, "phone": null, "email": null, "hours": null, "url": null}));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_install_generates_its_directory_and_searches_it() {
    let app = TestApp::spawn_with(crate::helpers::Engine::Sqlite, |c| {
        c.market.default_directory_size = 2_000;
    })
    .await;
    let count = server::store::market::count_service_addresses(&app.state.db)
        .await
        .unwrap();
    assert_eq!(count, 2_000);
    assert_eq!(app.state.adapters.index().len(), 2_000);
    // Any generated address is found by its beginning and, exactly, by its full form.
    let rows = server::store::market::service_addresses_after(&app.state.db, "", 5)
        .await
        .unwrap();
    for row in rows {
        let r = app
            .post(
                "/v1/app/accounts/enroll/address-search",
                &app.app_token,
                &json!({"query": row.address_1, "postal_code": row.postal_code, "limit": 50}),
            )
            .await;
        assert!(
            esi_ids(&r.body).contains(&row.esi_id),
            "{row:?}: {}",
            r.text
        );
        let r = app.post("/v1/app/accounts/enroll/full-address-search", &app.app_token, &json!({
            "address_1": row.address_1, "address_2": row.address_2, "city": row.city, "postal_code": row.postal_code
        })).await;
        assert_eq!(
            esi_ids(&r.body),
            std::slice::from_ref(&row.esi_id),
            "{row:?}"
        );
        let r = app
            .post(
                "/v1/app/accounts/enroll/plans/request",
                &app.app_token,
                &json!({"esi_id": row.esi_id}),
            )
            .await;
        assert_eq!(r.body["plans"][0]["utility"]["name"], row.tdu.as_str());
    }
}

fn switchboard(database_url: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(args)
        .env("DATABASE_URL", database_url)
        .env_remove("REDIS_URL")
        .output()
        .unwrap()
}

#[test]
fn the_directory_is_filled_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("market.db").display());
    let out = switchboard(
        &db,
        &["market", "generate", "--addresses", "1200", "--seed", "3"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1200 written, 0 already present"),
        "{stdout}"
    );
    assert!(stdout.contains("now holds 1200 addresses"), "{stdout}");
    // The same seed gives the same addresses: nothing new.
    let out = switchboard(
        &db,
        &["market", "generate", "--addresses", "1200", "--seed", "3"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("0 written, 1200 already present"),
        "{stdout}"
    );

    let csv = dir.path().join("extract.csv");
    std::fs::write(
        &csv,
        "ESI ID,Address,Address Overflow,City,State,ZIP,TDU,Premise Type,Status\n\
         10443720000777001,10 Elm St,Apt 1,Dallas,TX,75201,ONCOR,Residential,Active\n\
         1008901000000000777002,20 Elm St,,Houston,TX,77002,CENTERPOINT,Residential,Active\n\
         12345,30 Elm St,,Houston,TX,77002,CENTERPOINT,Residential,Active\n",
    )
    .unwrap();
    let out = switchboard(&db, &["market", "import", csv.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Read 3 addresses"), "{stdout}");
    assert!(stdout.contains("2 written"), "{stdout}");
    assert!(stdout.contains("1 rejected"), "{stdout}");
    assert!(
        stdout.contains("line 4: ESI ID is not 17 or 22 digits"),
        "{stdout}"
    );
    assert!(stdout.contains("now holds 1202 addresses"), "{stdout}");

    let missing = switchboard(&db, &["market", "import", "/nonexistent.csv"]);
    assert!(!missing.status.success());
}
