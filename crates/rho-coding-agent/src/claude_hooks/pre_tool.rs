//! `PreToolUse` hooks, run before a tool call and before the permission rules. The matcher is
//! over Claude Code's tool names (`Bash`, `Edit`, …); the event adds `tool_name` and
//! `tool_input`. A command blocks the call by exiting with 2 (its
//! stderr is the reason the model reads) or by printing `{"hookSpecificOutput":
//! {"permissionDecision": "deny", "permissionDecisionReason": "…"}}` (`"allow"` runs the call
//! without asking; the older `{"decision": "block" | "approve", "reason"}` too). Another exit
//! code, a timeout or a command that cannot start is noted in the log and the call goes on.

use std::ops::ControlFlow;
use std::sync::Arc;

use futures::future::BoxFuture;
use rho_agent::{ToolContext, ToolError, ToolGate};
use serde_json::{Map, Value};

use super::{EventHooks, HookEnv, claude_code_name, tool_fields};
use crate::config::Settings;

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
    hooks: EventHooks,
    inner: Option<Arc<dyn ToolGate>>,
}

impl HookGate {
    /// The gate for `settings`' hooks; `None` when there are none (problems are warned about).
    pub fn from_settings(
        settings: &Settings,
        env: &Arc<HookEnv>,
        inner: Option<Arc<dyn ToolGate>>,
    ) -> Option<HookGate> {
        EventHooks::from_settings(settings, env, "PreToolUse").map(|hooks| HookGate { hooks, inner })
    }

    async fn verdict(&self, tool: &str, args: &Map<String, Value>) -> Verdict {
        let name = claude_code_name(tool);
        let mut verdict = Verdict::Continue;
        self.hooks
            .run(Some(&name), tool_fields(&name, args), |run| {
                match run.code {
                    Some(2) => verdict = Verdict::Block(run.reason("a PreToolUse hook blocked this call")),
                    Some(0) => match decision(&run.stdout) {
                        Verdict::Continue => {}
                        said => verdict = said,
                    },
                    _ => run.note_failure("PreToolUse"),
                }
                if matches!(verdict, Verdict::Block(_)) { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
            })
            .await;
        verdict
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_read_as_claude_code_writes_them() {
        let deny = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "not in prod"}}"#;
        assert_eq!(decision(deny), Verdict::Block("not in prod".into()));
        assert_eq!(decision(r#"{"decision": "block", "reason": "no"}"#), Verdict::Block("no".into()));
        assert_eq!(decision(r#"{"hookSpecificOutput": {"permissionDecision": "allow"}}"#), Verdict::Allow);
        assert_eq!(decision(r#"{"hookSpecificOutput": {"permissionDecision": "ask"}}"#), Verdict::Continue);
        assert_eq!(decision("plain text"), Verdict::Continue);
    }
}
