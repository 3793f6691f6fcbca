use super::*;

fn brand() -> Brand {
    Brand {
        display_name: "Sunny <Homes>".to_owned(),
        primary_color: Some("#ff8800".to_owned()),
        support_email: Some("help@sunny.example".to_owned()),
        ..Brand::default()
    }
}

fn full_brand() -> Brand {
    Brand {
        display_name: "Sunny Homes".to_owned(),
        primary_color: Some("#ff8800".to_owned()),
        support_email: Some("help@sunny.example".to_owned()),
        logo_url: Some("https://cdn.sunny.example/logo.png".to_owned()),
        support_phone: Some("(512) 555-0100".to_owned()),
        support_url: Some("https://sunny.example/help".to_owned()),
        support_hours: Some("Mon-Fri 8am-6pm CT".to_owned()),
    }
}

/// Every link of an HTML body.
fn hrefs(html: &str) -> Vec<&str> {
    html.split("href=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect()
}

/// The links a customer can follow at any time: the partner's contacts, never an expiring
/// signed link; the plain text carries every web link too.
fn assert_links_work(r: &Rendered) {
    let links = hrefs(&r.html);
    assert!(links.contains(&"mailto:help@sunny.example"), "{links:?}");
    assert!(links.contains(&"tel:5125550100"), "{links:?}");
    assert!(links.contains(&"https://sunny.example/help"), "{links:?}");
    for link in links {
        assert!(
            link.starts_with("mailto:") || link.starts_with("tel:") || link.starts_with("https://"),
            "{link}"
        );
        assert!(!link.contains("signature="), "no expiring link: {link}");
        if link.starts_with("https://") {
            assert!(r.text.contains(link), "{link} in the text");
        }
    }
    assert!(r
        .html
        .contains("<img src=\"https://cdn.sunny.example/logo.png\""));
    assert!(r.html.contains("#ff8800"));
    for contact in ["(512) 555-0100", "Mon-Fri 8am-6pm CT", "help@sunny.example"] {
        assert!(
            r.text.contains(contact) && r.html.contains(contact),
            "{contact}"
        );
    }
    for api_word in ["null", "None", "_", "{", "uuid"] {
        assert!(!r.text.contains(api_word), "{api_word} in {}", r.text);
    }
}

fn day(y: i32, m: u32, d: u32) -> chrono::NaiveDate {
    chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

#[test]
fn bill_ready_states_amount_due_and_auto_pay_dates_and_where_to_see_it() {
    let bill = BillReady {
        first_name: "Ana".to_owned(),
        invoice_number: "INV-00000042".to_owned(),
        period_start: day(2027, 1, 5),
        period_end: day(2027, 2, 4),
        total_cents: 12_345,
        kwh: "1,055".to_owned(),
        due_date: day(2027, 2, 25),
        late_fee_cents: 0,
        auto_pay_card: Some("Visa ending in 4242".to_owned()),
        link: None,
    };
    let r = Template::BillReady(bill.clone()).render(&full_brand());
    assert!(!r.text.contains("late fee"), "{}", r.text);
    let with_fee = Template::BillReady(BillReady {
        late_fee_cents: 769,
        ..bill.clone()
    })
    .render(&full_brand());
    assert!(
        with_fee.text.contains("one-time late fee of $7.69"),
        "{}",
        with_fee.text
    );
    assert_eq!(r.subject, "Your Sunny Homes electricity bill is ready");
    for fact in ["$123.45", "1,055 kWh", "INV-00000042", "due by February 25, 2027",
        "Visa ending in 4242 will be charged automatically on February 25, 2027",
        "To see the full bill or download it as a PDF, open the Sunny Homes app or visit https://sunny.example/help"]
    {
        assert!(r.text.contains(fact), "{fact} in {}", r.text);
    }
    assert_links_work(&r);
    let manual = Template::BillReady(BillReady {
        auto_pay_card: None,
        ..bill
    })
    .render(&Brand {
        support_url: None,
        ..full_brand()
    });
    assert!(
        manual
            .text
            .contains("no card on file for automatic payment: to pay, open the Sunny Homes app."),
        "{}",
        manual.text
    );
    assert!(!manual.text.contains("charged automatically"));
}

#[test]
fn payment_failed_says_what_happens_next_and_how_to_change_the_card() {
    let failed = PaymentFailed {
        first_name: "Ana".to_owned(),
        invoice_number: "INV-00000042".to_owned(),
        total_cents: 12_345,
        due_date: day(2027, 2, 25),
        retry_on: Some(day(2027, 2, 27)),
        link: None,
    };
    let r = Template::PaymentFailed(failed.clone()).render(&full_brand());
    assert_eq!(r.subject, "We could not charge your card");
    assert!(
        r.text
            .contains("we will try your card again on February 27, 2027"),
        "{}",
        r.text
    );
    assert!(r.text.contains("due by February 25, 2027"));
    assert!(r.text.contains("To use another card, open the Sunny Homes app or visit https://sunny.example/help and change your payment card there"), "{}", r.text);
    assert_links_work(&r);
    let last = Template::PaymentFailed(PaymentFailed {
        retry_on: None,
        ..failed
    })
    .render(&full_brand());
    assert!(
        last.text
            .contains("we will not try this card again. Please pay the bill by February 25, 2027"),
        "{}",
        last.text
    );
}

#[test]
fn a_hosted_link_becomes_the_e_mail_s_button() {
    let url = "https://switchboard.example/hosted/link?token=swb_link_x";
    let r = Template::PaymentFailed(PaymentFailed {
        first_name: "Ana".to_owned(),
        invoice_number: "INV-00000042".to_owned(),
        total_cents: 12_345,
        due_date: day(2027, 2, 25),
        retry_on: None,
        link: Some(url.to_owned()),
    })
    .render(&full_brand());
    assert!(
        r.text.contains(&format!("Change your card: {url}")),
        "{}",
        r.text
    );
    assert!(hrefs(&r.html).contains(&url), "{}", r.html);
}

#[test]
fn past_due_says_how_to_pay() {
    let r = Template::PastDue(PastDueNotice {
        first_name: "Ana".to_owned(),
        invoice_number: "INV-00000042".to_owned(),
        total_cents: 12_345,
        due_date: day(2027, 2, 25),
        late_fee_cents: None,
        link: None,
    })
    .render(&full_brand());
    assert!(!r.text.contains("late fee"), "{}", r.text);
    let with_fee = Template::PastDue(PastDueNotice {
        first_name: "Ana".to_owned(),
        invoice_number: "INV-00000042".to_owned(),
        total_cents: 12_345,
        due_date: day(2027, 2, 25),
        late_fee_cents: Some(617),
        link: None,
    })
    .render(&full_brand());
    assert!(
        with_fee.text.contains("one-time late fee of $6.17"),
        "{}",
        with_fee.text
    );
    assert_eq!(r.subject, "Your electricity bill is past due");
    assert!(r
        .text
        .contains("$123.45 (invoice INV-00000042) was due on February 25, 2027"));
    assert!(
        r.text.contains(
            "open the Sunny Homes app or visit https://sunny.example/help, where you can pay"
        ),
        "{}",
        r.text
    );
    assert_links_work(&r);
}

#[test]
fn the_enrollments_progress_e_mails_give_the_dates_and_the_outage_number() {
    let notice = ServiceNotice {
        first_name: "Ana".to_owned(),
        service_address: Some("100 Elm St, Austin, TX 78701".to_owned()),
        start_date: Some(day(2027, 3, 1)),
        utility: Some(UtilityContact {
            name: "Oncor".to_owned(),
            outage_phone: Some("1-888-313-4747".to_owned()),
        }),
        attached: Vec::new(),
    };
    let with_documents = Template::EnrollmentReceived(ServiceNotice {
        attached: vec![
            "Electricity Facts Label".to_owned(),
            "Terms of Service".to_owned(),
        ],
        ..notice.clone()
    })
    .render(&full_brand());
    assert!(with_documents.text.contains(
        "Attached are the documents of your contract, to keep: Electricity Facts Label and \
         Terms of Service."
    ));
    let received = Template::EnrollmentReceived(notice.clone()).render(&full_brand());
    assert!(!received.text.contains("Attached"));
    assert_eq!(received.subject, "We received your enrollment");
    assert!(received.text.contains("for 100 Elm St, Austin, TX 78701"));
    assert!(received.text.contains("start on March 1, 2027"));
    assert!(received
        .text
        .contains("We will e-mail you when the utility confirms"));
    assert_links_work(&received);
    let scheduled = Template::ServiceScheduled(notice.clone()).render(&full_brand());
    assert_eq!(
        scheduled.subject,
        "Your electricity service starts on March 1, 2027"
    );
    assert!(
        scheduled.text.contains("call Oncor at 1-888-313-4747"),
        "{}",
        scheduled.text
    );
    assert_links_work(&scheduled);
    let active = Template::ServiceActive(notice.clone()).render(&full_brand());
    assert_eq!(active.subject, "Your electricity service is active");
    assert!(
        active
            .text
            .contains("at 100 Elm St, Austin, TX 78701 is active since March 1, 2027"),
        "{}",
        active.text
    );
    assert!(active.text.contains("call Oncor at 1-888-313-4747"));
    assert_links_work(&active);
    let bare = Template::ServiceActive(ServiceNotice {
        utility: None,
        ..notice
    })
    .render(&Brand::default());
    assert!(!bare.text.contains("outage"));
    assert!(!bare.html.contains("<img"));
}

#[test]
fn renders_text_and_escaped_html() {
    let r = Template::Notice {
        subject: "Hi".to_owned(),
        first_name: "Ana <script>".to_owned(),
        paragraphs: vec!["Bills & more".to_owned()],
        action: Some(Action {
            label: "Open".to_owned(),
            url: "https://x.example/?a=1&b=\"2\"".to_owned(),
        }),
    }
    .render(&brand());
    assert!(r.text.starts_with("Hello Ana <script>,"));
    assert!(r.text.contains("Open: https://x.example/?a=1&b=\"2\""));
    assert!(r.html.contains("Hello Ana &lt;script&gt;,"));
    assert!(r.html.contains("Bills &amp; more"));
    assert!(r
        .html
        .contains("href=\"https://x.example/?a=1&amp;b=&quot;2&quot;\""));
    assert!(r.html.contains("Sunny &lt;Homes&gt;"));
    assert!(r.html.contains("#ff8800"));
}

#[test]
fn credit_notices() {
    let r = Template::CreditFrozen {
        first_name: "Ana".to_owned(),
        unfreeze_url: "https://bureau.example/unfreeze".to_owned(),
        retry_url: None,
    }
    .render(&brand());
    assert!(r
        .text
        .contains("Unfreeze your credit: https://bureau.example/unfreeze"));
    // With a hosted page, the button goes there (it links to the bureau and retries).
    let hosted = Template::CreditFrozen {
        first_name: "Ana".to_owned(),
        unfreeze_url: "https://bureau.example/unfreeze".to_owned(),
        retry_url: Some("https://switchboard.example/hosted/link?token=t".to_owned()),
    }
    .render(&brand());
    assert!(hosted.text.contains(
        "Lift the freeze and try again: https://switchboard.example/hosted/link?token=t"
    ));
    let declined = Template::CreditNotApproved {
        first_name: "Ana".to_owned(),
        not_found: false,
    };
    assert_eq!(declined.name(), "credit_declined");
    assert!(declined
        .render(&brand())
        .text
        .contains("your enrollment goes to review"));
    // Nothing promises a team that does not exist or a reply nobody reads.
    let text = declined.render(&brand()).text;
    assert!(
        !text.contains("support team") && !text.contains("reply"),
        "{text}"
    );
    let not_found = Template::CreditNotApproved {
        first_name: "Ana".to_owned(),
        not_found: true,
    };
    assert_eq!(not_found.name(), "credit_not_found");
    assert!(not_found
        .render(&brand())
        .text
        .contains("could not find a credit file"));
    let approved = Template::CreditApproved {
        first_name: "Ana".to_owned(),
    };
    assert_eq!(approved.name(), "credit_approved");
    let r = approved.render(&full_brand());
    assert!(
        r.text.contains("approved, and no deposit is needed"),
        "{}",
        r.text
    );
    assert!(r.text.contains("e-mail you the start date"), "{}", r.text);
    assert_links_work(&r);
}

#[test]
fn credit_review_notices() {
    let link = "https://switchboard.example/hosted/link?token=t".to_owned();
    let mail = |decision| Template::CreditReviewed {
        first_name: "Ana".to_owned(),
        decision,
        link: link.clone(),
    };
    let approved = mail(CreditReviewMail::Approved);
    assert_eq!(approved.name(), "credit_review_approved");
    assert!(approved
        .render(&brand())
        .text
        .contains(&format!("See your enrollment: {link}")));
    let deposit = mail(CreditReviewMail::DepositRequired {
        amount_cents: 15_050,
    });
    assert_eq!(deposit.name(), "credit_deposit_required");
    let r = deposit.render(&full_brand());
    assert!(r.text.contains("security deposit of $150.50"), "{}", r.text);
    assert!(r.text.contains("65 or older"), "{}", r.text);
    assert!(r.text.contains("Pay the deposit"), "{}", r.text);
    assert_links_work(&r);
    let waived = mail(CreditReviewMail::DepositWaived {
        waiver: "a family-violence certificate".to_owned(),
    });
    assert_eq!(waived.name(), "credit_deposit_waived");
    assert!(waived
        .render(&brand())
        .text
        .contains("a family-violence certificate"));
    let declined = mail(CreditReviewMail::Declined {
        reason: "No proof of identity <yet>".to_owned(),
    });
    assert_eq!(declined.name(), "credit_review_declined");
    let r = declined.render(&brand());
    assert!(r.text.contains("The reason: No proof of identity <yet>"));
    assert!(r.html.contains("No proof of identity &lt;yet&gt;"));
}

#[test]
fn renewal_reminder_carries_the_link_and_the_date() {
    let r = Template::RenewalReminder {
        first_name: "Ana".to_owned(),
        contract_end: chrono::NaiveDate::from_ymd_opt(2027, 3, 31).unwrap(),
        days_left: 30,
        renewal_url: "https://renew.example/a".to_owned(),
        month_to_month: None,
        offer: Some(RenewalOffer {
            plan_name: "Lone Star 12".to_owned(),
            term_months: 12,
            average_1000: "14.1".to_owned(),
            priced_on: chrono::NaiveDate::from_ymd_opt(2027, 1, 1).unwrap(),
        }),
    }
    .render(&Brand {
        primary_color: Some("red; x".to_owned()),
        ..brand()
    });
    assert_eq!(r.subject, "Your electricity plan ends in 30 days");
    assert!(r.text.contains("March 31, 2027"));
    assert!(r.html.contains("https://renew.example/a"));
    assert!(r.text.contains(
        "One plan you can renew onto: Lone Star 12, a fixed rate for 12 months, an average \
         of 14.1\u{a2} per kWh"
    ));
    assert!(r.text.contains("as priced on January 1, 2027"));
    assert!(
        !r.html.contains("red; x"),
        "malformed colors are not injected"
    );
}

#[test]
fn the_final_renewal_reminder_states_the_month_to_month_rate() {
    let r = Template::RenewalReminder {
        first_name: "Ana".to_owned(),
        contract_end: chrono::NaiveDate::from_ymd_opt(2027, 3, 31).unwrap(),
        days_left: 30,
        renewal_url: "https://renew.example/a".to_owned(),
        month_to_month: Some(MonthToMonthOffer {
            plan_name: "Month-to-Month Variable".to_owned(),
            starts_on: chrono::NaiveDate::from_ymd_opt(2027, 4, 1).unwrap(),
            energy_cents_per_kwh: "11.2".to_owned(),
            base_charge_cents_per_month: 995,
            average_1000: "16.7".to_owned(),
            efl_attached: true,
        }),
        offer: None,
    }
    .render(&brand());
    assert!(r
        .text
        .contains("From April 1, 2027 that plan is Month-to-Month Variable"));
    assert!(r
        .text
        .contains("11.2\u{a2} per kWh for energy and a base charge of $9.95"));
    assert!(r.text.contains("16.7\u{a2} per kWh at 1,000 kWh"));
    assert!(r.text.contains("Electricity Facts Label is attached"));
}
