//! Writing SVG text by hand: text elements, numbers, and XML escaping.

use std::fmt::Write;

/// Estimated width of `label` in pixels: 11 px sans-serif averages under 6.2 px a character.
pub(super) fn text_width(label: &str) -> f64 {
    label.chars().count() as f64 * 6.2
}

pub(super) fn text(svg: &mut String, x: f64, y: f64, anchor: &str, attributes: &str, content: &str) {
    let _ = writeln!(
        svg,
        "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" {attributes}>{}</text>",
        escape(content)
    );
}

/// `value` with at most `decimals` decimals and no trailing zeros ("1.3", not "1.300").
pub(super) fn number(value: f64, decimals: usize) -> String {
    let s = format!("{value:.decimals$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

pub(super) fn plural(count: usize) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

/// Text and attribute values as XML character data.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 allows no other control characters, even escaped.
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}
