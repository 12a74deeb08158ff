//! One frame as stdout lines (docs/decisions.md D17):
//!
//! - under protocol 1, a line is as long as its frame, as pi writes them, unless the host set a
//!   bound (`--rpc-max-frame-bytes`);
//! - under protocol 2 (negotiated with omp's `negotiate_protocol`), lines keep omp's bound and a
//!   frame up to 64 MiB is sent whole, split into `rpc_chunk` lines of base64 the host
//!   reassembles.
//!
//! A frame that does not fit a bound degrades, never silently: `agent_end` keeps the newest
//! messages that fit plus `messageCount` and `truncated: true`, as does a response listing
//! messages; any other event has its largest strings replaced by a notice ("omit and mark");
//! any other response fails with an error saying it was too large (a host never reads
//! `success: true` over data that is not what it asked for), and one whose id alone is too long
//! loses the id. Nothing is ever cut mid-JSON.

use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use rho_rpc::{RpcChunk, RpcResponse};
use rho_types::{AgentMessage, json};
use serde::Serialize;

use super::bounded::{write_shrunk, write_within};

/// The default bound on one stdout line, newline excluded (1 MiB).
pub const DEFAULT_MAX_FRAME_BYTES: usize = 1024 * 1024;

/// The largest frame protocol 2 reassembles (omp's `maxReassembledFrameBytes`).
pub const MAX_REASSEMBLED_BYTES: usize = 64 * 1024 * 1024;

/// The payload of one `rpc_chunk` (before base64).
const CHUNK_BYTES: usize = 256 * 1024;

/// The protocol versions rho speaks: 1 (plain lines) and 2 (chunked large frames).
pub const SUPPORTED_PROTOCOLS: [u32; 2] = [1, 2];

/// How a streamed assistant message is written (`message_update`, docs/decisions.md D19).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UpdateShape {
    /// pi 1.6's: the step alone, with the reply's usage so far, so the stream grows with the
    /// reply's length and no more.
    #[default]
    Delta,
    /// The seed protocol's (omp's, xcsh's): each step also carries the whole message so far,
    /// as `assistantMessageEvent.partial` and as `message`.
    Cumulative,
}

impl UpdateShape {
    /// Whether the host speaks the seed protocol (omp, xcsh): its hosts know no `system` message
    /// (xcsh's client refuses a role it does not know), so pi 1.6's declared prompt stays in the
    /// transcript and off their wire: no `message_start`/`message_end` for it, and none in
    /// `agent_end`, `get_messages`, `messageCount` or `get_messages_page`.
    pub fn hides_system_messages(self) -> bool {
        self == Self::Cumulative
    }
}

/// The messages a host of this shape is shown (see [`UpdateShape::hides_system_messages`]).
pub fn wire_messages(shape: UpdateShape, messages: Vec<AgentMessage>) -> Vec<AgentMessage> {
    if !shape.hides_system_messages() {
        return messages;
    }
    messages.into_iter().filter(|m| !matches!(m, AgentMessage::System(_))).collect()
}

/// How frames are written: the line limit, the negotiated protocol and the shape of streaming
/// updates.
#[derive(Debug, Clone, Copy)]
pub struct FrameLimits {
    /// The longest line, newline excluded; `usize::MAX` when lines are as long as their frames.
    pub max_frame: usize,
    /// Protocol 2: frames over the bound are chunked instead of degraded.
    pub chunked: bool,
    pub updates: UpdateShape,
}

impl FrameLimits {
    /// Lines as long as their frames, as pi writes them (protocol 1 without a bound).
    pub fn unbounded() -> Self {
        Self { max_frame: usize::MAX, chunked: false, updates: UpdateShape::Delta }
    }

    /// Lines of at most `max_frame` bytes (`--rpc-max-frame-bytes`).
    pub fn new(max_frame: usize) -> Self {
        Self { max_frame: max_frame.max(256), ..Self::unbounded() }
    }

    pub fn with_updates(self, updates: UpdateShape) -> Self {
        Self { updates, ..self }
    }

    pub fn is_bounded(&self) -> bool {
        self.max_frame != usize::MAX
    }

    /// Protocol 2 can be offered unless the host set a bound other than omp's own, which its
    /// client checks.
    pub fn offers_chunking(&self) -> bool {
        !self.is_bounded() || self.max_frame == DEFAULT_MAX_FRAME_BYTES
    }

    /// The bound the `ready` frame names: the host's, else the one protocol 2 keeps.
    pub fn advertised_bound(&self) -> usize {
        self.max_frame.min(DEFAULT_MAX_FRAME_BYTES)
    }

    /// Protocol 2: lines keep omp's bound, larger frames go out chunked.
    pub fn negotiated(self) -> Self {
        Self { max_frame: self.advertised_bound(), chunked: true, ..self }
    }

