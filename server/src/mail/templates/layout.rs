//! The one layout every e-mail shares: the brand's logo and colour, the greeting, the
//! paragraphs, an optional button, and how to reach the partner.

use app::format::html_escape;

use super::{Action, Brand, Rendered};

/// Titles as a sentence lists them: "A, B and C".
pub(super) fn list_titles(titles: &[String]) -> String {
    match titles {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// How the customer reaches the partner, as a sentence's verb phrase: the e-mails come from an
/// address nobody reads, so they never ask for a reply.
pub(super) fn reach(brand: &Brand) -> String {
    match (&brand.support_email, &brand.support_phone) {
        (Some(email), _) => format!("write to {email}"),
        (None, Some(phone)) => format!("call {phone}"),
        (None, None) => format!("contact {}", brand.display_name),
    }
}

/// The button to a hosted page, when the e-mail carries a link to one.
pub(super) fn hosted_action(label: &str, url: Option<&String>) -> Option<Action> {
    url.map(|url| Action {
        label: label.to_owned(),
        url: url.clone(),
    })
}

pub(super) fn layout(
    brand: &Brand,
    subject: &str,
    first_name: &str,
    paragraphs: &[String],
    action: Option<&Action>,
) -> Rendered {
    let mut text = format!("Hello {first_name},\n\n");
    for p in paragraphs {
        text.push_str(p);
        text.push_str("\n\n");
    }
    if let Some(a) = action {
        text.push_str(&format!("{}: {}\n\n", a.label, a.url));
    }
    text.push_str(&format!("— {}\n", brand.display_name));
    if let Some(support) = &brand.support_email {
        text.push_str(&format!("Questions? Write to {support}.\n"));
    }
    for line in contact_lines(brand) {
        text.push_str(&line);
        text.push('\n');
    }

    let color = brand
        .primary_color
        .as_deref()
        .and_then(crate::domain::apps::brand_color)
        .unwrap_or("#1f5fbf");
    let on_color = crate::domain::apps::text_on(color);
    let mut html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title></head>\
         <body style=\"font-family: sans-serif; color: #1a1a1a; max-width: 560px; margin: 0 auto;\">\
         {}<h1 style=\"color: {color}; font-size: 20px;\">{}</h1><p>Hello {},</p>",
        html_escape(subject),
        logo(brand),
        html_escape(&brand.display_name),
        html_escape(first_name),
    );
    for p in paragraphs {
        html.push_str(&format!("<p>{}</p>", html_escape(p)));
    }
    if let Some(a) = action {
        html.push_str(&format!(
            "<p><a href=\"{}\" style=\"background: {color}; color: {on_color}; padding: 10px 16px; \
             border-radius: 4px; text-decoration: none; display: inline-block;\">{}</a></p>",
            html_escape(&a.url),
            html_escape(&a.label)
        ));
    }
    if let Some(support) = &brand.support_email {
        html.push_str(&format!(
            "<p style=\"color: #555; font-size: 13px;\">Questions? Write to \
             <a href=\"mailto:{0}\">{0}</a>.</p>",
            html_escape(support)
        ));
    }
    let mut contacts = Vec::new();
    if let Some(phone) = &brand.support_phone {
        let dial: String = phone
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '+')
            .collect();
        contacts.push(format!(
            "Call <a href=\"tel:{}\">{}</a>",
            html_escape(&dial),
            html_escape(phone)
        ));
    }
    if let Some(url) = brand.support_url.as_deref().filter(|u| is_web_url(u)) {
        contacts.push(format!("<a href=\"{0}\">{0}</a>", html_escape(url)));
    }
    if let Some(hours) = &brand.support_hours {
        contacts.push(format!("Hours: {}", html_escape(hours)));
    }
    if !contacts.is_empty() {
        html.push_str(&format!(
            "<p style=\"color: #555; font-size: 13px;\">{}</p>",
            contacts.join(" · ")
        ));
    }
    html.push_str("</body></html>\n");
    Rendered {
        subject: subject.to_owned(),
        text,
        html,
    }
}

/// The partner's other contacts, one line each, for the plain-text footer.
pub(super) fn contact_lines(brand: &Brand) -> Vec<String> {
    [
        brand.support_phone.as_ref().map(|p| format!("Phone: {p}")),
        brand.support_url.as_ref().map(|u| format!("Web: {u}")),
        brand.support_hours.as_ref().map(|h| format!("Hours: {h}")),
    ]
    .into_iter()
    .flatten()
    .collect()
}

pub(super) fn is_web_url(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// The partner's logo above the message, when it has one on the web.
pub(super) fn logo(brand: &Brand) -> String {
    match brand.logo_url.as_deref().filter(|u| is_web_url(u)) {
        Some(url) => format!(
            "<p><img src=\"{}\" alt=\"{}\" style=\"max-height: 48px; max-width: 200px;\"></p>",
            html_escape(url),
            html_escape(&brand.display_name)
        ),
        None => String::new(),
    }
}

/// Where the customer sees their account: the partner's app, named as the customer knows it.
pub(super) fn open_the_app(brand: &Brand) -> String {
    match &brand.support_url {
        Some(url) => format!("open the {} app or visit {url}", brand.display_name),
        None => format!("open the {} app", brand.display_name),
    }
}
