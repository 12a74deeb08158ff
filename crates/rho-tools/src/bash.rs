//! The `bash` tool: runs a command through the user's shell in the session's directory, streams
//! the tail of its output as partial results (at most one update per [`UPDATE_INTERVAL`]), and
//! returns the last 2000 lines / 50 KiB with a notice naming the file that holds everything.
//! A non-zero exit, an abort or a timeout is an error result carrying the output so far; abort
//! and timeout kill the command's whole process group. With [`Terminals`] (an editor's, in ACP
//! mode) the command runs in one of them instead, and the call's first partial result names it
//! (`details.terminalId`) so the host can show it live; the result is built the same way.

use std::time::Duration;

use futures::future::BoxFuture;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::ToolOptions;
use crate::args::Args;
use crate::js;
use crate::output::{OutputBuffer, Snapshot};
use crate::params::{self, BashBackgroundParams, BashParams, Parameters};
use crate::process::{Ending, OutputSink, ShellCommand, run_shell};
use crate::shell::{resolve_shell, shell_path_env, with_prefix};
use crate::terminal::{TerminalCommand, Terminals};
use crate::truncate::{DEFAULT_MAX_BYTES, TruncatedBy, format_size};

const DESCRIPTION: &str = "Run a bash command in the current working directory and return its stdout and stderr together. Output is cut to the last 2000 lines or 50KB, whichever comes first; when it is cut, the full output is saved to a temporary file and its path is given. timeout (seconds) is optional; there is no timeout by default.";

/// The least time between two partial results.
pub const UPDATE_INTERVAL: Duration = Duration::from_millis(50);

/// How much of the output `structuredContent.output` holds (pi 1.6's limit).
const STRUCTURED_OUTPUT_MAX_BYTES: usize = 1024 * 1024;

pub struct BashTool {
    options: ToolOptions,
}

impl BashTool {
    pub fn new(options: ToolOptions) -> Self {
        Self { options }
    }
}

impl Tool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        match self.options.background {
            Some(_) => BashBackgroundParams::schema(),
            None => BashParams::schema(),
        }
    }

    fn execute<'a>(&'a self, args: Args, ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            if let Some(jobs) = &self.options.background {
                let BashBackgroundParams { command, timeout, run_in_background } = params::parse(&args)?;
                if run_in_background == Some(true) {
                    let id = jobs.start(&self.options, &command, self.session_env()).map_err(ToolError::new)?;
                    let text = format!(
                        "Command running in the background with id {id}. Read its output with bash_output, stop it with kill_bash."
                    );
                    return Ok(AgentToolResult::text(text).with_details(json!({"bashId": id})));
                }
                return self.run(&command, timeout.filter(|t| *t > 0.0), &ctx).await;
            }
            let BashParams { command, timeout } = params::parse(&args)?;
            let timeout = timeout.filter(|t| *t > 0.0);
            self.run(&command, timeout, &ctx).await
        })
    }
}

/// Feeds the buffer and sends throttled partial results.
struct UpdateSink<'a> {
    output: OutputBuffer,
    ctx: &'a ToolContext,
    dirty: bool,
    last_update: Option<Instant>,
}

impl UpdateSink<'_> {
    fn send(&mut self) {
        self.dirty = false;
        self.last_update = Some(Instant::now());
        let snapshot = self.output.snapshot();
        let mut details = json!({});
        if snapshot.truncation.truncated {
            details["truncation"] = snapshot.truncation.to_json();
        }
        if let Some(path) = &snapshot.full_output_path {
            details["fullOutputPath"] = json!(path.display().to_string());
        }
        self.ctx.update(AgentToolResult::text(snapshot.truncation.content.clone()).with_details(details));
    }
}

