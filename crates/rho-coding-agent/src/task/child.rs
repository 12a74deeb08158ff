//! One sub-agent process: `rho --mode json` with the prompt on stdin, its own stdout and stderr
//! pipes and its own process group. Its JSON event stream is read line by line (the same frame
//! types a host reads, `rho_rpc::OutFrame`): tool starts and finished assistant messages are
//! reported to an observer as they happen (progress, usage, the budget), and the last assistant
//! message's text is the sub-agent's output.
//!
//! Abort: the cancellation token sends SIGINT to the child's group, which makes rho abort its
//! run (killing its own tool process groups, grandchildren included) and exit; if it has not
//! exited after [`KILL_GRACE`] the group gets SIGKILL. If the future is dropped while the child
//! runs, the group gets the same treatment.
//!
//! A json-mode rho exits 0 even when its run failed, so the exit code reported is derived: an
//! abort is 1, a failed or missing final reply is 1, otherwise the process's own code.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use rho_rpc::{AgentFrameEvent, Event, OutFrame};
use rho_tools::process::kill_group;
use rho_types::AgentMessage;
use rho_types::types::{AssistantContent, AssistantMessage, StopReason, Usage};
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long an interrupted sub-agent may take to shut down before its group is killed. The
/// sub-agent stops its own tools' process groups when interrupted; killing it sooner would orphan
/// them. (When rho itself exits sooner, the interrupted sub-agent still shuts down on its own.)
pub const KILL_GRACE: Duration = Duration::from_secs(3);

/// How long output is still read after the child exited while something else holds a pipe.
const EXIT_DRAIN: Duration = Duration::from_millis(500);

/// How much of stderr is kept (its tail).
const STDERR_TAIL: usize = 4 * 1024;

/// How to start the child.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: Vec<(String, OsString)>,
    /// Written to stdin, which is then closed.
    pub prompt: String,
}

/// Something the child did, as it happens.
#[derive(Debug)]
pub enum ChildActivity<'a> {
    ToolStart {
        name: &'a str,
        args: &'a Map<String, Value>,
    },
    ToolEnd,
    /// A finished assistant message: its usage and text.
    Reply {
        usage: &'a Usage,
        text: &'a str,
    },
    /// Any event of the child's run, as its JSON line (omp's `subagent_event`).
    Event(&'a str),
}

/// How the child ended.
#[derive(Debug, Clone, Default)]
pub struct ChildOutcome {
    pub exit_code: i32,
    pub aborted: bool,
    /// The final assistant message's text.
    pub output: String,
    pub stderr: String,
    /// Every assistant message's usage, summed.
    pub usage: Usage,
    pub error: Option<String>,
}

/// Stops the group when dropped while armed (the task was torn down mid-run): SIGINT at once,
/// so the child can stop its own tools, and SIGKILL after [`KILL_GRACE`] from a thread of its
/// own (while this process lives).
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.take() {
            signal_group(pgid, Signal::SIGINT);
            let _ = std::thread::Builder::new().name("rho-task-kill".into()).spawn(move || {
                std::thread::sleep(KILL_GRACE);
                signal_group(pgid, Signal::SIGKILL);
            });
        }
    }
}

/// Signals the group only (never a lone pid, which may have been reused once the leader was
/// reaped).
fn signal_group(pgid: u32, signal: Signal) {
    if let Ok(raw) = i32::try_from(pgid) {
        let _ = killpg(Pid::from_raw(raw), signal);
    }
}

