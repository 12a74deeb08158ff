//! The user's own shell commands (the RPC `bash` command, the interactive mode's `!cmd`): run in
//! the session's directory with the user's shell, their output streamed as it comes, answered
//! with a `BashResult`, and recorded in the conversation as a `bashExecution` message — held back
//! while a run streams, so a tool call and its result are never split, and added before the next
//! prompt. One marked `excludeFromContext` (RPC's flag, the interactive `!!command`) is shown and
//! saved but never sent to the model.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rho_rpc::{BashResult, SessionEvent};
use rho_types::types::now_ms;
use rho_types::{AgentMessage, BashExecutionMessage};
use tokio_util::sync::CancellationToken;

use super::AgentSession;
use super::tools::tool_options;

/// The user shell's own state: the command running, how many `abort_bash` came, and the
/// commands run during a run, waiting to be recorded after it.
#[derive(Default)]
pub(crate) struct UserShell {
    running: Mutex<Option<CancellationToken>>,
    aborts: AtomicU64,
    held: Mutex<Vec<AgentMessage>>,
}

impl UserShell {
    /// Registers a command starting now (a command still running is killed).
    fn start(&self) -> CancellationToken {
        let token = CancellationToken::new();
        if let Some(previous) = self.running.lock().replace(token.clone()) {
            previous.cancel();
        }
        token
    }

    fn finished(&self, token: &CancellationToken) {
        let mut slot = self.running.lock();
        if slot.as_ref().is_some_and(|t| t.eq(token)) {
            *slot = None;
        }
    }

    fn abort(&self) {
        self.aborts.fetch_add(1, Ordering::AcqRel);
        if let Some(token) = self.running.lock().as_ref() {
            token.cancel();
        }
    }

    fn hold(&self, message: AgentMessage) {
        self.held.lock().push(message);
    }

    fn take_held(&self) -> Vec<AgentMessage> {
        std::mem::take(&mut self.held.lock())
    }

    /// A new conversation: what was held belongs to the old one.
    pub(crate) fn forget_held(&self) {
        self.held.lock().clear();
    }
}

impl AgentSession {
    /// How many `abort_bash` came so far: a command read before the latest one never runs.
    pub fn bash_epoch(&self) -> u64 {
        self.inner.shell.aborts.load(Ordering::Acquire)
    }

    /// The user's own command (the RPC `bash`, the interactive mode's `!cmd` and `!!cmd`):
    /// extensions listening to `user_bash` may answer it; otherwise it runs until it ends or
    /// `abort_bash` kills it, its output streaming as `bash_execution_update`s that carry `id`
    /// (the RPC command's). `read_at` is the [`bash_epoch`](Self::bash_epoch) when the command
    /// was read: an `abort_bash` read after it cancels it even before it starts. `excluded` keeps
    /// the command and its output out of the model's context (shown and saved, never sent).
    pub async fn bash(
        &self,
        command: &str,
        read_at: u64,
        excluded: bool,
        id: Option<serde_json::Value>,
    ) -> Result<BashResult, String> {
        if let Some(result) = self.extension_bash(command, excluded).await {
            self.record_bash(bash_message(command, &result, excluded));
            return Ok(result);
        }
        self.user_bash(command, read_at, excluded, id).await
    }

    async fn user_bash(
        &self,
        command: &str,
        read_at: u64,
        excluded: bool,
        id: Option<serde_json::Value>,
    ) -> Result<BashResult, String> {
        if read_at < self.bash_epoch() {
            return Ok(BashResult {
                output: String::new(),
                exit_code: None,
                cancelled: true,
                truncated: false,
                total_lines: 0,
                total_bytes: 0,
                output_lines: 0,
                output_bytes: 0,
                artifact_id: None,
                full_output_path: None,
                working_dir: None,
            });
        }
        let token = self.inner.shell.start();
        let options = tool_options(&self.inner.paths, &self.settings());
        let mut stream = |delta: &str| {
            self.emit(SessionEvent::BashExecutionUpdate { id: id.clone(), delta: delta.to_owned() });
        };
        let outcome =
            rho_tools::run_user_bash(command, &self.inner.paths.cwd, &options, token.clone(), &mut stream).await;
        self.inner.shell.finished(&token);
        let result = outcome.map_err(|e| e.to_string())?;
        // No output is no lines (omp's counting; the tool's truncation calls it one empty line).
        let lines = |n: usize, bytes: usize| if bytes == 0 { 0 } else { n as u64 };
        let result = BashResult {
            total_lines: lines(result.total_lines, result.total_bytes),
            output_lines: lines(result.output_lines, result.output_bytes),
            output: result.output,
            exit_code: result.exit_code,
            cancelled: result.cancelled,
            truncated: result.truncated,
            total_bytes: result.total_bytes as u64,
            output_bytes: result.output_bytes as u64,
            artifact_id: None,
            full_output_path: result.full_output_path,
            // omp reports where a command ran only when it ran to its end.
            working_dir: (!result.cancelled).then(|| self.inner.paths.cwd.to_string_lossy().into_owned()),
        };
        self.record_bash(bash_message(command, &result, excluded));
        Ok(result)
    }

    /// `abort_bash`: kills the running command's process group; commands read before it and
    /// still waiting their turn will not run.
    pub fn abort_bash(&self) {
        self.inner.shell.abort();
    }

    fn record_bash(&self, message: AgentMessage) {
        if self.is_streaming() {
            self.inner.shell.hold(message);
        } else {
            self.record(message);
        }
    }

    /// Adds the commands run during the last run to the conversation.
    pub(crate) fn flush_pending_bash(&self) {
        for message in self.inner.shell.take_held() {
            self.record(message);
        }
    }
}

/// The session's record of a command the user ran (`!cmd`, RPC `bash`).
fn bash_message(command: &str, result: &BashResult, excluded: bool) -> AgentMessage {
    AgentMessage::BashExecution(BashExecutionMessage {
        command: command.to_owned(),
        output: result.output.clone(),
        exit_code: result.exit_code,
        cancelled: result.cancelled,
        truncated: result.truncated,
        full_output_path: result.full_output_path.clone(),
        timestamp: now_ms(),
        exclude_from_context: excluded.then_some(true),
    })
}
