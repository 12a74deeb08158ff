//! The prompt editor: multi-line text with a cursor, the history of sent prompts (Up on the
//! first line, Down on the last) and an undo stack. It knows nothing of terminals: it edits text,
//! and lays itself out in rows of a given width with the cursor's place among them.
//!
//! Undo follows pi's editor: every edit saves the state before it, except that typed characters
//! of one word are one step (a space saves the state before itself, so undoing it removes the
//! space with the word typed after it); the states are kept as differences ([`undo`]). The word
//! and kill-ring keys are in [`kill`], the word boundaries in [`words`], attached images in
//! [`images`].

mod images;
mod kill;
mod undo;
mod words;

use unicode_width::UnicodeWidthChar;

use self::images::Attachment;
pub use self::images::pasted_image;
pub use self::words::Direction;

/// What the last edit was: typing continues a word's undo step, a kill joins the next kill's
/// entry of the kill ring, a yank may be cycled by yank-pop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum LastEdit {
    #[default]
    Other,
    TypedWord,
    Kill,
    Yank,
}

/// The editor's text and cursor (a byte offset on a char boundary).
#[derive(Debug, Default)]
pub struct Editor {
    text: String,
    cursor: usize,
    history: Vec<String>,
    /// The history entry shown, and the draft it replaced.
    browsing: Option<(usize, String)>,
    /// The states before each edit, the latest last.
    undo: undo::UndoStack,
    last: LastEdit,
    /// Deleted text, the latest last.
    kill_ring: Vec<String>,
    /// Ctrl+] (forward) or Ctrl+Alt+] (backward) waits for the character to jump to.
    jump: Option<words::Direction>,
    /// Images attached by pasting their path, shown as their marker.
    images: Vec<Attachment>,
}

impl Editor {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text (one undo step); the cursor goes to its end.
    pub fn set_text(&mut self, text: &str) {
        if self.text != text {
            self.save();
        }
        self.last = LastEdit::Other;
        self.text = text.to_owned();
        self.cursor = self.text.len();
        self.browsing = None;
    }

    /// Empties the editor and returns what it held; a new prompt starts with nothing to undo.
    pub fn take(&mut self) -> String {
        self.browsing = None;
        self.cursor = 0;
        self.undo.clear();
        self.last = LastEdit::Other;
        std::mem::take(&mut self.text)
    }

    /// Remembers a sent prompt for Up/Down (not twice in a row).
    pub fn remember(&mut self, text: &str) {
        if !text.trim().is_empty() && self.history.last().map(String::as_str) != Some(text) {
            self.history.push(text.to_owned());
        }
    }

    /// Saves the state before an edit.
    fn save(&mut self) {
        self.undo.save(&self.text, self.cursor);
    }

    /// Back to the state before the last edit.
    pub fn undo(&mut self) {
        self.browsing = None;
        self.last = LastEdit::Other;
        if let Some((text, cursor)) = self.undo.pop() {
            self.text = text;
            self.cursor = cursor;
        }
    }

    /// Inserts text as one undo step (a paste, a new line).
    pub fn insert(&mut self, s: &str) {
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        if s.is_empty() {
            return;
        }
        self.save();
        self.last = LastEdit::Other;
        self.browsing = None;
        self.text.insert_str(self.cursor, &s);
        self.cursor += s.len();
    }

    /// A typed character: the characters of one word are one undo step.
    pub fn type_char(&mut self, c: char) {
        if c.is_whitespace() || self.last != LastEdit::TypedWord {
            self.save();
        }
        self.last = LastEdit::TypedWord;
        self.browsing = None;
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// The word the cursor ends (back to the last whitespace) and where it starts.
    pub fn word_before_cursor(&self) -> (usize, &str) {
        let before = &self.text[..self.cursor];
        let start =
            before.rfind(char::is_whitespace).map_or(0, |i| i + before[i..].chars().next().map_or(1, char::len_utf8));
        (start, &before[start..])
    }

    /// Replaces the text from `start` to the cursor with `with` (one undo step); the cursor goes
    /// after it.
    pub fn replace_before_cursor(&mut self, start: usize, with: &str) {
        if &self.text[start..self.cursor] != with {
            self.save();
        }
        self.last = LastEdit::Other;
        self.text.replace_range(start..self.cursor, with);
        self.cursor = start + with.len();
        self.browsing = None;
    }

    fn prev_boundary(&self, at: usize) -> usize {
        self.text[..at].char_indices().next_back().map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self, at: usize) -> usize {
        self.text[at..].chars().next().map_or(at, |c| at + c.len_utf8())
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..].find('\n').map_or(self.text.len(), |i| self.cursor + i)
    }

    /// Deletes `start..end` as one undo step (nothing when it is empty); the cursor goes to
    /// `start`. Returns what was deleted.
    fn delete_range(&mut self, start: usize, end: usize) -> String {
        if start == end {
            return String::new();
        }
        self.save();
        self.browsing = None;
        let deleted = self.text[start..end].to_owned();
        self.text.replace_range(start..end, "");
        self.cursor = start;
        deleted
    }

