//! What Landlock cannot see, refused (`EPERM`) by a seccomp filter.
//!
//! Always: every mount call (the mount layer stays as set up), and the calls that act on
//! another process by its id without a permission check Landlock hooks: resource limits
//! (`prlimit64`), priorities (`setpriority`, `ioprio_set`) and scheduling (`sched_set*`) of any
//! process but the caller (id 0).
//!
//! With the network off: any socket but a Unix stream one, connecting, binding, listening and
//! accepting on any socket (a pathname Unix socket such as Docker's reaches outside the
//! sandbox), sending to an address, Unix datagram sockets (whose `sendmsg` can name any
//! pathname socket, which a filter cannot read), and io_uring (which would make those calls
//! without a system call).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

use crate::policy::SandboxPolicy;

/// Installs the filter on this process (single-threaded) and its future children.
pub(crate) fn apply(policy: &SandboxPolicy) -> Result<(), String> {
    filter(policy.network).and_then(|program| seccompiler::apply_filter(&program)).map_err(|e| format!("seccomp: {e}"))
}

fn filter(network: bool) -> Result<BpfProgram, seccompiler::Error> {
    let always = Vec::new;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in [
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fsconfig,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
    ] {
        rules.insert(call, always());
    }
    let other_process = |arg: u8| -> Result<Vec<SeccompRule>, seccompiler::Error> {
        Ok(vec![SeccompRule::new(vec![SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, 0)?])?])
    };
    for call in [
        libc::SYS_prlimit64,
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
    ] {
        rules.insert(call, other_process(0)?);
    }
    // `setpriority(which, who, …)`, `ioprio_set(which, who, …)`.
    rules.insert(libc::SYS_setpriority, other_process(1)?);
    rules.insert(libc::SYS_ioprio_set, other_process(1)?);

    if !network {
        for call in [libc::SYS_connect, libc::SYS_bind, libc::SYS_listen, libc::SYS_accept, libc::SYS_accept4] {
            rules.insert(call, always());
        }
        rules.insert(libc::SYS_io_uring_setup, always());
        let unix = |op| SeccompCondition::new(0, SeccompCmpArgLen::Dword, op, libc::AF_UNIX as u64);
        // The socket type's low bits; the rest are SOCK_NONBLOCK and SOCK_CLOEXEC.
        let datagram =
            || SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(0xf), libc::SOCK_DGRAM as u64);
        rules.insert(
            libc::SYS_socket,
            vec![
                SeccompRule::new(vec![unix(SeccompCmpOp::Ne)?])?,
                SeccompRule::new(vec![unix(SeccompCmpOp::Eq)?, datagram()?])?,
            ],
        );
        rules.insert(libc::SYS_socketpair, vec![SeccompRule::new(vec![datagram()?])?]);
        let to_an_address = SeccompCondition::new(4, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)?;
        rules.insert(libc::SYS_sendto, vec![SeccompRule::new(vec![to_an_address])?]);
    }
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let refused = SeccompAction::Errno(libc::EPERM as u32);
    Ok(SeccompFilter::new(rules, SeccompAction::Allow, refused, arch)?.try_into()?)
}
