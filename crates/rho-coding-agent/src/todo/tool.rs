//! The `todo_write` tool: the model keeps a phased task list with small operations (xcsh's v2
//! tool), and every call replaces the session's list in the shared [`TodoStore`].
//!
//! The result text is [`format_summary`]'s; the result `details` are `{phases, storage}` with
//! every task's `details` kept, which is what a session restores the list from. All calls of
//! one assistant message share one write target, so the agent loop runs them one after another
//! in the order the model made them (the reference marks the tool "exclusive").

use std::path::PathBuf;

use futures::future::BoxFuture;
use rho_agent::tool::OPERATION_ABORTED;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::{Map, Value};

use super::TodoStore;
use super::model::TodoWriteDetails;
use super::ops::{TodoWriteParams, apply_ops};
use super::summary::format_summary;

/// The tool's name, as the model calls it and as tool results record it.
pub const TODO_WRITE_TOOL_NAME: &str = "todo_write";

const DESCRIPTION: &str = "\
Keep a structured, phased task list for the current piece of work, so that you and the user can \
see what is planned, what is being done and what is finished.

Use it for work with three or more distinct steps, when the user gives you several things to do, \
or asks for a todo list. Record new requirements as tasks as soon as you learn them. Skip it for a \
single simple step or a purely conversational answer; just do those directly.

The list is a sequence of phases (ids phase-1, phase-2, ...) holding tasks (ids task-1, task-2, \
...). Each call applies a list of operations in order:
- replace: throw the old list away and start a new one from `phases` (numbering starts again at 1)
- add_phase: append a phase named `name`, optionally with `tasks`
- add_task: append a task to the phase with id `phase`
- update: change the `status`, `content`, `notes` or `details` of the task with id `id`
- remove_task: delete the task with id `id`

A task's status is pending, in_progress, completed or abandoned. Exactly one task is in progress \
while work remains: mark a task in_progress before you start it and completed as soon as it is \
fully done (not while tests fail or the work is partial), one at a time rather than in batches. \
Use abandoned for tasks that turned out to be unnecessary. If you are blocked, keep the task in \
progress and add a task for what has to be resolved. Put file paths and implementation specifics \
in `details`; they are shown while the task is in progress.

The result lists the remaining tasks and the whole plan by phase.";

/// The `todo_write` tool over one session's [`TodoStore`].
pub struct TodoWriteTool {
    store: TodoStore,
}

impl TodoWriteTool {
    pub fn new(store: TodoStore) -> Self {
        Self { store }
    }
}

/// The JSON Schema of the arguments, derived from [`TodoWriteParams`]: `{ops: Op[]}`, each op
/// one branch of an `anyOf`. The tool derives it when first asked for, not at start-up.
pub fn parameters_schema() -> Value {
    rho_tools::params::schema_of::<TodoWriteParams>()
}

impl TodoWriteTool {
    /// Applies the call to the store and builds its result.
    pub fn run(&self, args: Map<String, Value>) -> Result<AgentToolResult, ToolError> {
        let params: TodoWriteParams = serde_json::from_value(Value::Object(args))
            .map_err(|e| ToolError::new(format!("Invalid todo_write arguments: {e}")))?;
        let (phases, errors) = self.store.update(|current| {
            let (next, errors) = apply_ops(current.clone(), params.ops);
            current.clone_from(&next);
            (next, errors)
        });
        let text = format_summary(&phases, &errors);
        let details = TodoWriteDetails { phases, storage: self.store.storage() };
        let details = serde_json::to_value(details).map_err(|e| ToolError::new(e.to_string()))?;
        Ok(AgentToolResult::text(text).with_details(details))
    }
}

impl Tool for TodoWriteTool {
    fn name(&self) -> &str {
        TODO_WRITE_TOOL_NAME
    }

