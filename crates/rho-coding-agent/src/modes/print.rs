//! Print mode (`-p`, `--mode text`) and JSON mode (`--mode json`): one-shot runs for scripts
//! and CI (docs/agent-behavior.md, "Non-interactive inputs" and "Print and JSON output"). The
//! messages (piped stdin first, then each message argument, the `@file` blocks before the first)
//! run as separate prompts, in order. Text mode prints the final answer (tool activity on stderr
//! with `--verbose`) and exits non-zero when the run failed or was aborted; JSON mode writes the
//! session header and then every event, in the same shapes as RPC mode.

use std::io::{Read, Write};
use std::sync::Arc;

use rho_agent::AgentEvent;
use rho_types::types::{ImageContent, StopReason};

use super::encoder::{FrameLimits, OutItem};
use super::file_args::read_file_args;
use super::out_queue::{OutQueue, spawn_writer};
use crate::agent_session::{
    AgentSession, AgentSessionEvent, PromptOptions, PromptOutcome, RunOutcome, SessionEventSink,
};
use crate::cli::{Cli, Mode};
use crate::startup;

/// How long a one-shot run waits for MCP servers its prompts do not name.
const MCP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Runs the prompts and returns the exit code.
pub async fn run(cli: Cli, mode: Mode, stdin_piped: bool) -> i32 {
    let prepared = match startup::prepare(&cli, false) {
        Ok(p) => p,
        Err(e) => return fail(&e.message, e.exit_code),
    };
    let (prompts, images) = match collect_prompts(&cli, &prepared.paths.cwd, stdin_piped) {
        Ok(p) => p,
        Err(message) => return fail(&message, 2),
    };

    let json = mode == Mode::Json;
    let out = json.then(|| OutQueue::new(FrameLimits::unbounded()));
    let writer = match &out {
        Some(queue) => match spawn_writer(queue.clone(), std::io::stdout()) {
            Ok(w) => Some(w),
            Err(e) => return fail(&format!("Error: {e}"), 1),
        },
        None => None,
    };
    let sink: Arc<dyn SessionEventSink> = match &out {
        Some(queue) => queue.clone(),
        None if cli.verbose => Arc::new(verbose_activity),
        None => Arc::new(report_extension_errors),
    };
    let options = match startup::session_options(&cli, prepared, sink, None) {
        Ok(o) => o,
        Err(e) => return fail(&e.message, e.exit_code),
    };
    let session = AgentSession::new(options);
    if let Err(e) = super::extensions::start(&cli, &session, startup::ExtensionUi::None).await {
        session.shutdown().await;
        return fail(&e.message, e.exit_code);
    }
    if let Some(queue) = &out {
        queue.push(OutItem::Raw(session.header_json()));
    }

    // A one-shot run waits for the MCP servers its prompts name (`/mcp__<server>__<prompt>`),
    // and for the others a moment, so that their tools are there for the first message without
    // a hanging server holding every run up.
    let needed: Vec<String> = prompts
        .iter()
        .filter_map(|p| p.trim_start().strip_prefix("/mcp__")?.split("__").next().map(str::to_owned))
        .collect();
    session.mcp_settled(&needed, MCP_GRACE).await;
    let ended = run_prompts(&session, prompts, images).await;
    session.shutdown().await;
    let code = match ended {
        Err(code) => code,
        Ok(_) if json => 0,
        Ok(outcome) => print_answer(&outcome),
    };
    if let (Some(queue), Some(writer)) = (out, writer) {
        queue.close();
        let _ = tokio::task::spawn_blocking(move || writer.join()).await;
    }
    code
}

