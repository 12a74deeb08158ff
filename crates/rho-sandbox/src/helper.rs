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

    /// The box of a command the user typed (`!cmd`, a host's `bash`): the same writable roots,
    /// without the entries kept read-only from the model, which are the user's to change.
    pub fn for_user(&self) -> Sandbox {
        let mut policy = self.policy.clone();
        policy.read_only.clear();
        Sandbox { policy, launcher: self.launcher.clone() }
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

/// The argument (in place of the program) that makes the helper confine itself, say what of the
/// sandbox this machine could not set up, one line each, and exit.
pub const PROBE_ARG: &str = "--probe";

/// The helper's whole life, given the arguments after [`HELPER_ARG`]: confine, then become
/// the program. Returns only when that failed, with the reason (the caller exits 126 with it).
pub fn run_helper(args: impl IntoIterator<Item = OsString>) -> String {
    let mut args = args.into_iter();
    let (Some(policy), Some(program)) = (args.next(), args.next()) else {
        return format!("usage: rho {HELPER_ARG} <policy> <program> [args…]");
    };
    let Some(Ok(policy)) = policy.to_str().map(serde_json::from_str::<SandboxPolicy>) else {
        return "the sandbox policy is not valid".into();
    };
    let gaps = match enforce(&policy) {
        Ok(gaps) => gaps,
        Err(reason) => return format!("the sandbox could not be set up: {reason}"),
    };
    if program == PROBE_ARG {
        for gap in gaps {
            println!("{gap}");
        }
        std::process::exit(0);
    }
    exec(&program, args)
}

/// What of `policy` this machine leaves unenforced, said as the user needs to hear it; `Ok(vec![])`
/// when the sandbox is set up in full, an error when it cannot be at all.
pub fn probe(sandbox: &Sandbox) -> Result<Vec<String>, String> {
    // The probe stands where the program would: `rho __sandbox <policy> --probe`.
    let Some((launcher, leading)) = sandbox.wrap(OsStr::new(PROBE_ARG)) else {
        return Ok(Vec::new());
    };
    let output = std::process::Command::new(launcher)
        .args(leading)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", launcher.display()))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().trim_start_matches("rho: ").to_owned());
    }
    Ok(String::from_utf8_lossy(&output.stdout).lines().map(str::to_owned).collect())
}

fn enforce(policy: &SandboxPolicy) -> Result<Vec<String>, String> {
    if !policy.confines() {
        return Ok(Vec::new());
    }
    #[cfg(target_os = "linux")]
    {
        let mut gaps = Vec::new();
        if let Err(reason) = crate::namespaces::isolate(policy) {
            let kept = if policy.read_only.is_empty() {
                String::new()
            } else {
                let names: Vec<String> = policy.read_only.iter().map(|p| p.display().to_string()).collect();
                format!("{} stay writable, and ", names.join(", "))
            };
            gaps.push(format!(
                "the sandbox's mount layer is off ({reason}): {kept}commands can change the permissions and times of \
                 files outside the writable roots"
            ));
        }
        gaps.extend(crate::landlock::restrict(policy)?);
        crate::seccomp::apply(policy)?;
        Ok(gaps)
    }
    #[cfg(not(target_os = "linux"))]
    Err("sandboxes need Linux".into())
}

fn exec(program: &OsStr, args: impl Iterator<Item = OsString>) -> String {
    use std::os::unix::process::CommandExt;
    let error = std::process::Command::new(program).args(args).exec();
    format!("{}: {error}", Path::new(program).display())
}
