//! The e-mails a customer receives at each step, read from the sandbox outbox: enrollment
//! received, service scheduled with its date, service active, bill ready, payment failed and past due,
//! each in the partner's branding (name, colour, logo, contacts) with links that keep working.

use reqwest::StatusCode;
use serde_json::Value;

use crate::{
    enrollment::{add_card_number, advance, customer, relaxed, walk_to_active, with_meters, HOUSE},
    helpers::TestApp,
};

const LOGO: &str = "https://cdn.sunny.example/logo.png";
const SUPPORT_URL: &str = "https://sunny.example/help";

/// The partner's branding and contacts, as its operator sets them.
async fn brand(app: &TestApp) {
    server::admin::set_branding(
        &app.state.db,
        app.app_uuid,
        &server::admin::BrandingChange {
            display_name: Some("Sunny Homes"),
            primary_color: Some("#ff8800"),
            logo_url: Some(LOGO),
        },
    )
    .await
    .unwrap();
    let sql = format!(
        "UPDATE apps SET support_phone = '(512) 555-0100', support_email = 'help@sunny.example', \
         support_url = '{SUPPORT_URL}', support_hours = 'Mon-Fri 8am-6pm CT' WHERE uuid = $1"
    );
    let mut tx = app.state.db.begin().await.unwrap();
    match &mut tx {
        server::store::Tx::Sqlite(t) => {
            sqlx::query(&sql)
                .bind(app.app_uuid)
                .execute(&mut **t)
                .await
                .unwrap();
        }
        server::store::Tx::Postgres(t) => {
            sqlx::query(&sql)
                .bind(app.app_uuid)
                .execute(&mut **t)
                .await
                .unwrap();
        }
    }
    tx.commit().await.unwrap();
}

/// The account's e-mails of `template`, oldest first.
async fn mails(app: &TestApp, account: &str, template: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/app/sandbox/emails?account_uuid={account}&limit=100"),
            &app.app_token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let mut list: Vec<Value> = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["template"] == template)
        .cloned()
        .collect();
    list.sort_by_key(|e| e["created_at"].as_str().unwrap_or_default().to_owned());
    list
}

async fn one(app: &TestApp, account: &str, template: &str) -> Value {
    let list = mails(app, account, template).await;
    assert_eq!(list.len(), 1, "one {template}: {list:?}");
    list[0].clone()
}

