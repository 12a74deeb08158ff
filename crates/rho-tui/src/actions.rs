//! Sending what the editor holds: a prompt (queued as steering or a follow-up while a run
//! streams) or a built-in command (/model, /new, /resume, /fork, /tree, /clone, /name, /session,
//! /compact, /export, /copy, /hotkeys, /quit). Commands that take time run on a task of their
//! own and report their lines back through the main loop.

use std::path::PathBuf;

use base64::Engine;
use ratatui::text::Line;
use rho_rpc::StreamingBehavior;
use rho_types::types::ImageContent;

use super::app::{App, AppEvent, Picking};
use super::blocks;
use super::commands::{self, Invocation};
use super::resume;
use super::select::{Select, SelectItem};
use super::transcript::Entry;
use rho_coding_agent::agent_session::{PromptOptions, PromptOutcome, PromptSource};

impl App {
    /// Sends the editor's text; `follow_up` (Alt+Enter) queues it as a follow-up while working.
    pub fn submit(&mut self, follow_up: bool) {
        if self.dialog.as_ref().is_some_and(|d| d.typed) {
            let text = self.editor.take();
            self.answer_dialog(Some(text));
            return;
        }
        let text = self.editor.text().trim().to_owned();
        if text.is_empty() {
            return;
        }
        self.editor.take();
        self.completion = 0;
        // Folded pastes are sent (and remembered) whole.
        let mut text = text;
        for (marker, pasted) in std::mem::take(&mut self.pastes) {
            text = text.replace(&marker, &pasted);
        }
        self.editor.remember(&text);
        if let Some(invocation) = commands::parse(&text) {
            self.command(invocation);
            return;
        }
        if let Some((command, context)) = shell_command(&text) {
            self.shell(command, context);
            return;
        }
        let images = self.editor.take_images(&text);
        self.prompt_with_images(&text, images, follow_up);
    }

    /// Sends a prompt, or queues it while a run streams.
    pub fn prompt(&mut self, text: &str, follow_up: bool) {
        self.prompt_with_images(text, Vec::new(), follow_up);
    }

    /// Sends a prompt with attached images, or queues it while a run streams.
    fn prompt_with_images(&mut self, text: &str, images: Vec<ImageContent>, follow_up: bool) {
        let behavior = if follow_up { StreamingBehavior::FollowUp } else { StreamingBehavior::Steer };
        let options = PromptOptions {
            images,
            streaming_behavior: Some(behavior),
            source: PromptSource::Interactive,
            ..PromptOptions::default()
        };
        if self.session.has_extensions() {
            // Extension commands and `input` handlers answer first, on a task of their own.
            let (session, report, text) = (self.session.clone(), self.reporter(), text.to_owned());
            tokio::spawn(async move {
                match session.submit(&text, options).await {
                    Ok(PromptOutcome::Started(run)) => drop(run.start()),
                    Ok(PromptOutcome::Command(command)) => drop(command.start()),
                    Ok(PromptOutcome::Queued | PromptOutcome::Handled) => {}
                    Err(rejection) => {
                        let mut lines = blocks::user(&text);
                        lines.extend(rejection.interactive_text().split("\n\n").map(blocks::error));
                        report(lines);
                    }
                }
            });
            return;
        }
        match self.session.prompt(text, options) {
            Ok(PromptOutcome::Started(run)) => drop(run.start()),
            Ok(PromptOutcome::Command(command)) => drop(command.start()),
            Ok(PromptOutcome::Queued | PromptOutcome::Handled) => {}
            Err(rejection) => {
                self.push(blocks::user(text));
                for line in rejection.interactive_text().split("\n\n") {
                    self.push([blocks::error(line)]);
                }
            }
        }
    }