/// Every prompt, in order; how the last run ended, or the exit code when a prompt could not
/// start.
async fn run_prompts(
    session: &AgentSession,
    prompts: Vec<String>,
    mut images: Vec<ImageContent>,
) -> Result<RunOutcome, i32> {
    for text in prompts {
        let options = PromptOptions { images: std::mem::take(&mut images), ..PromptOptions::default() };
        match session.submit(&text, options).await {
            Ok(PromptOutcome::Started(run)) => {
                tokio::select! {
                    _ = run.start() => {}
                    _ = tokio::signal::ctrl_c() => {
                        session.abort().await;
                        return Ok(session.last_outcome());
                    }
                }
            }
            Ok(PromptOutcome::Command(command)) => {
                // A command may start a run of its own (sendUserMessage): wait for it too.
                let _ = command.start().await;
                session.wait_idle().await;
            }
            Ok(PromptOutcome::Queued | PromptOutcome::Handled) => {}
            Err(rejection) => {
                return Err(fail(&format!("Error: {}", rejection.to_string().replace("\n\n", " ")), 2));
            }
        }
    }
    Ok(session.last_outcome())
}

/// The message list: piped stdin first, then the arguments, the `@file` blocks before the
/// first; the images go with the first prompt.
fn collect_prompts(
    cli: &Cli,
    cwd: &std::path::Path,
    stdin_piped: bool,
) -> Result<(Vec<String>, Vec<ImageContent>), String> {
    let files = read_file_args(&cli.file_args(), cwd)?;
    let mut messages: Vec<String> = cli.messages().into_iter().map(str::to_owned).collect();
    // The first prompt is piped stdin, then the @file blocks, then the first message: one
    // prompt, as pi builds it (`git diff | rho -p "write a commit message"` is one request).
    let mut first = String::new();
    if stdin_piped {
        let mut piped = String::new();
        std::io::stdin().read_to_string(&mut piped).map_err(|e| format!("Error: cannot read stdin: {e}"))?;
        first.push_str(piped.trim());
    }
    if !files.text.is_empty() {
        if !first.is_empty() {
            first.push_str("\n\n");
        }
        first.push_str(&files.text);
    }
    if !messages.is_empty() {
        let message = messages.remove(0);
        if !first.is_empty() && !first.ends_with('\n') {
            first.push_str("\n\n");
        }
        first.push_str(&message);
    }
    if !first.is_empty() {
        messages.insert(0, first);
    }
    if messages.is_empty() {
        return Err("Error: no message given (pass it as an argument or on stdin)".into());
    }
    Ok((messages, files.images))
}

/// Text mode's answer: the last reply's text blocks, one per line; its error on stderr (exit 1)
/// when it failed or was aborted.
fn print_answer(outcome: &RunOutcome) -> i32 {
    if outcome.failed() {
        let reason = if outcome.stop_reason == Some(StopReason::Error) { "error" } else { "aborted" };
        let message = outcome.error_message.clone().unwrap_or_else(|| format!("Request {reason}"));
        eprintln!("{message}");
        return 1;
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(outcome.text.as_bytes()).and_then(|()| stdout.flush());
    0
}

/// `--verbose`: tool calls and their outcome on stderr.
fn verbose_activity(event: AgentSessionEvent) {
    match event {
        AgentSessionEvent::Agent(AgentEvent::ToolExecutionStart { tool_name, args, .. }) => {
            eprintln!("→ {tool_name} {}", serde_json::Value::Object(args));
        }
        AgentSessionEvent::Agent(AgentEvent::ToolExecutionEnd { tool_name, is_error, .. }) => {
            eprintln!("{} {tool_name}", if is_error { "✗" } else { "✓" });
        }
        // The end of every run: nothing worth a line.
        AgentSessionEvent::Session(rho_rpc::SessionEvent::AgentSettled { .. }) => {}
        AgentSessionEvent::Session(e) => eprintln!("[{}]", e.type_name()),
        other => report_extension_errors(other),
    }
}

/// Text mode says on stderr when an extension fails; everything else stays quiet.
fn report_extension_errors(event: AgentSessionEvent) {
    if let AgentSessionEvent::ExtensionError(e) = event {
        eprintln!("Extension error ({}, {}): {}", e.extension_path, e.event, e.error);
    }
}

fn fail(message: &str, code: i32) -> i32 {
    eprintln!("{message}");
    code
}
