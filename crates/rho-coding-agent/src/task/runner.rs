//! One task item, from its spawn to its `subagent_end`: the budget's consent, the worktree (when
//! isolated), the sub-agent process, verification with the bounded repair loop, the patch, and
//! the worktree's removal whatever happened.
//!
//! Events for one task, in order: `subagent_start` → (the sub-agent runs) → per verification
//! attempt `subagent_verification_start` → (`…_command_start` → `…_command_end`)× →
//! `subagent_verification_end`; before each repair run (`retry_once`) another `subagent_start`
//! with the same id, since a new sub-agent process starts; finally one `subagent_end` carrying
//! the `VerificationResult`. A sub-agent that fails makes its attempt `skipped` (start and end
//! events, no commands); a task that never started (aborted before, or refused by the budget)
//! emits nothing.
//!
//! Exit codes (S2's table): the sub-agent's own when it failed; 1 when verification failed
//! (`return_failure` keeps the patch, `discard_patch` drops it; `retry_once` keeps it); else 0.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rho_rpc::{
    AttemptStatus, SessionEvent, SubagentLifecycle, VerificationResult, VerificationStatus, VerifyOnFailure,
};
use rho_types::types::Usage;
use tokio_util::sync::CancellationToken;

use super::agents::AgentDefinition;
use super::child::{ChildActivity, ChildOutcome, ChildSpec, run_child};
use super::params::{TaskItem, TaskParams, task_prompt};
use super::progress::{ProgressBoard, elapsed_ms, reply_finished, tool_started};
use super::result::{OutputMeta, ProgressStatus, SingleResult};
use super::tool::TaskEnv;
use super::verify::attempt::{AttemptEnv, CommandFailure};
use super::verify::{Verification, VerifyPlan};
use super::worktree::{Repo, Worktree};
use crate::config::settings::IsolationMerge;

/// The most output kept from a sub-agent's reply (bytes and lines).
const MAX_OUTPUT_BYTES: usize = 500_000;
const MAX_OUTPUT_LINES: usize = 5_000;

/// The batch's isolation: the repository and a scratch directory for worktrees and indexes.
pub struct Isolation {
    pub repo: Repo,
    pub scratch: tempfile::TempDir,
    pub merge: IsolationMerge,
}

/// What every task of a batch shares.
pub struct Batch<'a> {
    pub env: &'a TaskEnv,
    pub agent: &'a AgentDefinition,
    pub params: &'a TaskParams,
    pub verification: &'a Verification,
    pub isolation: Option<&'a Isolation>,
    pub artifacts_dir: &'a Path,
    pub board: &'a ProgressBoard,
    pub cancel: &'a CancellationToken,
    /// The child's arguments, without `--session`.
    pub child_args: Vec<OsString>,
    pub model_override: Option<String>,
}

/// One task of the batch.
pub struct Slot {
    pub index: usize,
    pub item: TaskItem,
    /// The task's artifact file stem (its id, made unique in the artifacts directory).
    pub stem: String,
}

