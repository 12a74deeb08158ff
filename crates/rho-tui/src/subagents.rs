//! The task tool's sub-agents while they run: one live line each above the editor (name and
//! description, status, the tool it runs, its verification command or its last output, tool
//! count, tokens, cost, time), read from the tool's progress updates (`details.progress`) and
//! the `subagent_verification_*` events, and one summary line each for the history when the
//! tool ends (from `details.results`, with the verification's outcome). Both are read as the
//! task tool's own types.

use std::time::{Duration, Instant};

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use rho_coding_agent::task::{AgentProgress, ProgressStatus, SingleResult};
use rho_rpc::VerificationStatus;
use rho_types::types::Usage;
use serde::Deserialize;
use serde_json::Value;

use super::footer::tokens;
use super::style;

/// The longest activity text (a tool, a line of output) shown on a live line.
const ACTIVITY_CHARS: usize = 48;
/// The longest description shown.
const DESCRIPTION_CHARS: usize = 60;

/// A sub-agent on the board, with when it was first seen running.
#[derive(Debug)]
struct Entry {
    progress: AgentProgress,
    started: Option<Instant>,
    /// What its verification runs now (`verifying`, `verifying: <command>`).
    verifying: Option<String>,
}

/// The sub-agents of one running task call.
#[derive(Debug)]
pub struct TaskBoard {
    pub call_id: String,
    entries: Vec<Entry>,
}

impl TaskBoard {
    pub fn new(call_id: String) -> Self {
        Self { call_id, entries: Vec::new() }
    }

    /// Takes a progress update's `details`; entries keep the time they started running.
    pub fn update(&mut self, details: Option<&Value>, now: Instant) {
        let Some(list) = details.and_then(|d| d.get("progress")) else { return };
        let Ok(progress) = Vec::<AgentProgress>::deserialize(list) else { return };
        let mut entries = Vec::with_capacity(progress.len());
        for p in progress {
            let old = self.entries.iter().find(|e| e.progress.id == p.id);
            let started = old.and_then(|e| e.started).or_else(|| (p.status != ProgressStatus::Pending).then_some(now));
            let verifying = old.and_then(|e| e.verifying.clone());
            entries.push(Entry { progress: p, started, verifying });
        }
        self.entries = entries;
    }

    /// Sets what sub-agent `id`'s verification runs (`None`: it ended); false when the
    /// sub-agent is not on this board.
    pub fn verifying(&mut self, id: &str, what: Option<String>) -> bool {
        match self.entries.iter_mut().find(|e| e.progress.id == id) {
            Some(entry) => {
                entry.verifying = what;
                true
            }
            None => false,
        }
    }

    /// One line per sub-agent.
    pub fn lines(&self, now: Instant) -> Vec<Line<'static>> {
        self.entries.iter().map(|e| live_line(e, now)).collect()
    }
}

fn live_line(entry: &Entry, now: Instant) -> Line<'static> {
    let p = &entry.progress;
    let (mark, mark_style) = mark(p.status);
    let mut spans = vec![Span::raw("  "), Span::styled(format!("{mark} "), mark_style)];
    spans.extend(title(&p.id, &p.agent, p.description.as_deref()));
    let activity = match (&p.current_tool, p.recent_output.last()) {
        _ if p.status == ProgressStatus::Pending => "waiting".to_owned(),
        _ if entry.verifying.is_some() => entry.verifying.clone().unwrap_or_default(),
        (Some(tool), _) if p.status == ProgressStatus::Running => format!("▸ {tool}"),
        (_, Some(line)) if p.status == ProgressStatus::Running => clip(line.trim(), ACTIVITY_CHARS),
        _ => p.status.as_str().to_owned(),
    };
    spans.push(Span::styled(" · ", style::dim()));
    spans.push(Span::styled(activity, style::accent()));
    let mut facts = Vec::new();
    if p.tool_count > 0 {
        facts.push(format!("{} tool{}", p.tool_count, if p.tool_count == 1 { "" } else { "s" }));
    }
    facts.extend(usage_facts(p.tokens, p.usage.as_ref()));
    let elapsed = match entry.started {
        _ if p.duration_ms > 0 => Some(Duration::from_millis(p.duration_ms)),
        Some(started) => Some(now.saturating_duration_since(started)),
        None => None,
    };
    facts.extend(elapsed.map(seconds));
    for fact in facts {
        spans.push(Span::styled(format!(" · {fact}"), style::dim()));
    }
    Line::from(spans)
}

