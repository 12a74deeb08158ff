//! Claude Code's session events:
//! - `Stop` (in a sub-agent, `SubagentStop`): when a prompt's work would end (not after an
//!   abort or a failed reply), with `stop_hook_active` (true once a hook kept it going). Exiting
//!   with 2, or printing `{"decision": "block", "reason": "…"}`, keeps the agent going with the
//!   reason as its next instruction.
//! - `PreCompact`: before a compaction, matched on `trigger` (`manual` or `auto`), with
//!   `custom_instructions`. What a hook exiting with 2 says is shown to the user.
//! - `SessionStart` (not in a sub-agent): when a session starts, matched on `source`
//!   (`startup`, `resume`, `clear` after `/new`, `compact` after a compaction). What it prints on
//!   exit 0 (or its `hookSpecificOutput.additionalContext`) goes to the model with the next
//!   prompt.
//! - `SessionEnd` (not in a sub-agent): when a session ends, matched on `reason` (`clear` at
//!   `/new`, `other`). It cannot stop it.
//! - `Notification`: when rho asks the user about a tool call, matched on `notification_type`
//!   (`permission_prompt`), with `message`. It runs beside the question, which does not wait.

use std::sync::Arc;

use futures::future::BoxFuture;
use rho_agent::ToolContext;
use serde_json::{Map, Value, json};

use super::{EventHooks, HookEnv, HookRun, added_context};
use crate::config::Settings;
use crate::permissions::{AskAnswer, Asker};

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactTrigger {
    Manual,
    Auto,
}

/// The session events' hooks of the settings.
pub struct SessionHooks {
    stop: Option<EventHooks>,
    pre_compact: Option<EventHooks>,
    session_start: Option<EventHooks>,
    session_end: Option<EventHooks>,
    notification: Option<EventHooks>,
}

impl SessionHooks {
    /// `None` when the settings have none of these events. A sub-agent (`subagent`) runs the
    /// `SubagentStop` hooks where a session runs the `Stop` ones, and no `SessionStart` or
    /// `SessionEnd` ones (its parent's session goes on), as in Claude Code.
    pub fn from_settings(settings: &Settings, env: &Arc<HookEnv>, subagent: bool) -> Option<Arc<SessionHooks>> {
        let of = |event| EventHooks::from_settings(settings, env, event);
        let session_event = |event| if subagent { None } else { of(event) };
        let hooks = SessionHooks {
            stop: of(if subagent { "SubagentStop" } else { "Stop" }),
            pre_compact: of("PreCompact"),
            session_start: session_event("SessionStart"),
            session_end: session_event("SessionEnd"),
            notification: of("Notification"),
        };
        let any = [&hooks.stop, &hooks.pre_compact, &hooks.session_start, &hooks.session_end, &hooks.notification]
            .iter()
            .any(|h| h.is_some());
        any.then(|| Arc::new(hooks))
    }

    /// Whether `Stop` hooks may keep a prompt going once its runs are done.
    pub fn may_continue(&self) -> bool {
        self.stop.is_some()
    }

    /// `Stop`: why the agent must go on, when a hook says it must.
    pub async fn stop(&self, active: bool) -> Option<String> {
        let hooks = self.stop.as_ref()?;
        let runs = hooks.run_all(None, fields(json!({"stop_hook_active": active}))).await;
        let reasons: Vec<String> = runs.iter().filter_map(|run| blocked(run, hooks.event())).collect();
        (!reasons.is_empty()).then(|| reasons.join("\n"))
    }

    /// `PreCompact`: what the hooks that objected said, for the user.
    pub async fn pre_compact(&self, trigger: CompactTrigger, instructions: Option<&str>) -> Vec<String> {
        let Some(hooks) = &self.pre_compact else { return Vec::new() };
        let trigger = match trigger {
            CompactTrigger::Manual => "manual",
            CompactTrigger::Auto => "auto",
        };
        let event = fields(json!({"trigger": trigger, "custom_instructions": instructions.unwrap_or_default()}));
        let runs = hooks.run_all(Some(trigger), event).await;
        runs.iter().filter(|run| run.code == Some(2)).map(|run| run.reason("a PreCompact hook objected")).collect()
    }

