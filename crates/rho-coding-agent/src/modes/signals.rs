//! The signals that end a stdio mode (RPC, ACP): SIGTERM, SIGINT and SIGHUP end it cleanly
//! (what was read is answered, the session is written), and the process then exits as a
//! signalled process reports itself, 128 + the signal's number (SIGTERM 143, as pi's RPC mode).
//! Once a shutdown has begun, from stdin's end or a signal, one more signal does not cut it
//! short (process managers close stdin and send SIGTERM together); a second one exits at once.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Resolves with the exit code when a termination signal arrives (never, where they cannot be
/// watched).
pub async fn termination() -> i32 {
    match Signals::watch() {
        Some(mut signals) => signals.next().await,
        None => std::future::pending().await,
    }
}

/// The termination signals, counted as they arrive.
pub struct Signals {
    term: Signal,
    int: Signal,
    hup: Signal,
    received: u32,
}

impl Signals {
    /// `None` where the signals cannot be watched.
    pub fn watch() -> Option<Self> {
        let (Ok(term), Ok(int), Ok(hup)) =
            (signal(SignalKind::terminate()), signal(SignalKind::interrupt()), signal(SignalKind::hangup()))
        else {
            return None;
        };
        Some(Self { term, int, hup, received: 0 })
    }

    /// The next signal's exit code.
    pub async fn next(&mut self) -> i32 {
        let signo = tokio::select! {
            _ = self.term.recv() => libc_signo::TERM,
            _ = self.int.recv() => libc_signo::INT,
            _ = self.hup.recv() => libc_signo::HUP,
        };
        self.received += 1;
        128 + signo
    }

    /// Resolves, with its exit code, on the signal that ends a shutdown in progress: the second
    /// one received in all (the one that began the shutdown counts).
    pub async fn second(&mut self) -> i32 {
        loop {
            let code = self.next().await;
            if self.received > 1 {
                return code;
            }
        }
    }
}

/// Watches for the second signal while `shutdown` runs; exits the process at once on it.
pub async fn shutdown_unless_signalled_again(signals: Option<&mut Signals>, shutdown: impl Future<Output = ()>) {
    let Some(signals) = signals else {
        return shutdown.await;
    };
    tokio::select! {
        () = shutdown => {}
        code = signals.second() => {
            tracing::warn!("a second signal during shutdown: exiting at once");
            std::process::exit(code);
        }
    }
}

/// The signals' numbers on Linux.
mod libc_signo {
    pub const HUP: i32 = 1;
    pub const INT: i32 = 2;
    pub const TERM: i32 = 15;
}
