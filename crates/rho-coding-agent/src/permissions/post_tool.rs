//! `PostToolUse` hooks in Claude Code's settings format (see [`super::hooks`]): after a matching
//! call ran, each command gets the event (with `tool_response`, the result the model gets) on
//! stdin; exiting with 2, or printing `{"decision": "block", "reason": "…"}`, adds its stderr (or
//! the reason) to the result as feedback the model reads. The call has run either way.

use std::sync::Arc;

use futures::future::BoxFuture;
use rho_agent::{AgentHooks, HookPoint, Route, ToolCallDecision, ToolOutcome};
use rho_types::types::{AssistantMessage, ToolCall, ToolResultMessage, UserContent};
use rho_types::{AgentMessage, Model, ThinkingLevel};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::hooks::{Matcher, claude_code_name, matchers_of, run_command, tool_event};
use crate::agent_session::SessionInfo;
use crate::config::{ConfigPaths, Settings};

/// The `PostToolUse` hooks of the settings.
pub struct PostToolHooks {
    matchers: Vec<Matcher>,
    cwd: std::path::PathBuf,
    session: SessionInfo,
}

impl PostToolHooks {
    /// `None` when the settings have none.
    pub fn from_settings(settings: &Settings, paths: &ConfigPaths, session: SessionInfo) -> Option<PostToolHooks> {
        let matchers = matchers_of(settings, "PostToolUse");
        (!matchers.is_empty()).then(|| PostToolHooks { matchers, cwd: paths.cwd.clone(), session })
    }

    /// The feedback of the hooks that have some for `tool`'s call, in order.
    async fn feedback(&self, tool: &str, args: &Map<String, Value>, outcome: &ToolOutcome) -> Vec<String> {
        let name = claude_code_name(tool);
        let mut event = tool_event(&self.session, &self.cwd, "PostToolUse", &name, args);
        let response = json!({"content": outcome.result.content, "details": outcome.result.details,
                              "isError": outcome.is_error});
        event.insert("tool_response".to_owned(), response);
        let event = Value::Object(event).to_string();
        let mut said = Vec::new();
        for matcher in self.matchers.iter().filter(|m| m.matches(&name)) {
            for (command, timeout) in &matcher.commands {
                let Some((code, stdout, stderr)) = run_command(&self.cwd, command, &event, *timeout).await else {
                    continue;
                };
                let answer = serde_json::from_str::<Value>(stdout.trim()).unwrap_or(Value::Null);
                match code {
                    Some(2) if !stderr.trim().is_empty() => said.push(stderr.trim().to_owned()),
                    Some(0) if answer["decision"] == "block" => {
                        said.push(answer["reason"].as_str().unwrap_or("a PostToolUse hook objected").to_owned());
                    }
                    _ => {}
                }
            }
        }
        said
    }
}

/// The session's loop hooks (its extensions', when it has them) with the `PostToolUse` hooks
/// after them.
pub struct WithPostToolHooks {
    pub first: Option<Arc<dyn AgentHooks>>,
    pub post: Arc<PostToolHooks>,
}

impl AgentHooks for WithPostToolHooks {
    fn wants(&self, point: HookPoint) -> bool {
        point == HookPoint::ToolResult || self.first.as_ref().is_some_and(|f| f.wants(point))
    }

    fn context<'a>(
        &'a self,
        messages: Vec<AgentMessage>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Vec<AgentMessage>> {
        match &self.first {
            Some(first) => first.context(messages, cancel),
            None => Box::pin(async move { messages }),
        }
    }

    fn tool_call<'a>(
        &'a self,
        call: &'a ToolCall,
        args: Map<String, Value>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolCallDecision> {
        match &self.first {
            Some(first) => first.tool_call(call, args, cancel),
            None => Box::pin(async move { ToolCallDecision::Run(args) }),
        }
    }

    fn tool_result<'a>(
        &'a self,
        call: &'a ToolCall,
        args: &'a Map<String, Value>,
        outcome: ToolOutcome,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let mut outcome = match &self.first {
                Some(first) if first.wants(HookPoint::ToolResult) => {
                    first.tool_result(call, args, outcome, cancel).await
                }
                _ => outcome,
            };
            for feedback in self.post.feedback(&call.name, args, &outcome).await {
                outcome.result.content.push(UserContent::text(format!("PostToolUse hook: {feedback}")));
            }
            outcome
        })
    }

    fn turn_end<'a>(
        &'a self,
        message: &'a AssistantMessage,
        tool_results: &'a [ToolResultMessage],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, bool> {
        match &self.first {
            Some(first) => first.turn_end(message, tool_results, cancel),
            None => Box::pin(async { false }),
        }
    }

    fn route<'a>(
        &'a self,
        model: &'a Model,
        thinking: ThinkingLevel,
        messages: &'a [AgentMessage],
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Route, String>> {
        match &self.first {
            Some(first) => first.route(model, thinking, messages, cancel),
            None => Box::pin(async move { Err(rho_agent::not_registered(model)) }),
        }
    }

    fn message_end<'a>(&'a self, message: AgentMessage) -> BoxFuture<'a, AgentMessage> {
        match &self.first {
            Some(first) => first.message_end(message),
            None => Box::pin(async move { message }),
        }
    }
}
