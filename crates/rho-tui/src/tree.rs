//! The session-tree commands: `/fork` (a new session from before an earlier user message),
//! `/tree` (move the leaf to any entry of the session tree; Escape twice on an empty editor opens
//! it too) and `/clone` (the current branch copied into a new session file).
//!
//! Moving in the tree asks first, as pi does, whether to summarize the branch being left (unless
//! `branchSummary.skipPrompt`): no summary, a summary, or one with custom instructions typed in
//! the editor (Escape there goes back to the question). Escape on the question goes back to the
//! tree, and so does Escape while the summary is being written. Once moved, the new branch's
//! conversation is shown again below.

use std::collections::HashMap;

use ratatui::text::Line;
use rho_rpc::UiMethod;
use rho_session::{Session, SessionEntry};
use rho_types::AgentMessage;
use rho_types::types::{AssistantContent, StopReason};
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::app::{App, AppEvent, Picking};
use super::select::{Select, SelectItem};
use super::transcript::Entry;
use super::{blocks, replay};
use rho_coding_agent::agent_session::{BranchSummaryChoice, SessionCommandError};
use rho_coding_agent::compaction::CompactionError;
use rho_coding_agent::ui::UiAnswer;

/// Characters of an entry's first line shown in a list.
const PREVIEW_CHARS: usize = 70;

/// The summary choices, as the values of their list.
const NO_SUMMARY: &str = "none";
const SUMMARIZE: &str = "summarize";
const CUSTOM_SUMMARY: &str = "custom";

/// A step of moving in the tree that comes back from a task to the main loop.
pub enum TreeStep {
    /// The custom instructions typed for the summary (`None`: dismissed, back to the question).
    Instructions { entry_id: String, text: Option<String> },
    /// The summary was cancelled: the tree again, on the entry picked.
    SummaryCancelled { entry_id: String },
}

impl App {
    /// `/fork`: this session's user messages, newest first.
    pub fn open_fork_selector(&mut self) {
        let items: Vec<SelectItem> = self
            .session
            .branch_messages()
            .into_iter()
            .rev()
            .map(|m| SelectItem { label: preview(&m.text), detail: String::new(), value: m.entry_id.to_string() })
            .collect();
        if items.is_empty() {
            self.push([blocks::notice("No messages to fork from yet")]);
            return;
        }
        self.select = Some((Picking::Fork, Select::new("Fork from a message", items, 0)));
    }

    /// Forks before the user message `entry_id`; its text goes into the editor.
    pub fn fork(&mut self, entry_id: &str) {
        let session = self.session.clone();
        let tx = self.tx.clone();
        let entry_id = entry_id.to_owned();
        tokio::spawn(async move {
            let lines = match session.fork(&entry_id).await {
                Ok(text) => {
                    let _ = tx.send(AppEvent::UiNotify(UiMethod::SetEditorText { text }));
                    vec![Line::default(), blocks::notice(&format!("Forked into a new session: {}", file_of(&session)))]
                }
                Err(e) => vec![blocks::error(&format!("Error: {e}"))],
            };
            let _ = tx.send(AppEvent::Lines(lines));
        });
    }

    /// `/tree`: every entry of the session tree, the current leaf selected.
    pub fn open_tree_selector(&mut self) {
        self.open_tree_selector_at(None);
    }

    /// The tree with `entry_id` selected (the current leaf when `None` or not shown).
    fn open_tree_selector_at(&mut self, entry_id: Option<&str>) {
        let (items, current) = self.session.read_session(tree_items);
        if items.is_empty() {
            self.push([blocks::notice("The session tree is empty")]);
            return;
        }
        let selected = entry_id.and_then(|id| items.iter().position(|i| i.value == id)).unwrap_or(current);
        self.select = Some((Picking::Tree, Select::new("Session tree", items, selected)));
    }

