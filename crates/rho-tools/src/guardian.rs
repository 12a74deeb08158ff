//! Every process rho starts for the model ends with rho, however rho ends (a clean exit, a
//! signal, `kill -9`). Each such process (and so everything it starts) carries
//! `RHO_PROCESS_OWNER=<token>` in its environment; a small guardian process (`rho __guardian
//! <token>`), started with the first of them and outliving nothing but rho, is told by the kernel
//! when rho is gone (the parent-death signal) and then kills every process that carries the token:
//! background jobs of finished commands, daemons that left their process group, an MCP server that
//! ignores EOF and SIGTERM. A process that clears its environment escapes it. Then it removes
//! the bash tool's spill files rho left (named with the token, see [`crate::output`]).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use nix::sys::signal::{SigSet, Signal, kill};
use nix::unistd::{Pid, getppid};

/// The first argument that makes rho the guardian.
pub const HELPER_ARG: &str = "__guardian";

/// The environment variable that marks a process as rho's.
pub const OWNER_VAR: &str = "RHO_PROCESS_OWNER";

struct Guardian {
    launcher: PathBuf,
    token: String,
    /// Whether the guardian runs (started on first use).
    started: OnceLock<bool>,
}

static GUARDIAN: OnceLock<Guardian> = OnceLock::new();

/// Turns the guardian on for this process: `launcher` is rho's own binary. Without it (a library
/// used elsewhere, the tests of this crate) processes are not marked.
pub fn enable(launcher: PathBuf) {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let token = format!("{}-{nanos:x}", std::process::id());
    let _ = GUARDIAN.set(Guardian { launcher, token, started: OnceLock::new() });
}

/// The variable and value to give a process rho starts for the model, the guardian started if
/// it is not yet; `None` when the guardian is off or could not start.
pub fn owner_env() -> Option<(&'static str, &'static str)> {
    let guardian = GUARDIAN.get()?;
    guardian.started.get_or_init(|| start(guardian)).then_some((OWNER_VAR, guardian.token.as_str()))
}

/// Starts the guardian from a thread that lives as long as rho: the parent-death signal follows
/// the thread that started a process, not the process.
fn start(guardian: &Guardian) -> bool {
    let (launcher, token) = (guardian.launcher.clone(), guardian.token.clone());
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new().name("rho-guardian".into()).spawn(move || {
        let child = std::process::Command::new(&launcher)
            .args([HELPER_ARG, &token])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            // Its own group: a signal to rho's group (a terminal's Ctrl+C, a host's killpg) is
            // what it must outlive.
            .process_group(0)
            // Not marked as the parent rho's (a sub-agent's rho is): the parent's guardian
            // kills this rho, and this guardian must live on to sweep what this rho started.
            .env_remove(OWNER_VAR)
            .spawn();
        let _ = tx.send(child.is_ok());
        loop {
            std::thread::park();
        }
    });
    let started = spawned.is_ok() && rx.recv().unwrap_or(false);
    if !started {
        tracing::warn!("the process guardian did not start: processes rho starts may outlive it if it is killed");
    }
    started
}

/// The guardian's whole life, given the arguments after [`HELPER_ARG`]: wait for rho to be
/// gone, then kill what it left.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let Some(token) = args.into_iter().next().and_then(|t| t.into_string().ok()) else {
        return 2;
    };
    let parent = getppid();
    let mut awaited = SigSet::empty();
    for signal in [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT] {
        awaited.add(signal);
    }
    if awaited.thread_block().is_err() || nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).is_err() {
        return 1;
    }
    // rho may have ended before the parent-death signal was set.
    if getppid() == parent {
        while awaited.wait().is_err() {}
    }
    let marker = format!("{OWNER_VAR}={token}");
    for _ in 0..5 {
        let left = marked(&marker);
        if left.is_empty() {
            break;
        }
        for pid in left {
            let _ = kill(pid, Signal::SIGKILL);
        }
        // A process forking right now may leave a child for the next round.
        std::thread::sleep(Duration::from_millis(20));
    }
    remove_spill_files(&token);
    0
}

/// The spill files of the rho whose token is `token`, in the temporary folder.
fn remove_spill_files(token: &str) {
    let prefix = crate::output::spill_prefix(Some(token));
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        if entry.file_name().to_str().is_some_and(|name| name.starts_with(&prefix) && name.ends_with(".log")) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The processes whose environment holds `marker` (this one excepted).
fn marked(marker: &str) -> Vec<Pid> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|environ| environ.split(|b| *b == 0).any(|entry| entry == marker.as_bytes()))
        })
        .filter_map(|pid| i32::try_from(pid).ok().map(Pid::from_raw))
        .collect()
}
