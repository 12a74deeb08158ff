//! A reply as a list of ready-made SSE events: what each wire renderer produces and the body
//! pump plays.
//!
//! Events are serialized once, up front, into `Bytes` (each one a complete SSE event with its
//! blank line). A flood is kept as a template instead of thousands of events: its per-delta
//! bytes are written straight into the outgoing buffer, so a flood costs no allocation per
//! delta and no memory proportional to its length.

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::Value;

/// How events are framed: SSE with `\n` (Anthropic, OpenAI) or `\r\n` (Google) line endings,
/// or each event's JSON alone, as one websocket message carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    Lf,
    Crlf,
    Message,
}

impl Framing {
    fn eol(self) -> &'static str {
        match self {
            Framing::Lf | Framing::Message => "\n",
            Framing::Crlf => "\r\n",
        }
    }
}

/// Where a flood template puts the delta text (inside a JSON string).
pub const DELTA_MARK: &str = "@@rho-mock-flood-delta@@";
/// Where a flood template puts the sequence number (a JSON string placeholder, quotes and all,
/// replaced by a bare integer).
pub const SEQ_MARK: &str = "@@rho-mock-flood-seq@@";

#[derive(Debug)]
pub enum Piece {
    Event(Bytes),
    Flood(FloodTemplate),
}

/// A whole answer body, plus the event that replaces the rest when the turn is `malformed`.
#[derive(Debug)]
pub struct Plan {
    pub pieces: Vec<Piece>,
    pub malformed: Bytes,
}

/// Builds a [`Plan`] event by event.
#[derive(Debug)]
pub struct PlanBuilder {
    framing: Framing,
    pieces: Vec<Piece>,
}

impl PlanBuilder {
    pub fn new(framing: Framing) -> Self {
        Self { framing, pieces: Vec::new() }
    }

    /// An event with a JSON payload and, when `name` is given, an `event:` line.
    pub fn event(&mut self, name: Option<&str>, data: &Value) {
        let bytes = self.frame(name, &data.to_string());
        self.pieces.push(Piece::Event(bytes));
    }

    /// A frame already encoded (Bedrock's binary event stream).
    pub fn bytes(&mut self, frame: Bytes) {
        self.pieces.push(Piece::Event(frame));
    }

    /// An event whose data is sent as is (`[DONE]`).
    pub fn raw(&mut self, name: Option<&str>, data: &str) {
        let bytes = self.frame(name, data);
        self.pieces.push(Piece::Event(bytes));
    }

    /// `data` written into the body as is, pretty-printed over several lines and without SSE
    /// framing (how Gemini reports an error once its stream has started).
    pub fn unframed(&mut self, data: &Value) {
        let eol = self.framing.eol();
        let text = serde_json::to_string_pretty(data).unwrap_or_else(|_| data.to_string());
        let mut out = text.replace('\n', eol);
        out.push_str(eol);
        self.pieces.push(Piece::Event(Bytes::from(out)));
    }

    pub fn flood(&mut self, template: FloodTemplate) {
        if template.count > 0 {
            self.pieces.push(Piece::Flood(template));
        }
    }

    /// A flood of `count` deltas of `size` bytes: `event` is a delta event whose text is
    /// [`DELTA_MARK`] (and sequence number [`SEQ_MARK`], counted from `first_seq`); `last`,
    /// when given, is the shape of the final delta.
    pub fn flood_template(
        &self,
        name: Option<&str>,
        event: &Value,
        last: Option<&Value>,
        flood: (usize, usize),
        first_seq: u64,
    ) -> FloodTemplate {
        let (count, size) = flood;
        let segments = |v: &Value| split_marks(&self.frame(name, &v.to_string()));
        FloodTemplate {
            count,
            payload: flood_payload(size),
            first_seq,
            normal: segments(event),
            last: last.map(segments),
        }
    }

    /// An event whose data is cut-off JSON, named like the stream's own events.
    pub fn malformed_event(&self, name: Option<&str>) -> Bytes {
        self.frame(name, r#"{"type": "mock-llm malformed event", "delta": {"te"#)
    }

    pub fn finish(self, malformed: Bytes) -> Plan {
        Plan { pieces: self.pieces, malformed }
    }

    fn frame(&self, name: Option<&str>, data: &str) -> Bytes {
        if self.framing == Framing::Message {
            return Bytes::copy_from_slice(data.as_bytes());
        }
        let eol = self.framing.eol();
        let mut out = String::with_capacity(data.len() + 32);
        if let Some(name) = name {
            out.push_str("event: ");
            out.push_str(name);
            out.push_str(eol);
        }
        out.push_str("data: ");
        out.push_str(data);
        out.push_str(eol);
        out.push_str(eol);
        Bytes::from(out)
    }
}

/// The text of every flood delta: `size` ASCII letters.
pub fn flood_payload(size: usize) -> Bytes {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
    ALPHABET.iter().copied().cycle().take(size).collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(Bytes),
    Seq,
    Delta,
}

/// One flood: `count` events written from a template.
#[derive(Debug)]
pub struct FloodTemplate {
    pub count: usize,
    payload: Bytes,
    first_seq: u64,
    normal: Vec<Segment>,
    last: Option<Vec<Segment>>,
}

impl FloodTemplate {
    /// Appends delta `i` (0-based) to `out`.
    pub fn write(&self, i: usize, out: &mut BytesMut) {
        let segments = match &self.last {
            Some(last) if i + 1 == self.count => last,
            _ => &self.normal,
        };
        for segment in segments {
            match segment {
                Segment::Literal(b) => out.put_slice(b),
                Segment::Delta => out.put_slice(&self.payload),
                Segment::Seq => {
                    let _ = std::fmt::Write::write_fmt(out, format_args!("{}", self.first_seq + i as u64));
                }
            }
        }
    }

