//! Turning what a session emits into stdout lines, exactly as the protocol writes them, and
//! never longer than the frame bound (decision 17).
//!
//! The encoder keeps the assistant message being streamed: `message_start` opens it, each
//! `message_update` applies its step and writes the step with the message so far (twice, as
//! `assistantMessageEvent.partial` and as `message`, serialized once and copied), and
//! `message_end` closes it. `start` steps are applied but never written (the reference folds
//! them into `message_start`).
//!
//! The bound is applied while serializing, never by cutting bytes: an oversized
//! `message_update` drops the partial message and keeps the step; an oversized `agent_end`
//! keeps the newest messages that fit plus `messageCount` and `truncated: true`; an oversized
//! response becomes an error response saying so; any other oversized frame has its largest
//! strings replaced by a notice until it fits.

use rho_agent::{AgentEvent, AgentMessage};
use rho_ai::event::{AssistantMessageEvent, PartialMessage, WireToolCall};
use rho_ai::json;
use rho_rpc::RpcResponse;
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use serde_json::Value;

use crate::agent_session::AgentSessionEvent;

/// The default bound on one stdout line, newline excluded (1 MiB).
pub const DEFAULT_MAX_FRAME_BYTES: usize = 1024 * 1024;

/// Something to write as one line.
#[derive(Debug)]
pub enum OutItem {
    /// A pre-serialized frame (the `ready` line, the JSON-mode session header).
    Raw(Vec<u8>),
    Response(RpcResponse),
    Event(AgentSessionEvent),
}

pub struct FrameEncoder {
    max_frame: usize,
    partial: PartialMessage,
    scratch: Vec<u8>,
}

impl FrameEncoder {
    pub fn new(max_frame: usize) -> Self {
        Self { max_frame: max_frame.max(256), partial: PartialMessage::default(), scratch: Vec::new() }
    }

    /// Appends the line(s) for `item` to `out`, each ending in `\n`. Writes nothing for items
    /// that produce no frame.
    pub fn encode(&mut self, item: &OutItem, out: &mut Vec<u8>) {
        let start = out.len();
        match item {
            OutItem::Raw(bytes) => out.extend_from_slice(bytes),
            OutItem::Response(response) => self.encode_response(response, out),
            OutItem::Event(AgentSessionEvent::Agent(event)) => {
                if !self.encode_agent_event(event, out) {
                    return;
                }
            }
            OutItem::Event(other) => self.encode_value_frame(&SessionFrame(other), out),
        }
        if out.len() > start {
            out.push(b'\n');
        }
    }

    fn encode_response(&mut self, response: &RpcResponse, out: &mut Vec<u8>) {
        let start = out.len();
        if json::write_to(out, response).is_ok() && out.len() - start <= self.max_frame {
            return;
        }
        let size = out.len() - start;
        out.truncate(start);
        let command = response.command.clone().unwrap_or_default();
        let error = RpcResponse::error(
            response.id.clone(),
            command,
            format!(
                "Response too large: {size} bytes exceed the frame limit of {} bytes (--rpc-max-frame-bytes)",
                self.max_frame
            ),
        );
        let _ = json::write_to(out, &error);
    }

    /// Returns false when the event writes no frame.
    fn encode_agent_event(&mut self, event: &AgentEvent, out: &mut Vec<u8>) -> bool {
        match event {
            AgentEvent::MessageStart { message: AgentMessage::Assistant(a) } => {
                self.partial = PartialMessage::new(a.clone());
            }
            AgentEvent::MessageEnd { message: AgentMessage::Assistant(_) } => self.partial.clear(),
            AgentEvent::MessageUpdate { event } => {
                self.partial.apply(event);
                if matches!(
                    event,
                    AssistantMessageEvent::Start { .. }
                        | AssistantMessageEvent::Done { .. }
                        | AssistantMessageEvent::Error { .. }
                ) {
                    return false;
                }
                self.encode_update(event, out);
                return true;
            }
            AgentEvent::AgentEnd { messages } => {
                self.encode_agent_end(messages, out);
                return true;
            }
            _ => {}
        }
        self.encode_value_frame(event, out);
        true
    }

