//! Rebuilding the todo list from a branch (session load, `switch_session`, `branch`): the
//! latest successful `todo_write` result carries the whole list in its `details.phases`.
//!
//! Tasks already `completed` or `abandoned` are dropped (they finished in an earlier run, so
//! their auto-clear grace period is over), and so are phases left without tasks. A result
//! whose `details.phases` does not parse is skipped in favour of an older one. Pass every
//! message on the branch, not only the (possibly compacted) context, or a list written before
//! the last compaction is missed.

use rho_rpc::TodoPhase;
use rho_types::AgentMessage;

use super::model::{self, Phase};
use super::tool::TODO_WRITE_TOOL_NAME;

/// The list to restore from `messages` (oldest first), in the protocol's shape.
pub fn restore_from_messages(messages: &[AgentMessage]) -> Vec<TodoPhase> {
    model::to_wire(&restore_phases_from_messages(messages))
}

/// As [`restore_from_messages`], keeping each task's `details`.
pub fn restore_phases_from_messages(messages: &[AgentMessage]) -> Vec<Phase> {
    for message in messages.iter().rev() {
        let AgentMessage::ToolResult(result) = message else {
            continue;
        };
        if result.tool_name != TODO_WRITE_TOOL_NAME || result.is_error {
            continue;
        }
        let Some(phases) = result.details.as_ref().and_then(|d| d.get("phases")) else {
            continue;
        };
        if let Ok(phases) = serde_json::from_value::<Vec<Phase>>(phases.clone()) {
            return without_finished(phases);
        }
    }
    Vec::new()
}

fn without_finished(mut phases: Vec<Phase>) -> Vec<Phase> {
    for phase in &mut phases {
        phase.tasks.retain(|t| !t.status.is_done());
    }
    phases.retain(|p| !p.tasks.is_empty());
    phases
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_types::types::{ToolResultMessage, UserContent};
    use serde_json::{Value, json};

    fn result(tool: &str, is_error: bool, details: Option<Value>) -> AgentMessage {
        AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: tool.into(),
            content: vec![UserContent::text("x")],
            details,
            is_error,
            is_warning: None,
            timestamp: 0,
        })
    }

    fn phases(tasks: Value) -> Option<Value> {
        Some(json!({"phases":[{"id":"phase-1","name":"P","tasks":tasks}],"storage":"session"}))
    }

    #[test]
    fn the_latest_successful_result_wins_without_finished_tasks() {
        let messages = vec![
            result("todo_write", false, phases(json!([{"id":"task-1","content":"old","status":"pending"}]))),
            result(
                "todo_write",
                false,
                Some(json!({"phases":[
                    {"id":"phase-1","name":"Done","tasks":[{"id":"task-1","content":"a","status":"completed"}]},
                    {"id":"phase-2","name":"Open","tasks":[
                        {"id":"task-2","content":"b","status":"abandoned"},
                        {"id":"task-3","content":"c","status":"in_progress","details":"d"},
                        {"id":"task-4","content":"e","status":"pending","notes":"n"}]}
                ],"storage":"session"})),
            ),
            result("todo_write", true, phases(json!([{"id":"task-9","content":"failed","status":"pending"}]))),
            result("read", false, phases(json!([{"id":"task-9","content":"other tool","status":"pending"}]))),
        ];
        assert_eq!(
            serde_json::to_value(restore_from_messages(&messages)).unwrap(),
            json!([{"id":"phase-2","name":"Open","tasks":[
                {"id":"task-3","content":"c","status":"in_progress"},
                {"id":"task-4","content":"e","status":"pending","notes":"n"}]}])
        );
        assert_eq!(restore_phases_from_messages(&messages)[0].tasks[0].details.as_deref(), Some("d"));
    }

    #[test]
    fn unreadable_details_fall_back_to_an_older_result() {
        let messages = vec![
            result("todo_write", false, phases(json!([{"id":"task-1","content":"kept","status":"pending"}]))),
            result("todo_write", false, Some(json!({"phases":"garbage"}))),
            result("todo_write", false, None),
        ];
        assert_eq!(restore_from_messages(&messages)[0].tasks[0].content, "kept");
    }

    #[test]
    fn nothing_to_restore() {
        assert!(restore_from_messages(&[]).is_empty());
        let all_done =
            vec![result("todo_write", false, phases(json!([{"id":"task-1","content":"a","status":"completed"}])))];
        assert!(restore_from_messages(&all_done).is_empty());
    }
}
