//! The entries of a session file (every line after the header), one struct per entry type.
//!
//! Field order in each struct is the key order pi writes, so the derived serializer produces
//! byte-identical lines: most entries put `id, parentId, timestamp` first, `custom` and
//! `custom_message` put `customType` (and their payload) before them. The `type` tag comes from
//! [`SessionEntry`]. Entry types rho does not model (the forks' `ttsr_injection`, `mode_change`,
//! …) and known types whose fields do not have the expected shape are kept whole as
//! [`OtherEntry`], so a line is never lost and is written back verbatim.

use rho_types::AgentMessage;
use rho_types::types::{Attribution, Usage, UserMessageContent};
use rho_types::{SystemMessage, ThinkingLevel};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::id::EntryId;

/// `customType` of the marker entry rho appends when the leaf moves without an append.
pub const LEAF_MARKER_TYPE: &str = "rho.leaf";

/// A conversation message (`message` entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageEntry {
    pub id: EntryId,
    #[serde(default)]
    pub parent_id: Option<EntryId>,
    #[serde(default)]
    pub timestamp: String,
    pub message: AgentMessage,
}

/// The model was chosen or changed (`model_change`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelChangeEntry {
    pub id: EntryId,
    #[serde(default)]
    pub parent_id: Option<EntryId>,
    #[serde(default)]
    pub timestamp: String,
    pub provider: String,
    pub model_id: String,
}

/// The thinking level changed (`thinking_level_change`). xcsh writes `null` for "unset".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingLevelChangeEntry {
    pub id: EntryId,
    #[serde(default)]
    pub parent_id: Option<EntryId>,
    #[serde(default)]
    pub timestamp: String,
    pub thinking_level: Option<ThinkingLevel>,
}

/// History before `first_kept_entry_id` was summarized (`compaction`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionEntry {
    pub id: EntryId,
    #[serde(default)]
    pub parent_id: Option<EntryId>,
    #[serde(default)]
    pub timestamp: String,
    pub summary: String,
    /// Absent only in migrated version-1 files whose index pointed nowhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_kept_entry_id: Option<EntryId>,
    #[serde(default)]
    pub tokens_before: u64,
    /// pi 1.6: the prompt and tools declared up to the compaction, replayed into one message;
    /// the compacted context starts with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_message: Option<SystemMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
    /// xcsh: a short PR-style summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_summary: Option<String>,
    /// xcsh: extension data kept with the compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_data: Option<Value>,
}

/// A summary of the branch the user navigated away from (`branch_summary`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryEntry {
    pub id: EntryId,
    #[serde(default)]
    pub parent_id: Option<EntryId>,
    #[serde(default)]
    pub timestamp: String,
    /// The new leaf at the time of writing, or `"root"`; informational only.
    #[serde(default)]
    pub from_id: String,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
}

/// Extension state, never part of the model's context (`custom`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    pub custom_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    pub id: EntryId,
    #[serde(default)]
    pub parent_id: Option<EntryId>,
    #[serde(default)]
    pub timestamp: String,
}

/// An injected message that is part of the model's context as user text (`custom_message`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageEntry {
    pub custom_type: String,
    pub content: UserMessageContent,
    #[serde(default)]
    pub display: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// xcsh: who initiated the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    pub id: EntryId,
    #[serde(default)]
    pub parent_id: Option<EntryId>,
    #[serde(default)]
    pub timestamp: String,
}

/// A bookmark on another entry; an absent or empty label clears it (`label`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelEntry {
    pub id: EntryId,
    #[serde(default)]
    pub parent_id: Option<EntryId>,
    #[serde(default)]
    pub timestamp: String,
    pub target_id: EntryId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// Session metadata: the display name (`session_info`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoEntry {
    pub id: EntryId,
    #[serde(default)]
    pub parent_id: Option<EntryId>,
    #[serde(default)]
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// pi 1.6: an append-only edit of an earlier message in future context (`context_edit`): a
/// `null` replacement leaves the target out, any other replaces its content. The target stays
/// as it was in the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextEditEntry {
    pub id: EntryId,
    #[serde(default)]
    pub parent_id: Option<EntryId>,
    #[serde(default)]
    pub timestamp: String,
    pub target_id: EntryId,
    /// `None` (`null` in the file): the target is left out. Otherwise `{"content": …}`, the
    /// target's new content: a string or content blocks of the target's role.
    #[serde(default)]
    pub replacement: Option<Value>,
}

impl ContextEditEntry {
    /// The target's new content; `None` when the edit leaves the target out (or says nothing
    /// usable). Content given bare (not under `content`) is taken too.
    pub fn content(&self) -> Option<&Value> {
        let replacement = self.replacement.as_ref()?;
        match replacement {
            Value::Object(fields) => fields.get("content").filter(|c| c.is_string() || c.is_array()),
            Value::String(_) | Value::Array(_) => Some(replacement),
            _ => None,
        }
    }
}

