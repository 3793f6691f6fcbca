//! Corrections of a bill: the operator cancels it and issues it again with the corrected
//! consumption; a credit note references the cancelled bill, the numbers stay without gaps,
//! an overpayment is credited on the next bill or refunded to the card that paid, as the
//! operator chooses, an amount still due may go on a payment plan, and the customer is told
//! why and where the money went.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::{
    collections::{all_invoices, bill_today, group_total, invoice},
    dashboard::signed_in,
    enrollment::{add_card_number, advance, customer, relaxed, walk_to_active, with_meters, HOUSE},
    helpers::TestApp,
};
use server::domain::users::Role;

/// An active customer with a paid bill issued today; answers (uuid, token, the bill).
async fn paid_bill(app: &TestApp, email: &str) -> (String, String, Value) {
    let (uuid, token) = customer(app, email).await;
    walk_to_active(app, &token, HOUSE).await;
    add_card_number(app, &token, "4242424242424242").await;
    // Nothing else left unpaid.
    for i in all_invoices(app, &token).await {
        if i["status"] == "open" || i["status"] == "past_due" {
            let number = i["number"].as_str().unwrap();
            let r = app
                .post(
                    &format!("/v1/account/billing/invoices/{number}/pay"),
                    &token,
                    &Value::Null,
                )
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        }
    }
    let bill = bill_today(app, &token).await;
    let number = bill["number"].as_str().unwrap();
    let r = app
        .post(
            &format!("/v1/account/billing/invoices/{number}/pay"),
            &token,
            &Value::Null,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let paid = invoice(app, &token, number).await;
    (uuid, token, paid)
}

async fn correct(
    app: &TestApp,
    role: Role,
    uuid: &str,
    number: &str,
    kwh: &str,
    reason: &str,
) -> crate::dashboard::Page {
    correct_to(app, role, uuid, number, kwh, reason, None).await
}

/// `correct`, choosing where an overpayment goes (`credit` or `refund`; the form's default
/// when `None`).
async fn correct_to(
    app: &TestApp,
    role: Role,
    uuid: &str,
    number: &str,
    kwh: &str,
    reason: &str,
    overpayment: Option<&str>,
) -> crate::dashboard::Page {
    let organisation = (role != Role::Operator).then_some("Acme");
    let user = signed_in(
        app,
        &format!("user-{}@example.com", uuid::Uuid::new_v4()),
        role,
        organisation,
    )
    .await;
    let page = format!("/dashboard/accounts/{uuid}");
    let action = format!("{page}/invoices/{number}/reissue");
    if role != Role::Operator {
        // The account's page is not theirs to see: a made-up token is all they could send.
        return user
            .post(&action, &[("csrf", "x"), ("kwh", kwh), ("reason", reason)])
            .await;
    }
    let mut fields = vec![("kwh", kwh), ("reason", reason)];
    if let Some(o) = overpayment {
        fields.push(("overpayment", o));
    }
    user.submit(&page, &action, &fields).await
}

async fn events_of(app: &TestApp, uuid: &str, kind: &str) -> Vec<Value> {
    server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap())
        .await
        .unwrap()
        .iter()
        .filter(|e| e.kind == kind)
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect()
}

fn kwh_times(bill: &Value, factor: f64) -> String {
    let kwh: f64 = bill["total_kwh"].as_str().unwrap().parse().unwrap();
    format!("{:.3}", kwh * factor)
}

async fn corrected_event(app: &TestApp, uuid: &str) -> Vec<Value> {
    server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap())
        .await
        .unwrap()
        .iter()
        .filter(|e| e.kind == "invoice.corrected")
        .map(|e| serde_json::from_str(&e.data).unwrap())
        .collect()
}

fn numbers_without_gaps(invoices: &[Value]) {
    let mut n: Vec<i64> = invoices
        .iter()
        .map(|i| i["number"].as_str().unwrap()[4..].parse().unwrap())
        .collect();
    n.sort_unstable();
    for w in n.windows(2) {
        assert_eq!(w[1], w[0] + 1, "{n:?}");
    }
}