/// Runs one task to its end.
pub async fn run_task(batch: &Batch<'_>, slot: Slot) -> SingleResult {
    let started = Instant::now();
    let prompt = task_prompt(batch.params.context.as_deref(), &slot.item.assignment, batch.params.schema.as_deref());
    let mut result = SingleResult {
        index: slot.index,
        id: slot.item.id.clone(),
        agent: batch.agent.name.clone(),
        agent_source: batch.agent.source,
        task: prompt.clone(),
        assignment: Some(slot.item.assignment.clone()),
        description: Some(slot.item.description.clone()).filter(|d| !d.is_empty()),
        exit_code: 1,
        output: String::new(),
        stderr: String::new(),
        truncated: false,
        duration_ms: 0,
        tokens: 0,
        model_override: batch.model_override.clone(),
        error: None,
        aborted: None,
        abort_reason: None,
        usage: None,
        output_path: None,
        patch_path: None,
        branch_name: None,
        output_meta: None,
        verification: None,
    };
    if batch.cancel.is_cancelled() {
        return not_started(batch, result, "Skipped (cancelled before start)".into(), true);
    }
    if let Some(budget) = &batch.env.budget
        && let Err(reason) = budget.try_spawn_subagent()
    {
        return not_started(batch, result, format!("Budget exceeded: {}", reason.as_str()), true);
    }
    let worktree = match batch.isolation {
        Some(iso) => {
            let dir = iso.scratch.path().join(&slot.stem);
            let index = iso.scratch.path().join(format!("{}.index", slot.stem));
            match Worktree::create(&iso.repo, dir, index).await {
                Ok(w) => Some(w),
                Err(e) => return not_started(batch, result, format!("Cannot create the task's worktree: {e}"), false),
            }
        }
        None => None,
    };
    let cwd = match (&worktree, batch.isolation) {
        (Some(w), Some(iso)) => w.work_dir(&iso.repo),
        _ => batch.env.paths.cwd.clone(),
    };
    let run = TaskRun { batch, slot: &slot, cwd, prompt };
    run.lifecycle("started");
    run.execute(worktree.as_ref(), &mut result).await;
    if let Some(w) = worktree {
        w.remove().await;
    }
    result.duration_ms = elapsed_ms(started);
    let status = match (result.aborted, result.exit_code) {
        (Some(true), _) => ProgressStatus::Aborted,
        (_, 0) => ProgressStatus::Completed,
        _ => ProgressStatus::Failed,
    };
    let duration = result.duration_ms;
    batch.board.update(slot.index, |p| {
        p.status = status;
        p.current_tool = None;
        p.duration_ms = duration;
    });
    batch.env.sink.emit(
        SessionEvent::SubagentEnd {
            id: result.id.clone(),
            agent: result.agent.clone(),
            exit_code: result.exit_code,
            verification: result.verification.clone(),
        }
        .into(),
    );
    run.lifecycle(match status {
        ProgressStatus::Aborted => "aborted",
        ProgressStatus::Completed => "completed",
        _ => "failed",
    });
    result
}

/// A task that did not start.
fn not_started(batch: &Batch<'_>, mut result: SingleResult, error: String, aborted: bool) -> SingleResult {
    result.stderr = error.clone();
    result.error = Some(error.clone());
    if aborted {
        result.aborted = Some(true);
        result.abort_reason = Some(error);
    }
    let status = if aborted { ProgressStatus::Aborted } else { ProgressStatus::Failed };
    batch.board.update(result.index, |p| p.status = status);
    result
}

/// A started task's working state.
struct TaskRun<'a, 'b> {
    batch: &'a Batch<'b>,
    slot: &'a Slot,
    cwd: PathBuf,
    prompt: String,
}

impl TaskRun<'_, '_> {
    /// omp's `subagent_lifecycle` for this task.
    fn lifecycle(&self, status: &str) {
        let batch = self.batch;
        let payload = SubagentLifecycle {
            id: self.slot.item.id.clone(),
            agent: batch.agent.name.clone(),
            agent_source: batch.agent.source.as_str().to_owned(),
            description: Some(self.slot.item.description.clone()).filter(|d| !d.is_empty()),
            status: status.to_owned(),
            session_file: Some(self.session_file().to_string_lossy().into_owned()),
            parent_tool_call_id: None,
            index: self.slot.index,
        };
        batch.env.sink.emit(SessionEvent::SubagentLifecycle { payload }.into());
    }

    /// omp's `subagent_progress` for this task, when the host reads it.
    fn tell_progress(&self) {
        let sink = &self.batch.env.sink;
        if !sink.wants_subagent_progress() {
            return;
        }
        let Some(progress) = self.batch.board.entry(self.slot.index) else { return };
        let mut payload = self.payload_base();
        payload.insert("progress".into(), serde_json::to_value(progress).unwrap_or_default());
        payload.insert("sessionFile".into(), self.session_file().to_string_lossy().into());
        sink.emit(SessionEvent::SubagentProgress { payload: payload.into() }.into());
    }

    /// omp's `subagent_event` for an event of the sub-agent's run, when the host reads them.
    fn tell_event(&self, line: &str) {
        let sink = &self.batch.env.sink;
        if !sink.wants_subagent_events() {
            return;
        }
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else { return };
        // omp's hosts read these; pi 1.6's declared prompt is not a message of theirs.
        if event["message"]["role"] == "system" {
            return;
        }
        let mut payload = serde_json::Map::new();
        payload.insert("id".into(), self.slot.item.id.clone().into());
        payload.extend(self.payload_base());
        payload.insert("event".into(), event);
        sink.emit(SessionEvent::SubagentEvent { payload: payload.into() }.into());
    }

    /// The fields omp's sub-agent payloads share: `{index, agent, agentSource, task, assignment}`.
    fn payload_base(&self) -> serde_json::Map<String, serde_json::Value> {
        let batch = self.batch;
        let mut base = serde_json::Map::new();
        base.insert("index".into(), self.slot.index.into());
        base.insert("agent".into(), batch.agent.name.clone().into());
        base.insert("agentSource".into(), batch.agent.source.as_str().into());
        base.insert("task".into(), self.slot.item.description.clone().into());
        base.insert("assignment".into(), self.slot.item.assignment.clone().into());
        base
    }

