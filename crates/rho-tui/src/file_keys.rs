//! The editor's file keys: the `@` list (the working directory's files and folders matching
//! what follows the `@`; Up/Down choose, Tab or Enter put `@path` in place of `@query` — a
//! folder without the space after it, so its own entries are listed next — Escape closes it) and
//! Tab completing a path word. An `@path` stays as typed in the prompt, as pi's editor leaves it:
//! the model reads the file with its tools.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, AppEvent, FileList};
use super::{mention, path_complete};

/// Files the `@` list shows at most.
pub const MAX_MENTIONS: usize = 8;

impl App {
    /// What follows the `@` of the word before the cursor.
    fn mention_query(&self) -> Option<&str> {
        self.editor.word_before_cursor().1.strip_prefix('@')
    }

    /// The files the `@` list shows, best first (none while it is closed or not listed yet).
    pub fn mentions(&self) -> Vec<String> {
        let (false, Some(query), FileList::Listed(files)) = (self.mention_closed, self.mention_query(), &self.files)
        else {
            return Vec::new();
        };
        mention::rank(files, query, MAX_MENTIONS).into_iter().map(str::to_owned).collect()
    }

    /// Whether the files are being listed for an `@` typed.
    pub fn listing_files(&self) -> bool {
        matches!(self.files, FileList::Listing) && !self.mention_closed && self.mention_query().is_some()
    }

    /// The editor's text changed: the `@` list opens again at its top, and the files are listed
    /// (off this thread) on the first `@`.
    pub fn edited(&mut self) {
        self.completion = 0;
        self.mention = 0;
        self.mention_closed = false;
        if self.mention_query().is_some() && matches!(self.files, FileList::NotListed) {
            self.files = FileList::Listing;
            let cwd = self.session.cwd().to_path_buf();
            let tx = self.tx.clone();
            std::thread::spawn(move || {
                let _ = tx.send(AppEvent::Files(mention::list_files(&cwd)));
            });
        }
    }

    /// The keys of the open `@` list; whether the key was one of them.
    pub fn mention_key(&mut self, key: KeyEvent) -> bool {
        let mentions = self.mentions();
        if mentions.is_empty() || key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) {
            return false;
        }
        match key.code {
            KeyCode::Up => self.mention = self.mention.checked_sub(1).unwrap_or(mentions.len() - 1),
            KeyCode::Down => self.mention = (self.mention + 1) % mentions.len(),
            KeyCode::Enter if key.modifiers.contains(KeyModifiers::SHIFT) => return false,
            KeyCode::Tab | KeyCode::Enter => {
                let path = &mentions[self.mention.min(mentions.len() - 1)];
                let (start, _) = self.editor.word_before_cursor();
                let space = if path.ends_with('/') { "" } else { " " };
                self.editor.replace_before_cursor(start, &format!("@{path}{space}"));
                self.mention = 0;
            }
            KeyCode::Esc => self.mention_closed = true,
            _ => return false,
        }
        true
    }

    /// Tab after a path word: completed against the file system, the choices listed when
    /// several match.
    pub fn complete_path(&mut self) {
        let (start, word) = self.editor.word_before_cursor();
        if !path_complete::looks_like_path(word) {
            return;
        }
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let Some(done) = path_complete::complete(word, self.session.cwd(), home.as_deref()) else { return };
        self.editor.replace_before_cursor(start, &done.word);
        self.path_choices = done.choices;
    }
}
