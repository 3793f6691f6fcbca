//! The HTML rendition of a document written with `layout::Flow`: the same blocks as its PDF, as
//! a plain page with no script or style of its own. A flow shows it inside its own page where a
//! PDF cannot open (a host that sandboxes its frame blocks new tabs, and a sandboxed frame does
//! not render PDFs); opened on its own, it reads as a simple page.

use leptos::prelude::*;

use super::layout::{Block, Flow};

/// A document laid out once: its PDF, and its HTML from the same blocks.
pub struct Laid {
    pub(super) flow: Flow,
    pub(super) title: String,
}

impl Laid {
    /// The PDF, every page with its footer.
    #[must_use]
    pub fn pdf(self) -> Vec<u8> {
        self.flow.finish(&self.title)
    }

    /// The HTML page of the same text.
    #[must_use]
    pub fn html(&self) -> String {
        document(&self.title, self.flow.blocks())
    }
}

fn block(b: &Block) -> AnyView {
    match b {
        Block::Heading(text) => view! { <h2>{text.clone()}</h2> }.into_any(),
        Block::Paragraph(text) => view! { <p>{text.clone()}</p> }.into_any(),
        Block::Note(text) => view! { <p><small>{text.clone()}</small></p> }.into_any(),
        Block::Table(rows) => view! {
            <dl>
                {rows
                    .iter()
                    .map(|(k, v)| view! { <div><dt>{k.clone()}</dt><dd>{v.clone()}</dd></div> })
                    .collect_view()}
            </dl>
        }
        .into_any(),
    }
}

/// The page: `title` as its only first-level heading, then the blocks in order (a document's
/// first heading repeats its title in the PDF, and is left out here when it does).
pub fn document(title: &str, blocks: &[Block]) -> String {
    let skip = usize::from(matches!(blocks.first(), Some(Block::Heading(h)) if h == title));
    let body = blocks[skip..].iter().map(block).collect_view();
    let page = view! {
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <title>{title.to_owned()}</title>
            </head>
            <body>
                <article class="document-text">
                    <h1>{title.to_owned()}</h1>
                    {body}
                </article>
            </body>
        </html>
    };
    // The renderer separates text nodes with `<!>` comments for hydration, which a page that
    // is never hydrated does not need (and inside `<title>` they would read as text). Text is
    // escaped, so a literal `<!>` can only be such a marker.
    format!("<!doctype html>{}", page.to_html().replace("<!>", ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_html_says_what_the_pdf_says_escaped() {
        let mut flow = Flow::new("Sunny <Homes>", None, "Terms of Service", "TOS 2026.1");
        flow.heading("Terms of Service, version 2026.1");
        flow.paragraph("You & we agree.");
        flow.table(&[("Energy charge", "11.2\u{a2} per kWh")]);
        flow.note("Fine print <b>here</b>.");
        let laid = Laid {
            flow,
            title: "Terms of Service, version 2026.1".to_owned(),
        };
        let html = laid.html();
        assert!(
            html.starts_with("<!doctype html><html lang=\"en\">"),
            "{html}"
        );
        assert_eq!(html.matches("<h1>").count(), 1, "{html}");
        assert!(
            html.contains("<h1>Terms of Service, version 2026.1</h1>"),
            "{html}"
        );
        assert!(
            !html.contains("<h2>Terms of Service, version 2026.1</h2>"),
            "{html}"
        );
        assert!(html.contains("<p>You &amp; we agree.</p>"), "{html}");
        assert!(
            html.contains("<dt>Energy charge</dt><dd>11.2\u{a2} per kWh</dd>"),
            "{html}"
        );
        assert!(
            html.contains("Fine print &lt;b&gt;here&lt;/b&gt;."),
            "{html}"
        );
        assert!(
            !html.contains("<script") && !html.contains("<style"),
            "{html}"
        );
        let pdf = laid.pdf();
        assert!(super::super::pdf_text(&pdf).contains("You & we agree."));
    }
}
