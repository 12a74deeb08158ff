//! `PostToolUse` hooks: after a matching call ran, each command gets the event (with
//! `tool_response`, the result the model gets) on stdin. Exiting with 2, or printing
//! `{"decision": "block", "reason": "…"}`, adds its stderr (or the reason) to the result as
//! feedback the model reads; `hookSpecificOutput.additionalContext` in its JSON is added the
//! same way. The call has run either way.

use std::sync::Arc;

use futures::future::BoxFuture;
use rho_agent::{AgentHooks, HookPoint, Route, ToolCallDecision, ToolOutcome};
use rho_types::types::{AssistantMessage, ToolCall, ToolResultMessage, UserContent};
use rho_types::{AgentMessage, Model, ThinkingLevel};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::{EventHooks, HookEnv, claude_code_name, tool_fields};
use crate::config::Settings;

/// The `PostToolUse` hooks of the settings.
pub struct PostToolHooks(EventHooks);

impl PostToolHooks {
    /// `None` when the settings have none.
    pub fn from_settings(settings: &Settings, env: &Arc<HookEnv>) -> Option<PostToolHooks> {
        EventHooks::from_settings(settings, env, "PostToolUse").map(PostToolHooks)
    }

    /// The feedback of the hooks that have some for `tool`'s call, in order.
    async fn feedback(&self, tool: &str, args: &Map<String, Value>, outcome: &ToolOutcome) -> Vec<String> {
        let name = claude_code_name(tool);
        let mut fields = tool_fields(&name, args);
        let response = json!({"content": outcome.result.content, "details": outcome.result.details,
                              "isError": outcome.is_error});
        fields.insert("tool_response".to_owned(), response);
        let mut said = Vec::new();
        for run in self.0.run_all(Some(&name), fields).await {
            match (run.code, run.answer()) {
                (Some(2), _) if !run.stderr.trim().is_empty() => said.push(run.stderr.trim().to_owned()),
                (Some(0), Some(answer)) if answer.get("decision").and_then(Value::as_str) == Some("block") => {
                    let reason = answer.get("reason").and_then(Value::as_str);
                    said.push(reason.unwrap_or("a PostToolUse hook objected").to_owned());
                }
                // JSON with `hookSpecificOutput.additionalContext`: context for the model.
                (Some(0), Some(answer)) => said.extend(super::added_context(&run.stdout, Some(&answer))),
                _ => {}
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
