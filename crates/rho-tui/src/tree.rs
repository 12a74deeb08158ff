//! The session-tree commands: `/fork` (a new session from before an earlier user message),
//! `/tree` (move the leaf to any entry of the session tree, in pi's views, and label entries
//! with Shift+L; Escape twice on an empty editor opens it too) and `/clone` (the current branch
//! copied into a new session file).
//!
//! Moving in the tree asks first, as pi does, whether to summarize the branch being left (unless
//! `branchSummary.skipPrompt`): no summary, a summary, or one with custom instructions typed in
//! the editor (Escape there goes back to the question). Escape on the question goes back to the
//! tree, and so does Escape while the summary is being written. Once moved, when rho changed
//! files between the two points, it asks whether to put them as they are at the new one
//! ([`crate::rewind`]); the new branch's conversation is shown again below.

use ratatui::text::Line;
use rho_rpc::UiMethod;
use tokio::sync::oneshot;

use super::app::{App, AppEvent, Picking};
use super::select::{Select, SelectItem};
use super::transcript::Entry;
use super::tree_items::{TreeFilter, preview, tree_items};
use super::{blocks, replay};
use rho_coding_agent::agent_session::{BranchSummaryChoice, SessionCommandError};
use rho_coding_agent::compaction::CompactionError;
use rho_coding_agent::ui::UiAnswer;

/// The summary choices, as the values of their list.
const NO_SUMMARY: &str = "none";
const SUMMARIZE: &str = "summarize";
const CUSTOM_SUMMARY: &str = "custom";

/// The keys of the tree list, under it.
const TREE_KEYS: &str = "Ctrl+D/T/U/L/A: default/no tools/user/labeled/all · Ctrl+O next · Shift+L label";

/// The tree list's title: the filter in effect, as pi's tree says it.
fn tree_title(filter: TreeFilter) -> String {
    format!("Session tree{}", filter.status())
}

/// A step of moving in the tree that comes back from a task to the main loop.
pub enum TreeStep {
    /// The custom instructions typed for the summary (`None`: dismissed, back to the question).
    Instructions { entry_id: String, text: Option<String> },
    /// The summary was cancelled: the tree again, on the entry picked.
    SummaryCancelled { entry_id: String },
    /// The label typed for an entry (`None`: dismissed); the tree again, on the entry.
    Label { entry_id: String, text: Option<String> },
}

impl App {
    /// `/fork`: this session's user messages, newest first.
    pub fn open_fork_selector(&mut self) {
        let items = self.branch_message_items(|_| String::new());
        if items.is_empty() {
            self.push([blocks::notice("No messages to fork from yet")]);
            return;
        }
        self.select = Some((Picking::Fork, Select::new("Fork from a message", items, 0)));
    }

    /// This branch's user messages as list items, newest first, each with `detail` of its entry
    /// id (`/fork`, `/rewind`).
    pub fn branch_message_items(&self, detail: impl Fn(&str) -> String) -> Vec<SelectItem> {
        self.session
            .branch_messages()
            .into_iter()
            .rev()
            .map(|m| {
                let value = m.entry_id.to_string();
                SelectItem { label: preview(&m.text), detail: detail(&value), value }
            })
            .collect()
    }

    /// Forks before the user message `entry_id`; its text goes into the editor, and the new
    /// session's conversation is drawn below, so the screen shows the branch now followed.
    pub fn fork(&mut self, entry_id: &str) {
        let session = self.session.clone();
        let tx = self.tx.clone();
        let entry_id = entry_id.to_owned();
        tokio::spawn(async move {
            let entries = match session.fork(&entry_id).await {
                Ok(text) => {
                    let _ = tx.send(AppEvent::UiNotify(UiMethod::SetEditorText { text }));
                    let forked = blocks::notice(&format!("── Forked into a new session: {} ──", file_of(&session)));
                    let mut entries = vec![Entry::Lines(vec![Line::default(), forked])];
                    entries.extend(replay::tail(&session.messages()));
                    entries
                }
                Err(e) => vec![Entry::Lines(vec![blocks::error(&format!("Error: {e}"))])],
            };
            let _ = tx.send(AppEvent::Entries(entries));
        });
    }

    /// `/tree`: the session tree in the `treeFilterMode` setting's view, the current leaf
    /// selected.
    pub fn open_tree_selector(&mut self) {
        self.tree_filter = TreeFilter::from_setting(self.session.settings().get_string("treeFilterMode").as_deref());
        self.open_tree_selector_at(None);
    }

