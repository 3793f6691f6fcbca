//! Document generation, all as PDF over one small canvas (`pdf`, on the `pdf-writer` crate):
//! `invoice` lays a bill out from plain data and `invoice_document` decides what an invoice
//! prints from the stored records; the plan documents flow through `layout` (headings,
//! paragraphs, key/value tables, page breaks), one module per kind: `efl`, `terms` (TOS and
//! YRAC), `loa`, `notice` (expiration notices), each fed by a builder here from the stored
//! rows (`efl_document`, `letterhead`).

pub mod disconnection;
pub mod efl;
pub mod html;
pub mod invoice;
pub mod layout;
pub mod loa;
pub mod notice;
mod pdf;
pub mod terms;

use rust_decimal::{Decimal, RoundingStrategy};

use app::format::{dollars, short_date};

use crate::{
    domain::{
        billing::{
            auto_pay_sentence, average_cents_per_kwh, card_name, period_days, to_cents, Charge,
            ChargeGroup,
        },
        documents::{Provider, COMMISSION},
        renewal::CHARGES_EARLY_TERMINATION_FEE,
    },
    store::{
        accounts::AccountRow,
        apps::AppRow,
        billing::{InvoiceRow, MeterReadRow, PaymentRow, UsageDayRow},
        credit_reviews::DepositRow,
        enrollment::{ContractRow, LocationRow},
        market::{PlanRow, TduRow},
        payments::CardRow,
    },
};
use invoice::{ChargeDoc, ChargeGroupDoc, InvoiceDocument, MeterReadDoc, PaymentDoc, PlanDoc};

/// What an invoice's PDF is made from.
pub struct InvoiceRecords<'a> {
    pub app: &'a AppRow,
    pub account: &'a AccountRow,
    pub location: &'a LocationRow,
    /// The location's utility, when known.
    pub tdu: Option<&'a TduRow>,
    pub invoice: &'a InvoiceRow,
    pub groups: Vec<ChargeGroup>,
    pub days: Vec<UsageDayRow>,
    pub payments: &'a [PaymentRow],
    /// The card on file now.
    pub card: Option<&'a CardRow>,
    /// The contract in force on the period's last day.
    pub contract: Option<&'a ContractRow>,
    /// The meter reads the period was billed from.
    pub reads: &'a [MeterReadRow],
    pub provider: &'a Provider,
    /// The app's uploaded logo (PNG), when it has one.
    pub logo: Option<&'a [u8]>,
    /// The account's newest deposit, whatever its state (only a paid one is held).
    pub deposit: Option<&'a DepositRow>,
}

/// A line's quantity, unit and rate as a customer reads them: `1,035 kWh at 9.1¢`,
/// `1 month at $9.95`, `25 days at $9.95/month`, `1.997% of $150.58`. The amounts are computed
/// from the exact quantities; only what is printed beside them is rounded.
fn printed_quantity_and_rate(c: &Charge, period_days: i64) -> (String, String, String) {
    let rate = c.rate.normalize();
    match c.unit.as_str() {
        "kWh" => (
            whole_kwh(c.quantity),
            "kWh".to_owned(),
            format!("{rate}\u{a2}"),
        ),
        "month" if c.quantity == Decimal::ONE => (
            "1".to_owned(),
            "month".to_owned(),
            dollars(to_cents(c.rate)),
        ),
        // A part of a month is billed by the day: print the days, not `0.8333 months`.
        "month" => (
            period_days.to_string(),
            if period_days == 1 { "day" } else { "days" }.to_owned(),
            format!("{}/month", dollars(to_cents(c.rate))),
        ),
        "%" => (
            dollars(to_cents(c.quantity)),
            String::new(),
            format!("{rate}%"),
        ),
        other => (
            c.quantity.normalize().to_string(),
            other.to_owned(),
            rate.to_string(),
        ),
    }
}

/// kWh as a bill prints them: whole numbers, half up.
fn whole_kwh(kwh: Decimal) -> String {
    kwh.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
        .normalize()
        .to_string()
}

/// Whether a PNG decodes into an image a document can draw (an uploaded logo is checked
/// once, when it is uploaded).
pub fn image_decodes(png: &[u8]) -> bool {
    pdf::Image::from_png(png).is_ok()
}

