//! The lines the forks' session events put in the history (budget warnings and the exceeded
//! budget, stream rules that fired, todo reminders, a tool's or extension's notify) and the
//! budget's use as the footer shows it.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use rho_rpc::{BudgetScope, BudgetSnapshot, BudgetStatus, BudgetViolationReason, NotifyType, TtsrRule};

use super::footer::tokens;
use super::style;
use rho_coding_agent::config::settings::BudgetSettings;

/// `notify`: info dim, a warning or an error in its colour with pi's prefix.
pub fn notify(message: &str, kind: Option<NotifyType>) -> Line<'static> {
    match kind {
        Some(NotifyType::Error) => Line::styled(format!("Error: {message}"), style::error()),
        Some(NotifyType::Warning) => Line::styled(format!("Warning: {message}"), style::warning()),
        _ => Line::styled(message.to_owned(), style::dim()),
    }
}

/// `⚑ Stream rule name: description` for each rule that fired.
pub fn stream_rules(rules: &[TtsrRule]) -> Vec<Line<'static>> {
    rules
        .iter()
        .map(|rule| {
            let mut spans = vec![
                Span::styled("⚑ ", style::heading()),
                Span::styled("Stream rule ", style::heading()),
                Span::styled(rule.name.clone(), style::heading().add_modifier(Modifier::UNDERLINED)),
            ];
            if let Some(d) = rule.description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
                spans.push(Span::styled(format!(": {d}"), style::dim()));
            }
            Line::from(spans)
        })
        .collect()
}

/// `↻ Todo reminder (1/3): 2 tasks still open`: the run goes on because tasks are open.
pub fn todo_reminder(open: usize, attempt: u32, max_attempts: u32) -> Line<'static> {
    let tasks = if open == 1 { "task" } else { "tasks" };
    Line::styled(format!("↻ Todo reminder ({attempt}/{max_attempts}): {open} {tasks} still open"), style::dim())
}

/// A budget warning (`exceeded` false) or the exceeded budget: the dimension, its use and its
/// limit.
pub fn budget(
    scope: BudgetScope,
    snapshot: &BudgetSnapshot,
    limits: Option<&BudgetSettings>,
    exceeded: bool,
) -> Line<'static> {
    let scope = match scope {
        BudgetScope::Session => "",
        BudgetScope::Task => " (task)",
        BudgetScope::Subagent => " (sub-agent)",
    };
    let what = snapshot.reason.map(|reason| {
        let used = used(reason, snapshot);
        match limits.and_then(|l| limit(reason, l)) {
            Some(limit) => format!("{} {used} of {limit}", name(reason)),
            None => format!("{} {used}", name(reason)),
        }
    });
    let what = what.unwrap_or_else(|| "limit".to_owned());
    if exceeded {
        Line::styled(format!("✗ Budget exceeded{scope}: {what}; new prompts are refused"), style::error())
    } else {
        Line::styled(format!("⚠ Budget warning{scope}: {what}"), style::warning())
    }
}

/// The footer's `budget …` text: each limit that is set with its use; coloured once a warning
/// or the limit was reached.
pub fn budget_footer(snapshot: &BudgetSnapshot, limits: &BudgetSettings) -> Span<'static> {
    let parts: Vec<String> = rho_coding_agent::budget::DIMENSIONS
        .iter()
        .filter_map(|&d| Some(format!("{} {}/{}", short_name(d), used(d, snapshot), limit(d, limits)?)))
        .collect();
    let text = format!("budget {}", parts.join(" · "));
    let look = match snapshot.status {
        BudgetStatus::Ok => style::dim(),
        BudgetStatus::Warning => style::warning(),
        BudgetStatus::Exceeded => style::error(),
    };
    Span::styled(text, look)
}

fn name(d: BudgetViolationReason) -> &'static str {
    match d {
        BudgetViolationReason::WallTime => "wall time",
        BudgetViolationReason::InputTokens => "input tokens",
        BudgetViolationReason::OutputTokens => "output tokens",
        BudgetViolationReason::TotalTokens => "total tokens",
        BudgetViolationReason::Cost => "cost",
        BudgetViolationReason::ToolCalls => "tool calls",
        BudgetViolationReason::Subagents => "sub-agents",
    }
}

