//! A loaded session's history as `session/update` notifications (`session/load` replays the
//! conversation before it answers): the user's messages as user chunks, the replies as agent
//! message and thought chunks, each tool call announced and finished with its result, and the
//! todo list as the plan. Messages the model saw but the user never wrote (reminders, hidden
//! custom messages, compaction summaries) are left out, as a live run never shows them either.

use std::collections::HashMap;
use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentChunk, SessionUpdate, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use rho_rpc::TodoPhase;
use rho_types::AgentMessage;
use rho_types::types::{AssistantContent, UserMessageContent};
use serde_json::{Map, Value};

use super::updates::{ToolOutput, announce, content_block, finished, plan};

/// The updates that replay `messages` (and the todo list) in order.
pub(super) fn replay(cwd: &Path, messages: &[AgentMessage], todos: &[TodoPhase]) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    let mut open: HashMap<&str, (&str, &Map<String, Value>)> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for message in messages {
        match message {
            AgentMessage::User(user) => match &user.content {
                UserMessageContent::Text(text) => {
                    updates.push(SessionUpdate::UserMessageChunk(ContentChunk::new(text.clone().into())));
                }
                UserMessageContent::Blocks(blocks) => updates.extend(
                    blocks.iter().map(|b| SessionUpdate::UserMessageChunk(ContentChunk::new(content_block(b)))),
                ),
            },
            AgentMessage::Assistant(reply) => {
                for block in &reply.content {
                    match block {
                        AssistantContent::Text(t) if !t.text.is_empty() => {
                            updates.push(SessionUpdate::AgentMessageChunk(ContentChunk::new(t.text.clone().into())));
                        }
                        AssistantContent::Thinking(t) if !t.thinking.is_empty() => {
                            updates
                                .push(SessionUpdate::AgentThoughtChunk(ContentChunk::new(t.thinking.clone().into())));
                        }
                        AssistantContent::ToolCall(call) => {
                            open.insert(&call.id, (&call.name, &call.arguments));
                            order.push(&call.id);
                            let status = ToolCallStatus::Pending;
                            updates.push(SessionUpdate::ToolCall(announce(
                                cwd,
                                &call.id,
                                &call.name,
                                &call.arguments,
                                status,
                            )));
                        }
                        _ => {}
                    }
                }
            }
            AgentMessage::ToolResult(result) => {
                let empty = Map::new();
                let (tool, args) = open.remove(result.tool_call_id.as_str()).unwrap_or((&result.tool_name, &empty));
                let output = ToolOutput {
                    content: &result.content,
                    details: result.details.as_ref(),
                    is_error: result.is_error,
                };
                updates.push(SessionUpdate::ToolCallUpdate(finished(cwd, &result.tool_call_id, tool, args, &output)));
            }
            _ => {}
        }
    }
    for id in order.into_iter().filter(|id| open.contains_key(id)) {
        let fields = ToolCallUpdateFields::new().status(ToolCallStatus::Failed);
        updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_owned(), fields)));
    }
    if todos.iter().any(|p| !p.tasks.is_empty()) {
        updates.push(SessionUpdate::Plan(plan(todos)));
    }
    updates
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_conversation_replays_in_order() {
        let messages: Vec<AgentMessage> = serde_json::from_value(json!([
            {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "reading"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.txt"}},
                {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "ls"}}],
             "api": "x", "provider": "p", "model": "m",
             "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                       "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
             "stopReason": "toolUse", "timestamp": 2},
            {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
             "content": [{"type": "text", "text": "data"}], "isError": false, "timestamp": 3}
        ]))
        .unwrap();
        let updates = replay(Path::new("/w"), &messages, &[]);
        let kinds: Vec<&str> = updates
            .iter()
            .map(|u| match u {
                SessionUpdate::UserMessageChunk(_) => "user",
                SessionUpdate::AgentThoughtChunk(_) => "thought",
                SessionUpdate::AgentMessageChunk(_) => "agent",
                SessionUpdate::ToolCall(_) => "call",
                SessionUpdate::ToolCallUpdate(u) if u.fields.status == Some(ToolCallStatus::Completed) => "completed",
                SessionUpdate::ToolCallUpdate(u) if u.fields.status == Some(ToolCallStatus::Failed) => "failed",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["user", "thought", "agent", "call", "call", "completed", "failed"]);
    }
}
