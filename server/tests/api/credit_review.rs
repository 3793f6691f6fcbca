//! The credit review queue in the dashboard: a check the bureau did not approve (here the
//! sandbox's magic SSNs) waits there; the operator approves it (the enrollment goes on), asks for
//! a deposit (at most the rule's maximum) or declines it with a reason. Each decision is audited,
//! writes the account's events in its transaction and e-mails the customer a single-use link; a
//! refused or invalid decision, or one from a member of another organisation, changes nothing.

use reqwest::StatusCode;
use serde_json::Value;
use server::{
    domain::{credit::ReviewStatus, users::Role},
    store::credit_reviews::CreditReviewRow,
};
use uuid::Uuid;

use crate::{
    credit::{check_status, client_agent_account, emails, submit, templates, wait_reason},
    dashboard::{signed_in, Browser},
    helpers::TestApp,
};

/// The account's reviews, newest first.
async fn reviews(app: &TestApp, account: &str) -> Vec<CreditReviewRow> {
    server::store::credit_reviews::reviews_of_account(&app.state.db, account.parse().unwrap())
        .await
        .unwrap()
}

/// A client agent account whose check with `ssn` landed in the queue; its uuid and review.
async fn reviewed(app: &TestApp, email: &str, ssn: &str, reason: &str) -> (String, Uuid) {
    let (uuid, token) = client_agent_account(app, email).await;
    submit(app, &token, ssn).await;
    wait_reason(app, &uuid, reason).await;
    app.eventually("the review", || async {
        !reviews(app, &uuid).await.is_empty()
    })
    .await;
    let review = reviews(app, &uuid).await.remove(0);
    assert_eq!(review.status, ReviewStatus::Open);
    (uuid, review.uuid)
}

