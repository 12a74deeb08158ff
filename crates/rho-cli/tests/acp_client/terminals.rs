//! The test editor's terminals: each `terminal/create` runs its command as a local process with
//! stdout and stderr collected together; output, exit, kill and release as the protocol says.

use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{CreateTerminalRequest, TerminalExitStatus, TerminalOutputResponse};
use futures::future::BoxFuture;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{Notify, watch};

struct Terminal {
    output: Arc<Mutex<Vec<u8>>>,
    exit: watch::Receiver<Option<TerminalExitStatus>>,
    kill: Arc<Notify>,
}

#[derive(Default)]
pub struct Terminals {
    next: AtomicU64,
    open: Mutex<HashMap<String, Terminal>>,
}

fn collect(mut from: impl AsyncRead + Unpin + Send + 'static, into: Arc<Mutex<Vec<u8>>>) {
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = from.read(&mut buf).await {
            into.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
}

impl Terminals {
    /// Starts the command; its id.
    pub fn create(&self, request: &CreateTerminalRequest) -> std::io::Result<String> {
        let mut command = tokio::process::Command::new(&request.command);
        command.args(&request.args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        if let Some(cwd) = &request.cwd {
            command.current_dir(cwd);
        }
        command.envs(request.env.iter().map(|v| (&v.name, &v.value)));
        let mut child = command.spawn()?;
        let output = Arc::new(Mutex::new(Vec::new()));
        collect(child.stdout.take().unwrap(), output.clone());
        collect(child.stderr.take().unwrap(), output.clone());
        let (exit_tx, exit) = watch::channel(None);
        let kill = Arc::new(Notify::new());
        let killed = kill.clone();
        tokio::spawn(async move {
            let status = tokio::select! {
                status = child.wait() => status,
                () = killed.notified() => {
                    let _ = child.start_kill();
                    child.wait().await
                }
            };
            let status = status.ok();
            let code = status.and_then(|s| s.code()).and_then(|c| u32::try_from(c).ok());
            let signal =
                status.and_then(|s| s.signal()).map(|s| if s == 9 { "SIGKILL".to_owned() } else { s.to_string() });
            let _ = exit_tx.send(Some(TerminalExitStatus::new().exit_code(code).signal(signal)));
        });
        let id = format!("term-{}", self.next.fetch_add(1, Ordering::Relaxed));
        self.open.lock().unwrap().insert(id.clone(), Terminal { output, exit, kill });
        Ok(id)
    }

    pub fn output(&self, id: &str) -> TerminalOutputResponse {
        let open = self.open.lock().unwrap();
        let Some(terminal) = open.get(id) else { return TerminalOutputResponse::new("", false) };
        let text = String::from_utf8_lossy(&terminal.output.lock().unwrap()).into_owned();
        TerminalOutputResponse::new(text, false).exit_status(terminal.exit.borrow().clone())
    }

    /// Resolves with the exit status once the command has ended.
    pub fn exited(&self, id: &str) -> BoxFuture<'static, TerminalExitStatus> {
        let exit = self.open.lock().unwrap().get(id).map(|t| t.exit.clone());
        Box::pin(async move {
            let Some(mut exit) = exit else { return TerminalExitStatus::new() };
            let status = exit.wait_for(Option::is_some).await.map(|s| s.clone());
            status.ok().flatten().unwrap_or_default()
        })
    }

    pub fn kill(&self, id: &str) {
        if let Some(terminal) = self.open.lock().unwrap().get(id) {
            terminal.kill.notify_one();
        }
    }

    pub fn release(&self, id: &str) {
        if let Some(terminal) = self.open.lock().unwrap().remove(id) {
            terminal.kill.notify_one();
        }
    }
}
