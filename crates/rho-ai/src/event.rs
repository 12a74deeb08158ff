//! The steps of a streamed assistant message.
//!
//! On the wire every block event carries `partial`, the whole message so far. Streams inside
//! rho do not: an event carries only what changed, and whoever writes a frame applies the
//! events to its own copy of the message ([`apply_event`]) and serializes that copy beside the
//! event ([`EventWithPartial`]). That keeps the streaming path O(delta) per event instead of
//! O(message), and lets a slow reader receive merged deltas without anything being lost.

use std::sync::Arc;

use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

use crate::error::ProviderError;
use crate::partial_json;
use rho_types::Text;

use crate::types::{AssistantContent, AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall};

/// One step of a streamed assistant message (without the wire's `partial`).
#[derive(Debug, Clone, PartialEq)]
pub enum AssistantMessageEvent {
    /// The provider answered. `partial` carries what it reported up front (response id, input
    /// usage); its `content` is empty.
    Start {
        partial: AssistantMessage,
    },
    TextStart {
        content_index: usize,
    },
    TextDelta {
        content_index: usize,
        /// Shared with the message that applies it, when it is the block's first.
        delta: Text,
    },
    TextEnd {
        content_index: usize,
        /// The block's whole text, shared with the message that streamed it.
        content: Text,
        /// The block's `textSignature`, when the provider gave one.
        signature: Option<String>,
    },
    ThinkingStart {
        content_index: usize,
    },
    ThinkingDelta {
        content_index: usize,
        delta: Text,
    },
    ThinkingEnd {
        content_index: usize,
        /// The block's whole text, shared with the message that streamed it.
        content: Text,
        /// The block's `thinkingSignature`, when the provider gave one (it arrives before the
        /// block ends, so snapshots from `thinking_end` on carry it).
        signature: Option<String>,
    },
    /// A tool call opened; `id` and `name` are known, arguments start empty.
    ToolCallStart {
        content_index: usize,
        id: String,
        name: String,
    },
    /// A raw fragment of the arguments' JSON.
    ToolCallDelta {
        content_index: usize,
        delta: String,
    },
    ToolCallEnd {
        content_index: usize,
        tool_call: ToolCall,
    },
    Done {
        reason: StopReason,
        message: AssistantMessage,
    },
    Error {
        reason: StopReason,
        error: AssistantMessage,
        /// Why the request failed, classified; absent for aborts.
        failure: Option<Arc<ProviderError>>,
    },
}

impl AssistantMessageEvent {
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Start { .. } => "start",
            Self::TextStart { .. } => "text_start",
            Self::TextDelta { .. } => "text_delta",
            Self::TextEnd { .. } => "text_end",
            Self::ThinkingStart { .. } => "thinking_start",
            Self::ThinkingDelta { .. } => "thinking_delta",
            Self::ThinkingEnd { .. } => "thinking_end",
            Self::ToolCallStart { .. } => "toolcall_start",
            Self::ToolCallDelta { .. } => "toolcall_delta",
            Self::ToolCallEnd { .. } => "toolcall_end",
            Self::Done { .. } => "done",
            Self::Error { .. } => "error",
        }
    }

    pub fn content_index(&self) -> Option<usize> {
        match self {
            Self::TextStart { content_index }
            | Self::TextDelta { content_index, .. }
            | Self::TextEnd { content_index, .. }
            | Self::ThinkingStart { content_index }
            | Self::ThinkingDelta { content_index, .. }
            | Self::ThinkingEnd { content_index, .. }
            | Self::ToolCallStart { content_index, .. }
            | Self::ToolCallDelta { content_index, .. }
            | Self::ToolCallEnd { content_index, .. } => Some(*content_index),
            Self::Start { .. } | Self::Done { .. } | Self::Error { .. } => None,
        }
    }

    /// The delta text of a `*_delta` event.
    pub fn delta(&self) -> Option<&str> {
        match self {
            Self::TextDelta { delta, .. } | Self::ThinkingDelta { delta, .. } => Some(delta),
            Self::ToolCallDelta { delta, .. } => Some(delta),
            _ => None,
        }
    }

    /// Appends `next`'s delta to this one when both are deltas of the same kind and block.
    /// Returns false (and changes nothing) otherwise.
    pub fn merge_delta(&mut self, next: &AssistantMessageEvent) -> bool {
        match (self, next) {
            (Self::TextDelta { content_index: a, delta }, Self::TextDelta { content_index: b, delta: more })
            | (
                Self::ThinkingDelta { content_index: a, delta },
                Self::ThinkingDelta { content_index: b, delta: more },
            ) if a == b => {
                delta.push_str(more);
                true
            }
            (
                Self::ToolCallDelta { content_index: a, delta },
                Self::ToolCallDelta { content_index: b, delta: more },
            ) if a == b => {
                delta.push_str(more);
                true
            }
            _ => false,
        }
    }
}

