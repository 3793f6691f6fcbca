//! The portal's bar charts, drawn on the server as inline SVG (the portal ships no script).
//! The picture is for the eye; the same figures follow in a table, open to everyone and read
//! by screen readers in its place.

use app::format::thousands;
use leptos::prelude::*;
use rust_decimal::{prelude::ToPrimitive, Decimal};

/// One bar: the label under it and in the table, and its kWh.
pub struct Bar {
    pub label: String,
    pub kwh: Decimal,
}

const WIDTH: i64 = 600;
const HEIGHT: i64 = 160;
const LABELS: i64 = 20;
/// Room on each side for the first and last labels, which are wider than their bars.
const PAD: i64 = 24;

/// kWh to a whole number with separators: "1,035 kWh".
pub fn kwh(value: Decimal) -> String {
    format!("{} kWh", thousands(&value.round().to_string()))
}

/// The bar chart of `bars` under `caption`; every `label_every`-th label is written under
/// the bars (all of them when 1), all of them in the table.
pub fn bar_chart(
    caption: &str,
    testid: &'static str,
    bars: &[Bar],
    label_every: usize,
) -> impl IntoView {
    let count = i64::try_from(bars.len()).unwrap_or(1).max(1);
    let milli = |b: &Bar| (b.kwh * Decimal::from(1000)).to_i64().unwrap_or(0).max(0);
    let max = bars.iter().map(milli).max().unwrap_or(0).max(1);
    let slot = WIDTH / count;
    let gap = (slot / 5).max(1);
    let shapes = bars
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let x = i64::try_from(i).unwrap_or(0) * slot;
            let h = (milli(b) * HEIGHT / max).max(1);
            let label = (i % label_every.max(1) == 0).then(|| {
                let label = b.label.clone();
                view! {
                    <text x={(x + slot / 2).to_string()} y={(HEIGHT + LABELS - 4).to_string()}
                        text-anchor="middle">{label}</text>
                }
            });
            view! {
                <rect x={(x + gap / 2).to_string()} y={(HEIGHT - h).to_string()}
                    width={(slot - gap).to_string()} height={h.to_string()} rx="2"></rect>
                {label}
            }
        })
        .collect_view();
    let rows = bars
        .iter()
        .map(|b| {
            let label = b.label.clone();
            view! { <tr><th scope="row">{label}</th><td>{kwh(b.kwh)}</td></tr> }
        })
        .collect_view();
    let view_box = format!("-{PAD} 0 {} {}", WIDTH + 2 * PAD, HEIGHT + LABELS);
    let (caption, hidden_caption) = (caption.to_owned(), caption.to_owned());
    view! {
        <figure class="chart" data-testid=testid>
            <figcaption>{caption}</figcaption>
            <svg viewBox=view_box aria-hidden="true" focusable="false">{shapes}</svg>
            <details>
                <summary>"The figures"</summary>
                <table data-testid="chart-values">
                    <caption class="visually-hidden">{hidden_caption}</caption>
                    <tbody>{rows}</tbody>
                </table>
            </details>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar_chart(caption: &str, testid: &'static str, bars: &[Bar], every: usize) -> String {
        crate::http::html::fragment(super::bar_chart(caption, testid, bars, every))
    }

    fn bar(label: &str, kwh: i64) -> Bar {
        Bar {
            label: label.to_owned(),
            kwh: Decimal::from(kwh),
        }
    }

    #[test]
    fn the_tallest_bar_fills_the_height_and_the_table_has_every_value() {
        let svg = bar_chart(
            "Usage <by> month",
            "months",
            &[bar("Jan", 500), bar("Feb", 1000), bar("Mar", 0)],
            1,
        );
        assert!(svg.contains("height=\"160\""), "{svg}");
        assert!(svg.contains("height=\"80\""), "{svg}");
        // An empty month still shows as a sliver, so that it reads as zero and not as missing.
        assert!(svg.contains("height=\"1\""), "{svg}");
        assert!(svg.contains("<td>1,000 kWh</td>") && svg.contains("<td>0 kWh</td>"));
        assert!(svg.contains("Usage &lt;by&gt; month") && !svg.contains("<by>"));
    }

    #[test]
    fn labels_are_thinned_under_the_bars_but_not_in_the_table() {
        let bars: Vec<Bar> = (1..=30).map(|d| bar(&format!("D{d}"), d)).collect();
        let svg = bar_chart("Days", "days", &bars, 7);
        let under = svg.matches("<text").count();
        assert_eq!(under, 5, "{svg}");
        assert_eq!(svg.matches("<tr>").count(), 30);
    }

    #[test]
    fn no_bars_draw_nothing_and_do_not_fail() {
        let svg = bar_chart("Nothing", "none", &[], 1);
        assert!(!svg.contains("<rect"));
    }
}
