//! The `task` tool itself: a batch from its arguments to its result.
//!
//! Before anything runs, the call is checked and may end with a text: `isolated` given while
//! `task.isolation.mode` is `none` (the reference's text, not an error); an unknown or disabled
//! agent, a bad task list, an unknown verification profile, isolation outside a git repository
//! (tool errors). Then every task runs ([`super::runner`]) with at most `task.maxConcurrency` at
//! once, results kept in task order; isolated changes are merged ([`super::merge`]); the result
//! carries the summary text and `details` with every [`SingleResult`] and the summed usage.
//!
//! Artifacts (each sub-agent's session, reply, patch and verification logs) go to the session's
//! artifacts directory (the session file's path without `.jsonl`), or to a temporary directory
//! for a session kept in memory. The `fuse-overlay` and `fuse-projfs` isolation modes are run as
//! `worktree`: rho has no overlay file systems, and a worktree gives the same contract.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use futures::future::BoxFuture;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_tools::ToolOptions;
use rho_types::types::Usage;
use rho_types::{AgentToolResult, ThinkingLevel};
use serde_json::{Map, Value};

use super::agents::{AgentDefinition, discover_agents};
use super::merge::merge;
use super::params::{TaskParams, schema};
use super::progress::{ProgressBoard, elapsed_ms};
use super::result::{AgentProgress, ProgressStatus, SingleResult, TaskToolDetails};
use super::runner::{Batch, Isolation, Slot, run_task};
use super::summary;
use super::verify::resolve;
use super::worktree::Repo;
use super::{TASK_DEPTH_ENV, depth_from_env};
use crate::agent_session::SessionEventSink;
use crate::budget::BudgetTracker;
use crate::config::settings::{IsolationMode, RPC_RESET_PREFIXES};
use crate::config::{ConfigPaths, Settings};

/// The reference's answer to `isolated` while isolation is off (docs/protocol.md, "Exact strings").
pub const ISOLATION_DISABLED: &str = "Task isolation is disabled. Remove the isolated argument or set \
                                      task.isolation.mode to 'worktree', 'fuse-overlay', or 'fuse-projfs'.";

/// The parent's model when a batch starts; sub-agents run with it unless their agent names one.
#[derive(Debug, Clone, PartialEq)]
pub struct ParentModel {
    pub provider: String,
    pub id: String,
    pub thinking: ThinkingLevel,
}

/// What the tool asks of the session that owns it, at call time.
pub trait TaskHost: Send + Sync {
    /// The current model (`None` when none is selected).
    fn parent_model(&self) -> Option<ParentModel>;
    /// The session file, when the session is kept on disk.
    fn session_file(&self) -> Option<PathBuf>;
}

/// Everything the tool is built from.
pub struct TaskEnv {
    pub paths: ConfigPaths,
    pub settings: Settings,
    /// Shell, `PATH` and prefix for verification commands (the bash tool's).
    pub tool_options: ToolOptions,
    /// Receives the `subagent_*` events.
    pub sink: Arc<dyn SessionEventSink>,
    pub budget: Option<Arc<BudgetTracker>>,
    pub host: Arc<dyn TaskHost>,
    /// The rho executable sub-agents run.
    pub program: PathBuf,
}

impl TaskEnv {
    /// The environment a sub-agent gets on top of this process's.
    pub fn child_env(&self) -> Vec<(String, OsString)> {
        vec![
            ("RHO_CODING_AGENT_DIR".into(), self.paths.agent_dir.clone().into_os_string()),
            (TASK_DEPTH_ENV.into(), (depth_from_env() + 1).to_string().into()),
        ]
    }

    /// The settings a sub-agent is given on its command line: this process's `--setting`
    /// values and every explicitly set `todo.*`, `task.*`, `async.*` key (a sub-agent, like RPC
    /// mode, ignores those keys in the settings files), except the budget, which the parent
    /// enforces over its sub-agents' usage.
    pub fn child_settings(&self) -> BTreeMap<String, Value> {
        let mut out: BTreeMap<String, Value> = self.settings.command_line_overrides().clone();
        for prefix in RPC_RESET_PREFIXES {
            for (key, value) in self.settings.section(prefix) {
                out.insert(format!("{prefix}.{key}"), value);
            }
        }
        out.retain(|key, _| !key.starts_with("task.budget."));
        out
    }
}

/// The `task` tool.
pub struct TaskTool {
    env: TaskEnv,
    description: String,
    /// Whether `isolated` and `verify` are offered.
    isolation: bool,
}

