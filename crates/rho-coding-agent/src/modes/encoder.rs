//! Turning what a session emits into stdout lines, exactly as the protocol writes them, and
//! never longer than the frame bound when there is one (docs/decisions.md D17; [`FrameLimits`]
//! says how a frame that does not fit is sent).
//!
//! Streaming updates come in one of two shapes (docs/decisions.md D19). pi 1.6's delta shape
//! writes each step with the reply's usage so far, `{type, usage, assistantMessageEvent}`: the
//! encoder keeps only that usage. The seed protocol's cumulative shape also writes the message
//! so far, twice (as `assistantMessageEvent.partial` and as `message`, serialized once and
//! copied): the encoder keeps the streamed message, which `message_start` opens, each step
//! extends and `message_end` closes. `start` steps are applied but never written (the reference
//! folds them into `message_start`).
//!
//! Under a bound, a streamed message that outgrows it stops being kept: its later updates carry
//! the step without the partial (no frame could hold it), so the encoder's memory stays bounded
//! by the bound, not the reply. A delta too long for one frame is sent as several deltas
//! (concatenated, they give the same text, as merged ones do: docs/decisions.md D15); a `*_end`
//! step whose content cannot fit is sent chunked (protocol 2) or with the content omitted and
//! marked.
//!
//! Frames without a streamed message's state ([`encode_stateless`]) are encoded by whoever
//! queues them, so a queue never holds a whole message waiting for a slow host.

use rho_agent::AgentEvent;
use rho_ai::event::{AssistantMessageEvent, PartialMessage, WireToolCall};
use rho_rpc::RpcResponse;
use rho_types::types::Usage;
use rho_types::{AgentMessage, json};
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

use super::bounded::write_within;
pub use super::frames::{DEFAULT_MAX_FRAME_BYTES, FrameLimits, UpdateShape};
use crate::agent_session::AgentSessionEvent;

/// Something to write.
#[derive(Debug)]
pub enum OutItem {
    /// One pre-serialized frame without its newline (the `ready` line, the JSON-mode header).
    Raw(Vec<u8>),
    /// Whole lines, already encoded (each ends with `\n`). `ends_message`: they close the
    /// assistant message being streamed.
    Lines {
        bytes: Vec<u8>,
        ends_message: bool,
    },
    Response(RpcResponse),
    Event(AgentSessionEvent),
}

impl OutItem {
    /// Whether writing this item depends on (or changes) the streamed message the encoder
    /// keeps, so it must be encoded in order by the writer rather than when it is queued.
    pub fn needs_stream_state(&self) -> bool {
        matches!(
            self,
            Self::Event(AgentSessionEvent::Agent(
                AgentEvent::MessageStart { message: AgentMessage::Assistant(_) }
                    | AgentEvent::MessageUpdate { .. }
                    | AgentEvent::ToolExecutionUpdate { .. }
            ))
        )
    }
}

/// Encodes an item that needs no stream state into its lines (see [`OutItem::needs_stream_state`]).
pub fn encode_stateless(limits: &FrameLimits, item: OutItem) -> OutItem {
    let ends_message = matches!(
        item,
        OutItem::Event(AgentSessionEvent::Agent(AgentEvent::MessageEnd { message: AgentMessage::Assistant(_) }))
    );
    let mut bytes = Vec::new();
    if limits.updates.hides_system_messages()
        && let OutItem::Event(AgentSessionEvent::Agent(
            AgentEvent::MessageStart { message: AgentMessage::System(_) }
            | AgentEvent::MessageEnd { message: AgentMessage::System(_) },
        )) = &item
    {
        return OutItem::Lines { bytes, ends_message: false };
    }
    match &item {
        OutItem::Raw(raw) => {
            bytes.extend_from_slice(raw);
            bytes.push(b'\n');
        }
        OutItem::Lines { .. } => return item,
        OutItem::Response(response) => limits.write_response(&mut bytes, response),
        OutItem::Event(AgentSessionEvent::Agent(AgentEvent::AgentEnd { messages, will_retry, is_terminal })) => {
            // A host of the seed protocol is not shown the declared prompt; the run's messages
            // are copied only when there is one to leave out.
            let declared = |m: &AgentMessage| matches!(m, AgentMessage::System(_));
            if limits.updates.hides_system_messages() && messages.iter().any(declared) {
                let shown: Vec<AgentMessage> = messages.iter().filter(|m| !declared(m)).cloned().collect();
                limits.write_agent_end(&mut bytes, &shown, *will_retry, *is_terminal);
            } else {
                limits.write_agent_end(&mut bytes, messages, *will_retry, *is_terminal);
            }
        }
        OutItem::Event(AgentSessionEvent::Agent(event)) => limits.write_frame(&mut bytes, event),
        OutItem::Event(other) => limits.write_frame(&mut bytes, &SessionFrame(other)),
    }
    OutItem::Lines { bytes, ends_message }
}

