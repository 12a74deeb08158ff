//! Plays a [`Plan`] as a streaming HTTP body: one body frame per SSE event (so each event is
//! flushed on its own when the turn paces them), with the turn's faults applied on the way.
//!
//! - `chunkDelayMs` sleeps between two events.
//! - `disconnectAfter: n` sends n events, lets the server flush them, then fails the body,
//!   which makes the server drop the connection without the terminating chunk.
//! - `malformed` sends its bad event in place of event number n (or at the end, when the plan
//!   is shorter) and ends the body there.
//! - A flood with no delay is written in batches of about [`BATCH_BYTES`], so the server does
//!   one write per batch rather than one per delta.
//!
//! Server shutdown ends any pending sleep and drops the connection.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::Stream;
use tokio::sync::watch;

use crate::plan::{FloodTemplate, Piece, Plan};

/// The target size of one body frame during a flood.
pub const BATCH_BYTES: usize = 32 * 1024;

/// How long a `disconnectAfter` body stays open after its last event so the server flushes it.
const FLUSH_GRACE: Duration = Duration::from_millis(5);

/// How a turn's faults and pacing apply to its plan.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pacing {
    pub chunk_delay: Option<Duration>,
    pub disconnect_after: Option<usize>,
    pub malformed_after: Option<usize>,
}

type Frame = Result<Bytes, std::io::Error>;

/// The body stream for `plan`.
pub fn body_stream(
    plan: Plan,
    pacing: Pacing,
    shutdown: watch::Receiver<bool>,
) -> impl Stream<Item = Frame> + Send + 'static {
    let pump = Pump {
        pieces: plan.pieces.into_iter(),
        malformed: Some(plan.malformed),
        flood: None,
        emitted: 0,
        pacing,
        shutdown,
        finished: false,
    };
    futures::stream::unfold(pump, |mut pump| async move {
        let frame = pump.next().await?;
        Some((frame, pump))
    })
}

struct Pump {
    pieces: std::vec::IntoIter<Piece>,
    malformed: Option<Bytes>,
    /// The flood being written and the index of its next delta.
    flood: Option<(FloodTemplate, usize)>,
    emitted: usize,
    pacing: Pacing,
    shutdown: watch::Receiver<bool>,
    finished: bool,
}

impl Pump {
    async fn next(&mut self) -> Option<Frame> {
        if self.finished {
            return None;
        }
        if self.pacing.disconnect_after.is_some_and(|n| self.emitted >= n) {
            return Some(self.disconnect().await);
        }
        if self.pacing.malformed_after.is_some_and(|n| self.emitted >= n) {
            return self.send_malformed();
        }
        if self.emitted > 0
            && let Some(delay) = self.pacing.chunk_delay
            && !self.sleep(delay).await
        {
            self.finished = true;
            return Some(Err(aborted("mock-llm: server shut down")));
        }
        loop {
            if let Some(frame) = self.next_flood_frame() {
                return Some(Ok(frame));
            }
            match self.pieces.next() {
                Some(Piece::Event(bytes)) => {
                    self.emitted += 1;
                    return Some(Ok(bytes));
                }
                Some(Piece::Flood(template)) => self.flood = Some((template, 0)),
                None => break,
            }
        }
        // The plan ended before the malformed event's place: it goes last.
        if self.pacing.malformed_after.is_some() {
            return self.send_malformed();
        }
        self.finished = true;
        None
    }

    /// The next frame of the current flood: one delta when paced, else a batch that stops
    /// short of any fault's place.
    fn next_flood_frame(&mut self) -> Option<Bytes> {
        let (template, next) = self.flood.as_mut()?;
        if *next >= template.count {
            self.flood = None;
            return None;
        }
        let mut budget = template.count - *next;
        if self.pacing.chunk_delay.is_some() {
            budget = 1;
        }
        for limit in [self.pacing.disconnect_after, self.pacing.malformed_after].into_iter().flatten() {
            budget = budget.min(limit.saturating_sub(self.emitted).max(1));
        }
        let per_event = template.approx_event_len().max(1);
        let mut out = BytesMut::with_capacity(BATCH_BYTES.max(per_event) + per_event);
        let mut written = 0;
        while written < budget && (written == 0 || out.len() + per_event <= BATCH_BYTES) {
            template.write(*next, &mut out);
            *next += 1;
            written += 1;
        }
        self.emitted += written;
        Some(out.freeze())
    }

    fn send_malformed(&mut self) -> Option<Frame> {
        self.finished = true;
        self.malformed.take().map(Ok)
    }

