//! What the `task` tool reports in `details` (xcsh's `TaskToolDetails`; docs/protocol.md,
//! "Task result details"): one [`SingleResult`] per task, the batch's duration and summed usage,
//! and while it runs the per-agent [`AgentProgress`]. Keys are camelCase and absent when empty, as
//! the reference writes them. The interactive mode reads the same types back from an event's
//! `details`.

use std::path::PathBuf;

use rho_rpc::VerificationResult;
use rho_types::types::Usage;
use serde::{Deserialize, Serialize};

use super::agents::AgentSource;

/// One task's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SingleResult {
    pub index: usize,
    pub id: String,
    pub agent: String,
    pub agent_source: AgentSource,
    /// The prompt the sub-agent got.
    pub task: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assignment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub exit_code: i32,
    /// The sub-agent's final reply.
    pub output: String,
    /// The tail of the sub-agent's stderr.
    pub stderr: String,
    pub truncated: bool,
    pub duration_ms: u64,
    pub tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_override: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aborted: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abort_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_path: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_path: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_meta: Option<OutputMeta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<VerificationResult>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputMeta {
    pub line_count: usize,
    pub char_count: usize,
}

impl SingleResult {
    /// True when the task did what it was asked (exit 0, not aborted, no merge error).
    pub fn succeeded(&self) -> bool {
        self.exit_code == 0 && self.aborted != Some(true) && self.error.is_none()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProgressStatus {
    Pending,
    Running,
    Completed,
    Failed,
    Aborted,
}

impl ProgressStatus {
    /// The status as the protocol spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Aborted => "aborted",
        }
    }
}

/// A tool the sub-agent ran recently.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecentTool {
    pub tool: String,
    pub args: String,
}

/// One sub-agent's progress (`details.progress[]` of `tool_execution_update`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProgress {
    pub index: usize,
    pub id: String,
    pub agent: String,
    pub agent_source: AgentSource,
    pub status: ProgressStatus,
    pub task: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_tool: Option<String>,
    pub recent_tools: Vec<RecentTool>,
    pub recent_output: Vec<String>,
    pub tool_count: u64,
    pub tokens: u64,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// `details` of the tool's result (and of its progress updates).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskToolDetails {
    /// The nearest project agents directory (`null` when there is none).
    pub project_agents_dir: Option<PathBuf>,
    pub results: Vec<SingleResult>,
    pub total_duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_paths: Option<Vec<PathBuf>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<Vec<AgentProgress>>,
}

impl TaskToolDetails {
    /// Details with no results (an answer before anything ran).
    pub fn empty(project_agents_dir: Option<PathBuf>, total_duration_ms: u64) -> Self {
        Self {
            project_agents_dir,
            results: Vec::new(),
            total_duration_ms,
            usage: None,
            output_paths: None,
            progress: None,
        }
    }

    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_status_is_spelled_as_it_serializes() {
        use ProgressStatus::*;
        for status in [Pending, Running, Completed, Failed, Aborted] {
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
    }
}