    /// The sub-agent's session file.
    fn session_file(&self) -> PathBuf {
        self.batch.artifacts_dir.join(format!("{}.jsonl", self.slot.stem))
    }

    async fn execute(&self, worktree: Option<&Worktree>, result: &mut SingleResult) {
        let mut usage = Usage::default();
        let mut child = self.spawn(self.prompt.clone(), &mut usage).await;
        let verification = match (self.batch.verification, worktree) {
            (Verification::Plan(plan), Some(_)) => Some(self.verify(plan, &mut child, &mut usage).await),
            (other, _) => other.unrun(VerificationStatus::Skipped),
        };
        let failed_verification = verification.as_ref().is_some_and(|v| v.status == VerificationStatus::Failed);
        result.exit_code = if child.exit_code != 0 {
            child.exit_code
        } else if failed_verification {
            1
        } else {
            0
        };
        result.error = child.error.clone().or_else(|| failed_verification.then(|| "verification failed".to_owned()));
        if child.aborted {
            result.aborted = Some(true);
            result.abort_reason = Some("Aborted".into());
        }
        result.stderr = child.stderr.clone();
        result.tokens = usage.context_tokens();
        result.usage = Some(usage);
        self.keep_output(&child.output, result);
        if let Some(worktree) = worktree
            && child.exit_code == 0
        {
            let discard = failed_verification
                && matches!(self.batch.verification, Verification::Plan(p) if p.on_failure == VerifyOnFailure::DiscardPatch);
            if !discard {
                self.keep_patch(worktree, result).await;
            }
        }
        result.verification = verification;
    }

    /// Starts the sub-agent with `prompt` (continuing its session on a repair run).
    async fn spawn(&self, prompt: String, usage: &mut Usage) -> ChildOutcome {
        let batch = self.batch;
        let index = self.slot.index;
        batch.env.sink.emit(
            SessionEvent::SubagentStart {
                id: self.slot.item.id.clone(),
                agent: batch.agent.name.clone(),
                isolated: batch.isolation.is_some(),
            }
            .into(),
        );
        batch.board.update(index, |p| p.status = ProgressStatus::Running);
        let mut args = batch.child_args.clone();
        args.push("--session".into());
        args.push(self.session_file().into());
        let spec = ChildSpec {
            program: batch.env.program.clone(),
            args,
            cwd: self.cwd.clone(),
            env: batch.env.child_env(),
            prompt,
        };
        let budget = batch.env.budget.clone();
        let mut observe = |activity: ChildActivity<'_>| {
            match activity {
                ChildActivity::ToolStart { name, args } => batch.board.update(index, |p| tool_started(p, name, args)),
                ChildActivity::ToolEnd => batch.board.update(index, |p| p.current_tool = None),
                ChildActivity::Reply { usage, text } => {
                    batch.board.update(index, |p| reply_finished(p, usage, text));
                    if let Some(budget) = &budget {
                        budget.record_usage(usage);
                    }
                }
                ChildActivity::Event(line) => {
                    self.tell_event(line);
                    return;
                }
            }
            self.tell_progress();
        };
        let outcome = run_child(&spec, batch.cancel, &mut observe).await;
        usage.add(&outcome.usage);
        outcome
    }

    /// Verification attempts, with repair runs while `retry_once` allows them.
    async fn verify(&self, plan: &VerifyPlan, child: &mut ChildOutcome, usage: &mut Usage) -> VerificationResult {
        let batch = self.batch;
        let env = AttemptEnv {
            id: &self.slot.item.id,
            plan,
            cwd: &self.cwd,
            artifacts_dir: batch.artifacts_dir,
            stem: &self.slot.stem,
            sink: batch.env.sink.as_ref(),
            cancel: batch.cancel,
            budget: batch.env.budget.as_deref(),
            shell: &batch.env.tool_options,
        };
        let mut attempts = Vec::new();
        let mut retries_used = 0;
        loop {
            let number = u32::try_from(attempts.len()).unwrap_or(u32::MAX).saturating_add(1);
            if child.exit_code != 0 {
                attempts.push(env.skipped(number, format!("the sub-agent exited with code {}", child.exit_code)));
                break;
            }
            let outcome = env.run(number).await;
            let failed = outcome.result.status == AttemptStatus::Failed;
            let stopped = outcome.result.error.is_some();
            attempts.push(outcome.result);
            if !failed || stopped || batch.cancel.is_cancelled() {
                break;
            }
            let may_retry = plan.on_failure == VerifyOnFailure::RetryOnce && retries_used < plan.max_retries;
            if !may_retry || batch.env.budget.as_ref().is_some_and(|b| b.try_spawn_subagent().is_err()) {
                break;
            }
            retries_used += 1;
            *child = self.spawn(repair_prompt(number, &outcome.failures), usage).await;
        }
        let status = match attempts.last().map(|a| a.status) {
            Some(AttemptStatus::Passed) => VerificationStatus::Passed,
            Some(AttemptStatus::Skipped) if attempts.len() == 1 => VerificationStatus::Skipped,
            _ => VerificationStatus::Failed,
        };
        VerificationResult {
            requested: true,
            profile: plan.profile.clone(),
            mode: Some(plan.mode),
            status,
            attempts,
            retries_used,
            on_failure: Some(plan.on_failure),
        }
    }

    /// The reply as the result's `output` (capped), also written to `<stem>.md`.
    fn keep_output(&self, output: &str, result: &mut SingleResult) {
        let (kept, truncated) = cap_output(output);
        result.output_meta =
            Some(OutputMeta { line_count: output.lines().count(), char_count: output.chars().count() });
        result.truncated = truncated;
        if !output.is_empty() {
            let path = self.batch.artifacts_dir.join(format!("{}.md", self.slot.stem));
            match std::fs::write(&path, output) {
                Ok(()) => result.output_path = Some(path),
                Err(e) => tracing::warn!("cannot write {}: {e}", path.display()),
            }
        }
        result.output = kept;
    }

    /// The sub-agent's changes as `<stem>.patch`.
    async fn keep_patch(&self, worktree: &Worktree, result: &mut SingleResult) {
        let path = self.batch.artifacts_dir.join(format!("{}.patch", self.slot.stem));
        let written = match worktree.patch().await {
            Ok(patch) => std::fs::write(&path, patch).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match written {
            Ok(()) => result.patch_path = Some(path),
            Err(e) => result.error = Some(format!("Patch capture failed: {e}")),
        }
    }
}

