//! An async client for `rho --mode rpc` (and any pi-family RPC server): it starts the server,
//! waits for its `ready` frame, sends typed commands and matches their responses, serves host
//! tools and extension UI requests, and hands every other frame to the host as a typed
//! [`Notification`] stream.
//!
//! ```no_run
//! # async fn demo() -> Result<(), rho_rpc::client::ClientError> {
//! use rho_rpc::client::{ClientConfig, RpcClient};
//! use rho_rpc::RpcCommand;
//!
//! let mut client = RpcClient::spawn(ClientConfig::new().arg("--no-session")).await?;
//! let state = client.request(RpcCommand::GetState).await?;
//! let events = client.prompt_and_wait("Summarize this repo").await?;
//! client.close().await?;
//! # let _ = (state, events); Ok(()) }
//! ```
//!
//! **Correlation.** Each command gets an id `req_<n>`; its response is found by that id. An
//! id-less `parse` error goes to the one outstanding request when exactly one is pending (as
//! xcsh's Python client does), an id-less error naming a command to the one request of that
//! command; a second response for an answered `prompt` / `abort_and_prompt` is delivered as
//! [`Notification::LateResponse`]; anything else unmatched as
//! [`Notification::UnsolicitedResponse`].
//!
//! **Event policy.** Notifications go through a bounded channel (`event_capacity`, 1024 by
//! default), in stdout order. When it is full the reader waits, which holds back the server
//! (rho merges streaming deltas under back-pressure, docs/decisions.md D15); nothing is dropped. A
//! response behind a full channel waits too, so a host that awaits requests must keep taking
//! notifications ([`RpcClient::next_event`], or a task owning [`RpcClient::take_events`]) or
//! drop the stream, which discards them from then on.
//!
//! **Ending.** When the server's stdout closes, every pending and later request fails with
//! [`ClientError::Exited`], whose [`ExitReport`] holds the exit status and the tail of stderr.
//! [`RpcClient::close`] closes stdin, waits `close_timeout`, then kills the process group;
//! dropping the client kills it at once.

mod config;
mod error;
mod events;
mod host_tools;
mod lines;
mod pending;
mod process;
mod reader;
mod shared;
mod ui;

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

pub use config::{ClientConfig, ReadyPolicy};
pub use error::{ClientError, ExitReport};
pub use events::{Events, Notification, ProtocolError};
pub use host_tools::{HostTool, HostToolContext, HostToolHandler, HostToolOutcome};
pub use ui::{UiAnswer, UiHandler};

use crate::command::RpcCommand;
use crate::event::{AgentFrameEvent, Event};
use crate::frames::Ready;
use crate::response::{RpcResponse, ToolNamesData};
use shared::Shared;

/// How long `close` waits for the process to die after killing it.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// A running RPC server and the tasks that serve it.
#[derive(Debug)]
pub struct RpcClient {
    shared: Arc<Shared>,
    events: Option<Events>,
    ready: Option<Ready>,
    pid: Option<u32>,
    close_timeout: Duration,
}

impl RpcClient {
    /// Starts the server and, unless the config says [`ReadyPolicy::Skip`], waits for its
    /// `ready` frame. Must be called inside a Tokio runtime.
    pub async fn spawn(config: ClientConfig) -> Result<Self, ClientError> {
        let started = process::start(&config)?;
        let shared = Arc::new(Shared::new(started.parts, config.ui.clone()));
        let (events_tx, events_rx) = mpsc::channel(config.event_capacity);
        let (ready_tx, ready_rx) = oneshot::channel();
        let waiting = match config.ready {
            ReadyPolicy::Wait(timeout) => Some(timeout),
            ReadyPolicy::Skip => None,
        };
        let reader =
            reader::Reader { shared: Arc::clone(&shared), events: events_tx, ready: waiting.map(|_| ready_tx) };
        tokio::spawn(reader.run(started.stdout, config.max_line_bytes));
        let mut client = Self {
            shared,
            events: Some(Events { rx: events_rx }),
            ready: None,
            pid: started.pid,
            close_timeout: config.close_timeout,
        };
        if let Some(timeout) = waiting {
            match tokio::time::timeout(timeout, ready_rx).await {
                Ok(Ok(ready)) => client.ready = Some(ready),
                // The reader ended first: the server exited (or closed stdout) before `ready`.
                Ok(Err(_)) => return Err(ClientError::Exited(client.shared.report())),
                Err(_) => return Err(ClientError::ReadyTimeout { stderr: client.shared.stderr.text() }),
            }
        }
        Ok(client)
    }

