//! Running a shell command as its own process group: stdin is `/dev/null`, stdout and stderr
//! share one pipe (so their bytes arrive merged in the order they were written), and abort or
//! timeout sends SIGKILL to the whole group, grandchildren included. If the future is dropped
//! while the command runs, the group is killed too.
//!
//! The command is over when the shell exits and the pipe reaches end of file; a background job
//! that keeps the pipe open only delays the end by [`EXIT_DRAIN`], it never hangs the caller.

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

/// How long output is still read after the shell exited while something else holds the pipe.
pub const EXIT_DRAIN: Duration = Duration::from_millis(500);

const READ_BUFFER: usize = 64 * 1024;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The shell exited on its own; `None` when an outside signal killed it.
    Exited(Option<i32>),
    /// The cancellation token fired and the group was killed.
    Cancelled,
    /// The timeout passed and the group was killed.
    TimedOut,
}

/// Receives a command's output as it arrives.
pub trait OutputSink {
    fn output(&mut self, chunk: &[u8]);

    /// When [`OutputSink::flush`] wants to run next, if at all.
    fn next_flush(&self) -> Option<Instant> {
        None
    }

    fn flush(&mut self) {}
}

/// What to run.
#[derive(Debug, Clone)]
pub struct ShellCommand<'a> {
    pub shell: &'a Path,
    pub command: &'a str,
    pub cwd: &'a Path,
    /// Replaces `PATH` when set.
    pub path_env: Option<OsString>,
    /// Set in the command's environment (settings `bash.environment`).
    pub env: &'a [(String, String)],
    /// Confines the command (and everything it starts) when set.
    pub sandbox: Option<&'a rho_sandbox::Sandbox>,
    /// Leaves the provider key variables rho reads out of the command's environment.
    pub hide_provider_keys: bool,
    /// The session's variables (the model's commands only), before `env`, which may override.
    pub session_env: Vec<(&'static str, String)>,
}

/// Sends SIGKILL to the process group `pgid` (falling back to the leader alone).
pub fn kill_group(pgid: u32) {
    let Ok(raw) = i32::try_from(pgid) else {
        return;
    };
    let pid = Pid::from_raw(raw);
    if killpg(pid, Signal::SIGKILL).is_err() {
        let _ = kill(pid, Signal::SIGKILL);
    }
}

/// Kills a process group when dropped while armed.
pub struct GroupGuard {
    pgid: Option<u32>,
}

impl GroupGuard {
    /// Armed for the group `pgid` (a child started with `process_group(0)`).
    pub fn new(pgid: u32) -> Self {
        Self { pgid: Some(pgid) }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            kill_group(pgid);
        }
    }
}

