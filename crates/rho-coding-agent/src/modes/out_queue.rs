//! The one stdout writer: a queue every producer pushes whole frames into, and one thread that
//! owns stdout, encodes what is queued and writes it, flushing after each batch.
//!
//! Back-pressure (decision 15): while the host reads slower than the model streams, the queue
//! does not grow with the stream. A text, thinking or tool-argument delta pushed behind a
//! queued delta of the same block is merged into it (concatenating what a host receives still
//! gives exactly the model's text), and a `tool_execution_update` behind a queued one of the same
//! call replaces it (each carries the whole result so far). Boundary events are never merged or
//! dropped, and nothing is reordered.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use rho_agent::AgentEvent;

use super::encoder::{FrameEncoder, OutItem};
use crate::agent_session::AgentSessionEvent;

/// A merged delta stops growing past this size, so one frame never carries an unbounded delta.
const MERGE_LIMIT: usize = 64 * 1024;

/// Encoded bytes are handed to the OS in chunks of about this size within a batch.
const WRITE_CHUNK: usize = 256 * 1024;

#[derive(Default)]
struct State {
    items: VecDeque<OutItem>,
    closed: bool,
}

/// Frames waiting for the writer.
#[derive(Default)]
pub struct OutQueue {
    state: Mutex<State>,
    ready: Condvar,
}

impl OutQueue {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a frame. Ignored once the queue is closed.
    pub fn push(&self, item: OutItem) {
        let mut state = self.lock();
        if state.closed {
            return;
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
        self.ready.notify_all();
    }

    /// Waits for frames; `None` once the queue is closed and empty.
    pub(crate) fn take_batch(&self) -> Option<VecDeque<OutItem>> {
        let mut state = self.lock();
        loop {
            if !state.items.is_empty() {
                return Some(std::mem::take(&mut state.items));
            }
            if state.closed {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(|p| p.into_inner());
        }
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
    max_frame: usize,
) -> io::Result<JoinHandle<io::Result<()>>> {
    std::thread::Builder::new().name("rho-stdout".into()).spawn(move || {
        let result = write_loop(&queue, &mut out, max_frame);
        queue.close();
        result
    })
}

fn write_loop<W: Write>(queue: &OutQueue, out: &mut W, max_frame: usize) -> io::Result<()> {
    let mut encoder = FrameEncoder::new(max_frame);
    let mut buf = Vec::with_capacity(WRITE_CHUNK);
    while let Some(batch) = queue.take_batch() {
        for item in &batch {
            encoder.encode(item, &mut buf);
            if buf.len() >= WRITE_CHUNK {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
        out.write_all(&buf)?;
        buf.clear();
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rho_agent::AgentToolResult;
    use rho_ai::event::AssistantMessageEvent;

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
                OutItem::Event(e) => e.type_name().to_owned(),
                _ => "other".into(),
            })
            .collect()
    }

    #[test]
    fn queued_deltas_of_one_block_merge_and_nothing_else_does() {
        let queue = OutQueue::new();
        for item in [delta(0, "a"), delta(0, "b"), delta(1, "c"), delta(1, "d")] {
            queue.push(item);
        }
        queue.push(OutItem::Event(AgentSessionEvent::Agent(AgentEvent::TurnStart)));
        queue.push(delta(1, "e"));
        queue.push(update("t1", "one"));
        queue.push(update("t1", "one two"));
        queue.push(update("t2", "x"));
        let batch = queue.take_batch().unwrap();
        assert_eq!(describe(&batch), ["0:ab", "1:cd", "turn_start", "1:e", "t1=one two", "t2=x"]);
    }

    #[test]
    fn merged_deltas_stop_growing_at_the_limit() {
        let queue = OutQueue::new();
        let chunk = "z".repeat(MERGE_LIMIT / 2 + 1);
        for _ in 0..3 {
            queue.push(delta(0, &chunk));
        }
        assert_eq!(queue.take_batch().unwrap().len(), 3);
    }

    #[test]
    fn a_closed_queue_drains_then_ends() {
        let queue = OutQueue::new();
        queue.push(delta(0, "a"));
        queue.close();
        queue.push(delta(0, "ignored"));
        assert_eq!(describe(&queue.take_batch().unwrap()), ["0:a"]);
        assert!(queue.take_batch().is_none());
    }
}
