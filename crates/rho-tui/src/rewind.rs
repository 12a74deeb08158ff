//! `/rewind`: back to before one of this branch's user messages (newest first, each with how
//! many files rho changed since), restoring the code and the conversation, the conversation
//! only, or the code only. Files changed outside rho since rho wrote them are named, and
//! overwritten only when the user confirms. What was put back (and what was not) is said below.

use ratatui::text::Line;
use rho_coding_agent::agent_session::RewindOptions;
use rho_coding_agent::checkpoints::RewindFiles;
use rho_coding_agent::ui::UiAnswer;
use rho_rpc::UiMethod;
use tokio::sync::oneshot;

use super::app::{App, AppEvent, Picking};
use super::select::{Select, SelectItem};
use super::transcript::Entry;
use super::{blocks, replay};

/// The choices after a message is picked, as the values of their list (`choice:entry id`).
const CHOICES: [(&str, &str); 3] =
    [("Restore code and conversation", "both"), ("Restore conversation", "conversation"), ("Restore code", "code")];

impl App {
    /// `/rewind`: this branch's user messages, newest first.
    pub fn open_rewind_selector(&mut self) {
        let session = self.session.clone();
        let items = self.branch_message_items(|id| match session.files_changed_since(id) {
            0 => "no file changes".to_owned(),
            1 => "1 file changed since".to_owned(),
            n => format!("{n} files changed since"),
        });
        if items.is_empty() {
            self.push([blocks::notice("No messages to rewind to yet")]);
            return;
        }
        self.select = Some((Picking::Rewind, Select::new("Rewind to before a message", items, 0)));
    }

    /// A message picked: what to restore.
    pub fn rewind_message_picked(&mut self, entry_id: &str) {
        let items = CHOICES
            .into_iter()
            .map(|(label, choice)| SelectItem {
                label: label.to_owned(),
                detail: String::new(),
                value: format!("{choice}:{entry_id}"),
            })
            .collect();
        self.select = Some((Picking::RewindChoice, Select::new("Rewind to before this message", items, 0)));
    }

    /// What to restore picked (`choice:entry id`): files changed outside rho are asked about,
    /// then the rewind runs.
    pub fn rewind_choice_picked(&mut self, value: &str) {
        let Some((choice, entry_id)) = value.split_once(':') else { return };
        let options = RewindOptions {
            code: choice != "conversation",
            conversation: choice != "code",
            force: false,
            dry_run: false,
        };
        let changed = if options.code { self.session.files_to_restore(entry_id).changed_outside } else { Vec::new() };
        let (session, tx, entry_id) = (self.session.clone(), self.tx.clone(), entry_id.to_owned());
        let confirmed = if changed.is_empty() {
            None
        } else {
            let (answer_tx, answer_rx) = oneshot::channel::<UiAnswer>();
            let message = format!("{} changed outside rho since rho wrote it. Overwrite?", changed.join(", "));
            let confirm = UiMethod::Confirm { title: "Rewind".to_owned(), message, timeout: None };
            let _ = tx.send(AppEvent::Dialog(confirm, answer_tx));
            Some(answer_rx)
        };
        tokio::spawn(async move {
            let force = match confirmed {
                Some(answer) => answer.await.is_ok_and(|a| a.confirmed()),
                None => false,
            };
            let entries = match session.rewind(&entry_id, RewindOptions { force, ..options }).await {
                Ok(rewound) => {
                    let mut lines = vec![Line::default()];
                    if options.conversation {
                        lines.push(blocks::notice("── Rewound to before the selected message ──"));
                    }
                    if options.code {
                        lines.extend(report(&rewound.files));
                    }
                    if let Some(text) = rewound.editor_text {
                        let _ = tx.send(AppEvent::UiNotify(UiMethod::SetEditorText { text }));
                    }
                    let mut entries = vec![Entry::Lines(lines)];
                    if options.conversation {
                        entries.extend(replay::tail(&session.messages()));
                    }
                    entries
                }
                Err(e) => vec![Entry::Lines(vec![blocks::error(&format!("Error: {e}"))])],
            };
            let _ = tx.send(AppEvent::Entries(entries));
        });
    }
}

/// What a rewind did to the files, a line each.
pub fn report(files: &RewindFiles) -> Vec<Line<'static>> {
    let list = |paths: &[String]| paths.join(", ");
    let mut lines = Vec::new();
    match files.restored.len() {
        0 => lines.push(blocks::notice("No files to restore")),
        n => lines.push(blocks::notice(&format!(
            "Restored {n} file{}: {}",
            if n == 1 { "" } else { "s" },
            list(&files.restored)
        ))),
    }
    if !files.changed_outside.is_empty() {
        let left = list(&files.changed_outside);
        lines.push(blocks::warning(&format!("Left as they are (changed outside rho since): {left}")));
    }
    if !files.not_kept.is_empty() {
        lines.push(blocks::warning(&format!(
            "Not restored (their earlier content was not kept): {}",
            list(&files.not_kept)
        )));
    }
    for failed in &files.failed {
        lines.push(blocks::error(&format!("Could not restore {}: {}", failed.path, failed.error)));
    }
    lines
}