/// The invoice as its PDF prints it.
pub fn invoice_document(r: InvoiceRecords<'_>) -> InvoiceDocument {
    let (app, location, row) = (r.app, r.location, r.invoice);
    let mut address = vec![match &location.address_2 {
        Some(a2) if !a2.is_empty() => format!("{} {}", location.address_1, a2),
        _ => location.address_1.clone(),
    }];
    address.push(format!(
        "{}, {} {}",
        location.city, location.state, location.postal_code
    ));
    let payable = row.status.is_payable();
    let kwh = row.total_kwh.parse::<Decimal>().unwrap_or_default();
    let days = period_days(row.billing_period_start, row.billing_period_end);
    InvoiceDocument {
        brand_name: app.display_name.clone(),
        brand_color: app.primary_color.clone(),
        support_email: app.support_email.clone(),
        support_phone: app.support_phone.clone(),
        support_url: app.support_url.clone(),
        customer_name: format!("{} {}", r.account.first_name, r.account.last_name),
        account_number: r.account.account_number.clone(),
        service_address: address,
        esi_id: location.esi_id.clone(),
        utility_name: r
            .tdu
            .map_or_else(|| location.tdu.clone(), |t| t.display_name.clone()),
        utility_outage_phone: r.tdu.and_then(|t| t.outage_phone.clone()),
        invoice_number: row.number.clone(),
        invoice_date: row.invoice_date,
        payment_due_date: row.payment_due_date,
        billing_period_start: row.billing_period_start,
        billing_period_end: row.billing_period_end,
        status: row.status.to_string(),
        total_cents: row.total_cents,
        total_kwh: whole_kwh(kwh),
        avg_cents_per_kwh: average_cents_per_kwh(row.total_cents, kwh).map(|a| a.to_string()),
        groups: r
            .groups
            .into_iter()
            .map(|g| ChargeGroupDoc {
                name: g.name,
                total_cents: g.total_cents,
                charges: g
                    .charges
                    .into_iter()
                    .map(|c| {
                        let (quantity, unit, rate) = printed_quantity_and_rate(&c, days);
                        ChargeDoc {
                            description: c.description,
                            quantity,
                            unit,
                            rate,
                            amount_cents: c.amount_cents,
                        }
                    })
                    .collect(),
            })
            .collect(),
        payments: r
            .payments
            .iter()
            .map(|p| PaymentDoc {
                date: crate::domain::market::market_date(p.attempted_at),
                amount_cents: p.amount_cents,
                status: p.status.to_string(),
                method: r
                    .card
                    .map_or_else(|| "Card".to_owned(), |c| card_name(&c.brand, &c.last4)),
            })
            .collect(),
        daily_kwh: r
            .days
            .into_iter()
            .map(|d| (d.day, d.consumption_kwh))
            .collect(),
        auto_pay_note: r
            .card
            .filter(|_| payable)
            .map(|c| auto_pay_sentence(&c.brand, &c.last4, &short_date(row.payment_due_date))),
        plan: r.contract.map(|c| PlanDoc {
            name: c.plan_name.clone(),
            contract_end: c.end_date,
        }),
        meter_reads: r
            .reads
            .iter()
            .map(|m| MeterReadDoc {
                start: m.start_date,
                end: m.end_date,
                read_date: m.read_date,
                kwh: m
                    .kwh
                    .parse::<Decimal>()
                    .map_or_else(|_| m.kwh.clone(), whole_kwh),
                read_type: m.read_type.clone(),
            })
            .collect(),
        provider_line: Some(format!("{}, {}", r.provider.name, r.provider.certificate)),
        // The logo was decoded once when it was uploaded; one that no longer decodes is left off
        // rather than failing the bill.
        logo: r.logo.and_then(|png| pdf::Image::from_png(png).ok()),
        // Held: paid and not yet refunded or applied to a final bill.
        deposit_held_cents: r
            .deposit
            .filter(|d| d.status == "paid" && d.paid_cents > 0)
            .map(|d| d.paid_cents + d.interest_cents),
        commission_note: COMMISSION.complaint_sentence(),
    }
}

/// Whose boilerplate documents an app's customers get.
pub fn letterhead(app: &AppRow, provider: &Provider) -> terms::Letterhead {
    terms::Letterhead {
        brand_name: app.display_name.clone(),
        brand_color: app.primary_color.clone(),
        provider_name: provider.name.clone(),
    }
}

/// The partner's contacts as a customer reads them.
pub fn contacts(app: &AppRow) -> Vec<String> {
    [
        app.support_phone.as_ref().map(|p| format!("Phone {p}")),
        app.support_email.as_ref().map(|e| format!("E-mail {e}")),
        app.support_url.as_ref().map(|u| format!("Web {u}")),
        app.support_hours.as_ref().map(|h| format!("Hours {h}")),
    ]
    .into_iter()
    .flatten()
    .filter(|c| !c.trim().is_empty())
    .collect()
}