/// The prompt of a repair run: what failed, then the request to fix it.
fn repair_prompt(attempt: u32, failures: &[CommandFailure]) -> String {
    let mut text = format!(
        "Verification of your changes failed (attempt {attempt}). These checks must pass before your work is \
         accepted:\n"
    );
    for f in failures {
        let timed_out = if f.timed_out { ", timed out" } else { "" };
        text.push_str(&format!("\n### {} (exit code {}{timed_out})\n$ {}\n", f.name, f.exit_code, f.command));
        if !f.output_tail.is_empty() {
            text.push_str(&format!("```\n{}\n```\n", f.output_tail));
        }
    }
    text.push_str(
        "\nFix the problems in the workspace so that these checks pass, then reply with a short report of what \
         you changed.",
    );
    text
}

/// At most [`MAX_OUTPUT_BYTES`] and [`MAX_OUTPUT_LINES`] of `output`; true when cut.
fn cap_output(output: &str) -> (String, bool) {
    let mut end = output.len();
    if let Some((i, _)) = output.match_indices('\n').nth(MAX_OUTPUT_LINES - 1) {
        end = end.min(i);
    }
    if end > MAX_OUTPUT_BYTES {
        end = MAX_OUTPUT_BYTES;
        while !output.is_char_boundary(end) {
            end -= 1;
        }
    }
    (output[..end].to_owned(), end < output.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repair_prompt_names_each_failure() {
        let failures = vec![CommandFailure {
            name: "tests".into(),
            command: "cargo test".into(),
            exit_code: 101,
            timed_out: false,
            output_tail: "assertion failed".into(),
        }];
        let text = repair_prompt(1, &failures);
        assert!(text.starts_with("Verification of your changes failed (attempt 1)."));
        assert!(text.contains("### tests (exit code 101)\n$ cargo test\n```\nassertion failed\n```\n"));
    }

    #[test]
    fn output_is_capped_by_lines_and_bytes() {
        assert_eq!(cap_output("short"), ("short".to_owned(), false));
        let many: String = (0..6000).map(|i| format!("{i}\n")).collect();
        let (kept, cut) = cap_output(&many);
        assert!(cut);
        assert_eq!(kept.lines().count(), MAX_OUTPUT_LINES);
    }
}
