//! Turning a path argument from the model into a file system path (`resolveToCwd`): a leading
//! `@` is dropped (models copy `@file` mentions), Unicode spaces become ASCII spaces, `~` is the
//! home directory, and relative paths are taken against the session's working directory.
//! Results are lexically normalized (`.` and `..` folded) like Node's `path.resolve`.
//!
//! `read` also tries the spellings macOS gives screenshot files (U+202F before AM/PM,
//! decomposed Unicode, a curly apostrophe) when the plain path does not exist.

use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

const NARROW_NO_BREAK_SPACE: char = '\u{202F}';

fn is_unicode_space(c: char) -> bool {
    matches!(c, '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}')
}

/// `@`, Unicode spaces and `~` handled; still possibly relative.
pub fn expand_path(raw: &str) -> PathBuf {
    let stripped = raw.strip_prefix('@').unwrap_or(raw);
    let spaced: String = stripped.chars().map(|c| if is_unicode_space(c) { ' ' } else { c }).collect();
    if spaced == "~" {
        if let Some(home) = dirs::home_dir() {
            return home;
        }
    } else if let Some(rest) = spaced.strip_prefix("~/")
        && let Some(home) = dirs::home_dir()
    {
        return home.join(rest);
    }
    PathBuf::from(spaced)
}

/// The absolute, normalized path an argument names, relative paths taken against `cwd`.
pub fn resolve_to_cwd(raw: &str, cwd: &Path) -> PathBuf {
    let expanded = expand_path(raw);
    let joined = if expanded.is_absolute() { expanded } else { cwd.join(expanded) };
    normalize(&joined)
}

/// Like [`resolve_to_cwd`], then the macOS screenshot spellings when the plain path is missing;
/// the first that exists wins, else the plain path.
pub fn resolve_read_path(raw: &str, cwd: &Path) -> PathBuf {
    let resolved = resolve_to_cwd(raw, cwd);
    if resolved.exists() {
        return resolved;
    }
    let Some(text) = resolved.to_str() else {
        return resolved;
    };
    let am_pm = text
        .replace(" AM.", &format!("{NARROW_NO_BREAK_SPACE}AM."))
        .replace(" PM.", &format!("{NARROW_NO_BREAK_SPACE}PM."));
    let nfd: String = text.nfd().collect();
    let curly = text.replace('\'', "\u{2019}");
    let nfd_curly = nfd.replace('\'', "\u{2019}");
    [am_pm, nfd, curly, nfd_curly]
        .into_iter()
        .filter(|candidate| candidate != text)
        .map(PathBuf::from)
        .find(|candidate| candidate.exists())
        .unwrap_or(resolved)
}

/// The file `path` (absolute, normalized) names, for telling whether two writes touch the same
/// file: symlinks in the part of the path that exists are resolved, so `link.txt` and the file
/// it points to, or a file reached through a symlinked directory, compare equal. The part that
/// does not exist yet (a file `write` will create, with its new directories) is kept as given.
pub fn write_identity(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return missing.iter().rev().fold(real, |acc, name| acc.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_owned());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Folds `.` and `..` without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_at_and_resolves_relative_paths() {
        let cwd = Path::new("/work/project");
        assert_eq!(resolve_to_cwd("@src/main.rs", cwd), PathBuf::from("/work/project/src/main.rs"));
        assert_eq!(resolve_to_cwd("/etc/hosts", cwd), PathBuf::from("/etc/hosts"));
        assert_eq!(resolve_to_cwd("../x/./y", cwd), PathBuf::from("/work/x/y"));
        assert_eq!(resolve_to_cwd(".", cwd), PathBuf::from("/work/project"));
    }

    #[test]
    fn replaces_unicode_spaces() {
        let cwd = Path::new("/w");
        assert_eq!(resolve_to_cwd("a\u{00A0}b\u{3000}c", cwd), PathBuf::from("/w/a b c"));
    }

    #[test]
    fn expands_home() {
        let home = dirs::home_dir().unwrap();
        assert_eq!(resolve_to_cwd("~", Path::new("/w")), home);
        assert_eq!(resolve_to_cwd("~/notes.txt", Path::new("/w")), home.join("notes.txt"));
        assert_eq!(resolve_to_cwd("~user", Path::new("/w")), PathBuf::from("/w/~user"));
    }

    #[test]
    fn write_identity_sees_through_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::fs::write(root.join("real/a.txt"), "a").unwrap();
        std::os::unix::fs::symlink(root.join("real/a.txt"), root.join("link.txt")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("linkdir")).unwrap();

        let a = root.join("real/a.txt");
        assert_eq!(write_identity(&a), a);
        assert_eq!(write_identity(&root.join("link.txt")), a);
        assert_eq!(write_identity(&root.join("linkdir/a.txt")), a);
        // Files and directories still to be created keep their names under the resolved part.
        assert_eq!(write_identity(&root.join("linkdir/new/b.txt")), root.join("real/new/b.txt"));
        assert_eq!(write_identity(Path::new("/nonexistent-root-dir/x")), PathBuf::from("/nonexistent-root-dir/x"));
    }

    #[test]
    fn read_path_finds_macos_screenshot_names() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("Screenshot 2024-01-01 at 10.00.00\u{202F}AM.png");
        std::fs::write(&real, b"x").unwrap();
        let asked = "Screenshot 2024-01-01 at 10.00.00 AM.png";
        assert_eq!(resolve_read_path(asked, dir.path()), real);

        let curly = dir.path().join("Bob\u{2019}s file.txt");
        std::fs::write(&curly, b"x").unwrap();
        assert_eq!(resolve_read_path("Bob's file.txt", dir.path()), curly);

        assert_eq!(resolve_read_path("missing.txt", dir.path()), dir.path().join("missing.txt"));
    }
}
