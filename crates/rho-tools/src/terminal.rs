//! Where the `bash` tool runs its commands: a local process group ([`crate::process`]) unless
//! the session hands it [`Terminals`]. An editor that drives rho (ACP mode, with a client that
//! offers terminals) runs them in terminals of its own, which its user watches as they run.
//!
//! The hook is narrow on purpose: one program with its arguments in, its output and how it ended
//! out. The `bash` tool keeps everything else (the shell, the command prefix, `PATH`, truncation,
//! the full-output file, the messages), so results read the same in every mode.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::process::Ending;

/// A command for a terminal: the user's shell with `-c` and the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// Set in the command's environment (`PATH` when rho changes it, settings `bash.environment`).
    pub env: Vec<(String, String)>,
}

/// What a command run in a terminal printed (stdout and stderr together) and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalRun {
    pub output: String,
    pub ending: Ending,
}

/// Runs the `bash` tool's commands in terminals the session's host owns.
pub trait Terminals: Send + Sync + std::fmt::Debug {
    /// Runs `command` to its end. `started` gets the terminal's id once it exists (so the call
    /// can show the terminal live). `cancel` and `timeout` kill the command (ending
    /// [`Ending::Cancelled`] / [`Ending::TimedOut`]); the output is what the terminal holds then.
    fn run<'a>(
        &'a self,
        command: TerminalCommand,
        started: &'a (dyn Fn(&str) + Send + Sync),
        cancel: &'a CancellationToken,
        timeout: Option<Duration>,
    ) -> BoxFuture<'a, io::Result<TerminalRun>>;
}
