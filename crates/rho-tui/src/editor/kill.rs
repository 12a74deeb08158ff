//! The editor's word and kill keys, as pi's editor has them: moving by words, deleting a word
//! or to a line's end or start into the kill ring (kills in a row join one entry), Ctrl+Y
//! yanking the latest entry back and Alt+Y, right after, cycling it through the older ones, and
//! Ctrl+] jumping to the next typed character.

use super::words::{self, Direction};
use super::{Editor, LastEdit};

impl Editor {
    pub fn word_left(&mut self) {
        self.move_to(words::left(&self.text, self.cursor));
    }

    pub fn word_right(&mut self) {
        self.move_to(words::right(&self.text, self.cursor));
    }

    /// Deletes `start..end` into the kill ring; `backward` kills are put before an entry they
    /// join, forward ones after it.
    fn kill(&mut self, start: usize, end: usize, backward: bool) {
        let joins = self.last == LastEdit::Kill;
        let killed = self.delete_range(start, end);
        if killed.is_empty() {
            return;
        }
        self.last = LastEdit::Kill;
        match self.kill_ring.last_mut() {
            Some(entry) if joins && backward => entry.insert_str(0, &killed),
            Some(entry) if joins => entry.push_str(&killed),
            _ => self.kill_ring.push(killed),
        }
    }

    /// Ctrl+W / Alt+Backspace: the word before the cursor (at a line start, the line break).
    pub fn delete_word_back(&mut self) {
        self.kill(words::left(&self.text, self.cursor), self.cursor, true);
    }

    /// Alt+D / Alt+Delete: the word after the cursor (at a line end, the line break).
    pub fn delete_word_forward(&mut self) {
        self.kill(self.cursor, words::right(&self.text, self.cursor), false);
    }

    /// Ctrl+K: to the end of the line (the line break itself at its end).
    pub fn kill_to_end(&mut self) {
        let end = self.line_end();
        let end = if end == self.cursor { self.next_boundary(end) } else { end };
        self.kill(self.cursor, end, false);
    }

    /// Ctrl+U: to the start of the line (the line break before it at its start).
    pub fn kill_to_start(&mut self) {
        let start = self.line_start();
        let start = if start == self.cursor { self.prev_boundary(start) } else { start };
        self.kill(start, self.cursor, true);
    }

    /// Ctrl+Y: the latest killed text at the cursor.
    pub fn yank(&mut self) {
        let Some(text) = self.kill_ring.last().cloned() else { return };
        self.insert(&text);
        self.last = LastEdit::Yank;
    }

    /// Alt+Y right after a yank: the yanked text becomes the entry before it (the ring turns).
    pub fn yank_pop(&mut self) {
        if self.last != LastEdit::Yank || self.kill_ring.len() < 2 {
            return;
        }
        let Some(yanked) = self.kill_ring.pop() else { return };
        let start = self.cursor - yanked.len();
        if self.text.get(start..self.cursor) != Some(yanked.as_str()) {
            self.kill_ring.push(yanked);
            return;
        }
        self.kill_ring.insert(0, yanked);
        let text = self.kill_ring.last().cloned().unwrap_or_default();
        self.save();
        self.text.replace_range(start..self.cursor, &text);
        self.cursor = start + text.len();
    }

    /// Ctrl+] (forward) or Ctrl+Alt+] (backward): the next typed character is jumped to.
    pub fn start_jump(&mut self, direction: Direction) {
        self.jump = Some(direction);
    }

    /// Ends a pending jump: to `target` when a character was typed (the cursor stays when it is
    /// not found); whether a jump was pending.
    pub fn end_jump(&mut self, target: Option<char>) -> bool {
        let Some(direction) = self.jump.take() else { return false };
        if let Some(at) = target.and_then(|c| words::find(&self.text, self.cursor, c, direction)) {
            self.move_to(at);
        }
        true
    }
}