    pub(super) fn command(&mut self, Invocation { name, args }: Invocation<'_>) {
        let report = self.reporter();
        match name {
            "quit" => self.quit = true,
            "hotkeys" => self.push(commands::hotkeys(&super::keybindings::current())),
            "settings" => self.open_settings(),
            "login" => self.login_command(args),
            "logout" => self.logout_command(args),
            "scoped-models" => self.open_scoped_models(),
            "reload" => self.reload(),
            "model" if args.is_empty() => self.open_model_selector(),
            "model" => self.set_model(args),
            "name" if args.is_empty() => self.show_name(),
            "thinking" => self.thinking_command(args),
            "trust" => self.trust_command(),
            "mcp" => self.mcp_command(args),
            "name" => match self.session.set_session_name(args) {
                Ok(()) => self.push([blocks::notice(&format!("Session named: {args}"))]),
                Err(e) => self.push([blocks::error(&format!("Error: {e}"))]),
            },
            "session" => self.push(self.session_info()),
            "copy" => self.copy(),
            "resume" => self.open_session_picker(),
            "import" => self.import_session(args),
            "fork" => self.open_fork_selector(),
            "tree" => self.open_tree_selector(),
            "rewind" => self.open_rewind_selector(),
            "jobs" => self.jobs_command(),
            "share" => self.share_command(),
            "clone" => self.clone_session(),
            "new" => {
                let session = self.session.clone();
                tokio::spawn(async move {
                    let line = match session.new_session(None).await {
                        Ok(()) => blocks::notice("── New session ──"),
                        Err(e) => blocks::error(&format!("Error: {e}")),
                    };
                    report(vec![Line::default(), line]);
                });
            }
            "compact" => {
                let session = self.session.clone();
                let instructions = (!args.is_empty()).then(|| args.to_owned());
                self.status = Some("Compacting…".to_owned());
                tokio::spawn(async move {
                    // The session's compaction events report the outcome; only a refusal is left.
                    if let Err(e) = session.compact(instructions.as_deref()).await {
                        report(vec![blocks::error(&format!("Compaction: {e}"))]);
                    }
                });
            }
            "export" => {
                let output = (!args.is_empty()).then(|| self.session.paths().resolve(args));
                let exported = match output.as_deref() {
                    // pi 1.6: a `.jsonl` path takes the branch as a session file.
                    Some(path) if path.extension().is_some_and(|e| e == "jsonl") => self.session.export_jsonl(path),
                    _ => self.session.export_html(output.as_deref()).map_err(|e| e.to_string()),
                };
                let line = match exported {
                    Ok(path) => blocks::notice(&format!("Exported to: {}", path.display())),
                    Err(e) => blocks::error(&format!("Error: {e}")),
                };
                self.push([line]);
            }
            _ => {}
        }
    }

    /// `!command`: runs in the user's shell; the output joins the conversation (the model sees
    /// it with the next prompt), or with `!!command` stays out of it. Escape kills it.
    fn shell(&mut self, command: &str, context: ShellContext) {
        let session = self.session.clone();
        let report = self.reporter();
        let command = command.to_owned();
        let expanded = self.expand_tools;
        self.status = Some(format!("Running {command}…"));
        self.shell_running = true;
        tokio::spawn(async move {
            let read_at = session.bash_epoch();
            let result = session.bash(&command, read_at, context == ShellContext::Excluded, None).await;
            let mut lines = match result {
                Ok(r) => blocks::bash(&command, &r.output, r.exit_code, r.cancelled, expanded),
                Err(e) => vec![blocks::error(&format!("Error: {e}"))],
            };
            if context == ShellContext::Excluded {
                lines.push(blocks::notice("  (not sent to the model)"));
            }
            report(lines);
        });
    }

