//! Plan groups and live app requests in the dashboard, driven like a browser. The operator
//! creates and edits an app's plan groups; an edit is a new version, listed with the earlier
//! ones, and reaches plans priced after it while plans priced before it (and the contracts
//! accepted with them) keep their values. Partner members read their apps' groups only; a
//! member of another organisation gets 404. A partner asks for a live app; the operator
//! approves (the live app appears for the partner) or declines (the partner reads why).

use std::str::FromStr;

use reqwest::StatusCode;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use server::domain::users::Role;
use uuid::Uuid;

use crate::{
    dashboard::{create_sandbox_app, signed_in},
    enrollment::{customer, relaxed, with_meters, HOUSE},
    helpers::TestApp,
};

/// The app's plan groups as the API lists them.
async fn api_groups(app: &TestApp, token: &str) -> Vec<Value> {
    let r = app.get("/v1/app/plan-groups?limit=100", token).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"].as_array().unwrap().clone()
}

async fn api_group(app: &TestApp, token: &str, name: &str) -> Value {
    api_groups(app, token)
        .await
        .into_iter()
        .find(|g| g["name"] == name)
        .unwrap_or_else(|| panic!("no group {name}"))
}

/// The app's plans for the test meter, priced now through the API.
async fn priced(app: &TestApp, token: &str) -> Vec<Value> {
    let r = app
        .post(
            "/v1/app/accounts/enroll/plans/request",
            token,
            &json!({"esi_id": HOUSE}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["plans"].as_array().unwrap().clone()
}

fn plan_named<'a>(plans: &'a [Value], name: &str) -> &'a Value {
    plans
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no plan {name}"))
}

fn decimal(v: &Value) -> Decimal {
    Decimal::from_str(v.as_str().unwrap()).unwrap()
}

/// The form of the default "12-Month Fixed" group with some values changed.
fn fixed_12<'a>(changes: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut fields = vec![
        ("name", "12-Month Fixed"),
        ("plan_type", "fixed"),
        ("term_months", "12"),
        ("base_charge_cents_per_month", "995"),
        ("energy_margin_cents_per_kwh", "4.2000"),
        ("partner_commission_cents_per_month", "500"),
        ("solar_buyback_cents_per_kwh", "0.0000"),
        ("early_termination_fee_cents", "15000"),
        ("renewable_percent", "31"),
        ("tos_version", "2026.1"),
        ("position", "0"),
    ];
    for (k, v) in changes {
        match fields.iter_mut().find(|(f, _)| f == k) {
            Some(field) => field.1 = v,
            None => fields.push((k, v)),
        }
    }
    fields
}

/// The first uuid in `text` after `prefix`.
fn uuid_after(text: &str, prefix: &str) -> Uuid {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix} in {text}"))
        + prefix.len();
    Uuid::parse_str(&text[at..at + 36]).unwrap()
}

