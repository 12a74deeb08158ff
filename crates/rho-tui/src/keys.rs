//! What each key does. A key is looked up in the key table ([`keybindings`]): the first of its
//! actions that applies runs (Ctrl+D quits on an empty editor, else deletes forward). Sending
//! (Enter; while working Enter steers and Alt+Enter queues a follow-up), Escape (abort, the
//! queued messages back into the editor; idle, twice on an empty editor: the session tree),
//! Alt+Up (the queued messages back into the editor), Ctrl+C (clear, twice quit), the editor's
//! keys, Tab and Up/Down over the command completions (Tab completes a path otherwise), and the
//! keys of an open list or of the `@` file list. An extension's open component takes every key
//! an open list does not. Pastes fold when long, and a pasted image path attaches the image.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::app::App;
use super::editor::pasted_image;
use super::keybindings::{self, Action};
use super::select::SelectOutcome;
use super::{blocks, commands, components};

/// Pastes longer than this many lines are folded into a marker.
const PASTE_FOLD_LINES: usize = 10;

/// Pastes longer than this many characters are folded into a marker.
const PASTE_FOLD_CHARS: usize = 1000;

/// Two Ctrl+C within this quit.
const DOUBLE_CTRL_C: Duration = Duration::from_millis(1500);

/// Two Escapes within this, on an empty editor while idle, open the session tree.
const DOUBLE_ESCAPE: Duration = Duration::from_millis(1000);

