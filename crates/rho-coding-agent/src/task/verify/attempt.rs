//! One verification attempt: every command of the plan, in order, in the sub-agent's workspace,
//! each as its own process group with its timeout; the attempt fails when a command that is not
//! `optional` fails. Events, in order: `subagent_verification_start`, then per command
//! `…_command_start` and `…_command_end`, then `subagent_verification_end`.
//!
//! Each command's combined output is written to `<artifacts>/<stem>.verify-<attempt>-<name>.log`
//! (only when there is output; the path is both `artifactPath` and the event's `artifactId`), and
//! its tail is the `outputPreview` (last 20 lines, at most 4 KiB). The failing commands' output
//! tails (up to `failureContextLineLimit` lines each) feed the repair prompt.
//!
//! A budget found exceeded before a command stops the attempt: the event says
//! `budget_exceeded`, the attempt is recorded `failed` with `error: "budget exceeded"`
//! (docs/protocol.md, "Verification edge cases", 1).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rho_rpc::{
    AttemptStatus, SessionEvent, VerificationAttemptResult, VerificationCommandResult, VerificationEndStatus,
    VerifyMode,
};
use rho_tools::ToolOptions;
use rho_tools::process::{Ending, OutputSink, ShellCommand, run_shell};
use rho_types::types::now_ms;
use tokio_util::sync::CancellationToken;

use super::VerifyPlan;
use crate::agent_session::SessionEventSink;
use crate::budget::BudgetTracker;
use crate::config::settings::VerificationCommand;

/// `outputPreview`: at most this many lines…
const PREVIEW_LINES: usize = 20;
/// …and this many bytes.
const PREVIEW_BYTES: usize = 4 * 1024;
/// How much of a command's output is kept in memory (for the preview and the repair context).
const TAIL_BYTES: usize = 256 * 1024;

/// Exit codes reported for commands that did not exit on their own.
const TIMED_OUT_EXIT: i32 = 124;
const ABORTED_EXIT: i32 = 130;

/// Everything an attempt needs.
pub struct AttemptEnv<'a> {
    /// The task id (the events' `id`).
    pub id: &'a str,
    pub plan: &'a VerifyPlan,
    /// Where the commands run.
    pub cwd: &'a Path,
    pub artifacts_dir: &'a Path,
    /// The task's artifact file stem.
    pub stem: &'a str,
    pub sink: &'a dyn SessionEventSink,
    pub cancel: &'a CancellationToken,
    pub budget: Option<&'a BudgetTracker>,
    /// Shell, `PATH` and command prefix, as the bash tool uses them.
    pub shell: &'a ToolOptions,
}

/// A required command that failed, for the repair prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandFailure {
    pub name: String,
    pub command: String,
    pub exit_code: i32,
    pub timed_out: bool,
    /// The last lines of its output.
    pub output_tail: String,
}

/// An attempt's record and what failed in it.
#[derive(Debug, Clone)]
pub struct AttemptOutcome {
    pub result: VerificationAttemptResult,
    pub failures: Vec<CommandFailure>,
}