both_engines! {
    with relaxed;
    async fn an_edit_is_a_new_version_and_priced_plans_and_contracts_keep_theirs(app) {
        with_meters(&app).await;
        // An active contract, accepted before the edit.
        let (account, token) = customer(&app, "ana@example.com").await;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let location = r.body["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let plan_path = format!("/v1/account/locations/{location}/plan");
        let contract_before = app.get(&plan_path, &token).await;
        assert_eq!(contract_before.status, StatusCode::OK, "{}", contract_before.text);
        let stored_before = server::store::enrollment::contracts_of_account(&app.state.db, account.parse().unwrap()).await.unwrap();

        // A plan priced before the edit. Pricing copies the group's values into the plan's own
        // row (`services::plans::plan_row`): the plan never reads its group again.
        let before = priced(&app, &app.app_token).await;
        let old = plan_named(&before, "12-Month Fixed").clone();
        let old_uuid: Uuid = old["plan_uuid"].as_str().unwrap().parse().unwrap();
        assert_eq!(old["rates"]["base_charge_cents_per_month"], 995 + 500);
        let group = api_group(&app, &app.app_token, "12-Month Fixed").await;
        assert_eq!(group["energy_margin_cents_per_kwh"], "4.2000");
        let group_uuid = group["uuid"].as_str().unwrap().to_owned();

        // The operator edits the group.
        let ops = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let list = format!("/dashboard/apps/{}/plan-groups", app.app_uuid);
        let page = ops.get(&list).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("12-Month Fixed") && page.text.contains("New plan group"));
        let group_page = format!("{list}/{group_uuid}");
        let edit = format!("{group_page}/edit");
        let form = ops.get(&edit).await;
        assert_eq!(form.status, StatusCode::OK, "{}", form.text);
        assert!(form.text.contains("value=\"4.2000\""), "the form shows the current values");
        let r = ops
            .submit(&edit, &group_page, &fixed_12(&[
                ("energy_margin_cents_per_kwh", "5.2"),
                ("base_charge_cents_per_month", "1295"),
                ("version", "1"),
            ]))
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(r.location, format!("{group_page}?done=edited"));

        // Its versions are listed, with who made each.
        let shown = ops.get(&group_page).await;
        assert_eq!(shown.status, StatusCode::OK);
        assert!(shown.text.contains("Version 2"), "{}", shown.text);
        assert!(shown.text.contains("5.2000") && shown.text.contains("4.2000"), "both versions' values");
        let versions = &shown.text[shown.text.find("<h2>Versions</h2>").unwrap()..];
        assert!(versions.contains("ops@example.com") && versions.contains(">cli<"), "who made each: {versions}");

        // The plan priced before is unchanged, and says which version it was priced with.
        let kept = server::store::market::plan_by_uuid(&app.state.db, old_uuid).await.unwrap().unwrap();
        assert_eq!(kept.energy_cents_per_kwh, old["rates"]["energy_cents_per_kwh"].as_str().unwrap());
        assert_eq!(kept.base_charge_cents_per_month, 995 + 500);
        assert_eq!(kept.plan_group_version, 1);
        // So is the active contract: its plan and rates are as accepted.
        let contract_after = app.get(&plan_path, &token).await;
        assert_eq!(contract_after.body["uuid"], contract_before.body["uuid"]);
        assert_eq!(contract_after.body["rates"], contract_before.body["rates"]);
        assert_eq!(contract_after.body["contract"]["rates"], contract_before.body["contract"]["rates"]);
        let stored_after = server::store::enrollment::contracts_of_account(&app.state.db, account.parse().unwrap()).await.unwrap();
        assert_eq!(format!("{stored_after:?}"), format!("{stored_before:?}"));

        // Plans priced now use the new values.
        let after = priced(&app, &app.app_token).await;
        let new = plan_named(&after, "12-Month Fixed");
        assert_eq!(new["rates"]["base_charge_cents_per_month"], 1295 + 500);
        assert_eq!(
            decimal(&new["rates"]["energy_cents_per_kwh"]) - decimal(&old["rates"]["energy_cents_per_kwh"]),
            Decimal::ONE,
            "one cent more margin, on the same wholesale price"
        );
        let new_uuid: Uuid = new["plan_uuid"].as_str().unwrap().parse().unwrap();
        let stored = server::store::market::plan_by_uuid(&app.state.db, new_uuid).await.unwrap().unwrap();
        assert_eq!(stored.plan_group_version, 2);
        // The other groups were not touched.
        assert_eq!(
            plan_named(&after, "24-Month Fixed")["rates"]["base_charge_cents_per_month"],
            plan_named(&before, "24-Month Fixed")["rates"]["base_charge_cents_per_month"]
        );

        // The API lists the group's current version.
        let group = api_group(&app, &app.app_token, "12-Month Fixed").await;
        assert_eq!(group["energy_margin_cents_per_kwh"], "5.2000");
        assert_eq!(group["base_charge_cents_per_month"], 1295);

        // Saving the same values again makes no version; an edit of an outdated form is refused.
        let r = ops.submit(&edit, &group_page, &fixed_12(&[
            ("energy_margin_cents_per_kwh", "5.2000"), ("base_charge_cents_per_month", "1295"), ("version", "2"),
        ])).await;
        assert_eq!(r.location, format!("{group_page}?done=unchanged"));
        let r = ops.submit(&edit, &group_page, &fixed_12(&[("version", "1")])).await;
        assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
        assert!(r.text.contains("changed meanwhile"));
        assert_eq!(api_group(&app, &app.app_token, "12-Month Fixed").await["base_charge_cents_per_month"], 1295);

        // Audited, with the values before and after.
        let audit = ops.get("/dashboard/audit").await;
        assert!(audit.text.contains("plan_group.edited"));
        assert_eq!(audit.text.matches("plan_group.edited").count(), 1, "one edit, one entry");
    }

    async fn the_operator_creates_groups_and_bad_input_changes_nothing(app) {
        let ops = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let list = format!("/dashboard/apps/{}/plan-groups", app.app_uuid);
        let new = format!("{list}/new");
        assert_eq!(ops.get(&new).await.status, StatusCode::OK);
        let eighteen = [
            ("name", "18-Month Fixed"), ("plan_type", "fixed"), ("term_months", "18"),
            ("base_charge_cents_per_month", "895"), ("energy_margin_cents_per_kwh", "3.95"),
            ("partner_commission_cents_per_month", "400"), ("solar_buyback_cents_per_kwh", "0"),
            ("early_termination_fee_cents", "17500"), ("renewable_percent", "50"),
            ("tos_version", "2026.2"), ("position", ""),
        ];
        let r = ops.submit(&new, &list, &eighteen).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let created = uuid_after(&r.location, &format!("{list}/"));
        let groups = api_groups(&app, &app.app_token).await;
        assert_eq!(groups.len(), 5);
        let g = groups.last().unwrap();
        assert_eq!(g["uuid"], created.to_string());
        assert_eq!(g["term_months"], 18);
        assert_eq!(g["energy_margin_cents_per_kwh"], "3.9500");
        assert_eq!(g["tos_version"], "2026.2");
        let shown = ops.get(&format!("{list}/{created}")).await;
        assert!(shown.text.contains("Version 1"));
        // Plans are priced from it at once.
        with_meters(&app).await;
        let plans = priced(&app, &app.app_token).await;
        assert_eq!(plan_named(&plans, "18-Month Fixed")["term_months"], 18);

        // Wrong values come back beside their fields; nothing is written.
        for (fields, expected) in [
            (vec![("term_months", "48")], "term_months must be a whole number of months from 1 to 36"),
            (vec![("term_months", "0")], "term_months must be"),
            (vec![("base_charge_cents_per_month", "-1")], "base_charge_cents_per_month must be a whole number of cents"),
            (vec![("energy_margin_cents_per_kwh", "abc")], "energy_margin_cents_per_kwh must be a decimal number"),
            (vec![("renewable_percent", "150")], "renewable_percent must be"),
            (vec![("name", "  ")], "name is required"),
            (vec![("name", "12-month fixed")], "another plan group of this app has this name"),
            (vec![("plan_type", "month_to_month"), ("term_months", "1"), ("early_termination_fee_cents", "0"), ("is_month_to_month_default", "true")],
             "month-to-month default; an app has one"),
        ] {
            let mut form: Vec<(&str, &str)> = eighteen.iter().copied().filter(|(k, _)| *k != "name").collect();
            form.push(("name", "Another"));
            for (k, v) in &fields {
                form.retain(|(f, _)| f != k);
                form.push((*k, *v));
            }
            let r = ops.submit(&new, &list, &form).await;
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{fields:?}: {}", r.text);
            assert!(r.text.contains(expected), "{fields:?}: {}", r.text);
            assert!(r.text.contains("field-error"), "beside its field");
        }
        assert_eq!(api_groups(&app, &app.app_token).await.len(), 5, "nothing was created");

        // The same rules on an edit.
        let group = format!("{list}/{created}");
        let mut form: Vec<(&str, &str)> = eighteen.to_vec();
        form.retain(|(k, _)| *k != "term_months");
        form.push(("term_months", "37"));
        form.push(("version", "1"));
        let r = ops.submit(&format!("{group}/edit"), &group, &form).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert_eq!(api_groups(&app, &app.app_token).await.last().unwrap()["term_months"], 18, "unchanged");
        assert!(!ops.get(&group).await.text.contains("Version 2"));

        let audit = ops.get("/dashboard/audit").await;
        assert_eq!(audit.text.matches("plan_group.created").count(), 1);
        assert!(!audit.text.contains("plan_group.edited"));
    }

    async fn an_app_keeps_a_month_to_month_group_to_roll_onto(app) {
        let ops = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let monthly = api_group(&app, &app.app_token, "Month-to-Month Variable").await;
        let list = format!("/dashboard/apps/{}/plan-groups", app.app_uuid);
        let group = format!("{list}/{}", monthly["uuid"].as_str().unwrap());
        // Turning the app's only month-to-month group fixed is refused, with why, beside the field.
        let form = fixed_12(&[("name", "Month-to-Month Variable"), ("position", "3"), ("version", "1")]);
        let r = ops.submit(&format!("{group}/edit"), &group, &form).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains("last month-to-month group"), "{}", r.text);
        assert!(r.text.contains("field-error"), "beside its field");
        let now = api_group(&app, &app.app_token, "Month-to-Month Variable").await;
        assert_eq!((now["plan_type"].as_str(), now["is_month_to_month_default"].as_bool()), (Some("month_to_month"), Some(true)));
        // With another month-to-month group, it may.
        let second = fixed_12(&[("name", "Monthly Two"), ("plan_type", "month_to_month"), ("term_months", "1"), ("early_termination_fee_cents", "0"), ("position", "")]);
        let r = ops.submit(&format!("{list}/new"), &list, &second).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let r = ops.submit(&format!("{group}/edit"), &group, &form).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(api_group(&app, &app.app_token, "Month-to-Month Variable").await["plan_type"], "fixed");
    }

    async fn partners_read_their_groups_and_others_get_404(app) {
        let partner = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let (uuid, token) = create_sandbox_app(&partner, "Acme Energy").await;
        let group = api_group(&app, &token, "24-Month Fixed").await;
        let list = format!("/dashboard/apps/{uuid}/plan-groups");
        let page = format!("{list}/{}", group["uuid"].as_str().unwrap());

        // Read-only for the partner: the pages show, the operator's forms do not exist.
        let r = partner.get(&list).await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(r.text.contains("24-Month Fixed") && !r.text.contains("New plan group"));
        let r = partner.get(&page).await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(r.text.contains("Version 1") && !r.text.contains("Edit this plan group"));
        assert!(partner.get(&format!("/dashboard/apps/{uuid}")).await.text.contains("plan-groups"), "linked from the app");
        assert_eq!(partner.get(&format!("{list}/new")).await.status, StatusCode::NOT_FOUND);
        assert_eq!(partner.get(&format!("{page}/edit")).await.status, StatusCode::NOT_FOUND);
        let r = partner.submit(&list, &list, &fixed_12(&[("name", "Partner Special")])).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        let r = partner.submit(&list, &page, &fixed_12(&[("name", "24-Month Fixed"), ("term_months", "24"), ("version", "1")])).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

        // Another organisation's member: nothing exists.
        let stranger = signed_in(&app, "stranger@example.com", Role::Partner, Some("Globex")).await;
        for path in [list.clone(), page.clone(), format!("{list}/new"), format!("{page}/edit")] {
            assert_eq!(stranger.get(&path).await.status, StatusCode::NOT_FOUND, "{path}");
        }
        let r = stranger.submit("/dashboard", &page, &fixed_12(&[("version", "1")])).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        let r = stranger.submit("/dashboard", &list, &fixed_12(&[("name", "Stolen")])).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        assert_eq!(stranger.get(&format!("/dashboard/apps/{}/plan-groups", app.app_uuid)).await.status, StatusCode::NOT_FOUND, "nor the platform's own");

        // A form without the session's CSRF token changes nothing, even the operator's.
        let ops = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let r = ops.post(&list, &fixed_12(&[("name", "Forged"), ("csrf", "forged")])).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN);

        // The operator edits the partner's groups; the partner sees the new version.
        let mut form = fixed_12(&[("name", "24-Month Fixed"), ("term_months", "24"), ("early_termination_fee_cents", "20000"), ("energy_margin_cents_per_kwh", "3.9000"), ("position", "1"), ("version", "1")]);
        form.retain(|(k, _)| *k != "base_charge_cents_per_month");
        form.push(("base_charge_cents_per_month", "0"));
        let r = ops.submit(&format!("{page}/edit"), &page, &form).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(partner.get(&page).await.text.contains("Version 2"));
        assert_eq!(api_group(&app, &token, "24-Month Fixed").await["base_charge_cents_per_month"], 0);
        assert_eq!(api_groups(&app, &token).await.len(), 4);
    }

    async fn a_partners_live_app_request_is_approved(app) {
        let partner = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let list = "/dashboard/live-app-requests";
        let r = partner.get(list).await;
        assert_eq!(r.status, StatusCode::OK);
        assert!(r.text.contains("Request a live app"));

        // Wrong values are named; nothing is stored.
        let r = partner.submit(list, list, &[("display_name", "Acme Live"), ("slug", "Acme Live!"), ("reason", "")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains("slug must be") && r.text.contains("reason is required"), "{}", r.text);
        assert!(!partner.get(list).await.text.contains("/dashboard/live-app-requests/"));

        let r = partner
            .submit(list, list, &[("display_name", "Acme Live"), ("slug", "acme-live"), ("reason", "Our pilot ends in May; we go live with 200 homes.")])
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let page = partner.get(list).await;
        assert!(page.text.contains("Acme Live") && page.text.contains("pending"), "{}", page.text);
        let request = uuid_after(&page.text, "/dashboard/live-app-requests/");
        let request_page = format!("{list}/{request}");
        // One pending request per slug, and not a slug an app has.
        let r = partner.submit(list, list, &[("display_name", "Acme Again"), ("slug", "acme-live"), ("reason", "again")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(r.text.contains("is taken"));

        // Only the operator decides; a partner's approval does not exist.
        let r = partner.submit(&request_page, &format!("{request_page}/approve"), &[]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        let stranger = signed_in(&app, "stranger@example.com", Role::Partner, Some("Globex")).await;
        assert_eq!(stranger.get(&request_page).await.status, StatusCode::NOT_FOUND);
        assert!(!stranger.get(list).await.text.contains("Acme Live"));
        let r = stranger.submit(list, &format!("{request_page}/approve"), &[]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        let r = stranger.submit(list, &format!("{request_page}/decline"), &[("reason", "no")]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);

        let ops = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        // The operator creates live apps directly; the request form is the partners'.
        let r = ops.submit(list, list, &[("display_name", "Ops Live"), ("slug", "ops-live"), ("reason", "x")]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        let r = ops.post(&format!("{request_page}/approve"), &[("csrf", "forged")]).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "CSRF-checked");
        let listed = ops.get(list).await;
        assert!(listed.text.contains("Acme Live") && listed.text.contains("Acme"));
        let shown = ops.get(&request_page).await;
        assert!(shown.text.contains("Our pilot ends in May"));
        let r = ops.submit(&request_page, &format!("{request_page}/approve"), &[]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let r = ops.submit(&request_page, &format!("{request_page}/approve"), &[]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "decided once");
        assert!(r.text.contains("approved already"));

        // The partner sees the live app, makes its key, and the API answers for it.
        let shown = partner.get(&request_page).await;
        assert!(shown.text.contains("approved") && shown.text.contains("Open the live app"), "{}", shown.text);
        let live = uuid_after(&shown.text, "/dashboard/apps/");
        let home = partner.get("/dashboard").await;
        assert!(home.text.contains("Acme Live") && home.text.contains("live"));
        let app_page = format!("/dashboard/apps/{live}");
        let r = partner.submit(&app_page, &format!("{app_page}/tokens"), &[("name", "Live server")]).await;
        let token = partner.shown(&r).await.shown_token();
        let r = app.get("/v1/app", &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["environment"], "live");
        assert_eq!(r.body["slug"], "acme-live");
        assert_eq!(r.body["name"], "Acme Live");
        assert_eq!(api_groups(&app, &token).await.len(), 4, "with the default plan groups");
        assert_eq!(stranger.get(&app_page).await.status, StatusCode::NOT_FOUND);

        let audit = ops.get("/dashboard/audit").await;
        for action in ["live_app_request.created", "live_app_request.approved", "app.created"] {
            assert!(audit.text.contains(action), "{action}");
        }
    }

    async fn a_declined_request_tells_the_partner_why(app) {
        let partner = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let list = "/dashboard/live-app-requests";
        let r = partner.submit(list, list, &[("display_name", "Acme Live"), ("slug", "acme-live"), ("reason", "Soon.")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let request = uuid_after(&partner.get(list).await.text, "/dashboard/live-app-requests/");
        let request_page = format!("{list}/{request}");

        let ops = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let r = ops.submit(&request_page, &format!("{request_page}/decline"), &[("reason", " ")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "a reason is required");
        let r = ops
            .submit(&request_page, &format!("{request_page}/decline"), &[("reason", "Finish the sandbox review first.")])
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let r = ops.submit(&request_page, &format!("{request_page}/approve"), &[]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "a declined request stays declined");

        let shown = partner.get(&request_page).await;
        assert!(shown.text.contains("declined") && shown.text.contains("Finish the sandbox review first."), "{}", shown.text);
        assert!(!shown.text.contains("/dashboard/apps/"), "no app");
        assert!(!partner.get("/dashboard").await.text.contains("Acme Live"));
        // The slug is free again for a new request.
        let r = partner.submit(list, list, &[("display_name", "Acme Live"), ("slug", "acme-live"), ("reason", "Reviewed now.")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(ops.get("/dashboard/audit").await.text.contains("live_app_request.declined"));
    }
}
