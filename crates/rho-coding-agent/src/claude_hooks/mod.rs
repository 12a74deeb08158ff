//! Hooks in Claude Code's settings format: `"hooks": {"<Event>": [{"matcher": "Bash|Edit",
//! "hooks": [{"type": "command", "command": "…", "timeout": 60}]}]}` in the global settings
//! (and, in a trusted project, the project's; `--setting` too). Each matching command runs with
//! `sh -c` in the project folder, confined as the user's own commands are (the session's
//! sandbox, git's folders writable), with `CLAUDE_PROJECT_DIR` set and the event as JSON on
//! stdin: `session_id`, `transcript_path`, `cwd`, `hook_event_name` and the event's own fields.
//! What its exit code and output mean is the event's: [`pre_tool`] (`PreToolUse`),
//! [`post_tool`] (`PostToolUse`), [`prompt`] (`UserPromptSubmit`) and [`session`] (`Stop`,
//! `SubagentStop`, `PreCompact`, `SessionStart`, `SessionEnd`, `Notification`). A command that
//! cannot start, fails or outlives its timeout (60 s unless it says) is noted in the log, its
//! process group killed, and the session goes on.

mod post_tool;
mod pre_tool;
mod prompt;
mod session;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;
use serde_json::{Map, Value};
use tokio::io::AsyncWriteExt;

pub use post_tool::{PostToolHooks, WithPostToolHooks};
pub use pre_tool::HookGate;
pub use prompt::{PromptHooks, PromptVerdict};
pub use session::{CompactTrigger, NotifyingAsker, SessionHooks};

use crate::agent_session::SessionInfo;
use crate::config::Settings;

/// How long a hook command may run unless its `timeout` says (seconds, as Claude Code's).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// What every hook command of a session runs with.
pub struct HookEnv {
    pub cwd: PathBuf,
    /// The session's id and file, as they are when a hook runs.
    pub session: SessionInfo,
    /// The user's own commands' sandbox; `None` for full access.
    pub sandbox: Option<rho_sandbox::Sandbox>,
}

/// One hook entry's matcher and its commands.
#[derive(Debug)]
struct Matcher {
    /// `None` matches everything (`""`, `"*"` or no matcher).
    pattern: Option<Regex>,
    commands: Vec<(String, Duration)>,
}

impl Matcher {
    /// Whether the entry is for `target` (a tool's name as Claude Code calls it, a trigger, a
    /// source); an event without targets runs every entry.
    fn matches(&self, target: Option<&str>) -> bool {
        match (&self.pattern, target) {
            (Some(pattern), Some(target)) => pattern.is_match(target),
            _ => true,
        }
    }
}

/// What one hook command did.
#[derive(Debug)]
pub(crate) struct HookRun {
    pub command: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl HookRun {
    /// Its stdout as a JSON object, when it is one.
    pub fn answer(&self) -> Option<Map<String, Value>> {
        serde_json::from_str(self.stdout.trim()).ok()
    }

    /// Its stderr, or `fallback` when it said nothing.
    pub fn reason(&self, fallback: &str) -> String {
        match self.stderr.trim() {
            "" => fallback.to_owned(),
            said => said.to_owned(),
        }
    }

    /// Notes an exit code the event gives no meaning to.
    pub fn note_failure(&self, event: &str) {
        tracing::warn!("{event} hook `{}` exited with {:?}: {}", self.command, self.code, self.stderr.trim());
    }
}

/// The hooks of one event.
pub(crate) struct EventHooks {
    event: &'static str,
    matchers: Vec<Matcher>,
    env: Arc<HookEnv>,
}

impl EventHooks {
    /// `event`'s entries in `settings`; `None` when there are none (broken entries are warned
    /// about and left out).
    pub fn from_settings(settings: &Settings, env: &Arc<HookEnv>, event: &'static str) -> Option<EventHooks> {
        let matchers = matchers_of(settings, event);
        (!matchers.is_empty()).then(|| EventHooks { event, matchers, env: env.clone() })
    }

    /// The event's name.
    pub fn event(&self) -> &'static str {
        self.event
    }

    /// What every event's JSON starts with.
    pub fn base_event(&self) -> Map<String, Value> {
        let (session_id, transcript) = (self.env.session)();
        let mut fields = Map::new();
        fields.insert("session_id".into(), Value::String(session_id));
        fields.insert("transcript_path".into(), transcript.map_or(Value::Null, Value::String));
        fields.insert("cwd".into(), Value::String(self.env.cwd.display().to_string()));
        fields.insert("hook_event_name".into(), Value::String(self.event.to_owned()));
        fields
    }

    /// Runs the commands of the entries matching `target`, in order, with the event (the base
    /// fields and `fields`) on stdin, until `each` breaks.
    pub async fn run(
        &self,
        target: Option<&str>,
        fields: Map<String, Value>,
        mut each: impl FnMut(HookRun) -> std::ops::ControlFlow<()>,
    ) {
        let mut event = self.base_event();
        event.extend(fields);
        let event = Value::Object(event).to_string();
        for matcher in self.matchers.iter().filter(|m| m.matches(target)) {
            for (command, timeout) in &matcher.commands {
                let Some(run) = run_command(&self.env, command, &event, *timeout).await else { continue };
                if each(run).is_break() {
                    return;
                }
            }
        }
    }

    /// Every matching command's run, in order.
    pub async fn run_all(&self, target: Option<&str>, fields: Map<String, Value>) -> Vec<HookRun> {
        let mut runs = Vec::new();
        self.run(target, fields, |run| {
            runs.push(run);
            std::ops::ControlFlow::Continue(())
        })
        .await;
        runs
    }
}

