//! Mermaid diagrams (pi 1.6's `markdown.mermaid`): a closed ```` ```mermaid ```` block in a
//! user's message or a reply is drawn as the diagram in box-drawing characters
//! ([`mermaid_text`]), fitted to the terminal's width. A diagram rho cannot draw (a syntax or
//! type it does not know) or that is wider than the terminal stays the code block it was. While
//! such a block streams in it is held in the live area (see `stream.rs`) until it closes.

use std::sync::atomic::{AtomicBool, Ordering};

use unicode_width::UnicodeWidthStr;

static ON: AtomicBool = AtomicBool::new(true);

/// `markdown.mermaid`: `off` draws the code; `final` and `streaming` draw the diagram once its
/// block has closed (lines printed to the scrollback cannot change, so rho draws no half
/// diagram in either).
pub fn set_mode(mode: &str) {
    ON.store(mode != "off", Ordering::Relaxed);
}

/// Whether a fenced block in `lang` is drawn as a diagram.
pub fn draws(lang: &str) -> bool {
    ON.load(Ordering::Relaxed) && lang.split_whitespace().next().is_some_and(|l| l.eq_ignore_ascii_case("mermaid"))
}

/// The diagram's rows for `code`, at most `available` columns wide; `None` leaves the code.
pub fn diagram(code: &str, available: usize) -> Option<Vec<String>> {
    let art = mermaid_text::render_with_width(code, Some(available)).ok()?;
    let rows: Vec<String> = art.trim_end_matches('\n').lines().map(|l| l.trim_end().to_owned()).collect();
    (!rows.is_empty() && rows.iter().all(|r| r.width() <= available)).then_some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flowchart_is_drawn_and_what_cannot_be_drawn_is_not() {
        let rows = diagram("graph LR; A[Build] --> B[Deploy]", 80).unwrap();
        assert!(rows.iter().any(|r| r.contains("Build") && r.contains("Deploy") && r.contains('│')), "{rows:?}");
        assert_eq!(diagram("not a diagram", 80), None);
        assert_eq!(diagram("graph LR; A[A very long label indeed] --> B[Another very long label]", 12), None);
        assert!(draws("mermaid") && draws("Mermaid title") && !draws("rust"));
    }
}
