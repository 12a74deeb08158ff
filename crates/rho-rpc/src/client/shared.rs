//! The state the client handle, the stdout reader and the handler tasks share: the server's
//! stdin (one writer, whole lines), the pending-request table, the host tool and dialog
//! registries, the captured stderr, and the tokens that say "the server is gone" and "kill it".

use parking_lot::{Mutex, RwLock};
use std::collections::{HashMap, VecDeque};
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::error::{ClientError, ExitReport};
use super::host_tools::HostToolHandler;
use super::pending::Pending;
use super::ui::UiHandler;

/// How long a failed write waits for the reader to learn why the server went away.
const WRITE_ERROR_GRACE: Duration = Duration::from_secs(1);

pub(crate) struct Shared {
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    next_id: AtomicU64,
    pub(crate) pending: Mutex<Pending>,
    pub(crate) stderr: Arc<StderrTail>,
    /// The exit status, once the process has been reaped.
    pub(crate) exit: watch::Receiver<Option<ExitStatus>>,
    /// Cancelled when stderr reached end of file.
    pub(crate) stderr_done: CancellationToken,
    /// Asks the waiter task to kill the server's process group.
    pub(crate) kill: CancellationToken,
    /// Cancelled once stdout has closed and every pending request has failed; the parent of
    /// every host tool call's and dialog's token.
    pub(crate) gone: CancellationToken,
    pub(crate) host_tools: RwLock<HashMap<String, Arc<dyn HostToolHandler>>>,
    pub(crate) host_calls: Mutex<HashMap<String, CancellationToken>>,
    pub(crate) dialogs: Mutex<HashMap<String, CancellationToken>>,
    pub(crate) ui: Option<Arc<dyn UiHandler>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("exit", &*self.exit.borrow()).finish_non_exhaustive()
    }
}

/// The parts of a started process the shared state keeps.
pub(crate) struct ProcessParts {
    pub(crate) stdin: ChildStdin,
    pub(crate) stderr: Arc<StderrTail>,
    pub(crate) exit: watch::Receiver<Option<ExitStatus>>,
    pub(crate) stderr_done: CancellationToken,
    pub(crate) kill: CancellationToken,
}

impl Shared {
    pub(crate) fn new(parts: ProcessParts, ui: Option<Arc<dyn UiHandler>>) -> Self {
        Self {
            stdin: tokio::sync::Mutex::new(Some(parts.stdin)),
            next_id: AtomicU64::new(1),
            pending: Mutex::new(Pending::default()),
            stderr: parts.stderr,
            exit: parts.exit,
            stderr_done: parts.stderr_done,
            kill: parts.kill,
            gone: CancellationToken::new(),
            host_tools: RwLock::new(HashMap::new()),
            host_calls: Mutex::new(HashMap::new()),
            dialogs: Mutex::new(HashMap::new()),
            ui,
        }
    }

    /// `req_1`, `req_2`, … as the TypeScript and Python clients number them.
    pub(crate) fn next_request_id(&self) -> String {
        format!("req_{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// What is known about the server's end, now.
    pub(crate) fn report(&self) -> ExitReport {
        match self.pending.lock().closed() {
            Some(report) => report.clone(),
            None => ExitReport { status: *self.exit.borrow(), stderr: self.stderr.text() },
        }
    }

    pub(crate) fn has_exited(&self) -> bool {
        self.exit.borrow().is_some()
    }

    /// Writes one frame as one line (line-safe JSON, then `\n`, then a flush).
    pub(crate) async fn write_frame<T: Serialize + ?Sized>(&self, frame: &T) -> Result<(), ClientError> {
        self.write_line(rho_types::json::to_vec(frame)?).await
    }

    /// Writes one line; `line` must not hold a line break.
    pub(crate) async fn write_line(&self, mut line: Vec<u8>) -> Result<(), ClientError> {
        line.push(b'\n');
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(ClientError::Io(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the client has closed the server's stdin",
            )));
        };
        let written = async {
            pipe.write_all(&line).await?;
            pipe.flush().await
        }
        .await;
        drop(stdin);
        match written {
            Ok(()) => Ok(()),
            Err(e) => Err(self.after_write_error(e).await),
        }
    }

    /// A write usually fails because the server exited; its report (status and stderr) then
    /// says more than `Broken pipe`.
    async fn after_write_error(&self, error: std::io::Error) -> ClientError {
        if tokio::time::timeout(WRITE_ERROR_GRACE, self.gone.cancelled()).await.is_ok() {
            return ClientError::Exited(self.report());
        }
        ClientError::Io(error)
    }

    /// Closes the server's stdin (its signal to exit), waiting for a write in progress.
    pub(crate) async fn close_stdin(&self) {
        if let Some(mut pipe) = self.stdin.lock().await.take() {
            let _ = pipe.shutdown().await;
        }
    }

    /// The exit status, once the process has been reaped (`None` if it cannot be).
    pub(crate) async fn wait_exit(&self) -> Option<ExitStatus> {
        let mut exit = self.exit.clone();
        exit.wait_for(Option::is_some).await.ok().and_then(|status| *status)
    }
}

/// The last bytes the server wrote to stderr.
pub(crate) struct StderrTail {
    limit: usize,
    state: Mutex<(VecDeque<u8>, bool)>,
}

impl StderrTail {
    pub(crate) fn new(limit: usize) -> Self {
        Self { limit, state: Mutex::new((VecDeque::new(), false)) }
    }

    pub(crate) fn push(&self, bytes: &[u8]) {
        let mut state = self.state.lock();
        let (buf, cut) = &mut *state;
        buf.extend(bytes);
        if buf.len() > self.limit {
            let excess = buf.len() - self.limit;
            buf.drain(..excess);
            *cut = true;
        }
    }

    /// The captured text; `…` marks a cut start.
    pub(crate) fn text(&self) -> String {
        let state = self.state.lock();
        let (buf, cut) = &*state;
        let bytes: Vec<u8> = buf.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        if *cut { format!("…{text}") } else { text.into_owned() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_keeps_the_tail() {
        let tail = StderrTail::new(4);
        tail.push(b"ab");
        assert_eq!(tail.text(), "ab");
        tail.push(b"cdef");
        assert_eq!(tail.text(), "…cdef");
    }
}
