//! The todo widget above the editor: the session's todo list with a mark per task (✓ done,
//! → in progress, ○ pending, ✗ abandoned), drawn while any task is open. A long list is
//! collapsed to the task in progress, the next open ones and the counts; a list with nothing
//! open left is not drawn (as omp hides its todo HUD once every task is closed).

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use rho_rpc::{TodoItem, TodoPhase, TodoStatus};

use super::style;

/// A list taking more rows than this (tasks, and phase names when there are several phases)
/// is collapsed.
const MAX_ROWS: usize = 8;
/// Open tasks shown by a collapsed list (the one in progress first).
const COLLAPSED_OPEN: usize = 3;

/// The widget's lines; none when the list is empty or every task is closed.
pub fn lines(phases: &[TodoPhase]) -> Vec<Line<'static>> {
    let tasks: Vec<&TodoItem> = phases.iter().flat_map(|p| &p.tasks).collect();
    let open = tasks.iter().filter(|t| t.status.is_open()).count();
    if open == 0 {
        return Vec::new();
    }
    let closed = tasks.len() - open;
    let mut lines = vec![Line::from(vec![
        Span::styled("Todos", style::accent().add_modifier(Modifier::BOLD)),
        Span::styled(format!(" {closed}/{}", tasks.len()), style::dim()),
    ])];
    let phase_count = phases.iter().filter(|p| !p.tasks.is_empty()).count();
    let named = phase_count > 1;
    let rows = tasks.len() + if named { phase_count } else { 0 };
    if rows > MAX_ROWS {
        lines.extend(collapsed(phases, &tasks, open));
        return lines;
    }
    for phase in phases.iter().filter(|p| !p.tasks.is_empty()) {
        let indent = if named {
            let done = phase.tasks.iter().filter(|t| !t.status.is_open()).count();
            lines.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(phase.name.clone(), style::bold()),
                Span::styled(format!(" {done}/{}", phase.tasks.len()), style::dim()),
            ]));
            "    "
        } else {
            "  "
        };
        lines.extend(phase.tasks.iter().map(|t| task_line(indent, t)));
    }
    lines
}

/// The task in progress (with its phase's name) and the open tasks after it, then how many
/// more are open.
fn collapsed(phases: &[TodoPhase], tasks: &[&TodoItem], open: usize) -> Vec<Line<'static>> {
    let in_progress = tasks.iter().position(|t| t.status == TodoStatus::InProgress);
    let Some(start) = in_progress.or_else(|| tasks.iter().position(|t| t.status.is_open())) else {
        return Vec::new();
    };
    let shown: Vec<&TodoItem> = tasks[start..]
        .iter()
        .chain(&tasks[..start])
        .filter(|t| t.status.is_open())
        .take(COLLAPSED_OPEN)
        .copied()
        .collect();
    let mut lines = Vec::new();
    if let Some(phase) = phases.iter().find(|p| p.tasks.iter().any(|t| t.id == tasks[start].id))
        && phases.iter().filter(|p| !p.tasks.is_empty()).count() > 1
    {
        lines.push(Line::from(vec![Span::raw("  "), Span::styled(phase.name.clone(), style::bold())]));
    }
    lines.extend(shown.iter().map(|t| task_line("  ", t)));
    if open > shown.len() {
        lines.push(Line::styled(format!("  … {} more open", open - shown.len()), style::dim()));
    }
    lines
}

fn task_line(indent: &str, task: &TodoItem) -> Line<'static> {
    let (mark, mark_style, text_style) = match task.status {
        TodoStatus::Completed => ("✓", style::added(), style::dim().add_modifier(Modifier::CROSSED_OUT)),
        TodoStatus::InProgress => ("→", style::accent(), style::accent().add_modifier(Modifier::BOLD)),
        TodoStatus::Pending => ("○", style::dim(), ratatui::style::Style::new()),
        TodoStatus::Abandoned => ("✗", style::error(), style::dim().add_modifier(Modifier::CROSSED_OUT)),
    };
    let content = task.content.lines().next().unwrap_or_default().to_owned();
    Line::from(vec![
        Span::raw(indent.to_owned()),
        Span::styled(format!("{mark} "), mark_style),
        Span::styled(content, text_style),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(name: &str, tasks: &[(&str, TodoStatus)]) -> TodoPhase {
        let tasks = tasks
            .iter()
            .enumerate()
            .map(|(i, (content, status))| TodoItem {
                id: format!("{name}-{i}"),
                content: (*content).to_owned(),
                status: *status,
                notes: None,
            })
            .collect();
        TodoPhase { id: name.to_owned(), name: name.to_owned(), tasks }
    }

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    use TodoStatus::{Abandoned, Completed, InProgress, Pending};

    #[test]
    fn a_short_list_shows_every_task_with_its_mark() {
        let phases =
            [phase("Work", &[("read", Completed), ("fix", InProgress), ("test", Pending), ("old", Abandoned)])];
        assert_eq!(text(&lines(&phases)), ["Todos 2/4", "  ✓ read", "  → fix", "  ○ test", "  ✗ old"]);
    }

    #[test]
    fn several_phases_are_named_with_their_counts() {
        let phases = [phase("One", &[("a", Completed)]), phase("Two", &[("b", InProgress)])];
        assert_eq!(text(&lines(&phases)), ["Todos 1/2", "  One 1/1", "    ✓ a", "  Two 0/1", "    → b"]);
    }

    #[test]
    fn a_long_list_collapses_to_the_task_in_progress_and_the_counts() {
        let mut tasks: Vec<(&str, TodoStatus)> = vec![("a", Completed), ("b", Completed), ("c", InProgress)];
        tasks.extend([("d", Pending), ("e", Pending), ("f", Pending), ("g", Pending), ("h", Pending), ("i", Pending)]);
        let phases = [phase("Work", &tasks)];
        assert_eq!(text(&lines(&phases)), ["Todos 2/9", "  → c", "  ○ d", "  ○ e", "  … 4 more open"]);
        // Several phases: the phase of the task in progress is named.
        let phases = [phase("One", &[("a", Completed), ("b", Completed)]), phase("Two", &tasks[2..])];
        assert_eq!(text(&lines(&phases)), ["Todos 2/9", "  Two", "  → c", "  ○ d", "  ○ e", "  … 4 more open"]);
    }

    #[test]
    fn nothing_is_drawn_when_every_task_is_closed_or_the_list_is_empty() {
        assert!(lines(&[phase("Work", &[("a", Completed), ("b", Abandoned)])]).is_empty());
        assert!(lines(&[]).is_empty());
    }
}
