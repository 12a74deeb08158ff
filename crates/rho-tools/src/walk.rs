//! The directory walk grep and find share, with ripgrep's rules: `.gitignore` (also outside a git
//! repository, as the reference effectively does), `.ignore`, the global gitignore and
//! `.git/info/exclude` apply; hidden files are included; `.git` itself is never entered.
//! Results are shown relative to the searched directory with `/` separators.

use std::path::Path;

use ignore::WalkBuilder;

/// A walker over `root` with the shared rules; `extra_ignore` names a tool's own ignore file
/// (`.rgignore`, `.fdignore`).
pub fn walker(root: &Path, extra_ignore: &str) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .parents(true)
        .follow_links(false)
        .add_custom_ignore_filename(extra_ignore)
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// `path` relative to `root` with `/` separators; the file name when it is not under `root`.
pub fn display_path(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if !rel.as_os_str().is_empty() => {
            rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
        }
        _ => path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_paths_are_relative_with_slashes() {
        let root = Path::new("/r");
        assert_eq!(display_path(root, Path::new("/r/a/b.rs")), "a/b.rs");
        assert_eq!(display_path(root, Path::new("/elsewhere/c.rs")), "c.rs");
    }
}