both_engines! {
    with relaxed;
    async fn an_overbilled_paid_bill_is_cancelled_reissued_and_the_overpayment_credited(app) {
        with_meters(&app).await;
        let (uuid, token, bill) = paid_bill(&app, "overbilled@example.com").await;
        let number = bill["number"].as_str().unwrap().to_owned();
        let paid = bill["total_cents"].as_i64().unwrap();
        let before = all_invoices(&app, &token).await.len();

        // Only the operator corrects bills; bad input changes nothing.
        let r = correct(&app, Role::Partner, &uuid, &number, &kwh_times(&bill, 0.5), "Meter misread").await;
        assert_ne!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        for (kwh, reason) in [("-5", "Meter misread"), ("abc", "Meter misread"), ("100", "")] {
            let r = correct(&app, Role::Operator, &uuid, &number, kwh, reason).await;
            assert_ne!(r.status, StatusCode::SEE_OTHER, "{kwh} {reason}: {}", r.text);
        }
        assert_eq!(all_invoices(&app, &token).await.len(), before);
        assert_eq!(invoice(&app, &token, &number).await["status"], "paid");

        let r = correct(&app, Role::Operator, &uuid, &number, &kwh_times(&bill, 0.5), "The meter was misread in March.").await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let invoices = all_invoices(&app, &token).await;
        assert_eq!(invoices.len(), before + 2);
        numbers_without_gaps(&invoices);
        // The original keeps its number, cancelled.
        let original = invoice(&app, &token, &number).await;
        assert_eq!(original["status"], "voided", "{original}");
        assert!(original["voided_at"].is_string());
        // The credit note references it and cancels its amount.
        let note = invoices.iter().find(|i| group_total(i, "Credit note") != 0).expect("a credit note");
        assert_eq!(note["total_cents"].as_i64().unwrap(), -paid, "{note}");
        let line = &note["charges_groups"][0]["charges"][0];
        assert_eq!(line["description"], format!("Cancels {number}"), "{note}");
        // The new bill: corrected lines, the payment counted, nothing due.
        let events = corrected_event(&app, &uuid).await;
        assert_eq!(events.len(), 1, "{events:?}");
        let e = &events[0];
        assert_eq!(e["original_invoice_number"], number.as_str());
        assert_eq!(e["credit_note_number"], note["number"]);
        let corrected = e["total_cents"].as_i64().unwrap();
        assert!(corrected < paid, "{e}");
        assert_eq!(e["credit_cents"].as_i64().unwrap(), paid - corrected);
        assert_eq!(e["due_cents"], 0);
        let new = invoice(&app, &token, e["invoice_number"].as_str().unwrap()).await;
        assert_eq!(new["status"], "paid", "{new}");
        assert_eq!(group_total(&new, "Paid on the cancelled bill"), -paid, "{new}");
        // The customer is told why, with the corrected bill.
        let r = app.get(&format!("/v1/app/sandbox/emails?account_uuid={uuid}&limit=100"), &app.app_token).await;
        let mail = r.body["data"].as_array().unwrap().iter().find(|m| m["template"] == "invoice_corrected").cloned().expect("the correction e-mail");
        let text = mail["text"].as_str().unwrap();
        assert!(text.contains("The meter was misread in March.") && text.contains(new["number"].as_str().unwrap()), "{text}");
        // The overpayment is credited on the next bill, once.
        advance(&app, &token, 1).await;
        let next = bill_today(&app, &token).await;
        assert_eq!(group_total(&next, "Credits"), -(paid - corrected), "{next}");
        advance(&app, &token, 1).await;
        let later = bill_today(&app, &token).await;
        assert_eq!(group_total(&later, "Credits"), 0, "{later}");
        // A cancelled bill is not corrected again.
        let r = correct(&app, Role::Operator, &uuid, &number, "1", "Again, by mistake").await;
        assert_ne!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    }

    async fn an_underbilled_bill_leaves_the_rest_due_and_a_payment_plan_offered(app) {
        with_meters(&app).await;
        let (uuid, token, bill) = paid_bill(&app, "underbilled@example.com").await;
        let number = bill["number"].as_str().unwrap().to_owned();
        let paid = bill["total_cents"].as_i64().unwrap();
        let r = correct(&app, Role::Operator, &uuid, &number, &kwh_times(&bill, 2.0), "Estimated read replaced by the actual read.").await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let e = corrected_event(&app, &uuid).await.pop().unwrap();
        let corrected = e["total_cents"].as_i64().unwrap();
        assert!(corrected > paid, "{e}");
        let new = invoice(&app, &token, e["invoice_number"].as_str().unwrap()).await;
        assert_eq!(new["status"], "open", "{new}");
        assert_eq!(new["total_cents"].as_i64().unwrap(), corrected - paid);
        // The rest may go on a payment plan.
        let r = app.get("/v1/account/billing/payment-plan", &token).await;
        assert_eq!(r.body["offer"]["unpaid_cents"].as_i64().unwrap(), corrected - paid, "{}", r.text);
        let r = app.post("/v1/account/billing/payment-plan", &token, &json!({"months": 3})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        numbers_without_gaps(&all_invoices(&app, &token).await);
    }

    async fn an_overpayment_the_operator_refunds_goes_back_to_the_card_that_paid(app) {
        with_meters(&app).await;
        let (uuid, token, bill) = paid_bill(&app, "refunded@example.com").await;
        let number = bill["number"].as_str().unwrap().to_owned();
        let paid = bill["total_cents"].as_i64().unwrap();
        let payment = bill["payments"].as_array().unwrap().iter().find(|p| p["status"] == "succeeded").cloned().expect("the card payment");

        // The form offers both; an unknown choice changes nothing.
        let ops = signed_in(&app, "ops-form@example.com", Role::Operator, None).await;
        let page = ops.get(&format!("/dashboard/accounts/{uuid}")).await;
        assert!(page.text.contains("Refund to the card") && page.text.contains("Credit on the next bill"), "{}", page.text);
        let r = correct_to(&app, Role::Operator, &uuid, &number, &kwh_times(&bill, 0.5), "Meter misread", Some("cash")).await;
        assert_ne!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(invoice(&app, &token, &number).await["status"], "paid");

        let r = correct_to(&app, Role::Operator, &uuid, &number, &kwh_times(&bill, 0.5), "The meter was misread in March.", Some("refund")).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let e = corrected_event(&app, &uuid).await.pop().unwrap();
        let corrected = e["total_cents"].as_i64().unwrap();
        let overpaid = paid - corrected;
        assert!(overpaid > 0, "{e}");
        assert_eq!(e["refunded_cents"].as_i64().unwrap(), overpaid, "{e}");
        assert_eq!(e["credit_cents"], 0, "{e}");

        // Recorded on the card's payment, announced, and audited.
        let original = invoice(&app, &token, &number).await;
        let p = original["payments"].as_array().unwrap().iter().find(|p| p["uuid"] == payment["uuid"]).cloned().unwrap();
        assert_eq!(p["refunded_cents"].as_i64().unwrap(), overpaid, "{p}");
        let refunds: Vec<i64> = p["refunds"].as_array().unwrap().iter().map(|r| r["amount_cents"].as_i64().unwrap()).collect();
        assert_eq!(refunds, vec![overpaid], "{p}");
        let announced = events_of(&app, &uuid, "account.payment_refunded").await;
        assert_eq!(announced.len(), 1, "{announced:?}");
        assert_eq!(announced[0]["source"], "correction");
        assert_eq!(announced[0]["amount_cents"].as_i64().unwrap(), overpaid);
        assert_eq!(announced[0]["payment_uuid"], payment["uuid"]);
        let audit = server::store::audit::latest_entries(&app.state.db, 50).await.unwrap();
        let entry = audit.iter().find(|e| e.action == "invoice.corrected").expect("audited");
        assert!(entry.detail.contains("refund") && entry.detail.contains(&overpaid.to_string()), "{}", entry.detail);

        // The new bill counts the refund: nothing due, nothing credited.
        let new = invoice(&app, &token, e["invoice_number"].as_str().unwrap()).await;
        assert_eq!(group_total(&new, "Refunded to the card"), overpaid, "{new}");
        assert_eq!(new["total_cents"], 0, "{new}");
        assert_eq!(new["status"], "paid", "{new}");
        // The e-mail says where the money went.
        let r = app.get(&format!("/v1/app/sandbox/emails?account_uuid={uuid}&limit=100"), &app.app_token).await;
        let mail = r.body["data"].as_array().unwrap().iter().find(|m| m["template"] == "invoice_corrected").cloned().expect("the correction e-mail");
        let text = mail["text"].as_str().unwrap();
        assert!(text.contains(&format!("refunded {} to the card", app::format::dollars(overpaid))), "{text}");
        assert!(!text.contains("credit on your next bill"), "{text}");
        // Not credited as well.
        advance(&app, &token, 1).await;
        let next = bill_today(&app, &token).await;
        assert_eq!(group_total(&next, "Credits"), 0, "{next}");
    }

    async fn a_bill_a_payment_plan_settled_is_not_refunded_to_a_card(app) {
        with_meters(&app).await;
        let (uuid, token) = crate::collections::non_paying_customer(&app, "plan-paid@example.com", HOUSE).await;
        let bill = crate::collections::unpaid_bill(&app, (&uuid, &token)).await;
        let number = bill["number"].as_str().unwrap().to_owned();
        let r = app.post("/v1/account/billing/payment-plan", &token, &json!({"months": 2})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(invoice(&app, &token, &number).await["status"], "paid");
        let before = all_invoices(&app, &token).await.len();
        // Nothing was paid by card: a refund is refused and nothing changes.
        let r = correct_to(&app, Role::Operator, &uuid, &number, &kwh_times(&bill, 0.5), "Meter misread", Some("refund")).await;
        assert_ne!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert!(r.text.contains("credit it on the next bill"), "{}", r.text);
        assert_eq!(all_invoices(&app, &token).await.len(), before);
        assert!(events_of(&app, &uuid, "account.payment_refunded").await.is_empty());
        // Credited instead.
        let r = correct_to(&app, Role::Operator, &uuid, &number, &kwh_times(&bill, 0.5), "Meter misread", Some("credit")).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let e = corrected_event(&app, &uuid).await.pop().unwrap();
        assert!(e["credit_cents"].as_i64().unwrap() > 0, "{e}");
        assert_eq!(e["refunded_cents"], 0, "{e}");
    }
}
