//! The one way this service writes an HTML page: Leptos' `view!`, rendered on the server to a
//! string. Every text and attribute value is escaped by the renderer, so a page never escapes
//! by hand. The dashboard, the API reference, the hosted pages, the portal, the flow-link pages
//! and the error pages all end here.

use leptos::prelude::*;

/// `view` (an `<html>` element) as a whole document.
pub fn document(view: impl RenderHtml) -> String {
    format!("<!DOCTYPE html>{}", fragment(view))
}

/// `view` as HTML, without the doctype.
pub fn fragment(view: impl RenderHtml) -> String {
    view.to_html()
        // The renderer's `<!>` text separators are for hydration, which these pages never do;
        // inside `<title>` they would show as text. Text is escaped, so only markers match.
        .replace("<!>", "")
}

/// A `<textarea>`'s text. The renderer writes what a textarea holds as it is (to HTML its content
/// is raw text, ended only by `</textarea>`), so a value such as `</textarea><script>` would
/// close the field and become markup. Escaped here once; the browser reads the entities back
/// into the field's value.
pub fn textarea_text(value: &str) -> String {
    app::format::html_escape(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_and_markers_dropped() {
        let name = "Tom & <Jerry>".to_owned();
        let href = "/a?b=1&c=\"2\"".to_owned();
        let html = fragment(view! { <p>"Hello " {name} "!"<a href=href>"x"</a></p> });
        assert_eq!(
            html,
            "<p>Hello Tom &amp; &lt;Jerry&gt;!<a href=\"/a?b=1&amp;c=&quot;2&quot;\">x</a></p>"
        );
    }

    #[test]
    fn a_textarea_cannot_be_closed_by_its_value() {
        let typed = "</textarea><script>alert(1)</script> & more";
        let html = fragment(view! { <textarea name="reason">{textarea_text(typed)}</textarea> });
        assert_eq!(
            html,
            "<textarea name=\"reason\">&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt; \
             &amp; more</textarea>"
        );
    }
}