    fn session_info(&self) -> Vec<Line<'static>> {
        let stats = self.session.stats();
        let file = stats.session_file.clone().unwrap_or_else(|| "(not saved)".to_owned());
        let mut lines = vec![Line::default(), Line::styled("Session", super::style::bold())];
        let mut field = |k: &str, v: String| lines.push(Line::raw(format!("  {k:<14}{v}")));
        field("File", file);
        field("ID", stats.session_id.clone());
        if let Some(name) = self.session.session_name() {
            field("Name", name);
        }
        field(
            "Messages",
            format!(
                "{} user, {} assistant, {} tool results",
                stats.user_messages, stats.assistant_messages, stats.tool_results
            ),
        );
        let t = &stats.tokens;
        field(
            "Tokens",
            format!("{} in, {} out, {} cache read, {} cache write", t.input, t.output, t.cache_read, t.cache_write),
        );
        field("Cost", format!("${:.4}", stats.cost));
        lines
    }

    /// `/copy`: the last answer to the system clipboard through the terminal (OSC 52).
    pub(super) fn copy(&mut self) {
        match self.session.last_assistant_text() {
            Some(text) => {
                let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
                self.osc52 = Some(format!("\x1b]52;c;{encoded}\x07"));
                self.push([blocks::notice("Copied the last answer to the clipboard")]);
            }
            None => self.push([blocks::error("Nothing to copy yet")]),
        }
    }

    pub fn open_model_selector(&mut self) {
        let current = self.session.model().map(|m| (m.provider, m.id));
        let models = self.session.available_models();
        let mut selected = 0;
        let items = models
            .iter()
            .enumerate()
            .map(|(i, m)| {
                if current.as_ref().is_some_and(|(p, id)| *p == m.provider && *id == m.id) {
                    selected = i;
                }
                SelectItem {
                    label: format!("{}/{}", m.provider, m.id),
                    detail: m.name.clone(),
                    value: format!("{}/{}", m.provider, m.id),
                }
            })
            .collect();
        if models.is_empty() {
            self.push([blocks::error("No models available: set an API key or add models.json")]);
            return;
        }
        self.select = Some((Picking::Model, Select::new("Select a model", items, selected)));
    }

    /// `/model provider/id` (or an id of one of the available models).
    pub fn set_model(&mut self, spec: &str) {
        let models = self.session.available_models();
        let found = match spec.split_once('/') {
            Some((provider, id)) => models.iter().find(|m| m.provider == provider && m.id == id),
            None => models.iter().find(|m| m.id == spec),
        };
        let Some(model) = found else {
            self.push([blocks::error(&format!("No available model matches '{spec}'"))]);
            return;
        };
        match self.session.set_model(&model.provider, &model.id) {
            Ok(model) => self.push([blocks::notice(&format!("Model: {}/{}", model.provider, model.id))]),
            Err(e) => self.push([blocks::error(&format!("Error: {e}"))]),
        }
    }

    pub fn open_session_picker(&mut self) {
        match resume::list(&self.session.sessions_dir(), &self.session.paths().agent_dir) {
            Some(list) => self.select = Some((Picking::Session, list)),
            None => self.push([blocks::notice("No sessions yet")]),
        }
    }

    /// Switches to the session file at `path` and shows its conversation.
    pub fn resume(&mut self, path: &str) {
        let session = self.session.clone();
        let tx = self.tx.clone();
        let path = PathBuf::from(path);
        tokio::spawn(async move {
            let entries = match session.switch_session(&path).await {
                Ok(()) => {
                    let resumed = blocks::notice(&format!("── Resumed {} ──", path.display()));
                    let mut entries = vec![Entry::Lines(vec![Line::default(), resumed])];
                    entries.extend(super::replay::tail(&session.messages()));
                    entries
                }
                Err(e) => vec![Entry::Lines(vec![blocks::error(&format!("Error: {e}"))])],
            };
            let _ = tx.send(AppEvent::Entries(entries));
        });
    }
}

/// Whether a shell command's output joins the conversation (`!`) or not (`!!`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShellContext {
    Included,
    Excluded,
}

/// `!command` or `!!command`: the command, when there is one.
fn shell_command(text: &str) -> Option<(&str, ShellContext)> {
    let rest = text.strip_prefix('!')?;
    let (command, context) = match rest.strip_prefix('!') {
        Some(command) => (command, ShellContext::Excluded),
        None => (rest, ShellContext::Included),
    };
    Some((command.trim(), context)).filter(|(c, _)| !c.is_empty())
}