/// A streamed message as a frame writer keeps it: the message plus the raw argument JSON of
/// tool calls still streaming (their `arguments` are re-parsed from it on demand).
#[derive(Debug, Clone, Default)]
pub struct PartialMessage {
    pub message: Option<AssistantMessage>,
    raw_args: Vec<(usize, String)>,
    args_stale: bool,
}

impl PartialMessage {
    pub fn new(message: AssistantMessage) -> Self {
        Self { message: Some(message), raw_args: Vec::new(), args_stale: false }
    }

    /// Applies one event. Events for a message that was never started are ignored.
    pub fn apply(&mut self, event: &AssistantMessageEvent) {
        let Some(msg) = self.message.as_mut() else {
            return;
        };
        match event {
            AssistantMessageEvent::ToolCallStart { content_index, .. } => {
                apply_event(msg, event);
                self.raw_args.push((*content_index, String::new()));
            }
            AssistantMessageEvent::ToolCallDelta { content_index, delta } => {
                if let Some((_, raw)) = self.raw_args.iter_mut().find(|(i, _)| i == content_index) {
                    raw.push_str(delta);
                    self.args_stale = true;
                }
            }
            AssistantMessageEvent::ToolCallEnd { content_index, .. } => {
                self.raw_args.retain(|(i, _)| i != content_index);
                apply_event(msg, event);
            }
            _ => apply_event(msg, event),
        }
    }

    /// The message with streaming tool-call arguments parsed as far as they go.
    pub fn snapshot(&mut self) -> Option<&AssistantMessage> {
        if self.args_stale {
            if let Some(msg) = self.message.as_mut() {
                for (index, raw) in &self.raw_args {
                    if let Some(AssistantContent::ToolCall(call)) = msg.content.get_mut(*index) {
                        call.arguments = partial_json::parse_object(raw);
                    }
                }
            }
            self.args_stale = false;
        }
        self.message.as_ref()
    }

    pub fn clear(&mut self) {
        self.message = None;
        self.raw_args.clear();
        self.args_stale = false;
    }
}

/// Applies `event` to `msg`, the message being built. Tool-call argument deltas are not applied
/// here (they need the raw JSON so far; see [`PartialMessage`]); `toolcall_end` sets the final
/// arguments.
pub fn apply_event(msg: &mut AssistantMessage, event: &AssistantMessageEvent) {
    match event {
        AssistantMessageEvent::Start { partial } => {
            msg.usage = partial.usage;
            if partial.response_id.is_some() {
                msg.response_id.clone_from(&partial.response_id);
            }
        }
        AssistantMessageEvent::TextStart { content_index } => {
            put_block(msg, *content_index, AssistantContent::Text(TextContent::new("")));
        }
        AssistantMessageEvent::TextDelta { content_index, delta } => {
            if let Some(AssistantContent::Text(t)) = msg.content.get_mut(*content_index) {
                t.text.append(delta);
            }
        }
        AssistantMessageEvent::TextEnd { content_index, content, signature } => {
            if let Some(AssistantContent::Text(t)) = msg.content.get_mut(*content_index) {
                // The streamed copy gives way to the shared text (equal unless deltas were lost).
                t.text = content.clone();
                if signature.is_some() {
                    t.text_signature.clone_from(signature);
                }
            }
        }
        AssistantMessageEvent::ThinkingStart { content_index } => {
            put_block(
                msg,
                *content_index,
                AssistantContent::Thinking(ThinkingContent {
                    thinking: Text::default(),
                    thinking_signature: None,
                    redacted: None,
                }),
            );
        }
        AssistantMessageEvent::ThinkingDelta { content_index, delta } => {
            if let Some(AssistantContent::Thinking(t)) = msg.content.get_mut(*content_index) {
                t.thinking.append(delta);
            }
        }
        AssistantMessageEvent::ThinkingEnd { content_index, content, signature } => {
            if let Some(AssistantContent::Thinking(t)) = msg.content.get_mut(*content_index) {
                t.thinking = content.clone();
                if signature.is_some() {
                    t.thinking_signature.clone_from(signature);
                }
            }
        }
        AssistantMessageEvent::ToolCallStart { content_index, id, name } => {
            put_block(
                msg,
                *content_index,
                AssistantContent::ToolCall(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: serde_json::Map::new(),
                    thought_signature: None,
                    intent: None,
                }),
            );
        }
        AssistantMessageEvent::ToolCallDelta { .. } => {}
        AssistantMessageEvent::ToolCallEnd { content_index, tool_call } => {
            put_block(msg, *content_index, AssistantContent::ToolCall(tool_call.clone()));
        }
        AssistantMessageEvent::Done { message, .. } => *msg = message.clone(),
        AssistantMessageEvent::Error { error, .. } => *msg = error.clone(),
    }
}

fn put_block(msg: &mut AssistantMessage, index: usize, block: AssistantContent) {
    if index < msg.content.len() {
        msg.content[index] = block;
    } else {
        msg.content.push(block);
    }
}

