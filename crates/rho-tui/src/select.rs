//! A list to pick one item from, with a search line: the model selector (`/model`), the
//! session picker (`rho -r`, `/resume`), the tree and fork lists. Typing filters (every word
//! must appear), Up/Down move, Enter picks, Escape cancels. A toggling list (`/settings`,
//! `/scoped-models`) stays open: Enter or Space toggles the highlighted item, Ctrl+letter keys
//! and Alt+Up / Alt+Down (move the item) are handed to the caller; its owner updates the items
//! in place.

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
    /// A toggling list: Enter or Space on this item.
    Toggled(String),
    /// A toggling list: Ctrl+letter, with the highlighted item (if any).
    Shortcut(char, Option<String>),
    /// A toggling list: Alt+Up (-1) or Alt+Down (+1) on this item, to move it.
    Move(isize, String),
    Cancelled,
}

#[derive(Debug)]
pub struct Select {
    pub title: String,
    items: Vec<SelectItem>,
    query: String,
    selected: usize,
    toggling: bool,
    /// Ctrl+letters are shortcuts in a list that closes on picking too.
    shortcuts: bool,
    /// Letters that are shortcuts without Ctrl (not typed into the search).
    letters: &'static [char],
    /// Tab is a shortcut (`Shortcut('\t', …)`), e.g. the session list's scope.
    tab: bool,
    /// The dim line under the items.
    hint: Option<String>,
    /// What the highlighted item does, by its value (shown above the hint).
    describe: Option<fn(&str) -> Option<&'static str>>,
}

impl Select {
    pub fn new(title: impl Into<String>, items: Vec<SelectItem>, selected: usize) -> Self {
        Self {
            title: title.into(),
            items,
            query: String::new(),
            selected,
            toggling: false,
            shortcuts: false,
            letters: &[],
            tab: false,
            hint: None,
            describe: None,
        }
    }

    /// A list that stays open: Enter and Space toggle, Ctrl+letters are shortcuts.
    pub fn toggling(mut self) -> Self {
        self.toggling = true;
        self
    }

    /// Ctrl+letters report `Shortcut(letter, highlighted)`, an uppercase letter with Shift (the
    /// tree's filters).
    pub fn with_shortcuts(mut self) -> Self {
        self.shortcuts = true;
        self
    }

    /// `letters` report `Shortcut(letter, highlighted)` rather than search (the tree's Shift+L).
    pub fn with_letter_shortcuts(mut self, letters: &'static [char]) -> Self {
        self.letters = letters;
        self
    }

    /// Tab reports `Shortcut('\t', highlighted)` instead of being ignored.
    pub fn with_tab(mut self) -> Self {
        self.tab = true;
        self
    }

    pub fn title(&self) -> &str {
        &self.title
    }

    /// A new title and items (another view of the same list); the search stays.
    pub fn replace(&mut self, title: impl Into<String>, items: Vec<SelectItem>) {
        self.title = title.into();
        self.selected = 0;
        self.set_items(items);
    }

    /// The line under the items, in place of the count and the keys.
    /// Shows what the highlighted item does, by its value.
    pub fn described(mut self, describe: fn(&str) -> Option<&'static str>) -> Self {
        self.describe = Some(describe);
        self
    }

    pub fn set_hint(&mut self, hint: impl Into<String>) {
        self.hint = Some(hint.into());
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// New items (new values shown), keeping the search and the highlighted row.
    pub fn set_items(&mut self, items: Vec<SelectItem>) {
        self.items = items;
        self.selected = self.selected.min(self.filtered().len().saturating_sub(1));
    }

    /// Highlights the shown item whose value is `value` (if shown).
    pub fn highlight(&mut self, value: &str) {
        if let Some(at) = self.filtered().iter().position(|item| item.value == value) {
            self.selected = at;
        }
    }

    /// Every item, filtered or not.
    pub fn items(&self) -> &[SelectItem] {
        &self.items
    }

    /// The highlighted item's value.
    pub fn highlighted(&self) -> Option<String> {
        self.filtered().get(self.selected).map(|item| item.value.clone())
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
            KeyCode::Enter | KeyCode::Char(' ') if self.toggling => {
                return match self.highlighted() {
                    Some(value) => SelectOutcome::Toggled(value),
                    None => SelectOutcome::Pending,
                };
            }
            KeyCode::Tab if self.tab => return SelectOutcome::Shortcut('\t', self.highlighted()),
            KeyCode::Up | KeyCode::Down if self.toggling && key.modifiers.contains(KeyModifiers::ALT) => {
                let delta = if key.code == KeyCode::Up { -1 } else { 1 };
                return match self.highlighted() {
                    Some(value) => SelectOutcome::Move(delta, value),
                    None => SelectOutcome::Pending,
                };
            }
            KeyCode::Char(c) if (self.toggling || self.shortcuts) && key.modifiers.contains(KeyModifiers::CONTROL) => {
                // A list that asked for shortcuts tells Shift+Ctrl+O (`O`) from Ctrl+O; a
                // toggling list reads both as one.
                let shifted = self.shortcuts && (key.modifiers.contains(KeyModifiers::SHIFT) || c.is_ascii_uppercase());
                let c = if shifted { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() };
                return SelectOutcome::Shortcut(c, self.highlighted());
            }
            KeyCode::Char(c) if self.letters.contains(&c) && !key.modifiers.contains(KeyModifiers::CONTROL) => {
                return SelectOutcome::Shortcut(c, self.highlighted());
            }
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
        let description =
            self.describe.zip(items.get(self.selected)).and_then(|(describe, item)| describe(&item.value));
        if let Some(description) = description {
            lines.push(Line::default());
            lines.push(Line::styled(format!("  {description}"), style::dim()));
        }
        let hint = match &self.hint {
            Some(hint) => format!("  {hint}"),
            None => format!("  {}/{} · Enter pick · Esc cancel", items.len(), self.items.len()),
        };
        lines.push(Line::styled(hint, style::dim()));
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

    #[test]
    fn a_toggling_list_stays_on_its_row_when_its_items_change() {
        let mut select = Select::new("Settings", vec![item("one"), item("two")], 0).toggling();
        select.key(KeyEvent::from(KeyCode::Down));
        assert_eq!(select.key(KeyEvent::from(KeyCode::Char(' '))), SelectOutcome::Toggled("two".into()));
        select.set_items(vec![item("one"), item("two!")]);
        assert_eq!(select.key(KeyEvent::from(KeyCode::Enter)), SelectOutcome::Toggled("two!".into()));
        let ctrl_s = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
        assert_eq!(select.key(ctrl_s), SelectOutcome::Shortcut('s', Some("two!".into())));
        let alt_up = KeyEvent::new(KeyCode::Up, KeyModifiers::ALT);
        assert_eq!(select.key(alt_up), SelectOutcome::Move(-1, "two!".into()));
        select.set_items(vec![item("two!"), item("one")]);
        select.highlight("two!");
        assert_eq!(select.highlighted().as_deref(), Some("two!"));
    }
}