    /// The server's `ready` frame, when the handshake waited for it.
    pub fn ready(&self) -> Option<&Ready> {
        self.ready.as_ref()
    }

    /// The server's process id (also its process group id on Unix).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The tail of what the server has written to stderr so far.
    pub fn stderr(&self) -> String {
        self.shared.stderr.text()
    }

    /// How the server ended, once its stdout has closed.
    pub fn exit_report(&self) -> Option<ExitReport> {
        self.shared.pending.lock().closed().cloned()
    }

    /// Sends a command and waits for its response (`success: false` included: that is an
    /// answer, not a client error).
    pub async fn request(&self, command: RpcCommand) -> Result<RpcResponse, ClientError> {
        let fields = command_fields(&command)?;
        self.exchange(command.name(), fields).await.map(|(_, _, response)| response)
    }

    /// Sends a command and returns its `data` (`None` when the response has none), or
    /// [`ClientError::Rejected`] for `success: false`.
    pub async fn request_ok(&self, command: RpcCommand) -> Result<Option<Value>, ClientError> {
        let name = command.name();
        accept(name, self.request(command).await?)
    }

    /// Sends a command and reads its `data` as `T` (a missing `data` reads as `null`).
    pub async fn request_data<T: DeserializeOwned>(&self, command: RpcCommand) -> Result<T, ClientError> {
        let name = command.name();
        let data = self.request_ok(command).await?.unwrap_or(Value::Null);
        serde_json::from_value(data).map_err(|e| ClientError::Protocol(format!("unexpected `{name}` data: {e}")))
    }

    /// Sends an arbitrary JSON object as a command (its `id` is replaced by a generated one)
    /// and waits for the response: for commands this crate does not type, and for testing a
    /// server's answers to malformed ones.
    pub async fn request_raw(&self, fields: Map<String, Value>) -> Result<RpcResponse, ClientError> {
        let name = fields.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
        self.exchange(&name, fields).await.map(|(_, _, response)| response)
    }

    /// Writes one raw line to the server's stdin, unchecked. Whatever the server answers comes
    /// as a notification (or, for an id-less `parse` error while exactly one request is
    /// pending, as that request's answer).
    pub async fn send_line(&self, line: &str) -> Result<(), ClientError> {
        if line.contains('\n') {
            return Err(ClientError::LineBreak);
        }
        self.shared.write_line(line.as_bytes().to_vec()).await
    }

    /// Registers the host's tools: replaces the client's handler table and sends
    /// `set_host_tools` with their definitions; returns the names the server accepted. On
    /// failure the previous table is restored.
    pub async fn set_host_tools(&self, tools: Vec<HostTool>) -> Result<Vec<String>, ClientError> {
        let definitions = tools.iter().map(|t| &t.definition).collect::<Vec<_>>();
        let command = RpcCommand::SetHostTools { tools: serde_json::to_value(definitions)? };
        let table = tools.into_iter().map(|t| (t.definition.name.trim().to_owned(), t.handler)).collect();
        let previous = std::mem::replace(&mut *self.shared.host_tools.write(), table);
        match self.request_data::<ToolNamesData>(command).await {
            Ok(data) => Ok(data.tool_names),
            Err(e) => {
                *self.shared.host_tools.write() = previous;
                Err(e)
            }
        }
    }

    /// The next notification; `None` when the server's stdout has closed (and all were taken)
    /// or the stream was taken out with [`take_events`](Self::take_events).
    pub async fn next_event(&mut self) -> Option<Notification> {
        self.events.as_mut()?.recv().await
    }

    /// Moves the notification stream out, e.g. into a task of its own. `prompt_and_wait` and
    /// `next_event` cannot be used afterwards.
    pub fn take_events(&mut self) -> Option<Events> {
        self.events.take()
    }

