//! Who may reach the daemon's files. The IPC socket has no authentication, so the directories
//! around it are the boundary: the config dir is created 0700, and an existing one (or its
//! `config.json`) that is not ours or that others can write refuses the start (a warning names one
//! that others can only read), the short-socket dir must be ours and 0700 or the daemon refuses to
//! start, and the socket is bound under a private umask so it is never reachable by others, not
//! even between `bind` and `chmod`.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;

use rustix::fs::Mode;

/// Creates the config dir 0700 when it is missing. An existing one, or its `config.json`, must be
/// ours and writable by nobody else: whoever can write there chooses the shell every session runs
/// and the password hash remote access checks. Warns when others can only read the dir.
pub(super) fn prepare_config_dir(dir: &Path) -> Result<(), String> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create the config dir {}: {e}", dir.display()))?;
    let mode = owned_by_me(dir, "the config dir", "chmod 700")?;
    let file = dir.join("config.json");
    if file.exists() {
        owned_by_me(&file, "the config file", "chmod 600")?;
    }
    if mode & 0o077 != 0 {
        tracing::warn!(
            path = %dir.display(),
            mode = format!("{mode:o}"),
            "the config dir is readable by other users; it holds the password hash: chmod 700 it"
        );
    }
    Ok(())
}

/// The permission bits of `path` (following a symlink, as reading it does) when it is owned by
/// this user and not writable by group or others; else the refusal, naming the path and the fix.
fn owned_by_me(path: &Path, what: &str, fix: &str) -> Result<u32, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot inspect {what} {}: {e}", path.display()))?;
    let me = rustix::process::geteuid().as_raw();
    let mode = meta.permissions().mode() & 0o777;
    if meta.uid() != me {
        return Err(format!(
            "refusing {what} {}: it is owned by uid {}, not by this user (uid {me}), so that user controls it; \
             use a config dir of your own (--config-dir), or chown it to uid {me} and {fix} it",
            path.display(),
            meta.uid()
        ));
    }
    if mode & 0o022 != 0 {
        return Err(format!(
            "refusing {what} {}: its mode {mode:o} lets other users write it (and so choose what tuicd runs); \
             {fix} {} and start again",
            path.display(),
            path.display()
        ));
    }
    Ok(mode)
}

/// Creates `dir` 0700, or accepts an existing one only when it is a real directory owned by this
/// user with no access for others: another local user could otherwise pre-create it and swap the
/// socket for their own.
pub(super) fn claim_private_dir(dir: &Path) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create the socket dir {}: {e}", dir.display())),
    }
    let meta =
        std::fs::symlink_metadata(dir).map_err(|e| format!("cannot inspect the socket dir {}: {e}", dir.display()))?;
    let me = rustix::process::geteuid().as_raw();
    let mode = meta.permissions().mode() & 0o777;
    if !meta.file_type().is_dir() || meta.uid() != me || mode & 0o077 != 0 {
        let kind = if meta.file_type().is_symlink() { "a symlink" } else { "a directory" };
        return Err(format!(
            "refusing the socket dir {}: it is {kind} owned by uid {} with mode {mode:o}, but must be a directory owned by \
             uid {me} with mode 700 (another user may have created it); remove it and start again",
            dir.display(),
            meta.uid()
        ));
    }
    Ok(())
}

/// Runs `bind` with the umask at 0177, so the socket file is born 0600. The umask is process-wide:
/// this runs during start-up, before any session or service creates files.
pub(super) fn with_private_umask<T>(bind: impl FnOnce() -> T) -> T {
    let previous = rustix::process::umask(Mode::from_raw_mode(0o177));
    let result = bind();
    rustix::process::umask(previous);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_dir_open_to_others_or_owned_by_another_user_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let fresh = base.path().join("fresh");
        claim_private_dir(&fresh).unwrap();
        assert_eq!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o700);
        claim_private_dir(&fresh).unwrap();

        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = claim_private_dir(&open).unwrap_err();
        assert!(err.contains("mode 755") && err.contains("remove it"), "{err}");

        let link = base.path().join("link");
        std::os::unix::fs::symlink(&fresh, &link).unwrap();
        assert!(claim_private_dir(&link).unwrap_err().contains("a symlink"));

        if rustix::process::geteuid().is_root() {
            let theirs = base.path().join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            assert!(claim_private_dir(&theirs).unwrap_err().contains("owned by uid 65534"));
        }
    }

    #[test]
    fn the_config_dir_is_created_private() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("a/tuic");
        prepare_config_dir(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    }

    #[test]
    fn a_config_dir_or_file_others_can_write_or_another_user_owns_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("tuic");
        prepare_config_dir(&dir).unwrap();
        for mode in [0o777, 0o770, 0o702] {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
            let err = prepare_config_dir(&dir).unwrap_err();
            assert!(err.contains(&format!("mode {mode:o}")) && err.contains("chmod 700"), "{err}");
            assert!(err.contains(&dir.display().to_string()), "{err}");
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        prepare_config_dir(&dir).unwrap();
        let file = dir.join("config.json");
        std::fs::write(&file, "{}").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = prepare_config_dir(&dir).unwrap_err();
        assert!(err.contains("config.json") && err.contains("chmod 600"), "{err}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        prepare_config_dir(&dir).unwrap();
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
            assert!(prepare_config_dir(&dir).unwrap_err().contains("owned by uid 65534"));
            std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
            assert!(prepare_config_dir(&dir).unwrap_err().contains("owned by uid 65534"));
        }
    }
}
