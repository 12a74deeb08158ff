//! The host process and the channel to it. rho listens on a Unix socket in a private temporary
//! folder and starts `node host.mjs` with the socket's path in `RHO_EXTENSION_SOCKET`; the host
//! connects, says hello, and from then on both sides write JSON lines. The host's own stdout and
//! stderr (what extensions print) go where the mode says, never to rho's stdout.
//!
//! The host runs in a process group of its own, killed whole when the [`ExtensionHost`] is
//! dropped (what extensions started goes with it); the host also exits by itself when the socket
//! closes, which covers rho being killed. When the host exits, every request waiting on it fails
//! at once with [`HostError::Exited`] and [`Incoming::Exited`] tells the session why.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::UnixListener;
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::{FramedRead, LinesCodec};
use tokio_util::sync::CancellationToken;

use crate::protocol::{Action, ComponentFrame, ExtensionFault, FromHost, Registrations, ToHost, encode};

/// A line from the host longer than this ends the connection (it is not a message rho could use).
/// The host writes at most 32 MiB (`MAX_LINE_BYTES` in `host/channel.mjs`); this bounds what a
/// host that does not keep to it costs.
const MAX_LINE: usize = 40 * 1024 * 1024;

/// How long the host may take to connect after it was started.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    #[error("cannot start the extension host: {0}")]
    Start(String),
    /// The host is gone; the text says how it ended.
    #[error("the extension host exited ({0})")]
    Exited(String),
    /// The host answered with an error (a handler or tool threw).
    #[error("{0}")]
    Failed(String),
}

/// Where the host's stdout and stderr go.
#[derive(Debug)]
pub enum HostOutput {
    /// rho's stderr (RPC, print and JSON mode: stdout is the protocol).
    Stderr,
    /// Appended to a file (the interactive mode: the terminal is the UI).
    File(PathBuf),
}

/// How to start the host.
#[derive(Debug)]
pub struct HostCommand {
    pub node: PathBuf,
    /// The host's entry script.
    pub script: PathBuf,
    pub cwd: PathBuf,
    /// Extra environment (the agent dir for pi's `getAgentDir`).
    pub env: Vec<(String, String)>,
    pub output: HostOutput,
}

/// What the host says, in the order it said it (answers included, so that what an extension
/// did before its handler returned is applied before rho goes on).
#[derive(Debug)]
pub enum Incoming {
    /// The answer to one of rho's requests: [`Answer::deliver`] it once what came before it
    /// is handled.
    Answer(Answer),
    Action {
        id: Option<String>,
        action: Action,
    },
    Ui {
        id: Option<String>,
        request: serde_json::Map<String, Value>,
    },
    UiCancel {
        target: String,
    },
    Component(ComponentFrame),
    ComponentClose {
        id: String,
    },
    EditorSubmit {
        text: String,
    },
    EditorAction {
        action: String,
        text: String,
    },
    Fault(ExtensionFault),
    Registrations(Box<Registrations>),
    /// The host is gone (crashed, killed, or closed the channel).
    Exited {
        reason: String,
    },
}

/// An answer from the host to one of rho's requests, on its way to whoever waits for it.
pub struct Answer {
    id: String,
    result: Result<Value, HostError>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answer").field("id", &self.id).finish_non_exhaustive()
    }
}

impl Answer {
    /// Hands the answer to the request that waits for it.
    pub fn deliver(self) {
        if let Some(pending) = self.shared.pending.lock().remove(&self.id) {
            let _ = pending.answer.send(self.result);
        }
    }
}

/// Receives a running tool's partial results.
pub type UpdateSink = Arc<dyn Fn(Value) + Send + Sync>;

struct Pending {
    answer: oneshot::Sender<Result<Value, HostError>>,
    updates: Option<UpdateSink>,
}

struct Shared {
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Mutex<HashMap<String, Pending>>,
    next_id: AtomicU64,
    /// Fired when the connection ended.
    closed: CancellationToken,
    /// How it ended, once it has.
    ending: Mutex<Option<String>>,
    pgid: Option<u32>,
}

/// A running extension host. Dropping the last clone kills its process group.
#[derive(Clone)]
pub struct ExtensionHost {
    shared: Arc<Shared>,
    _guard: Arc<KillOnDrop>,
}