/// Serializes an event in its wire form, with `partial` (or `message` / `error` for the final
/// variants) in the reference key order: `type, contentIndex, delta|content|toolCall, partial`.
#[derive(Debug, Clone, Copy)]
pub struct EventWithPartial<'a> {
    pub event: &'a AssistantMessageEvent,
    pub partial: &'a AssistantMessage,
}

/// A `*_delta` event: its type, block, delta and `partial`.
fn delta_event<S: Serializer>(
    s: S,
    ty: &'static str,
    content_index: usize,
    delta: &str,
    partial: &AssistantMessage,
) -> Result<S::Ok, S::Error> {
    let mut st = s.serialize_struct("AssistantMessageEvent", 4)?;
    st.serialize_field("type", ty)?;
    st.serialize_field("contentIndex", &content_index)?;
    st.serialize_field("delta", delta)?;
    st.serialize_field("partial", partial)?;
    st.end()
}

impl Serialize for EventWithPartial<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use AssistantMessageEvent as E;
        let ty = self.event.type_name();
        match self.event {
            E::Start { .. } => {
                let mut st = s.serialize_struct("AssistantMessageEvent", 2)?;
                st.serialize_field("type", ty)?;
                st.serialize_field("partial", self.partial)?;
                st.end()
            }
            E::TextStart { content_index }
            | E::ThinkingStart { content_index }
            | E::ToolCallStart { content_index, .. } => {
                let mut st = s.serialize_struct("AssistantMessageEvent", 3)?;
                st.serialize_field("type", ty)?;
                st.serialize_field("contentIndex", content_index)?;
                st.serialize_field("partial", self.partial)?;
                st.end()
            }
            E::TextDelta { content_index, delta } | E::ThinkingDelta { content_index, delta } => {
                delta_event(s, ty, *content_index, delta, self.partial)
            }
            E::ToolCallDelta { content_index, delta } => delta_event(s, ty, *content_index, delta, self.partial),
            E::TextEnd { content_index, content, .. } | E::ThinkingEnd { content_index, content, .. } => {
                let mut st = s.serialize_struct("AssistantMessageEvent", 4)?;
                st.serialize_field("type", ty)?;
                st.serialize_field("contentIndex", content_index)?;
                st.serialize_field("content", content)?;
                st.serialize_field("partial", self.partial)?;
                st.end()
            }
            E::ToolCallEnd { content_index, tool_call } => {
                let mut st = s.serialize_struct("AssistantMessageEvent", 4)?;
                st.serialize_field("type", ty)?;
                st.serialize_field("contentIndex", content_index)?;
                st.serialize_field("toolCall", &ToolCallBlock(tool_call))?;
                st.serialize_field("partial", self.partial)?;
                st.end()
            }
            E::Done { reason, message } => {
                let mut st = s.serialize_struct("AssistantMessageEvent", 3)?;
                st.serialize_field("type", ty)?;
                st.serialize_field("reason", reason)?;
                st.serialize_field("message", message)?;
                st.end()
            }
            E::Error { reason, error, .. } => {
                let mut st = s.serialize_struct("AssistantMessageEvent", 3)?;
                st.serialize_field("type", ty)?;
                st.serialize_field("reason", reason)?;
                st.serialize_field("error", error)?;
                st.end()
            }
        }
    }
}

/// A tool call serialized as a content block (`{"type":"toolCall",...}`).
struct ToolCallBlock<'a>(&'a ToolCall);

impl Serialize for ToolCallBlock<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "type", rename = "toolCall")]
        struct Tagged<'a> {
            #[serde(flatten)]
            call: &'a ToolCall,
        }
        Tagged { call: self.0 }.serialize(s)
    }
}

pub use rho_types::wire_event::{WireAssistantMessageEvent, WireToolCall};

#[cfg(test)]
mod signature_tests {
    use super::*;

    #[test]
    fn a_blocks_signature_is_in_the_snapshot_from_its_end_on() {
        let mut partial = PartialMessage::new(AssistantMessage::empty("anthropic-messages", "p", "m"));
        partial.apply(&AssistantMessageEvent::ThinkingStart { content_index: 0 });
        partial.apply(&AssistantMessageEvent::ThinkingDelta { content_index: 0, delta: "hmm".into() });
        partial.apply(&AssistantMessageEvent::ThinkingEnd {
            content_index: 0,
            content: "hmm".into(),
            signature: Some("sig".into()),
        });
        partial.apply(&AssistantMessageEvent::TextStart { content_index: 1 });
        partial.apply(&AssistantMessageEvent::TextEnd {
            content_index: 1,
            content: "hi".into(),
            signature: Some("msg_1".into()),
        });
        let snapshot = partial.snapshot().cloned().unwrap_or_else(|| AssistantMessage::empty("", "", ""));
        let json = serde_json::to_value(&snapshot).unwrap_or_default();
        assert_eq!(json["content"][0]["thinkingSignature"], "sig");
        assert_eq!(json["content"][1]["text"], "hi");
        assert_eq!(json["content"][1]["textSignature"], "msg_1");
    }
}