    /// The tree with `entry_id` selected (the current leaf when `None` or not shown).
    fn open_tree_selector_at(&mut self, entry_id: Option<&str>) {
        let filter = self.tree_filter;
        let (items, current) = self.session.read_session(|session| tree_items(session, filter));
        // An empty view of a conversation still opens: another view shows it.
        if items.is_empty()
            && self.session.read_session(|session| tree_items(session, TreeFilter::Default).0.is_empty())
        {
            self.push([blocks::notice("The session tree is empty")]);
            return;
        }
        let selected = entry_id.and_then(|id| items.iter().position(|i| i.value == id)).or(current).unwrap_or(0);
        let list = Select::new(tree_title(filter), items, selected)
            .with_shortcuts()
            .with_letter_shortcuts(&['L'])
            .with_hint(TREE_KEYS);
        self.select = Some((Picking::Tree, list));
    }

    /// A Ctrl key in the tree: another filter, the highlighted entry kept when it still shows.
    /// Shift+L: the highlighted entry's label, edited.
    pub fn tree_shortcut(&mut self, key: char, highlighted: Option<&str>) {
        if key == 'L' {
            if let Some(entry_id) = highlighted {
                self.select = None;
                self.ask_label(entry_id);
            }
            return;
        }
        let Some(filter) = self.tree_filter.after_key(key) else { return };
        self.tree_filter = filter;
        let (items, current) = self.session.read_session(|session| tree_items(session, filter));
        let Some((_, list)) = self.select.as_mut() else { return };
        list.replace(tree_title(filter), items);
        match highlighted {
            Some(id) if list.items().iter().any(|i| i.value == id) => list.highlight(id),
            _ => {
                if let Some(at) = current.and_then(|at| list.items().get(at)).map(|i| i.value.clone()) {
                    list.highlight(&at);
                }
            }
        }
    }

    /// An entry picked in the tree: the current one stays; for another, whether to summarize the
    /// branch being left.
    pub fn tree_entry_picked(&mut self, entry_id: &str) {
        // The entry marked current in the view picked from.
        let filter = self.tree_filter;
        let (items, current) = self.session.read_session(|session| tree_items(session, filter));
        if current.and_then(|at| items.get(at)).is_some_and(|i| i.value == entry_id) {
            self.push([blocks::notice("Already at this point")]);
            return;
        }
        if self.session.settings().branch_summary().skip_prompt {
            self.navigate_tree(entry_id, BranchSummaryChoice::NoSummary);
            return;
        }
        self.open_summary_question(entry_id);
    }

    /// Whether to summarize the branch left on the way to `entry_id`, and how.
    fn open_summary_question(&mut self, entry_id: &str) {
        let choices =
            [("No summary", NO_SUMMARY), ("Summarize", SUMMARIZE), ("Summarize with custom prompt", CUSTOM_SUMMARY)];
        let items = choices
            .into_iter()
            .map(|(label, choice)| SelectItem {
                label: label.to_owned(),
                detail: String::new(),
                value: format!("{choice}:{entry_id}"),
            })
            .collect();
        let list =
            Select::new("Summarize the branch you leave?", items, 0).with_hint("Enter select · Esc back to the tree");
        self.select = Some((Picking::TreeSummary, list));
    }

    /// The summary choice made (`choice:entry id`).
    pub fn tree_summary_picked(&mut self, value: &str) {
        let Some((choice, entry_id)) = value.split_once(':') else { return };
        let choice = match choice {
            SUMMARIZE => BranchSummaryChoice::Summarize { instructions: None },
            CUSTOM_SUMMARY => return self.ask_summary_instructions(entry_id),
            _ => BranchSummaryChoice::NoSummary,
        };
        self.navigate_tree(entry_id, choice);
    }

    /// The editor asks for the summary's custom instructions; the answer comes back as a
    /// [`TreeStep::Instructions`].
    fn ask_summary_instructions(&mut self, entry_id: &str) {
        let entry_id = entry_id.to_owned();
        self.ask_in_editor("Custom summarization instructions", None, move |text| TreeStep::Instructions {
            entry_id,
            text,
        });
    }

    /// The editor asks for `entry_id`'s label (its current one filled in; an empty one removes
    /// it); the answer comes back as a [`TreeStep::Label`].
    fn ask_label(&mut self, entry_id: &str) {
        let current = self.session.read_session(|session| session.label(entry_id).map(str::to_owned));
        let entry_id = entry_id.to_owned();
        self.ask_in_editor("Label (empty to remove)", current, move |text| TreeStep::Label { entry_id, text });
    }