    /// An entry picked in the tree: the current one stays; for another, whether to summarize the
    /// branch being left.
    pub fn tree_entry_picked(&mut self, entry_id: &str) {
        let (items, current) = self.session.read_session(tree_items);
        if items.get(current).is_some_and(|i| i.value == entry_id) {
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
        let (answer, answered) = oneshot::channel();
        let title = "Custom summarization instructions".to_owned();
        self.open_dialog(UiMethod::Editor { title, prefill: None, prompt_style: None }, answer);
        let tx = self.tx.clone();
        let entry_id = entry_id.to_owned();
        tokio::spawn(async move {
            let text = match answered.await {
                Ok(UiAnswer::Value(text)) => Some(text),
                _ => None,
            };
            let _ = tx.send(AppEvent::Tree(TreeStep::Instructions { entry_id, text }));
        });
    }

    /// A step of moving in the tree, back from its task.
    pub fn tree_step(&mut self, step: TreeStep) {
        match step {
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
        tokio::spawn(async move {
            let entries = match session.navigate_tree(&entry_id, summary).await {
                Ok(navigated) => {
                    if let Some(text) = navigated.editor_text {
                        let _ = tx.send(AppEvent::UiNotify(UiMethod::SetEditorText { text }));
                    }
                    let continuing = blocks::notice("── Continuing from the selected entry ──");
                    let mut entries = vec![Entry::Lines(vec![Line::default(), continuing])];
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

fn file_of(session: &rho_coding_agent::AgentSession) -> String {
    session.stats().session_file.unwrap_or_else(|| "a new session (not saved)".to_owned())
}

/// The first line of `text`, cut to [`PREVIEW_CHARS`].
fn preview(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or_default().trim();
    let mut cut: String = first.chars().take(PREVIEW_CHARS).collect();
    if first.chars().count() > PREVIEW_CHARS {
        cut.push('…');
    }
    cut
}

/// The tool calls of the session's assistant messages, by call id: what a tool result shows.
type Calls<'a> = HashMap<&'a str, (&'a str, &'a Map<String, Value>)>;

/// How an entry shows in the tree: role and first line, a tool result as its call (`[read:
/// src/lib.rs]`); `None` for entries not shown — model and level changes, labels, leaf markers,
/// and an assistant message with only tool calls unless it failed or is the `leaf` — whose
/// children still are.
fn describe(entry: &SessionEntry, calls: &Calls<'_>, leaf: bool) -> Option<String> {
    let (role, text) = match entry {
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::User(u) => ("user", preview(&u.text())),
            AgentMessage::Assistant(a) => {
                let text = preview(&a.text());
                let text = match a.stop_reason {
                    _ if !text.is_empty() => text,
                    StopReason::Aborted => "(aborted)".to_owned(),
                    StopReason::Error => preview(a.error_message.as_deref().unwrap_or("(error)")),
                    _ if leaf => "(no content)".to_owned(),
                    _ => return None,
                };
                ("assistant", text)
            }
            AgentMessage::ToolResult(t) => match calls.get(t.tool_call_id.as_str()) {
                Some((name, args)) => return Some(call_label(name, args)),
                None => return Some(format!("[{}]", t.tool_name)),
            },
            AgentMessage::BashExecution(b) => ("bash", preview(&b.command)),
            other => (other.role(), String::new()),
        },
        SessionEntry::Compaction(c) => ("compaction", preview(&c.summary)),
        SessionEntry::BranchSummary(_) => ("branch summary", String::new()),
        _ => return None,
    };
    Some(format!("{role}: {text}"))
}

/// A tool call in a few words, as pi's tree shows one: `[read: src/lib.rs:10-29]`, `[bash:
/// cargo test]`, `[grep: /pattern/ in src]`, else the name and the arguments' JSON, cut.
fn call_label(name: &str, args: &Map<String, Value>) -> String {
    let field = |key: &str| args.get(key).and_then(Value::as_str).map(|v| v.replace(['\n', '\t'], " "));
    let path = || field("path").unwrap_or_else(|| ".".to_owned());
    let shown = match name {
        "read" => {
            let read = rho_tools::params::read::<rho_tools::params::ReadParams>(args);
            let whole = rho_tools::params::whole;
            let (offset, limit) = read.map_or((None, None), |r| (whole(r.offset), whole(r.limit)));
            let lines = match (offset, limit) {
                (None, None) => String::new(),
                (start, Some(limit)) => {
                    let start = start.unwrap_or(1);
                    format!(":{start}-{}", start + limit.saturating_sub(1))
                }
                (Some(start), None) => format!(":{start}"),
            };
            format!("{}{lines}", path())
        }
        "write" | "edit" | "ls" => path(),
        "bash" => preview(&field("command").unwrap_or_default()),
        "grep" => format!("/{}/ in {}", field("pattern").unwrap_or_default(), path()),
        "find" => format!("{} in {}", field("pattern").unwrap_or_default(), path()),
        _ => {
            let json = Value::Object(args.clone()).to_string();
            let cut: String = json.chars().take(40).collect();
            if json.chars().count() > 40 { format!("{cut}…") } else { cut }
        }
    };
    format!("[{name}: {shown}]")
}

/// The tree depth-first, oldest first, as list items (the value is the entry id), and the index
/// of the current leaf (the last shown entry on its branch). A branch point indents its
/// children one step.
fn tree_items(session: &Session) -> (Vec<SelectItem>, usize) {
    let entries: Vec<&SessionEntry> = session.entries().iter().filter(|e| !e.is_leaf_marker()).collect();
    let mut children: HashMap<Option<&str>, Vec<&SessionEntry>> = HashMap::new();
    for entry in &entries {
        children.entry(entry.parent_id().map(|p| p.as_str())).or_default().push(entry);
    }
    let mut calls: Calls<'_> = HashMap::new();
    for entry in &entries {
        if let SessionEntry::Message(m) = entry
            && let AgentMessage::Assistant(a) = &m.message
        {
            for block in &a.content {
                if let AssistantContent::ToolCall(call) = block {
                    calls.insert(call.id.as_str(), (call.name.as_str(), &call.arguments));
                }
            }
        }
    }
    let branch = session.branch_entries();
    let leaf = branch.last().map(|e| e.id().to_string());
    let is_leaf = |e: &SessionEntry| leaf.as_deref() == Some(e.id().as_str());
    let current = branch.iter().rev().find(|e| describe(e, &calls, is_leaf(e)).is_some()).map(|e| e.id().to_string());
    let mut items = Vec::new();
    let mut selected = 0;
    // (entry, depth), walked with a stack so that the first child comes out first.
    let mut stack: Vec<(&SessionEntry, usize)> = Vec::new();
    push_children(&mut stack, &children, None, 0);
    let roots = children.get(&None).map_or(0, Vec::len);
    while let Some((entry, depth)) = stack.pop() {
        if let Some(text) = describe(entry, &calls, is_leaf(entry)) {
            let id = entry.id().to_string();
            let is_current = current.as_deref() == Some(id.as_str());
            if is_current {
                selected = items.len();
            }
            let indent = "  ".repeat(depth.saturating_sub(usize::from(roots > 1)));
            items.push(SelectItem {
                label: format!("{indent}{text}"),
                detail: if is_current { "← current".to_owned() } else { String::new() },
                value: id,
            });
        }
        push_children(&mut stack, &children, Some(entry.id().as_str()), depth);
    }
    (items, selected)
}

/// Puts the children of `parent` on `stack`, one step deeper when there is more than one.
fn push_children<'a>(
    stack: &mut Vec<(&'a SessionEntry, usize)>,
    children: &HashMap<Option<&str>, Vec<&'a SessionEntry>>,
    parent: Option<&str>,
    depth: usize,
) {
    let kids = children.get(&parent).map(Vec::as_slice).unwrap_or_default();
    let depth = if kids.len() > 1 { depth + 1 } else { depth };
    stack.extend(kids.iter().rev().map(|k| (*k, depth)));
}

#[cfg(test)]
mod tests {
    use rho_types::AgentMessage;
    use rho_types::types::UserMessage;

    use super::*;

    fn user(session: &mut Session, text: &str) -> String {
        session.append_message(&AgentMessage::User(UserMessage::prompt(text, Vec::new()))).unwrap().to_string()
    }

    fn message(json: serde_json::Value) -> AgentMessage {
        serde_json::from_value(json).unwrap()
    }

    fn assistant(content: serde_json::Value, stop_reason: &str) -> AgentMessage {
        message(serde_json::json!({"role": "assistant", "content": content, "api": "anthropic-messages",
            "provider": "mock", "model": "m", "stopReason": stop_reason, "timestamp": 0,
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}))
    }

    #[test]
    fn tool_calls_show_what_they_did_and_silent_assistant_turns_are_left_out() {
        let mut session = Session::in_memory(std::path::Path::new("/tmp"));
        user(&mut session, "look at it");
        let call = serde_json::json!([{"type": "toolCall", "id": "c1", "name": "read",
            "arguments": {"path": "src/lib.rs", "offset": 10, "limit": 20}}]);
        session.append_message(&assistant(call, "toolUse")).unwrap();
        session
            .append_message(&message(serde_json::json!({"role": "toolResult", "toolCallId": "c1",
                "toolName": "read", "content": [{"type": "text", "text": "fn x() {}"}], "isError": false,
                "timestamp": 0})))
            .unwrap();
        session
            .append_message(&assistant(serde_json::json!([{"type": "text", "text": "It is fine."}]), "stop"))
            .unwrap();
        let (items, _) = tree_items(&session);
        let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["user: look at it", "[read: src/lib.rs:10-29]", "assistant: It is fine."]);
    }

    #[test]
    fn a_branch_point_indents_its_children_and_the_leaf_is_selected() {
        let mut session = Session::in_memory(std::path::Path::new("/tmp"));
        let first = user(&mut session, "first");
        user(&mut session, "second");
        session.branch(&first).unwrap();
        user(&mut session, "other");
        let (items, selected) = tree_items(&session);
        let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["user: first", "  user: second", "  user: other"]);
        assert_eq!(selected, 2);
        assert_eq!(items[2].detail, "← current");
    }
}
