//! The pages that speak for a partner's app (the hosted pages, the portal, a spent flow link)
//! wear its brand through one shell: its name, colour and logo in the header, and its support
//! contacts through one component. A page that cannot know the app wears no brand at all, never
//! the platform's.

use leptos::prelude::*;

use crate::{
    domain::apps::{brand_color, text_on},
    store::apps::AppRow,
};

/// What a page shows of the app it speaks for.
pub struct Brand {
    /// Empty on a page that speaks for no app.
    pub name: String,
    /// Only a logo on the web (http or https).
    pub logo: Option<String>,
    /// The brand colour and the text colour that reads on it.
    pub color: Option<(String, &'static str)>,
    pub contacts: Contacts,
}

impl Brand {
    pub fn of(app: &AppRow) -> Brand {
        Brand {
            name: app.display_name.clone(),
            logo: app
                .logo_url
                .clone()
                .filter(|u| u.starts_with("https://") || u.starts_with("http://")),
            color: app
                .primary_color
                .as_deref()
                .and_then(brand_color)
                .map(|c| (c.to_owned(), text_on(c))),
            contacts: Contacts::of(app),
        }
    }

    /// A page that cannot know which app it speaks for: no name, no colour, no logo, and
    /// never the platform's own.
    pub fn neutral() -> Brand {
        Brand {
            name: String::new(),
            logo: None,
            color: None,
            contacts: Contacts::default(),
        }
    }

    pub fn of_option(app: Option<&AppRow>) -> Brand {
        app.map_or_else(Brand::neutral, Brand::of)
    }

