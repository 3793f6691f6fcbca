//! The boilerplate documents, versioned: the Terms of Service (written from the rules in
//! `domain::renewal::tos_clauses`) and Your Rights as a Customer.

use super::{html::Laid, layout::Flow};
use crate::domain::{documents::yrac_sections, renewal::tos_clauses};

/// Who a boilerplate document is printed for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Letterhead {
    pub brand_name: String,
    pub brand_color: Option<String>,
    pub provider_name: String,
}

/// The Terms of Service, version `version`, as a PDF.
#[must_use]
pub fn render_tos(head: &Letterhead, version: &str) -> Vec<u8> {
    tos(head, version).pdf()
}

/// The Terms of Service, version `version`, laid out for its PDF or its HTML.
#[must_use]
pub fn tos(head: &Letterhead, version: &str) -> Laid {
    let title = format!("Terms of Service, version {version}");
    let mut flow = Flow::new(
        &head.brand_name,
        head.brand_color.as_deref(),
        "Terms of Service",
        &title,
    );
    flow.heading(&title);
    flow.paragraph(&format!(
        "These terms bind you and {}, the retail electric provider of the plan {} offers you.",
        head.provider_name, head.brand_name
    ));
    for clause in tos_clauses() {
        flow.heading(clause.heading);
        flow.paragraph(&clause.text);
    }
    Laid { flow, title }
}

/// Your Rights as a Customer, version `version`, as a PDF.
#[must_use]
pub fn render_yrac(head: &Letterhead, version: &str) -> Vec<u8> {
    yrac(head, version).pdf()
}

/// Your Rights as a Customer, version `version`, laid out for its PDF or its HTML.
#[must_use]
pub fn yrac(head: &Letterhead, version: &str) -> Laid {
    let title = format!("Your Rights as a Customer, version {version}");
    let mut flow = Flow::new(
        &head.brand_name,
        head.brand_color.as_deref(),
        "Your Rights as a Customer",
        &title,
    );
    flow.heading(&title);
    for section in yrac_sections() {
        flow.heading(section.heading);
        flow.paragraph(&section.text);
    }
    Laid { flow, title }
}
