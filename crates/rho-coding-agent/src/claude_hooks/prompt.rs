//! `UserPromptSubmit` hooks: before a prompt goes to the model, each command gets the event
//! (with `prompt`) on stdin. Exiting with 2, or printing `{"decision": "block", "reason": "…"}`, stops the prompt with that reason;
//! other output on exit 0 (plain text, or `hookSpecificOutput.additionalContext`) is added to
//! the prompt as context.

use std::ops::ControlFlow;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{EventHooks, HookEnv};
use crate::config::Settings;

/// What the hooks made of a prompt.
#[derive(Debug, PartialEq)]
pub enum PromptVerdict {
    /// Not sent; the reason.
    Block(String),
    /// Sent with this context after it (empty: as it was).
    Send(String),
}

/// The `UserPromptSubmit` hooks of the settings.
pub struct PromptHooks(EventHooks);

impl PromptHooks {
    /// `None` when the settings have none.
    pub fn from_settings(settings: &Settings, env: &Arc<HookEnv>) -> Option<PromptHooks> {
        EventHooks::from_settings(settings, env, "UserPromptSubmit").map(PromptHooks)
    }

    /// Runs the hooks on `prompt`.
    pub async fn submit(&self, prompt: &str) -> PromptVerdict {
        let mut fields = Map::new();
        fields.insert("prompt".into(), Value::String(prompt.to_owned()));
        let mut context = Vec::new();
        let mut blocked = None;
        self.0
            .run(None, fields, |run| {
                match (run.code, run.answer()) {
                    (Some(2), _) => blocked = Some(run.reason("no reason given")),
                    (Some(0), Some(answer)) if answer.get("decision").and_then(Value::as_str) == Some("block") => {
                        let reason = answer.get("reason").and_then(Value::as_str);
                        blocked = Some(reason.unwrap_or("no reason given").to_owned());
                    }
                    (Some(0), answer) => context.extend(super::added_context(&run.stdout, answer.as_ref())),
                    _ => run.note_failure("UserPromptSubmit"),
                }
                if blocked.is_some() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
            })
            .await;
        match blocked {
            Some(reason) => PromptVerdict::Block(reason),
            None => PromptVerdict::Send(context.join("\n\n")),
        }
    }
}