/// The EFL of a priced plan of `app` in the area of the utility named `utility_name`.
/// Averages the plan does not carry in a readable form print as zero.
pub fn efl_document(
    app: &AppRow,
    plan: &PlanRow,
    utility_name: &str,
    provider: &Provider,
) -> efl::EflDocument {
    let average = |s: &str| s.parse::<Decimal>().unwrap_or_default();
    efl::EflDocument {
        brand_name: app.display_name.clone(),
        brand_color: app.primary_color.clone(),
        provider_name: provider.name.clone(),
        provider_certificate: provider.certificate.clone(),
        contacts: contacts(app),
        version: plan.uuid.to_string(),
        plan_name: plan.name.clone(),
        plan_type: plan.plan_type.clone(),
        term_months: plan.term_months,
        energy_cents_per_kwh: plan.energy_cents_per_kwh.clone(),
        base_charge_cents_per_month: plan.base_charge_cents_per_month,
        utility_name: utility_name.to_owned(),
        tdu_fixed_cents_per_month: plan.tdu_fixed_cents_per_month,
        tdu_cents_per_kwh: plan.tdu_cents_per_kwh.clone(),
        solar_buyback_cents_per_kwh: plan.solar_buyback_cents_per_kwh.clone(),
        early_termination_fee_cents: plan.early_termination_fee_cents,
        early_termination_fee_charged: CHARGES_EARLY_TERMINATION_FEE,
        renewable_percent: plan.renewable_percent,
        averages: [
            average(&plan.average_500),
            average(&plan.average_1000),
            average(&plan.average_2000),
        ],
        tos_version: plan.tos_version.clone(),
        yrac_version: plan.yrac_version.clone(),
        issued: crate::domain::market::market_date(plan.created_at),
    }
}