    pub fn backspace(&mut self) {
        self.last = LastEdit::Other;
        self.delete_range(self.prev_boundary(self.cursor), self.cursor);
    }

    pub fn delete(&mut self) {
        self.last = LastEdit::Other;
        self.delete_range(self.cursor, self.next_boundary(self.cursor));
    }

    /// Moves the cursor (no edit: the next typed word is a new undo step).
    fn move_to(&mut self, at: usize) {
        self.last = LastEdit::Other;
        self.cursor = at;
    }

    pub fn left(&mut self) {
        self.move_to(self.prev_boundary(self.cursor));
    }

    pub fn right(&mut self) {
        self.move_to(self.next_boundary(self.cursor));
    }

    pub fn home(&mut self) {
        self.move_to(self.line_start());
    }

    pub fn end(&mut self) {
        self.move_to(self.line_end());
    }

    /// Up: the line above, or on the first line the previous prompt of the history (entering
    /// the history is one undo step).
    pub fn up(&mut self) {
        self.last = LastEdit::Other;
        if self.text[..self.cursor].contains('\n') {
            self.move_line(-1);
            return;
        }
        self.history_previous();
    }

    /// The previous prompt of the history, wherever the cursor is (pi's
    /// `tui.editor.historyPrevious`).
    pub fn history_previous(&mut self) {
        self.last = LastEdit::Other;
        let index = match &self.browsing {
            Some((0, _)) => return,
            Some((i, _)) => i - 1,
            None if self.history.is_empty() => return,
            None => {
                self.save();
                self.browsing = Some((self.history.len(), self.text.clone()));
                self.history.len() - 1
            }
        };
        self.show_history(index);
    }

    /// Down: the line below, or on the last line the next prompt of the history (then the draft).
    pub fn down(&mut self) {
        self.last = LastEdit::Other;
        if self.text[self.cursor..].contains('\n') {
            self.move_line(1);
            return;
        }
        self.history_next();
    }

    /// The next prompt of the history (then the draft), wherever the cursor is (pi's
    /// `tui.editor.historyNext`).
    pub fn history_next(&mut self) {
        self.last = LastEdit::Other;
        let Some((index, draft)) = self.browsing.take() else { return };
        if index + 1 >= self.history.len() {
            self.text = draft;
            self.cursor = self.text.len();
            return;
        }
        self.browsing = Some((index, draft));
        self.show_history(index + 1);
    }

    /// PageUp / PageDown: `lines` lines up (negative) or down, stopping at the first or last
    /// line (never into the history).
    pub fn move_lines(&mut self, lines: isize) {
        self.last = LastEdit::Other;
        for _ in 0..lines.unsigned_abs() {
            let more = if lines < 0 { &self.text[..self.cursor] } else { &self.text[self.cursor..] };
            if !more.contains('\n') {
                break;
            }
            self.move_line(lines.signum());
        }
    }

    fn show_history(&mut self, index: usize) {
        if let Some((i, _)) = &mut self.browsing {
            *i = index;
        }
        self.text = self.history[index].clone();
        self.cursor = self.text.len();
    }

    fn move_line(&mut self, by: isize) {
        let start = self.line_start();
        let column = self.text[start..self.cursor].chars().count();
        let target_start = if by < 0 {
            let prev_end = start - 1;
            self.text[..prev_end].rfind('\n').map_or(0, |i| i + 1)
        } else {
            self.line_end() + 1
        };
        let target_end = self.text[target_start..].find('\n').map_or(self.text.len(), |i| target_start + i);
        let line = &self.text[target_start..target_end];
        let offset = line.char_indices().nth(column).map_or(line.len(), |(i, _)| i);
        self.cursor = target_start + offset;
    }

    /// The text in rows of at most `width` columns, and the cursor's (column, row).
    pub fn layout(&self, width: u16) -> (Vec<String>, (u16, u16)) {
        let width = usize::from(width.max(2));
        let mut rows = vec![String::new()];
        let mut row_width = 0;
        let mut cursor = (0, 0);
        for (i, c) in self.text.char_indices().chain(std::iter::once((self.text.len(), '\0'))) {
            let w = if c == '\0' || c == '\n' { 0 } else { c.width().unwrap_or(0) };
            if row_width + w > width || (i == self.cursor && row_width >= width) {
                rows.push(String::new());
                row_width = 0;
            }
            if i == self.cursor {
                cursor = (row_width, rows.len() - 1);
            }
            match c {
                '\0' => {}
                '\n' => {
                    rows.push(String::new());
                    row_width = 0;
                }
                c => {
                    if let Some(row) = rows.last_mut() {
                        row.push(c);
                    }
                    row_width += w;
                }
            }
        }
        let cursor = (u16::try_from(cursor.0).unwrap_or(u16::MAX), u16::try_from(cursor.1).unwrap_or(u16::MAX));
        (rows, cursor)
    }
}

#[cfg(test)]
mod tests;
