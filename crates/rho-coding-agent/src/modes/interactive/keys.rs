//! What each key does: the editor's keys, sending (Enter; while working Enter steers and
//! Alt+Enter queues a follow-up), Escape (abort, the queued messages back into the editor;
//! idle, twice on an empty editor: the session tree), Ctrl+C (clear, twice quit), Ctrl+D, Ctrl+L,
//! Ctrl+O, Ctrl+P (next model), Shift+Tab (next thinking level), Tab and Up/Down over the
//! command completions (Tab completes a path otherwise), and the keys of an open list or of the
//! `@` file list.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::{App, Picking};
use super::select::SelectOutcome;
use super::{blocks, commands};

/// Pastes longer than this many lines are folded into a marker.
const PASTE_FOLD_LINES: usize = 10;

/// Two Ctrl+C within this quit.
const DOUBLE_CTRL_C: Duration = Duration::from_millis(1500);

/// Two Escapes within this, on an empty editor while idle, open the session tree.
const DOUBLE_ESCAPE: Duration = Duration::from_millis(1000);

impl App {
    pub fn on_input(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.on_key(key),
            Event::Paste(text) if self.select.is_none() => self.paste(&text),
            _ => {}
        }
    }

    fn on_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        if !(ctrl && key.code == KeyCode::Char('c')) {
            self.hint = None;
        }
        if let Some((picking, select)) = &mut self.select {
            let picking = *picking;
            match select.key(key) {
                SelectOutcome::Pending => {}
                SelectOutcome::Cancelled => {
                    self.select = None;
                    if picking == Picking::Dialog {
                        self.answer_dialog(None);
                    }
                }
                SelectOutcome::Chosen(value) => {
                    self.select = None;
                    self.picked(picking, &value);
                }
            }
            return;
        }
        self.path_choices.clear();
        if self.mention_key(key) {
            return;
        }
        let completions = self.completions();
        match key.code {
            KeyCode::Enter if key.modifiers.contains(KeyModifiers::SHIFT) => self.editor.insert("\n"),
            KeyCode::Enter if alt => self.submit(true),
            KeyCode::Enter => {
                if let Some(candidate) = completions.get(self.completion) {
                    self.editor.set_text(&format!("/{}", candidate.name));
                }
                self.submit(false);
            }
            KeyCode::Char('j') if ctrl => self.editor.insert("\n"),
            KeyCode::Char('c') if ctrl => self.ctrl_c(),
            KeyCode::Char('d') if ctrl => {
                if self.editor.is_empty() {
                    self.quit = true;
                } else {
                    self.editor.delete();
                }
            }
            KeyCode::Char('a') if ctrl => self.editor.home(),
            KeyCode::Char('e') if ctrl => self.editor.end(),
            KeyCode::Char('k') if ctrl => self.editor.kill_to_end(),
            KeyCode::Char('u') if ctrl => self.editor.kill_to_start(),
            KeyCode::Char('w') if ctrl => self.editor.delete_word_back(),
            KeyCode::Char('l') if ctrl => self.open_model_selector(),
            KeyCode::Char('o') if ctrl => self.expand_last_tool(),
            KeyCode::Char('p') if ctrl => self.cycle_model(),
            KeyCode::Char('z') if ctrl => self.suspend = true,
            KeyCode::Char('t') if ctrl => self.toggle_thinking(),
            KeyCode::BackTab => self.cycle_thinking(),
            KeyCode::Backspace if alt || ctrl => self.editor.delete_word_back(),
            KeyCode::Char(c) if !ctrl => {
                self.editor.insert(c.encode_utf8(&mut [0; 4]));
                self.edited();
            }
            KeyCode::Tab => {
                if let Some(candidate) = completions.get(self.completion) {
                    self.editor.set_text(&format!("/{} ", candidate.name));
                    self.completion = 0;
                } else {
                    self.complete_path();
                }
            }
            KeyCode::Esc if self.dialog.is_some() => self.answer_dialog(None),
            KeyCode::Esc if self.shell_running => self.session.abort_bash(),
            KeyCode::Esc => {
                if self.is_working() {
                    self.restore_queued();
                    let session = self.session.clone();
                    tokio::spawn(async move { session.abort().await });
                } else {
                    self.completion = 0;
                    self.escape_on_idle();
                }
            }
            KeyCode::Backspace => {
                self.editor.backspace();
                self.edited();
            }
            KeyCode::Delete => self.editor.delete(),
            KeyCode::Left => self.editor.left(),
            KeyCode::Right => self.editor.right(),
            KeyCode::Home => self.editor.home(),
            KeyCode::End => self.editor.end(),
            KeyCode::Up if !completions.is_empty() => {
                self.completion = self.completion.checked_sub(1).unwrap_or(completions.len() - 1);
            }
            KeyCode::Down if !completions.is_empty() => self.completion = (self.completion + 1) % completions.len(),
            KeyCode::Up => self.editor.up(),
            KeyCode::Down => self.editor.down(),
            _ => {}
        }
    }

    /// A paste of more than [`PASTE_FOLD_LINES`] lines goes into the editor as one marker.
    fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let lines = text.lines().count();
        if lines <= PASTE_FOLD_LINES {
            self.editor.insert(&text);
            return;
        }
        let marker = format!("[paste #{} +{lines} lines]", self.pastes.len() + 1);
        self.editor.insert(&marker);
        self.pastes.push((marker, text));
    }

    /// Command names completing the editor's text.
    pub fn completions(&self) -> Vec<commands::Candidate> {
        commands::complete(self.editor.text(), &self.session)
    }

    fn ctrl_c(&mut self) {
        if !self.editor.is_empty() {
            // Clearing does not arm quitting: a quick second press only clears.
            self.editor.take();
            self.ctrl_c_at = None;
            return;
        }
        if self.ctrl_c_at.is_some_and(|at| at.elapsed() < DOUBLE_CTRL_C) {
            self.quit = true;
            return;
        }
        self.ctrl_c_at = Some(Instant::now());
        self.hint = Some("Press Ctrl+C again to quit".to_owned());
    }

    /// Escape while idle: a second one soon after, on an empty editor, opens `/tree`.
    fn escape_on_idle(&mut self) {
        if !self.editor.is_empty() {
            self.escape_at = None;
        } else if self.escape_at.take().is_some_and(|at| at.elapsed() < DOUBLE_ESCAPE) {
            self.open_tree_selector();
        } else {
            self.escape_at = Some(Instant::now());
            self.hint = Some("Press Escape again for the session tree".to_owned());
        }
    }

    /// Escape while working: the queued messages come back into the editor instead of being
    /// sent after the abort.
    fn restore_queued(&mut self) {
        let queued: Vec<String> = self
            .session
            .agent()
            .clear_queues()
            .iter()
            .filter_map(|m| match m {
                rho_agent::AgentMessage::User(u) => Some(u.text()),
                _ => None,
            })
            .collect();
        self.steering.clear();
        self.follow_up.clear();
        if queued.is_empty() {
            return;
        }
        let mut text = queued.join("\n\n");
        if !self.editor.is_empty() {
            text.push_str("\n\n");
            text.push_str(self.editor.text());
        }
        self.editor.set_text(&text);
    }

    /// Shift+Tab: the next thinking level the model supports.
    fn cycle_thinking(&mut self) {
        let line = match self.session.cycle_thinking_level() {
            Some(level) => blocks::notice(&format!("Thinking: {}", level.as_str())),
            None => blocks::notice("The model does not think"),
        };
        self.push([line]);
    }

    /// Ctrl+P: the next model of --models (or of the available ones).
    fn cycle_model(&mut self) {
        let line = match self.session.cycle_model() {
            Ok(Some(cycled)) => blocks::notice(&format!("Model: {}/{}", cycled.model.provider, cycled.model.id)),
            Ok(None) => blocks::notice("No other model to switch to"),
            Err(e) => blocks::error(&format!("Error: {e}")),
        };
        self.push([line]);
    }

    fn picked(&mut self, picking: Picking, value: &str) {
        match picking {
            Picking::Model => self.set_model(value),
            Picking::Session => self.resume(value),
            Picking::Fork => self.fork(value),
            Picking::Tree => self.navigate_tree(value),
            Picking::Dialog => self.answer_dialog(Some(value.to_owned())),
        }
    }
}
