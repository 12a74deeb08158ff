//! The signals that end a stdio mode (RPC, ACP): SIGTERM, SIGINT and SIGHUP end it cleanly
//! (what was read is answered, the session is written), and the process then exits as a
//! signalled process reports itself, 128 + the signal's number (SIGTERM 143, as pi's RPC mode).

/// Resolves with the exit code when a termination signal arrives (never, where they cannot be
/// watched).
pub async fn termination() -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) =
        (signal(SignalKind::terminate()), signal(SignalKind::interrupt()), signal(SignalKind::hangup()))
    else {
        return std::future::pending().await;
    };
    let signo = tokio::select! {
        _ = term.recv() => libc_signo::TERM,
        _ = int.recv() => libc_signo::INT,
        _ = hup.recv() => libc_signo::HUP,
    };
    128 + signo
}

/// The signals' numbers on Linux.
mod libc_signo {
    pub const HUP: i32 = 1;
    pub const INT: i32 = 2;
    pub const TERM: i32 = 15;
}
