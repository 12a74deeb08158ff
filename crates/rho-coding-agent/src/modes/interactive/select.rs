//! A list to pick one item from, with a search line: the model selector (`/model`) and the
//! session picker (`rho -r`, `/resume`). Typing filters (every word must appear), Up/Down move,
//! Enter picks, Escape cancels.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};

use super::style;

/// Rows of items shown at once.
pub const VISIBLE_ITEMS: usize = 10;

#[derive(Debug, Clone)]
pub struct SelectItem {
    pub label: String,
    pub detail: String,
    /// What picking the item returns.
    pub value: String,
}

/// What a key did to the list.
#[derive(Debug, PartialEq, Eq)]
pub enum SelectOutcome {
    Pending,
    Chosen(String),
    Cancelled,
}

#[derive(Debug)]
pub struct Select {
    pub title: String,
    items: Vec<SelectItem>,
    query: String,
    selected: usize,
}

impl Select {
    pub fn new(title: impl Into<String>, items: Vec<SelectItem>, selected: usize) -> Self {
        Self { title: title.into(), items, query: String::new(), selected }
    }

    fn filtered(&self) -> Vec<&SelectItem> {
        let words: Vec<String> = self.query.to_lowercase().split_whitespace().map(str::to_owned).collect();
        self.items
            .iter()
            .filter(|item| {
                let haystack = format!("{} {}", item.label, item.detail).to_lowercase();
                words.iter().all(|w| haystack.contains(w.as_str()))
            })
            .collect()
    }

    pub fn key(&mut self, key: KeyEvent) -> SelectOutcome {
        let count = self.filtered().len();
        match key.code {
            KeyCode::Esc => return SelectOutcome::Cancelled,
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return SelectOutcome::Cancelled,
            KeyCode::Enter => {
                return match self.filtered().get(self.selected) {
                    Some(item) => SelectOutcome::Chosen(item.value.clone()),
                    None => SelectOutcome::Pending,
                };
            }
            KeyCode::Up => self.selected = if self.selected == 0 { count.saturating_sub(1) } else { self.selected - 1 },
            KeyCode::Down => self.selected = if self.selected + 1 >= count { 0 } else { self.selected + 1 },
            KeyCode::Backspace => {
                self.query.pop();
                self.selected = 0;
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.query.push(c);
                self.selected = 0;
            }
            _ => {}
        }
        SelectOutcome::Pending
    }

    /// The title, the search line and the visible items (the selected one marked).
    pub fn lines(&self) -> Vec<Line<'static>> {
        let items = self.filtered();
        let mut lines = vec![
            Line::styled(self.title.clone(), style::bold()),
            Line::from(vec![Span::styled("Search: ", style::dim()), Span::raw(self.query.clone())]),
        ];
        let start = self.selected.saturating_sub(VISIBLE_ITEMS - 1);
        for (i, item) in items.iter().enumerate().skip(start).take(VISIBLE_ITEMS) {
            let (marker, label_style) =
                if i == self.selected { ("→ ", style::selected()) } else { ("  ", ratatui::style::Style::new()) };
            lines.push(Line::from(vec![
                Span::styled(marker, style::selected()),
                Span::styled(item.label.clone(), label_style),
                Span::styled(format!("  {}", item.detail), style::dim()),
            ]));
        }
        if items.is_empty() {
            lines.push(Line::styled("  (no match)", style::dim()));
        }
        lines.push(Line::styled(
            format!("  {}/{} · Enter pick · Esc cancel", items.len(), self.items.len()),
            style::dim(),
        ));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(label: &str) -> SelectItem {
        SelectItem { label: label.into(), detail: String::new(), value: label.into() }
    }

    #[test]
    fn typing_filters_and_enter_picks() {
        let mut select = Select::new("Models", vec![item("alpha one"), item("beta two"), item("alpha three")], 0);
        for c in "alpha th".chars() {
            select.key(KeyEvent::from(KeyCode::Char(c)));
        }
        assert_eq!(select.key(KeyEvent::from(KeyCode::Enter)), SelectOutcome::Chosen("alpha three".into()));
        assert_eq!(select.key(KeyEvent::from(KeyCode::Esc)), SelectOutcome::Cancelled);
    }
}
