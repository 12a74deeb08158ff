//! The file-system and network rules, enforced by Landlock on the calling process and
//! everything it starts: read and run everything, write only the writable roots (and
//! `/dev/null`); with the network off no TCP bind or connect and no abstract Unix socket
//! outside the sandbox; never a signal to a process outside it.

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetError,
    RulesetStatus, Scope, path_beneath_rules,
};

use crate::policy::SandboxPolicy;

/// The newest Landlock ABI whose rights rho asks for; an older kernel enforces what it knows
/// (the network then stays closed by the seccomp filter alone).
const ABI_USED: ABI = ABI::V6;

/// Whether Landlock works here: a ruleset is created (and dropped), nothing is restricted.
pub(crate) fn probe() -> Result<(), String> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(|ruleset| ruleset.create())
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Restricts this process (it must be single-threaded: Landlock binds the calling thread) and
/// its future children to `policy`. A kernel that enforces only part of it (an ABI older than
/// rho's) is named in the returned gaps.
pub(crate) fn restrict(policy: &SandboxPolicy) -> Result<Vec<String>, String> {
    let status = ruleset(policy).and_then(|r| r.restrict_self()).map_err(|e| format!("Landlock: {e}"))?;
    match status.ruleset {
        RulesetStatus::NotEnforced => Err("this kernel does not enforce Landlock".into()),
        RulesetStatus::PartiallyEnforced => Ok(vec![format!(
            "this kernel's Landlock is older than ABI {}: it enforces only part of the sandbox (without ABI 6 \
             commands can signal processes outside it; without ABI 4 the network is closed by seccomp alone)",
            ABI_USED as i32
        )]),
        RulesetStatus::FullyEnforced => Ok(Vec::new()),
    }
}

fn ruleset(policy: &SandboxPolicy) -> Result<landlock::RulesetCreated, RulesetError> {
    let abi = ABI_USED;
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(abi))?.scope(Scope::Signal)?;
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(abi))?.scope(Scope::AbstractUnixSocket)?;
    }
    ruleset
        .create()?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))?
        .add_rules(path_beneath_rules(["/dev/null"], AccessFs::from_file(abi)))?
        .add_rules(path_beneath_rules(&policy.writable_roots, AccessFs::from_all(abi)))
}
