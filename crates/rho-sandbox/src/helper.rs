//! The confined launch: a command is wrapped to start as `rho __sandbox <policy> <program>
//! <args…>`, and that helper, still single-threaded at the top of `main`, confines itself and
//! becomes the program (same process, same process group).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::policy::SandboxPolicy;

/// The first argument that makes rho the sandbox helper.
pub const HELPER_ARG: &str = "__sandbox";

/// A policy and the program that enforces it (rho's own binary).
#[derive(Debug, Clone)]
pub struct Sandbox {
    policy: SandboxPolicy,
    launcher: PathBuf,
}

impl Sandbox {
    pub fn new(policy: SandboxPolicy, launcher: PathBuf) -> Self {
        Self { policy, launcher }
    }

    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    /// The program and leading arguments that run `program` confined (its own arguments
    /// follow); `None` when the policy confines nothing.
    pub fn wrap(&self, program: &OsStr) -> Option<(&Path, Vec<OsString>)> {
        if !self.policy.confines() {
            return None;
        }
        let policy = serde_json::to_string(&self.policy).unwrap_or_default();
        Some((&self.launcher, vec![HELPER_ARG.into(), policy.into(), program.to_owned()]))
    }
}

/// A command that runs `program` in `sandbox` (as is without one, or when it confines nothing);
/// its own arguments are added by the caller.
pub fn command(sandbox: Option<&Sandbox>, program: &OsStr) -> std::process::Command {
    match sandbox.and_then(|sandbox| sandbox.wrap(program)) {
        Some((launcher, leading)) => {
            let mut command = std::process::Command::new(launcher);
            command.args(leading);
            command
        }
        None => std::process::Command::new(program),
    }
}

/// The helper's whole life, given the arguments after [`HELPER_ARG`]: confine, then become
/// the program. Returns only when that failed, with the reason (the caller exits 126 with it).
pub fn run_helper(args: impl IntoIterator<Item = OsString>) -> String {
    let mut args = args.into_iter();
    let (Some(policy), Some(program)) = (args.next(), args.next()) else {
        return format!("usage: rho {HELPER_ARG} <policy> <program> [args…]");
    };
    let policy: SandboxPolicy = match policy.to_str().map(serde_json::from_str) {
        Some(Ok(policy)) => policy,
        _ => return "the sandbox policy is not valid".into(),
    };
    if let Err(reason) = enforce(&policy) {
        return format!("the sandbox could not be set up: {reason}");
    }
    exec(&program, args)
}

fn enforce(policy: &SandboxPolicy) -> Result<(), String> {
    if !policy.confines() {
        return Ok(());
    }
    #[cfg(target_os = "linux")]
    {
        crate::landlock::restrict(policy)?;
        if !policy.network {
            crate::seccomp::deny_network()?;
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    Err("sandboxes need Linux".into())
}

fn exec(program: &OsStr, args: impl Iterator<Item = OsString>) -> String {
    use std::os::unix::process::CommandExt;
    let error = std::process::Command::new(program).args(args).exec();
    format!("{}: {error}", Path::new(program).display())
}