impl std::fmt::Debug for ExtensionHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionHost").field("pgid", &self.shared.pgid).finish_non_exhaustive()
    }
}

struct KillOnDrop(Option<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            kill_group(pgid);
        }
    }
}

fn kill_group(pgid: u32) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    if let Ok(raw) = i32::try_from(pgid) {
        let _ = killpg(Pid::from_raw(raw), Signal::SIGKILL);
    }
}

impl ExtensionHost {
    /// Starts the host and waits until it has connected. What it says that is not an answer
    /// goes to `incoming`.
    pub async fn spawn(command: HostCommand, incoming: mpsc::UnboundedSender<Incoming>) -> Result<Self, HostError> {
        let dir = tempfile::Builder::new()
            .prefix("rho-ext-")
            .tempdir()
            .map_err(|e| HostError::Start(format!("cannot make the socket folder: {e}")))?;
        let socket = dir.path().join("host.sock");
        let listener = UnixListener::bind(&socket)
            .map_err(|e| HostError::Start(format!("cannot listen on {}: {e}", socket.display())))?;
        let (stdout, stderr) = output_stdio(&command.output)?;
        let mut child = tokio::process::Command::new(&command.node)
            .arg(&command.script)
            .current_dir(&command.cwd)
            .env("RHO_EXTENSION_SOCKET", &socket)
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| HostError::Start(format!("cannot run {}: {e}", command.node.display())))?;
        let guard = Arc::new(KillOnDrop(child.id()));
        let stream = tokio::select! {
            accepted = tokio::time::timeout(CONNECT_TIMEOUT, listener.accept()) => match accepted {
                Ok(Ok((stream, _))) => stream,
                Ok(Err(e)) => return Err(HostError::Start(format!("the host did not connect: {e}"))),
                Err(_) => return Err(HostError::Start("the host did not connect within 60 s".into())),
            },
            status = child.wait() => {
                let how = status.map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
                return Err(HostError::Exited(how));
            }
        };
        // The socket's folder is no longer needed once the host is connected.
        drop(listener);
        drop(dir);
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            out: out_tx,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            closed: CancellationToken::new(),
            ending: Mutex::new(None),
            pgid: guard.0,
        });
        let (read, write) = stream.into_split();
        tokio::spawn(write_lines(write, out_rx, shared.closed.clone()));
        tokio::spawn(read_lines(read, shared.clone(), incoming, child));
        Ok(Self { shared, _guard: guard })
    }

    /// Sends a message that wants no answer.
    pub fn send(&self, message: &ToHost) {
        let _ = self.shared.out.send(encode(None, message));
    }

    /// Sends a request; resolves with the host's answer, or fails when the host answers with
    /// an error or exits first. The returned id names the request (for `cancel`).
    pub fn request(&self, message: &ToHost) -> (String, oneshot::Receiver<Result<Value, HostError>>) {
        self.request_with_updates(message, None)
    }

    /// [`request`](Self::request) for a tool call: `updates` gets its partial results.
    pub fn request_with_updates(
        &self,
        message: &ToHost,
        updates: Option<UpdateSink>,
    ) -> (String, oneshot::Receiver<Result<Value, HostError>>) {
        let id = format!("r{}", self.shared.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        if let Some(reason) = self.shared.ending.lock().clone() {
            let _ = tx.send(Err(HostError::Exited(reason)));
            return (id, rx);
        }
        self.shared.pending.lock().insert(id.clone(), Pending { answer: tx, updates });
        let _ = self.shared.out.send(encode(Some(&id), message));
        (id, rx)
    }

    /// Answers one of the host's requests.
    pub fn respond(&self, id: String, answer: Result<Value, String>) {
        let (value, error) = match answer {
            Ok(value) => (Some(value), None),
            Err(error) => (None, Some(error)),
        };
        self.send(&ToHost::Response { id, value, error });
    }

    /// Whether `other` is this same host process (a clone of its handle).
    pub fn same_process(&self, other: &ExtensionHost) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// False once the host has exited.
    pub fn is_alive(&self) -> bool {
        !self.shared.closed.is_cancelled()
    }

    /// Resolves when the connection has ended.
    pub async fn closed(&self) {
        self.shared.closed.cancelled().await;
    }

    /// Kills the host's process group now.
    pub fn kill(&self) {
        if let Some(pgid) = self.shared.pgid {
            kill_group(pgid);
        }
    }
}

