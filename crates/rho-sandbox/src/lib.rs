//! rho's sandbox: what a sandbox mode (`read-only`, `workspace-write`, `danger-full-access`)
//! allows, enforced by the kernel on every command rho starts for the model and checked
//! in-process by the built-in tools that write.
//!
//! A confined command runs through rho itself: `rho __sandbox <policy> <program> <args…>`
//! restricts its own process, then becomes the program: a user and mount namespace whose
//! mounts are read-only but the writable roots (and, inside those, `.git`, `.rho`, `.pi`
//! read-only again); Landlock for the file system, TCP and abstract sockets and signals;
//! seccomp for the socket calls Landlock cannot see and for calls on other processes. The
//! restriction is inherited by everything the program starts and cannot be lifted.
//! docs/sandbox.md has the threat model.

mod confined_write;
mod helper;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod namespaces;
mod paths;
mod policy;
#[cfg(target_os = "linux")]
mod seccomp;

pub use confined_write::WriteError;
pub use helper::{HELPER_ARG, PROBE_ARG, Sandbox, command, probe, run_helper};
pub use policy::{PROTECTED_NAMES, SandboxDenied, SandboxMode, SandboxPolicy};

/// Why a sandbox cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "the {0} sandbox cannot be enforced: this kernel has no Landlock ({1}). Run on Linux 5.13 or newer with \
         Landlock enabled (the `lsm=` boot parameter must include landlock), or choose --sandbox danger-full-access"
    )]
    Unsupported(SandboxMode, String),
    #[error("the sandbox could not be set up: {0}")]
    Setup(String),
}

/// Whether this machine can enforce `mode`; an error says why not, and what to do. Nothing is
/// restricted by asking.
pub fn check_supported(mode: SandboxMode) -> Result<(), SandboxError> {
    if mode == SandboxMode::DangerFullAccess {
        return Ok(());
    }
    #[cfg(target_os = "linux")]
    return landlock::probe().map_err(|reason| SandboxError::Unsupported(mode, reason));
    #[cfg(not(target_os = "linux"))]
    Err(SandboxError::Unsupported(mode, "Landlock is a Linux feature".into()))
}

/// The program to start rho again with (the sandbox helper, the guardian, a sub-agent): the
/// binary this process runs, by `/proc/self/exe` where there is one, so that a command that
/// renames or replaces the file at rho's path cannot choose what rho starts next, unconfined.
pub fn own_binary() -> std::path::PathBuf {
    let proc_exe = std::path::Path::new("/proc/self/exe");
    if proc_exe.exists() {
        return proc_exe.to_path_buf();
    }
    std::env::current_exe().unwrap_or_else(|_| proc_exe.to_path_buf())
}
