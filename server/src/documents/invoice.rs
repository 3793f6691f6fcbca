//! A customer's electricity bill as a PDF: one US Letter page, continued on a second when the
//! content runs long. This is the bill's layout; the drawing is `super::pdf`'s.

use app::format::{dollars, month_day, short_date, thousands};
use chrono::{Datelike, NaiveDate};

use super::pdf::{
    self, win_ansi, Canvas, Font, Rgb, Style, BAND_HEIGHT, HAIRLINE, INK, MUTED, PAGE_HEIGHT, WHITE,
};

/// Everything printed on an invoice; amounts in integer cents, quantities and rates as
/// already-formatted decimal strings.
#[derive(Debug, Clone)]
pub struct InvoiceDocument {
    /// The partner's display name, printed as the provider.
    pub brand_name: String,
    /// `#rrggbb` or `#rgb`: the header band's colour; a neutral blue when absent or malformed.
    pub brand_color: Option<String>,
    pub support_email: Option<String>,
    pub support_phone: Option<String>,
    /// The partner's help page.
    pub support_url: Option<String>,
    pub customer_name: String,
    pub account_number: String,
    /// Address lines.
    pub service_address: Vec<String>,
    pub esi_id: String,
    /// The delivery utility, e.g. "Oncor Electric Delivery".
    pub utility_name: String,
    pub utility_outage_phone: Option<String>,
    pub invoice_number: String,
    pub invoice_date: NaiveDate,
    pub payment_due_date: NaiveDate,
    pub billing_period_start: NaiveDate,
    pub billing_period_end: NaiveDate,
    /// `open`, `paid`, `past_due` or `voided`.
    pub status: String,
    pub total_cents: i64,
    /// E.g. "1034.512".
    pub total_kwh: String,
    /// E.g. "14.2".
    /// None without consumption (no average to print).
    pub avg_cents_per_kwh: Option<String>,
    pub groups: Vec<ChargeGroupDoc>,
    pub payments: Vec<PaymentDoc>,
    /// The period's daily consumption, for a small bar chart.
    pub daily_kwh: Vec<(NaiveDate, String)>,
    /// E.g. "Your Visa ending 4242 will be charged automatically on Dec 8, 2026."
    pub auto_pay_note: Option<String>,
    /// The plan of the contract in force at the period's end.
    pub plan: Option<PlanDoc>,
    /// The meter reads the period was billed from, oldest first.
    pub meter_reads: Vec<MeterReadDoc>,
    /// The licensed provider and its certificate number, e.g. "Switchboard Energy LLC, PUCT
    /// Certificate No. 10000".
    pub provider_line: Option<String>,
    /// The partner's uploaded logo, drawn at the head of the bill.
    pub logo: Option<pdf::Image>,
    /// The security deposit the provider holds for the account, in cents (none: no deposit).
    pub deposit_held_cents: Option<i64>,
    /// Where a complaint not resolved goes: the Commission's customer contacts.
    pub commission_note: String,
}

#[derive(Debug, Clone)]
pub struct PlanDoc {
    pub name: String,
    /// None for a plan without a term (month-to-month).
    pub contract_end: Option<NaiveDate>,
}

#[derive(Debug, Clone)]
pub struct MeterReadDoc {
    pub start: NaiveDate,
    pub end: NaiveDate,
    /// When the utility read the meter.
    pub read_date: NaiveDate,
    /// Whole kWh, e.g. "1035".
    pub kwh: String,
    /// `actual` or `estimated`, as the utility reported it.
    pub read_type: String,
}

#[derive(Debug, Clone)]
pub struct ChargeGroupDoc {
    pub name: String,
    pub total_cents: i64,
    pub charges: Vec<ChargeDoc>,
}

#[derive(Debug, Clone)]
pub struct ChargeDoc {
    pub description: String,
    pub quantity: String,
    pub unit: String,
    pub rate: String,
    pub amount_cents: i64,
}

#[derive(Debug, Clone)]
pub struct PaymentDoc {
    pub date: NaiveDate,
    pub amount_cents: i64,
    pub status: String,
    pub method: String,
}

/// The invoice as a one- or two-page US Letter PDF.
#[must_use]
pub fn render(doc: &InvoiceDocument) -> Vec<u8> {
    let mut layout = Layout::new(doc);
    layout.summary();
    layout.charges();
    layout.usage();
    layout.meter_reads();
    layout.payments();
    let pages = layout.finish();
    let title = format!("{} electricity bill {}", doc.brand_name, doc.invoice_number);
    pdf::document_with_image(pages, &title, &doc.brand_name, doc.logo.as_ref())
}