/// Runs `cmd` to its end, feeding its output to `sink`.
pub async fn run_shell(
    cmd: ShellCommand<'_>,
    sink: &mut (dyn OutputSink + Send),
    cancel: &CancellationToken,
    timeout: Option<Duration>,
) -> io::Result<Ending> {
    let (reader, writer) = io::pipe()?;
    let mut child = {
        let stderr = writer.try_clone()?;
        let mut command = tokio::process::Command::from(rho_sandbox::command(cmd.sandbox, cmd.shell.as_os_str()));
        command
            .arg("-c")
            .arg(cmd.command)
            .current_dir(cmd.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::from(writer))
            .stderr(Stdio::from(stderr))
            .process_group(0);
        if let Some(path) = &cmd.path_env {
            command.env("PATH", path);
        }
        if let Some((var, token)) = crate::guardian::owner_env() {
            command.env(var, token);
        }
        if cmd.hide_provider_keys {
            for var in rho_ai::auth::provider_key_variables() {
                command.env_remove(var);
            }
        }
        command.envs(crate::PROCESS_MARKERS);
        command.envs(cmd.session_env.iter().map(|(k, v)| (k, v)));
        command.envs(cmd.env.iter().map(|(k, v)| (k, v)));
        command.spawn()?
        // `command` (holding our copies of the pipe's write end) is dropped here, so the pipe
        // reaches end of file once the command's processes close it.
    };
    let mut guard = GroupGuard { pgid: child.id() };
    let mut pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;

    let far_future = || Instant::now() + Duration::from_secs(365 * 24 * 3600);
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut buf = vec![0u8; READ_BUFFER];
    let mut ending: Option<Ending> = None;
    let mut exit: Option<Option<i32>> = None;
    let mut drain_until: Option<Instant> = None;
    let mut eof = false;

    loop {
        if eof && exit.is_some() {
            break;
        }
        let flush_at = sink.next_flush();
        let killed = ending.is_some();
        tokio::select! {
            biased;
            _ = cancel.cancelled(), if !killed => {
                ending = Some(Ending::Cancelled);
                if let Some(pgid) = child.id().or(guard.pgid) {
                    kill_group(pgid);
                }
                if exit.is_some() {
                    break;
                }
            }
            _ = sleep_until(deadline.unwrap_or_else(far_future)), if !killed && deadline.is_some() && exit.is_none() => {
                ending = Some(Ending::TimedOut);
                if let Some(pgid) = child.id().or(guard.pgid) {
                    kill_group(pgid);
                }
            }
            read = pipe.read(&mut buf), if !eof => {
                match read {
                    Ok(0) | Err(_) => eof = true,
                    Ok(n) => sink.output(&buf[..n]),
                }
            }
            status = child.wait(), if exit.is_none() => {
                let code = status.ok().and_then(|s| s.code());
                exit = Some(code);
                if ending.is_none() {
                    // Background jobs the command started are left running, like in a terminal.
                    guard.pgid = None;
                }
                drain_until = Some(Instant::now() + EXIT_DRAIN);
            }
            _ = sleep_until(drain_until.unwrap_or_else(far_future)), if drain_until.is_some() => {
                break;
            }
            _ = sleep_until(flush_at.unwrap_or_else(far_future)), if flush_at.is_some() => {
                sink.flush();
            }
        }
    }
    guard.pgid = None;
    Ok(ending.unwrap_or(Ending::Exited(exit.flatten())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect(Vec<u8>);

    impl OutputSink for Collect {
        fn output(&mut self, chunk: &[u8]) {
            self.0.extend_from_slice(chunk);
        }
    }

    fn sh(command: &str) -> ShellCommand<'_> {
        ShellCommand {
            shell: Path::new("/bin/sh"),
            command,
            cwd: Path::new("/"),
            path_env: None,
            env: &[],
            sandbox: None,
            hide_provider_keys: false,
            session_env: Vec::new(),
        }
    }

    #[tokio::test]
    async fn merges_stdout_and_stderr_in_order() {
        let mut out = Collect::default();
        let ending = run_shell(sh("echo one; echo two >&2; echo three"), &mut out, &CancellationToken::new(), None)
            .await
            .unwrap();
        assert_eq!(ending, Ending::Exited(Some(0)));
        assert_eq!(String::from_utf8(out.0).unwrap(), "one\ntwo\nthree\n");
    }

    #[tokio::test]
    async fn reports_exit_codes_and_reads_no_stdin() {
        let mut out = Collect::default();
        let ending = run_shell(sh("cat; exit 3"), &mut out, &CancellationToken::new(), None).await.unwrap();
        assert_eq!(ending, Ending::Exited(Some(3)));
        assert!(out.0.is_empty());
    }

    #[tokio::test]
    async fn a_background_job_holding_the_pipe_does_not_hang() {
        let mut out = Collect::default();
        let ending = run_shell(sh("sleep 5 & echo started"), &mut out, &CancellationToken::new(), None).await.unwrap();
        assert_eq!(ending, Ending::Exited(Some(0)));
        assert_eq!(String::from_utf8(out.0).unwrap(), "started\n");
    }

    #[tokio::test]
    async fn timeout_kills_the_group() {
        let mut out = Collect::default();
        let ending = run_shell(
            sh("echo before; sleep 10; echo after"),
            &mut out,
            &CancellationToken::new(),
            Some(Duration::from_millis(200)),
        )
        .await
        .unwrap();
        assert_eq!(ending, Ending::TimedOut);
        assert_eq!(String::from_utf8(out.0).unwrap(), "before\n");
    }
}
