//! `PreToolUse` hooks in Claude Code's settings format, run before a tool call and before the
//! permission rules: `"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type":
//! "command", "command": "…", "timeout": 60}]}]}` in the global settings (and, in a trusted
//! project, the project's). Each matching command gets the event as JSON on stdin
//! (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, `tool_name` in Claude Code's
//! names, `tool_input`) and `CLAUDE_PROJECT_DIR`; it blocks the call by exiting with 2 (its
//! stderr is the reason the model reads) or by printing `{"hookSpecificOutput":
//! {"permissionDecision": "deny", "permissionDecisionReason": "…"}}` (`"allow"` runs the call
//! without asking; the older `{"decision": "block" | "approve", "reason"}` too). Another exit
//! code, a timeout or a command that cannot start is noted in the log and the call goes on.
//! `PostToolUse` hooks are in [`super::post_tool`].

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use regex::Regex;
use rho_agent::{ToolContext, ToolError, ToolGate};
use serde_json::{Map, Value};
use tokio::io::AsyncWriteExt;

use crate::config::{ConfigPaths, Settings};

/// How long a hook command may run unless its `timeout` says (seconds, as Claude Code's).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// One hook entry's matcher and its commands.
#[derive(Debug)]
pub(super) struct Matcher {
    /// `None` matches every tool (`""`, `"*"` or no matcher).
    pattern: Option<Regex>,
    pub(super) commands: Vec<(String, Duration)>,
}

impl Matcher {
    /// Whether the entry is for the tool Claude Code calls `name`.
    pub(super) fn matches(&self, name: &str) -> bool {
        self.pattern.as_ref().is_none_or(|p| p.is_match(name))
    }
}

/// What the hooks decided.
#[derive(Debug, PartialEq)]
enum Verdict {
    Block(String),
    Allow,
    Continue,
}

/// The `PreToolUse` hooks of the settings, in front of `inner` (the permission rules, an
/// editor's approval).
pub struct HookGate {
    matchers: Vec<Matcher>,
    cwd: std::path::PathBuf,
    session: crate::agent_session::SessionInfo,
    inner: Option<Arc<dyn ToolGate>>,
}

impl HookGate {
    /// The gate for `settings`' hooks; `None` when there are none (problems are warned about).
    pub fn from_settings(
        settings: &Settings,
        paths: &ConfigPaths,
        session: crate::agent_session::SessionInfo,
        inner: Option<Arc<dyn ToolGate>>,
    ) -> Option<HookGate> {
        let matchers = matchers_of(settings, "PreToolUse");
        (!matchers.is_empty()).then(|| HookGate { matchers, cwd: paths.cwd.clone(), session, inner })
    }

    async fn verdict(&self, tool: &str, args: &Map<String, Value>) -> Verdict {
        let name = claude_code_name(tool);
        let event = Value::Object(tool_event(&self.session, &self.cwd, "PreToolUse", &name, args)).to_string();
        let mut allowed = false;
        for matcher in &self.matchers {
            if !matcher.matches(&name) {
                continue;
            }
            for (command, timeout) in &matcher.commands {
                match self.run(command, &event, *timeout).await {
                    Verdict::Block(reason) => return Verdict::Block(reason),
                    Verdict::Allow => allowed = true,
                    Verdict::Continue => {}
                }
            }
        }
        if allowed { Verdict::Allow } else { Verdict::Continue }
    }

    async fn run(&self, command: &str, event: &str, timeout: Duration) -> Verdict {
        let Some((code, stdout, stderr)) = run_command(&self.cwd, command, event, timeout).await else {
            return Verdict::Continue;
        };
        match code {
            Some(2) => {
                let reason = stderr.trim().to_owned();
                Verdict::Block(if reason.is_empty() { "a PreToolUse hook blocked this call".into() } else { reason })
            }
            Some(0) => decision(&stdout),
            code => {
                tracing::warn!("PreToolUse hook `{command}` exited with {code:?}: {}", stderr.trim());
                Verdict::Continue
            }
        }
    }
}

/// Runs a hook `command` in `cwd` with `event` on stdin: its exit code, stdout and stderr;
/// `None` (noted in the log) when it did not start, failed or took longer than `timeout`.
pub(super) async fn run_command(
    cwd: &std::path::Path,
    command: &str,
    event: &str,
    timeout: Duration,
) -> Option<(Option<i32>, String, String)> {
    let spawned = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env("CLAUDE_PROJECT_DIR", cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            tracing::warn!("hook `{command}` did not start: {e}");
            return None;
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that does not read its input is not an error.
        let _ = stdin.write_all(event.as_bytes()).await;
    }
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(output)) => Some((
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )),
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