pub struct FrameEncoder {
    limits: FrameLimits,
    /// The streamed message, for cumulative updates (kept empty for delta ones).
    partial: PartialMessage,
    /// Bytes of text applied to `partial` so far (a lower bound of its JSON size).
    partial_bytes: usize,
    /// The streamed reply's usage as the provider reported it so far.
    usage: Usage,
    scratch: Vec<u8>,
}

impl FrameEncoder {
    pub fn new(limits: FrameLimits) -> Self {
        Self {
            limits,
            partial: PartialMessage::default(),
            partial_bytes: 0,
            usage: Usage::default(),
            scratch: Vec::new(),
        }
    }

    /// Appends the line(s) for `item` to `out`, each ending in `\n`. Writes nothing for items
    /// that produce no frame.
    pub fn encode(&mut self, item: OutItem, out: &mut Vec<u8>) {
        match item {
            OutItem::Lines { bytes, ends_message } => {
                if ends_message {
                    self.close_message();
                }
                out.extend_from_slice(&bytes);
            }
            OutItem::Event(AgentSessionEvent::Agent(AgentEvent::MessageStart {
                message: AgentMessage::Assistant(a),
            })) => {
                self.usage.clone_from(&a.usage);
                self.partial_bytes = 0;
                if self.limits.updates == UpdateShape::Cumulative {
                    self.partial = PartialMessage::new(a.clone());
                }
                let event = AgentEvent::MessageStart { message: AgentMessage::Assistant(a) };
                self.limits.write_frame(out, &event);
            }
            OutItem::Event(AgentSessionEvent::Agent(AgentEvent::MessageUpdate { event })) => {
                if let AssistantMessageEvent::Start { partial } = &event {
                    self.usage.clone_from(&partial.usage);
                }
                self.apply(&event);
                if !matches!(
                    event,
                    AssistantMessageEvent::Start { .. }
                        | AssistantMessageEvent::Done { .. }
                        | AssistantMessageEvent::Error { .. }
                ) {
                    self.encode_update(&event, out);
                }
            }
            other => {
                if let OutItem::Lines { bytes, ends_message } = encode_stateless(&self.limits, other) {
                    if ends_message {
                        self.close_message();
                    }
                    out.extend_from_slice(&bytes);
                }
            }
        }
    }

    /// The bound and protocol for the frames from now on.
    pub fn set_limits(&mut self, limits: FrameLimits) {
        self.limits = limits;
    }

    fn close_message(&mut self) {
        self.partial.clear();
        self.partial_bytes = 0;
    }

    /// Applies a step to the streamed message, until the message outgrows the frame bound.
    fn apply(&mut self, event: &AssistantMessageEvent) {
        if self.partial.message.is_none() {
            return;
        }
        self.partial_bytes += event.delta().map_or(0, str::len);
        if self.partial_bytes > self.limits.max_frame {
            // No frame can carry this message any more: stop keeping it.
            self.partial.clear();
            return;
        }
        self.partial.apply(event);
    }