    /// Lets the server flush what was sent, then fails the body. The server drops a failed
    /// body's connection without flushing, so the pump first waits (pending) long enough for
    /// the buffered events to reach the socket; a client that has stopped reading may still
    /// miss the last of them.
    async fn disconnect(&mut self) -> Frame {
        self.finished = true;
        tokio::task::yield_now().await;
        tokio::time::sleep(FLUSH_GRACE).await;
        Err(aborted("mock-llm: disconnectAfter"))
    }

    /// Sleeps for `delay`; false when the server shut down first.
    async fn sleep(&mut self, delay: Duration) -> bool {
        tokio::select! {
            () = tokio::time::sleep(delay) => true,
            _ = self.shutdown.wait_for(|down| *down) => false,
        }
    }
}

fn aborted(message: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::ConnectionAborted, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{DELTA_MARK, Framing, PlanBuilder};
    use futures::StreamExt;
    use serde_json::json;

    fn plan(events: usize, flood: Option<(usize, usize)>) -> Plan {
        let mut b = PlanBuilder::new(Framing::Lf);
        for i in 0..events {
            b.event(None, &json!({"i": i}));
        }
        if let Some(flood) = flood {
            let t = b.flood_template(None, &json!({"d": DELTA_MARK}), None, flood, 0);
            b.flood(t);
            b.raw(None, "[DONE]");
        }
        let bad = b.malformed_event(None);
        b.finish(bad)
    }

    async fn play(plan: Plan, pacing: Pacing) -> (String, bool) {
        let (_tx, rx) = watch::channel(false);
        let frames: Vec<Frame> = body_stream(plan, pacing, rx).collect().await;
        let failed = frames.iter().any(Result::is_err);
        let text = frames.into_iter().filter_map(Result::ok).map(|b| String::from_utf8(b.to_vec()).unwrap()).collect();
        (text, failed)
    }

    #[tokio::test]
    async fn plays_every_event_then_ends() {
        let (text, failed) = play(plan(3, None), Pacing::default()).await;
        assert_eq!(text, "data: {\"i\":0}\n\ndata: {\"i\":1}\n\ndata: {\"i\":2}\n\n");
        assert!(!failed);
    }

    #[tokio::test]
    async fn disconnect_sends_n_events_then_fails() {
        let pacing = Pacing { disconnect_after: Some(2), ..Pacing::default() };
        let (text, failed) = play(plan(3, None), pacing).await;
        assert_eq!(text, "data: {\"i\":0}\n\ndata: {\"i\":1}\n\n");
        assert!(failed);
    }

    #[tokio::test]
    async fn disconnect_counts_flood_deltas_one_by_one() {
        let pacing = Pacing { disconnect_after: Some(1 + 10), ..Pacing::default() };
        let (text, failed) = play(plan(1, Some((100, 4))), pacing).await;
        assert_eq!(text.matches("abcd").count(), 10);
        assert!(failed);
    }

    #[tokio::test]
    async fn malformed_replaces_the_rest_or_comes_last() {
        let pacing = Pacing { malformed_after: Some(1), ..Pacing::default() };
        let (text, failed) = play(plan(3, None), pacing).await;
        assert!(text.starts_with("data: {\"i\":0}\n\ndata: {\"type\": \"mock-llm malformed"));
        assert!(!text.contains("\"i\":1"));
        assert!(!failed);
        let late = Pacing { malformed_after: Some(10), ..Pacing::default() };
        let (text, _) = play(plan(2, None), late).await;
        assert!(text.contains("\"i\":1") && text.ends_with("{\"te\n\n"));
    }

    #[tokio::test]
    async fn flood_is_batched_and_complete() {
        let (_tx, rx) = watch::channel(false);
        let frames: Vec<Frame> = body_stream(plan(0, Some((5000, 20))), Pacing::default(), rx).collect().await;
        assert!(frames.len() < 100, "{} frames", frames.len());
        let text: String = frames.into_iter().map(|f| String::from_utf8(f.unwrap().to_vec()).unwrap()).collect();
        assert_eq!(text.matches("abcdefghijklmnopqrst\"").count(), 5000);
        assert!(text.ends_with("data: [DONE]\n\n"));
    }

    #[tokio::test]
    async fn shutdown_ends_a_paced_stream() {
        let (tx, rx) = watch::channel(false);
        let pacing = Pacing { chunk_delay: Some(Duration::from_secs(3600)), ..Pacing::default() };
        let mut stream = Box::pin(body_stream(plan(2, None), pacing, rx));
        assert!(stream.next().await.unwrap().is_ok());
        tx.send(true).unwrap();
        assert!(stream.next().await.unwrap().is_err());
        assert!(stream.next().await.is_none());
    }
}