    /// Appends `frame` and its newline, chunked when negotiated and needed.
    fn write_whole<T: ?Sized + Serialize>(&self, out: &mut Vec<u8>, frame: &T) -> bool {
        if write_within(out, frame, self.max_frame) {
            out.push(b'\n');
            return true;
        }
        if !self.chunked {
            return false;
        }
        let mut whole = Vec::new();
        if !write_within(&mut whole, frame, MAX_REASSEMBLED_BYTES) {
            return false;
        }
        write_chunks(out, &whole);
        true
    }

    /// Appends any frame: whole, chunked, or with its largest strings omitted. Writes nothing
    /// for a frame that cannot be made to fit (a bug-sized frame of small values).
    pub fn write_frame<T: ?Sized + Serialize>(&self, out: &mut Vec<u8>, frame: &T) {
        if self.write_whole(out, frame) {
            return;
        }
        if write_shrunk(out, frame, self.max_frame) {
            out.push(b'\n');
        } else {
            tracing::error!("a frame could not be made to fit in {} bytes and was dropped", self.max_frame);
        }
    }

    /// Appends a response: whole, chunked, with only its newest messages (marked), or as an
    /// error saying it was too large.
    pub fn write_response(&self, out: &mut Vec<u8>, response: &RpcResponse) {
        if self.write_whole(out, response) {
            return;
        }
        if let Some(newest) = self.newest_messages(response)
            && write_shrunk(out, &newest, self.max_frame)
        {
            out.push(b'\n');
            return;
        }
        let command = response.command.clone().unwrap_or_default();
        let reason = format!(
            "Response too large: it cannot fit in the frame limit of {} bytes (--rpc-max-frame-bytes)",
            self.max_frame
        );
        let error = RpcResponse::error(response.id.clone(), command.clone(), reason.clone());
        if write_within(out, &error, self.max_frame) {
            out.push(b'\n');
            return;
        }
        // The id (or the command name) alone is too long to echo.
        let error = RpcResponse::error(None, command, format!("{reason}; its id is too long to echo"));
        if write_shrunk(out, &error, self.max_frame) {
            out.push(b'\n');
        }
    }

    /// A response listing `messages` (`get_messages`) that cannot fit even degraded: the newest
    /// messages that fit, with `messageCount` and `truncated: true` (`get_messages_page` pages
    /// through all of them).
    fn newest_messages(&self, response: &RpcResponse) -> Option<RpcResponse> {
        let data = response.data.as_ref()?.as_object()?;
        let messages = data.get("messages")?.as_array()?;
        let mut room = self.max_frame.saturating_sub(256);
        let mut keep_from = messages.len();
        let mut scratch = Vec::new();
        for (i, message) in messages.iter().enumerate().rev() {
            scratch.clear();
            if !write_within(&mut scratch, message, room.saturating_sub(1)) {
                break;
            }
            room -= scratch.len() + 1;
            keep_from = i;
        }
        let mut data = data.clone();
        data.insert("messages".into(), messages[keep_from..].to_vec().into());
        data.insert("messageCount".into(), messages.len().into());
        data.insert("truncated".into(), true.into());
        Some(RpcResponse { data: Some(data.into()), ..response.clone() })
    }

    /// `agent_end`, keeping the newest messages that fit when all of them do not.
    pub fn write_agent_end(&self, out: &mut Vec<u8>, messages: &[AgentMessage], will_retry: bool, is_terminal: bool) {
        let whole = AgentEnd { messages, will_retry, is_terminal, message_count: None, truncated: None };
        if self.write_whole(out, &whole) {
            return;
        }
        let envelope =
            r#"{"type":"agent_end","messages":[],"willRetry":false,"isTerminal":false,"messageCount":,"truncated":true}"#
                .len()
                + 20;
        let mut room = self.max_frame.saturating_sub(envelope);
        let mut keep_from = messages.len();
        let mut scratch = Vec::new();
        for (i, message) in messages.iter().enumerate().rev() {
            scratch.clear();
            if !write_within(&mut scratch, message, room.saturating_sub(1)) {
                break;
            }
            room -= scratch.len() + 1;
            keep_from = i;
        }
        let kept = AgentEnd {
            messages: &messages[keep_from..],
            will_retry,
            is_terminal,
            message_count: Some(messages.len()),
            truncated: Some(true),
        };
        self.write_frame(out, &kept);
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "agent_end", rename_all = "camelCase")]
struct AgentEnd<'a> {
    messages: &'a [AgentMessage],
    /// pi 1.6's: the failed reply is retried next.
    will_retry: bool,
    /// omp's: false when the prompt goes on with another run (a retry, a continuation).
    is_terminal: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    message_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<bool>,
}