/// pi 1.6: model usage that is not an assistant message (`usage`, e.g. cache warming); counted
/// in the session's totals, never part of the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageEntry {
    pub id: EntryId,
    #[serde(default)]
    pub parent_id: Option<EntryId>,
    #[serde(default)]
    pub timestamp: String,
    /// What the usage was for (`cache_warm`, …); any value is usage all the same.
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub model: String,
    pub usage: Usage,
}

/// An entry rho does not model, kept whole. Its tree fields are read from the line; the line
/// itself is written back unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct OtherEntry {
    entry_type: String,
    id: EntryId,
    parent_id: Option<EntryId>,
    timestamp: String,
    raw: Value,
}

impl OtherEntry {
    /// Wraps a JSON object that has a string `type` and a string `id`.
    pub fn from_value(raw: Value) -> Result<Self, String> {
        let obj = raw.as_object().ok_or("line is not a JSON object")?;
        let entry_type = obj.get("type").and_then(Value::as_str).ok_or("entry has no string \"type\"")?.to_owned();
        let id =
            obj.get("id").and_then(Value::as_str).ok_or_else(|| format!("{entry_type} entry has no string \"id\""))?;
        let id = EntryId::from(id);
        let parent_id = obj.get("parentId").and_then(Value::as_str).map(EntryId::from);
        let timestamp = obj.get("timestamp").and_then(Value::as_str).unwrap_or_default().to_owned();
        Ok(Self { entry_type, id, parent_id, timestamp, raw })
    }

    pub fn entry_type(&self) -> &str {
        &self.entry_type
    }

    /// The entry as it was read.
    pub fn raw(&self) -> &Value {
        &self.raw
    }
}

impl Serialize for OtherEntry {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}

/// One line of a session file after the header.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum SessionEntry {
    #[serde(rename = "message")]
    Message(MessageEntry),
    #[serde(rename = "model_change")]
    ModelChange(ModelChangeEntry),
    #[serde(rename = "thinking_level_change")]
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    #[serde(rename = "compaction")]
    Compaction(CompactionEntry),
    #[serde(rename = "branch_summary")]
    BranchSummary(BranchSummaryEntry),
    #[serde(rename = "custom")]
    Custom(CustomEntry),
    #[serde(rename = "custom_message")]
    CustomMessage(CustomMessageEntry),
    #[serde(rename = "label")]
    Label(LabelEntry),
    #[serde(rename = "session_info")]
    SessionInfo(SessionInfoEntry),
    #[serde(rename = "context_edit")]
    ContextEdit(ContextEditEntry),
    #[serde(rename = "usage")]
    Usage(UsageEntry),
    /// Any other entry type, or a known type in a shape rho does not read; kept verbatim.
    #[serde(untagged)]
    Other(OtherEntry),
}

/// The entry types pi defines; a line of one of these types that does not parse is worth a
/// warning, while the forks' own types are expected to be kept as [`OtherEntry`].
pub(crate) const PI_ENTRY_TYPES: [&str; 11] = [
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "context_edit",
    "usage",
];

macro_rules! each_variant {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            SessionEntry::Message($e) => $body,
            SessionEntry::ModelChange($e) => $body,
            SessionEntry::ThinkingLevelChange($e) => $body,
            SessionEntry::Compaction($e) => $body,
            SessionEntry::BranchSummary($e) => $body,
            SessionEntry::Custom($e) => $body,
            SessionEntry::CustomMessage($e) => $body,
            SessionEntry::Label($e) => $body,
            SessionEntry::SessionInfo($e) => $body,
            SessionEntry::ContextEdit($e) => $body,
            SessionEntry::Usage($e) => $body,
            SessionEntry::Other($e) => $body,
        }
    };
}

impl SessionEntry {
    pub fn id(&self) -> &EntryId {
        each_variant!(self, e => &e.id)
    }

    pub fn parent_id(&self) -> Option<&EntryId> {
        each_variant!(self, e => e.parent_id.as_ref())
    }

    /// The entry's ISO-8601 timestamp (empty when the line had none).
    pub fn timestamp(&self) -> &str {
        each_variant!(self, e => &e.timestamp)
    }

