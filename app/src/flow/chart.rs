//! A bar chart drawn as inline SVG (daily usage of a bill, monthly usage of a year). The
//! picture is hidden from screen readers; the same values follow as a table they read. Integer
//! arithmetic only: float parsing and formatting would weigh on the bundle.

use leptos::prelude::*;

/// One bar: its label under the chart, its value in thousandths, and the value as people read
/// it (the table's cell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    pub label: String,
    pub milli: i64,
    pub text: String,
}

/// A decimal string such as `"12.345"` in thousandths (`12345`); anything else is 0. Digits
/// past the third decimal are dropped.
pub fn milli(decimal: &str) -> i64 {
    let (sign, unsigned) = match decimal.trim().strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, decimal.trim()),
    };
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let Ok(int) = int.parse::<i64>() else {
        return 0;
    };
    let mut frac_milli = 0;
    for (i, b) in frac
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(3)
        .enumerate()
    {
        if !b.is_ascii_digit() {
            return 0;
        }
        frac_milli += i64::from(b - b'0') * [100, 10, 1][i];
    }
    sign * (int * 1000 + frac_milli)
}

/// Thousandths as kWh to a whole number, half up: `12500` → "13 kWh".
pub fn kwh(milli: i64) -> String {
    format!(
        "{} kWh",
        crate::format::thousands(&((milli + 500) / 1000).to_string())
    )
}

const WIDTH: i64 = 600;
const HEIGHT: i64 = 160;
const LABELS: i64 = 18;

/// `label_every`: write every n-th label under the bars (all of them when 1).
#[component]
pub fn BarChart(
    caption: String,
    bars: Vec<Bar>,
    label_every: usize,
    #[prop(optional)] testid: &'static str,
) -> impl IntoView {
    let count = i64::try_from(bars.len()).unwrap_or(1).max(1);
    let max = bars.iter().map(|b| b.milli).max().unwrap_or(0).max(1);
    let slot = WIDTH / count;
    let gap = (slot / 5).max(1);
    let view_box = format!("0 0 {WIDTH} {}", HEIGHT + LABELS);
    let shapes = bars
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let x = i64::try_from(i).unwrap_or(0) * slot;
            let h = (b.milli.max(0) * HEIGHT / max).max(1);
            let label = (i % label_every.max(1) == 0).then(|| {
                view! {
                    <text x=(x + slot / 2).to_string() y=(HEIGHT + LABELS - 4).to_string() text-anchor="middle">
                        {b.label.clone()}
                    </text>
                }
            });
            view! {
                <rect
                    x=(x + gap / 2).to_string()
                    y=(HEIGHT - h).to_string()
                    width=(slot - gap).to_string()
                    height=h.to_string()
                    rx="2"
                />
                {label}
            }
        })
        .collect_view();
    let rows = bars
        .into_iter()
        .map(|b| view! { <tr><th scope="row">{b.label}</th><td>{b.text}</td></tr> })
        .collect_view();
    view! {
        <figure class="chart" data-testid=testid>
            <figcaption>{caption.clone()}</figcaption>
            <svg viewBox=view_box aria-hidden="true" focusable="false">
                {shapes}
            </svg>
            <table class="visually-hidden" data-testid="chart-values">
                <caption>{caption}</caption>
                <tbody>{rows}</tbody>
            </table>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_read_as_thousandths() {
        assert_eq!(milli("12.345"), 12345);
        assert_eq!(milli("12.3"), 12300);
        assert_eq!(milli("7"), 7000);
        assert_eq!(milli("0.0049"), 4);
        assert_eq!(milli("-1.5"), -1500);
        assert_eq!(milli("abc"), 0);
        assert_eq!(milli("1.2x"), 0);
    }

    #[test]
    fn kwh_rounds_half_up_with_separators() {
        assert_eq!(kwh(1_034_500), "1,035 kWh");
        assert_eq!(kwh(499), "0 kWh");
        assert_eq!(kwh(12_000), "12 kWh");
    }
}
