//! `UserPromptSubmit` hooks in Claude Code's settings format (see [`super::hooks`]): before a
//! prompt goes to the model, each command gets the event (with `prompt`) on stdin. Exiting with
//! 2, or printing `{"decision": "block", "reason": "…"}`, stops the prompt with that reason;
//! other output on exit 0 (plain text, or `hookSpecificOutput.additionalContext`) is added to
//! the prompt as context.

use serde_json::{Map, Value};

use super::hooks::{Matcher, base_event, matchers_of, run_command};
use crate::agent_session::SessionInfo;
use crate::config::{ConfigPaths, Settings};

/// What the hooks made of a prompt.
#[derive(Debug, PartialEq)]
pub enum PromptVerdict {
    /// Not sent; the reason.
    Block(String),
    /// Sent with this context after it (empty: as it was).
    Send(String),
}

/// The `UserPromptSubmit` hooks of the settings.
pub struct PromptHooks {
    matchers: Vec<Matcher>,
    cwd: std::path::PathBuf,
    session: SessionInfo,
}

impl PromptHooks {
    /// `None` when the settings have none.
    pub fn from_settings(settings: &Settings, paths: &ConfigPaths, session: SessionInfo) -> Option<PromptHooks> {
        let matchers = matchers_of(settings, "UserPromptSubmit");
        (!matchers.is_empty()).then(|| PromptHooks { matchers, cwd: paths.cwd.clone(), session })
    }

    /// Runs the hooks on `prompt`.
    pub async fn submit(&self, prompt: &str) -> PromptVerdict {
        let mut event = base_event(&self.session, &self.cwd, "UserPromptSubmit");
        event.insert("prompt".into(), Value::String(prompt.to_owned()));
        let event = Value::Object(event).to_string();
        let mut context = Vec::new();
        for (command, timeout) in self.matchers.iter().flat_map(|m| &m.commands) {
            let Some((code, stdout, stderr)) = run_command(&self.cwd, command, &event, *timeout).await else {
                continue;
            };
            match code {
                Some(2) => {
                    let reason = stderr.trim();
                    return PromptVerdict::Block(if reason.is_empty() {
                        "no reason given".into()
                    } else {
                        reason.into()
                    });
                }
                Some(0) => match serde_json::from_str::<Map<String, Value>>(stdout.trim()) {
                    Ok(answer) if answer.get("decision").and_then(Value::as_str) == Some("block") => {
                        let reason = answer.get("reason").and_then(Value::as_str).unwrap_or("no reason given");
                        return PromptVerdict::Block(reason.to_owned());
                    }
                    Ok(answer) => {
                        let extra = answer.get("hookSpecificOutput").and_then(|o| o.get("additionalContext"));
                        if let Some(extra) = extra.and_then(Value::as_str).filter(|t| !t.trim().is_empty()) {
                            context.push(extra.trim().to_owned());
                        }
                    }
                    Err(_) if !stdout.trim().is_empty() => context.push(stdout.trim().to_owned()),
                    Err(_) => {}
                },
                code => tracing::warn!("UserPromptSubmit hook `{command}` exited with {code:?}: {}", stderr.trim()),
            }
        }
        PromptVerdict::Send(context.join("\n\n"))
    }
}
