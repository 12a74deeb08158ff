//! The session tree as the `/tree` list shows it: each entry in a line, as pi's tree shows it,
//! with its label; the entries the filter keeps (pi's modes: default, no tools, user messages,
//! labeled, all); branch points indented.

use std::collections::HashMap;

use rho_session::{Session, SessionEntry};
use rho_types::AgentMessage;
use rho_types::types::{AssistantContent, StopReason};
use serde_json::{Map, Value};

use super::select::SelectItem;

/// Characters of an entry's first line shown in a list.
pub const PREVIEW_CHARS: usize = 70;

/// The first line of `text`, cut to [`PREVIEW_CHARS`].
pub fn preview(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or_default().trim();
    let mut cut: String = first.chars().take(PREVIEW_CHARS).collect();
    if first.chars().count() > PREVIEW_CHARS {
        cut.push('…');
    }
    cut
}

/// Which entries the tree shows (pi's filter modes; `treeFilterMode` picks the first).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TreeFilter {
    /// Everything but bookkeeping.
    #[default]
    Default,
    /// Nor tool results.
    NoTools,
    /// User messages only.
    UserOnly,
    /// Labeled entries only.
    LabeledOnly,
    /// Everything.
    All,
}

impl TreeFilter {
    /// The order Ctrl+O walks.
    const ORDER: [Self; 5] = [Self::Default, Self::NoTools, Self::UserOnly, Self::LabeledOnly, Self::All];

    /// The setting's value (`default`, `no-tools`, `user-only`, `labeled-only`, `all`); the
    /// default view for anything else.
    pub fn from_setting(value: Option<&str>) -> Self {
        match value {
            Some("no-tools") => Self::NoTools,
            Some("user-only") => Self::UserOnly,
            Some("labeled-only") => Self::LabeledOnly,
            Some("all") => Self::All,
            _ => Self::Default,
        }
    }

    /// The filter a Ctrl key picks in the tree: D, T, U, L, A; O the next, Shift+O the one
    /// before.
    pub fn after_key(self, key: char) -> Option<Self> {
        let at = Self::ORDER.iter().position(|f| *f == self).unwrap_or(0);
        Some(match key {
            'd' => Self::Default,
            't' => Self::NoTools,
            'u' => Self::UserOnly,
            'l' => Self::LabeledOnly,
            'a' => Self::All,
            'o' => Self::ORDER[(at + 1) % Self::ORDER.len()],
            'O' => Self::ORDER[(at + Self::ORDER.len() - 1) % Self::ORDER.len()],
            _ => return None,
        })
    }

    /// What the title says of the filter, as pi's tree does.
    pub fn status(self) -> &'static str {
        match self {
            Self::Default => "",
            Self::NoTools => " [no-tools]",
            Self::UserOnly => " [user]",
            Self::LabeledOnly => " [labeled]",
            Self::All => " [all]",
        }
    }

    fn keeps(self, kind: Kind, labeled: bool) -> bool {
        match self {
            Self::Default => kind != Kind::Bookkeeping,
            Self::NoTools => !matches!(kind, Kind::Bookkeeping | Kind::ToolResult),
            Self::UserOnly => kind == Kind::User,
            Self::LabeledOnly => labeled,
            Self::All => true,
        }
    }
}

/// The tool calls of the session's assistant messages, by call id: what a tool result shows.
type Calls<'a> = HashMap<&'a str, (&'a str, &'a Map<String, Value>)>;

/// What an entry is, for the filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    ToolResult,
    /// Model and level changes, labels, extensions' entries, the session's name: hidden but in
    /// the `all` view.
    Bookkeeping,
    Other,
}

