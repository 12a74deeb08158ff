//! The prompt editor: multi-line text with a cursor, the word and line editing keys, and the
//! history of sent prompts (Up on the first line, Down on the last). It knows nothing of
//! terminals: it edits text, and lays itself out in rows of a given width with the cursor's
//! place among them.

use unicode_width::UnicodeWidthChar;

/// The editor's text and cursor (a byte offset on a char boundary).
#[derive(Debug, Default)]
pub struct Editor {
    text: String,
    cursor: usize,
    history: Vec<String>,
    /// The history entry shown, and the draft it replaced.
    browsing: Option<(usize, String)>,
}

impl Editor {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
        self.browsing = None;
    }

    /// Empties the editor and returns what it held.
    pub fn take(&mut self) -> String {
        self.browsing = None;
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }

    /// Remembers a sent prompt for Up/Down (not twice in a row).
    pub fn remember(&mut self, text: &str) {
        if !text.trim().is_empty() && self.history.last().map(String::as_str) != Some(text) {
            self.history.push(text.to_owned());
        }
    }

    pub fn insert(&mut self, s: &str) {
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &s);
        self.cursor += s.len();
    }

    /// The word the cursor ends (back to the last whitespace) and where it starts.
    pub fn word_before_cursor(&self) -> (usize, &str) {
        let before = &self.text[..self.cursor];
        let start =
            before.rfind(char::is_whitespace).map_or(0, |i| i + before[i..].chars().next().map_or(1, char::len_utf8));
        (start, &before[start..])
    }

    /// Replaces the text from `start` to the cursor with `with`; the cursor goes after it.
    pub fn replace_before_cursor(&mut self, start: usize, with: &str) {
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

    pub fn backspace(&mut self) {
        if self.cursor > 0 {
            let start = self.prev_boundary(self.cursor);
            self.text.replace_range(start..self.cursor, "");
            self.cursor = start;
        }
    }

    pub fn delete(&mut self) {
        let end = self.next_boundary(self.cursor);
        self.text.replace_range(self.cursor..end, "");
    }

    pub fn left(&mut self) {
        self.cursor = self.prev_boundary(self.cursor);
    }

    pub fn right(&mut self) {
        self.cursor = self.next_boundary(self.cursor);
    }

    pub fn home(&mut self) {
        self.cursor = self.line_start();
    }

    pub fn end(&mut self) {
        self.cursor = self.line_end();
    }

    /// Ctrl+K: deletes to the end of the line (the line break itself at its end).
    pub fn kill_to_end(&mut self) {
        let end = self.line_end();
        let end = if end == self.cursor { self.next_boundary(end) } else { end };
        self.text.replace_range(self.cursor..end, "");
    }

    /// Ctrl+U: deletes to the start of the line.
    pub fn kill_to_start(&mut self) {
        let start = self.line_start();
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Ctrl+W / Alt+Backspace: deletes the word before the cursor (and the spaces after it).
    pub fn delete_word_back(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches([' ', '\t']);
        let start = trimmed.rfind(|c: char| c.is_whitespace()).map_or(0, |i| i + 1);
        let start = if start == self.cursor && self.cursor > 0 { self.prev_boundary(self.cursor) } else { start };
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Up: the line above, or on the first line the previous prompt of the history.
    pub fn up(&mut self) {
        if self.text[..self.cursor].contains('\n') {
            self.move_line(-1);
            return;
        }
        let index = match &self.browsing {
            Some((0, _)) => return,
            Some((i, _)) => i - 1,
            None if self.history.is_empty() => return,
            None => {
                self.browsing = Some((self.history.len(), self.text.clone()));
                self.history.len() - 1
            }
        };
        self.show_history(index);
    }

    /// Down: the line below, or on the last line the next prompt of the history (then the draft).
    pub fn down(&mut self) {
        if self.text[self.cursor..].contains('\n') {
            self.move_line(1);
            return;
        }
        let Some((index, draft)) = self.browsing.take() else { return };
        if index + 1 >= self.history.len() {
            self.text = draft;
            self.cursor = self.text.len();
            return;
        }
        self.browsing = Some((index, draft));
        self.show_history(index + 1);
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
mod tests {
    use super::*;

    fn typed(text: &str) -> Editor {
        let mut e = Editor::default();
        e.insert(text);
        e
    }

    #[test]
    fn word_and_line_keys_edit_around_the_cursor() {
        let mut e = typed("hello big world");
        e.delete_word_back();
        assert_eq!(e.text(), "hello big ");
        e.home();
        e.right();
        e.kill_to_end();
        assert_eq!(e.text(), "h");
        e.insert("ey there");
        e.kill_to_start();
        assert_eq!(e.text(), "");
    }

    #[test]
    fn up_and_down_move_between_lines_then_through_history() {
        let mut e = Editor::default();
        e.remember("first");
        e.remember("second");
        e.insert("draft");
        e.up();
        assert_eq!(e.text(), "second");
        e.up();
        assert_eq!(e.text(), "first");
        e.down();
        e.down();
        assert_eq!(e.text(), "draft");
        let mut e = typed("ab\ncd");
        e.up();
        e.insert("X");
        assert_eq!(e.text(), "abX\ncd");
    }

    #[test]
    fn the_word_before_the_cursor_is_replaced() {
        let mut e = typed("read @ma now");
        e.end();
        for _ in 0..4 {
            e.left();
        }
        assert_eq!(e.word_before_cursor(), (5, "@ma"));
        e.replace_before_cursor(5, "@src/mail.rs");
        e.insert("!");
        assert_eq!(e.text(), "read @src/mail.rs! now");
    }

    #[test]
    fn layout_wraps_and_places_the_cursor() {
        let e = typed("abcdef\nxy");
        let (rows, cursor) = e.layout(4);
        assert_eq!(rows, vec!["abcd", "ef", "xy"]);
        assert_eq!(cursor, (2, 2));
    }
}