    /// `SessionStart` from `source`: the context the hooks add.
    pub async fn session_start(&self, source: &str) -> Vec<String> {
        let Some(hooks) = &self.session_start else { return Vec::new() };
        let runs = hooks.run_all(Some(source), fields(json!({"source": source}))).await;
        let mut context = Vec::new();
        for run in runs {
            match run.code {
                Some(0) => context.extend(added_context(&run.stdout, run.answer().as_ref())),
                _ => run.note_failure("SessionStart"),
            }
        }
        context
    }

    /// `SessionEnd` for `reason`.
    pub async fn session_end(&self, reason: &str) {
        let Some(hooks) = &self.session_end else { return };
        for run in hooks.run_all(Some(reason), fields(json!({"reason": reason}))).await {
            if run.code != Some(0) {
                run.note_failure("SessionEnd");
            }
        }
    }

    /// `Notification` of `kind` with `message`, in the background.
    pub fn notify(self: &Arc<Self>, kind: &'static str, message: String) {
        if self.notification.is_none() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let this = self.clone();
        runtime.spawn(async move {
            let Some(hooks) = &this.notification else { return };
            let event = fields(json!({"message": message, "notification_type": kind}));
            for run in hooks.run_all(Some(kind), event).await {
                if run.code != Some(0) {
                    run.note_failure("Notification");
                }
            }
        });
    }
}

/// An event's own fields from a JSON object.
fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A `Stop` hook's objection: its stderr on exit 2, or the reason of its JSON `block`.
fn blocked(run: &HookRun, event: &str) -> Option<String> {
    match (run.code, run.answer()) {
        (Some(2), _) => Some(run.reason(&format!("a {event} hook asked to go on"))),
        (Some(0), Some(answer)) if answer.get("decision").and_then(Value::as_str) == Some("block") => {
            let reason = answer.get("reason").and_then(Value::as_str);
            Some(reason.unwrap_or("a Stop hook asked to go on").to_owned())
        }
        (Some(0), _) => None,
        _ => {
            run.note_failure(event);
            None
        }
    }
}

/// The user's question about a call, with the `Notification` hooks told as it is asked.
pub struct NotifyingAsker {
    pub inner: Arc<dyn Asker>,
    pub hooks: Arc<SessionHooks>,
}

impl Asker for NotifyingAsker {
    fn ask<'a>(
        &'a self,
        question: &'a str,
        tool: &'a str,
        args: &'a Map<String, Value>,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<AskAnswer, String>> {
        let message = format!("rho needs your permission to use {}", super::claude_code_name(tool));
        self.hooks.notify("permission_prompt", message);
        self.inner.ask(question, tool, args, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Arc<HookEnv> {
        let cwd = std::env::temp_dir();
        Arc::new(HookEnv { cwd, session: Box::new(|| ("s1".to_owned(), None)), sandbox: None })
    }

    /// A sub-agent runs the `SubagentStop` hooks where a session runs the `Stop` ones, and each
    /// reads a `block` answer or an exit 2 as a reason to go on.
    #[tokio::test]
    async fn a_sub_agent_runs_subagent_stop_hooks() {
        let command = |text: &str| json!([{"hooks": [{"type": "command", "command": text}]}]);
        let (settings, _) = Settings::from_json(json!({"hooks": {
            "Stop": command("echo 'stop said' >&2; exit 2"),
            "SubagentStop": command(r#"printf '{"decision": "block", "reason": "sub-agent said"}'"#),
        }}));
        let session = SessionHooks::from_settings(&settings, &env(), false).unwrap();
        assert_eq!(session.stop(false).await.as_deref(), Some("stop said"));
        let sub_agent = SessionHooks::from_settings(&settings, &env(), true).unwrap();
        assert_eq!(sub_agent.stop(false).await.as_deref(), Some("sub-agent said"));
        let (starts, _) = Settings::from_json(json!({"hooks": {"SessionStart": command("echo hi")}}));
        assert!(SessionHooks::from_settings(&starts, &env(), false).is_some());
        assert!(SessionHooks::from_settings(&starts, &env(), true).is_none(), "a sub-agent starts no session");
        let (none, _) = Settings::from_json(json!({"hooks": {"PostToolUse": command("true")}}));
        assert!(SessionHooks::from_settings(&none, &env(), false).is_none());
    }
}
