//! One session entry in the page: its kind, a one-line preview for the sidebar tree, and the
//! element the message view shows (`<article class="entry …" data-id="…">`).
//!
//! Conversation entries (messages, custom messages, summaries) get a head with their role,
//! label and time; bookkeeping entries (model and thinking-level changes, labels, names,
//! extension state, types rho does not know) are one muted line. rho's `rho.leaf` markers are
//! not shown: they only record where the leaf was.

use rho_session::SessionEntry;
use rho_types::AgentMessage;

use super::fragments::{Html, format_tokens, one_line, push_time};
use super::message::{message_class, push_custom, push_message, push_summary};

/// Characters of a sidebar preview.
const PREVIEW_CHARS: usize = 100;

/// The entry's kind, used as its CSS class and in the tree data.
pub fn entry_kind(entry: &SessionEntry) -> &'static str {
    match entry {
        SessionEntry::Message(m) => message_class(&m.message),
        SessionEntry::ModelChange(_) => "model-change",
        SessionEntry::ThinkingLevelChange(_) => "thinking-level",
        SessionEntry::Compaction(_) => "compaction",
        SessionEntry::BranchSummary(_) => "branch-summary",
        SessionEntry::Custom(c) if c.custom_type == rho_session::LEAF_MARKER_TYPE => "leaf-marker",
        SessionEntry::Custom(_) => "extension-state",
        SessionEntry::CustomMessage(_) => "custom",
        SessionEntry::Label(_) => "label",
        SessionEntry::SessionInfo(_) => "session-info",
        SessionEntry::ContextEdit(_) => "context-edit",
        SessionEntry::Usage(_) => "usage",
        SessionEntry::Other(_) => "other",
    }
}

fn role_name(entry: &SessionEntry) -> &'static str {
    match entry {
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::User(_) => "User",
            AgentMessage::Developer(_) => "Developer",
            AgentMessage::Assistant(_) => "Assistant",
            AgentMessage::ToolResult(_) => "Tool result",
            AgentMessage::BashExecution(_) => "Shell",
            AgentMessage::Custom(_) | AgentMessage::HookMessage(_) => "Custom",
            AgentMessage::BranchSummary(_) => "Branch summary",
            AgentMessage::CompactionSummary(_) => "Compaction",
            AgentMessage::System(_) => "System",
        },
        SessionEntry::CustomMessage(_) => "Custom",
        SessionEntry::Compaction(_) => "Compaction",
        SessionEntry::BranchSummary(_) => "Branch summary",
        _ => "",
    }
}

/// A one-line description of the entry for the sidebar tree.
pub fn entry_preview(entry: &SessionEntry) -> String {
    let line = |text: &str| one_line(text, PREVIEW_CHARS);
    match entry {
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::User(u) | AgentMessage::Developer(u) => line(&u.content.text_joined(" ")),
            AgentMessage::Assistant(a) => {
                let text = line(&a.text());
                if !text.is_empty() {
                    return text;
                }
                let calls: Vec<&str> = a.tool_calls().map(|c| c.name.as_str()).collect();
                if !calls.is_empty() {
                    return format!("→ {}", calls.join(", "));
                }
                match &a.error_message {
                    Some(error) => line(&format!("{:?}: {error}", a.stop_reason)),
                    None => "(no text)".to_owned(),
                }
            }
            AgentMessage::ToolResult(t) => line(&format!("{}: {}", t.tool_name, one_line(&t.text(), PREVIEW_CHARS))),
            AgentMessage::BashExecution(b) => line(&format!("$ {}", b.command)),
            AgentMessage::Custom(c) | AgentMessage::HookMessage(c) => {
                line(&format!("[{}] {}", c.custom_type, one_line(&c.content.text_joined(" "), PREVIEW_CHARS)))
            }
            AgentMessage::BranchSummary(b) => line(&format!("Branch summary: {}", b.summary)),
            AgentMessage::CompactionSummary(c) => line(&format!("Compaction: {}", c.summary)),
            AgentMessage::System(s) => line(&format!("System: {}", s.summary())),
        },
        SessionEntry::ModelChange(m) => format!("Model: {}/{}", m.provider, m.model_id),
        SessionEntry::ThinkingLevelChange(t) => {
            format!("Thinking: {}", t.thinking_level.map_or("unset", |l| l.as_str()))
        }
        SessionEntry::Compaction(c) => format!("Compaction ({} tokens before)", format_tokens(c.tokens_before)),
        SessionEntry::BranchSummary(b) => line(&format!("Branch summary: {}", one_line(&b.summary, PREVIEW_CHARS))),
        SessionEntry::Custom(c) => format!("[{}]", c.custom_type),
        SessionEntry::CustomMessage(c) => {
            line(&format!("[{}] {}", c.custom_type, one_line(&c.content.text_joined(" "), PREVIEW_CHARS)))
        }
        SessionEntry::Label(l) => match l.label.as_deref().filter(|s| !s.is_empty()) {
            Some(text) => line(&format!("Label {}: {text}", l.target_id)),
            None => format!("Label cleared on {}", l.target_id),
        },
        SessionEntry::SessionInfo(i) => line(&format!("Name: {}", i.name.as_deref().unwrap_or_default())),
        SessionEntry::ContextEdit(e) => match e.replacement {
            None => format!("Context edit: {} left out", e.target_id),
            Some(_) => format!("Context edit: {} replaced", e.target_id),
        },
        SessionEntry::Usage(u) => format!("Usage ({}): {} tokens", u.kind, format_tokens(u.usage.total_tokens)),
        SessionEntry::Other(o) => format!("[{}]", o.entry_type()),
    }
}

fn open_entry(html: &mut Html, entry: &SessionEntry, class: &str) {
    html.push("<article class=\"entry ");
    html.push(class);
    html.push(" ");
    html.push(entry_kind(entry));
    html.push("\" id=\"entry-");
    html.text(entry.id().as_str());
    html.push("\" data-id=\"");
    html.text(entry.id().as_str());
    html.push("\">");
}

/// Appends the entry as the message view shows it (nothing for a leaf marker). `label` is the
/// bookmark set on it, if any.
pub fn push_entry(html: &mut Html, entry: &SessionEntry, label: Option<&str>) {
    if entry.is_leaf_marker() {
        return;
    }
    let role = role_name(entry);
    if role.is_empty() {
        open_entry(html, entry, "meta-entry");
        html.text(&entry_preview(entry));
        push_label(html, label);
        html.push(" ");
        push_time(&mut html.out, entry.timestamp());
        html.push("</article>\n");
        return;
    }
    open_entry(html, entry, "message");
    html.push("<div class=\"entry-head\"><span class=\"role\">");
    html.text(role);
    html.push("</span>");
    push_label(html, label);
    push_time(&mut html.out, entry.timestamp());
    html.push("</div>");
    match entry {
        SessionEntry::Message(m) => push_message(html, &m.message),
        SessionEntry::CustomMessage(c) => push_custom(html, &c.custom_type, &c.content, c.display),
        SessionEntry::Compaction(c) => {
            let title = format!("Earlier conversation summarized ({} tokens before)", format_tokens(c.tokens_before));
            push_summary(html, &title, &c.summary);
        }
        SessionEntry::BranchSummary(b) => push_summary(html, "Summary of the branch left behind", &b.summary),
        _ => {}
    }
    html.push("</article>\n");
}

fn push_label(html: &mut Html, label: Option<&str>) {
    if let Some(label) = label {
        html.push(" <span class=\"badge label\">");
        html.text(label);
        html.push("</span> ");
    }
}