/// Branded, written for the customer, and every link either one that keeps working (the
/// partner's contacts) or the single-use link to the hosted page the e-mail asks to act on.
fn assert_branded(mail: &Value) {
    let (text, html) = (
        mail["text"].as_str().unwrap(),
        mail["html"].as_str().unwrap(),
    );
    assert_eq!(mail["to"], "mail@example.com");
    assert!(text.starts_with("Hello Ana,"), "{text}");
    assert!(html.contains(&format!("<img src=\"{LOGO}\"")), "{html}");
    assert!(html.contains("#ff8800") && html.contains("Sunny Homes"));
    for contact in [
        "(512) 555-0100",
        "help@sunny.example",
        SUPPORT_URL,
        "Mon-Fri 8am-6pm CT",
    ] {
        assert!(text.contains(contact), "{contact} in {text}");
        assert!(html.contains(contact), "{contact} in {html}");
    }
    let links: Vec<&str> = html
        .split("href=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    assert!(links.contains(&"tel:5125550100"), "{links:?}");
    assert!(links.contains(&"mailto:help@sunny.example"), "{links:?}");
    assert!(links.contains(&SUPPORT_URL), "{links:?}");
    for link in links {
        assert!(
            link.starts_with("tel:")
                || link.starts_with("mailto:")
                || link == SUPPORT_URL
                || link.contains("/hosted/link?token=swb_link_"),
            "{link}"
        );
    }
    for api_word in ["uuid", "null", "_id", "status"] {
        assert!(!text.contains(api_word), "{api_word} in {text}");
    }
}

fn long(date: &str) -> String {
    app::format::long_date(chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap())
}

both_engines! {
    with relaxed;
    async fn the_enrollment_and_the_first_bill_are_e_mailed_at_each_step(app) {
        with_meters(&app).await;
        brand(&app).await;
        let (uuid, token) = customer(&app, "mail@example.com").await;
        let start = walk_to_active(&app, &token, HOUSE).await;

        let received = one(&app, &uuid, "enrollment_received").await;
        assert_branded(&received);
        let text = received["text"].as_str().unwrap();
        assert!(text.contains("We received your enrollment with Sunny Homes for 100 ELM ST, DALLAS, TX 75201."), "{text}");
        assert!(text.contains(&format!("start on {}", long(&start))), "{text}");
        // The copies of what was agreed ride along, as the stored PDFs.
        assert!(text.contains("Attached are the documents of your contract, to keep: Electricity Facts Label, Terms of Service and Your Rights as a Customer."), "{text}");
        let files: Vec<String> = received["attachments"].as_array().unwrap().iter()
            .map(|a| a["filename"].as_str().unwrap().split('-').next().unwrap().to_owned())
            .collect();
        let mut files = files;
        files.sort();
        assert_eq!(files, ["efl", "tos", "yrac"], "{received}");
        for a in received["attachments"].as_array().unwrap() {
            let r = app.client.get(app.url(a["url"].as_str().unwrap())).bearer_auth(&app.app_token).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::OK);
            assert!(r.bytes().await.unwrap().starts_with(b"%PDF"));
        }

        let approved = one(&app, &uuid, "credit_approved").await;
        assert_branded(&approved);
        assert!(approved["text"].as_str().unwrap().contains("no deposit is needed"), "{approved}");

        let scheduled = one(&app, &uuid, "service_scheduled").await;
        assert_branded(&scheduled);
        let me = app.get("/v1/account", &token).await.body;
        let service_start = me["locations"][0]["service_start_date"].as_str().unwrap().to_owned();
        assert_eq!(scheduled["subject"], format!("Your electricity service starts on {}", long(&service_start)));
        let text = scheduled["text"].as_str().unwrap();
        assert!(text.contains("call Oncor Electric Delivery at 1-888-313-4747"), "{text}");

        let active = one(&app, &uuid, "service_active").await;
        assert_branded(&active);
        assert_eq!(active["subject"], "Your electricity service is active");
        let text = active["text"].as_str().unwrap();
        assert!(text.contains(&format!("is active since {}", long(&service_start))), "{text}");
        assert!(text.contains("1-888-313-4747"), "{text}");
        // In the order they happened.
        assert!(received["created_at"].as_str() <= scheduled["created_at"].as_str());
        assert!(scheduled["created_at"].as_str() <= active["created_at"].as_str());

        // The first cycle read bills: amount, due date, auto-pay date and where to see it.
        for _ in 0..32 {
            if !mails(&app, &uuid, "bill_ready").await.is_empty() {
                break;
            }
            advance(&app, &token, 1).await;
        }
        let bill = one(&app, &uuid, "bill_ready").await;
        assert_branded(&bill);
        assert_eq!(bill["subject"], "Your Sunny Homes electricity bill is ready");
        let r = app.get("/v1/account/billing/invoices?limit=100", &token).await;
        let invoice = r.body["data"][0].clone();
        let text = bill["text"].as_str().unwrap();
        let due = long(invoice["payment_due_date"].as_str().unwrap());
        for fact in [
            app::format::dollars(invoice["total_cents"].as_i64().unwrap()),
            invoice["number"].as_str().unwrap().to_owned(),
            format!("Payment is due by {due}."),
            format!("Your Visa ending 4242 will be charged automatically on {due}"),
            format!("To see the full bill or download it as a PDF, open the Sunny Homes app or visit {SUPPORT_URL}."),
        ] {
            assert!(text.contains(&fact), "{fact} in {text}");
        }

        // Auto-pay charges the card on the due date, and the payment is acknowledged.
        for _ in 0..40 {
            if !mails(&app, &uuid, "payment_receipt").await.is_empty() {
                break;
            }
            advance(&app, &token, 1).await;
        }
        let receipt = one(&app, &uuid, "payment_receipt").await;
        assert_branded(&receipt);
        let amount = app::format::dollars(invoice["total_cents"].as_i64().unwrap());
        assert_eq!(receipt["subject"], format!("Receipt for your payment of {amount}"));
        let text = receipt["text"].as_str().unwrap();
        for fact in [
            format!("We received your payment of {amount} on {due} from your Visa ending 4242."),
            format!("It paid invoice {}.", invoice["number"].as_str().unwrap()),
            "That bill is paid in full.".to_owned(),
            "Payment reference: ".to_owned(),
        ] {
            assert!(text.contains(&fact), "{fact} in {text}");
        }
    }

    async fn a_card_that_replaces_another_is_told_to_the_customer(app) {
        with_meters(&app).await;
        brand(&app).await;
        let (uuid, token) = customer(&app, "mail@example.com").await;
        add_card_number(&app, &token, "4242424242424242").await;
        assert!(mails(&app, &uuid, "card_changed").await.is_empty(), "a first card is no change");
        add_card_number(&app, &token, "5555555555554444").await;
        let notice = one(&app, &uuid, "card_changed").await;
        assert_branded(&notice);
        assert_eq!(notice["subject"], "The card on your account changed");
        let text = notice["text"].as_str().unwrap();
        assert!(text.contains("changed from your Visa ending 4242 to your Mastercard ending 4444"), "{text}");
        assert!(text.contains("If you did not make this change, write to help@sunny.example at once."), "{text}");
    }

    async fn a_declined_auto_pay_and_a_past_due_bill_e_mail_what_happens_next_and_how_to_pay(app) {
        with_meters(&app).await;
        brand(&app).await;
        let (uuid, token) = customer(&app, "mail@example.com").await;
        add_card_number(&app, &token, "4000000000000341").await;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let failed = mails(&app, &uuid, "payment_failed").await;
        assert!(!failed.is_empty(), "a decline is e-mailed");
        for mail in &failed {
            assert_branded(mail);
            assert_eq!(mail["subject"], "We could not charge your card");
            let text = mail["text"].as_str().unwrap();
            assert!(text.contains("What happens next: we "), "{text}");
            assert!(text.contains(&format!("To use another card, open the Sunny Homes app or visit {SUPPORT_URL} and change your payment card there")), "{text}");
        }
        // The first decline names the day auto-pay tries again, and the due date.
        let first = failed[0]["text"].as_str().unwrap();
        assert!(first.contains("we will try your card again on "), "{first}");
        assert!(first.contains("The bill is due by "), "{first}");

        // Still unpaid the day after the due date: how to pay it.
        let past_due = mails(&app, &uuid, "past_due").await;
        assert!(!past_due.is_empty(), "a past-due bill is e-mailed");
        for mail in &past_due {
            assert_branded(mail);
            assert_eq!(mail["subject"], "Your electricity bill is past due");
            let text = mail["text"].as_str().unwrap();
            assert!(text.contains(&format!("open the Sunny Homes app or visit {SUPPORT_URL}, where you can pay the bill or change your payment card")), "{text}");
        }
    }
}
