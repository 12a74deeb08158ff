//! The one stdout writer: a queue every producer pushes whole frames into, and one thread that
//! owns stdout and writes what is queued, flushing after each batch.
//!
//! Frames that do not depend on the streamed message are encoded by the producer as they are
//! queued, so the queue holds bounded lines, never whole messages (see `encoder`). The others
//! (the streamed message's start and steps, tool progress) wait as events.
//!
//! Back-pressure (docs/decisions.md D15): while the host reads slower than the model streams, a
//! text, thinking or tool-argument delta pushed behind a queued delta of the same block is merged
//! into it (concatenating what a host receives still gives exactly the model's text), and a
//! `tool_execution_update` behind a queued one of the same call replaces it (each carries the whole
//! result so far). Boundary events are never merged or dropped, and nothing is reordered. When the
//! host stops reading altogether, the queue raises the session's [`Backpressure`] once it holds
//! [`BUDGET`] bytes, and runs stop taking from the model until the writer has caught up: memory
//! stays flat however long the reply.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use rho_agent::{AgentEvent, Backpressure};

use super::encoder::{FrameEncoder, FrameLimits, OutItem, encode_stateless};
use super::frames::UpdateShape;
use crate::agent_session::{AgentSessionEvent, SessionEventSink};

/// A merged delta stops growing past this size, so one frame never carries an unbounded delta.
const MERGE_LIMIT: usize = 64 * 1024;

/// Queued bytes past which producers are asked to wait.
pub const BUDGET: usize = 4 * 1024 * 1024;

/// Encoded bytes are handed to the OS in chunks of about this size within a batch.
const WRITE_CHUNK: usize = 256 * 1024;

struct State {
    items: VecDeque<OutItem>,
    /// About how many bytes the queued items will write.
    bytes: usize,
    limits: FrameLimits,
    closed: bool,
}

/// Frames waiting for the writer.
pub struct OutQueue {
    state: Mutex<State>,
    ready: Condvar,
    backpressure: Arc<Backpressure>,
}

