//! What every HTML page shares: the document around the content, the one stylesheet
//! (assets/html/page.css), and the verdicts with their chips. The pages are written with
//! maud, which escapes everything it is given unless told otherwise (`PreEscaped`: only
//! the stylesheet, the vendored script and JSON made safe for a `<script>` element).

use bdpscope::summary::Verdict;
use maud::{html, Markup, PreEscaped, DOCTYPE};

/// The stylesheet of every page.
pub const STYLE: &str = include_str!("../../assets/html/page.css");

/// The CSS class of a verdict's colour: `v-<verdict>` (one rule each in the stylesheet).
pub fn verdict_class(v: Verdict) -> String {
    format!("v-{v}")
}

/// A verdict as a coloured chip.
pub fn chip(v: Verdict) -> Markup {
    html! { span class={ "chip " (verdict_class(v)) } { (v.as_str()) } }
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
        for v in Verdict::ALL {
            assert!(STYLE.contains(&format!(".{}{{", verdict_class(v))), "{v}");
            assert!(STYLE.contains(&format!("--{v}:")), "{v}");
        }
    }

    #[test]
    fn text_is_escaped() {
        let m = document("<a&b>", html! {}, html! { p { ("\"<script>'") } }).into_string();
        assert!(m.contains("<title>&lt;a&amp;b&gt;</title>"));
        assert!(m.contains("&quot;&lt;script&gt;'"), "{m}");
    }
}