    /// The page's one inline style: the brand's colours (empty without them).
    pub fn style(&self) -> String {
        self.color
            .as_ref()
            .map(|(c, on)| format!(":root{{--brand:{c};--brand-contrast:{on}}}"))
            .unwrap_or_default()
    }
}

/// The partner's support contacts, as its app sets them.
#[derive(Clone, Default)]
pub struct Contacts {
    name: Option<String>,
    phone: Option<String>,
    email: Option<String>,
    hours: Option<String>,
    /// Only a site over https.
    url: Option<String>,
}

impl Contacts {
    pub fn of(app: &AppRow) -> Contacts {
        Contacts {
            name: app.support_name.clone(),
            phone: app.support_phone.clone(),
            email: app.support_email.clone(),
            hours: app.support_hours.clone(),
            url: app
                .support_url
                .clone()
                .filter(|u| u.starts_with("https://")),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.phone.is_none()
            && self.email.is_none()
            && self.hours.is_none()
            && self.url.is_none()
    }
}

/// Lines of a paragraph, a line break between each.
pub fn lines(lines: Vec<AnyView>) -> impl IntoView {
    lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| view! { {(i > 0).then(|| view! { <br/> })} {line} })
        .collect_view()
}

/// The partner's contacts, one a line: its support's name, phone (to dial), e-mail (to write
/// to), hours and site. With none set, a page that must say whom to ask says to write to the
/// app `name` where the customer signed up (`fallback`); else it shows nothing.
pub fn support_contacts(contacts: &Contacts, name: &str, fallback: bool) -> Option<AnyView> {
    let c = contacts.clone();
    let mut out: Vec<AnyView> = Vec::new();
    if let Some(n) = c.name {
        out.push(n.into_any());
    }
    if let Some(p) = c.phone {
        let shown = app::format::phone(&p);
        let href = format!("tel:{p}");
        out.push(view! { "Phone: " <a href=href>{shown}</a> }.into_any());
    }
    if let Some(e) = c.email {
        let href = format!("mailto:{e}");
        out.push(view! { "E-mail: " <a href=href>{e}</a> }.into_any());
    }
    if let Some(h) = c.hours {
        out.push(view! { "Hours: " {h} }.into_any());
    }
    if let Some(u) = c.url {
        let href = u.clone();
        out.push(view! { <a href=href>{u}</a> }.into_any());
    }
    if out.is_empty() {
        if !fallback {
            return None;
        }
        let name = name.to_owned();
        out.push(
            view! {
                "For your account and bills, write to " {name}
                " through the app or site where you signed up."
            }
            .into_any(),
        );
    }
    Some(lines(out).into_any())
}

/// What a branded page holds besides its brand.
pub struct Shell {
    pub title: String,
    pub testid: &'static str,
    /// The hosted pages' own stylesheet beside the flows' (a flow-link page has the flows'
    /// only).
    pub hosted_styles: bool,
    /// Scripts in the head (the one hosted page that runs script).
    pub head: Option<AnyView>,
    /// Between the header and the title (the portal's navigation).
    pub above: Option<AnyView>,
    pub body: AnyView,
    /// The app's support contacts at the foot of the page (the signed-in portal has its own
    /// support page and card instead).
    pub contacts: bool,
    /// After the page's content (a flow-link page's message to its host).
    pub after: Option<AnyView>,
}

/// A whole branded page: the brand's header, the title, the body, the contacts.
pub fn page(brand: &Brand, shell: Shell) -> String {
    let Shell {
        title,
        testid,
        hosted_styles,
        head,
        above,
        body,
        contacts,
        after,
    } = shell;
    let full_title = if brand.name.is_empty() {
        title.clone()
    } else {
        format!("{title} · {}", brand.name)
    };
    // The app's logo is its icon too; the service's own only when it has none.
    let icon = brand
        .logo
        .clone()
        .unwrap_or_else(|| "/favicon.svg".to_owned());
    let logo = brand
        .logo
        .clone()
        .map(|src| view! { <img class="logo" src=src alt=""/> });
    let name = (!brand.name.is_empty()).then(|| {
        let name = brand.name.clone();
        view! { <span class="brand" data-testid="app-name">{name}</span> }
    });
    let footer = contacts
        .then(|| support_contacts(&brand.contacts, &brand.name, false))
        .flatten()
        .map(|lines| {
            let name = brand.name.clone();
            view! {
                <footer class="card" data-testid="brand-contacts">
                    <p>"Questions? Contact " {name} ":" <br/> {lines}</p>
                </footer>
            }
        });
    let hosted_styles =
        hosted_styles.then(|| view! { <link rel="stylesheet" href="/portal/assets/portal.css"/> });
    let style = brand.style();
    crate::http::html::document(view! {
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <title>{full_title}</title>
                <link rel="stylesheet" href="/pkg/switchboard.css"/>
                {hosted_styles}
                <link rel="icon" href=icon/>
                <style>{style}</style>
                {head}
            </head>
            <body>
                <main class="page" data-testid=testid>
                    <header class="flow-header">{logo} {name}</header>
                    {above}
                    <h1>{title}</h1>
                    {body}
                    {footer}
                </main>
                {after}
            </body>
        </html>
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brand(name: &str) -> Brand {
        Brand {
            name: name.to_owned(),
            logo: Some("https://x.example/a.png?b=1&c=2".to_owned()),
            color: Some(("#123456".to_owned(), "#ffffff")),
            contacts: Contacts {
                name: Some("Care <team>".to_owned()),
                phone: Some("+15125550100".to_owned()),
                email: None,
                hours: None,
                url: Some("https://help.example/".to_owned()),
            },
        }
    }

    #[test]
    fn the_shell_escapes_the_brand_and_keeps_its_style_exact() {
        let html = page(
            &brand("Sunny & Co"),
            Shell {
                title: "Hello <you>".to_owned(),
                testid: "t",
                hosted_styles: true,
                head: None,
                above: None,
                body: view! { <p>"Body"</p> }.into_any(),
                contacts: true,
                after: None,
            },
        );
        assert!(
            html.starts_with("<!DOCTYPE html><html lang=\"en\">"),
            "{html}"
        );
        assert!(
            html.contains("<title>Hello &lt;you&gt; · Sunny &amp; Co</title>"),
            "{html}"
        );
        assert!(html.contains("<style>:root{--brand:#123456;--brand-contrast:#ffffff}</style>"));
        assert!(
            html.contains("src=\"https://x.example/a.png?b=1&amp;c=2\""),
            "{html}"
        );
        assert!(
            html.contains("<h1>Hello &lt;you&gt;</h1><p>Body</p>"),
            "{html}"
        );
        assert!(
            html.contains(
                "<p>Questions? Contact Sunny &amp; Co:<br>Care &lt;team&gt;<br>Phone: \
             <a href=\"tel:+15125550100\">(512) 555-0100</a><br>\
             <a href=\"https://help.example/\">https://help.example/</a></p>"
            ),
            "{html}"
        );
        assert!(!html.contains("<!>"));
    }

    #[test]
    fn a_neutral_page_names_no_app_and_no_contacts_fall_back_only_when_asked() {
        let html = page(
            &Brand::neutral(),
            Shell {
                title: "Page".to_owned(),
                testid: "t",
                hosted_styles: false,
                head: None,
                above: None,
                body: ().into_any(),
                contacts: true,
                after: None,
            },
        );
        assert!(
            html.contains("<title>Page</title>") && !html.contains("app-name"),
            "{html}"
        );
        assert!(!html.contains("brand-contacts") && !html.contains("portal.css"));
        let none = Contacts::default();
        assert!(support_contacts(&none, "Sunny", false).is_none());
        let said = crate::http::html::fragment(support_contacts(&none, "Sunny", true));
        assert_eq!(
            said,
            "For your account and bills, write to Sunny through the app or site where you \
             signed up."
        );
    }
}
