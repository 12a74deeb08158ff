//! The todo list as the `todo_write` tool keeps it: the protocol's phases plus each task's
//! `details` (implementation notes the tool shows only for the task in progress).
//!
//! The RPC surface (`set_todos`, `get_state.todoPhases`) never carries `details`; the wire types
//! in `rho_rpc` are the projection of these without it. Serialized, a [`Task`] has the key order
//! of the reference (`id, content, status, notes?, details?`), which is also the shape the tool
//! writes into its result `details` so a session can restore the list.

use rho_rpc::{TodoItem, TodoPhase, TodoStatus};
use serde::{Deserialize, Serialize};

/// One task of a phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    pub content: String,
    pub status: TodoStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
}

/// A named group of tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phase {
    pub id: String,
    pub name: String,
    pub tasks: Vec<Task>,
}

impl Task {
    pub fn to_wire(&self) -> TodoItem {
        TodoItem { id: self.id.clone(), content: self.content.clone(), status: self.status, notes: self.notes.clone() }
    }

    pub fn from_wire(item: TodoItem) -> Self {
        Self { id: item.id, content: item.content, status: item.status, notes: item.notes, details: None }
    }
}

impl Phase {
    pub fn to_wire(&self) -> TodoPhase {
        TodoPhase {
            id: self.id.clone(),
            name: self.name.clone(),
            tasks: self.tasks.iter().map(Task::to_wire).collect(),
        }
    }

    pub fn from_wire(phase: TodoPhase) -> Self {
        Self { id: phase.id, name: phase.name, tasks: phase.tasks.into_iter().map(Task::from_wire).collect() }
    }
}

/// The protocol's view of `phases` (no `details`).
pub fn to_wire(phases: &[Phase]) -> Vec<TodoPhase> {
    phases.iter().map(Phase::to_wire).collect()
}

/// Phases from the protocol's view (no `details`).
pub fn from_wire(phases: Vec<TodoPhase>) -> Vec<Phase> {
    phases.into_iter().map(Phase::from_wire).collect()
}

/// Where the todo list is recorded, as the tool's result `details.storage` reports it:
/// `session` when the session has a file (the tool results restore it), `memory` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TodoStorage {
    Session,
    #[default]
    Memory,
}

/// The tool's result `details`: `{phases, storage}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoWriteDetails {
    pub phases: Vec<Phase>,
    pub storage: TodoStorage,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn task_keys_keep_the_reference_order_and_omit_absent_optionals() {
        let task = Task {
            id: "task-1".into(),
            content: "Write it".into(),
            status: TodoStatus::InProgress,
            notes: None,
            details: Some("src/lib.rs".into()),
        };
        assert_eq!(
            serde_json::to_string(&task).unwrap(),
            r#"{"id":"task-1","content":"Write it","status":"in_progress","details":"src/lib.rs"}"#
        );
    }

    #[test]
    fn the_wire_view_drops_details() {
        let phase = Phase {
            id: "phase-1".into(),
            name: "Build".into(),
            tasks: vec![Task {
                id: "task-1".into(),
                content: "c".into(),
                status: TodoStatus::Pending,
                notes: Some("n".into()),
                details: Some("d".into()),
            }],
        };
        assert_eq!(
            serde_json::to_value(phase.to_wire()).unwrap(),
            json!({"id":"phase-1","name":"Build","tasks":[{"id":"task-1","content":"c","status":"pending","notes":"n"}]})
        );
        assert_eq!(Phase::from_wire(phase.to_wire()).tasks[0].details, None);
    }
}
