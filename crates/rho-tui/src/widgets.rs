//! What tools and extensions put on screen through the UI service without asking anything:
//! `setStatus` texts, keyed, shown in one footer line (sorted by key, as pi does), and
//! `setWidget` line blocks, keyed, drawn above the editor (or below it), each at most
//! [`MAX_WIDGET_LINES`] lines, or widget components ([`super::components`]). Texts and lines
//! keep the ANSI styles extensions give them. An empty or absent text or list removes the key.

use std::collections::BTreeMap;

use ratatui::text::{Line, Span};
use rho_rpc::WidgetPlacement;

use super::components::ansi_lines;
use super::style;

/// Lines one widget shows at most (pi's limit); the rest is cut with a note.
pub const MAX_WIDGET_LINES: usize = 10;

#[derive(Debug, Default)]
pub struct ExtensionWidgets {
    statuses: BTreeMap<String, String>,
    /// Widgets in the order they were first set.
    widgets: Vec<Widget>,
}

#[derive(Debug)]
struct Widget {
    key: String,
    placement: WidgetPlacement,
    lines: Vec<Line<'static>>,
    /// Lines (`setWidget(key, lines)`) are cut at [`MAX_WIDGET_LINES`]; a component draws what
    /// it renders.
    cut: bool,
}

impl ExtensionWidgets {
    /// `setStatus`: sets the key's text, or removes it when `text` is empty or absent.
    pub fn set_status(&mut self, key: String, text: Option<String>) {
        let text = text.map(|t| t.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|t| !t.is_empty());
        match text {
            Some(text) => {
                self.statuses.insert(key, text);
            }
            None => {
                self.statuses.remove(&key);
            }
        }
    }

    /// `setWidget`: sets the key's lines (a widget keeps its place when set again), or removes
    /// it when `lines` is absent.
    pub fn set_widget(&mut self, key: String, lines: Option<Vec<String>>, placement: Option<WidgetPlacement>) {
        match lines {
            Some(lines) => self.put(key, ansi_lines(&lines), placement.unwrap_or(WidgetPlacement::AboveEditor), true),
            None => self.widgets.retain(|w| w.key != key),
        }
    }

    /// A widget component's latest lines under its key.
    pub fn set_component_widget(&mut self, key: String, lines: Vec<Line<'static>>, placement: WidgetPlacement) {
        self.put(key, lines, placement, false);
    }

    fn put(&mut self, key: String, lines: Vec<Line<'static>>, placement: WidgetPlacement, cut: bool) {
        let widget = Widget { key, placement, lines, cut };
        match self.widgets.iter_mut().find(|w| w.key == widget.key) {
            Some(old) => *old = widget,
            None => self.widgets.push(widget),
        }
    }

    /// Everything extensions set goes (they were unloaded).
    pub fn clear(&mut self) {
        self.statuses.clear();
        self.widgets.clear();
    }

    /// The widgets placed at `placement`, one after the other.
    pub fn lines(&self, placement: WidgetPlacement) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for widget in self.widgets.iter().filter(|w| w.placement == placement) {
            let shown = if widget.cut { MAX_WIDGET_LINES } else { usize::MAX };
            out.extend(widget.lines.iter().take(shown).cloned());
            if widget.lines.len() > shown {
                out.push(Line::styled("… (widget truncated)", style::dim()));
            }
        }
        out
    }

    /// The footer's status line: every status by key (with the styles extensions gave them,
    /// dim otherwise), or `None` when there is none.
    pub fn status_line(&self) -> Option<Line<'static>> {
        if self.statuses.is_empty() {
            return None;
        }
        let mut spans = Vec::new();
        for (i, text) in self.statuses.values().enumerate() {
            if i > 0 {
                spans.push(Span::raw(" "));
            }
            for line in ansi_lines(std::slice::from_ref(text)) {
                spans.extend(line.spans);
            }
        }
        Some(Line::from(spans).style(style::dim()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    #[test]
    fn statuses_are_keyed_sorted_and_cleared_by_an_empty_text() {
        let mut w = ExtensionWidgets::default();
        assert!(w.status_line().is_none());
        w.set_status("b".into(), Some("second\nline".into()));
        w.set_status("a".into(), Some("first".into()));
        assert_eq!(text(&[w.status_line().unwrap()]), ["first second line"]);
        w.set_status("a".into(), Some(String::new()));
        w.set_status("b".into(), None);
        assert!(w.status_line().is_none());
    }

    #[test]
    fn widgets_are_keyed_placed_cut_and_removable() {
        let mut w = ExtensionWidgets::default();
        w.set_widget("one".into(), Some(vec!["a".into(), "b".into()]), None);
        w.set_widget("two".into(), Some(vec!["below".into()]), Some(WidgetPlacement::BelowEditor));
        w.set_widget("three".into(), Some((0..12).map(|i| i.to_string()).collect()), None);
        w.set_widget("one".into(), Some(vec!["A".into()]), None);
        let above = text(&w.lines(WidgetPlacement::AboveEditor));
        assert_eq!(above[..3], ["A", "0", "1"]);
        assert_eq!(above.len(), 1 + MAX_WIDGET_LINES + 1);
        assert_eq!(above.last().unwrap(), "… (widget truncated)");
        assert_eq!(text(&w.lines(WidgetPlacement::BelowEditor)), ["below"]);
        w.set_widget("three".into(), None, None);
        w.set_widget("two".into(), None, None);
        assert_eq!(text(&w.lines(WidgetPlacement::AboveEditor)), ["A"]);
        assert!(w.lines(WidgetPlacement::BelowEditor).is_empty());
    }
}
