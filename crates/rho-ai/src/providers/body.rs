//! A request's JSON body on its way out. A small body is serialized into one buffer; a large
//! one (a long conversation, a pasted file) is serialized while it is sent, a chunk at a time,
//! so the conversation is not held a second time as bytes. Its length is counted first, so the
//! request still carries a `Content-Length` (no chunked encoding for a server to refuse).

use std::io::{self, Write};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::error::ProviderError;

/// Bodies up to this size are sent as one buffer.
const STREAM_ABOVE: u64 = 1 << 20;
/// The size of a chunk of a streamed body.
const CHUNK: usize = 64 * 1024;
/// Chunks serialized ahead of the connection.
const CHUNKS_AHEAD: usize = 4;

/// A serialized body and its length in bytes.
pub(crate) struct JsonBody {
    pub body: reqwest::Body,
    pub len: u64,
}

impl JsonBody {
    /// `value` as a request body. A large one is serialized on a blocking thread while it is
    /// sent, and `value` is dropped as soon as its last chunk is written; when the request goes
    /// away first (cancelled, refused), serializing stops.
    pub fn new(value: Value) -> Result<Self, ProviderError> {
        // Most bodies fit: one pass into a buffer that gives up past the bound.
        let mut small = Capped(Vec::new());
        if serde_json::to_writer(&mut small, &value).is_ok() {
            let len = small.0.len() as u64;
            return Ok(Self { body: small.0.into(), len });
        }
        drop(small);
        let mut counter = Counter(0);
        serde_json::to_writer(&mut counter, &value).map_err(|e| ProviderError::Request(e.to_string()))?;
        let len = counter.0;
        let (tx, rx) = mpsc::channel::<io::Result<Bytes>>(CHUNKS_AHEAD);
        tokio::task::spawn_blocking(move || serialize_into(value, tx));
        let chunks = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|chunk| (chunk, rx)) });
        Ok(Self { body: reqwest::Body::wrap_stream(chunks), len })
    }
}

/// Writes `value` to `tx` in chunks, then drops it. A failure is sent as the stream's last item
/// (the request fails with it); a receiver that is gone stops the writing at the next chunk.
fn serialize_into(value: Value, tx: mpsc::Sender<io::Result<Bytes>>) -> io::Result<()> {
    let mut writer = Chunks { buf: Vec::with_capacity(CHUNK), tx };
    let written = serde_json::to_writer(&mut writer, &value).map_err(io::Error::from).and_then(|()| writer.send());
    drop(value);
    if let Err(e) = &written
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        let _ = writer.tx.blocking_send(Err(io::Error::new(e.kind(), e.to_string())));
    }
    written
}

/// A buffer that refuses to grow past [`STREAM_ABOVE`].
struct Capped(Vec<u8>);

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if (self.0.len() + buf.len()) as u64 > STREAM_ABOVE {
            return Err(io::Error::from(io::ErrorKind::FileTooLarge));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Counts what is written.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Cuts what is written into chunks for the connection; fails once the connection is gone.
struct Chunks {
    buf: Vec<u8>,
    tx: mpsc::Sender<io::Result<Bytes>>,
}

impl Chunks {
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        self.tx.blocking_send(Ok(Bytes::from(chunk))).map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

impl Write for Chunks {
    /// Takes at most what fills the chunk (a long string arrives in one write).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let taken = buf.len().min(CHUNK - self.buf.len());
        self.buf.extend_from_slice(&buf[..taken]);
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use futures::StreamExt;
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn a_small_body_is_one_buffer_with_its_length() {
        let value = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
        let expected = serde_json::to_vec(&value).unwrap();
        let body = JsonBody::new(value).unwrap();
        assert_eq!(body.body.as_bytes(), Some(expected.as_slice()));
        assert_eq!(body.len, expected.len() as u64);
    }

    #[tokio::test]
    async fn a_large_body_is_streamed_whole_with_its_length() {
        let text = "x\"y\n".repeat(500_000) + &"z".repeat(4 << 20);
        let value = json!({"messages": [{"role": "user", "content": text}]});
        let expected = serde_json::to_vec(&value).unwrap();
        let body = JsonBody::new(value).unwrap();
        assert!(body.body.as_bytes().is_none(), "streamed");
        assert_eq!(body.len, expected.len() as u64);
        let mut sent = Vec::new();
        let mut chunks = http_body_util::BodyDataStream::new(body.body);
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.unwrap();
            assert!(chunk.len() <= CHUNK, "chunks stay small");
            sent.extend_from_slice(&chunk);
        }
        assert_eq!(sent, expected);
    }

    #[test]
    fn a_body_no_one_reads_stops_being_serialized() {
        let (tx, mut rx) = mpsc::channel(CHUNKS_AHEAD);
        let writer = std::thread::spawn(move || serialize_into(json!({"content": "z".repeat(64 << 20)}), tx));
        assert!(rx.blocking_recv().unwrap().is_ok());
        drop(rx);
        let written = writer.join().unwrap();
        assert_eq!(written.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
    }
}
