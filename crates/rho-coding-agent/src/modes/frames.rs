//! One frame as stdout lines, never longer than the frame bound (docs/decisions.md D17), with what
//! to do when it does not fit:
//!
//! - under protocol 1 (every host), the frame degrades: `agent_end` keeps the newest messages
//!   that fit plus `messageCount` and `truncated: true`; any other frame has its largest
//!   strings replaced by a notice ("omit and mark"); a response that still cannot fit becomes
//!   an error saying so, and one whose id alone is too long loses the id;
//! - under protocol 2 (negotiated with omp's `negotiate_protocol`), a frame up to 64 MiB is
//!   sent whole, split into `rpc_chunk` lines of base64 the host reassembles; only larger ones
//!   degrade.
//!
//! Nothing is ever cut mid-JSON.

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

/// How frames are bounded: the line limit and the negotiated protocol.
#[derive(Debug, Clone, Copy)]
pub struct FrameLimits {
    pub max_frame: usize,
    /// Protocol 2: frames over the bound are chunked instead of degraded.
    pub chunked: bool,
}

impl FrameLimits {
    pub fn new(max_frame: usize) -> Self {
        Self { max_frame: max_frame.max(256), chunked: false }
    }

    /// Protocol 2 can be offered only with omp's own bound, which its client checks.
    pub fn offers_chunking(&self) -> bool {
        self.max_frame == DEFAULT_MAX_FRAME_BYTES
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

    /// Appends a response: whole, chunked, degraded, or as an error saying it was too large.
    pub fn write_response(&self, out: &mut Vec<u8>, response: &RpcResponse) {
        if self.write_whole(out, response) {
            return;
        }
        if write_shrunk(out, response, self.max_frame) {
            out.push(b'\n');
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
    pub fn write_agent_end(&self, out: &mut Vec<u8>, messages: &[AgentMessage], is_terminal: bool) {
        let whole = AgentEnd { messages, is_terminal, message_count: None, truncated: None };
        if self.write_whole(out, &whole) {
            return;
        }
        let envelope =
            r#"{"type":"agent_end","messages":[],"isTerminal":false,"messageCount":,"truncated":true}"#.len() + 20;
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
    fn a_response_degrades_before_it_fails() {
        let limits = FrameLimits::new(4096);
        let response = RpcResponse::with_data(Some(json!("r1")), "get_state", json!({"sessionName": "n".repeat(5000)}));
        let mut out = Vec::new();
        limits.write_response(&mut out, &response);
        let frames = lines(&out, 4096);
        assert_eq!(frames[0]["success"], true);
        assert_eq!(frames[0]["data"]["sessionName"], "[5000 bytes omitted: the frame would exceed 4096 bytes]");
    }

    #[test]
    fn a_response_whose_id_is_too_long_is_answered_without_it() {
        let limits = FrameLimits::new(4096);
        let response = RpcResponse::ok(Some(json!("i".repeat(10_000))), "get_state");
        let mut out = Vec::new();
        limits.write_response(&mut out, &response);
        let frames = lines(&out, 4096);
        assert_eq!(frames[0]["id"], "[10000 bytes omitted: the frame would exceed 4096 bytes]");
        assert_eq!(frames[0]["command"], "get_state");
    }

    #[test]
    fn protocol_two_chunks_what_does_not_fit() {
        let limits = FrameLimits { max_frame: DEFAULT_MAX_FRAME_BYTES, chunked: true };
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
        limits.write_agent_end(&mut out, &messages, false);
        let frames = lines(&out, 8 * 1024);
        assert_eq!(frames[0]["messageCount"], 10);
        assert_eq!(frames[0]["isTerminal"], false);
        assert_eq!(frames[0]["truncated"], true);
        let kept = frames[0]["messages"].as_array().unwrap();
        assert_eq!(kept.len(), 3);
        assert!(kept[2]["content"].as_str().unwrap().starts_with('9'));
    }
}
