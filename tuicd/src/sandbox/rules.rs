//! The Landlock ruleset: built and applied in the launcher process, and probed once by the daemon.

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError, RulesetStatus, Scope, path_beneath_rules,
};

use super::Status;

/// The newest ABI whose rights this ruleset names; on an older kernel the crate's best-effort mode
/// keeps what the kernel has (filesystem writes since ABI 1, TCP since 4, scopes since 6).
const TARGET: ABI = ABI::V6;

/// Devices every shell writes to (`2>/dev/null`); writing them changes nothing.
const DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// Restricts the calling thread (and what it `exec`s): reads and execution everywhere, writes
/// only beneath `writes` and the null devices, TCP refused unless `network`, signals and abstract
/// Unix sockets scoped to the sandbox. Refuses when the kernel enforces nothing.
pub(super) fn apply(writes: &[PathBuf], network: bool) -> Result<RulesetStatus, String> {
    let build = || -> Result<RulesetStatus, RulesetError> {
        let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(TARGET))?;
        if !network {
            ruleset = ruleset.handle_access(AccessNet::from_all(TARGET))?;
        }
        let created = ruleset
            .scope(Scope::from_all(TARGET))?
            .create()?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(TARGET)))?
            .add_rules(path_beneath_rules(writes, AccessFs::from_all(TARGET)))?
            .add_rules(path_beneath_rules(DEVICES, AccessFs::from_file(TARGET)))?;
        Ok(created.restrict_self()?.ruleset)
    };
    match build() {
        Ok(RulesetStatus::NotEnforced) => Err("the kernel enforces no Landlock ruleset".into()),
        Ok(status) => Ok(status),
        Err(e) => Err(e.to_string()),
    }
}

/// Which Landlock ABI the kernel offers: a throwaway thread restricts itself with a minimal
/// ruleset (Landlock and `no_new_privs` bind only the calling thread) and reads the answer.
pub(super) fn probe() -> Status {
    let probing = std::thread::Builder::new().name("landlock-probe".into()).spawn(|| {
        let ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::Execute)
            .and_then(|r| r.create())
            .and_then(|r| r.restrict_self());
        match ruleset {
            Ok(status) => match status.landlock {
                LandlockStatus::Available { effective_abi, kernel_abi } => {
                    Status::Available { abi: kernel_abi.unwrap_or(effective_abi as i32) }
                }
                LandlockStatus::NotEnabled => {
                    Status::Unavailable { reason: "Landlock is built into this kernel but not enabled (lsm=)".into() }
                }
                LandlockStatus::NotImplemented => Status::Unavailable {
                    reason: "this kernel has no Landlock (Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)".into(),
                },
            },
            Err(e) => Status::Unavailable { reason: format!("creating a Landlock ruleset failed: {e}") },
        }
    });
    match probing.map(std::thread::JoinHandle::join) {
        Ok(Ok(status)) => status,
        _ => Status::Unavailable { reason: "the Landlock probe could not run".into() },
    }
}