impl OutQueue {
    pub fn new(limits: FrameLimits) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State { items: VecDeque::new(), bytes: 0, limits, closed: false }),
            ready: Condvar::new(),
            backpressure: Arc::default(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How frames are bounded now.
    pub fn limits(&self) -> FrameLimits {
        self.lock().limits
    }

    /// Protocol 2 from the next frame on: frames over omp's bound are chunked, and streaming
    /// updates take `updates`' shape.
    pub fn negotiate(&self, updates: UpdateShape) {
        let mut state = self.lock();
        state.limits = state.limits.negotiated().with_updates(updates);
    }

    /// Queues a frame. Ignored once the queue is closed.
    pub fn push(&self, item: OutItem) {
        let item = if item.needs_stream_state() { item } else { encode_stateless(&self.limits(), item) };
        let size = queued_size(&item);
        let mut state = self.lock();
        if state.closed {
            return;
        }
        state.bytes += size;
        if state.bytes > BUDGET {
            self.backpressure.set(true);
        }
        if let Some(back) = state.items.back_mut()
            && absorb(back, &item)
        {
            return;
        }
        state.items.push_back(item);
        drop(state);
        self.ready.notify_one();
    }

    pub fn push_event(&self, event: AgentSessionEvent) {
        self.push(OutItem::Event(event));
    }

    /// No more frames will be accepted; the writer finishes what is queued and stops.
    pub fn close(&self) {
        self.lock().closed = true;
        self.backpressure.set(false);
        self.ready.notify_all();
    }

    /// Waits for frames; `None` once the queue is closed and empty.
    pub(crate) fn take_batch(&self) -> Option<(VecDeque<OutItem>, FrameLimits)> {
        let mut state = self.lock();
        loop {
            if !state.items.is_empty() {
                state.bytes = 0;
                self.backpressure.set(false);
                return Some((std::mem::take(&mut state.items), state.limits));
            }
            if state.closed {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl SessionEventSink for OutQueue {
    fn emit(&self, event: AgentSessionEvent) {
        self.push_event(event);
    }

    fn backpressure(&self) -> Option<Arc<Backpressure>> {
        Some(self.backpressure.clone())
    }
}

/// About what an item adds to the queue.
fn queued_size(item: &OutItem) -> usize {
    match item {
        OutItem::Lines { bytes, .. } | OutItem::Raw(bytes) => bytes.len(),
        OutItem::Event(AgentSessionEvent::Agent(AgentEvent::MessageUpdate { event })) => {
            64 + event.delta().map_or(0, str::len)
        }
        _ => 256,
    }
}

/// Merges `next` into `back` when that loses nothing (see the module docs).
fn absorb(back: &mut OutItem, next: &OutItem) -> bool {
    let (OutItem::Event(AgentSessionEvent::Agent(back)), OutItem::Event(AgentSessionEvent::Agent(next))) = (back, next)
    else {
        return false;
    };
    match (back, next) {
        (AgentEvent::MessageUpdate { event: queued }, AgentEvent::MessageUpdate { event: incoming }) => {
            let fits = queued.delta().map_or(0, str::len) + incoming.delta().map_or(0, str::len) <= MERGE_LIMIT;
            fits && queued.merge_delta(incoming)
        }
        (
            AgentEvent::ToolExecutionUpdate { tool_call_id: queued_id, partial_result: queued, .. },
            AgentEvent::ToolExecutionUpdate { tool_call_id: incoming_id, partial_result: incoming, .. },
        ) if queued_id == incoming_id => {
            queued.clone_from(incoming);
            true
        }
        _ => false,
    }
}

/// Starts the writer thread. It ends when the queue is closed and drained, or when `out` fails
/// (the host closed its end); then the queue is closed too.
pub fn spawn_writer<W: Write + Send + 'static>(
    queue: Arc<OutQueue>,
    mut out: W,
) -> io::Result<JoinHandle<io::Result<()>>> {
    std::thread::Builder::new().name("rho-stdout".into()).spawn(move || {
        let result = write_loop(&queue, &mut out);
        queue.close();
        result
    })
}

fn write_loop<W: Write>(queue: &OutQueue, out: &mut W) -> io::Result<()> {
    let mut encoder = FrameEncoder::new(queue.limits());
    let mut buf = Vec::with_capacity(WRITE_CHUNK);
    while let Some((batch, limits)) = queue.take_batch() {
        encoder.set_limits(limits);
        for item in batch {
            encoder.encode(item, &mut buf);
            if buf.len() >= WRITE_CHUNK {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
        out.write_all(&buf)?;
        buf.clear();
        if buf.capacity() > 4 * WRITE_CHUNK {
            buf.shrink_to(WRITE_CHUNK);
        }
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_ai::event::AssistantMessageEvent;
    use rho_types::AgentMessage;
    use rho_types::AgentToolResult;

    fn delta(index: usize, text: &str) -> OutItem {
        OutItem::Event(AgentSessionEvent::Agent(AgentEvent::MessageUpdate {
            event: AssistantMessageEvent::TextDelta { content_index: index, delta: text.into() },
        }))
    }

    fn update(id: &str, text: &str) -> OutItem {
        OutItem::Event(AgentSessionEvent::Agent(AgentEvent::ToolExecutionUpdate {
            tool_call_id: id.into(),
            tool_name: "bash".into(),
            args: Default::default(),
            partial_result: AgentToolResult::text(text),
        }))
    }

    fn queue() -> Arc<OutQueue> {
        OutQueue::new(FrameLimits::new(crate::modes::encoder::DEFAULT_MAX_FRAME_BYTES))
    }

    fn describe(items: &VecDeque<OutItem>) -> Vec<String> {
        items
            .iter()
            .map(|item| match item {
                OutItem::Event(AgentSessionEvent::Agent(AgentEvent::MessageUpdate { event })) => {
                    format!("{}:{}", event.content_index().unwrap_or(0), event.delta().unwrap_or(""))
                }
                OutItem::Event(AgentSessionEvent::Agent(AgentEvent::ToolExecutionUpdate {
                    tool_call_id,
                    partial_result,
                    ..
                })) => format!("{tool_call_id}={}", partial_result.text_content()),
                OutItem::Lines { bytes, .. } => {
                    let frame: serde_json::Value = serde_json::from_slice(bytes).unwrap();
                    frame["type"].as_str().unwrap().to_owned()
                }
                _ => "other".into(),
            })
            .collect()
    }

    #[test]
    fn queued_deltas_of_one_block_merge_and_nothing_else_does() {
        let queue = queue();
        for item in [delta(0, "a"), delta(0, "b"), delta(1, "c"), delta(1, "d")] {
            queue.push(item);
        }
        queue.push(OutItem::Event(AgentSessionEvent::Agent(AgentEvent::TurnStart)));
        queue.push(delta(1, "e"));
        queue.push(update("t1", "one"));
        queue.push(update("t1", "one two"));
        queue.push(update("t2", "x"));
        let (batch, _) = queue.take_batch().unwrap();
        assert_eq!(describe(&batch), ["0:ab", "1:cd", "turn_start", "1:e", "t1=one two", "t2=x"]);
    }

    #[test]
    fn merged_deltas_stop_growing_at_the_limit() {
        let queue = queue();
        let chunk = "z".repeat(MERGE_LIMIT / 2 + 1);
        for _ in 0..3 {
            queue.push(delta(0, &chunk));
        }
        assert_eq!(queue.take_batch().unwrap().0.len(), 3);
    }

    #[test]
    fn a_closed_queue_drains_then_ends() {
        let queue = queue();
        queue.push(delta(0, "a"));
        queue.close();
        queue.push(delta(0, "ignored"));
        assert_eq!(describe(&queue.take_batch().unwrap().0), ["0:a"]);
        assert!(queue.take_batch().is_none());
    }

    #[test]
    fn a_queue_past_its_budget_asks_producers_to_wait_until_the_writer_takes_it() {
        let queue = queue();
        let backpressure = queue.backpressure().unwrap();
        let chunk = "z".repeat(MERGE_LIMIT);
        let each = queued_size(&delta(0, &chunk));
        for _ in 0..BUDGET / each {
            queue.push(delta(0, &chunk));
        }
        assert!(!backpressure.is_congested());
        queue.push(delta(0, &chunk));
        assert!(backpressure.is_congested());
        queue.take_batch().unwrap();
        assert!(!backpressure.is_congested());
    }

    #[test]
    fn frames_without_stream_state_are_queued_encoded() {
        let queue = queue();
        let big = AgentMessage::User(rho_types::types::UserMessage {
            content: rho_types::types::UserMessageContent::Text("u".repeat(3 * 1024 * 1024).into()),
            synthetic: None,
            attribution: None,
            timestamp: 0,
        });
        queue.push(OutItem::Event(AgentSessionEvent::Agent(AgentEvent::MessageEnd { message: big })));
        let (batch, _) = queue.take_batch().unwrap();
        let OutItem::Lines { bytes, ends_message } = &batch[0] else { panic!("not encoded") };
        assert!(!ends_message);
        assert!(bytes.len() < 1024 * 1024, "{} bytes queued", bytes.len());
    }
}