/// The history's lines for a finished task call: one per sub-agent of `details.results`
/// (nothing when the result has none, e.g. a refused call).
pub fn summary(details: Option<&Value>) -> Vec<Line<'static>> {
    let Some(list) = details.and_then(|d| d.get("results")) else { return Vec::new() };
    let Ok(outcomes) = Vec::<SingleResult>::deserialize(list) else { return Vec::new() };
    outcomes
        .iter()
        .map(|o| {
            let status = if o.aborted == Some(true) {
                "cancelled".to_owned()
            } else if o.exit_code != 0 {
                format!("failed (exit {})", o.exit_code)
            } else if o.error.is_some() {
                "merge failed".to_owned()
            } else {
                "completed".to_owned()
            };
            let done = o.succeeded();
            let (mark, mark_style) = mark(if done { ProgressStatus::Completed } else { ProgressStatus::Failed });
            let mut spans = vec![Span::styled(format!("{mark} "), mark_style)];
            spans.extend(title(&o.id, &o.agent, o.description.as_deref()));
            spans.push(Span::styled(format!(" · {status}"), if done { style::dim() } else { style::error() }));
            match o.verification.as_ref().map(|v| v.status) {
                Some(VerificationStatus::Passed) => spans.push(Span::styled(" · verified", style::added())),
                Some(VerificationStatus::Failed) => spans.push(Span::styled(" · verification failed", style::error())),
                Some(VerificationStatus::Skipped) => spans.push(Span::styled(" · verification skipped", style::dim())),
                _ => {}
            }
            let mut facts = usage_facts(o.tokens, o.usage.as_ref());
            facts.push(seconds(Duration::from_millis(o.duration_ms)));
            for fact in facts {
                spans.push(Span::styled(format!(" · {fact}"), style::dim()));
            }
            Line::from(spans)
        })
        .collect()
}

fn mark(status: ProgressStatus) -> (&'static str, Style) {
    match status {
        ProgressStatus::Pending => ("○", style::dim()),
        ProgressStatus::Running => ("●", style::accent()),
        ProgressStatus::Completed => ("✓", style::added()),
        ProgressStatus::Aborted => ("✗", style::warning()),
        ProgressStatus::Failed => ("✗", style::error()),
    }
}

/// `id [agent] description`.
fn title(id: &str, agent: &str, description: Option<&str>) -> Vec<Span<'static>> {
    let mut spans = vec![
        Span::styled(id.to_owned(), Style::new().add_modifier(Modifier::BOLD)),
        Span::styled(format!(" [{agent}]"), style::dim()),
    ];
    if let Some(d) = description.map(str::trim).filter(|d| !d.is_empty() && *d != id) {
        spans.push(Span::raw(format!(" {}", clip(d, DESCRIPTION_CHARS))));
    }
    spans
}

/// `1.2k tok`, and `$0.012` when the usage has a price.
fn usage_facts(tokens_used: u64, usage: Option<&Usage>) -> Vec<String> {
    let mut facts = Vec::new();
    if tokens_used > 0 {
        facts.push(format!("{} tok", tokens(tokens_used)));
    }
    if let Some(cost) = usage.map(|u| u.cost.total).filter(|c| *c > 0.0) {
        facts.push(format!("${cost:.3}"));
    }
    facts
}

/// `4s`, `2m05s`.
fn seconds(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 { format!("{s}s") } else { format!("{}m{:02}s", s / 60, s % 60) }
}

/// The first line of `text`, at most `max` characters (an ellipsis marks the cut).
fn clip(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or_default();
    if first.chars().count() <= max {
        first.to_owned()
    } else {
        first.chars().take(max - 1).collect::<String>() + "…"
    }
}

