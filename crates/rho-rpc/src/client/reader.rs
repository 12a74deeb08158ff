//! The stdout reader task: reads each line, turns it into a frame and routes it (a response to
//! its request, a host tool call or UI request to its handler, everything else to the event
//! stream). A line that is not a valid frame is reported as [`Notification::ProtocolError`]
//! and reading goes on. When stdout ends, every pending request fails with the server's
//! [`ExitReport`](super::ExitReport) and the stream closes.
//!
//! The event stream is bounded: when it is full the reader waits for the host to take a
//! notification, which holds back stdout and so the server (back-pressure, docs/decisions.md D15).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::BufReader;
use tokio::process::ChildStdout;
use tokio::sync::{mpsc, oneshot};

use super::error::{ClientError, ExitReport};
use super::events::{Notification, ProtocolError, Sequenced};
use super::host_tools;
use super::lines::{Line, LineReader};
use super::pending::Routed;
use super::shared::Shared;
use super::ui;
use crate::frames::{OutFrame, Ready};

/// How long after stdout closes the reader waits for the exit status and the rest of stderr.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How much of a bad line a protocol error quotes.
const QUOTED_BYTES: usize = 1024;

pub(crate) struct Reader {
    pub(crate) shared: Arc<Shared>,
    pub(crate) events: mpsc::Sender<Sequenced>,
    /// Taken by the first `ready` frame when `spawn` waits for one.
    pub(crate) ready: Option<oneshot::Sender<Ready>>,
}

impl Reader {
    pub(crate) async fn run(mut self, stdout: ChildStdout, max_line_bytes: usize) {
        let mut lines = LineReader::new(BufReader::new(stdout), max_line_bytes);
        while let Ok(Some((number, line))) = lines.next().await {
            match line {
                Line::Text(bytes) => self.handle(number, &bytes).await,
                Line::TooLong(length) => {
                    let message = format!("line of {length} bytes exceeds the limit of {max_line_bytes} bytes");
                    self.protocol_error(number, b"", message).await;
                }
            }
        }
        self.finish().await;
    }

    async fn handle(&mut self, number: u64, bytes: &[u8]) {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(value) => value,
            Err(e) => return self.protocol_error(number, bytes, format!("not a JSON frame: {e}")).await,
        };
        let kind = value.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
        let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
        let bad_arguments = kind == "host_tool_call" && value.get("arguments").is_some_and(|a| !a.is_object());
        match OutFrame::from_value(value) {
            Ok(frame) => self.dispatch(number, frame).await,
            Err(e) => {
                let message = format!("invalid `{kind}` frame: {e}");
                if let Some(id) = id {
                    if kind == "response" {
                        self.shared.pending.lock().fail(&id, ClientError::Protocol(message.clone()));
                    } else if bad_arguments {
                        host_tools::reject_arguments(&self.shared, id);
                    }
                }
                self.protocol_error(number, bytes, message).await;
            }
        }
    }

    async fn dispatch(&mut self, number: u64, frame: OutFrame) {
        let notification = match frame {
            OutFrame::Ready(ready) => match self.ready.take() {
                Some(waiting) => {
                    let _ = waiting.send(ready);
                    return;
                }
                None => Notification::Ready(ready),
            },
            OutFrame::Response(response) => match self.shared.pending.lock().route(number, *response) {
                Routed::Answered => return,
                Routed::Late(r) => Notification::LateResponse(Box::new(r)),
                Routed::Unsolicited(r) => Notification::UnsolicitedResponse(Box::new(r)),
            },
            OutFrame::UiRequest(request) => {
                ui::serve(&self.shared, request.clone());
                Notification::UiRequest(request)
            }
            OutFrame::HostToolCall(call) => {
                host_tools::serve(&self.shared, call.clone());
                Notification::HostToolCall(call)
            }
            OutFrame::HostToolCancel(cancel) => {
                host_tools::cancel(&self.shared, &cancel.target_id);
                Notification::HostToolCancel(cancel)
            }
            OutFrame::HostUriRequest(request) => Notification::HostUriRequest(request),
            OutFrame::HostUriCancel(cancel) => Notification::HostUriCancel(cancel),
            OutFrame::ExtensionError(e) => Notification::ExtensionError(e),
            OutFrame::Event(e) => Notification::Event(e),
            // This client never negotiates protocol 2, the only one that chunks frames.
            OutFrame::Chunk(_) => return,
        };
        self.emit(number, notification).await;
    }

    async fn protocol_error(&self, number: u64, line: &[u8], message: String) {
        let mut quoted = String::from_utf8_lossy(&line[..line.len().min(QUOTED_BYTES)]).into_owned();
        if line.len() > QUOTED_BYTES {
            quoted.push('…');
        }
        self.emit(number, Notification::ProtocolError(ProtocolError { line_number: number, line: quoted, message }))
            .await;
    }

    /// Waits for room in the stream; a host that dropped the stream discards notifications.
    async fn emit(&self, number: u64, notification: Notification) {
        let _ = self.events.send((number, notification)).await;
    }

    /// stdout has ended: collect the exit status and the rest of stderr (briefly: a grandchild
    /// may hold stderr open), then fail everything still waiting.
    async fn finish(self) {
        let shared = &self.shared;
        let _ = tokio::time::timeout(EXIT_GRACE, async {
            shared.stderr_done.cancelled().await;
            shared.wait_exit().await
        })
        .await;
        let report = ExitReport { status: *shared.exit.borrow(), stderr: shared.stderr.text() };
        shared.pending.lock().close(report);
        shared.gone.cancel();
    }
}
