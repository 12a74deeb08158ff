//! The `todo_write` operations (xcsh's phased v2 ops) and how they change the list.
//!
//! Ids are `phase-<n>` / `task-<n>`, allocated monotonically: `replace` starts again at 1,
//! every other op continues from the highest number already in the list. Unknown phase or task
//! ids do not fail the call; they are collected as error strings that the result text reports.
//! After all ops ran, exactly one task is in progress when any is open: extra `in_progress`
//! tasks after the first go back to `pending`, and with none in progress the first `pending`
//! task starts.

use rho_rpc::TodoStatus;
use rho_tools::params::undescribed;
use schemars::JsonSchema;
use serde::Deserialize;

use super::model::{Phase, Task};

/// The tool's arguments.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct TodoWriteParams {
    pub ops: Vec<TodoOp>,
}

/// One operation.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
#[schemars(transform = undescribed)]
pub enum TodoOp {
    Replace {
        phases: Vec<InputPhase>,
    },
    AddPhase {
        /// Phase name
        name: String,
        #[serde(default)]
        tasks: Option<Vec<InputTask>>,
    },
    AddTask {
        /// Phase ID, e.g. phase-1
        phase: String,
        /// Task description
        content: String,
        /// Additional context or notes
        #[serde(default)]
        notes: Option<String>,
        /// Implementation details, file paths, and specifics
        #[serde(default)]
        details: Option<String>,
    },
    Update {
        /// Task ID, e.g. task-3
        id: String,
        /// Task status
        #[serde(default)]
        status: Option<TodoStatus>,
        /// Updated task description
        #[serde(default)]
        content: Option<String>,
        /// Additional context or notes
        #[serde(default)]
        notes: Option<String>,
        /// Updated details
        #[serde(default)]
        details: Option<String>,
    },
    RemoveTask {
        /// Task ID, e.g. task-3
        id: String,
    },
}

/// A phase as `replace` and `add_phase` take it (no id: ids are allocated).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[schemars(transform = undescribed)]
pub struct InputPhase {
    /// Phase name
    pub name: String,
    #[serde(default)]
    pub tasks: Option<Vec<InputTask>>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub struct InputTask {
    /// Task description
    pub content: String,
    /// Task status
    #[serde(default)]
    pub status: Option<TodoStatus>,
    /// Additional context or notes
    #[serde(default)]
    pub notes: Option<String>,
    /// Implementation details, file paths, and specifics (shown only when active)
    #[serde(default)]
    pub details: Option<String>,
}

/// The list being edited plus the next ids to hand out.
struct Draft {
    phases: Vec<Phase>,
    next_task: u64,
    next_phase: u64,
}

impl Draft {
    fn empty() -> Self {
        Self { phases: Vec::new(), next_task: 1, next_phase: 1 }
    }

    fn from_phases(phases: Vec<Phase>) -> Self {
        let max_phase = phases.iter().filter_map(|p| id_number(&p.id, "phase-")).max().unwrap_or(0);
        let max_task =
            phases.iter().flat_map(|p| &p.tasks).filter_map(|t| id_number(&t.id, "task-")).max().unwrap_or(0);
        Self { phases, next_task: max_task + 1, next_phase: max_phase + 1 }
    }

    fn phase_from_input(&mut self, name: String, tasks: Option<Vec<InputTask>>) -> Phase {
        let id = format!("phase-{}", self.next_phase);
        self.next_phase += 1;
        let tasks = tasks
            .unwrap_or_default()
            .into_iter()
            .map(|t| {
                let task = Task {
                    id: format!("task-{}", self.next_task),
                    content: t.content,
                    status: t.status.unwrap_or(TodoStatus::Pending),
                    notes: t.notes,
                    details: t.details,
                };
                self.next_task += 1;
                task
            })
            .collect();
        Phase { id, name, tasks }
    }

    fn task_count(&self) -> usize {
        self.phases.iter().map(|p| p.tasks.len()).sum()
    }

