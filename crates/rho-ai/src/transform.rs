//! Per-request normalization of a conversation before a provider formats it (never written back
//! to the session): failed assistant turns dropped, every tool call paired with a result, other
//! models' thinking turned into text, images dropped for text-only models.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::model::Model;
use crate::types::{AssistantContent, Message, TextContent, ToolResultMessage, UserContent, UserMessageContent};

/// The result text given to a tool call that has none.
pub const NO_RESULT: &str = "No result provided";

/// The text standing in for an image a model cannot see.
pub const IMAGE_OMITTED: &str = "(image omitted: this model does not accept images)";

/// Prepares `messages` for a request to `model`. Messages that need no change are borrowed, not
/// copied: a long conversation is not held twice while its request is built.
pub fn transform_messages<'a>(messages: &'a [Message], model: &Model) -> Vec<Cow<'a, Message>> {
    let images = model.supports_images();
    let mut out: Vec<Cow<'a, Message>> = Vec::with_capacity(messages.len());
    // Tool calls of the last kept assistant message still waiting for their result.
    let mut pending: Vec<(String, String)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();

    let flush_pending =
        |out: &mut Vec<Cow<'a, Message>>, pending: &mut Vec<(String, String)>, answered: &HashSet<String>| {
            for (id, name) in pending.drain(..) {
                if !answered.contains(&id) {
                    out.push(Cow::Owned(Message::ToolResult(ToolResultMessage {
                        tool_call_id: id,
                        tool_name: name,
                        content: vec![UserContent::text(NO_RESULT)],
                        details: None,
                        is_error: true,
                        is_warning: None,
                        timestamp: 0,
                    })));
                }
            }
        };

    for message in messages {
        match message {
            Message::Assistant(a) => {
                if a.is_failed() {
                    continue;
                }
                flush_pending(&mut out, &mut pending, &answered);
                answered.clear();
                pending = a.tool_calls().map(|c| (c.id.clone(), c.name.clone())).collect();
                let same_model = a.provider == model.provider && a.api == model.api && a.model == model.id;
                let foreign_thinking = a
                    .content
                    .iter()
                    .any(|b| matches!(b, AssistantContent::Thinking(_) | AssistantContent::RedactedThinking(_)));
                if same_model || !foreign_thinking {
                    out.push(Cow::Borrowed(message));
                    continue;
                }
                let mut kept = a.clone();
                kept.content = a
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantContent::Thinking(t) => {
                            if t.thinking.trim().is_empty() || t.redacted == Some(true) {
                                None
                            } else {
                                Some(AssistantContent::Text(TextContent::new(t.thinking.clone())))
                            }
                        }
                        AssistantContent::RedactedThinking(_) => None,
                        other => Some(other.clone()),
                    })
                    .collect();
                out.push(Cow::Owned(Message::Assistant(kept)));
            }
            Message::ToolResult(r) => {
                if !pending.iter().any(|(id, _)| *id == r.tool_call_id) || answered.contains(&r.tool_call_id) {
                    // Its call was dropped (failed turn) or already answered.
                    continue;
                }
                answered.insert(r.tool_call_id.clone());
                if images || !r.content.iter().any(|c| matches!(c, UserContent::Image(_))) {
                    out.push(Cow::Borrowed(message));
                    continue;
                }
                let mut r = r.clone();
                r.content = strip_images(r.content);
                out.push(Cow::Owned(Message::ToolResult(r)));
            }
            Message::User(u) => {
                flush_pending(&mut out, &mut pending, &answered);
                answered.clear();
                let has_images = matches!(&u.content, UserMessageContent::Blocks(blocks)
                    if blocks.iter().any(|c| matches!(c, UserContent::Image(_))));
                if images || !has_images {
                    out.push(Cow::Borrowed(message));
                    continue;
                }
                let mut u = u.clone();
                if let UserMessageContent::Blocks(blocks) = u.content {
                    u.content = UserMessageContent::Blocks(strip_images(blocks));
                }
                out.push(Cow::Owned(Message::User(u)));
            }
        }
    }
    flush_pending(&mut out, &mut pending, &answered);
    out
}