/// The types of the account's events, oldest first.
async fn event_types(app: &TestApp, account: &str) -> Vec<String> {
    let r = app
        .get(
            &format!("/v1/app/events?account_uuid={account}&limit=100"),
            &app.app_token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let mut types: Vec<String> = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    types.reverse();
    types
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

async fn decide(
    browser: &Browser,
    review: Uuid,
    fields: &[(&str, &str)],
) -> crate::dashboard::Page {
    let page = format!("/dashboard/credit-reviews/{review}");
    browser
        .submit(&page, &format!("{page}/decide"), fields)
        .await
}

async fn operator(app: &TestApp) -> Browser {
    signed_in(app, "ops@example.com", Role::Operator, None).await
}

/// What a refused decision must leave as it was.
async fn snapshot(app: &TestApp, account: &str) -> (Vec<String>, usize, String, String) {
    let status = reviews(app, account).await[0].status.as_str().to_owned();
    (
        event_types(app, account).await,
        emails(app, account).await.len(),
        check_status(app, account).await,
        status,
    )
}

both_engines! {
    async fn an_approval_passes_the_check_and_the_enrollment_goes_on(app) {
        let (uuid, review) = reviewed(&app, "approve@example.com", "123-45-0002", "needs_attention/credit_declined").await;
        let browser = operator(&app).await;
        let list = browser.get("/dashboard/credit-reviews").await;
        assert_eq!(list.status, StatusCode::OK, "{}", list.text);
        assert!(list.text.contains("Ana Díaz") && list.text.contains("declined by the bureau"), "{}", list.text);
        assert!(browser.get("/dashboard").await.text.contains("/dashboard/credit-reviews"), "linked from the nav");

        let r = decide(&browser, review, &[("decision", "approve")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        assert_eq!(r.location, format!("/dashboard/credit-reviews/{review}?done=approved"));

        assert_eq!(reviews(&app, &uuid).await[0].status, ReviewStatus::Approved);
        assert_eq!(check_status(&app, &uuid).await, "passed");
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;
        let reviewed = event_of(&app, &uuid, "account.credit_reviewed").await;
        assert_eq!(reviewed["decision"], "approved");
        assert_eq!(reviewed["cause"], "declined");
        assert!(!event_types(&app, &uuid).await.contains(&"account.deposit_required".to_owned()));
        app.eventually("the approval e-mail", || async {
            templates(&emails(&app, &uuid).await).contains(&"credit_review_approved")
        }).await;
        let mail = emails(&app, &uuid).await.into_iter().find(|e| e["template"] == "credit_review_approved").unwrap();
        assert!(mail["text"].as_str().unwrap().contains("/hosted/"), "a single-use link: {mail}");
        let audit = browser.get("/dashboard/audit").await;
        assert!(audit.text.contains("credit_review.approved"), "{}", audit.text);

        // Decided once: a second decision is refused and changes nothing.
        let before = snapshot(&app, &uuid).await;
        let r = decide(&browser, review, &[("decision", "decline"), ("reason", "changed my mind")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains("decided already"), "{}", r.text);
        assert_eq!(snapshot(&app, &uuid).await, before);
    }

    async fn a_deposit_is_asked_for_within_the_rule_and_the_enrollment_waits(app) {
        let (uuid, review) = reviewed(&app, "deposit@example.com", "123-45-0003", "needs_attention/credit_not_found").await;
        let row = reviews(&app, &uuid).await.remove(0);
        assert!(row.max_deposit_cents > 0, "{row:?}");
        let browser = operator(&app).await;
        let page = browser.get(&format!("/dashboard/credit-reviews/{review}")).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.text.contains("no credit file found"), "{}", page.text);

        // Above the rule's maximum: refused, nothing written.
        let before = snapshot(&app, &uuid).await;
        let over = row.max_deposit_cents + 1;
        let too_much = format!("{}.{:02}", over / 100, over % 100);
        let r = decide(&browser, review, &[("decision", "deposit"), ("deposit", &too_much)]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(r.text.contains("at most"), "{}", r.text);
        let r = decide(&browser, review, &[("decision", "deposit"), ("deposit", "ten dollars")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert_eq!(snapshot(&app, &uuid).await, before);

        let r = decide(&browser, review, &[("decision", "deposit"), ("deposit", "100.00")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let row = reviews(&app, &uuid).await.remove(0);
        assert_eq!((row.status, row.deposit_cents), (ReviewStatus::DepositRequired, Some(10_000)));
        let deposit = server::store::credit_reviews::latest_deposit(&app.state.db, uuid.parse().unwrap()).await.unwrap().unwrap();
        assert_eq!((deposit.amount_cents, deposit.status.as_str()), (10_000, "required"));
        let required = event_of(&app, &uuid, "account.deposit_required").await;
        assert_eq!(required["amount_cents"], 10_000);
        assert_eq!(event_of(&app, &uuid, "account.credit_reviewed").await["decision"], "deposit_required");
        // The enrollment waits for the deposit.
        assert_eq!(check_status(&app, &uuid).await, "not_found");
        wait_reason(&app, &uuid, "needs_attention/credit_not_found").await;
        app.eventually("the deposit e-mail", || async {
            templates(&emails(&app, &uuid).await).contains(&"credit_deposit_required")
        }).await;
        let mail = emails(&app, &uuid).await.into_iter().find(|e| e["template"] == "credit_deposit_required").unwrap();
        assert!(mail["text"].as_str().unwrap().contains("$100.00"), "{mail}");
        assert!(browser.get("/dashboard/audit").await.text.contains("credit_review.deposit_required"));
    }

    async fn a_decline_needs_a_reason_and_tells_the_customer(app) {
        let (uuid, review) = reviewed(&app, "decline@example.com", "123-45-0002", "needs_attention/credit_declined").await;
        let browser = operator(&app).await;
        let before = snapshot(&app, &uuid).await;
        for fields in [
            vec![("decision", "decline"), ("reason", "  ")],
            vec![("decision", "maybe")],
            vec![],
        ] {
            let r = decide(&browser, review, &fields).await;
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{fields:?}: {}", r.text);
        }
        // Without the form's CSRF token: refused before anything is read.
        let r = browser.post(&format!("/dashboard/credit-reviews/{review}/decide"), &[("decision", "approve")]).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
        assert_eq!(snapshot(&app, &uuid).await, before);

        let r = decide(&browser, review, &[("decision", "decline"), ("reason", "We could not verify the identity given.")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let row = reviews(&app, &uuid).await.remove(0);
        assert_eq!(row.status, ReviewStatus::Declined);
        assert_eq!(row.decision_reason.as_deref(), Some("We could not verify the identity given."));
        assert_eq!(row.decided_by.as_deref(), Some("ops@example.com"));
        assert_eq!(check_status(&app, &uuid).await, "declined");
        wait_reason(&app, &uuid, "needs_attention/credit_declined").await;
        let reviewed = event_of(&app, &uuid, "account.credit_reviewed").await;
        assert_eq!(reviewed["decision"], "declined");
        assert_eq!(reviewed["reason"], "We could not verify the identity given.");
        app.eventually("the decline e-mail", || async {
            templates(&emails(&app, &uuid).await).contains(&"credit_review_declined")
        }).await;
        let mail = emails(&app, &uuid).await.into_iter().find(|e| e["template"] == "credit_review_declined").unwrap();
        assert!(mail["text"].as_str().unwrap().contains("We could not verify the identity given."), "{mail}");
        assert!(browser.get("/dashboard/audit").await.text.contains("credit_review.declined"));
    }

    async fn another_organisations_member_gets_404_and_changes_nothing(app) {
        let (uuid, review) = reviewed(&app, "tenancy@example.com", "123-45-0003", "needs_attention/credit_not_found").await;
        let before = snapshot(&app, &uuid).await;
        let stranger = signed_in(&app, "zoe@other.example", Role::Partner, Some("Other Co")).await;
        let list = stranger.get("/dashboard/credit-reviews").await;
        assert_eq!(list.status, StatusCode::OK);
        assert!(!list.text.contains("Ana Díaz"), "another organisation's customers: {}", list.text);
        let page = format!("/dashboard/credit-reviews/{review}");
        assert_eq!(stranger.get(&page).await.status, StatusCode::NOT_FOUND);
        // The form's token from a page of their own.
        let r = stranger.submit("/dashboard/credit-reviews", &format!("{page}/decide"), &[("decision", "approve")]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        assert_eq!(stranger.get(&format!("/dashboard/credit-reviews/{}", Uuid::new_v4())).await.status, StatusCode::NOT_FOUND);
        assert_eq!(snapshot(&app, &uuid).await, before);
        assert_eq!(reviews(&app, &uuid).await[0].status, ReviewStatus::Open);
    }

    async fn a_new_submission_withdraws_the_review_of_the_old_one(app) {
        let (uuid, token) = client_agent_account(&app, "again@example.com").await;
        submit(&app, &token, "123-45-0002").await;
        wait_reason(&app, &uuid, "needs_attention/credit_declined").await;
        app.eventually("the review", || async { !reviews(&app, &uuid).await.is_empty() }).await;
        let old = reviews(&app, &uuid).await.remove(0);
        // The customer corrects their SSN: the new check passes, the old review is moot.
        submit(&app, &token, "123-45-6789").await;
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;
        let all = reviews(&app, &uuid).await;
        assert_eq!(all.len(), 1);
        assert_eq!((all[0].uuid, all[0].status), (old.uuid, ReviewStatus::Withdrawn));
        let browser = operator(&app).await;
        let r = decide(&browser, old.uuid, &[("decision", "approve")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
        assert!(!event_types(&app, &uuid).await.contains(&"account.credit_reviewed".to_owned()));
    }

    async fn the_sandbox_deposit_ssn_asks_for_a_deposit_paid_with_the_saved_card(app) {
        let (uuid, token) = client_agent_account(&app, "deposit.ssn@example.com").await;
        let r = app.get("/v1/account/deposit", &token).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{}", r.text);
        let r = app.post("/v1/account/deposit/pay", &token, &serde_json::json!({})).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

        submit(&app, &token, "123-45-0005").await;
        wait_reason(&app, &uuid, "needs_attention/credit_declined").await;
        let account: Uuid = uuid.parse().unwrap();
        app.eventually("the deposit", || async {
            server::store::credit_reviews::latest_deposit(&app.state.db, account).await.unwrap().is_some()
        }).await;
        let review = reviews(&app, &uuid).await.remove(0);
        assert_eq!(review.status, ReviewStatus::DepositRequired);
        assert_eq!(review.deposit_cents, Some(review.max_deposit_cents));
        assert_eq!(review.decided_by.as_deref(), Some("system"));
        let r = app.get("/v1/account/deposit", &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["status"], "required");
        assert_eq!(r.body["amount_cents"], review.max_deposit_cents);
        assert_eq!((r.body["paid_cents"].as_i64(), r.body["interest_cents"].as_i64(), r.body["refunded_cents"].as_i64()), (Some(0), Some(0), Some(0)));
        assert!(r.body["paid_at"].is_null());
        assert_eq!(event_of(&app, &uuid, "account.deposit_required").await["amount_cents"], review.max_deposit_cents);
        app.eventually("the deposit e-mail", || async {
            templates(&emails(&app, &uuid).await).contains(&"credit_deposit_required")
        }).await;
        assert!(!templates(&emails(&app, &uuid).await).contains(&"credit_declined"), "one e-mail: the deposit's");

        // Paid with the saved card: the enrollment goes on.
        let r = app.post("/v1/account/deposit/pay", &token, &serde_json::json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["status"], "paid");
        assert_eq!(r.body["paid_cents"], review.max_deposit_cents);
        assert!(r.body["paid_at"].is_string());
        assert_eq!(check_status(&app, &uuid).await, "passed");
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;
        assert_eq!(event_of(&app, &uuid, "account.deposit_paid").await["amount_cents"], review.max_deposit_cents);

        // Paying again answers the paid deposit and charges nothing more.
        let r = app.post("/v1/account/deposit/pay", &token, &serde_json::json!({})).await;
        assert_eq!((r.status, r.body["status"].as_str()), (StatusCode::OK, Some("paid")), "{}", r.text);
        let paid_events = event_types(&app, &uuid).await.iter().filter(|t| *t == "account.deposit_paid").count();
        assert_eq!(paid_events, 1);
    }
}