    /// `{"type":"message_update","usage":U,"assistantMessageEvent":{…}}`; cumulative, with
    /// `"partial":P` in the step and `"message":P` after it, or without them when that cannot
    /// fit; several frames for a delta too long for one.
    fn encode_update(&mut self, event: &AssistantMessageEvent, out: &mut Vec<u8>) {
        let max = self.limits.max_frame;
        let start = out.len();
        let update = Update { usage: &self.usage, event };
        if !write_within(out, &update, max) {
            // Only a delta or a block's end can be that long.
            match event {
                AssistantMessageEvent::TextDelta { content_index, delta } => {
                    let split =
                        |d: &str| AssistantMessageEvent::TextDelta { content_index: *content_index, delta: d.into() };
                    self.write_split(delta, split, out);
                }
                AssistantMessageEvent::ThinkingDelta { content_index, delta } => {
                    let split = |d: &str| AssistantMessageEvent::ThinkingDelta {
                        content_index: *content_index,
                        delta: d.into(),
                    };
                    self.write_split(delta, split, out);
                }
                AssistantMessageEvent::ToolCallDelta { content_index, delta } => {
                    let split = |d: &str| AssistantMessageEvent::ToolCallDelta {
                        content_index: *content_index,
                        delta: d.into(),
                    };
                    self.write_split(delta, split, out);
                }
                _ => self.limits.write_frame(out, &update),
            }
            return;
        }
        let Some(partial) = self.partial.snapshot() else {
            out.push(b'\n');
            return;
        };
        self.scratch.clear();
        write_assistant(&mut self.scratch, partial);
        let whole = out.len() - start + 2 * self.scratch.len() + r#","partial":},"message":}"#.len();
        if whole > max {
            out.push(b'\n');
            return;
        }
        // `{"type":"message_update","assistantMessageEvent":{…}}`: reopen both objects.
        out.truncate(out.len() - 2);
        out.extend_from_slice(br#","partial":"#);
        out.extend_from_slice(&self.scratch);
        out.extend_from_slice(br#"},"message":"#);
        out.extend_from_slice(&self.scratch);
        out.extend_from_slice(b"}\n");
    }

    /// A delta too long for one frame, as consecutive deltas that each fit.
    fn write_split(&self, delta: &str, make: impl Fn(&str) -> AssistantMessageEvent, out: &mut Vec<u8>) {
        // The frame around an empty delta, measured as it will be written.
        let mut probe = Vec::new();
        let _ = json::write_to(&mut probe, &Update { usage: &self.usage, event: &make("") });
        let envelope = probe.len();
        for piece in json_pieces(delta, self.limits.max_frame.saturating_sub(envelope).max(64)) {
            let event = make(piece);
            if write_within(out, &Update { usage: &self.usage, event: &event }, self.limits.max_frame) {
                out.push(b'\n');
            }
        }
    }
}

/// `s` cut at character boundaries into pieces whose JSON string form is at most `room` bytes.
fn json_pieces(s: &str, room: usize) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut cost = 0;
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            cost += match c {
                '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
                '\u{0}'..='\u{1f}' | '\u{2028}' | '\u{2029}' => 6,
                c => c.len_utf8(),
            };
            if cost > room {
                end = i.max(c.len_utf8());
                break;
            }
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

/// An assistant message as a message of the conversation: `{"role":"assistant",…}`.
fn write_assistant(out: &mut Vec<u8>, message: &rho_types::types::AssistantMessage) {
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

/// `{"type":"message_update","usage":U,"assistantMessageEvent":{…}}`: pi 1.6's frame, and the
/// cumulative one without its partial.
struct Update<'a> {
    usage: &'a Usage,
    event: &'a AssistantMessageEvent,
}

impl Serialize for Update<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("MessageUpdate", 3)?;
        st.serialize_field("type", "message_update")?;
        st.serialize_field("usage", self.usage)?;
        st.serialize_field("assistantMessageEvent", &BareEvent(self.event))?;
        st.end()
    }
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
            AgentSessionEvent::HostUriRequest(r) => r.serialize(s),
            AgentSessionEvent::HostUriCancel(c) => c.serialize(s),
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
            E::TextDelta { .. } | E::ThinkingDelta { .. } | E::ToolCallDelta { .. } => {
                st.serialize_field("delta", event.delta().unwrap_or_default())?;
            }
            E::TextEnd { content, .. } | E::ThinkingEnd { content, .. } => st.serialize_field("content", content)?,
            E::ToolCallEnd { tool_call, .. } => {
                st.serialize_field("toolCall", &WireToolCall { call: tool_call.clone() })?;
            }
            // pi 1.6: the call's id and name, so no snapshot is needed to know them.
            E::ToolCallStart { id, name, .. } => {
                st.serialize_field("id", id)?;
                st.serialize_field("toolName", name)?;
            }
            _ => {}
        }
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use rho_types::types::AssistantMessage;
    use serde_json::{Value, json};

    use super::*;

    fn encode(encoder: &mut FrameEncoder, item: OutItem) -> Vec<Value> {
        let mut out = Vec::new();
        encoder.encode(item, &mut out);
        let text = String::from_utf8(out).unwrap();
        text.lines()
            .map(|l| {
                assert!(l.len() <= encoder.limits.max_frame, "a {} byte line over the bound", l.len());
                serde_json::from_str(l).unwrap()
            })
            .collect()
    }

    fn agent(event: AgentEvent) -> OutItem {
        OutItem::Event(AgentSessionEvent::Agent(event))
    }

    fn update(event: AssistantMessageEvent) -> OutItem {
        agent(AgentEvent::MessageUpdate { event })
    }

    fn started_with(limits: FrameLimits) -> FrameEncoder {
        let mut encoder = FrameEncoder::new(limits);
        let start = AssistantMessage::empty("anthropic-messages", "p", "m");
        assert_eq!(
            encode(&mut encoder, agent(AgentEvent::MessageStart { message: AgentMessage::Assistant(start) })).len(),
            1
        );
        encode(&mut encoder, update(AssistantMessageEvent::TextStart { content_index: 0 }));
        encoder
    }

    /// Cumulative updates under a bound of `max` bytes.
    fn started(max: usize) -> FrameEncoder {
        started_with(FrameLimits::new(max).with_updates(UpdateShape::Cumulative))
    }

    fn zero_usage() -> Value {
        serde_json::from_str(&json::to_string(&Usage::default()).unwrap()).unwrap()
    }

    #[test]
    fn delta_updates_carry_the_step_and_the_usage_reported_so_far() {
        let mut encoder = FrameEncoder::new(FrameLimits::unbounded());
        let start = AssistantMessage::empty("anthropic-messages", "p", "m");
        encode(&mut encoder, agent(AgentEvent::MessageStart { message: AgentMessage::Assistant(start.clone()) }));
        let mut reported = start;
        reported.usage.input = 120;
        reported.usage.total_tokens = 120;
        assert!(encode(&mut encoder, update(AssistantMessageEvent::Start { partial: reported.clone() })).is_empty());
        let usage: Value = serde_json::from_str(&json::to_string(&reported.usage).unwrap()).unwrap();
        let frames: Vec<Value> = [
            AssistantMessageEvent::TextStart { content_index: 0 },
            AssistantMessageEvent::TextDelta { content_index: 0, delta: "Hi".into() },
            AssistantMessageEvent::ToolCallStart { content_index: 1, id: "call_1".into(), name: "read".into() },
            AssistantMessageEvent::ToolCallDelta { content_index: 1, delta: "{}".into() },
        ]
        .into_iter()
        .flat_map(|event| encode(&mut encoder, update(event)))
        .collect();
        assert_eq!(
            frames,
            [
                json!({"type": "message_update", "usage": usage, "assistantMessageEvent":
                    {"type": "text_start", "contentIndex": 0}}),
                json!({"type": "message_update", "usage": usage, "assistantMessageEvent":
                    {"type": "text_delta", "contentIndex": 0, "delta": "Hi"}}),
                json!({"type": "message_update", "usage": usage, "assistantMessageEvent":
                    {"type": "toolcall_start", "contentIndex": 1, "id": "call_1", "toolName": "read"}}),
                json!({"type": "message_update", "usage": usage, "assistantMessageEvent":
                    {"type": "toolcall_delta", "contentIndex": 1, "delta": "{}"}}),
            ]
        );
        // Nothing of the reply is kept for them.
        assert!(encoder.partial.message.is_none());
    }

    #[test]
    fn cumulative_updates_carry_the_message_so_far_twice() {
        let mut encoder = started_with(FrameLimits::unbounded().with_updates(UpdateShape::Cumulative));
        let frames =
            encode(&mut encoder, update(AssistantMessageEvent::TextDelta { content_index: 0, delta: "Hi".into() }));
        let frame = &frames[0];
        assert_eq!(frame["assistantMessageEvent"]["delta"], "Hi");
        assert_eq!(frame["assistantMessageEvent"]["partial"], frame["message"]);
        assert_eq!(frame["message"]["content"], json!([{"type": "text", "text": "Hi"}]));
        assert_eq!(frame["usage"], zero_usage());
    }

    #[test]
    fn an_update_whose_partial_would_pass_the_bound_keeps_only_the_step() {
        let mut encoder = started(4096);
        let small = encode(
            &mut encoder,
            update(AssistantMessageEvent::TextDelta { content_index: 0, delta: "x".repeat(1000).into() }),
        );
        assert_eq!(small[0]["assistantMessageEvent"]["partial"], small[0]["message"]);
        assert_eq!(small[0]["message"]["role"], "assistant");
        let big = encode(
            &mut encoder,
            update(AssistantMessageEvent::TextDelta { content_index: 0, delta: "y".repeat(2000).into() }),
        );
        assert_eq!(
            big[0],
            json!({"type": "message_update", "usage": zero_usage(),
                "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "y".repeat(2000)}})
        );
    }

    #[test]
    fn a_delta_longer_than_a_frame_is_sent_as_several() {
        let mut encoder = started(4096);
        let text: String = (0..20_000).map(|i| ['a', '"', '\u{1}', 'é', '\u{2028}'][i % 5]).collect();
        let frames = encode(
            &mut encoder,
            update(AssistantMessageEvent::TextDelta { content_index: 0, delta: text.clone().into() }),
        );
        assert!(frames.len() > 1);
        let joined: String = frames
            .iter()
            .map(|f| {
                assert_eq!(f["assistantMessageEvent"]["type"], "text_delta");
                assert!(f.get("message").is_none());
                f["assistantMessageEvent"]["delta"].as_str().unwrap()
            })
            .collect();
        assert_eq!(joined, text);
        // The message outgrew the bound: later updates carry no partial.
        let next =
            encode(&mut encoder, update(AssistantMessageEvent::TextDelta { content_index: 0, delta: "z".into() }));
        assert!(next[0].get("message").is_none());
    }

    #[test]
    fn a_block_end_too_long_for_a_frame_has_its_content_omitted_and_marked() {
        let mut encoder = started(4096);
        let content = "w".repeat(10_000);
        let frames = encode(
            &mut encoder,
            update(AssistantMessageEvent::TextEnd { content_index: 0, content: content.into(), signature: None }),
        );
        assert_eq!(
            frames,
            [json!({"type": "message_update", "usage": zero_usage(), "assistantMessageEvent": {"type": "text_end",
                    "contentIndex": 0, "content": "[10000 bytes omitted: the frame would exceed 4096 bytes]"}})]
        );
    }

    #[test]
    fn start_done_and_error_steps_are_applied_but_never_written() {
        let mut encoder = FrameEncoder::new(FrameLimits::new(DEFAULT_MAX_FRAME_BYTES));
        let mut partial = AssistantMessage::empty("a", "p", "m");
        partial.response_id = Some("resp_1".into());
        assert!(encode(&mut encoder, update(AssistantMessageEvent::Start { partial })).is_empty());
    }

    #[test]
    fn other_frames_have_their_largest_strings_replaced_until_they_fit() {
        let limits = FrameLimits::new(8 * 1024);
        let result = rho_types::AgentToolResult::text("w".repeat(20_000));
        let item = encode_stateless(
            &limits,
            agent(AgentEvent::ToolExecutionEnd {
                tool_call_id: "c1".into(),
                tool_name: "read".into(),
                result,
                is_error: false,
                is_warning: Some(false),
                duration_ms: Some(1),
            }),
        );
        let mut encoder = FrameEncoder::new(limits);
        let frames = encode(&mut encoder, item);
        let text = frames[0]["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, "[20000 bytes omitted: the frame would exceed 8192 bytes]");
        assert_eq!(frames[0]["toolCallId"], "c1");
    }
}
