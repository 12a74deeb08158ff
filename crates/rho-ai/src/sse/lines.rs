//! The response body regrouped into whole lines for the event decoder, and error JSON that a
//! server wrote into the body without SSE framing passed on as one `data:` event (see the
//! module docs of [`super`]).

use std::pin::Pin;

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};

/// A byte stream regrouped into whole lines (each ending in `\n`; the last one may not).
///
/// A line within one read is passed on without copying; a line that spans reads (a 16 MB
/// `data:` line in 16 KB reads) is gathered once, so the work is linear however the reads cut
/// the body.
pub(super) struct Lines<S> {
    bytes: S,
    ready: std::collections::VecDeque<Bytes>,
    partial: BytesMut,
    /// Lines outside SSE framing gathered so far: the start of a JSON payload written straight
    /// into the body (see the module docs).
    stray: BytesMut,
    done: bool,
}

/// The most stray text gathered while waiting for it to become whole JSON.
const MAX_STRAY: usize = 1024 * 1024;

impl<S> Lines<S> {
    pub(super) fn new(bytes: S) -> Self {
        Self {
            bytes,
            ready: std::collections::VecDeque::new(),
            partial: BytesMut::new(),
            stray: BytesMut::new(),
            done: false,
        }
    }

    /// Takes the whole lines out of `chunk`, keeping an unfinished one for later.
    fn take_lines(&mut self, mut chunk: Bytes) {
        while let Some(end) = memchr_newline(&chunk) {
            let line = chunk.split_to(end + 1);
            if self.partial.is_empty() {
                self.route(line);
            } else {
                self.partial.extend_from_slice(&line);
                // Taken whole, not split off: the line is then the only holder of its bytes,
                // and a long `data:` line becomes its event's data without a copy.
                let line = std::mem::take(&mut self.partial).freeze();
                self.route(line);
            }
        }
        if !chunk.is_empty() {
            self.partial.extend_from_slice(&chunk);
        }
    }

    /// Passes an SSE line on, or gathers a line that opens or continues JSON written without
    /// framing. An SSE line (a field, a comment, a blank line) ends a gathering that never
    /// became JSON, and is passed on.
    fn route(&mut self, line: Bytes) {
        let gathering = !self.stray.is_empty();
        if (!gathering && !opens_json(&line)) || (gathering && is_sse_line(&line)) {
            self.stray.clear();
            self.ready.push_back(line);
            return;
        }
        self.stray.extend_from_slice(&line);
        self.settle_stray(false);
    }

    /// Once the gathered text is whole JSON carrying an `error`, queues it as one `data:`
    /// event; other JSON, text that cannot become JSON, and too much text are dropped (as the
    /// SSE decoder would have dropped the lines).
    fn settle_stray(&mut self, at_end: bool) {
        match serde_json::from_slice::<serde_json::Value>(&self.stray) {
            Ok(value) => {
                self.stray.clear();
                if let Some(error) = error_payload(value) {
                    self.ready.push_back(Bytes::from(format!("data: {error}\n")));
                    self.ready.push_back(Bytes::from_static(b"\n"));
                }
            }
            Err(e) if e.is_eof() && !at_end && self.stray.len() <= MAX_STRAY => {}
            Err(_) => self.stray.clear(),
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == b'\n')
}

/// A line whose first visible character opens a JSON object or array: never an SSE field.
fn opens_json(line: &[u8]) -> bool {
    matches!(line.iter().find(|b| !b.is_ascii_whitespace()), Some(b'{' | b'['))
}

/// A blank line, a comment or one of the SSE fields.
fn is_sse_line(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.is_empty()
        || line.starts_with(b":")
        || [&b"data"[..], b"event", b"id", b"retry"]
            .iter()
            .any(|field| line.strip_prefix(*field).is_some_and(|rest| rest.is_empty() || rest.starts_with(b":")))
}

/// The error object of a stray payload: `{"error": …}`, or the first element of an array of
/// them (Google wraps errors in an array on its non-SSE streaming endpoint).
fn error_payload(value: serde_json::Value) -> Option<serde_json::Value> {
    let value = match value {
        serde_json::Value::Array(items) => items.into_iter().next()?,
        other => other,
    };
    value.get("error").is_some().then_some(value)
}

impl<S, E> Stream for Lines<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    type Item = Result<Bytes, E>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        loop {
            if let Some(line) = self.ready.pop_front() {
                return Poll::Ready(Some(Ok(line)));
            }
            if self.done {
                return Poll::Ready(None);
            }
            match self.bytes.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(chunk))) => self.take_lines(chunk),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => {
                    self.done = true;
                    if !self.partial.is_empty() {
                        let rest = std::mem::take(&mut self.partial).freeze();
                        self.route(rest);
                    }
                    if !self.stray.is_empty() {
                        self.settle_stray(true);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn lines_are_regrouped_whole_whatever_the_reads() {
        let reads = [&b"a\nb"[..], b"b\r", b"\n\nta", b"il"];
        let source = futures::stream::iter(reads.map(|r| Ok::<_, ()>(Bytes::from_static(r))));
        let lines: Vec<Bytes> = Lines::new(source).map(Result::unwrap).collect().await;
        assert_eq!(lines, [&b"a\n"[..], b"bb\r\n", b"\n", b"tail"]);
    }
}