fn short_name(d: BudgetViolationReason) -> &'static str {
    match d {
        BudgetViolationReason::WallTime => "time",
        BudgetViolationReason::InputTokens => "in",
        BudgetViolationReason::OutputTokens => "out",
        BudgetViolationReason::TotalTokens => "tok",
        BudgetViolationReason::Cost => "cost",
        BudgetViolationReason::ToolCalls => "tools",
        BudgetViolationReason::Subagents => "agents",
    }
}

fn used(d: BudgetViolationReason, s: &BudgetSnapshot) -> String {
    match d {
        BudgetViolationReason::WallTime => duration(s.wall_time_ms),
        BudgetViolationReason::InputTokens => tokens(s.input_tokens),
        BudgetViolationReason::OutputTokens => tokens(s.output_tokens),
        BudgetViolationReason::TotalTokens => tokens(s.total_tokens),
        BudgetViolationReason::Cost => format!("${:.2}", s.cost_usd),
        BudgetViolationReason::ToolCalls => s.tool_calls.to_string(),
        BudgetViolationReason::Subagents => s.subagents.to_string(),
    }
}

fn limit(d: BudgetViolationReason, l: &BudgetSettings) -> Option<String> {
    Some(match d {
        BudgetViolationReason::WallTime => duration(l.max_wall_time_ms?),
        BudgetViolationReason::InputTokens => tokens(l.max_input_tokens?),
        BudgetViolationReason::OutputTokens => tokens(l.max_output_tokens?),
        BudgetViolationReason::TotalTokens => tokens(l.max_total_tokens?),
        BudgetViolationReason::Cost => format!("${:.2}", l.max_cost_usd?),
        BudgetViolationReason::ToolCalls => l.max_tool_calls?.to_string(),
        BudgetViolationReason::Subagents => l.max_subagents?.to_string(),
    })
}

/// `42s`, `3m05s`.
fn duration(ms: u64) -> String {
    let s = ms / 1000;
    if s < 60 { format!("{s}s") } else { format!("{}m{:02}s", s / 60, s % 60) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(status: BudgetStatus, reason: Option<BudgetViolationReason>) -> BudgetSnapshot {
        BudgetSnapshot {
            status,
            wall_time_ms: 65_000,
            input_tokens: 1200,
            output_tokens: 30,
            total_tokens: 1230,
            cost_usd: 0.8,
            tool_calls: 4,
            subagents: 0,
            reason,
        }
    }

    fn limits() -> BudgetSettings {
        BudgetSettings {
            max_wall_time_ms: Some(600_000),
            max_cost_usd: Some(1.0),
            max_tool_calls: Some(5),
            warn_at_ratio: 0.8,
            ..BudgetSettings::default()
        }
    }

    fn text(line: &Line<'_>) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn a_warning_and_an_exceeded_budget_name_the_dimension_its_use_and_limit() {
        let warn = snapshot(BudgetStatus::Warning, Some(BudgetViolationReason::Cost));
        assert_eq!(
            text(&budget(BudgetScope::Session, &warn, Some(&limits()), false)),
            "⚠ Budget warning: cost $0.80 of $1.00"
        );
        let over = snapshot(BudgetStatus::Exceeded, Some(BudgetViolationReason::ToolCalls));
        assert_eq!(
            text(&budget(BudgetScope::Task, &over, None, true)),
            "✗ Budget exceeded (task): tool calls 4; new prompts are refused"
        );
    }

    #[test]
    fn a_todo_reminder_counts_the_open_tasks() {
        assert_eq!(text(&todo_reminder(2, 1, 3)), "↻ Todo reminder (1/3): 2 tasks still open");
        assert_eq!(text(&todo_reminder(1, 3, 3)), "↻ Todo reminder (3/3): 1 task still open");
    }

    #[test]
    fn the_footer_lists_every_limit_that_is_set() {
        let span = budget_footer(&snapshot(BudgetStatus::Ok, None), &limits());
        assert_eq!(span.content, "budget time 1m05s/10m00s · cost $0.80/$1.00 · tools 4/5");
    }
}
