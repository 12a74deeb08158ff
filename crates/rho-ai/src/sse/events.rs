//! Whole lines decoded as server-sent events, by the HTML standard's rules: `data` lines
//! joined with newlines, `event` naming the type (`message` when unnamed), `id` kept from
//! event to event, comments and unknown fields ignored, a blank line dispatching, CR, LF and
//! CRLF all ending a line, a leading byte-order mark skipped, and an unterminated last line
//! dropped.
//!
//! An event's data is built from its lines without copying them again: an event of one
//! `data:` line (a whole reply in one event) takes that line's bytes as its data, so the event
//! costs its size once, not once per buffer it passes through.

use std::collections::VecDeque;
use std::pin::Pin;
use std::str::Utf8Error;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::{Stream, StreamExt};

/// One event: its type, its data, and the last event id seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    pub event: String,
    pub data: String,
    pub id: String,
}

/// Why the events stopped: the body was not UTF-8, or it could not be read.
#[derive(Debug)]
pub(super) enum DecodeError<E> {
    Utf8(Utf8Error),
    Transport(E),
}

/// The events of a stream of whole lines.
pub(super) struct Events<S> {
    lines: S,
    started: bool,
    /// The event being built: its type and its data lines so far.
    event: String,
    data: Option<String>,
    last_id: String,
    ready: VecDeque<Event>,
}

impl<S> Events<S> {
    pub(super) fn new(lines: S) -> Self {
        Self { lines, started: false, event: String::new(), data: None, last_id: String::new(), ready: VecDeque::new() }
    }

    /// Takes one line as the line source cut it (ending in `\n`, or unterminated at the end).
    fn take_line(&mut self, line: Bytes) -> Result<(), Utf8Error> {
        let Some(end) = content_end(&line) else {
            return Ok(());
        };
        let mut start = 0;
        if !self.started {
            self.started = true;
            if line.starts_with("\u{feff}".as_bytes()) {
                start = 3;
            }
        }
        let content = &line[start..end];
        if !content.contains(&b'\r') && self.data.is_none() && content.starts_with(b"data:") {
            // The common case: the event's first data line. A line that is the only holder of
            // its bytes (one gathered across reads) becomes the data without a copy; a line
            // within a read shares the read's bytes, so its value is copied out.
            let value_start = start + 5 + usize::from(content.get(5) == Some(&b' '));
            let bytes = if line.is_unique() {
                let mut bytes = Vec::from(line);
                bytes.truncate(end);
                bytes.drain(..value_start);
                bytes
            } else {
                line[value_start..end].to_vec()
            };
            let data = String::from_utf8(bytes).map_err(|e| e.utf8_error())?;
            self.data = Some(data);
            return Ok(());
        }
        // A lone CR ends a line too.
        for part in content.split(|b| *b == b'\r') {
            self.field(std::str::from_utf8(part)?);
        }
        Ok(())
    }

    /// One line's field, comment or blank.
    fn field(&mut self, line: &str) {
        if line.is_empty() {
            self.dispatch();
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match name {
            "event" => value.clone_into(&mut self.event),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "id" if !value.contains('\0') => value.clone_into(&mut self.last_id),
            _ => {}
        }
    }

    /// A blank line: the event built so far, when it has data.
    fn dispatch(&mut self) {
        let event = std::mem::take(&mut self.event);
        if let Some(data) = self.data.take() {
            let event = if event.is_empty() { "message".to_owned() } else { event };
            self.ready.push_back(Event { event, data, id: self.last_id.clone() });
        }
    }
}

/// Where a line's content ends (before its CRLF, LF or CR); `None` for an unterminated line.
fn content_end(line: &[u8]) -> Option<usize> {
    match line {
        [.., b'\r', b'\n'] => Some(line.len() - 2),
        [.., b'\n'] | [.., b'\r'] => Some(line.len() - 1),
        _ => None,
    }
}

impl<S, E> Stream for Events<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    type Item = Result<Event, DecodeError<E>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            match self.lines.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(DecodeError::Transport(e)))),
                Poll::Ready(Some(Ok(line))) => {
                    if let Err(e) = self.take_line(line) {
                        return Poll::Ready(Some(Err(DecodeError::Utf8(e))));
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

    async fn events(lines: &[&'static [u8]]) -> Vec<Event> {
        let source = futures::stream::iter(lines.iter().map(|l| Ok::<_, ()>(Bytes::from_static(l))));
        Events::new(source).map(Result::unwrap).collect().await
    }

    fn event(event: &str, data: &str, id: &str) -> Event {
        Event { event: event.into(), data: data.into(), id: id.into() }
    }

    #[tokio::test]
    async fn fields_by_the_standards_rules() {
        let got = events(&[
            b"\xef\xbb\xbfdata: first\n",
            b"\n",
            b"event:named\n",
            b"id: 7\n",
            b"data\n",
            b"data:  two spaces\n",
            b"retry: 100\n",
            b": a comment\n",
            b"unknown: field\n",
            b"\n",
            b"event: no-data\n",
            b"\n",
            b"data: after\r\n",
            b"\r\n",
            b"data: a\rdata: b\r\rdata: c\n",
            b"\n",
            b"data: unterminated",
        ])
        .await;
        assert_eq!(
            got,
            [
                event("message", "first", ""),
                event("named", "\n two spaces", "7"),
                event("message", "after", "7"),
                event("message", "a\nb", "7"),
                event("message", "c", "7"),
            ]
        );
    }

    #[tokio::test]
    async fn a_body_that_is_not_utf8_is_an_error() {
        let source = futures::stream::iter([Ok::<_, ()>(Bytes::from_static(b"data: \xff\n"))]);
        let mut events = Events::new(source);
        assert!(matches!(events.next().await, Some(Err(DecodeError::Utf8(_)))));
    }

    #[test]
    fn a_single_data_line_becomes_the_data_without_a_copy() {
        let line = Bytes::from(b"data: payload\n".to_vec());
        let address = line.as_ptr() as usize;
        let mut events = Events::new(futures::stream::empty::<Result<Bytes, ()>>());
        events.take_line(line).unwrap();
        let data = events.data.as_ref().unwrap();
        assert_eq!(data, "payload");
        assert_eq!(data.as_ptr() as usize, address, "the line's own allocation");
    }
}
