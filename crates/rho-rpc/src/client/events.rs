//! What the client hands the host besides responses: [`Notification`], one per stdout frame that
//! did not answer a pending request (events, sub-protocol frames, late and unsolicited
//! responses, protocol errors), and [`Events`], the receiving end of their bounded channel.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc;

use crate::event::Event;
use crate::frames::{ExtensionError, HostToolCall, HostToolCancel, HostUriCancel, HostUriRequest, Ready, UiRequest};
use crate::response::RpcResponse;

/// One frame from the server that was not the answer to a pending request, in stdout order.
#[derive(Debug, Clone, PartialEq)]
pub enum Notification {
    /// An agent or session event.
    Event(Box<Event>),
    /// A `ready` frame that was not awaited by the handshake.
    Ready(Ready),
    /// An extension UI request. The client also serves it (see `ClientConfig::ui_handler`);
    /// it is delivered here so a host can show or log it.
    UiRequest(UiRequest),
    /// A host tool call; the client serves it with the handler registered for the tool.
    HostToolCall(HostToolCall),
    /// The server withdrew a host tool call; the client has fired the call's cancellation token.
    HostToolCancel(HostToolCancel),
    /// A request for a resource under one of the host's URL schemes; the host answers with a
    /// `host_uri_result` line (`send_line`).
    HostUriRequest(HostUriRequest),
    /// The server withdrew a host URI request.
    HostUriCancel(HostUriCancel),
    ExtensionError(ExtensionError),
    /// A second response for an already answered `prompt` / `abort_and_prompt` (same `id`):
    /// the run failed to start after the acknowledgement (docs/protocol.md, "Refused prompts").
    LateResponse(Box<RpcResponse>),
    /// A response that matches no pending request (an unknown id, an id-less error that could
    /// not be attributed, `extension_send` failures, an answer to `send_line`).
    UnsolicitedResponse(Box<RpcResponse>),
    /// A stdout line that is not a valid frame. The client reports it and reads on.
    ProtocolError(ProtocolError),
}

impl Notification {
    /// The event, when this is one.
    pub fn as_event(&self) -> Option<&Event> {
        match self {
            Self::Event(e) => Some(e),
            _ => None,
        }
    }
}

/// A stdout line the client could not read as a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError {
    /// 1-based line number on the server's stdout.
    pub line_number: u64,
    /// The line (lossily decoded, cut to 1 KiB).
    pub line: String,
    pub message: String,
}

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stdout line {}: {} ({:?})", self.line_number, self.message, self.line)
    }
}

/// A notification with the stdout line number it came from, so `prompt_and_wait` can tell the
/// frames written after its acknowledgement from older ones.
pub(crate) type Sequenced = (u64, Notification);

/// The event stream: a bounded channel fed by the stdout reader. It ends when the server's
/// stdout closes. Also a [`futures::Stream`].
#[derive(Debug)]
pub struct Events {
    pub(crate) rx: mpsc::Receiver<Sequenced>,
}

impl Events {
    /// The next notification, or `None` once the server's stdout has closed and every
    /// buffered notification has been taken.
    pub async fn recv(&mut self) -> Option<Notification> {
        self.rx.recv().await.map(|(_, n)| n)
    }

    /// The next notification if one is buffered.
    pub fn try_recv(&mut self) -> Option<Notification> {
        self.rx.try_recv().ok().map(|(_, n)| n)
    }

    pub(crate) async fn recv_sequenced(&mut self) -> Option<Sequenced> {
        self.rx.recv().await
    }
}

impl Stream for Events {
    type Item = Notification;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Notification>> {
        self.rx.poll_recv(cx).map(|o| o.map(|(_, n)| n))
    }
}