    /// `{"type":"message_update","assistantMessageEvent":{…,"partial":P},"message":P}`.
    fn encode_update(&mut self, event: &AssistantMessageEvent, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(br#"{"type":"message_update","assistantMessageEvent":"#);
        let _ = json::write_to(out, &BareEvent(event));
        let Some(partial) = self.partial.snapshot() else {
            out.push(b'}');
            return;
        };
        self.scratch.clear();
        write_assistant(&mut self.scratch, partial);
        let fixed = out.len() - start + 2 * self.scratch.len() + r#","partial":},"message":}"#.len();
        if fixed > self.max_frame {
            out.push(b'}');
            return;
        }
        out.pop(); // the bare event's closing brace
        out.extend_from_slice(br#","partial":"#);
        out.extend_from_slice(&self.scratch);
        out.extend_from_slice(br#"},"message":"#);
        out.extend_from_slice(&self.scratch);
        out.push(b'}');
    }

    /// `agent_end`, keeping the newest messages that fit when all of them do not.
    fn encode_agent_end(&mut self, messages: &[AgentMessage], out: &mut Vec<u8>) {
        let start = out.len();
        let _ = json::write_to(out, &AgentEnd { messages, message_count: None, truncated: None });
        if out.len() - start <= self.max_frame {
            return;
        }
        out.truncate(start);
        // Sizes of each message, newest first, against the room left by the envelope.
        let envelope = r#"{"type":"agent_end","messages":[],"messageCount":,"truncated":true}"#.len() + 20;
        let mut room = self.max_frame.saturating_sub(envelope);
        let mut keep_from = messages.len();
        for (i, message) in messages.iter().enumerate().rev() {
            self.scratch.clear();
            let _ = json::write_to(&mut self.scratch, message);
            let size = self.scratch.len() + 1;
            if size > room {
                break;
            }
            room -= size;
            keep_from = i;
        }
        let _ = json::write_to(
            out,
            &AgentEnd { messages: &messages[keep_from..], message_count: Some(messages.len()), truncated: Some(true) },
        );
    }

    /// Any other frame: serialized as it is, or with its largest strings replaced until it fits.
    fn encode_value_frame<T: Serialize>(&mut self, frame: &T, out: &mut Vec<u8>) {
        let start = out.len();
        if json::write_to(out, frame).is_err() {
            out.truncate(start);
            return;
        }
        if out.len() - start <= self.max_frame {
            return;
        }
        let mut value: Value = match serde_json::from_slice(&out[start..]) {
            Ok(v) => v,
            Err(_) => {
                out.truncate(start);
                return;
            }
        };
        let mut size = out.len() - start;
        out.truncate(start);
        // Replace the largest strings first, counting what each replacement saves, and
        // serialize again only to check (escaping makes a string's raw length a lower bound of
        // what it costs in the frame, so one more round may be needed).
        while size > self.max_frame {
            let mut strings = large_strings(&mut value);
            if strings.is_empty() {
                break;
            }
            strings.sort_by_key(|s| std::cmp::Reverse(s.len()));
            let mut estimate = size;
            for string in strings {
                if estimate <= self.max_frame {
                    break;
                }
                let notice =
                    format!("[{} bytes omitted: the frame would exceed {} bytes]", string.len(), self.max_frame);
                estimate = estimate.saturating_sub(string.len().saturating_sub(notice.len()));
                *string = notice;
            }
            self.scratch.clear();
            let _ = json::write_to(&mut self.scratch, &value);
            size = self.scratch.len();
        }
        let _ = json::write_to(out, &value);
    }
}

/// Every string over 1 KiB in `value` (shorter ones are not worth replacing).
fn large_strings(value: &mut Value) -> Vec<&mut String> {
    fn walk<'a>(value: &'a mut Value, found: &mut Vec<&'a mut String>) {
        match value {
            Value::String(s) if s.len() > 1024 => found.push(s),
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, found)),
            Value::Object(map) => map.values_mut().for_each(|v| walk(v, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(value, &mut found);
    found
}

/// An assistant message as a message of the conversation: `{"role":"assistant",…}`.
fn write_assistant(out: &mut Vec<u8>, message: &rho_ai::types::AssistantMessage) {
    let start = out.len();
    out.extend_from_slice(br#"{"role":"assistant","#);
    let body = out.len();
    if json::write_to(out, message).is_err() {
        out.truncate(start);
        return;
    }
    // `message` serialized as `{…}`: drop its opening brace (an empty object keeps none).
    if out.len() > body + 2 {
        out.remove(body);
    } else {
        out.truncate(body - 1);
        out.push(b'}');
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "agent_end", rename_all = "camelCase")]
struct AgentEnd<'a> {
    messages: &'a [AgentMessage],
    #[serde(skip_serializing_if = "Option::is_none")]
    message_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<bool>,
}

/// The non-agent events of a session, each in its own serde form.
struct SessionFrame<'a>(&'a AgentSessionEvent);

impl Serialize for SessionFrame<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            AgentSessionEvent::Agent(e) => e.serialize(s),
            AgentSessionEvent::Session(e) => e.serialize(s),
            AgentSessionEvent::UiRequest(r) => r.serialize(s),
            AgentSessionEvent::HostToolCall(c) => c.serialize(s),
            AgentSessionEvent::HostToolCancel(c) => c.serialize(s),
            AgentSessionEvent::ExtensionError(e) => e.serialize(s),
        }
    }
}

