//! The system prompt and the tool loadout as the transcript records them (pi 1.6's `system`
//! messages): the prompt is a list of named sections, and each recorded message patches the
//! sections by name and adds or removes tool declarations. Replaying the messages in order gives
//! the prompt and tools the model has; [`declare_changes`] is the message that brings the record
//! up to what the next request sends.

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::message::AgentMessage;
use crate::types::{ToolSpec, UserMessageContent};

/// A tool as the transcript declares it to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDeclaration {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constrained_sampling: Option<Value>,
}

impl From<&ToolSpec> for ToolDeclaration {
    fn from(spec: &ToolSpec) -> Self {
        Self {
            name: spec.name.clone(),
            description: spec.description.clone(),
            parameters: spec.parameters.clone(),
            constrained_sampling: None,
        }
    }
}

/// A tool a system message takes away, by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRef {
    pub name: String,
}

/// Named prompt sections in their order; `None` removes a section in a patch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sections(pub Vec<(String, Option<String>)>);

impl Sections {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn set(&mut self, name: &str, text: Option<String>) {
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = text,
            None => self.0.push((name.to_owned(), text)),
        }
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == name).and_then(|(_, t)| t.as_deref())
    }
}

impl Serialize for Sections {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, text) in &self.0 {
            map.serialize_entry(name, text)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Sections {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SectionsVisitor;
        impl<'de> Visitor<'de> for SectionsVisitor {
            type Value = Sections;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of section names to text or null")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Sections, A::Error> {
                let mut out = Vec::new();
                while let Some((name, text)) = access.next_entry::<String, Option<String>>()? {
                    out.push((name, text));
                }
                Ok(Sections(out))
            }
        }
        deserializer.deserialize_map(SectionsVisitor)
    }
}

/// A `system` message: prompt text, section patches and tool changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemMessage {
    /// Opaque prompt text (a prompt that is not made of sections); usually empty.
    #[serde(default = "empty_content")]
    pub content: UserMessageContent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Sections>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_added: Option<Vec<ToolDeclaration>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_removed: Option<Vec<ToolRef>>,
    #[serde(default)]
    pub timestamp: i64,
}

fn empty_content() -> UserMessageContent {
    UserMessageContent::Text(String::new().into())
}

impl SystemMessage {
    /// The prompt this message states when it leads: its text, then its sections.
    pub fn text(&self) -> String {
        let mut parts = vec![self.content.text_joined("\n")];
        if let Some(sections) = &self.sections {
            parts.extend(sections.0.iter().filter_map(|(_, t)| t.clone()));
        }
        parts.retain(|p| !p.is_empty());
        parts.join("\n\n")
    }

    /// One line saying what the message declares: `prompt: preamble, cwd; tools: +read -write`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        let names: Vec<&str> = self.sections.iter().flat_map(|s| &s.0).map(|(n, _)| n.as_str()).collect();
        if !names.is_empty() {
            parts.push(format!("prompt: {}", names.join(", ")));
        } else if !self.content.text_joined("").is_empty() {
            parts.push("prompt".to_owned());
        }
        let tools: Vec<String> = self
            .tools_removed
            .iter()
            .flatten()
            .map(|t| format!("-{}", t.name))
            .chain(self.tools_added.iter().flatten().map(|t| format!("+{}", t.name)))
            .collect();
        if !tools.is_empty() {
            parts.push(format!("tools: {}", tools.join(" ")));
        }
        if parts.is_empty() { "no changes".to_owned() } else { parts.join("; ") }
    }
}

/// The system prompt as named sections, rendered as a replay renders them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SystemPrompt {
    pub sections: Vec<(String, String)>,
}

impl SystemPrompt {
    /// A prompt of one section, `preamble` (for callers that have only text).
    pub fn from_text(text: impl Into<String>) -> Self {
        let text = text.into();
        if text.is_empty() { Self::default() } else { Self { sections: vec![("preamble".into(), text)] } }
    }