impl OutputSink for UpdateSink<'_> {
    fn output(&mut self, chunk: &[u8]) {
        self.output.push(chunk);
        self.dirty = true;
        let due = self.last_update.is_none_or(|at| at.elapsed() >= UPDATE_INTERVAL);
        if due {
            self.send();
        }
    }

    fn next_flush(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        Some(self.last_update.map_or_else(Instant::now, |at| at + UPDATE_INTERVAL))
    }

    fn flush(&mut self) {
        if self.dirty {
            self.send();
        }
    }
}

/// The output text with its truncation notice, and the details of a truncated result.
fn format_output(snapshot: &Snapshot, empty: &str) -> (String, Option<Value>) {
    let t = &snapshot.truncation;
    let mut text = if t.content.is_empty() { empty.to_owned() } else { t.content.clone() };
    if !t.truncated {
        return (text, None);
    }
    let end = t.total_lines;
    let start = end + 1 - t.output_lines.min(end);
    let full =
        snapshot.full_output_path.as_ref().map(|p| format!(". Full output: {}", p.display())).unwrap_or_default();
    let notice = if t.last_line_partial {
        format!(
            "[Showing last {} of line {end} (line is {}){full}]",
            format_size(t.output_bytes),
            format_size(snapshot.last_line_bytes)
        )
    } else if t.truncated_by == Some(TruncatedBy::Lines) {
        format!("[Showing lines {start}-{end} of {end}{full}]")
    } else {
        format!("[Showing lines {start}-{end} of {end} ({} limit){full}]", format_size(DEFAULT_MAX_BYTES))
    };
    text.push_str("\n\n");
    text.push_str(&notice);
    let mut details = json!({"truncation": t.to_json()});
    if let Some(path) = &snapshot.full_output_path {
        details["fullOutputPath"] = json!(path.display().to_string());
    }
    (text, Some(details))
}

fn with_status(text: &str, status: &str) -> String {
    if text.is_empty() { status.to_owned() } else { format!("{text}\n\n{status}") }
}

impl BashTool {
    /// The session's variables as they are now.
    fn session_env(&self) -> Vec<(&'static str, String)> {
        self.options.session_environment.as_ref().map(|s| s.variables()).unwrap_or_default()
    }

