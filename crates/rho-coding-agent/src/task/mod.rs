//! The `task` tool (docs/protocol.md, "Task tool"; docs/tools.md, "task"): the model hands a batch
//! of assignments to sub-agents, each a child `rho --mode json` process with the parent's model and
//! an agent definition's system prompt and tools, run in parallel up to `task.maxConcurrency`.
//!
//! What lives where:
//! - [`agents`]: agent definitions (bundled, user, project, pi/omp locations) and their parsing;
//! - `params`: the tool's arguments, their JSON Schema and validation;
//! - `child`: one child process, its event stream, progress and usage, and its abort;
//! - `worktree`: isolation in a `git worktree` (baseline, patch, task branch, cleanup);
//! - `verify`: the `verify` argument resolved against the settings, and verification attempts;
//! - `runner`: one task item from spawn to `subagent_end`, with the repair loop;
//! - `tool`: the batch (validation, concurrency, the result);
//! - `merge`: isolated changes back into the working tree (patch or branch);
//! - `result` and `summary`: the result's `details` and its text.
//!
//! Sub-agents are rho itself: a child knows its depth from [`TASK_DEPTH_ENV`], takes the task
//! settings only from its command line (as RPC mode does), and offers the `task` tool only below
//! `task.maxRecursionDepth`.

pub mod agents;
mod child;
mod merge;
mod params;
mod progress;
mod result;
mod runner;
mod summary;
mod tool;
mod verify;
mod worktree;

pub use agents::{AgentDefinition, AgentSource, Discovery, discover_agents};
pub use result::{AgentProgress, ProgressStatus, SingleResult, TaskToolDetails};
pub use tool::{ParentModel, TaskEnv, TaskHost, TaskTool};

/// The environment variable that tells a sub-agent how deep it is (absent: the top level).
pub const TASK_DEPTH_ENV: &str = "RHO_TASK_DEPTH";

/// This process's sub-agent depth: 0 for a top-level rho.
pub fn depth_from_env() -> u32 {
    std::env::var(TASK_DEPTH_ENV).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}