fn output_stdio(output: &HostOutput) -> Result<(Stdio, Stdio), HostError> {
    use std::os::fd::AsFd;
    match output {
        HostOutput::Stderr => {
            let dup = || {
                std::io::stderr()
                    .as_fd()
                    .try_clone_to_owned()
                    .map(Stdio::from)
                    .map_err(|e| HostError::Start(format!("cannot share stderr: {e}")))
            };
            Ok((dup()?, dup()?))
        }
        HostOutput::File(path) => {
            if let Some(parent) = path.parent() {
                use std::os::unix::fs::DirBuilderExt;
                let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent);
            }
            let open = || {
                use std::os::unix::fs::OpenOptionsExt;
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .mode(0o600)
                    .open(path)
                    .map(Stdio::from)
                    .map_err(|e| HostError::Start(format!("cannot open {}: {e}", path.display())))
            };
            Ok((open()?, open()?))
        }
    }
}

async fn write_lines(
    mut write: tokio::net::unix::OwnedWriteHalf,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    closed: CancellationToken,
) {
    loop {
        let line = tokio::select! {
            line = lines.recv() => line,
            () = closed.cancelled() => None,
        };
        let Some(line) = line else { break };
        if write.write_all(&line).await.is_err() {
            break;
        }
    }
}

async fn read_lines(
    read: tokio::net::unix::OwnedReadHalf,
    shared: Arc<Shared>,
    incoming: mpsc::UnboundedSender<Incoming>,
    mut child: tokio::process::Child,
) {
    let mut lines = FramedRead::new(read, LinesCodec::new_with_max_length(MAX_LINE));
    let mut reason = None;
    while let Some(line) = lines.next().await {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                reason = Some(format!("unreadable message: {e}"));
                break;
            }
        };
        match serde_json::from_str::<FromHost>(&line) {
            Ok(message) => dispatch(&shared, &incoming, message),
            Err(e) => tracing::warn!("extension host: unreadable message: {e}"),
        }
    }
    // The channel is gone: the host is exiting or was killed. Say how, if it ended by now.
    let status = tokio::time::timeout(Duration::from_millis(500), child.wait()).await;
    let reason = match (reason, status) {
        (Some(reason), _) => reason,
        (None, Ok(Ok(status))) => status.to_string(),
        (None, _) => "its channel closed".to_owned(),
    };
    end(&shared, &reason);
    let _ = incoming.send(Incoming::Exited { reason });
}

fn end(shared: &Shared, reason: &str) {
    *shared.ending.lock() = Some(reason.to_owned());
    shared.closed.cancel();
    let pending: Vec<Pending> = shared.pending.lock().drain().map(|(_, p)| p).collect();
    for p in pending {
        let _ = p.answer.send(Err(HostError::Exited(reason.to_owned())));
    }
}

fn dispatch(shared: &Arc<Shared>, incoming: &mpsc::UnboundedSender<Incoming>, message: FromHost) {
    let forward = match message {
        FromHost::Hello { .. } => return,
        FromHost::Result { id, value, error } => {
            let result = match error {
                Some(error) => Err(HostError::Failed(error)),
                None => Ok(value.unwrap_or(Value::Null)),
            };
            Incoming::Answer(Answer { id, result, shared: shared.clone() })
        }
        FromHost::ToolUpdate { id, partial: update } | FromHost::StreamEvent { id, event: update } => {
            let sink = shared.pending.lock().get(&id).and_then(|p| p.updates.clone());
            if let Some(sink) = sink {
                sink(update);
            }
            return;
        }
        FromHost::Error(fault) => Incoming::Fault(fault),
        FromHost::Registrations(registrations) => Incoming::Registrations(registrations),
        FromHost::Ui { id, request } => Incoming::Ui { id, request },
        FromHost::UiCancel { target } => Incoming::UiCancel { target },
        FromHost::Component(frame) => Incoming::Component(frame),
        FromHost::ComponentClose { id } => Incoming::ComponentClose { id },
        FromHost::EditorSubmit { text } => Incoming::EditorSubmit { text },
        FromHost::EditorAction { action, text } => Incoming::EditorAction { action, text },
        FromHost::Action { id, action } => Incoming::Action { id, action },
    };
    let _ = incoming.send(forward);
}