    fn find_task(&mut self, id: &str) -> Option<&mut Task> {
        self.phases.iter_mut().flat_map(|p| p.tasks.iter_mut()).find(|t| t.id == id)
    }
}

/// `<prefix><digits>` → the number.
fn id_number(id: &str, prefix: &str) -> Option<u64> {
    let digits = id.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Applies `ops` in order to `phases`; returns the new list and the errors of ops that could
/// not apply.
pub fn apply_ops(phases: Vec<Phase>, ops: Vec<TodoOp>) -> (Vec<Phase>, Vec<String>) {
    let mut draft = Draft::from_phases(phases);
    let mut errors = Vec::new();
    for op in ops {
        match op {
            TodoOp::Replace { phases } => {
                let mut next = Draft::empty();
                for input in phases {
                    let phase = next.phase_from_input(input.name, input.tasks);
                    next.phases.push(phase);
                }
                draft = next;
            }
            TodoOp::AddPhase { name, tasks } => {
                let phase = draft.phase_from_input(name, tasks);
                draft.phases.push(phase);
            }
            TodoOp::AddTask { phase, content, notes, details } => {
                let id = format!("task-{}", draft.next_task);
                match draft.phases.iter_mut().find(|p| p.id == phase) {
                    Some(target) => {
                        target.tasks.push(Task { id, content, status: TodoStatus::Pending, notes, details });
                        draft.next_task += 1;
                    }
                    None => errors.push(format!("Phase \"{phase}\" not found")),
                }
            }
            TodoOp::Update { id, status, content, notes, details } => {
                let empty = draft.task_count() == 0;
                match draft.find_task(&id) {
                    Some(task) => {
                        if let Some(status) = status {
                            task.status = status;
                        }
                        if let Some(content) = content {
                            task.content = content;
                        }
                        if notes.is_some() {
                            task.notes = notes;
                        }
                        if details.is_some() {
                            task.details = details;
                        }
                    }
                    None => {
                        let hint =
                            if empty { " (todo list is empty — was it replaced or not yet created?)" } else { "" };
                        errors.push(format!("Task \"{id}\" not found{hint}"));
                    }
                }
            }
            TodoOp::RemoveTask { id } => {
                let empty = draft.task_count() == 0;
                let removed = draft.phases.iter_mut().any(|p| match p.tasks.iter().position(|t| t.id == id) {
                    Some(i) => {
                        p.tasks.remove(i);
                        true
                    }
                    None => false,
                });
                if !removed {
                    let hint = if empty { " (todo list is empty)" } else { "" };
                    errors.push(format!("Task \"{id}\" not found{hint}"));
                }
            }
        }
    }
    normalize_in_progress(&mut draft.phases);
    (draft.phases, errors)
}

/// Keeps the first `in_progress` task and sends later ones back to `pending`; with none in
/// progress, starts the first `pending` task.
pub fn normalize_in_progress(phases: &mut [Phase]) {
    let mut seen = false;
    for task in phases.iter_mut().flat_map(|p| p.tasks.iter_mut()) {
        if task.status == TodoStatus::InProgress {
            if seen {
                task.status = TodoStatus::Pending;
            }
            seen = true;
        }
    }
    if !seen
        && let Some(task) = phases.iter_mut().flat_map(|p| p.tasks.iter_mut()).find(|t| t.status == TodoStatus::Pending)
    {
        task.status = TodoStatus::InProgress;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ops(v: serde_json::Value) -> Vec<TodoOp> {
        serde_json::from_value::<TodoWriteParams>(json!({ "ops": v })).unwrap().ops
    }

    fn statuses(phases: &[Phase]) -> Vec<(String, TodoStatus)> {
        phases.iter().flat_map(|p| &p.tasks).map(|t| (t.id.clone(), t.status)).collect()
    }

    fn plan() -> Vec<Phase> {
        apply_ops(
            Vec::new(),
            ops(json!([{"op":"replace","phases":[
                {"name":"Explore","tasks":[{"content":"Read the code"},{"content":"Find the bug"}]},
                {"name":"Fix","tasks":[{"content":"Patch it","details":"src/lib.rs line 40"}]}
            ]}])),
        )
        .0
    }

    #[test]
    fn replace_allocates_ids_from_one_and_starts_the_first_task() {
        let phases = plan();
        assert_eq!(phases[0].id, "phase-1");
        assert_eq!(phases[1].id, "phase-2");
        assert_eq!(
            statuses(&phases),
            vec![
                ("task-1".into(), TodoStatus::InProgress),
                ("task-2".into(), TodoStatus::Pending),
                ("task-3".into(), TodoStatus::Pending)
            ]
        );
        assert_eq!(phases[1].tasks[0].details.as_deref(), Some("src/lib.rs line 40"));
        // A second replace restarts numbering.
        let (again, _) = apply_ops(phases, ops(json!([{"op":"replace","phases":[{"name":"Only"}]}])));
        assert_eq!(again, vec![Phase { id: "phase-1".into(), name: "Only".into(), tasks: vec![] }]);
    }

    #[test]
    fn add_phase_and_add_task_continue_after_the_highest_id() {
        let (phases, errors) = apply_ops(
            plan(),
            ops(json!([
                {"op":"add_phase","name":"Verify","tasks":[{"content":"Run tests","status":"pending"}]},
                {"op":"add_task","phase":"phase-1","content":"Write notes","notes":"short"},
                {"op":"add_task","phase":"phase-9","content":"lost"}
            ])),
        );
        assert_eq!(errors, vec!["Phase \"phase-9\" not found".to_owned()]);
        assert_eq!(phases[2].id, "phase-3");
        assert_eq!(phases[2].tasks[0].id, "task-4");
        assert_eq!(phases[0].tasks[2].id, "task-5");
        assert_eq!(phases[0].tasks[2].notes.as_deref(), Some("short"));
        assert_eq!(phases[0].tasks[2].status, TodoStatus::Pending);
    }

    #[test]
    fn update_changes_only_the_given_fields() {
        let (phases, errors) = apply_ops(
            plan(),
            ops(json!([
                {"op":"update","id":"task-1","status":"completed"},
                {"op":"update","id":"task-2","content":"Find the real bug","notes":"n"}
            ])),
        );
        assert!(errors.is_empty());
        let t2 = &phases[0].tasks[1];
        assert_eq!((t2.content.as_str(), t2.notes.as_deref()), ("Find the real bug", Some("n")));
        // task-1 done, so task-2 (first pending) starts.
        assert_eq!(t2.status, TodoStatus::InProgress);
        assert_eq!(phases[0].tasks[0].status, TodoStatus::Completed);
    }

    #[test]
    fn remove_task_and_unknown_ids() {
        let (phases, errors) = apply_ops(
            plan(),
            ops(json!([
                {"op":"remove_task","id":"task-2"},
                {"op":"remove_task","id":"task-42"},
                {"op":"update","id":"task-42","status":"completed"}
            ])),
        );
        assert_eq!(phases[0].tasks.len(), 1);
        assert_eq!(errors, vec!["Task \"task-42\" not found".to_owned(), "Task \"task-42\" not found".to_owned()]);
        let (_, errors) = apply_ops(
            Vec::new(),
            ops(json!([{"op":"update","id":"task-1","status":"completed"},{"op":"remove_task","id":"task-1"}])),
        );
        assert_eq!(
            errors,
            vec![
                "Task \"task-1\" not found (todo list is empty — was it replaced or not yet created?)".to_owned(),
                "Task \"task-1\" not found (todo list is empty)".to_owned()
            ]
        );
    }

    #[test]
    fn exactly_one_task_stays_in_progress() {
        let (phases, _) = apply_ops(
            plan(),
            ops(json!([
                {"op":"update","id":"task-2","status":"in_progress"},
                {"op":"update","id":"task-3","status":"in_progress"}
            ])),
        );
        assert_eq!(
            statuses(&phases),
            vec![
                ("task-1".into(), TodoStatus::InProgress),
                ("task-2".into(), TodoStatus::Pending),
                ("task-3".into(), TodoStatus::Pending)
            ]
        );
        let (phases, _) = apply_ops(
            plan(),
            ops(
                json!([{"op":"update","id":"task-1","status":"abandoned"},{"op":"update","id":"task-2","status":"completed"}]),
            ),
        );
        assert_eq!(phases[1].tasks[0].status, TodoStatus::InProgress);
    }

    #[test]
    fn ids_that_are_not_ours_do_not_disturb_numbering() {
        let mut phases = plan();
        phases[0].tasks[0].id = "custom".into();
        phases[0].id = "phase-x".into();
        let (phases, _) = apply_ops(phases, ops(json!([{"op":"add_phase","name":"N","tasks":[{"content":"c"}]}])));
        assert_eq!(phases[2].id, "phase-3");
        assert_eq!(phases[2].tasks[0].id, "task-4");
        assert_eq!(id_number("task-", "task-"), None);
        assert_eq!(id_number("task-1a", "task-"), None);
    }

    #[test]
    fn unknown_ops_do_not_parse() {
        assert!(serde_json::from_value::<TodoWriteParams>(json!({"ops":[{"op":"explode"}]})).is_err());
        assert!(serde_json::from_value::<TodoWriteParams>(json!({"ops":[{"op":"update"}]})).is_err());
    }
}