/// The messages of [`transform_messages`] as plain references, for the formats to walk.
pub fn by_ref<'a>(messages: &'a [Cow<'a, Message>]) -> Vec<&'a Message> {
    messages.iter().map(|m| &**m).collect()
}

fn strip_images(blocks: Vec<UserContent>) -> Vec<UserContent> {
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks {
        match block {
            UserContent::Image(_) => {
                let already = matches!(out.last(), Some(UserContent::Text(t)) if t.text == IMAGE_OMITTED);
                if !already {
                    out.push(UserContent::text(IMAGE_OMITTED));
                }
            }
            text => out.push(text),
        }
    }
    out
}

/// A tool-call id limited to `[A-Za-z0-9_-]` and `max_len` characters (Anthropic's rule; other
/// APIs accept these too). Deterministic, so a call and its result map to the same id.
pub fn sanitize_tool_call_id(id: &str, max_len: usize) -> String {
    let mut out: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    out.truncate(max_len);
    if out.is_empty() {
        out.push('_');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{InputKind, ModelCost};
    use crate::types::{AssistantMessage, StopReason, ThinkingContent, ToolCall, UserMessage};

    fn model(input: Vec<InputKind>) -> Model {
        Model {
            id: "m".into(),
            name: "m".into(),
            api: "anthropic-messages".into(),
            provider: "p".into(),
            base_url: String::new(),
            reasoning: true,
            input,
            cost: ModelCost::default(),
            context_window: 1000,
            max_tokens: 100,
            headers: Default::default(),
            compat: None,
            thinking_level_map: None,
            prompt_cache: None,
            input_limits: None,
            sampling: None,
        }
    }

    fn assistant(model: &str, content: Vec<AssistantContent>, stop: StopReason) -> Message {
        let mut a = AssistantMessage::empty("anthropic-messages", "p", model);
        a.content = content;
        a.stop_reason = stop;
        Message::Assistant(a)
    }

    fn call(id: &str) -> AssistantContent {
        AssistantContent::ToolCall(ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: Default::default(),
            thought_signature: None,
            intent: None,
        })
    }

    fn result(id: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "bash".into(),
            content: vec![UserContent::text("ok")],
            details: None,
            is_error: false,
            is_warning: None,
            timestamp: 0,
        })
    }

    #[test]
    fn failed_turns_and_their_results_are_dropped() {
        let msgs = vec![
            Message::User(UserMessage::prompt("hi", vec![])),
            assistant("m", vec![call("a")], StopReason::Aborted),
            result("a"),
            Message::User(UserMessage::prompt("again", vec![])),
        ];
        let out = transform_messages(&msgs, &model(vec![InputKind::Text]));
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn orphan_calls_get_a_result() {
        let msgs = vec![
            assistant("m", vec![call("a"), call("b")], StopReason::ToolUse),
            result("b"),
            Message::User(UserMessage::prompt("next", vec![])),
        ];
        let out = transform_messages(&msgs, &model(vec![InputKind::Text]));
        assert_eq!(out.len(), 4);
        let Message::ToolResult(r) = &*out[2] else { panic!() };
        assert_eq!(r.tool_call_id, "a");
        assert_eq!(r.text(), NO_RESULT);
        assert!(r.is_error);
    }

    #[test]
    fn other_models_thinking_becomes_text() {
        let thinking = AssistantContent::Thinking(ThinkingContent {
            thinking: "hmm".into(),
            thinking_signature: Some("sig".into()),
            redacted: None,
        });
        let other = [assistant("other", vec![thinking.clone()], StopReason::Stop)];
        let out = transform_messages(&other, &model(vec![]));
        let Message::Assistant(a) = &*out[0] else { panic!() };
        assert_eq!(a.content, vec![AssistantContent::Text(TextContent::new("hmm"))]);
        let same = [assistant("m", vec![thinking.clone()], StopReason::Stop)];
        let out = transform_messages(&same, &model(vec![]));
        let Message::Assistant(a) = &*out[0] else { panic!() };
        assert_eq!(a.content, vec![thinking]);
        // Kept as it is: borrowed, not copied.
        assert!(matches!(out[0], Cow::Borrowed(_)));
    }

    #[test]
    fn ids_are_sanitized() {
        assert_eq!(sanitize_tool_call_id("call|abc.1", 64), "call_abc_1");
        assert_eq!(sanitize_tool_call_id(&"x".repeat(80), 64).len(), 64);
    }
}