    /// The `type` of the line.
    pub fn entry_type(&self) -> &str {
        match self {
            Self::Message(_) => "message",
            Self::ModelChange(_) => "model_change",
            Self::ThinkingLevelChange(_) => "thinking_level_change",
            Self::Compaction(_) => "compaction",
            Self::BranchSummary(_) => "branch_summary",
            Self::Custom(_) => "custom",
            Self::CustomMessage(_) => "custom_message",
            Self::Label(_) => "label",
            Self::SessionInfo(_) => "session_info",
            Self::ContextEdit(_) => "context_edit",
            Self::Usage(_) => "usage",
            Self::Other(o) => o.entry_type(),
        }
    }

    pub fn as_message(&self) -> Option<&AgentMessage> {
        match self {
            Self::Message(m) => Some(&m.message),
            _ => None,
        }
    }

    /// Whether this is a marker rho wrote to record a moved leaf.
    pub fn is_leaf_marker(&self) -> bool {
        matches!(self, Self::Custom(c) if c.custom_type == LEAF_MARKER_TYPE)
    }

    /// The JSON line for this entry, `\n` included, in pi's key order.
    pub fn to_line(&self) -> serde_json::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(256);
        rho_types::json::write_to(&mut out, self)?;
        out.push(b'\n');
        Ok(out)
    }

    pub(crate) fn set_parent_id(&mut self, parent: Option<EntryId>) {
        if let Self::Other(o) = self {
            if let Some(obj) = o.raw.as_object_mut() {
                let value = parent.as_ref().map_or(Value::Null, |p| Value::String(p.to_string()));
                obj.insert("parentId".to_owned(), value);
            }
            o.parent_id = parent;
            return;
        }
        each_variant!(self, e => e.parent_id = parent)
    }
}

impl<'de> Deserialize<'de> for SessionEntry {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match crate::parse::entry_from_value(value) {
            crate::parse::LineOutcome::Entry(e) | crate::parse::LineOutcome::Degraded(e, _) => Ok(e),
            crate::parse::LineOutcome::NotAnEntry(reason) | crate::parse::LineOutcome::InvalidJson(reason) => {
                Err(serde::de::Error::custom(reason))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn re_parenting_an_unknown_entry_updates_its_line_in_place() {
        let raw = json!({"type":"mode_change","id":"b","parentId":"a","timestamp":"t","mode":"plan"});
        let mut entry = SessionEntry::Other(OtherEntry::from_value(raw).unwrap());
        entry.set_parent_id(Some(EntryId::from("z")));
        assert_eq!(entry.parent_id().map(EntryId::as_str), Some("z"));
        assert_eq!(
            String::from_utf8(entry.to_line().unwrap()).unwrap(),
            "{\"type\":\"mode_change\",\"id\":\"b\",\"parentId\":\"z\",\"timestamp\":\"t\",\"mode\":\"plan\"}\n"
        );
        entry.set_parent_id(None);
        assert!(String::from_utf8(entry.to_line().unwrap()).unwrap().contains("\"parentId\":null"));
        assert_eq!(entry.entry_type(), "mode_change");
        assert_eq!(entry.timestamp(), "t");
    }

    #[test]
    fn unknown_entries_need_a_type_and_an_id() {
        assert!(OtherEntry::from_value(json!([1])).is_err());
        assert!(OtherEntry::from_value(json!({"id":"a"})).unwrap_err().contains("\"type\""));
        assert!(OtherEntry::from_value(json!({"type":"x"})).unwrap_err().contains("\"id\""));
        let no_parent = OtherEntry::from_value(json!({"type":"x","id":"a"})).unwrap();
        assert_eq!(SessionEntry::Other(no_parent).parent_id(), None);
    }

    #[test]
    fn entries_deserialize_through_serde_as_they_load() {
        let label: SessionEntry =
            serde_json::from_value(json!({"type":"label","id":"l","parentId":null,"timestamp":"t","targetId":"a"}))
                .unwrap();
        assert!(matches!(&label, SessionEntry::Label(l) if l.label.is_none()));
        let other: SessionEntry = serde_json::from_value(json!({"type":"ttsr_injection","id":"o"})).unwrap();
        assert_eq!(other.entry_type(), "ttsr_injection");
        assert!(serde_json::from_value::<SessionEntry>(json!({"type":"label"})).is_err());
    }

    #[test]
    fn only_rho_leaf_custom_entries_are_markers() {
        let custom = |t: &str| {
            SessionEntry::Custom(CustomEntry {
                custom_type: t.into(),
                data: None,
                id: EntryId::from("c"),
                parent_id: None,
                timestamp: String::new(),
            })
        };
        assert!(custom(LEAF_MARKER_TYPE).is_leaf_marker());
        assert!(!custom("rho.leafy").is_leaf_marker());
        let other = OtherEntry::from_value(json!({"type":"custom","id":"o","customType":"rho.leaf"})).unwrap();
        assert!(!SessionEntry::Other(other).is_leaf_marker());
    }
}