impl ToolGate for HookGate {
    fn check<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Map<String, Value>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<(), ToolError>> {
        Box::pin(async move {
            match self.verdict(tool, args).await {
                Verdict::Block(reason) => Err(ToolError::new(format!("Blocked by a PreToolUse hook: {reason}"))),
                Verdict::Allow => Ok(()),
                Verdict::Continue => match &self.inner {
                    Some(inner) => inner.check(tool, args, ctx).await,
                    None => Ok(()),
                },
            }
        })
    }
}

/// What every event Claude Code's hooks read on stdin starts with.
pub(super) fn base_event(
    session: &crate::agent_session::SessionInfo,
    cwd: &std::path::Path,
    event: &str,
) -> Map<String, Value> {
    let (session_id, transcript) = session();
    let mut fields = Map::new();
    fields.insert("session_id".into(), Value::String(session_id));
    fields.insert("transcript_path".into(), transcript.map_or(Value::Null, Value::String));
    fields.insert("cwd".into(), Value::String(cwd.display().to_string()));
    fields.insert("hook_event_name".into(), Value::String(event.to_owned()));
    fields
}

/// A tool event as Claude Code's hooks read it on stdin.
pub(super) fn tool_event(
    session: &crate::agent_session::SessionInfo,
    cwd: &std::path::Path,
    event: &str,
    name: &str,
    args: &Map<String, Value>,
) -> Map<String, Value> {
    let mut fields = base_event(session, cwd, event);
    fields.insert("tool_name".into(), Value::String(name.to_owned()));
    fields.insert("tool_input".into(), Value::Object(args.clone()));
    fields
}

/// The entries of `event` in every settings layer (global, the project's, `--setting`), in that
/// order; a broken entry is warned about and left out.
pub(super) fn matchers_of(settings: &Settings, event: &str) -> Vec<Matcher> {
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

/// A hook entry: its matcher (a regular expression over Claude Code's tool names, whole)
/// and its command hooks.
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

/// A hook's stdout (exit 0): a JSON decision, or nothing to say.
fn decision(stdout: &str) -> Verdict {
    let Ok(answer) = serde_json::from_str::<Value>(stdout.trim()) else { return Verdict::Continue };
    let specific = &answer["hookSpecificOutput"];
    let reason = |key: &str| answer[key].as_str().or(specific[key].as_str()).unwrap_or_default().to_owned();
    match (specific["permissionDecision"].as_str(), answer["decision"].as_str()) {
        (Some("deny"), _) | (None, Some("block")) => {
            let why = reason("permissionDecisionReason");
            Verdict::Block(if why.is_empty() { reason("reason") } else { why })
        }
        (Some("allow"), _) | (None, Some("approve")) => Verdict::Allow,
        _ => Verdict::Continue,
    }
}

/// Claude Code's name for a rho tool, as its matchers and hook commands know them.
pub(super) fn claude_code_name(tool: &str) -> String {
    match tool {
        "bash" => "Bash",
        "read" => "Read",
        "edit" => "Edit",
        "write" => "Write",
        "grep" => "Grep",
        "find" => "Glob",
        "ls" => "LS",
        "web_fetch" => "WebFetch",
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
    fn decisions_read_as_claude_code_writes_them() {
        let deny = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "not in prod"}}"#;
        assert_eq!(decision(deny), Verdict::Block("not in prod".into()));
        assert_eq!(decision(r#"{"decision": "block", "reason": "no"}"#), Verdict::Block("no".into()));
        assert_eq!(decision(r#"{"hookSpecificOutput": {"permissionDecision": "allow"}}"#), Verdict::Allow);
        assert_eq!(decision(r#"{"hookSpecificOutput": {"permissionDecision": "ask"}}"#), Verdict::Continue);
        assert_eq!(decision("plain text"), Verdict::Continue);
        let m = matcher(&json!({"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "x", "timeout": 5}]}))
            .unwrap();
        let pattern = m.pattern.unwrap();
        assert!(pattern.is_match("Bash") && pattern.is_match("Edit") && !pattern.is_match("BashOutput"));
        assert_eq!(m.commands, [("x".to_owned(), Duration::from_secs(5))]);
        assert!(matcher(&json!({"matcher": "(", "hooks": []})).unwrap_err().contains("matcher \"(\""));
    }
}