    /// Opens the editor dialog titled `title`; what was typed (`None`: dismissed) comes back to
    /// the main loop as the step `step` makes of it.
    fn ask_in_editor(
        &mut self,
        title: &str,
        prefill: Option<String>,
        step: impl FnOnce(Option<String>) -> TreeStep + Send + 'static,
    ) {
        let (answer, answered) = oneshot::channel();
        self.open_dialog(UiMethod::Editor { title: title.to_owned(), prefill, prompt_style: None }, answer);
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let text = match answered.await {
                Ok(UiAnswer::Value(text)) => Some(text),
                _ => None,
            };
            let _ = tx.send(AppEvent::Tree(step(text)));
        });
    }

    /// A step of moving in the tree, back from its task.
    pub fn tree_step(&mut self, step: TreeStep) {
        match step {
            TreeStep::Label { entry_id, text } => {
                if let Some(text) = text
                    && let Err(e) = self.session.set_label(&entry_id, Some(text.trim()))
                {
                    self.push([blocks::error(&format!("Error: {e}"))]);
                }
                self.open_tree_selector_at(Some(&entry_id));
            }
            TreeStep::Instructions { entry_id, text: Some(text) } => {
                self.navigate_tree(&entry_id, BranchSummaryChoice::Summarize { instructions: Some(text) });
            }
            TreeStep::Instructions { entry_id, text: None } => self.open_summary_question(&entry_id),
            TreeStep::SummaryCancelled { entry_id } => self.open_tree_selector_at(Some(&entry_id)),
        }
    }

    /// Escape on the summary choice: back to the tree, on the entry picked.
    pub fn tree_summary_closed(&mut self, highlighted: Option<&str>) {
        let entry_id = highlighted.and_then(|v| v.split_once(':')).map(|(_, id)| id);
        self.open_tree_selector_at(entry_id);
    }

    /// Moves the leaf to `entry_id` (before it, for a user message, whose text goes into the
    /// editor), summarizing the branch left when asked, and shows the new branch.
    fn navigate_tree(&mut self, entry_id: &str, summary: BranchSummaryChoice) {
        let session = self.session.clone();
        let tx = self.tx.clone();
        let entry_id = entry_id.to_owned();
        if matches!(summary, BranchSummaryChoice::Summarize { .. }) {
            self.status = Some("Summarizing the branch… (Esc to cancel)".to_owned());
        }
        let old_leaf = self.session.leaf_id();
        tokio::spawn(async move {
            let entries = match session.navigate_tree(&entry_id, summary).await {
                Ok(navigated) => {
                    if let Some(text) = navigated.editor_text {
                        let _ = tx.send(AppEvent::UiNotify(UiMethod::SetEditorText { text }));
                    }
                    let continuing = blocks::notice("── Continuing from the selected entry ──");
                    let mut lines = vec![Line::default(), continuing];
                    if let Some(old_leaf) = old_leaf {
                        lines.extend(offer_files(&session, &tx, &old_leaf).await);
                    }
                    let mut entries = vec![Entry::Lines(lines)];
                    entries.extend(replay::tail(&session.messages()));
                    entries
                }
                Err(SessionCommandError::Compaction(CompactionError::Cancelled)) => {
                    let _ = tx.send(AppEvent::Lines(vec![blocks::notice("Branch summarization cancelled")]));
                    let _ = tx.send(AppEvent::Tree(TreeStep::SummaryCancelled { entry_id }));
                    return;
                }
                Err(e) => vec![Entry::Lines(vec![blocks::error(&format!("Error: {e}"))])],
            };
            let _ = tx.send(AppEvent::Entries(entries));
        });
    }

    /// `/clone`: the current branch into a new session file, which becomes the current one.
    pub fn clone_session(&mut self) {
        let session = self.session.clone();
        let report = self.reporter();
        tokio::spawn(async move {
            let line = match session.clone_session().await {
                Ok(()) => blocks::notice(&format!("Cloned into a new session: {}", file_of(&session))),
                Err(e) => blocks::error(&format!("Error: {e}")),
            };
            report(vec![Line::default(), line]);
        });
    }
}

/// After a move from `old_leaf`: when rho changed files between there and here, asks whether
/// to put them as they are here, and says what was done.
async fn offer_files(
    session: &rho_coding_agent::AgentSession,
    tx: &tokio::sync::mpsc::UnboundedSender<AppEvent>,
    old_leaf: &str,
) -> Vec<Line<'static>> {
    let preview = session.restore_files_after_move(old_leaf, true);
    if preview.restored.is_empty() {
        return Vec::new();
    }
    let count = preview.restored.len();
    let message = format!(
        "Restore the {count} file{} rho changed ({}) as they were here?",
        if count == 1 { "" } else { "s" },
        preview.restored.join(", ")
    );
    let (answer_tx, answer_rx) = oneshot::channel::<UiAnswer>();
    let confirm = UiMethod::Confirm { title: "Files".to_owned(), message, timeout: None };
    let _ = tx.send(AppEvent::Dialog(confirm, answer_tx));
    if !answer_rx.await.is_ok_and(|answer| answer.confirmed()) {
        return vec![blocks::notice("Files left as they are")];
    }
    super::rewind::report(&session.restore_files_after_move(old_leaf, false))
}

fn file_of(session: &rho_coding_agent::AgentSession) -> String {
    session.stats().session_file.unwrap_or_else(|| "a new session (not saved)".to_owned())
}