    /// The sections' texts, non-empty ones, separated by a blank line.
    pub fn render(&self) -> String {
        self.sections.iter().map(|(_, t)| t.as_str()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n")
    }
}

/// The prompt and tools the transcript has declared so far: every system message replayed in
/// order. `None` when the transcript declares nothing.
pub fn current_system_message(messages: &[AgentMessage]) -> Option<SystemMessage> {
    let mut content: Vec<String> = Vec::new();
    let mut sections = Sections::default();
    let mut tools: Vec<ToolDeclaration> = Vec::new();
    let mut timestamp = None;
    for message in messages {
        let AgentMessage::System(system) = message else { continue };
        timestamp.get_or_insert(system.timestamp);
        let text = system.content.text_joined("\n");
        if !text.is_empty() {
            content.push(text);
        }
        for (name, text) in system.sections.iter().flat_map(|s| &s.0) {
            match text {
                Some(text) => sections.set(name, Some(text.clone())),
                None => sections.0.retain(|(n, _)| n != name),
            }
        }
        for removed in system.tools_removed.iter().flatten() {
            tools.retain(|t| t.name != removed.name);
        }
        for added in system.tools_added.iter().flatten() {
            match tools.iter_mut().find(|t| t.name == added.name) {
                Some(slot) => *slot = added.clone(),
                None => tools.push(added.clone()),
            }
        }
    }
    let timestamp = timestamp?;
    Some(SystemMessage {
        content: UserMessageContent::Text(content.join("\n\n").into()),
        sections: (!sections.is_empty()).then_some(sections),
        tools_added: (!tools.is_empty()).then_some(tools),
        tools_removed: None,
        timestamp,
    })
}

/// The system message that brings what `messages` declare up to `prompt` and `tools`: the
/// sections that changed (`None` for one that is gone) and the tools added, changed (removed,
/// then added) or removed. `None` when nothing changed.
pub fn declare_changes(
    messages: &[AgentMessage],
    prompt: &SystemPrompt,
    tools: &[ToolSpec],
    timestamp: i64,
) -> Option<SystemMessage> {
    let current = current_system_message(messages);
    let had_sections = current.as_ref().and_then(|c| c.sections.clone()).unwrap_or_default();
    let had_tools = current.and_then(|c| c.tools_added).unwrap_or_default();

    let mut patch = Sections::default();
    for (name, text) in &prompt.sections {
        if had_sections.get(name) != Some(text.as_str()) {
            patch.0.push((name.clone(), Some(text.clone())));
        }
    }
    for (name, _) in &had_sections.0 {
        if !prompt.sections.iter().any(|(n, _)| n == name) {
            patch.0.push((name.clone(), None));
        }
    }

    let now: Vec<ToolDeclaration> = tools.iter().map(ToolDeclaration::from).collect();
    let same = |a: &ToolDeclaration, b: &ToolDeclaration| a == b;
    let added: Vec<ToolDeclaration> =
        now.iter().filter(|t| !had_tools.iter().any(|h| h.name == t.name && same(h, t))).cloned().collect();
    let removed: Vec<ToolRef> = had_tools
        .iter()
        .filter(|h| !now.iter().any(|t| t.name == h.name && same(h, t)))
        .map(|h| ToolRef { name: h.name.clone() })
        .collect();

    if patch.is_empty() && added.is_empty() && removed.is_empty() {
        return None;
    }
    Some(SystemMessage {
        content: empty_content(),
        sections: (!patch.is_empty()).then_some(patch),
        tools_added: (!added.is_empty()).then_some(added),
        tools_removed: (!removed.is_empty()).then_some(removed),
        timestamp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn prompt(sections: &[(&str, &str)]) -> SystemPrompt {
        SystemPrompt { sections: sections.iter().map(|(n, t)| ((*n).into(), (*t).into())).collect() }
    }

    fn tool(name: &str, description: &str) -> ToolSpec {
        ToolSpec { name: name.into(), description: description.into(), parameters: json!({"type": "object"}) }
    }

    #[test]
    fn the_first_declaration_states_everything_and_a_repeat_states_nothing() {
        let p = prompt(&[("preamble", "You are rho."), ("cwd", "/w")]);
        let tools = [tool("read", "Reads."), tool("bash", "Runs.")];
        let first = declare_changes(&[], &p, &tools, 7).unwrap();
        assert_eq!(
            serde_json::to_value(AgentMessage::System(first.clone())).unwrap(),
            json!({
                "role": "system",
                "content": "",
                "sections": {"preamble": "You are rho.", "cwd": "/w"},
                "toolsAdded": [
                    {"name": "read", "description": "Reads.", "parameters": {"type": "object"}},
                    {"name": "bash", "description": "Runs.", "parameters": {"type": "object"}}
                ],
                "timestamp": 7
            })
        );
        let messages = [AgentMessage::System(first)];
        assert_eq!(declare_changes(&messages, &p, &tools, 8), None);
        assert_eq!(current_system_message(&messages).unwrap().text(), "You are rho.\n\n/w");
    }

    #[test]
    fn changes_patch_by_name_and_replay_in_order() {
        let before = prompt(&[("preamble", "A"), ("skills", "S"), ("cwd", "/w")]);
        let first = declare_changes(&[], &before, &[tool("read", "Reads."), tool("write", "Writes.")], 1).unwrap();
        let mut messages = vec![AgentMessage::System(first)];
        let after = prompt(&[("preamble", "A"), ("cwd", "/x")]);
        let patch =
            declare_changes(&messages, &after, &[tool("read", "Reads files."), tool("bash", "Runs.")], 2).unwrap();
        assert_eq!(
            serde_json::to_value(&patch).unwrap(),
            json!({
                "content": "",
                "sections": {"cwd": "/x", "skills": null},
                "toolsAdded": [
                    {"name": "read", "description": "Reads files.", "parameters": {"type": "object"}},
                    {"name": "bash", "description": "Runs.", "parameters": {"type": "object"}}
                ],
                "toolsRemoved": [{"name": "read"}, {"name": "write"}],
                "timestamp": 2
            })
        );
        messages.push(AgentMessage::System(patch));
        let replayed = current_system_message(&messages).unwrap();
        assert_eq!(replayed.text(), "A\n\n/x");
        let names: Vec<_> = replayed.tools_added.unwrap().into_iter().map(|t| (t.name, t.description)).collect();
        assert_eq!(names, [("read".into(), "Reads files.".into()), ("bash".into(), "Runs.".into())]);
        assert_eq!(replayed.timestamp, 1);
        let AgentMessage::System(patch) = &messages[1] else { unreachable!() };
        assert_eq!(patch.summary(), "prompt: cwd, skills; tools: -read -write +read +bash");
    }

    #[test]
    fn pi_system_messages_read_back_as_written() {
        let line = json!({
            "role": "system", "content": "",
            "sections": {"preamble": "P", "tools": "<tools>\n- read\n</tools>"},
            "toolsAdded": [{"name": "read", "description": "d", "parameters": {}}],
            "timestamp": 1733234400000_i64
        });
        let message: AgentMessage = serde_json::from_value(line.clone()).unwrap();
        assert_eq!(serde_json::to_value(&message).unwrap(), line);
        assert_eq!(message.to_llm(), None);
        // A forced prompt is opaque text with no sections.
        let forced: AgentMessage = serde_json::from_value(
            json!({"role":"system","content":"You are a coding assistant.","toolsAdded":[],"timestamp":1}),
        )
        .unwrap();
        assert_eq!(current_system_message(&[forced]).unwrap().text(), "You are a coding assistant.");
    }

    #[test]
    fn rendering_skips_empty_sections() {
        assert_eq!(prompt(&[("preamble", "A"), ("addendum", ""), ("cwd", "B")]).render(), "A\n\nB");
        assert_eq!(SystemPrompt::from_text("").render(), "");
    }
}
