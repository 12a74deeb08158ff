//! With the network off, the socket calls Landlock cannot see are refused (`EPERM`) by a
//! seccomp filter: any socket but a Unix one, connecting, binding, listening and accepting on
//! any socket (a pathname Unix socket such as Docker's reaches outside the sandbox), sending
//! to an address, and io_uring (which would make those calls without a system call).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// Installs the filter on this process (single-threaded) and its future children.
pub(crate) fn deny_network() -> Result<(), String> {
    filter().and_then(|program| seccompiler::apply_filter(&program)).map_err(|e| format!("seccomp: {e}"))
}

fn filter() -> Result<BpfProgram, seccompiler::Error> {
    let always = Vec::new;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in [libc::SYS_connect, libc::SYS_bind, libc::SYS_listen, libc::SYS_accept, libc::SYS_accept4] {
        rules.insert(call, always());
    }
    rules.insert(libc::SYS_io_uring_setup, always());
    let domain_not_unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?;
    rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![domain_not_unix])?]);
    let to_an_address = SeccompCondition::new(4, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)?;
    rules.insert(libc::SYS_sendto, vec![SeccompRule::new(vec![to_an_address])?]);
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let refused = SeccompAction::Errno(libc::EPERM as u32);
    Ok(SeccompFilter::new(rules, SeccompAction::Allow, refused, arch)?.try_into()?)
}