    async fn run(&self, command: &str, timeout: Option<f64>, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new("Command aborted"));
        }
        let shell = resolve_shell(&self.options).map_err(ToolError::new)?;
        let cwd = &self.options.cwd;
        if !cwd.exists() {
            return Err(ToolError::new(format!(
                "Working directory does not exist: {}\nBash commands cannot run until it is created again.",
                cwd.display()
            )));
        }
        let full_command = with_prefix(&self.options, command);
        let limit = timeout.and_then(|t| Duration::try_from_secs_f64(t).ok());
        let started = std::time::Instant::now();
        let mut full_output = None;
        let (snapshot, ending, terminal_id) = match &self.options.terminals {
            Some(terminals) => self.run_in_terminal(terminals.as_ref(), &shell, full_command, ctx, limit).await?,
            None => {
                let mut sink = UpdateSink { output: OutputBuffer::new(), ctx, dirty: false, last_update: None };
                let ending = run_shell(
                    ShellCommand {
                        shell: &shell,
                        command: &full_command,
                        cwd,
                        path_env: shell_path_env(&self.options),
                        env: &self.options.environment,
                        sandbox: self.options.sandbox.as_deref(),
                        hide_provider_keys: !self.options.inherit_provider_keys,
                        session_env: self.session_env(),
                    },
                    &mut sink,
                    &ctx.cancel,
                    limit,
                )
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
                let snapshot = sink.output.finish();
                full_output = Some(sink.output.full_output(STRUCTURED_OUTPUT_MAX_BYTES));
                (snapshot, ending, None)
            }
        };

        match ending {
            Ending::Cancelled => {
                let (text, _) = format_output(&snapshot, "");
                Err(ToolError::new(with_status(&text, "Command aborted")))
            }
            Ending::TimedOut => {
                let (text, _) = format_output(&snapshot, "");
                let seconds = js::number(timeout.unwrap_or_default());
                Err(ToolError::new(with_status(&text, &format!("Command timed out after {seconds} seconds"))))
            }
            Ending::Exited(code) => {
                let (text, details) = format_output(&snapshot, "(no output)");
                // A non-zero exit is an error result that keeps its details and structured
                // content, as pi 1.6 returns it.
                let failed = code.filter(|c| *c != 0);
                let text = match failed {
                    Some(code) => with_status(&text, &format!("Command exited with code {code}")),
                    None => text,
                };
                let details = match (details, terminal_id) {
                    (details, None) => details,
                    (details, Some(id)) => {
                        let mut details = details.unwrap_or_else(|| json!({}));
                        details["terminalId"] = json!(id);
                        Some(details)
                    }
                };
                let mut result = AgentToolResult { details, ..AgentToolResult::text(text) };
                if failed.is_some() {
                    result = result.into_error();
                }
                Ok(match full_output {
                    Some((output, truncated)) => {
                        let mut structured = json!({"output": output, "truncated": truncated});
                        if let (true, Some(path)) = (truncated, &snapshot.full_output_path) {
                            structured["full_output_path"] = json!(path.display().to_string());
                        }
                        structured["exit_code"] = json!(code.unwrap_or(0));
                        // Tenths of a second, as pi rounds it.
                        let tenths = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
                        structured["wall_time_seconds"] =
                            if tenths.fract() == 0.0 { json!(tenths as u64) } else { json!(tenths) };
                        result.with_structured_content(structured)
                    }
                    None => result,
                })
            }
        }
    }

    /// Runs the command in one of the host's terminals; its output, its ending and the
    /// terminal's id.
    async fn run_in_terminal(
        &self,
        terminals: &dyn Terminals,
        shell: &std::path::Path,
        command: String,
        ctx: &ToolContext,
        timeout: Option<Duration>,
    ) -> Result<(Snapshot, Ending, Option<String>), ToolError> {
        let mut env = Vec::new();
        if let Some(path) = shell_path_env(&self.options) {
            env.push(("PATH".to_owned(), path.to_string_lossy().into_owned()));
        }
        // The host's terminal starts from the host's environment, which can only be added to:
        // the provider keys are set empty there, as they are removed for local commands.
        if !self.options.inherit_provider_keys {
            env.extend(rho_ai::auth::provider_key_variables().map(|var| (var.to_owned(), String::new())));
        }
        env.extend(crate::PROCESS_MARKERS.map(|(k, v)| (k.to_owned(), v.to_owned())));
        env.extend(self.session_env().into_iter().map(|(k, v)| (k.to_owned(), v)));
        env.extend(self.options.environment.iter().cloned());
        // In a sandbox the host's terminal starts rho's confining helper, which becomes the shell.
        let (program, mut args) = match self.options.sandbox.as_deref().and_then(|s| s.wrap(shell.as_os_str())) {
            Some((launcher, leading)) => {
                (launcher.to_path_buf(), leading.iter().map(|a| a.to_string_lossy().into_owned()).collect())
            }
            None => (shell.to_path_buf(), Vec::new()),
        };
        args.extend(["-c".to_owned(), command]);
        let command = TerminalCommand { program, args, cwd: self.options.cwd.clone(), env };
        let terminal_id = parking_lot::Mutex::new(None);
        let started = |id: &str| {
            *terminal_id.lock() = Some(id.to_owned());
            ctx.update(AgentToolResult::text("").with_details(json!({"terminalId": id})));
        };
        let run =
            terminals.run(command, &started, &ctx.cancel, timeout).await.map_err(|e| ToolError::new(e.to_string()))?;
        let mut output = OutputBuffer::new();
        output.push(run.output.as_bytes());
        let id = terminal_id.into_inner();
        Ok((output.finish(), run.ending, id))
    }
}
