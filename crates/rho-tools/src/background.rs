//! Background commands: `bash` with `run_in_background` starts a command and returns its id at
//! once; `bash_output` reads what it printed since the last read (and whether it still runs),
//! `kill_bash` stops it. Each command runs as `bash` runs one (the same shell, environment and
//! sandbox, its own process group, the guardian's owner token), keeps only the last
//! [`KEPT_BYTES`] of its output (a read says how much was dropped), and is killed with its whole
//! group when stopped, when the session's jobs are dropped (rho exits), or by the guardian when
//! rho dies.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use parking_lot::Mutex;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::ToolOptions;
use crate::process::{Ending, OutputSink, ShellCommand, run_shell};
use crate::shell::{resolve_shell, shell_path_env, with_prefix};

/// How much of a command's output is kept (its tail).
pub const KEPT_BYTES: usize = 1024 * 1024;

/// How many commands may run in the background at once.
pub const MAX_RUNNING: usize = 16;

/// Where a background command stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "status")]
pub enum JobStatus {
    Running,
    /// It ended by itself, with this exit code (`None`: killed by a signal).
    Exited {
        exit_code: Option<i32>,
    },
    /// `kill_bash` (or the session's end) stopped it.
    Killed,
    /// It could not be started or run.
    Failed {
        error: String,
    },
}

/// One background command.
#[derive(Debug)]
struct Job {
    id: String,
    command: String,
    started: Instant,
    stop: CancellationToken,
    /// Cancelled once the command has ended and its status is recorded.
    done: CancellationToken,
    state: Mutex<JobState>,
}

#[derive(Debug)]
struct JobState {
    status: JobStatus,
    /// The kept tail of the output.
    kept: VecDeque<u8>,
    /// Every byte the command printed.
    total: u64,
    /// How much of it was read.
    read: u64,
}

/// What a command printed since the last read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOutput {
    pub output: String,
    /// Bytes printed since the last read that were no longer kept.
    pub dropped: u64,
    pub status: JobStatus,
}

/// A background command as lists show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobInfo {
    pub id: String,
    pub command: String,
    #[serde(flatten)]
    pub status: JobStatus,
    pub running_for_ms: u64,
}

/// A session's background commands.
#[derive(Debug, Default)]
pub struct BackgroundJobs {
    jobs: Mutex<Vec<Arc<Job>>>,
    next: AtomicU32,
}

/// Feeds a job's output into its kept tail.
struct JobSink(Arc<Job>);

impl OutputSink for JobSink {
    fn output(&mut self, chunk: &[u8]) {
        let mut state = self.0.state.lock();
        state.total += chunk.len() as u64;
        // Only the tail of a chunk larger than what is kept is kept.
        let chunk = &chunk[chunk.len().saturating_sub(KEPT_BYTES)..];
        let excess = (state.kept.len() + chunk.len()).saturating_sub(KEPT_BYTES);
        state.kept.drain(..excess);
        state.kept.extend(chunk);
    }
}

impl BackgroundJobs {
    /// Starts `command` as `bash` would run it; its id.
    pub fn start(
        &self,
        options: &ToolOptions,
        command: &str,
        session_env: Vec<(&'static str, String)>,
    ) -> Result<String, String> {
        let running = self.jobs.lock().iter().filter(|j| j.state.lock().status == JobStatus::Running).count();
        if running >= MAX_RUNNING {
            return Err(format!("{MAX_RUNNING} background commands are running already; stop one with kill_bash"));
        }
        let shell = resolve_shell(options)?;
        if !options.cwd.exists() {
            return Err(format!("Working directory does not exist: {}", options.cwd.display()));
        }
        let id = format!("bash_{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let job = Arc::new(Job {
            id: id.clone(),
            command: command.to_owned(),
            started: Instant::now(),
            stop: CancellationToken::new(),
            done: CancellationToken::new(),
            state: Mutex::new(JobState { status: JobStatus::Running, kept: VecDeque::new(), total: 0, read: 0 }),
        });
        self.jobs.lock().push(job.clone());
        let full_command = with_prefix(options, command);
        let (cwd, environment, sandbox) = (options.cwd.clone(), options.environment.clone(), options.sandbox.clone());
        let (path_env, hide_provider_keys) = (shell_path_env(options), !options.inherit_provider_keys);
        tokio::spawn(async move {
            let mut sink = JobSink(job.clone());
            let run = ShellCommand {
                shell: &shell,
                command: &full_command,
                cwd: &cwd,
                path_env,
                env: &environment,
                sandbox: sandbox.as_deref(),
                hide_provider_keys,
                session_env,
            };
            let status = match run_shell(run, &mut sink, &job.stop, None).await {
                Ok(Ending::Exited(exit_code)) => JobStatus::Exited { exit_code },
                Ok(Ending::Cancelled | Ending::TimedOut) => JobStatus::Killed,
                Err(e) => JobStatus::Failed { error: e.to_string() },
            };
            job.state.lock().status = status;
            job.done.cancel();
        });
        Ok(id)
    }

