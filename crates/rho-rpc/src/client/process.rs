//! Starting the server: piped stdio, its own process group (Unix), `kill_on_drop`; a task that
//! keeps the tail of its stderr, and a waiter task that owns the child, publishes its exit
//! status and kills the whole group when asked.

use std::process::{ExitStatus, Stdio};
use std::sync::Arc;

use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdout, Command};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::config::ClientConfig;
use super::error::ClientError;
use super::shared::{ProcessParts, StderrTail};

pub(crate) struct Started {
    pub(crate) parts: ProcessParts,
    pub(crate) stdout: ChildStdout,
    pub(crate) pid: Option<u32>,
}

pub(crate) fn start(config: &ClientConfig) -> Result<Started, ClientError> {
    let mut command = Command::new(&config.program);
    command
        .args(&config.args)
        .envs(config.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = &config.current_dir {
        command.current_dir(dir);
    }
    // Its own group: a terminal's Ctrl-C reaches the host only, and a kill reaches the
    // server's own children too.
    #[cfg(unix)]
    command.process_group(0);

    let spawn_error = |source| ClientError::Spawn { program: config.program_name(), source };
    let mut child = command.spawn().map_err(spawn_error)?;
    let missing = || spawn_error(std::io::Error::other("a standard stream was not piped"));
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stdout = child.stdout.take().ok_or_else(missing)?;
    let mut stderr = child.stderr.take().ok_or_else(missing)?;
    let pid = child.id();

    let tail = Arc::new(StderrTail::new(config.stderr_bytes));
    let stderr_done = CancellationToken::new();
    tokio::spawn({
        let tail = Arc::clone(&tail);
        let done = stderr_done.clone();
        async move {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut chunk).await {
                tail.push(&chunk[..n]);
            }
            done.cancel();
        }
    });

    let kill = CancellationToken::new();
    let (exit_tx, exit_rx) = watch::channel(None::<ExitStatus>);
    tokio::spawn({
        let kill = kill.clone();
        async move {
            let status = tokio::select! {
                status = child.wait() => status,
                () = kill.cancelled() => {
                    kill_group(pid);
                    let _ = child.start_kill();
                    child.wait().await
                }
            };
            if let Ok(status) = status {
                let _ = exit_tx.send(Some(status));
            }
        }
    });

    Ok(Started { parts: ProcessParts { stdin, stderr: tail, exit: exit_rx, stderr_done, kill }, stdout, pid })
}

/// Kills the server's process group (its children included); the leader is still unreaped
/// here, so the group id cannot have been reused.
#[cfg(unix)]
fn kill_group(pid: Option<u32>) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: Option<u32>) {}