/// An assistant-message step without its `partial`, keys in the reference order.
struct BareEvent<'a>(&'a AssistantMessageEvent);

impl Serialize for BareEvent<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use AssistantMessageEvent as E;
        let event = self.0;
        let mut st = s.serialize_struct("AssistantMessageEvent", 3)?;
        st.serialize_field("type", event.type_name())?;
        if let Some(index) = event.content_index() {
            st.serialize_field("contentIndex", &index)?;
        }
        match event {
            E::TextDelta { delta, .. } | E::ThinkingDelta { delta, .. } | E::ToolCallDelta { delta, .. } => {
                st.serialize_field("delta", delta)?;
            }
            E::TextEnd { content, .. } | E::ThinkingEnd { content, .. } => st.serialize_field("content", content)?,
            E::ToolCallEnd { tool_call, .. } => {
                st.serialize_field("toolCall", &WireToolCall { call: tool_call.clone() })?;
            }
            _ => {}
        }
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_ai::types::AssistantMessage;
    use serde_json::json;

    fn encode(encoder: &mut FrameEncoder, item: OutItem) -> Vec<Value> {
        let mut out = Vec::new();
        encoder.encode(&item, &mut out);
        let text = String::from_utf8(out).unwrap();
        text.lines()
            .map(|l| {
                assert!(l.len() <= encoder.max_frame, "a {} byte line over the bound", l.len());
                serde_json::from_str(l).unwrap()
            })
            .collect()
    }

    fn agent(event: AgentEvent) -> OutItem {
        OutItem::Event(AgentSessionEvent::Agent(event))
    }

    #[test]
    fn an_update_whose_partial_would_pass_the_bound_keeps_only_the_step() {
        let mut encoder = FrameEncoder::new(4096);
        let start = AssistantMessage::empty("anthropic-messages", "p", "m");
        assert!(
            encode(&mut encoder, agent(AgentEvent::MessageStart { message: AgentMessage::Assistant(start) })).len()
                == 1
        );
        encode(
            &mut encoder,
            agent(AgentEvent::MessageUpdate { event: AssistantMessageEvent::TextStart { content_index: 0 } }),
        );
        let small = encode(
            &mut encoder,
            agent(AgentEvent::MessageUpdate {
                event: AssistantMessageEvent::TextDelta { content_index: 0, delta: "x".repeat(1000) },
            }),
        );
        assert_eq!(small[0]["assistantMessageEvent"]["partial"], small[0]["message"]);
        assert_eq!(small[0]["message"]["role"], "assistant");
        let big = encode(
            &mut encoder,
            agent(AgentEvent::MessageUpdate {
                event: AssistantMessageEvent::TextDelta { content_index: 0, delta: "y".repeat(2000) },
            }),
        );
        assert_eq!(
            big[0],
            json!({"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "y".repeat(2000)}})
        );
    }

    #[test]
    fn start_done_and_error_steps_are_applied_but_never_written() {
        let mut encoder = FrameEncoder::new(DEFAULT_MAX_FRAME_BYTES);
        let mut partial = AssistantMessage::empty("a", "p", "m");
        partial.response_id = Some("resp_1".into());
        let start = AssistantMessageEvent::Start { partial };
        assert!(encode(&mut encoder, agent(AgentEvent::MessageUpdate { event: start })).is_empty());
    }

    #[test]
    fn a_response_that_cannot_fit_becomes_an_error_saying_so() {
        let mut encoder = FrameEncoder::new(1024);
        let response = RpcResponse::with_data(Some(json!("r1")), "get_messages", json!({"text": "z".repeat(5000)}));
        let frames = encode(&mut encoder, OutItem::Response(response));
        assert_eq!(frames[0]["id"], "r1");
        assert_eq!(frames[0]["success"], false);
        assert!(frames[0]["error"].as_str().unwrap().starts_with("Response too large: "));
    }

    #[test]
    fn other_frames_have_their_largest_strings_replaced_until_they_fit() {
        let mut encoder = FrameEncoder::new(8 * 1024);
        let result = rho_agent::AgentToolResult::text("w".repeat(20_000));
        let frames = encode(
            &mut encoder,
            agent(AgentEvent::ToolExecutionEnd {
                tool_call_id: "c1".into(),
                tool_name: "read".into(),
                result,
                is_error: false,
                is_warning: Some(false),
            }),
        );
        let text = frames[0]["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, "[20000 bytes omitted: the frame would exceed 8192 bytes]");
        assert_eq!(frames[0]["toolCallId"], "c1");
    }
}