    /// The size of one delta event, for sizing buffers.
    pub fn approx_event_len(&self) -> usize {
        self.normal
            .iter()
            .map(|s| match s {
                Segment::Literal(b) => b.len(),
                Segment::Seq => 8,
                Segment::Delta => self.payload.len(),
            })
            .sum()
    }
}

fn split_marks(framed: &Bytes) -> Vec<Segment> {
    let seq_mark = format!("\"{SEQ_MARK}\"");
    let text = framed.as_ref();
    let mut segments = Vec::new();
    let mut start = 0;
    loop {
        let rest = text.get(start..).unwrap_or_default();
        let seq = find(rest, seq_mark.as_bytes()).map(|p| (p, seq_mark.len(), Segment::Seq));
        let delta = find(rest, DELTA_MARK.as_bytes()).map(|p| (p, DELTA_MARK.len(), Segment::Delta));
        let next = match (seq, delta) {
            (Some(a), Some(b)) => Some(if a.0 < b.0 { a } else { b }),
            (a, b) => a.or(b),
        };
        let Some((pos, len, segment)) = next else {
            if start < text.len() {
                segments.push(Segment::Literal(framed.slice(start..)));
            }
            return segments;
        };
        if pos > 0 {
            segments.push(Segment::Literal(framed.slice(start..start + pos)));
        }
        segments.push(segment);
        start += pos + len;
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_events_with_the_stream_line_ending() {
        let mut lf = PlanBuilder::new(Framing::Lf);
        lf.event(Some("ping"), &json!({"type": "ping"}));
        lf.raw(None, "[DONE]");
        let plan = lf.finish(Bytes::new());
        let bodies: Vec<&[u8]> = plan
            .pieces
            .iter()
            .map(|p| match p {
                Piece::Event(b) => b.as_ref(),
                Piece::Flood(_) => unreachable!(),
            })
            .collect();
        assert_eq!(bodies[0], b"event: ping\ndata: {\"type\":\"ping\"}\n\n");
        assert_eq!(bodies[1], b"data: [DONE]\n\n");
        let mut crlf = PlanBuilder::new(Framing::Crlf);
        crlf.unframed(&json!({"error": {"code": 429}}));
        let Some(Piece::Event(unframed)) = crlf.pieces.pop() else { unreachable!() };
        assert_eq!(unframed.as_ref(), b"{\r\n  \"error\": {\r\n    \"code\": 429\r\n  }\r\n}\r\n");
        let bad = crlf.malformed_event(None);
        assert!(bad.ends_with(b"\r\n\r\n"));
        assert!(serde_json::from_slice::<Value>(&bad[6..bad.len() - 4]).is_err());
    }

    #[test]
    fn flood_template_writes_sequence_numbers_payload_and_last_shape() {
        let b = PlanBuilder::new(Framing::Lf);
        let event = json!({"seq": SEQ_MARK, "delta": DELTA_MARK});
        let last = json!({"seq": SEQ_MARK, "delta": DELTA_MARK, "end": true});
        let t = b.flood_template(Some("d"), &event, Some(&last), (3, 5), 7);
        let mut out = BytesMut::new();
        for i in 0..3 {
            t.write(i, &mut out);
        }
        let text = String::from_utf8(out.to_vec()).unwrap();
        assert_eq!(
            text,
            "event: d\ndata: {\"seq\":7,\"delta\":\"abcde\"}\n\n\
             event: d\ndata: {\"seq\":8,\"delta\":\"abcde\"}\n\n\
             event: d\ndata: {\"seq\":9,\"delta\":\"abcde\",\"end\":true}\n\n"
        );
    }

    #[test]
    fn payload_is_ascii_of_the_asked_size() {
        assert_eq!(flood_payload(30).len(), 30);
        assert!(flood_payload(30).is_ascii());
        assert!(flood_payload(0).is_empty());
    }
}