impl TaskTool {
    pub fn new(env: TaskEnv) -> Self {
        let task = env.settings.task();
        let isolation = task.isolation.mode != IsolationMode::None;
        let discovery = discover_agents(&env.paths, env.settings.project_trusted());
        let agents: Vec<&AgentDefinition> =
            discovery.agents.iter().filter(|a| !task.disabled_agents.contains(&a.name)).collect();
        let description = describe(&agents, task.max_concurrency, isolation);
        Self { env, description, isolation }
    }

    async fn run(&self, args: Map<String, Value>, ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
        let started = Instant::now();
        let params = TaskParams::parse(args).map_err(ToolError::new)?;
        let task = self.env.settings.task();
        let discovery = discover_agents(&self.env.paths, self.env.settings.project_trusted());
        let project_dir = discovery.project_agents_dir.clone();
        if params.isolated.is_some() && task.isolation.mode == IsolationMode::None {
            let details = TaskToolDetails::empty(project_dir, 0);
            return Ok(AgentToolResult::text(ISOLATION_DISABLED).with_details(details.to_value()));
        }
        let available = |skip: &str| {
            let names: Vec<&str> = discovery
                .agents
                .iter()
                .map(|a| a.name.as_str())
                .filter(|n| *n != skip && !task.disabled_agents.iter().any(|d| d == n))
                .collect();
            if names.is_empty() { "none".to_owned() } else { names.join(", ") }
        };
        let Some(agent) = discovery.get(&params.agent) else {
            return Err(ToolError::new(format!("Unknown agent \"{}\". Available: {}", params.agent, available(""))));
        };
        if task.disabled_agents.contains(&agent.name) {
            return Err(ToolError::new(format!(
                "Agent \"{}\" is disabled in settings (task.disabledAgents). Available: {}",
                agent.name,
                available(&agent.name)
            )));
        }
        params.check_tasks().map_err(ToolError::new)?;
        let isolated = params.isolated == Some(true);
        let verification = resolve(params.verify.as_ref(), isolated, &task.verification).map_err(ToolError::new)?;
        let parent = self.env.host.parent_model().ok_or_else(|| ToolError::new("No model selected."))?;
        let artifacts_dir = self.artifacts_dir()?;
        let isolation = if isolated {
            let repo = Repo::open(&self.env.paths.cwd)
                .await
                .map_err(|e| ToolError::new(format!("Isolated task execution requires a git repository. {e}")))?;
            let scratch = tempfile::Builder::new().prefix("rho-task-wt-").tempdir()?;
            Some(Isolation { repo, scratch, merge: task.isolation.merge })
        } else {
            None
        };

        let stems = unique_stems(&artifacts_dir, params.tasks.iter().map(|t| t.id.as_str()));
        let entries = params
            .tasks
            .iter()
            .enumerate()
            .map(|(index, t)| AgentProgress {
                index,
                id: t.id.clone(),
                agent: agent.name.clone(),
                agent_source: agent.source,
                status: ProgressStatus::Pending,
                task: t.assignment.clone(),
                description: Some(t.description.clone()).filter(|d| !d.is_empty()),
                current_tool: None,
                recent_tools: Vec::new(),
                recent_output: Vec::new(),
                tool_count: 0,
                tokens: 0,
                duration_ms: 0,
                usage: None,
            })
            .collect();
        let board = ProgressBoard::new(entries, project_dir.clone(), ctx.clone());
        board.report_now();
        let model_override = task.agent_model_overrides.get(&agent.name).cloned().or_else(|| agent.model.clone());
        let batch = Batch {
            env: &self.env,
            agent,
            params: &params,
            verification: &verification,
            isolation: isolation.as_ref(),
            artifacts_dir: &artifacts_dir,
            board: &board,
            cancel: &ctx.cancel,
            child_args: self.child_args(agent, &parent, model_override.as_deref()),
            model_override,
        };
        let slots: Vec<Slot> = params
            .tasks
            .iter()
            .zip(stems)
            .enumerate()
            .map(|(index, (item, stem))| Slot { index, item: item.clone(), stem })
            .collect();
        let limit = usize::try_from(task.max_concurrency).unwrap_or(usize::MAX).max(1);
        let mut results: Vec<SingleResult> =
            futures::stream::iter(slots).map(|slot| run_task(&batch, slot)).buffered(limit).collect().await;

        let merge_summary = match &isolation {
            Some(iso) => Some(merge(iso, &mut results, ctx.cancel.is_cancelled()).await),
            None => None,
        };
        drop(isolation);
        let total = elapsed_ms(started);
        let mut usage = Usage::default();
        for u in results.iter().filter_map(|r| r.usage.as_ref()) {
            usage.add(u);
        }
        let text = summary::render(&results, total, merge_summary.as_deref());
        let output_paths: Vec<PathBuf> = results.iter().filter_map(|r| r.output_path.clone()).collect();
        let any_usage = results.iter().any(|r| r.usage.is_some());
        let details = TaskToolDetails {
            project_agents_dir: project_dir,
            results,
            total_duration_ms: total,
            usage: any_usage.then_some(usage),
            output_paths: Some(output_paths),
            progress: None,
        };
        Ok(AgentToolResult::text(text).with_details(details.to_value()))
    }