/// `Oct 9 – Nov 7, 2026`, with both years when the period spans New Year.
fn period(start: NaiveDate, end: NaiveDate) -> String {
    if start.year() == end.year() {
        format!("{} \u{2013} {}", month_day(start), short_date(end))
    } else {
        format!("{} \u{2013} {}", short_date(start), short_date(end))
    }
}

const LEFT: f32 = 48.0;
const RIGHT: f32 = 564.0;
/// The lowest baseline body content may use; the footer lives below it.
const BOTTOM: f32 = 104.0;
const FOOTER_RULE: f32 = 86.0;
/// Left edge of the amount-due box; the account's details fill the space before it.
const BOX_LEFT: f32 = 336.0;

const GREEN: Rgb = Rgb(0.10, 0.50, 0.26);
const RED: Rgb = Rgb(0.76, 0.13, 0.13);
const GREY: Rgb = Rgb(0.45, 0.46, 0.48);

const BODY: Style = Style {
    font: Font::Regular,
    size: 9.0,
    color: INK,
};
const BOLD: Style = Style {
    font: Font::Bold,
    size: 9.0,
    color: INK,
};
const LABEL: Style = Style {
    font: Font::Regular,
    size: 7.0,
    color: MUTED,
};
const SMALL: Style = Style {
    font: Font::Regular,
    size: 8.0,
    color: MUTED,
};
const HEADING: Style = Style {
    font: Font::Bold,
    size: 11.5,
    color: INK,
};

/// Right edges of the charge table's number columns.
const QUANTITY_RIGHT: f32 = 400.0;
const RATE_RIGHT: f32 = 482.0;
const DESCRIPTION_X: f32 = LEFT + 10.0;
const DESCRIPTION_WIDTH: f32 = QUANTITY_RIGHT - 84.0 - DESCRIPTION_X;
const ROW: f32 = 13.0;
const CHART_HEIGHT: f32 = 50.0;

/// How the summary box reads for the invoice's status.
struct Standing {
    label: &'static [u8],
    line: String,
    line_color: Rgb,
    stamp: Option<(&'static [u8], Rgb)>,
}

impl Standing {
    fn of(doc: &InvoiceDocument) -> Standing {
        let due = short_date(doc.payment_due_date);
        match doc.status.as_str() {
            "paid" => Standing {
                label: b"INVOICE TOTAL",
                line: "Paid. Thank you.".to_string(),
                line_color: GREEN,
                stamp: Some((b"PAID", GREEN)),
            },
            "voided" => Standing {
                label: b"INVOICE TOTAL",
                line: "Voided: nothing is due.".to_string(),
                line_color: MUTED,
                stamp: Some((b"VOIDED", GREY)),
            },
            "past_due" => Standing {
                label: b"AMOUNT DUE",
                line: format!("Was due {due}"),
                line_color: RED,
                stamp: Some((b"PAST DUE", RED)),
            },
            _ if doc.total_cents <= 0 => Standing {
                label: b"AMOUNT DUE",
                line: "No payment due".to_string(),
                line_color: INK,
                stamp: None,
            },
            _ => Standing {
                label: b"AMOUNT DUE",
                line: format!("Due {due}"),
                line_color: INK,
                stamp: None,
            },
        }
    }
}

/// Lays the bill out top to bottom, starting a new page when the next block would run into
/// the footer.
struct Layout<'a> {
    doc: &'a InvoiceDocument,
    brand: Rgb,
    done: Vec<Canvas>,
    page: Canvas,
    /// The baseline of the next line.
    y: f32,
}