/// Runs a hook `command` with `event` on stdin; `None` (noted in the log) when it did not
/// start, failed or took longer than `timeout` (its process group is then killed).
async fn run_command(env: &HookEnv, command: &str, event: &str, timeout: Duration) -> Option<HookRun> {
    let mut confined = rho_sandbox::command(env.sandbox.as_ref(), "sh".as_ref());
    confined.arg("-c").arg(command).current_dir(&env.cwd).env("CLAUDE_PROJECT_DIR", &env.cwd);
    confined.envs(rho_tools::PROCESS_MARKERS);
    let mut spawned = tokio::process::Command::from(confined);
    spawned.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    spawned.process_group(0).kill_on_drop(true);
    let mut child = match spawned.spawn() {
        Ok(child) => child,
        Err(e) => {
            tracing::warn!("hook `{command}` did not start: {e}");
            return None;
        }
    };
    // What the hook leaves running is killed with it, however the wait ends.
    let _group = child.id().map(rho_tools::process::GroupGuard::new);
    let stdin = child.stdin.take();
    let feed = async move {
        if let Some(mut stdin) = stdin {
            // A hook that does not read its input is not an error.
            let _ = stdin.write_all(event.as_bytes()).await;
        }
    };
    // The input is written while the output is read, both within the timeout: a hook that
    // reads nothing cannot hold rho on a full pipe.
    let run = async { tokio::join!(feed, child.wait_with_output()).1 };
    match tokio::time::timeout(timeout, run).await {
        Ok(Ok(output)) => Some(HookRun {
            command: command.to_owned(),
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }),
        Ok(Err(e)) => {
            tracing::warn!("hook `{command}` failed: {e}");
            None
        }
        Err(_) => {
            tracing::warn!("hook `{command}` took longer than {}s", timeout.as_secs());
            None
        }
    }
}

/// The entries of `event` in every settings layer (global, the project's, `--setting`), in that
/// order; a broken entry is warned about and left out.
fn matchers_of(settings: &Settings, event: &str) -> Vec<Matcher> {
    let (global, project) = settings.by_file("hooks");
    let layers = [global, project, settings.command_line_overrides().get("hooks")];
    let mut matchers = Vec::new();
    for hooks in layers.into_iter().flatten() {
        for entry in hooks.get(event).and_then(Value::as_array).into_iter().flatten() {
            match matcher(entry) {
                Ok(m) => matchers.push(m),
                Err(e) => eprintln!("Warning: hooks.{event}: {e}; the entry is ignored"),
            }
        }
    }
    matchers
}

/// A hook entry: its matcher (a regular expression, whole) and its command hooks.
fn matcher(entry: &Value) -> Result<Matcher, String> {
    let pattern = match entry.get("matcher").and_then(Value::as_str).unwrap_or("") {
        "" | "*" => None,
        text => Some(Regex::new(&format!("^(?:{text})$")).map_err(|e| format!("matcher \"{text}\": {e}"))?),
    };
    let hooks = entry.get("hooks").and_then(Value::as_array).ok_or("an entry needs a \"hooks\" list")?;
    let commands = hooks
        .iter()
        .filter(|h| h.get("type").and_then(Value::as_str).unwrap_or("command") == "command")
        .filter_map(|h| {
            let command = h.get("command")?.as_str()?.to_owned();
            let timeout = h.get("timeout").and_then(Value::as_f64).filter(|t| *t > 0.0);
            Some((command, timeout.map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64)))
        })
        .collect();
    Ok(Matcher { pattern, commands })
}

/// A tool event's own fields.
fn tool_fields(name: &str, args: &Map<String, Value>) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("tool_name".into(), Value::String(name.to_owned()));
    fields.insert("tool_input".into(), Value::Object(args.clone()));
    fields
}

/// The context a hook's output adds (exit 0): `hookSpecificOutput.additionalContext` of its
/// JSON, or its plain text.
fn added_context(stdout: &str, answer: Option<&Map<String, Value>>) -> Option<String> {
    let text = match answer {
        Some(answer) => answer.get("hookSpecificOutput")?.get("additionalContext")?.as_str()?,
        None => stdout,
    };
    Some(text.trim().to_owned()).filter(|t| !t.is_empty())
}

/// Claude Code's name for a rho tool, as its matchers and hook commands know them.
fn claude_code_name(tool: &str) -> String {
    match tool {
        "bash" => "Bash",
        "read" => "Read",
        "edit" => "Edit",
        "write" => "Write",
        "grep" => "Grep",
        "find" => "Glob",
        "ls" => "LS",
        "web_fetch" => "WebFetch",
        "web_search" => "WebSearch",
        "bash_output" => "BashOutput",
        "kill_bash" => "KillShell",
        "task" => "Task",
        "todo_write" => "TodoWrite",
        other => other,
    }
    .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matchers_read_as_claude_code_writes_them() {
        let m = matcher(&json!({"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "x", "timeout": 5}]}))
            .unwrap();
        assert!(m.matches(Some("Bash")) && m.matches(Some("Edit")) && !m.matches(Some("BashOutput")));
        assert!(m.matches(None), "an event without targets runs every entry");
        assert_eq!(m.commands, [("x".to_owned(), Duration::from_secs(5))]);
        assert!(matcher(&json!({"matcher": "(", "hooks": []})).unwrap_err().contains("matcher \"(\""));
        assert!(matcher(&json!({"hooks": []})).unwrap().matches(Some("anything")));
    }
}
