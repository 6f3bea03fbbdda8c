//! What every HTML page shares: the document around the content, the one stylesheet
//! (assets/html/page.css), and the verdicts with their chips. The pages are written with
//! maud, which escapes everything it is given unless told otherwise (`PreEscaped`: only
//! the stylesheet, the vendored script and JSON made safe for a `<script>` element).

use bdpscope::diagnose::{Label, UNDETERMINED};
use maud::{html, Markup, PreEscaped, DOCTYPE};

/// The stylesheet of every page.
pub const STYLE: &str = include_str!("../../assets/html/page.css");

/// The verdicts in the spec's order, undetermined last.
pub fn verdicts() -> impl Iterator<Item = &'static str> {
    Label::ALL.iter().map(|l| l.as_str()).chain([UNDETERMINED])
}

/// The CSS class of a verdict's colour: `v-<verdict>` for the spec's words (one rule
/// each in the stylesheet), undetermined's for anything else.
pub fn verdict_class(v: &str) -> String {
    let known = verdicts().find(|w| *w == v).unwrap_or(UNDETERMINED);
    format!("v-{known}")
}

/// A verdict as a coloured chip.
pub fn chip(v: &str) -> Markup {
    html! { span class={ "chip " (verdict_class(v)) } { (v) } }
}

/// A whole page: `head` goes into the document's head after the stylesheet (scripts'
/// styles), `body` is the content.
pub fn document(title: &str, head: Markup, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="generator" content={ "bdpscope " (env!("CARGO_PKG_VERSION")) };
                title { (title) }
                style { (PreEscaped(STYLE)) }
                (head)
            }
            body { (body) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verdict_has_its_colour_in_the_stylesheet() {
        for v in verdicts() {
            assert!(STYLE.contains(&format!(".{}{{", verdict_class(v))), "{v}");
            assert!(STYLE.contains(&format!("--{v}:")), "{v}");
        }
        assert_eq!(verdict_class("something else"), "v-undetermined");
    }

    #[test]
    fn text_is_escaped() {
        let m = document("<a&b>", html! {}, html! { p { ("\"<script>'") } }).into_string();
        assert!(m.contains("<title>&lt;a&amp;b&gt;</title>"));
        assert!(m.contains("&quot;&lt;script&gt;'"), "{m}");
    }
}