/// How an entry shows in the tree, as pi shows it: role and first line, a tool result as its
/// call (`[read: src/lib.rs]`), bookkeeping in brackets (`[model: id]`); `None` for a leaf
/// marker and for an assistant message with only tool calls unless it failed or is the `leaf`
/// (its children still show).
fn describe(entry: &SessionEntry, calls: &Calls<'_>, leaf: bool) -> Option<(Kind, String)> {
    let said = |role: &str, text: String| Some((Kind::Other, format!("{role}: {text}")));
    match entry {
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::User(u) => Some((Kind::User, format!("user: {}", preview(&u.text())))),
            AgentMessage::Assistant(a) => {
                let text = preview(&a.text());
                let text = match a.stop_reason {
                    _ if !text.is_empty() => text,
                    StopReason::Aborted => "(aborted)".to_owned(),
                    StopReason::Error => preview(a.error_message.as_deref().unwrap_or("(error)")),
                    _ if leaf => "(no content)".to_owned(),
                    _ => return None,
                };
                said("assistant", text)
            }
            AgentMessage::ToolResult(t) => {
                let shown = match calls.get(t.tool_call_id.as_str()) {
                    Some((name, args)) => call_label(name, args),
                    None => format!("[{}]", t.tool_name),
                };
                Some((Kind::ToolResult, shown))
            }
            AgentMessage::BashExecution(b) => said("[bash]", preview(&b.command)),
            // The declared prompt and tools (pi 1.6): bookkeeping, like a model change.
            AgentMessage::System(_) => Some((Kind::Bookkeeping, "[system prompt]".to_owned())),
            other => Some((Kind::Other, format!("[{}]", other.role()))),
        },
        SessionEntry::CustomMessage(c) => said(&format!("[{}]", c.custom_type), preview(&c.content.text_joined(""))),
        SessionEntry::Compaction(c) => {
            Some((Kind::Other, format!("[compaction: {}k tokens]", (c.tokens_before as f64 / 1000.0).round())))
        }
        SessionEntry::BranchSummary(b) => said("[branch summary]", preview(&b.summary)),
        SessionEntry::ModelChange(m) => Some((Kind::Bookkeeping, format!("[model: {}]", m.model_id))),
        SessionEntry::ThinkingLevelChange(t) => {
            let level = t.thinking_level.map_or("off", |level| level.as_str());
            Some((Kind::Bookkeeping, format!("[thinking: {level}]")))
        }
        SessionEntry::Custom(c) => Some((Kind::Bookkeeping, format!("[custom: {}]", c.custom_type))),
        SessionEntry::Label(l) => {
            Some((Kind::Bookkeeping, format!("[label: {}]", l.label.as_deref().unwrap_or("(cleared)"))))
        }
        SessionEntry::SessionInfo(i) => {
            Some((Kind::Bookkeeping, format!("[title: {}]", i.name.as_deref().unwrap_or("empty"))))
        }
        _ => None,
    }
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