#[cfg(test)]
mod tests {
    use rho_coding_agent::task::{AgentSource, TaskToolDetails};
    use rho_rpc::VerificationResult;
    use serde_json::json;

    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
    }

    fn agent(id: &str, name: &str, status: ProgressStatus) -> AgentProgress {
        AgentProgress {
            index: 0,
            id: id.into(),
            agent: name.into(),
            agent_source: AgentSource::Bundled,
            status,
            task: "the task".into(),
            description: None,
            current_tool: None,
            recent_tools: Vec::new(),
            recent_output: Vec::new(),
            tool_count: 0,
            tokens: 0,
            duration_ms: 0,
            usage: None,
        }
    }

    fn outcome(id: &str, exit_code: i32, duration_ms: u64, tokens: u64) -> SingleResult {
        SingleResult {
            index: 0,
            id: id.into(),
            agent: "explore".into(),
            agent_source: AgentSource::Bundled,
            task: "the task".into(),
            assignment: None,
            description: None,
            exit_code,
            output: String::new(),
            stderr: String::new(),
            truncated: false,
            duration_ms,
            tokens,
            model_override: None,
            error: None,
            aborted: None,
            abort_reason: None,
            usage: None,
            output_path: None,
            patch_path: None,
            branch_name: None,
            output_meta: None,
            verification: None,
        }
    }

    /// `details` as the task tool writes them.
    fn details(progress: Vec<AgentProgress>, results: Vec<SingleResult>) -> Value {
        let mut details = TaskToolDetails::empty(None, 0);
        details.progress = Some(progress);
        details.results = results;
        serde_json::to_value(details).unwrap()
    }

    #[test]
    fn a_running_sub_agent_shows_its_tool_counts_and_time() {
        let start = Instant::now();
        let mut board = TaskBoard::new("call".into());
        let mut alpha = agent("Alpha", "explore", ProgressStatus::Running);
        alpha.description = Some("first".into());
        alpha.current_tool = Some("ls".into());
        alpha.tool_count = 1;
        alpha.tokens = 1500;
        alpha.usage =
            Some(serde_json::from_value(json!({"input": 1000, "output": 500, "cost": {"total": 0.0125}})).unwrap());
        board.update(Some(&details(vec![alpha, agent("Beta", "explore", ProgressStatus::Pending)], Vec::new())), start);
        let lines = text(&board.lines(start + Duration::from_secs(75)));
        assert_eq!(
            lines,
            ["  ● Alpha [explore] first · ▸ ls · 1 tool · 1.5k tok · $0.013 · 1m15s", "  ○ Beta [explore] · waiting"]
        );
    }

    #[test]
    fn the_last_output_line_shows_when_no_tool_runs() {
        let start = Instant::now();
        let mut board = TaskBoard::new("call".into());
        let mut a = agent("A", "task", ProgressStatus::Running);
        a.recent_output = vec!["one".into(), "two".into()];
        let progress = details(vec![a], Vec::new());
        board.update(Some(&progress), start);
        // A later update keeps the start time.
        board.update(Some(&progress), start + Duration::from_secs(5));
        assert_eq!(text(&board.lines(start + Duration::from_secs(7))), ["  ● A [task] · two · 7s"]);
    }

    #[test]
    fn a_finished_sub_agent_shows_its_status() {
        let start = Instant::now();
        let mut board = TaskBoard::new("call".into());
        board.update(Some(&details(vec![agent("A", "task", ProgressStatus::Aborted)], Vec::new())), start);
        assert_eq!(text(&board.lines(start)), ["  ✗ A [task] · aborted · 0s"]);
    }

    #[test]
    fn the_summary_has_a_line_per_result() {
        let mut alpha = outcome("Alpha", 0, 2100, 300);
        alpha.description = Some("first".into());
        let details = details(Vec::new(), vec![alpha, outcome("Beta", 1, 500, 0)]);
        assert_eq!(
            text(&summary(Some(&details))),
            ["✓ Alpha [explore] first · completed · 300 tok · 2s", "✗ Beta [explore] · failed (exit 1) · 0s"]
        );
        assert!(summary(Some(&json!({"results": "nonsense"}))).is_empty());
    }

    #[test]
    fn a_verification_shows_while_it_runs_and_in_the_summary() {
        let start = Instant::now();
        let mut board = TaskBoard::new("call".into());
        let progress = details(vec![agent("A", "task", ProgressStatus::Running)], Vec::new());
        board.update(Some(&progress), start);
        assert!(board.verifying("A", Some("verifying: test".into())));
        assert!(!board.verifying("B", None));
        board.update(Some(&progress), start);
        assert_eq!(text(&board.lines(start)), ["  ● A [task] · verifying: test · 0s"]);
        let mut a = outcome("A", 0, 0, 0);
        a.agent = "task".into();
        let verification: VerificationResult =
            serde_json::from_value(json!({"requested": true, "status": "passed", "attempts": [], "retriesUsed": 0}))
                .unwrap();
        a.verification = Some(verification);
        assert_eq!(text(&summary(Some(&details(Vec::new(), vec![a])))), ["✓ A [task] · completed · verified · 0s"]);
    }
}