    /// The session's artifacts directory, created (the user's alone: what is in it is as
    /// private as the session).
    fn artifacts_dir(&self) -> Result<PathBuf, ToolError> {
        let dir = match self.env.host.session_file() {
            Some(file) => file.with_extension(""),
            None => std::env::temp_dir().join(format!("rho-task-{}", uuid::Uuid::new_v4().simple())),
        };
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(&dir)
            .map_err(|e| {
                ToolError::new(format!("Cannot create the task artifacts directory {}: {e}", dir.display()))
            })?;
        Ok(dir)
    }

    /// `rho --mode json` with the model, thinking level, tools, system prompt and settings.
    fn child_args(&self, agent: &AgentDefinition, parent: &ParentModel, model_override: Option<&str>) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--mode".into(), "json".into()];
        match model_override {
            Some(pattern) => args.extend(["--model".into(), pattern.into()]),
            None => args.extend([
                "--provider".into(),
                parent.provider.clone().into(),
                "--model".into(),
                parent.id.clone().into(),
            ]),
        }
        let thinking = agent.thinking.unwrap_or(parent.thinking);
        if let Ok(Value::String(level)) = serde_json::to_value(thinking) {
            args.extend(["--thinking".into(), level.into()]);
        }
        if let Some(tools) = &agent.tools {
            let builtin: Vec<&str> =
                tools.iter().map(String::as_str).filter(|t| rho_tools::builtin_tool_names().contains(t)).collect();
            if builtin.is_empty() {
                args.push("--no-tools".into());
            } else {
                args.extend(["--tools".into(), builtin.join(",").into()]);
            }
        }
        if !agent.system_prompt.trim().is_empty() {
            args.extend(["--append-system-prompt".into(), agent.system_prompt.clone().into()]);
        }
        for (key, value) in self.env.child_settings() {
            args.extend(["--setting".into(), format!("{key}={value}").into()]);
        }
        // A sub-agent trusts what its parent trusts (its worktree is another folder), and
        // nothing is asked again for it.
        args.push(if self.env.settings.project_trusted() { "--trust-project" } else { "--no-approve" }.into());
        args
    }
}

impl Tool for TaskTool {
    fn name(&self) -> &str {
        "task"
    }

    fn label(&self) -> &str {
        "Task"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        schema(self.isolation)
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(self.run(args, ctx))
    }
}

/// Task ids as file stems: unsafe characters replaced, and suffixed (`-2`, `-3`, …) when the
/// artifacts directory already holds files of that name.
fn unique_stems<'a>(dir: &Path, ids: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut taken: HashSet<String> = HashSet::new();
    let exists = |stem: &str| ["md", "patch", "jsonl"].iter().any(|ext| dir.join(format!("{stem}.{ext}")).exists());
    ids.map(|id| {
        let base: String = id
            .trim()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .collect();
        let base = if base.is_empty() { "task".to_owned() } else { base };
        let mut stem = base.clone();
        let mut n = 2;
        while taken.contains(&stem.to_lowercase()) || exists(&stem) {
            stem = format!("{base}-{n}");
            n += 1;
        }
        taken.insert(stem.to_lowercase());
        stem
    })
    .collect()
}

/// The tool's description for the model: how to use it and the agents it can run.
fn describe(agents: &[&AgentDefinition], max_concurrency: u64, isolation: bool) -> String {
    let mut text = String::from(
        "Delegate tasks to sub-agents that work in parallel and report back.\n\nEach task runs as a separate \
         agent with a fresh context: it sees only `context` and its own `assignment`, cannot ask you questions, \
         and its final reply comes back to you. Use it for independent pieces of work or for research that would \
         fill your context; give each task everything it needs.\n\nAgents (`agent`):\n",
    );
    for agent in agents {
        text.push_str(&format!("- {}: {}\n", agent.name, agent.description));
    }
    text.push_str(&format!("\nAt most {max_concurrency} tasks run at once."));
    if isolation {
        text.push_str(
            " With `isolated: true` each task works in its own git worktree of your working tree; its changes \
             come back as a patch, applied to your working tree when every task succeeded. `verify` runs \
             checks on an isolated task's changes before they are returned.",
        );
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn stems_are_safe_and_unique() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Alpha.md"), "old").unwrap();
        let stems = unique_stems(dir.path(), ["Alpha", "Beta/1", "beta_1", ""].into_iter());
        assert_eq!(stems, ["Alpha-2", "Beta_1", "beta_1-2", "task"]);
    }
}