/// The tree depth-first, oldest first, as list items (the value is the entry id) with the
/// entries `filter` keeps and a label as `[label] ` before the text, and the index of the current
/// leaf (the last shown entry on its branch; `None` when the filter hides its branch). A branch
/// point indents its children one step.
pub fn tree_items(session: &Session, filter: TreeFilter) -> (Vec<SelectItem>, Option<usize>) {
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
    let shown = |e: &SessionEntry| {
        let label = session.label(e.id().as_str());
        describe(e, &calls, is_leaf(e)).filter(|(kind, _)| filter.keeps(*kind, label.is_some())).map(|(_, text)| {
            match label {
                Some(label) => format!("[{label}] {text}"),
                None => text,
            }
        })
    };
    let current = branch.iter().rev().find(|e| shown(e).is_some()).map(|e| e.id().to_string());
    let mut items = Vec::new();
    let mut selected = None;
    // (entry, depth), walked with a stack so that the first child comes out first.
    let mut stack: Vec<(&SessionEntry, usize)> = Vec::new();
    push_children(&mut stack, &children, None, 0);
    let roots = children.get(&None).map_or(0, Vec::len);
    while let Some((entry, depth)) = stack.pop() {
        if let Some(text) = shown(entry) {
            let id = entry.id().to_string();
            let is_current = current.as_deref() == Some(id.as_str());
            if is_current {
                selected = Some(items.len());
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
        let (items, _) = tree_items(&session, TreeFilter::Default);
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
        let (items, selected) = tree_items(&session, TreeFilter::Default);
        let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["user: first", "  user: second", "  user: other"]);
        assert_eq!(selected, Some(2));
        assert_eq!(items[2].detail, "← current");
    }

    /// A session with the declared prompt, a user message (labeled `start`), a tool call and its
    /// result, an answer, and a model change.
    fn conversation() -> Session {
        let mut session = Session::in_memory(std::path::Path::new("/tmp"));
        let declared =
            serde_json::json!({"role": "system", "content": "", "sections": {"preamble": "P"}, "timestamp": 0});
        session.append_message(&message(declared)).unwrap();
        let question = user(&mut session, "look at it");
        let call = serde_json::json!([{"type": "toolCall", "id": "c1", "name": "ls", "arguments": {"path": "src"}}]);
        session.append_message(&assistant(call, "toolUse")).unwrap();
        session
            .append_message(&message(serde_json::json!({"role": "toolResult", "toolCallId": "c1",
                "toolName": "ls", "content": [{"type": "text", "text": "lib.rs"}], "isError": false,
                "timestamp": 0})))
            .unwrap();
        session.append_message(&assistant(serde_json::json!([{"type": "text", "text": "One file."}]), "stop")).unwrap();
        session.append_model_change("mock", "other-model").unwrap();
        session.append_label(&question, Some("start")).unwrap();
        session
    }

    fn shown(session: &Session, filter: TreeFilter) -> Vec<String> {
        tree_items(session, filter).0.into_iter().map(|i| i.label).collect()
    }

    #[test]
    fn each_filter_keeps_what_pi_s_keeps() {
        let session = conversation();
        assert_eq!(
            shown(&session, TreeFilter::Default),
            ["[start] user: look at it", "[ls: src]", "assistant: One file."]
        );
        assert_eq!(shown(&session, TreeFilter::NoTools), ["[start] user: look at it", "assistant: One file."]);
        assert_eq!(shown(&session, TreeFilter::UserOnly), ["[start] user: look at it"]);
        assert_eq!(shown(&session, TreeFilter::LabeledOnly), ["[start] user: look at it"]);
        assert_eq!(
            shown(&session, TreeFilter::All),
            [
                "[system prompt]",
                "[start] user: look at it",
                "[ls: src]",
                "assistant: One file.",
                "[model: other-model]",
                "[label: start]"
            ]
        );
    }

    #[test]
    fn the_current_entry_is_the_last_the_filter_keeps_on_the_branch() {
        let session = conversation();
        let current = |filter| {
            let (items, at) = tree_items(&session, filter);
            at.map(|at| items[at].label.clone())
        };
        assert_eq!(current(TreeFilter::Default).as_deref(), Some("assistant: One file."));
        assert_eq!(current(TreeFilter::UserOnly).as_deref(), Some("[start] user: look at it"));
        assert_eq!(current(TreeFilter::All).as_deref(), Some("[label: start]"));
        let empty = Session::in_memory(std::path::Path::new("/tmp"));
        assert_eq!(tree_items(&empty, TreeFilter::LabeledOnly).1, None);
    }

    #[test]
    fn the_keys_and_the_setting_pick_filters_as_pi_s_do() {
        assert_eq!(TreeFilter::from_setting(Some("no-tools")), TreeFilter::NoTools);
        assert_eq!(TreeFilter::from_setting(Some("bogus")), TreeFilter::Default);
        assert_eq!(TreeFilter::from_setting(None), TreeFilter::Default);
        assert_eq!(TreeFilter::Default.after_key('u'), Some(TreeFilter::UserOnly));
        assert_eq!(TreeFilter::All.after_key('o'), Some(TreeFilter::Default));
        assert_eq!(TreeFilter::Default.after_key('O'), Some(TreeFilter::All));
        assert_eq!(TreeFilter::NoTools.after_key('O'), Some(TreeFilter::Default));
        assert_eq!(TreeFilter::Default.after_key('x'), None);
        assert_eq!(TreeFilter::LabeledOnly.status(), " [labeled]");
    }
}