    fn label(&self) -> &str {
        "Todo Write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        static SCHEMA: std::sync::LazyLock<Value> = std::sync::LazyLock::new(parameters_schema);
        &SCHEMA
    }

    /// One key for every call: the loop runs them in call order, never at the same time.
    fn write_target(&self, _args: &Map<String, Value>) -> Option<PathBuf> {
        Some(PathBuf::from("<todo list>"))
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::new(OPERATION_ABORTED));
            }
            self.run(args)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::todo::model::TodoStorage;
    use rho_agent::validate::Validators;
    use rho_rpc::TodoStatus;
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    async fn call(tool: &TodoWriteTool, v: Value) -> Result<AgentToolResult, ToolError> {
        tool.execute(args(v), ToolContext::new("call-1", CancellationToken::new(), None)).await
    }

    #[tokio::test]
    async fn a_call_updates_the_store_and_reports_the_list() {
        let store = TodoStore::new();
        let tool = TodoWriteTool::new(store.clone());
        let result = call(
            &tool,
            json!({"ops":[{"op":"replace","phases":[{"name":"Build","tasks":[{"content":"Compile","details":"cargo build"},{"content":"Test"}]}]}]}),
        )
        .await
        .unwrap();
        assert_eq!(
            result.text_content(),
            "Remaining items (2):\n  - task-1 Compile [in_progress] (Build)\n      cargo build\n  - task-2 Test [pending] (Build)\nPhase 1/1 \"Build\" — 0/2 tasks complete\n  Build:\n    → task-1 Compile\n    ○ task-2 Test"
        );
        assert_eq!(
            result.details.unwrap(),
            json!({"phases":[{"id":"phase-1","name":"Build","tasks":[
                {"id":"task-1","content":"Compile","status":"in_progress","details":"cargo build"},
                {"id":"task-2","content":"Test","status":"pending"}]}],"storage":"memory"})
        );
        assert_eq!(store.phases()[0].tasks[0].status, TodoStatus::InProgress);
        // The next call starts from the stored list, details included.
        store.set_storage(TodoStorage::Session);
        let result = call(&tool, json!({"ops":[{"op":"update","id":"task-1","status":"completed"}]})).await.unwrap();
        assert!(result.text_content().starts_with("Remaining items (1):\n  - task-2 Test [in_progress] (Build)\n"));
        assert_eq!(result.details.unwrap()["storage"], "session");
        assert_eq!(store.full_phases()[0].tasks[0].details.as_deref(), Some("cargo build"));
    }

    #[tokio::test]
    async fn errors_do_not_fail_the_call() {
        let tool = TodoWriteTool::new(TodoStore::new());
        let result = call(&tool, json!({"ops":[{"op":"update","id":"task-1","status":"completed"}]})).await.unwrap();
        assert_eq!(
            result.text_content(),
            "Errors: Task \"task-1\" not found (todo list is empty — was it replaced or not yet created?)"
        );
        let result = call(&tool, json!({"ops":[{"op":"replace","phases":[]}]})).await.unwrap();
        assert_eq!(result.text_content(), "Todo list cleared.");
    }

    #[tokio::test]
    async fn malformed_arguments_fail_and_change_nothing() {
        let store = TodoStore::new();
        let tool = TodoWriteTool::new(store.clone());
        let err = call(&tool, json!({"ops":[{"op":"nope"}]})).await.unwrap_err();
        assert!(err.0.starts_with("Invalid todo_write arguments: "), "{err}");
        assert_eq!(store.revision(), 0);
    }

    #[tokio::test]
    async fn a_cancelled_call_does_nothing() {
        let store = TodoStore::new();
        let tool = TodoWriteTool::new(store.clone());
        let cancel = CancellationToken::new();
        cancel.cancel();
        let ctx = ToolContext::new("c", cancel, None);
        let err = tool.execute(args(json!({"ops":[{"op":"add_phase","name":"x"}]})), ctx).await.unwrap_err();
        assert_eq!(err.0, OPERATION_ABORTED);
        assert!(store.phases().is_empty());
    }

    /// The schema the tool had by hand (the reference's), as TypeBox writes it.
    fn reference_schema() -> Value {
        let status = json!({
            "type": "string",
            "enum": ["pending", "in_progress", "completed", "abandoned"],
            "description": "Task status"
        });
        let notes = json!({"type": "string", "description": "Additional context or notes"});
        let input_task = json!({
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "Task description"},
                "status": status,
                "notes": notes,
                "details": {
                    "type": "string",
                    "description": "Implementation details, file paths, and specifics (shown only when active)"
                }
            },
            "required": ["content"]
        });
        let op = |name: &str| json!({"const": name, "type": "string"});
        json!({
            "type": "object",
            "properties": {
                "ops": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            {
                                "type": "object",
                                "properties": {
                                    "op": op("replace"),
                                    "phases": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {
                                                "name": {"type": "string", "description": "Phase name"},
                                                "tasks": {"type": "array", "items": input_task}
                                            },
                                            "required": ["name"]
                                        }
                                    }
                                },
                                "required": ["op", "phases"]
                            },
                            {
                                "type": "object",
                                "properties": {
                                    "op": op("add_phase"),
                                    "name": {"type": "string", "description": "Phase name"},
                                    "tasks": {"type": "array", "items": input_task}
                                },
                                "required": ["op", "name"]
                            },
                            {
                                "type": "object",
                                "properties": {
                                    "op": op("add_task"),
                                    "phase": {"type": "string", "description": "Phase ID, e.g. phase-1"},
                                    "content": {"type": "string", "description": "Task description"},
                                    "notes": notes,
                                    "details": {
                                        "type": "string",
                                        "description": "Implementation details, file paths, and specifics"
                                    }
                                },
                                "required": ["op", "phase", "content"]
                            },
                            {
                                "type": "object",
                                "properties": {
                                    "op": op("update"),
                                    "id": {"type": "string", "description": "Task ID, e.g. task-3"},
                                    "status": status,
                                    "content": {"type": "string", "description": "Updated task description"},
                                    "notes": notes,
                                    "details": {"type": "string", "description": "Updated details"}
                                },
                                "required": ["op", "id"]
                            },
                            {
                                "type": "object",
                                "properties": {
                                    "op": op("remove_task"),
                                    "id": {"type": "string", "description": "Task ID, e.g. task-3"}
                                },
                                "required": ["op", "id"]
                            }
                        ]
                    }
                }
            },
            "required": ["ops"]
        })
    }

    #[test]
    fn the_derived_schema_is_the_reference_word_for_word() {
        assert_eq!(parameters_schema(), reference_schema());
    }

    #[test]
    fn the_schema_accepts_each_op_and_rejects_bad_ones() {
        let tool = TodoWriteTool::new(TodoStore::new());
        let validators = Validators::default();
        let check = |v: Value| validators.check(tool.name(), tool.parameters(), &args(v));
        for ok in [
            json!({"ops":[{"op":"replace","phases":[{"name":"a","tasks":[{"content":"c","status":"pending"}]}]}]}),
            json!({"ops":[{"op":"add_phase","name":"a"}]}),
            json!({"ops":[{"op":"add_task","phase":"phase-1","content":"c","details":"d"}]}),
            json!({"ops":[{"op":"update","id":"task-1","status":"abandoned"}]}),
            json!({"ops":[{"op":"remove_task","id":"task-1"}]}),
        ] {
            assert!(check(ok.clone()).is_ok(), "{ok}");
        }
        assert!(check(json!({})).is_err());
        assert!(check(json!({"ops":[{"op":"update","id":"task-1","status":"done"}]})).is_err());
        assert!(check(json!({"ops":[{"op":"add_task","phase":"phase-1"}]})).is_err());
        assert_eq!(tool.spec().name, "todo_write");
    }
}