/// Runs the child to its end.
pub async fn run_child(
    spec: &ChildSpec,
    cancel: &CancellationToken,
    observe: &mut (dyn FnMut(ChildActivity<'_>) + Send),
) -> ChildOutcome {
    let mut command = tokio::process::Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (key, value) in &spec.env {
        command.env(key, value);
    }
    // A sub-agent ends with this rho (and what it started, with it).
    if let Some((var, token)) = rho_tools::guardian::owner_env() {
        command.env(var, token);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return ChildOutcome {
                exit_code: 1,
                error: Some(format!("cannot start the sub-agent ({}): {e}", spec.program.display())),
                ..ChildOutcome::default()
            };
        }
    };
    let mut guard = GroupGuard(child.id());
    let pgid = child.id();
    if let Some(mut stdin) = child.stdin.take() {
        let prompt = spec.prompt.clone();
        tokio::spawn(async move {
            let _ = stdin.write_all(prompt.as_bytes()).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stderr_task = child.stderr.take().map(|mut stderr| {
        tokio::spawn(async move {
            let mut tail: Vec<u8> = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > 2 * STDERR_TAIL {
                    tail.drain(..tail.len() - STDERR_TAIL);
                }
            }
            let start = tail.len().saturating_sub(STDERR_TAIL);
            String::from_utf8_lossy(&tail[start..]).into_owned()
        })
    });

    let mut lines = child.stdout.take().map(|out| BufReader::new(out).lines());
    let mut stream = StreamState::default();
    let mut aborted = false;
    let mut kill_at: Option<Instant> = None;
    let mut exit: Option<Option<i32>> = None;
    let mut drain_until: Option<Instant> = None;
    let far = || Instant::now() + Duration::from_secs(365 * 24 * 3600);
    loop {
        if lines.is_none() && exit.is_some() {
            break;
        }
        tokio::select! {
            _ = cancel.cancelled(), if !aborted => {
                aborted = true;
                if let Some(pgid) = pgid {
                    signal_group(pgid, Signal::SIGINT);
                }
                kill_at = Some(Instant::now() + KILL_GRACE);
            }
            _ = tokio::time::sleep_until(kill_at.unwrap_or_else(far)), if kill_at.is_some() => {
                kill_at = None;
                if let Some(pgid) = pgid {
                    kill_group(pgid);
                }
            }
            line = async { lines.as_mut()?.next_line().await.ok().flatten() }, if lines.is_some() => {
                match line {
                    Some(line) => stream.read_line(&line, observe),
                    None => lines = None,
                }
            }
            status = child.wait(), if exit.is_none() => {
                exit = Some(status.ok().and_then(|s| s.code()));
                kill_at = None;
                drain_until = Some(Instant::now() + EXIT_DRAIN);
            }
            _ = tokio::time::sleep_until(drain_until.unwrap_or_else(far)), if drain_until.is_some() => break,
        }
    }
    // Whatever of the group is still alive (a tool the child left behind) goes with it.
    if let Some(pgid) = guard.0.take() {
        signal_group(pgid, Signal::SIGKILL);
    }
    let stderr = match stderr_task {
        Some(task) => tokio::time::timeout(EXIT_DRAIN, task).await.ok().and_then(Result::ok).unwrap_or_default(),
        None => String::new(),
    };
    stream.outcome(exit.flatten(), aborted, stderr)
}

/// What the event stream said so far.
#[derive(Debug, Default)]
struct StreamState {
    usage: Usage,
    last_reply: Option<AssistantMessage>,
}

impl StreamState {
    fn read_line(&mut self, line: &str, observe: &mut (dyn FnMut(ChildActivity<'_>) + Send)) {
        // The session header and anything unexpected are not events; they are skipped.
        let Ok(OutFrame::Event(event)) = OutFrame::parse(line) else {
            return;
        };
        let Event::Agent(event) = *event else {
            return;
        };
        observe(ChildActivity::Event(line));
        match event {
            AgentFrameEvent::ToolExecutionStart { tool_name, args, .. } => {
                observe(ChildActivity::ToolStart { name: &tool_name, args: &args });
            }
            AgentFrameEvent::ToolExecutionEnd { .. } => observe(ChildActivity::ToolEnd),
            AgentFrameEvent::MessageEnd { message: AgentMessage::Assistant(reply) } => {
                self.usage.add(&reply.usage);
                let text = reply_text(&reply);
                observe(ChildActivity::Reply { usage: &reply.usage, text: &text });
                self.last_reply = Some(reply);
            }
            _ => {}
        }
    }

    fn outcome(self, exit: Option<i32>, aborted: bool, stderr: String) -> ChildOutcome {
        let output = self.last_reply.as_ref().map(reply_text).unwrap_or_default();
        let (exit_code, error) = if aborted {
            (1, Some("aborted".to_owned()))
        } else {
            match (exit, &self.last_reply) {
                (Some(0), Some(reply)) if matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted) => {
                    let reason = reply.error_message.clone().unwrap_or_else(|| "the sub-agent's run failed".into());
                    (1, Some(reason))
                }
                (Some(0), Some(_)) => (0, None),
                (Some(0), None) => (1, Some("the sub-agent gave no reply".to_owned())),
                (code, _) => {
                    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default().trim();
                    let code = code.unwrap_or(1);
                    let what = if last.is_empty() { format!("exit code {code}") } else { last.to_owned() };
                    (if code == 0 { 1 } else { code }, Some(format!("the sub-agent failed: {what}")))
                }
            }
        };
        ChildOutcome { exit_code, aborted, output, stderr, usage: self.usage, error }
    }
}

/// The text blocks of a reply, one after another.
fn reply_text(reply: &AssistantMessage) -> String {
    let texts: Vec<&str> = reply
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}