/// The text a PDF written here shows, in drawing order, pieces joined by spaces (so a
/// sentence wrapped over lines reads whole): what a search or a test reads in a document. It
/// reads the shown strings of uncompressed content streams, as `pdf` writes them.
pub fn pdf_text(pdf: &[u8]) -> String {
    fn shown(pdf: &[u8], mut i: usize) -> bool {
        while pdf.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        pdf.get(i..i + 2) == Some(&b"Tj"[..])
    }
    fn char_of(b: u8) -> char {
        match b {
            0x85 => '\u{2026}',
            0x91 => '\u{2018}',
            0x92 => '\u{2019}',
            0x93 => '\u{201c}',
            0x94 => '\u{201d}',
            0x95 => '\u{2022}',
            0x96 => '\u{2013}',
            0x97 => '\u{2014}',
            0x80..=0x9f => '?',
            b => char::from(b),
        }
    }
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut i = 0;
    while i < pdf.len() {
        match pdf[i] {
            b'(' => {
                let (mut depth, mut text) = (1, Vec::new());
                i += 1;
                while i < pdf.len() && depth > 0 {
                    match pdf[i] {
                        b'\\' => {
                            i += 1;
                            if let Some(&e) = pdf.get(i) {
                                text.push(match e {
                                    b'n' => b'\n',
                                    b'r' => b'\r',
                                    b't' => b'\t',
                                    other => other,
                                });
                            }
                        }
                        b'(' => {
                            depth += 1;
                            text.push(b'(');
                        }
                        b')' => {
                            depth -= 1;
                            if depth > 0 {
                                text.push(b')');
                            }
                        }
                        c => text.push(c),
                    }
                    i += 1;
                }
                if shown(pdf, i) {
                    pieces.push(text);
                }
            }
            b'<' if pdf
                .get(i + 1)
                .is_some_and(|c| c.is_ascii_hexdigit() || *c == b'>') =>
            {
                let end = pdf[i..]
                    .iter()
                    .position(|&c| c == b'>')
                    .map_or(pdf.len(), |p| i + p);
                let digits: Vec<u8> = pdf[i + 1..end]
                    .iter()
                    .copied()
                    .filter(u8::is_ascii_hexdigit)
                    .collect();
                let text = digits
                    .chunks(2)
                    .filter_map(|pair| {
                        std::str::from_utf8(pair)
                            .ok()
                            .and_then(|h| u8::from_str_radix(h, 16).ok())
                    })
                    .collect();
                i = end + 1;
                if shown(pdf, i) {
                    pieces.push(text);
                }
            }
            _ => i += 1,
        }
    }
    pieces
        .iter()
        .map(|p| p.iter().copied().map(char_of).collect::<String>())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use chrono::{NaiveDate, TimeZone, Utc};

    use super::{efl, loa, notice, printed_quantity_and_rate, terms, whole_kwh, Charge};

    fn charge(quantity: &str, unit: &str, rate: &str) -> Charge {
        Charge {
            description: "Base charge".to_owned(),
            quantity: quantity.parse().unwrap(),
            unit: unit.to_owned(),
            rate: rate.parse().unwrap(),
            amount_cents: 0,
        }
    }

    #[test]
    fn quantities_print_as_a_customer_reads_them() {
        let printed = |c: &Charge, days| printed_quantity_and_rate(c, days);
        assert_eq!(
            printed(&charge("1034.512", "kWh", "9.1"), 30),
            ("1035".to_owned(), "kWh".to_owned(), "9.1\u{a2}".to_owned())
        );
        assert_eq!(
            printed(&charge("1", "month", "995"), 31),
            ("1".to_owned(), "month".to_owned(), "$9.95".to_owned())
        );
        assert_eq!(
            printed(&charge("0.8333", "month", "995"), 25),
            ("25".to_owned(), "days".to_owned(), "$9.95/month".to_owned())
        );
        assert_eq!(whole_kwh("0.5".parse().unwrap()), "1");
        assert_eq!(whole_kwh("1054.49".parse().unwrap()), "1054");
    }

    fn sample_efl() -> efl::EflDocument {
        efl::EflDocument {
            brand_name: "Sunny Homes".to_owned(),
            brand_color: Some("#ff8800".to_owned()),
            provider_name: "Switchboard Energy LLC".to_owned(),
            provider_certificate: "PUCT Certificate No. 10000".to_owned(),
            contacts: vec![
                "Phone (512) 555-0100".to_owned(),
                "E-mail help@sunny.example".to_owned(),
            ],
            version: "0b9f6f3e-8a55-4c55-9d0e-8b7e1b8e9f10".to_owned(),
            plan_name: "12-Month Fixed".to_owned(),
            plan_type: "fixed".to_owned(),
            term_months: 12,
            energy_cents_per_kwh: "9.5000".to_owned(),
            base_charge_cents_per_month: 995,
            utility_name: "Oncor Electric Delivery".to_owned(),
            tdu_fixed_cents_per_month: 423,
            tdu_cents_per_kwh: "4.5403".to_owned(),
            solar_buyback_cents_per_kwh: "0.0000".to_owned(),
            early_termination_fee_cents: 0,
            early_termination_fee_charged: false,
            renewable_percent: 31,
            averages: ["16.8763", "15.4583", "14.7493"].map(|a| a.parse().unwrap()),
            tos_version: "2026.1".to_owned(),
            yrac_version: "2024.1".to_owned(),
            issued: NaiveDate::from_ymd_opt(2026, 11, 23).unwrap(),
        }
    }

    fn head() -> terms::Letterhead {
        terms::Letterhead {
            brand_name: "Sunny Homes".to_owned(),
            brand_color: None,
            provider_name: "Switchboard Energy LLC".to_owned(),
        }
    }

    fn sample_loa() -> loa::LoaDocument {
        loa::LoaDocument {
            brand_name: "Sunny Homes".to_owned(),
            brand_color: None,
            provider_name: "Switchboard Energy LLC".to_owned(),
            customer_name: "María O’Neil".to_owned(),
            service_address: "100 ELM ST, DALLAS, TX 75201".to_owned(),
            esi_id: "10443720000200001".to_owned(),
            plan_name: "12-Month Fixed".to_owned(),
            energy_cents_per_kwh: "9.5000".to_owned(),
            term_months: 12,
            start_date: NaiveDate::from_ymd_opt(2026, 12, 1).unwrap(),
            authorized_at: Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap(),
            accepted_at: Utc.with_ymd_and_hms(2026, 11, 23, 15, 0, 0).unwrap(),
            cancel_contact: "Phone (512) 555-0100".to_owned(),
        }
    }

    fn sample_notice(final_notice: bool) -> notice::NoticeDocument {
        notice::NoticeDocument {
            brand_name: "Sunny Homes".to_owned(),
            brand_color: None,
            customer_name: "Ana Díaz".to_owned(),
            service_address: "100 ELM ST, DALLAS, TX 75201".to_owned(),
            esi_id: "10443720000200001".to_owned(),
            plan_name: "12-Month Fixed".to_owned(),
            contract_end: NaiveDate::from_ymd_opt(2027, 11, 30).unwrap(),
            days_left: 30,
            renewal_url: "https://partner.example/renew".to_owned(),
            month_to_month: final_notice.then(|| efl::EflDocument {
                plan_name: "Month-to-Month Variable".to_owned(),
                plan_type: "month_to_month".to_owned(),
                term_months: 1,
                early_termination_fee_cents: 0,
                ..sample_efl()
            }),
            offer: Some(efl::EflDocument {
                plan_name: "Lone Star 12".to_owned(),
                ..sample_efl()
            }),
        }
    }

    fn contains(pdf: &[u8], needle: &[u8]) -> bool {
        super::pdf_text(pdf).contains(std::str::from_utf8(needle).unwrap())
    }

    #[test]
    fn the_text_of_a_pdf_reads_back() {
        let pdf = efl::render(&sample_efl());
        let text = super::pdf_text(&pdf);
        assert!(
            text.contains("1,000 kWh a month 15.5\u{a2} per kWh"),
            "{text}"
        );
        assert!(
            text.contains("in the Oncor Electric Delivery service area"),
            "{text}"
        );
        let loa = super::pdf_text(&loa::render(&sample_loa()));
        assert!(loa.contains("Mar\u{ed}a O\u{2019}Neil"), "{loa}");
    }

    #[test]
    fn each_document_prints_its_facts() {
        let efl = efl::render(&sample_efl());
        assert!(efl.starts_with(b"%PDF-"));
        for text in [
            "12-Month Fixed",
            "PUCT Certificate No. 10000",
            "Oncor Electric Delivery",
            "1,000 kWh a month",
            "15.4583",
            "None ($0.00)",
            "12 months",
            "31%",
        ] {
            assert!(contains(&efl, text.as_bytes()), "EFL: {text}");
        }
        let tos = terms::render_tos(&head(), "2026.1");
        for text in [
            "Terms of Service, version 2026.1",
            "Expiration notices",
            "Month-to-month",
            "No early termination fee is charged",
        ] {
            assert!(contains(&tos, text.as_bytes()), "TOS: {text}");
        }
        let yrac = terms::render_yrac(&head(), "2024.1");
        assert!(contains(
            &yrac,
            b"Your Rights as a Customer, version 2024.1"
        ));
        let loa = loa::render(&sample_loa());
        for text in ["10443720000200001", "How to cancel", "Service start date"] {
            assert!(contains(&loa, text.as_bytes()), "LOA: {text}");
        }
        let plain = notice::render(&sample_notice(false));
        let last = notice::render(&sample_notice(true));
        assert!(contains(&last, b"Month-to-Month Variable"));
        assert!(!contains(&plain, b"Month-to-Month Variable"));
        assert!(last.len() > plain.len());
        // Every notice offers a fixed plan and carries its EFL.
        for notice in [&plain, &last] {
            assert!(contains(notice, b"A plan you can renew onto"));
            assert!(contains(notice, b"Electricity Facts Label: Lone Star 12"));
        }
    }

    /// Sizes and render times of each kind (`cargo test -p server --release --lib
    /// documents::tests::measure -- --ignored --nocapture`).
    #[test]
    #[ignore = "a measurement, not a check"]
    fn measure() {
        type Render = Box<dyn Fn() -> Vec<u8>>;
        let kinds: Vec<(&str, Render)> = vec![
            ("EFL", Box::new(|| efl::render(&sample_efl()))),
            ("TOS", Box::new(|| terms::render_tos(&head(), "2026.1"))),
            ("YRAC", Box::new(|| terms::render_yrac(&head(), "2024.1"))),
            ("LOA", Box::new(|| loa::render(&sample_loa()))),
            ("notice", Box::new(|| notice::render(&sample_notice(false)))),
            (
                "final notice + EFL",
                Box::new(|| notice::render(&sample_notice(true))),
            ),
        ];
        const RUNS: u32 = 500;
        for (name, render) in kinds {
            let bytes = render();
            let start = std::time::Instant::now();
            for _ in 0..RUNS {
                std::hint::black_box(render());
            }
            let each = start.elapsed() / RUNS;
            println!("{name}: {} bytes, {each:?} per render", bytes.len());
        }
    }
}