    /// Sends `prompt` and collects the events up to and including the prompt's last `agent_end` (one
    /// whose `isTerminal` is not false).
    ///
    /// Notifications older than the acknowledgement (left over from earlier activity) and
    /// non-event notifications are discarded. A late error for this prompt (busy, no model, no
    /// API key) ends it with [`ClientError::Rejected`].
    pub async fn prompt_and_wait(&mut self, message: impl Into<String>) -> Result<Vec<Event>, ClientError> {
        if self.events.is_none() {
            return Err(ClientError::EventsTaken);
        }
        let command =
            RpcCommand::Prompt { message: message.into(), images: None, streaming_behavior: None, locale: None };
        let (id, acknowledged_at, ack) = self.exchange("prompt", command_fields(&command)?).await?;
        accept("prompt", ack)?;
        let id = Value::String(id);
        let Some(events) = self.events.as_mut() else { return Err(ClientError::EventsTaken) };
        let mut collected = Vec::new();
        loop {
            let Some((number, notification)) = events.recv_sequenced().await else {
                return Err(ClientError::Exited(self.shared.report()));
            };
            if number < acknowledged_at {
                continue;
            }
            match notification {
                Notification::Event(event) => {
                    // The prompt's last run: one that says another follows does not end it.
                    let end = matches!(
                        *event,
                        Event::Agent(AgentFrameEvent::AgentEnd { is_terminal, .. }) if is_terminal != Some(false)
                    );
                    collected.push(*event);
                    if end {
                        return Ok(collected);
                    }
                }
                Notification::LateResponse(response) if response.id.as_ref() == Some(&id) && !response.success => {
                    accept("prompt", *response)?;
                }
                _ => {}
            }
        }
    }

    /// Closes the server's stdin, waits up to `close_timeout` for it to exit, then kills its
    /// process group. Returns its exit status.
    pub async fn close(self) -> Result<ExitStatus, ClientError> {
        let shared = Arc::clone(&self.shared);
        let graceful = tokio::time::timeout(self.close_timeout, async {
            shared.close_stdin().await;
            shared.wait_exit().await
        })
        .await;
        let status = match graceful {
            Ok(status) => status,
            Err(_) => {
                shared.kill.cancel();
                tokio::time::timeout(KILL_WAIT, shared.wait_exit()).await.ok().flatten()
            }
        };
        shared.gone.cancel();
        status.ok_or_else(|| ClientError::Io(std::io::Error::other("the RPC server's exit status is unknown")))
    }

    /// Writes a command with a fresh id and waits for its response: the id, the stdout line
    /// number of the response, the response.
    async fn exchange(
        &self,
        name: &str,
        fields: Map<String, Value>,
    ) -> Result<(String, u64, RpcResponse), ClientError> {
        let id = self.shared.next_request_id();
        let mut line = Map::with_capacity(fields.len() + 1);
        line.insert("id".into(), Value::String(id.clone()));
        line.extend(fields.into_iter().filter(|(k, _)| k != "id"));
        let bytes = rho_types::json::to_vec(&Value::Object(line))?;
        let answer = self.shared.pending.lock().register(&id, name)?;
        let _forget = ForgetOnDrop { shared: &self.shared, id: &id };
        self.shared.write_line(bytes).await?;
        let (number, response) = answer.await.map_err(|_| ClientError::Exited(self.shared.report()))??;
        Ok((id.clone(), number, response))
    }
}

impl Drop for RpcClient {
    fn drop(&mut self) {
        if !self.shared.has_exited() {
            self.shared.kill.cancel();
        }
    }
}

/// Removes a request from the table when its caller stops waiting.
struct ForgetOnDrop<'a> {
    shared: &'a Shared,
    id: &'a str,
}

impl Drop for ForgetOnDrop<'_> {
    fn drop(&mut self) {
        self.shared.pending.lock().forget(self.id);
    }
}

fn command_fields(command: &RpcCommand) -> Result<Map<String, Value>, ClientError> {
    match serde_json::to_value(command)? {
        Value::Object(map) => Ok(map),
        _ => Err(ClientError::Protocol("a command must serialize as an object".into())),
    }
}

fn accept(name: &str, response: RpcResponse) -> Result<Option<Value>, ClientError> {
    if response.success {
        Ok(response.data)
    } else {
        Err(ClientError::Rejected {
            command: response.command.unwrap_or_else(|| name.to_owned()),
            error: response.error.unwrap_or_default(),
        })
    }
}