impl AttemptEnv<'_> {
    fn emit(&self, event: SessionEvent) {
        self.sink.emit(event.into());
    }

    /// Records an attempt that could not run (the sub-agent failed): start and end events with
    /// `skipped`, no commands.
    pub fn skipped(&self, attempt: u32, error: String) -> VerificationAttemptResult {
        let started_at = now_ms();
        self.emit(SessionEvent::SubagentVerificationStart {
            id: self.id.to_owned(),
            attempt,
            profile: self.plan.profile.clone(),
        });
        self.emit(SessionEvent::SubagentVerificationEnd {
            id: self.id.to_owned(),
            attempt,
            status: VerificationEndStatus::Skipped,
        });
        VerificationAttemptResult {
            attempt,
            status: AttemptStatus::Skipped,
            started_at,
            ended_at: now_ms(),
            command_results: Vec::new(),
            error: Some(error),
        }
    }

    /// Runs attempt number `attempt` (1-based).
    pub async fn run(&self, attempt: u32) -> AttemptOutcome {
        if self.plan.mode == VerifyMode::None {
            let result = self.skipped(attempt, "verification mode is none".into());
            return AttemptOutcome { result, failures: Vec::new() };
        }
        let started_at = now_ms();
        self.emit(SessionEvent::SubagentVerificationStart {
            id: self.id.to_owned(),
            attempt,
            profile: self.plan.profile.clone(),
        });
        let mut results = Vec::with_capacity(self.plan.commands.len());
        let mut failures = Vec::new();
        let mut error = None;
        let mut end = VerificationEndStatus::Passed;
        for command in &self.plan.commands {
            if self.budget.and_then(BudgetTracker::exceeded).is_some() {
                end = VerificationEndStatus::BudgetExceeded;
                error = Some("budget exceeded".to_owned());
                break;
            }
            if self.cancel.is_cancelled() {
                end = VerificationEndStatus::Failed;
                error = Some("aborted".to_owned());
                break;
            }
            let (result, tail) = self.run_command(attempt, command).await;
            let required = command.optional != Some(true);
            if result.exit_code != 0 && required {
                end = VerificationEndStatus::Failed;
                failures.push(CommandFailure {
                    name: command.name.clone(),
                    command: command.command.clone(),
                    exit_code: result.exit_code,
                    timed_out: result.timed_out == Some(true),
                    output_tail: last_lines(&tail, self.plan.context_lines),
                });
            }
            results.push(result);
        }
        if self.cancel.is_cancelled() && error.is_none() {
            end = VerificationEndStatus::Failed;
            error = Some("aborted".to_owned());
        }
        self.emit(SessionEvent::SubagentVerificationEnd { id: self.id.to_owned(), attempt, status: end });
        let status = match end {
            VerificationEndStatus::Passed => AttemptStatus::Passed,
            VerificationEndStatus::Skipped => AttemptStatus::Skipped,
            VerificationEndStatus::Failed | VerificationEndStatus::BudgetExceeded => AttemptStatus::Failed,
        };
        let result = VerificationAttemptResult {
            attempt,
            status,
            started_at,
            ended_at: now_ms(),
            command_results: results,
            error,
        };
        AttemptOutcome { result, failures }
    }

    /// One command: its result and the tail of its output.
    async fn run_command(&self, attempt: u32, command: &VerificationCommand) -> (VerificationCommandResult, String) {
        self.emit(SessionEvent::SubagentVerificationCommandStart {
            id: self.id.to_owned(),
            attempt,
            command_name: command.name.clone(),
        });
        let artifact =
            self.artifacts_dir.join(format!("{}.verify-{attempt}-{}.log", self.stem, file_part(&command.name)));
        let mut output = CommandOutput::new(artifact);
        let started = Instant::now();
        let ending = match rho_tools::shell::resolve_shell(self.shell) {
            Ok(shell) => {
                let text = rho_tools::shell::with_prefix(self.shell, &command.command);
                let cmd = ShellCommand {
                    shell: &shell,
                    command: &text,
                    cwd: self.cwd,
                    path_env: rho_tools::shell::shell_path_env(self.shell),
                    env: &self.shell.environment,
                    sandbox: self.shell.sandbox.as_deref(),
                    hide_provider_keys: !self.shell.inherit_provider_keys,
                    session_env: Vec::new(),
                };
                let timeout = command.timeout_ms.map(Duration::from_millis);
                run_shell(cmd, &mut output, self.cancel, timeout).await
            }
            Err(message) => Err(std::io::Error::other(message)),
        };
        let (exit_code, timed_out) = match ending {
            Ok(Ending::Exited(code)) => (code.unwrap_or(1), false),
            Ok(Ending::TimedOut) => (TIMED_OUT_EXIT, true),
            Ok(Ending::Cancelled) => (ABORTED_EXIT, false),
            Err(e) => {
                output.output(format!("cannot run the command: {e}\n").as_bytes());
                (1, false)
            }
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let tail = output.tail();
        let artifact_path = output.finish();
        self.emit(SessionEvent::SubagentVerificationCommandEnd {
            id: self.id.to_owned(),
            attempt,
            command_name: command.name.clone(),
            exit_code,
            duration_ms,
            artifact_id: artifact_path.clone(),
        });
        let result = VerificationCommandResult {
            name: command.name.clone(),
            command: command.command.clone(),
            exit_code,
            duration_ms,
            optional: command.optional,
            timed_out: timed_out.then_some(true),
            artifact_path,
            output_preview: (!tail.is_empty()).then(|| preview(&tail)),
        };
        (result, tail)
    }
}

/// A command's output: written to its artifact file (created on the first byte), its tail kept.
struct CommandOutput {
    path: PathBuf,
    file: Option<File>,
    write_failed: bool,
    tail: Vec<u8>,
}

impl CommandOutput {
    fn new(path: PathBuf) -> Self {
        Self { path, file: None, write_failed: false, tail: Vec::new() }
    }

    fn tail(&self) -> String {
        String::from_utf8_lossy(&self.tail).into_owned()
    }

    /// The artifact's path, when output was stored.
    fn finish(mut self) -> Option<String> {
        let file = self.file.take()?;
        drop(file);
        (!self.write_failed).then(|| self.path.to_string_lossy().into_owned())
    }
}

impl OutputSink for CommandOutput {
    fn output(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        if self.file.is_none() && !self.write_failed {
            match File::create(&self.path) {
                Ok(f) => self.file = Some(f),
                Err(e) => {
                    tracing::warn!("cannot write {}: {e}", self.path.display());
                    self.write_failed = true;
                }
            }
        }
        if let Some(file) = &mut self.file
            && file.write_all(chunk).is_err()
        {
            self.write_failed = true;
        }
        self.tail.extend_from_slice(chunk);
        if self.tail.len() > 2 * TAIL_BYTES {
            self.tail.drain(..self.tail.len() - TAIL_BYTES);
        }
    }
}

/// The last `n` lines of `text`.
pub fn last_lines(text: &str, n: usize) -> String {
    let trimmed = text.trim_end_matches('\n');
    let lines: Vec<&str> = trimmed.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// `outputPreview`: the last 20 lines, cut to the last 4 KiB on a character boundary.
pub fn preview(text: &str) -> String {
    let tail = last_lines(text, PREVIEW_LINES);
    if tail.len() <= PREVIEW_BYTES {
        return tail;
    }
    let mut start = tail.len() - PREVIEW_BYTES;
    while !tail.is_char_boundary(start) {
        start += 1;
    }
    tail[start..].to_owned()
}

/// A command name made safe for a file name.
fn file_part(name: &str) -> String {
    let cleaned: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    if cleaned.is_empty() { "command".into() } else { cleaned }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn preview_keeps_the_last_lines_and_bytes() {
        let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let p = preview(&text);
        assert_eq!(p.lines().count(), 20);
        assert!(p.starts_with("line 11\n") && p.ends_with("line 30"));
        let long = format!("{}\n", "é".repeat(5000));
        let p = preview(&long);
        assert!(p.len() <= PREVIEW_BYTES && p.chars().all(|c| c == 'é'));
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(file_part("type check/ts"), "type_check_ts");
    }
}