impl App {
    pub fn on_input(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.on_key(key),
            Event::Paste(text) if self.select.is_none() => {
                match self.components.focused().or(self.extension_editor()) {
                    Some((id, _)) => self.session.extension_component_input(id, format!("\x1b[200~{text}\x1b[201~")),
                    None => self.paste(&text),
                }
            }
            Event::Resize(columns, rows) => {
                self.session.extension_terminal_resized(columns, rows);
                super::markdown::set_width(columns);
                // Every line already written was wrapped at the old width.
                self.redraw_history();
            }
            _ => {}
        }
    }

    fn on_key(&mut self, key: KeyEvent) {
        let bindings = keybindings::current();
        if !bindings.is(key, Action::Clear) {
            self.hint = None;
        }
        if let Some((picking, select)) = &mut self.select {
            let picking = *picking;
            let before = select.highlighted();
            match select.key(key) {
                SelectOutcome::Pending => {
                    if let Some(now) = select.highlighted().filter(|now| Some(now) != before.as_ref()) {
                        self.list_highlighted(picking, &now);
                    }
                }
                SelectOutcome::Cancelled => {
                    if let Some((_, list)) = self.select.take() {
                        self.list_closed(picking, &list);
                    }
                }
                SelectOutcome::Chosen(value) => {
                    self.select = None;
                    self.picked(picking, &value);
                }
                SelectOutcome::Toggled(value) => self.toggled(picking, &value),
                SelectOutcome::Shortcut(key, value) => self.list_shortcut(picking, key, value.as_deref()),
                SelectOutcome::Move(delta, value) => self.list_item_moved(picking, delta, &value),
            }
            return;
        }
        // An extension's component has every other key.
        if let Some((id, _)) = self.components.focused() {
            if let Some(data) = components::key_bytes(key) {
                self.session.extension_component_input(id, data);
            }
            return;
        }
        // An extension's editor has the keys rho's would (its shortcuts first).
        if let Some((id, _)) = self.extension_editor() {
            let id = id.to_owned();
            if !self.extension_shortcut(key, &bindings)
                && let Some(data) = components::key_bytes(key)
            {
                self.session.extension_component_input(&id, data);
            }
            return;
        }
        self.path_choices.clear();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        // A pending Ctrl+] takes the next character; any other key cancels it and acts.
        let typed = match key.code {
            KeyCode::Char(c) if !ctrl && !alt => Some(c),
            _ => None,
        };
        if self.editor.end_jump(typed) && typed.is_some() {
            return;
        }
        if self.mention_key(key) {
            return;
        }
        if self.extension_shortcut(key, &bindings) {
            return;
        }
        for action in bindings.actions(key) {
            if self.run(action) {
                return;
            }
        }
        match key.code {
            // A line feed is a new line whatever the table says, as in pi's editor.
            KeyCode::Char('j') if ctrl && !alt => self.editor.insert("\n"),
            KeyCode::Char(c) if !ctrl => {
                self.editor.type_char(c);
                self.edited();
            }
            KeyCode::Backspace if ctrl => self.edit(super::editor::Editor::delete_word_back),
            KeyCode::Backspace if key.modifiers.contains(KeyModifiers::SHIFT) => {
                self.edit(super::editor::Editor::backspace);
            }
            KeyCode::Delete if key.modifiers.contains(KeyModifiers::SHIFT) => {
                self.edit(super::editor::Editor::delete);
            }
            _ => {}
        }
    }

    /// A key an extension registered (`pi.registerShortcut`) runs its handler; as in pi, the
    /// keys of the editor's and the app's essential actions cannot be taken.
    fn extension_shortcut(&mut self, key: KeyEvent, bindings: &keybindings::Keybindings) -> bool {
        const RESERVED: &[Action] = &[
            Action::Interrupt,
            Action::Clear,
            Action::Exit,
            Action::Suspend,
            Action::ThinkingCycle,
            Action::ModelCycleForward,
            Action::ModelCycleBackward,
            Action::ModelSelect,
            Action::ToolsExpand,
            Action::ThinkingToggle,
            Action::FollowUp,
            Action::Submit,
            Action::DeleteToLineEnd,
        ];
        let pressed = keybindings::Key::from_event(key);
        if RESERVED.iter().any(|action| bindings.is(key, *action)) {
            return false;
        }
        let Some(shortcut) = self
            .session
            .extension_shortcuts()
            .into_iter()
            .find(|s| keybindings::Key::parse(s).is_some_and(|k| k == pressed))
        else {
            return false;
        };
        self.session.run_extension_shortcut(&shortcut);
        true
    }

    /// Runs `action`; whether it applied (when not, the key's next action is tried).
    pub(super) fn run(&mut self, action: Action) -> bool {
        use super::editor::Editor;
        let completions = self.completions();
        match action {
            Action::Interrupt => self.interrupt(),
            Action::Clear => self.ctrl_c(),
            Action::Exit if self.editor.is_empty() => self.quit = true,
            Action::Exit => return false,
            Action::Suspend => self.suspend = true,
            Action::ThinkingCycle => self.cycle_thinking(),
            Action::ModelCycleForward => self.cycle_model(),
            Action::ModelCycleBackward => self.cycle_model_backward(),
            Action::ModelSelect => self.open_model_selector(),
            Action::ToolsExpand => self.toggle_tool_output(),
            Action::ThinkingToggle => self.toggle_thinking(),
            Action::FollowUp => self.submit(true),
            Action::Dequeue => self.dequeue(),
            Action::PasteImage => self.paste_clipboard_image(),
            Action::SessionNew => self.command(commands::Invocation { name: "new", args: "" }),
            Action::SessionTree => self.open_tree_selector(),
            Action::SessionFork => self.open_fork_selector(),
            Action::SessionResume => self.open_session_picker(),
            Action::NewLine => self.editor.insert("\n"),
            // A backslash before the cursor makes Enter a new line, as in pi's editor (for
            // terminals that send Shift+Enter as Enter).
            Action::Submit if self.editor.word_before_cursor().1.ends_with('\\') => {
                self.editor.backspace();
                self.editor.insert("\n");
            }
            Action::Submit => {
                // A command typed in full runs as typed (`/mcp` is not `/mcp__server__prompt`),
                // unless another was picked from the list.
                let typed_in_full = self.completion == 0 && commands::names(self.editor.text(), &self.session);
                if let Some(candidate) = completions.get(self.completion).filter(|_| !typed_in_full) {
                    self.editor.set_text(&format!("/{}", candidate.name));
                }
                self.submit(false);
            }
            Action::Tab => {
                if let Some(candidate) = completions.get(self.completion) {
                    self.editor.set_text(&format!("/{} ", candidate.name));
                    self.completion = 0;
                } else {
                    self.complete_path();
                }
            }
            Action::Undo => self.edit(Editor::undo),
            Action::DeleteToLineEnd => self.edit(Editor::kill_to_end),
            Action::DeleteToLineStart => self.edit(Editor::kill_to_start),
            Action::DeleteWordBackward => self.edit(Editor::delete_word_back),
            Action::DeleteWordForward => self.edit(Editor::delete_word_forward),
            Action::DeleteCharBackward => self.edit(Editor::backspace),
            Action::DeleteCharForward => self.edit(Editor::delete),
            Action::Yank => self.edit(Editor::yank),
            Action::YankPop => self.edit(Editor::yank_pop),
            Action::CursorLineStart => self.editor.home(),
            Action::CursorLineEnd => self.editor.end(),
            Action::CursorWordLeft => self.editor.word_left(),
            Action::CursorWordRight => self.editor.word_right(),
            Action::JumpForward => self.editor.start_jump(super::editor::Direction::Forward),
            Action::JumpBackward => self.editor.start_jump(super::editor::Direction::Backward),
            Action::CursorUp if !completions.is_empty() => {
                self.completion = self.completion.checked_sub(1).unwrap_or(completions.len() - 1);
            }
            Action::CursorDown if !completions.is_empty() => {
                self.completion = (self.completion + 1) % completions.len();
            }
            Action::CursorUp => self.editor.up(),
            Action::CursorDown => self.editor.down(),
            Action::CursorLeft => self.editor.left(),
            Action::CursorRight => self.editor.right(),
            Action::PageUp => self.editor.move_lines(-page_lines()),
            Action::PageDown => self.editor.move_lines(page_lines()),
            Action::HistoryPrevious => self.editor.history_previous(),
            Action::HistoryNext => self.editor.history_next(),
            Action::MessageCopy => self.copy(),
        }
        true
    }

    /// An edit of the editor's text (the completions and the `@` list follow it).
    fn edit(&mut self, edit: fn(&mut super::editor::Editor)) {
        edit(&mut self.editor);
        self.edited();
    }

    /// Escape: answers an open dialog with nothing, kills a running `!command`, aborts the run
    /// (its queued messages back into the editor), or when idle counts towards the tree.
    fn interrupt(&mut self) {
        if self.dialog.is_some() {
            self.answer_dialog(None);
        } else if self.shell_running {
            self.session.abort_bash();
        } else if self.session.is_summarizing() {
            self.session.abort_summary();
        } else if self.is_working() {
            self.restore_queued();
            let session = self.session.clone();
            tokio::spawn(async move { session.abort().await });
        } else {
            self.completion = 0;
            self.escape_on_idle();
        }
    }

    /// Alt+Up: the queued messages back into the editor, the run going on.
    fn dequeue(&mut self) {
        let hint = match self.restore_queued() {
            0 => "No queued messages to restore".to_owned(),
            1 => "Restored 1 queued message to the editor".to_owned(),
            n => format!("Restored {n} queued messages to the editor"),
        };
        self.hint = Some(hint);
    }

    /// A pasted image path attaches the image. Other text is cleaned ([`clean_paste`]); a paste
    /// of more than [`PASTE_FOLD_LINES`] lines or [`PASTE_FOLD_CHARS`] characters goes into the
    /// editor as one marker.
    fn paste(&mut self, text: &str) {
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        if let Some(image) = pasted_image(text, self.session.cwd(), home.as_deref()) {
            self.editor.attach_image(image);
            self.edited();
            return;
        }
        let after_word =
            self.editor.word_before_cursor().1.chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_');
        let text = clean_paste(text, after_word);
        match fold_marker(&text, self.pastes.len() + 1) {
            Some(marker) => {
                self.editor.insert(&marker);
                self.pastes.push((marker, text));
            }
            None => self.editor.insert(&text),
        }
        self.edited();
    }

    /// Command names completing the editor's text.
    pub fn completions(&self) -> Vec<commands::Candidate> {
        commands::complete(self.editor.text(), &self.session)
    }

    fn ctrl_c(&mut self) {
        if !self.editor.is_empty() {
            // Clearing does not arm quitting: a quick second press only clears. Undo brings the
            // text back.
            self.editor.set_text("");
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

    /// Escape while idle: a second one soon after, on an empty editor, opens `/tree` (or
    /// `/fork`, or nothing, as `doubleEscapeAction` says).
    fn escape_on_idle(&mut self) {
        let action = self.double_escape_action();
        if !self.editor.is_empty() || action == "none" {
            self.escape_at = None;
        } else if self.escape_at.take().is_some_and(|at| at.elapsed() < DOUBLE_ESCAPE) {
            if action == "fork" { self.open_fork_selector() } else { self.open_tree_selector() }
        } else {
            self.escape_at = Some(Instant::now());
            let target = if action == "fork" { "to fork" } else { "for the session tree" };
            self.hint = Some(format!("Press Escape again {target}"));
        }
    }

    /// Escape while working, or Alt+Up: the queued messages come back into the editor instead
    /// of being sent; how many there were.
    fn restore_queued(&mut self) -> usize {
        let queued: Vec<String> = self
            .session
            .take_queued()
            .iter()
            .filter_map(|m| match m {
                rho_types::AgentMessage::User(u) => Some(u.text()),
                _ => None,
            })
            .collect();
        self.steering.clear();
        self.follow_up.clear();
        if queued.is_empty() {
            return 0;
        }
        let mut text = queued.join("\n\n");
        if !self.editor.text().trim().is_empty() {
            text.push_str("\n\n");
            text.push_str(self.editor.text());
        }
        self.editor.set_text(&text);
        queued.len()
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
}

/// How many lines PageUp and PageDown move: 30% of the terminal's rows, at least 5 (pi's page).
fn page_lines() -> isize {
    let rows = ratatui::crossterm::terminal::size().map_or(0, |(_, rows)| rows);
    isize::try_from(rows.saturating_mul(3) / 10).unwrap_or(0).max(5)
}

/// A paste as pi's editor takes it: line breaks normalized, tabs as four spaces, other control
/// characters dropped, and a space before a path (`/`, `~` or `.` first) pasted right after a
/// word.
fn clean_paste(text: &str, after_word: bool) -> String {
    let mut text: String = text
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', "    ")
        .chars()
        .filter(|c| *c == '\n' || !c.is_control())
        .collect();
    if after_word && text.starts_with(['/', '~', '.']) {
        text.insert(0, ' ');
    }
    text
}

/// The marker paste number `n` is folded into, when it is long.
fn fold_marker(text: &str, n: usize) -> Option<String> {
    let lines = text.lines().count();
    let chars = text.chars().count();
    if lines > PASTE_FOLD_LINES {
        Some(format!("[paste #{n} +{lines} lines]"))
    } else if chars > PASTE_FOLD_CHARS {
        Some(format!("[paste #{n} {chars} chars]"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pastes_are_cleaned_as_pi_cleans_them() {
        assert_eq!(clean_paste("a\tb\r\nc\rd\x07", false), "a    b\nc\nd");
        assert_eq!(clean_paste("./src/main.rs", true), " ./src/main.rs");
        assert_eq!(clean_paste("./src/main.rs", false), "./src/main.rs");
        assert_eq!(clean_paste("plain", true), "plain");
    }

    #[test]
    fn long_pastes_fold_by_lines_or_characters() {
        let lines = ["x"; 11].join("\n");
        assert_eq!(fold_marker(&lines, 2).as_deref(), Some("[paste #2 +11 lines]"));
        assert_eq!(fold_marker(&"y".repeat(1001), 1).as_deref(), Some("[paste #1 1001 chars]"));
        assert_eq!(fold_marker(&"y".repeat(1000), 1), None);
        assert_eq!(fold_marker(&["x"; 10].join("\n"), 1), None);
    }
}
