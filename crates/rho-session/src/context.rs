//! Rebuilding what the agent resumes with from one branch of the tree: the messages (cut by the
//! last compaction on the branch), the thinking level and the model (pi's
//! `buildSessionContext`).
//!
//! Only `message`, `custom_message`, `branch_summary` and `compaction` entries produce messages;
//! `model_change`, `thinking_level_change` and assistant messages set the model and level;
//! `context_edit` entries (pi 1.6) leave out or replace the content of an earlier message on the
//! branch, the latest edit of a target winning; every other entry type, known or not, is ignored.
//!
//! After a compaction the context starts with the prompt and tools it declared (its
//! `systemMessage`) and its summary; `system` messages in the part it kept are not replayed again.

use std::collections::HashMap;

use rho_types::ThinkingLevel;
use rho_types::types::{AssistantContent, TextContent, UserMessageContent};
use rho_types::{AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage};
use serde_json::Value;

use crate::entry::{CompactionEntry, ContextEditEntry, SessionEntry};
use crate::id::iso_to_ms;

/// A model named by provider and id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    pub provider: String,
    pub model_id: String,
}

/// The state of one branch, ready to hand to the agent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionContext {
    pub messages: Vec<AgentMessage>,
    /// The last `thinking_level_change` on the branch. `None` when the branch has none (pi reports
    /// `"off"` then; a caller restoring a session applies its default and records it).
    pub thinking_level: Option<ThinkingLevel>,
    /// The last `model_change` or assistant message's model on the branch.
    pub model: Option<ModelRef>,
    /// The compaction in force (the last one on the branch).
    pub compaction: Option<CompactionEntry>,
}

/// Converts an entry into the message the agent sees, if it is one.
pub fn entry_message(entry: &SessionEntry) -> Option<AgentMessage> {
    match entry {
        SessionEntry::Message(m) => Some(m.message.clone()),
        SessionEntry::CustomMessage(c) => Some(AgentMessage::Custom(CustomMessage {
            custom_type: c.custom_type.clone(),
            content: c.content.clone(),
            display: c.display,
            details: c.details.clone(),
            attribution: c.attribution,
            timestamp: iso_to_ms(&c.timestamp).unwrap_or_default(),
        })),
        SessionEntry::BranchSummary(b) if !b.summary.is_empty() => {
            Some(AgentMessage::BranchSummary(BranchSummaryMessage {
                summary: b.summary.clone(),
                from_id: b.from_id.clone(),
                timestamp: iso_to_ms(&b.timestamp).unwrap_or_default(),
            }))
        }
        _ => None,
    }
}

/// The model an xcsh-style `model_change` (`"model":"provider/id"`) names.
fn fork_model_change(entry: &SessionEntry) -> Option<ModelRef> {
    let SessionEntry::Other(o) = entry else {
        return None;
    };
    if o.entry_type() != "model_change" {
        return None;
    }
    let (provider, model_id) = o.raw().get("model").and_then(Value::as_str)?.split_once('/')?;
    Some(ModelRef { provider: provider.to_owned(), model_id: model_id.to_owned() })
}

/// Builds the context of the branch `path` (root first).
pub fn build_context(path: &[&SessionEntry]) -> SessionContext {
    let mut context = SessionContext::default();
    let mut compaction_at = None;
    for (i, entry) in path.iter().enumerate() {
        match entry {
            SessionEntry::ThinkingLevelChange(t) => context.thinking_level = t.thinking_level,
            SessionEntry::ModelChange(m) => {
                context.model = Some(ModelRef { provider: m.provider.clone(), model_id: m.model_id.clone() });
            }
            SessionEntry::Message(m) => {
                if let AgentMessage::Assistant(a) = &m.message {
                    context.model = Some(ModelRef { provider: a.provider.clone(), model_id: a.model.clone() });
                }
            }
            SessionEntry::Compaction(_) => compaction_at = Some(i),
            other => {
                if let Some(model) = fork_model_change(other) {
                    context.model = Some(model);
                }
            }
        }
    }

    let edits = context_edits(path);
    let message = |e: &&SessionEntry| edited_message(e, &edits);
    let Some(at) = compaction_at else {
        context.messages = path.iter().filter_map(message).collect();
        return context;
    };
    let SessionEntry::Compaction(compaction) = path[at] else {
        return context;
    };
    if let Some(system) = &compaction.system_message {
        context.messages.push(AgentMessage::System(system.clone()));
    }
    context.messages.push(AgentMessage::CompactionSummary(CompactionSummaryMessage {
        summary: compaction.summary.clone(),
        short_summary: compaction.short_summary.clone(),
        tokens_before: compaction.tokens_before,
        timestamp: iso_to_ms(&compaction.timestamp).unwrap_or_default(),
    }));
    let first_kept = compaction.first_kept_entry_id.as_ref();
    let kept_from = path[..at].iter().position(|e| Some(e.id()) == first_kept).unwrap_or(at);
    let kept = path[kept_from..at].iter().filter_map(message).filter(|m| !matches!(m, AgentMessage::System(_)));
    context.messages.extend(kept);
    context.messages.extend(path[at + 1..].iter().filter_map(message));
    context.compaction = Some(compaction.clone());
    context
}