impl<'a> Layout<'a> {
    fn new(doc: &'a InvoiceDocument) -> Layout<'a> {
        let mut page = Canvas::new();
        let number = format!("Invoice {}", doc.invoice_number);
        let (brand, _) = pdf::TitleBand {
            color: doc.brand_color.as_deref(),
            name: &doc.brand_name,
            name_size: 20.0,
            title: "Electricity bill",
            second_line: Some(&number),
            logo: doc.logo.as_ref(),
        }
        .draw(&mut page, LEFT, RIGHT);
        Layout {
            doc,
            brand,
            done: Vec::new(),
            page,
            y: PAGE_HEIGHT - BAND_HEIGHT,
        }
    }

    fn new_page(&mut self) {
        let finished = std::mem::replace(&mut self.page, Canvas::new());
        self.done.push(finished);
        let aside = format!("Invoice {} (continued)", self.doc.invoice_number);
        let top = pdf::continued_header(
            &mut self.page,
            (LEFT, RIGHT),
            self.brand,
            &self.doc.brand_name,
            Some(&aside),
        );
        self.y = top - 34.0;
    }

    /// Starts a new page unless `height` more fits above the footer; tells whether it did.
    fn ensure(&mut self, height: f32) -> bool {
        if self.y - height < BOTTOM {
            self.new_page();
            true
        } else {
            false
        }
    }

    fn section(&mut self, title: &str, aside: Option<&str>) {
        self.page.text(LEFT, self.y, HEADING, &win_ansi(title));
        if let Some(aside) = aside {
            let aside = SMALL.fit(&win_ansi(aside), RIGHT - LEFT - 160.0);
            self.page.text_right(RIGHT, self.y, SMALL, &aside);
        }
        self.page.hline(LEFT, RIGHT, self.y - 6.0, 1.0, self.brand);
        self.y -= 20.0;
    }

    /// Who and where on the left; on the right, what is owed and by when.
    fn summary(&mut self) {
        let top = self.y - 16.0;
        let left_bottom = self.account(top);
        let box_bottom = self.amount_box(top);
        let note_bottom = self.commission(box_bottom);
        self.y = left_bottom.min(note_bottom) - 30.0;
    }

    /// Under the amount box, in small print: where a complaint the provider did not resolve
    /// goes (the Commission's contacts); returns the last baseline.
    fn commission(&mut self, top: f32) -> f32 {
        let lines = LABEL.wrap(&win_ansi(&self.doc.commission_note), RIGHT - BOX_LEFT);
        let mut y = top - 4.0;
        for line in &lines {
            y -= 8.5;
            self.page.text(BOX_LEFT, y, LABEL, line);
        }
        y
    }

    /// The service address and the account's identifiers; returns the last baseline.
    fn account(&mut self, top: f32) -> f32 {
        let doc = self.doc;
        let width = BOX_LEFT - LEFT - 16.0;
        let mut y = top - 10.0;
        self.page.text(LEFT, y, LABEL, b"SERVICE ADDRESS");
        y -= 15.0;
        let name_style = BOLD.sized(11.0);
        let name = name_style.fit(&win_ansi(&doc.customer_name), width);
        self.page.text(LEFT, y, name_style, &name);
        let value_style = BODY.sized(9.5);
        for line in &doc.service_address {
            y -= 12.5;
            let line = value_style.fit(&win_ansi(line), width);
            self.page.text(LEFT, y, value_style, &line);
        }

        y -= 10.0;
        let plan = doc.plan.as_ref().map(|p| {
            let ends = p
                .contract_end
                .map_or_else(|| "No end date (month-to-month)".to_owned(), short_date);
            [("Plan", p.name.clone()), ("Contract ends", ends)]
        });
        let facts = [
            ("Account number", doc.account_number.clone()),
            ("Invoice number", doc.invoice_number.clone()),
            ("Invoice date", short_date(doc.invoice_date)),
            ("Payment due", short_date(doc.payment_due_date)),
            (
                "Billing period",
                period(doc.billing_period_start, doc.billing_period_end),
            ),
            ("ESI ID", doc.esi_id.clone()),
            ("Utility", doc.utility_name.clone()),
        ];
        let deposit = doc
            .deposit_held_cents
            .map(|cents| ("Deposit held", dollars(cents)));
        let label_style = SMALL.sized(8.5);
        let value_x = LEFT + 84.0;
        for (label, value) in facts
            .into_iter()
            .chain(plan.into_iter().flatten())
            .chain(deposit)
        {
            y -= 13.0;
            self.page.text(LEFT, y, label_style, label.as_bytes());
            let value = value_style.fit(&win_ansi(&value), width - 84.0);
            self.page.text(value_x, y, value_style, &value);
        }
        y
    }

    /// What is owed, by when, and whether it will be charged automatically; returns the box's
    /// bottom edge.
    fn amount_box(&mut self, top: f32) -> f32 {
        let doc = self.doc;
        let pad = 16.0;
        let inner = RIGHT - BOX_LEFT - 2.0 * pad;
        let standing = Standing::of(doc);
        let note_style = BODY.sized(8.0);
        let note = doc
            .auto_pay_note
            .as_deref()
            .filter(|n| !n.trim().is_empty())
            .map(|n| note_style.wrap(&win_ansi(n), inner))
            .unwrap_or_default();
        let note_height: f32 = note.iter().map(|_| 10.5).sum();
        let height = if note.is_empty() {
            90.0
        } else {
            101.5 + note_height
        };
        let bottom = top - height;
        self.page.fill_rect(
            BOX_LEFT,
            bottom,
            RIGHT - BOX_LEFT,
            height,
            self.brand.lighten(0.9),
        );
        self.page
            .fill_rect(BOX_LEFT, bottom, 3.0, height, self.brand);

        let x = BOX_LEFT + pad;
        let mut y = top - 18.0;
        self.page.text(x, y, LABEL, standing.label);
        if let Some((word, color)) = standing.stamp {
            let style = BOLD.sized(9.0).colored(color);
            let width = style.width(word) + 12.0;
            let left = RIGHT - pad + 4.0 - width;
            self.page.fill_rect(left, y - 5.0, width, 17.0, WHITE);
            self.page
                .stroke_rect(left, y - 5.0, width, 17.0, 1.25, color);
            self.page.text(left + 6.0, y, style, word);
        }

        y -= 28.0;
        let amount = if doc.total_cents < 0 {
            format!("{} credit", dollars(doc.total_cents))
        } else {
            dollars(doc.total_cents)
        };
        let amount = win_ansi(&amount);
        let full = BOLD.sized(24.0);
        let width = full.width(&amount);
        // Shrink rather than cut: every digit of an amount matters.
        let amount_style = if width > inner {
            full.sized(24.0 * inner / width)
        } else {
            full
        };
        self.page.text(x, y, amount_style, &amount);

        y -= 18.0;
        let line_style = BOLD.sized(9.5).colored(standing.line_color);
        self.page.text(
            x,
            y,
            line_style,
            &line_style.fit(&win_ansi(&standing.line), inner),
        );
        y -= 14.0;
        let used = format!("{} kWh used this period", thousands(&doc.total_kwh));
        self.page
            .text(x, y, SMALL, &SMALL.fit(&win_ansi(&used), inner));

        if !note.is_empty() {
            y -= 10.0;
            self.page
                .hline(x, RIGHT - pad, y, 0.5, self.brand.lighten(0.55));
            y -= 12.0;
            for line in &note {
                self.page.text(x, y, note_style, line);
                y -= 10.5;
            }
        }
        bottom
    }

    fn charge_columns(&mut self) {
        let y = self.y;
        self.page.text(LEFT, y, LABEL, b"DESCRIPTION");
        self.page.text_right(QUANTITY_RIGHT, y, LABEL, b"QUANTITY");
        self.page.text_right(RATE_RIGHT, y, LABEL, b"RATE");
        self.page.text_right(RIGHT, y, LABEL, b"AMOUNT");
        self.y -= 15.0;
    }

    /// Starts a new page if `height` does not fit, repeating the table's heading there.
    fn ensure_charge_row(&mut self, height: f32) {
        if self.ensure(height) {
            self.section("Charges (continued)", None);
            self.charge_columns();
        }
    }

    fn charges(&mut self) {
        self.section("Charges", None);
        self.charge_columns();
        let doc = self.doc;
        for group in &doc.groups {
            // Keep a group's name with its first row.
            self.ensure_charge_row(2.0 * ROW);
            self.page
                .text(LEFT, self.y, BOLD, &BOLD.fit(&win_ansi(&group.name), 300.0));
            self.y -= ROW;
            for charge in &group.charges {
                self.charge_row(charge);
            }
            self.ensure_charge_row(ROW);
            self.y -= 2.0;
            self.page
                .hline(RATE_RIGHT - 60.0, RIGHT, self.y + 9.5, 0.5, HAIRLINE);
            self.page.text_right(RATE_RIGHT, self.y, SMALL, b"Subtotal");
            let subtotal = win_ansi(&dollars(group.total_cents));
            self.page.text_right(RIGHT, self.y, BOLD, &subtotal);
            self.y -= ROW + 8.0;
        }
        self.ensure(ROW + 6.0);
        let total_style = BOLD.sized(10.5);
        self.page.hline(LEFT, RIGHT, self.y + 11.0, 0.75, INK);
        self.page.text(LEFT, self.y, total_style, b"Invoice total");
        let total = win_ansi(&dollars(doc.total_cents));
        self.page.text_right(RIGHT, self.y, total_style, &total);
        self.y -= 30.0;
    }

    fn charge_row(&mut self, charge: &ChargeDoc) {
        let lines = BODY.wrap(&win_ansi(&charge.description), DESCRIPTION_WIDTH);
        let height: f32 = lines.iter().map(|_| ROW - 2.0).sum::<f32>() + 2.0;
        self.ensure_charge_row(height);
        let mut y = self.y;
        for line in &lines {
            self.page.text(DESCRIPTION_X, y, BODY, line);
            y -= ROW - 2.0;
        }
        let quantity = format!("{} {}", thousands(&charge.quantity), charge.unit);
        let quantity = BODY.fit(&win_ansi(quantity.trim()), 80.0);
        self.page
            .text_right(QUANTITY_RIGHT, self.y, BODY, &quantity);
        let rate = BODY.fit(&win_ansi(&charge.rate), RATE_RIGHT - QUANTITY_RIGHT - 8.0);
        self.page.text_right(RATE_RIGHT, self.y, BODY, &rate);
        let amount = win_ansi(&dollars(charge.amount_cents));
        self.page.text_right(RIGHT, self.y, BODY, &amount);
        self.y -= height;
    }

    /// A bar a day, scaled to the period's highest day.
    fn usage(&mut self) {
        let doc = self.doc;
        let mut days: Vec<(NaiveDate, &str, f32)> = doc
            .daily_kwh
            .iter()
            .map(|(date, kwh)| {
                let value = kwh.trim().parse::<f32>().unwrap_or(0.0);
                let value = if value.is_finite() {
                    value.max(0.0)
                } else {
                    0.0
                };
                (*date, kwh.as_str(), value)
            })
            .collect();
        days.sort_by_key(|&(date, _, _)| date);
        let count = u16::try_from(days.len()).unwrap_or(u16::MAX);
        days.truncate(usize::from(count));
        let Some(&(peak_date, peak_text, peak)) = days.iter().max_by(|a, b| a.2.total_cmp(&b.2))
        else {
            return;
        };

        let aside = format!(
            "{} kWh over {} days \u{b7} highest {} kWh on {}",
            thousands(&doc.total_kwh),
            days.len(),
            thousands(peak_text.trim()),
            month_day(peak_date),
        );
        self.ensure(20.0 + CHART_HEIGHT + 24.0);
        self.section("Daily usage", Some(&aside));
        let top = self.y + 4.0;
        let base = top - CHART_HEIGHT;
        let step = (RIGHT - LEFT) / f32::from(count);
        let bar = step * 0.7;
        let label_every = if days.len() > 45 { 14 } else { 7 };
        self.page.hline(LEFT, RIGHT, top, 0.4, HAIRLINE);
        let mut x = LEFT;
        for (i, &(date, _, kwh)) in days.iter().enumerate() {
            if peak > 0.0 && kwh > 0.0 {
                let height = kwh / peak * CHART_HEIGHT;
                self.page
                    .fill_rect(x + (step - bar) / 2.0, base, bar, height, self.brand);
            }
            if i % label_every == 0 {
                let label = win_ansi(&month_day(date));
                let center = (x + step / 2.0).max(LEFT + LABEL.width(&label) / 2.0);
                self.page.text_center(center, base - 10.0, LABEL, &label);
            }
            x += step;
        }
        self.page.hline(LEFT, RIGHT, base, 0.6, MUTED);
        self.y = base - 36.0;
    }

    /// The reads behind the kWh billed: what was measured, over which days, read when.
    fn meter_reads(&mut self) {
        let doc = self.doc;
        if doc.meter_reads.is_empty() {
            return;
        }
        let heading = |layout: &mut Self, title: &str| {
            layout.section(title, None);
            let y = layout.y;
            layout.page.text(LEFT, y, LABEL, b"PERIOD READ");
            layout.page.text(LEFT + 170.0, y, LABEL, b"READ ON");
            layout.page.text(RATE_RIGHT - 80.0, y, LABEL, b"TYPE");
            layout.page.text_right(RIGHT, y, LABEL, b"USAGE");
            layout.y -= 15.0;
        };
        self.ensure(20.0 + 15.0 + ROW);
        heading(self, "Meter reads");
        for read in &doc.meter_reads {
            if self.ensure(ROW) {
                heading(self, "Meter reads (continued)");
            }
            let y = self.y;
            self.page
                .text(LEFT, y, BODY, &win_ansi(&period(read.start, read.end)));
            self.page.text(
                LEFT + 170.0,
                y,
                BODY,
                &win_ansi(&short_date(read.read_date)),
            );
            let kind = BODY.fit(&win_ansi(&humanize(&read.read_type)), 100.0);
            self.page.text(RATE_RIGHT - 80.0, y, BODY, &kind);
            let kwh = win_ansi(&format!("{} kWh", thousands(&read.kwh)));
            self.page.text_right(RIGHT, y, BODY, &kwh);
            self.y -= ROW;
        }
        self.y -= 17.0;
    }

    fn payment_columns(&mut self) {
        let y = self.y;
        self.page.text(LEFT, y, LABEL, b"DATE");
        self.page.text(LEFT + 90.0, y, LABEL, b"METHOD");
        self.page.text(RATE_RIGHT - 80.0, y, LABEL, b"STATUS");
        self.page.text_right(RIGHT, y, LABEL, b"AMOUNT");
        self.y -= 15.0;
    }

    fn payments(&mut self) {
        let doc = self.doc;
        if doc.payments.is_empty() {
            return;
        }
        self.ensure(20.0 + 15.0 + ROW);
        self.section("Payments", None);
        self.payment_columns();
        for payment in &doc.payments {
            if self.ensure(ROW) {
                self.section("Payments (continued)", None);
                self.payment_columns();
            }
            let y = self.y;
            self.page
                .text(LEFT, y, BODY, &win_ansi(&short_date(payment.date)));
            let method = BODY.fit(&win_ansi(&payment.method), RATE_RIGHT - 80.0 - LEFT - 100.0);
            self.page.text(LEFT + 90.0, y, BODY, &method);
            let status = BODY.fit(&win_ansi(&humanize(&payment.status)), 100.0);
            self.page.text(RATE_RIGHT - 80.0, y, BODY, &status);
            let amount = win_ansi(&dollars(payment.amount_cents));
            self.page.text_right(RIGHT, y, BODY, &amount);
            self.y -= ROW;
        }
    }

    /// The pages, each with its footer now that their number is known.
    fn finish(self) -> Vec<Canvas> {
        let Layout {
            doc,
            mut done,
            page,
            ..
        } = self;
        done.push(page);
        let count = done.len();
        for (index, canvas) in done.iter_mut().enumerate() {
            footer(canvas, doc, index + 1, count);
        }
        done
    }
}

fn footer(canvas: &mut Canvas, doc: &InvoiceDocument, page: usize, pages: usize) {
    let present = |s: &Option<String>| s.clone().filter(|s| !s.trim().is_empty());
    let mut ways: Vec<String> = Vec::new();
    if let Some(phone) = present(&doc.support_phone) {
        ways.push(format!("call {phone}"));
    }
    if let Some(email) = present(&doc.support_email) {
        ways.push(format!("email {email}"));
    }
    if let Some(url) = present(&doc.support_url) {
        ways.push(format!("visit {url}"));
    }
    let contact = match ways.as_slice() {
        [] => format!("Questions about your bill? Contact {}.", doc.brand_name),
        [one] => format!("Questions about your bill? {}.", capitalized(one)),
        [init @ .., last] => format!(
            "Questions about your bill? {} or {last}.",
            capitalized(&init.join(", "))
        ),
    };
    let outage = match present(&doc.utility_outage_phone) {
        Some(phone) => format!("For outages call {} at {phone}.", doc.utility_name),
        None => format!("For outages contact {}.", doc.utility_name),
    };
    let average = doc
        .avg_cents_per_kwh
        .as_ref()
        .map(|avg| format!("Average price this period: {avg}\u{a2} per kWh"))
        .unwrap_or_default();

    canvas.hline(LEFT, RIGHT, FOOTER_RULE, 0.5, HAIRLINE);
    let width = RIGHT - LEFT - 110.0;
    // Every way to reach the partner is printed: the contact line may take two lines.
    let mut lines: Vec<Vec<u8>> = SMALL.wrap(&win_ansi(&contact), width);
    lines.truncate(2);
    let provider = doc
        .provider_line
        .as_ref()
        .map(|p| format!("Electricity provided by {p}."))
        .unwrap_or_default();
    lines.extend(
        [outage, average, provider]
            .iter()
            .filter(|l| !l.is_empty())
            .map(|l| SMALL.fit(&win_ansi(l), width)),
    );
    let mut y = FOOTER_RULE - 14.0;
    for line in &lines {
        canvas.text(LEFT, y, SMALL, line);
        y -= 11.0;
    }
    if pages > 1 {
        let label = win_ansi(&format!("Page {page} of {pages}"));
        canvas.text_right(RIGHT, FOOTER_RULE - 14.0, SMALL, &label);
    }
    let brand = SMALL.fit(&win_ansi(&doc.brand_name), 100.0);
    canvas.text_right(RIGHT, FOOTER_RULE - 36.0, SMALL, &brand);
}

/// `requires_action` as `Requires action`.
fn humanize(status: &str) -> String {
    capitalized(&status.replace('_', " "))
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn charge(description: &str, quantity: &str, unit: &str, rate: &str, cents: i64) -> ChargeDoc {
        ChargeDoc {
            description: description.to_string(),
            quantity: quantity.to_string(),
            unit: unit.to_string(),
            rate: rate.to_string(),
            amount_cents: cents,
        }
    }

    fn sample() -> InvoiceDocument {
        InvoiceDocument {
            brand_name: "Lone Star Power".to_string(),
            brand_color: Some("#0b6e4f".to_string()),
            support_email: Some("help@lonestarpower.example".to_string()),
            support_phone: Some("(800) 555-0100".to_string()),
            support_url: Some("lonestarpower.example/help".to_string()),
            customer_name: "María O’Neil".to_string(),
            account_number: "100-204-3311".to_string(),
            service_address: vec![
                "1207 Elm St (Apt 4)".to_string(),
                "Dallas, TX 75201".to_string(),
            ],
            esi_id: "10443720001234567".to_string(),
            utility_name: "Oncor Electric Delivery".to_string(),
            utility_outage_phone: Some("(888) 313-4747".to_string()),
            invoice_number: "INV-2026-000123".to_string(),
            invoice_date: date(2026, 10, 24),
            payment_due_date: date(2026, 11, 8),
            billing_period_start: date(2026, 9, 22),
            billing_period_end: date(2026, 10, 21),
            status: "open".to_string(),
            total_cents: 12_345,
            total_kwh: "1035".to_string(),
            avg_cents_per_kwh: Some("11.9".to_string()),
            groups: vec![
                ChargeGroupDoc {
                    name: "Electricity".to_string(),
                    total_cents: 8_000,
                    charges: vec![
                        charge("Energy charge", "1035", "kWh", "$0.0725", 7_500),
                        charge("Base charge", "1", "month", "$5.00", 500),
                    ],
                },
                ChargeGroupDoc {
                    name: "Delivery (Oncor Electric Delivery)".to_string(),
                    total_cents: 4_345,
                    charges: vec![charge("Delivery charges", "1035", "kWh", "", 4_345)],
                },
            ],
            payments: vec![PaymentDoc {
                date: date(2026, 10, 2),
                amount_cents: 9_876,
                status: "succeeded".to_string(),
                method: "Visa ending 4242".to_string(),
            }],
            daily_kwh: (0..30)
                .map(|i| {
                    (
                        date(2026, 9, 22) + chrono::Days::new(i),
                        format!("{}.5", 20 + i % 9),
                    )
                })
                .collect(),
            auto_pay_note: Some(
                "Your Visa ending 4242 will be charged automatically on Nov 8, 2026.".to_string(),
            ),
            plan: Some(PlanDoc {
                name: "Lone Star Fixed 12".to_string(),
                contract_end: Some(date(2027, 3, 21)),
            }),
            meter_reads: vec![MeterReadDoc {
                start: date(2026, 9, 22),
                end: date(2026, 10, 21),
                read_date: date(2026, 10, 22),
                kwh: "1035".to_string(),
                read_type: "actual".to_string(),
            }],
            provider_line: Some("Switchboard Energy LLC, PUCT Certificate No. 10000".to_string()),
            logo: None,
            deposit_held_cents: None,
            commission_note: crate::domain::documents::COMMISSION.complaint_sentence(),
        }
    }

    #[test]
    fn the_bill_prints_the_deposit_held_the_late_fee_and_the_commission() {
        let mut doc = sample();
        let plain = render(&doc);
        assert!(!contains(&plain, b"(Deposit held)"));
        assert!(contains(&plain, b"(Contract ends)"));
        assert!(contains(&plain, b"(Mar 21, 2027)"));
        assert!(contains(&plain, b"customer@puc.texas.gov"));
        assert!(contains(&plain, b"www.puc.texas.gov"));
        doc.deposit_held_cents = Some(15_000);
        doc.groups.push(ChargeGroupDoc {
            name: "Late fee".to_string(),
            total_cents: 500,
            charges: vec![charge(
                "Late fee on INV-2026-000122",
                "$100.00",
                "",
                "5%",
                500,
            )],
        });
        let pdf = render(&doc);
        assert!(contains(&pdf, b"(Deposit held)"));
        assert!(contains(&pdf, b"($150.00)"));
        assert!(contains(&pdf, b"(Late fee on INV-2026-000122)"));
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }

    /// The text as a non-ASCII string is written: its encoded bytes in hex.
    fn hex(text: &str) -> Vec<u8> {
        win_ansi(text)
            .iter()
            .flat_map(|b| format!("{b:02X}").into_bytes())
            .collect()
    }

    fn page_count(pdf: &[u8]) -> usize {
        let text = String::from_utf8_lossy(pdf);
        let count = text.split("/Count ").nth(1).unwrap();
        count[..count.find(|c: char| !c.is_ascii_digit()).unwrap()]
            .parse()
            .unwrap()
    }

    #[test]
    fn output_is_a_complete_pdf() {
        let pdf = render(&sample());
        assert!(pdf.starts_with(b"%PDF-"));
        assert!(pdf.trim_ascii_end().ends_with(b"%%EOF"));
        assert_eq!(page_count(&pdf), 1);
    }

    #[test]
    fn prints_the_facts_as_searchable_text() {
        let pdf = render(&sample());
        for text in [
            "INV-2026-000123",
            "$123.45",
            "Nov 8, 2026",
            "Energy charge",
            "Lone Star Power",
        ] {
            assert!(contains(&pdf, text.as_bytes()), "{text} missing");
        }
        assert!(contains(&pdf, b"1,035 kWh"));
        assert!(contains(
            &pdf,
            b"(Questions about your bill? Call (800) 555-0100, email"
        ));
        assert!(contains(&pdf, b"lonestarpower.example/help.)"));
        assert!(!contains(&pdf, b"1034.512"));
        for text in [
            "(Lone Star Fixed 12)",
            "(Contract ends)",
            "(Mar 21, 2027)",
            "(Meter reads)",
            "(Oct 22, 2026)",
            "(Actual)",
            "(Electricity provided by Switchboard Energy LLC, PUCT Certificate No. 10000.)",
        ] {
            assert!(contains(&pdf, text.as_bytes()), "{text} missing");
        }
        assert!(contains(
            &pdf,
            b"For outages call Oncor Electric Delivery at (888) 313-4747."
        ));
        assert!(contains(
            &pdf,
            &hex("Average price this period: 11.9¢ per kWh")
        ));
        assert!(contains(&pdf, &hex("María O’Neil")));
        assert!(contains(&pdf, b"/WinAnsiEncoding"));
        assert!(contains(&pdf, b"/Helvetica-Bold"));
    }

    #[test]
    fn stamps_follow_the_status() {
        let mut doc = sample();
        assert!(!contains(&render(&doc), b"(PAID)"));
        for (status, stamp) in [
            ("paid", "(PAID)"),
            ("past_due", "(PAST DUE)"),
            ("voided", "(VOIDED)"),
        ] {
            doc.status = status.to_string();
            assert!(contains(&render(&doc), stamp.as_bytes()), "{status}");
        }
    }

    #[test]
    fn a_negative_total_reads_as_a_credit() {
        let mut doc = sample();
        doc.total_cents = -1_234;
        let pdf = render(&doc);
        assert!(contains(&pdf, b"(-$12.34 credit)"));
        assert!(contains(&pdf, b"(No payment due)"));
    }

    #[test]
    fn dates_read_naturally() {
        assert_eq!(
            period(date(2026, 10, 9), date(2026, 11, 7)),
            "Oct 9 \u{2013} Nov 7, 2026"
        );
        assert_eq!(
            period(date(2026, 12, 9), date(2027, 1, 8)),
            "Dec 9, 2026 \u{2013} Jan 8, 2027"
        );
    }

    #[test]
    fn a_malformed_brand_colour_falls_back() {
        let mut doc = sample();
        doc.brand_color = Some("not a colour".to_string());
        assert!(render(&doc).starts_with(b"%PDF-"));
    }

    #[test]
    fn a_long_charge_list_continues_on_a_second_page() {
        let mut doc = sample();
        doc.groups[0].charges = (1..=40)
            .map(|i| charge(&format!("Charge line {i}"), "1", "each", "$1.00", 100))
            .collect();
        let pdf = render(&doc);
        assert_eq!(page_count(&pdf), 2);
        assert!(contains(&pdf, b"/Count 2"));
        assert!(contains(&pdf, b"(Charge line 40)"));
        assert!(contains(&pdf, b"(Charges (continued))"));
        assert!(contains(&pdf, b"(Page 2 of 2)"));
    }

    #[test]
    fn renders_without_daily_usage_or_optional_parts() {
        let mut doc = sample();
        doc.daily_kwh.clear();
        doc.payments.clear();
        doc.auto_pay_note = None;
        doc.support_email = None;
        doc.support_phone = None;
        doc.support_url = None;
        doc.plan = None;
        doc.meter_reads.clear();
        doc.utility_outage_phone = None;
        doc.brand_color = None;
        let pdf = render(&doc);
        assert!(pdf.starts_with(b"%PDF-"));
        assert!(!contains(&pdf, b"(Daily usage)"));
        assert!(!contains(&pdf, b"(Meter reads)"));
        assert!(!contains(&pdf, b"(Plan)"));
        assert!(contains(
            &pdf,
            b"(For outages contact Oncor Electric Delivery.)"
        ));
        assert_eq!(page_count(&pdf), 1);
    }
}
