//! The batch's live progress: one [`AgentProgress`] per task, updated as the sub-agents work and
//! sent to the host as `tool_execution_update` (the tool context's update callback) whenever
//! something changes: a sub-agent starts or ends, starts a tool, or finishes a reply (whose
//! usage is summed into the update's `details.usage`).

use parking_lot::Mutex;
use std::path::PathBuf;
use std::time::Instant;

use rho_agent::ToolContext;
use rho_types::AgentToolResult;
use rho_types::types::Usage;

use super::result::{AgentProgress, ProgressStatus, RecentTool, TaskToolDetails};

/// How many recent tools and output lines an entry keeps.
const RECENT: usize = 5;
/// The longest argument summary kept for a recent tool.
const ARGS_CHARS: usize = 120;

pub struct ProgressBoard {
    entries: Mutex<Vec<AgentProgress>>,
    started: Instant,
    project_agents_dir: Option<PathBuf>,
    ctx: ToolContext,
}

impl ProgressBoard {
    pub fn new(entries: Vec<AgentProgress>, project_agents_dir: Option<PathBuf>, ctx: ToolContext) -> Self {
        Self { entries: Mutex::new(entries), started: Instant::now(), project_agents_dir, ctx }
    }

    /// Changes entry `index` and reports the whole board.
    pub fn update(&self, index: usize, change: impl FnOnce(&mut AgentProgress)) {
        let snapshot = {
            let mut entries = self.entries.lock();
            if let Some(entry) = entries.get_mut(index) {
                change(entry);
            }
            entries.clone()
        };
        self.report(snapshot);
    }

    /// Entry `index` as it is now.
    pub fn entry(&self, index: usize) -> Option<AgentProgress> {
        self.entries.lock().get(index).cloned()
    }

    /// Reports the board as it is.
    pub fn report_now(&self) {
        let snapshot = self.entries.lock().clone();
        self.report(snapshot);
    }

    fn report(&self, progress: Vec<AgentProgress>) {
        let mut usage = Usage::default();
        let mut any = false;
        for u in progress.iter().filter_map(|p| p.usage.as_ref()) {
            usage.add(u);
            any = true;
        }
        let running = progress.iter().filter(|p| p.status == ProgressStatus::Running).count();
        let text = format!("Running {} of {} agents...", running, progress.len());
        let mut details = TaskToolDetails::empty(self.project_agents_dir.clone(), elapsed_ms(self.started));
        details.usage = any.then_some(usage);
        details.progress = Some(progress);
        self.ctx.update(AgentToolResult::text(text).with_details(details.to_value()));
    }
}

/// Milliseconds since `start`.
pub fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Records a tool the sub-agent started.
pub fn tool_started(entry: &mut AgentProgress, name: &str, args: &serde_json::Map<String, serde_json::Value>) {
    entry.tool_count += 1;
    entry.current_tool = Some(name.to_owned());
    let mut args = serde_json::Value::Object(args.clone()).to_string();
    if args.chars().count() > ARGS_CHARS {
        args = args.chars().take(ARGS_CHARS).collect::<String>() + "…";
    }
    entry.recent_tools.push(RecentTool { tool: name.to_owned(), args });
    if entry.recent_tools.len() > RECENT {
        entry.recent_tools.remove(0);
    }
}

/// Records a finished reply: its usage and its last lines of text.
pub fn reply_finished(entry: &mut AgentProgress, usage: &Usage, text: &str) {
    entry.usage.get_or_insert_with(Usage::default).add(usage);
    entry.tokens += usage.context_tokens();
    let lines: Vec<String> = text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect();
    if !lines.is_empty() {
        entry.recent_output = lines[lines.len().saturating_sub(RECENT)..].to_vec();
    }
}