    fn job(&self, id: &str) -> Result<Arc<Job>, String> {
        let jobs = self.jobs.lock();
        jobs.iter().find(|j| j.id == id).cloned().ok_or_else(|| {
            let known: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
            match known.is_empty() {
                true => format!("No background command {id}: none was started"),
                false => format!("No background command {id} (there are: {})", known.join(", ")),
            }
        })
    }

    /// What `id` printed since the last read.
    pub fn read(&self, id: &str) -> Result<NewOutput, String> {
        let job = self.job(id)?;
        let mut state = job.state.lock();
        let kept_from = state.total - state.kept.len() as u64;
        let dropped = kept_from.saturating_sub(state.read);
        let start = usize::try_from(state.read.saturating_sub(kept_from)).unwrap_or(usize::MAX).min(state.kept.len());
        let output = String::from_utf8_lossy(&state.kept.make_contiguous()[start..]).into_owned();
        state.read = state.total;
        Ok(NewOutput { output, dropped, status: state.status.clone() })
    }

    /// Stops `id` and everything it started; how it stood before.
    pub async fn kill(&self, id: &str) -> Result<JobStatus, String> {
        let job = self.job(id)?;
        let before = job.state.lock().status.clone();
        job.stop.cancel();
        // The group is killed at once; its end is recorded when the shell is reaped.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), job.done.cancelled()).await;
        Ok(before)
    }

    /// Every command started, oldest first.
    pub fn list(&self) -> Vec<JobInfo> {
        self.jobs
            .lock()
            .iter()
            .map(|job| JobInfo {
                id: job.id.clone(),
                command: job.command.clone(),
                status: job.state.lock().status.clone(),
                running_for_ms: u64::try_from(job.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            })
            .collect()
    }
}

impl Drop for BackgroundJobs {
    fn drop(&mut self) {
        for job in self.jobs.get_mut().iter() {
            job.stop.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command that prints more than is kept: a read gets the last [`KEPT_BYTES`] and says how
    /// much was dropped; the next read gets only what came since.
    #[test]
    fn output_past_what_is_kept_is_dropped_from_the_front_and_counted() {
        let jobs = BackgroundJobs::default();
        let job = Arc::new(Job {
            id: "bash_1".into(),
            command: "yes".into(),
            started: Instant::now(),
            stop: CancellationToken::new(),
            done: CancellationToken::new(),
            state: Mutex::new(JobState { status: JobStatus::Running, kept: VecDeque::new(), total: 0, read: 0 }),
        });
        jobs.jobs.lock().push(job.clone());
        let mut sink = JobSink(job);
        sink.output(&vec![b'a'; KEPT_BYTES / 2]);
        sink.output(&vec![b'b'; KEPT_BYTES]);
        let first = jobs.read("bash_1").unwrap();
        assert_eq!((first.output.len(), first.dropped), (KEPT_BYTES, (KEPT_BYTES / 2) as u64));
        assert!(first.output.bytes().all(|b| b == b'b'));
        sink.output(b"tail");
        let second = jobs.read("bash_1").unwrap();
        assert_eq!((second.output.as_str(), second.dropped), ("tail", 0));
        assert_eq!(jobs.read("bash_2").unwrap_err(), "No background command bash_2 (there are: bash_1)");
    }
}