/// The latest `context_edit` of each target on the branch.
fn context_edits<'a>(path: &[&'a SessionEntry]) -> HashMap<&'a str, &'a ContextEditEntry> {
    let mut edits = HashMap::new();
    for entry in path {
        if let SessionEntry::ContextEdit(edit) = entry {
            edits.insert(edit.target_id.as_str(), edit);
        }
    }
    edits
}

/// An entry's message with the branch's edit of it applied: none when the edit leaves it out.
fn edited_message(entry: &SessionEntry, edits: &HashMap<&str, &ContextEditEntry>) -> Option<AgentMessage> {
    let message = entry_message(entry)?;
    let Some(edit) = edits.get(entry.id().as_str()) else {
        return Some(message);
    };
    // `replacement: null` leaves the message out.
    edit.replacement.as_ref()?;
    match edit.content() {
        Some(content) => Some(replace_content(message, content.clone())),
        None => Some(message),
    }
}

/// `message` with its content replaced (pi's rule: the replacement keeps the message's role and
/// metadata; a string for an assistant or tool-result message becomes one text block). A
/// replacement that is not content of the message's role leaves the message as it was.
fn replace_content(message: AgentMessage, content: Value) -> AgentMessage {
    let as_text = |content: &Value| content.as_str().map(|s| s.to_owned());
    let user_content = || serde_json::from_value::<UserMessageContent>(content.clone()).ok();
    match message {
        AgentMessage::User(mut u) => {
            u.content = user_content().unwrap_or(u.content);
            AgentMessage::User(u)
        }
        AgentMessage::Developer(mut u) => {
            u.content = user_content().unwrap_or(u.content);
            AgentMessage::Developer(u)
        }
        AgentMessage::Custom(mut c) => {
            c.content = user_content().unwrap_or(c.content);
            AgentMessage::Custom(c)
        }
        AgentMessage::HookMessage(mut c) => {
            c.content = user_content().unwrap_or(c.content);
            AgentMessage::HookMessage(c)
        }
        AgentMessage::Assistant(mut a) => {
            a.content = match as_text(&content) {
                Some(text) => vec![AssistantContent::Text(TextContent::new(text))],
                None => serde_json::from_value::<Vec<AssistantContent>>(content).unwrap_or(a.content),
            };
            AgentMessage::Assistant(a)
        }
        AgentMessage::ToolResult(mut t) => {
            t.content = user_content().map_or(t.content, UserMessageContent::into_blocks);
            AgentMessage::ToolResult(t)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::entry::{BranchSummaryEntry, CustomMessageEntry, OtherEntry};
    use crate::id::EntryId;
    use rho_types::types::UserMessageContent;

    fn branch_summary(summary: &str) -> SessionEntry {
        SessionEntry::BranchSummary(BranchSummaryEntry {
            id: EntryId::from("b"),
            parent_id: None,
            timestamp: "2026-03-15T10:00:00.000Z".into(),
            from_id: "root".into(),
            summary: summary.into(),
            details: None,
            from_hook: None,
        })
    }

    #[test]
    fn only_messages_custom_messages_and_non_empty_branch_summaries_are_messages() {
        assert_eq!(entry_message(&branch_summary("")), None);
        let Some(AgentMessage::BranchSummary(b)) = entry_message(&branch_summary("went elsewhere")) else {
            panic!("branch summary expected");
        };
        assert_eq!(
            (b.summary.as_str(), b.from_id.as_str(), b.timestamp),
            ("went elsewhere", "root", 1_773_568_800_000)
        );

        let custom = SessionEntry::CustomMessage(CustomMessageEntry {
            custom_type: "note".into(),
            content: UserMessageContent::Text("hi".into()),
            display: true,
            details: Some(json!({"k": 1})),
            attribution: None,
            id: EntryId::from("c"),
            parent_id: None,
            timestamp: "not a time".into(),
        });
        let Some(AgentMessage::Custom(c)) = entry_message(&custom) else { panic!("custom expected") };
        // An unreadable entry time gives 0 rather than an error.
        assert_eq!((c.timestamp, c.details), (0, Some(json!({"k": 1}))));

        let other = OtherEntry::from_value(json!({"type":"ttsr_injection","id":"o","injectedRules":[]})).unwrap();
        assert_eq!(entry_message(&SessionEntry::Other(other)), None);
    }

    #[test]
    fn a_fork_model_change_needs_a_provider_and_an_id() {
        let entry = |model: &str| {
            SessionEntry::Other(
                OtherEntry::from_value(json!({"type":"model_change","id":"m","parentId":null,"model":model})).unwrap(),
            )
        };
        let named = entry("openai/gpt-5/mini");
        assert_eq!(
            build_context(&[&named]).model,
            Some(ModelRef { provider: "openai".into(), model_id: "gpt-5/mini".into() })
        );
        assert_eq!(build_context(&[&entry("no-slash")]).model, None);
    }

    #[test]
    fn an_empty_path_is_an_empty_context() {
        assert_eq!(build_context(&[]), SessionContext::default());
    }
}
