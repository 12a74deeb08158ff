//! The text a `todo_write` call returns to the model: errors, the open tasks, where the plan
//! stands and the whole list by phase (the reference's layout, so a model trained on it reads
//! it the same way).

use rho_rpc::TodoStatus;

use super::model::Phase;

/// A status by its wire name.
pub fn status_name(status: TodoStatus) -> &'static str {
    match status {
        TodoStatus::Pending => "pending",
        TodoStatus::InProgress => "in_progress",
        TodoStatus::Completed => "completed",
        TodoStatus::Abandoned => "abandoned",
    }
}

fn symbol(status: TodoStatus) -> &'static str {
    match status {
        TodoStatus::Completed => "✓",
        TodoStatus::InProgress => "→",
        TodoStatus::Abandoned => "✗",
        TodoStatus::Pending => "○",
    }
}

/// The result text for `phases` after a call that produced `errors`.
pub fn format_summary(phases: &[Phase], errors: &[String]) -> String {
    let total: usize = phases.iter().map(|p| p.tasks.len()).sum();
    if total == 0 {
        return if errors.is_empty() {
            "Todo list cleared.".to_owned()
        } else {
            format!("Errors: {}", errors.join("; "))
        };
    }
    let mut lines = Vec::new();
    if !errors.is_empty() {
        lines.push(format!("Errors: {}", errors.join("; ")));
    }
    let remaining: Vec<_> =
        phases.iter().flat_map(|p| p.tasks.iter().filter(|t| t.status.is_open()).map(move |t| (p, t))).collect();
    if remaining.is_empty() {
        lines.push("Remaining items: none.".to_owned());
    } else {
        lines.push(format!("Remaining items ({}):", remaining.len()));
        for (phase, task) in &remaining {
            lines.push(format!("  - {} {} [{}] ({})", task.id, task.content, status_name(task.status), phase.name));
            if task.status == TodoStatus::InProgress
                && let Some(details) = task.details.as_deref().filter(|d| !d.is_empty())
            {
                lines.extend(details.split('\n').map(|l| format!("      {l}")));
            }
        }
    }
    let current_index =
        phases.iter().position(|p| p.tasks.iter().any(|t| t.status.is_open())).unwrap_or(phases.len() - 1);
    let current = &phases[current_index];
    let done = current.tasks.iter().filter(|t| t.status.is_done()).count();
    lines.push(format!(
        "Phase {}/{} \"{}\" — {}/{} tasks complete",
        current_index + 1,
        phases.len(),
        current.name,
        done,
        current.tasks.len()
    ));
    for phase in phases {
        lines.push(format!("  {}:", phase.name));
        for task in &phase.tasks {
            lines.push(format!("    {} {} {}", symbol(task.status), task.id, task.content));
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::todo::model::Task;

    fn task(id: &str, content: &str, status: TodoStatus, details: Option<&str>) -> Task {
        Task { id: id.into(), content: content.into(), status, notes: None, details: details.map(Into::into) }
    }

    #[test]
    fn full_layout() {
        let phases = vec![
            Phase {
                id: "phase-1".into(),
                name: "Explore".into(),
                tasks: vec![
                    task("task-1", "Read the code", TodoStatus::Completed, None),
                    task("task-2", "Find the bug", TodoStatus::InProgress, Some("look at parse()\nand lex()")),
                ],
            },
            Phase {
                id: "phase-2".into(),
                name: "Fix".into(),
                tasks: vec![
                    task("task-3", "Patch it", TodoStatus::Pending, Some("hidden while pending")),
                    task("task-4", "Old idea", TodoStatus::Abandoned, None),
                ],
            },
        ];
        let text = format_summary(&phases, &["Task \"task-9\" not found".to_owned()]);
        assert_eq!(
            text,
            "Errors: Task \"task-9\" not found\n\
             Remaining items (2):\n  \
             - task-2 Find the bug [in_progress] (Explore)\n      \
             look at parse()\n      \
             and lex()\n  \
             - task-3 Patch it [pending] (Fix)\n\
             Phase 1/2 \"Explore\" — 1/2 tasks complete\n  \
             Explore:\n    \
             ✓ task-1 Read the code\n    \
             → task-2 Find the bug\n  \
             Fix:\n    \
             ○ task-3 Patch it\n    \
             ✗ task-4 Old idea"
        );
    }

    #[test]
    fn all_done_points_at_the_last_phase() {
        let phases = vec![
            Phase {
                id: "phase-1".into(),
                name: "A".into(),
                tasks: vec![task("task-1", "a", TodoStatus::Completed, None)],
            },
            Phase {
                id: "phase-2".into(),
                name: "B".into(),
                tasks: vec![task("task-2", "b", TodoStatus::Completed, None)],
            },
        ];
        let text = format_summary(&phases, &[]);
        assert!(text.starts_with("Remaining items: none.\nPhase 2/2 \"B\" — 1/1 tasks complete\n"), "{text}");
    }

    #[test]
    fn empty_list() {
        assert_eq!(format_summary(&[], &[]), "Todo list cleared.");
        assert_eq!(format_summary(&[], &["a".into(), "b".into()]), "Errors: a; b");
    }
}
