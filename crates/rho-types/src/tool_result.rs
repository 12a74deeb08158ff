//! A tool's result as the protocol carries it: content blocks plus tool-specific details.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::UserContent;

/// A tool's result as the protocol carries it (`tool_execution_update.partialResult`,
/// `tool_execution_end.result`): content blocks plus tool-specific details.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentToolResult {
    pub content: Vec<UserContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// `true` asks that no model request follow the batch of calls this result ends, when
    /// every result of the batch asks the same (pi's `terminate`, set by extension tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminate: Option<bool>,
    /// The result as data for programs rather than the model (pi 1.6's `structuredContent`:
    /// bash's `{output, truncated, exit_code, wall_time_seconds}`, read's text). Hosts see it in
    /// `tool_execution_end`; the model and the session file do not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool failed and says so with its whole result (pi 1.6: bash's non-zero exit keeps its
    /// `details` and `structuredContent`); the result's message is an error. Not serialized: the
    /// events and messages carry it as their own `isError`.
    #[serde(skip)]
    pub is_error: bool,
}

impl AgentToolResult {
    pub fn text(text: impl Into<crate::Text>) -> Self {
        Self { content: vec![UserContent::text(text)], ..Self::default() }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn with_structured_content(mut self, structured: Value) -> Self {
        self.structured_content = Some(structured);
        self
    }

    /// This result as a failure of the tool, kept whole.
    pub fn into_error(mut self) -> Self {
        self.is_error = true;
        self
    }

    /// The text blocks joined with newlines.
    pub fn text_content(&self) -> String {
        self.content.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n")
    }
}
