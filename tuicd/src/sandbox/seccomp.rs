//! The sandbox's seccomp filter, applied by the launcher after Landlock: creating a Unix socket
//! fails with EACCES, and so does setting up io_uring (whose socket operation would not pass
//! through the filter). Landlock governs files, not connecting to a socket by its path, so
//! without this a command could reach tuicd's own socket (as the owner), the user's D-Bus or
//! docker.sock. Socket pairs (`socketpair`) stay: they reach nothing outside the process tree.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
};

/// Applies the filter to this thread and every process it becomes or starts.
pub(super) fn apply() -> Result<(), String> {
    let unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, libc::AF_UNIX as u64)
        .map_err(|e| e.to_string())?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![unix]).map_err(|e| e.to_string())?]);
    // No condition: every call is refused.
    rules.insert(libc::SYS_io_uring_setup, vec![]);
    let arch = std::env::consts::ARCH.try_into().map_err(|e: seccompiler::BackendError| e.to_string())?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EACCES as u32), arch)
        .map_err(|e| e.to_string())?;
    let program: BpfProgram = filter.try_into().map_err(|e: seccompiler::BackendError| e.to_string())?;
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())
}