/// Appends `whole` (one frame's JSON) as consecutive `rpc_chunk` lines.
fn write_chunks(out: &mut Vec<u8>, whole: &[u8]) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let chunk_id = format!("rpc-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let count = whole.len().div_ceil(CHUNK_BYTES);
    for (index, piece) in whole.chunks(CHUNK_BYTES).enumerate() {
        let chunk = RpcChunk {
            chunk_id: chunk_id.clone(),
            index,
            count,
            byte_length: whole.len(),
            data: base64::engine::general_purpose::STANDARD.encode(piece),
        };
        let _ = json::write_to(out, &chunk);
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn lines(out: &[u8], max: usize) -> Vec<Value> {
        std::str::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| {
                assert!(l.len() <= max, "a {} byte line over the bound", l.len());
                serde_json::from_str(l).unwrap()
            })
            .collect()
    }

    #[test]
    fn a_response_that_does_not_fit_fails_saying_so() {
        let limits = FrameLimits::new(4096);
        let response = RpcResponse::with_data(Some(json!("r1")), "get_state", json!({"sessionName": "n".repeat(5000)}));
        let mut out = Vec::new();
        limits.write_response(&mut out, &response);
        assert_eq!(
            lines(&out, 4096),
            [json!({"id": "r1", "type": "response", "command": "get_state", "success": false,
                "error": "Response too large: it cannot fit in the frame limit of 4096 bytes (--rpc-max-frame-bytes)"})]
        );
    }

    #[test]
    fn a_response_whose_id_is_too_long_fails_without_it() {
        let limits = FrameLimits::new(4096);
        let response = RpcResponse::ok(Some(json!("i".repeat(10_000))), "get_state");
        let mut out = Vec::new();
        limits.write_response(&mut out, &response);
        let frames = lines(&out, 4096);
        assert!(frames[0].get("id").is_none());
        assert_eq!(frames[0]["command"], "get_state");
        assert!(frames[0]["error"].as_str().unwrap().ends_with("; its id is too long to echo"));
    }

    #[test]
    fn without_a_bound_every_frame_is_one_line_whole() {
        let limits = FrameLimits::unbounded();
        let text = "z".repeat(3_000_000);
        let response = RpcResponse::with_data(Some(json!("r")), "get_last_assistant_text", json!({"text": text}));
        let mut out = Vec::new();
        limits.write_response(&mut out, &response);
        let frames = lines(&out, usize::MAX);
        assert_eq!(frames, [serde_json::to_value(&response).unwrap()]);
        assert!(limits.offers_chunking());
        let negotiated = limits.negotiated();
        assert_eq!((negotiated.max_frame, negotiated.chunked), (DEFAULT_MAX_FRAME_BYTES, true));
    }

    #[test]
    fn protocol_two_chunks_what_does_not_fit() {
        let limits = FrameLimits::unbounded().negotiated();
        let text = "z".repeat(1_100_000);
        let response = RpcResponse::with_data(Some(json!("r")), "get_messages", json!({"text": text}));
        let mut out = Vec::new();
        limits.write_response(&mut out, &response);
        let chunks = lines(&out, DEFAULT_MAX_FRAME_BYTES);
        assert_eq!(chunks.len(), 5);
        let mut whole = Vec::new();
        for (i, chunk) in chunks.iter().enumerate() {
            assert_eq!(chunk["type"], "rpc_chunk");
            assert_eq!(chunk["index"], i);
            assert_eq!(chunk["count"], 5);
            assert_eq!(chunk["chunkId"], chunks[0]["chunkId"]);
            whole.extend(base64::engine::general_purpose::STANDARD.decode(chunk["data"].as_str().unwrap()).unwrap());
        }
        assert_eq!(chunks[0]["byteLength"], whole.len());
        let frame: Value = serde_json::from_slice(&whole).unwrap();
        assert_eq!(frame["data"]["text"].as_str().unwrap().len(), 1_100_000);
    }

    #[test]
    fn agent_end_keeps_the_newest_messages_that_fit() {
        let limits = FrameLimits::new(8 * 1024);
        let messages: Vec<AgentMessage> = (0..10)
            .map(|i| {
                serde_json::from_value(
                    json!({"role": "user", "content": format!("{i}{}", "m".repeat(2000)), "timestamp": 0}),
                )
                .unwrap()
            })
            .collect();
        let mut out = Vec::new();
        limits.write_agent_end(&mut out, &messages, false, false);
        let frames = lines(&out, 8 * 1024);
        assert_eq!(frames[0]["messageCount"], 10);
        assert_eq!(frames[0]["isTerminal"], false);
        assert_eq!(frames[0]["truncated"], true);
        let kept = frames[0]["messages"].as_array().unwrap();
        assert_eq!(kept.len(), 3);
        assert!(kept[2]["content"].as_str().unwrap().starts_with('9'));
    }
}
