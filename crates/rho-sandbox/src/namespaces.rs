//! The mount layer: the helper moves into a user and mount namespace of its own and there makes
//! every mount read-only but the writable roots, and the protected entries inside those roots
//! read-only again. What this adds to Landlock: a folder inside a writable root can be kept
//! read-only (Landlock can only allow a whole hierarchy), and metadata calls Landlock does not
//! see (`chmod`, `chown`, `utime`, `setxattr`) fail with `EROFS` outside the roots. Nothing
//! propagates back: the namespace's mounts are private and die with the command.
//!
//! Landlock, applied after this, forbids every later mount call, so the command cannot undo it.

use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};

use crate::policy::SandboxPolicy;

/// One line of `/proc/self/mountinfo`: where the mount is and the per-mount flags the kernel
/// insists a remount keeps (they are locked in a namespace the user does not own).
#[derive(Debug)]
struct MountEntry {
    point: PathBuf,
    flags: MsFlags,
}

/// Sets the namespace up; an error says why it could not be (no user namespaces here, most
/// often), and the caller goes on with Landlock alone.
pub(crate) fn isolate(policy: &SandboxPolicy) -> Result<(), String> {
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS).map_err(|e| format!("user namespace: {e}"))?;
    // The same user and group inside as outside: files keep their owners.
    let write = |file: &str, text: String| {
        std::fs::write(format!("/proc/self/{file}"), text).map_err(|e| format!("/proc/self/{file}: {e}"))
    };
    write("setgroups", "deny".into())?;
    write("uid_map", format!("{uid} {uid} 1"))?;
    write("gid_map", format!("{gid} {gid} 1"))?;
    let none: Option<&str> = None;
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none).map_err(|e| format!("private mounts: {e}"))?;

    // The protected entries first, read-only, and the writable roots bound over themselves: a
    // failure here leaves every mount as it was, and the caller goes on with Landlock alone.
    let mounts = mount_table()?;
    for kept in &policy.read_only {
        if std::fs::symlink_metadata(kept).is_err() {
            continue;
        }
        let flags = flags_at(&mounts, kept);
        bind(kept)?;
        remount(kept, flags | MsFlags::MS_RDONLY).map_err(|e| format!("{}: {e}", kept.display()))?;
    }
    for root in &policy.writable_roots {
        bind(root)?;
    }
    // Then every other mount read-only (the roots, and what is mounted inside them, stay as
    // they are; a mount hidden under another, or gone, needs nothing).
    for entry in mount_table()? {
        if policy.writable_roots.iter().any(|root| entry.point.starts_with(root)) {
            continue;
        }
        let _ = remount(&entry.point, entry.flags | MsFlags::MS_RDONLY);
    }
    // The working directory still points into the mounts as they were: taken again by its path,
    // it goes through the new ones.
    if let Ok(cwd) = std::env::current_dir() {
        std::env::set_current_dir(cwd).map_err(|e| format!("working directory: {e}"))?;
    }
    Ok(())
}

fn bind(path: &Path) -> Result<(), String> {
    let none: Option<&str> = None;
    mount(Some(path), path, none, MsFlags::MS_BIND | MsFlags::MS_REC, none)
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn remount(point: &Path, flags: MsFlags) -> nix::Result<()> {
    let none: Option<&str> = None;
    mount(none, point, none, MsFlags::MS_REMOUNT | MsFlags::MS_BIND | flags, none)
}

/// The flags of the mount `path` lies in (the deepest mount point above it).
fn flags_at(mounts: &[MountEntry], path: &Path) -> MsFlags {
    mounts
        .iter()
        .filter(|entry| path.starts_with(&entry.point))
        .max_by_key(|entry| entry.point.as_os_str().len())
        .map_or(MsFlags::empty(), |entry| entry.flags)
}

fn mount_table() -> Result<Vec<MountEntry>, String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
    Ok(text.lines().filter_map(parse_line).collect())
}

/// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw`: the fifth field is the
/// mount point (octal escapes for space, tab, newline and backslash), the sixth its flags.
fn parse_line(line: &str) -> Option<MountEntry> {
    let mut fields = line.split(' ');
    let point = fields.nth(4)?;
    let options = fields.next()?;
    let mut flags = MsFlags::empty();
    for option in options.split(',') {
        flags |= match option {
            "ro" => MsFlags::MS_RDONLY,
            "nosuid" => MsFlags::MS_NOSUID,
            "nodev" => MsFlags::MS_NODEV,
            "noexec" => MsFlags::MS_NOEXEC,
            "noatime" => MsFlags::MS_NOATIME,
            "nodiratime" => MsFlags::MS_NODIRATIME,
            "relatime" => MsFlags::MS_RELATIME,
            _ => MsFlags::empty(),
        };
    }
    if !flags.intersects(MsFlags::MS_NOATIME | MsFlags::MS_RELATIME) {
        flags |= MsFlags::MS_STRICTATIME;
    }
    Some(MountEntry { point: PathBuf::from(unescape(point)), flags })
}

fn unescape(field: &str) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match (bytes[i], octal) {
            (b'\\', Some(digits)) => {
                out.push(digits.iter().fold(0u8, |n, d| n.wrapping_mul(8).wrapping_add(d - b'0')));
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    std::ffi::OsString::from_vec(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_lines_give_the_point_and_the_flags_a_remount_keeps() {
        let entry =
            parse_line("36 35 98:0 /mnt1 /my\\040disk rw,nosuid,nodev,noatime master:1 - ext3 /dev/root rw").unwrap();
        assert_eq!(entry.point, PathBuf::from("/my disk"));
        assert_eq!(entry.flags, MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOATIME);
        let strict = parse_line("1 0 8:1 / / ro - ext4 /dev/sda1 ro").unwrap();
        assert_eq!(strict.flags, MsFlags::MS_RDONLY | MsFlags::MS_STRICTATIME);
        let mounts = vec![strict, entry];
        assert_eq!(
            flags_at(&mounts, Path::new("/my disk/x")),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOATIME
        );
        assert_eq!(flags_at(&mounts, Path::new("/etc")), MsFlags::MS_RDONLY | MsFlags::MS_STRICTATIME);
    }
}
