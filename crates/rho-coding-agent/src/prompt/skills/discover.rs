//! Finding skill files under one skills directory.
//!
//! Root-level `*.md` files are skills; below the root, a directory holding `SKILL.md` is a
//! skill and is not descended further. Dot-entries and `node_modules` are skipped, and
//! `.gitignore`, `.ignore` and `.fdignore` files inside the tree are honoured (ripgrep's
//! `ignore` crate does the walking; ignore files above the root and global git excludes are
//! not consulted, so a project that ignores its `.rho/` folder still has its skills).

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

use crate::prompt::resource::ResourceDiagnostic;

/// The skill file name inside a skill directory.
pub const SKILL_FILE: &str = "SKILL.md";

/// Skill files under `root`, sorted by path within each directory; nothing when `root` is not a
/// directory.
pub(crate) fn skill_files(root: &Path, diagnostics: &mut Vec<ResourceDiagnostic>) -> Vec<PathBuf> {
    if !root.is_dir() {
        return Vec::new();
    }
    let walker = WalkBuilder::new(root)
        .standard_filters(false)
        .hidden(true)
        .ignore(true)
        .git_ignore(true)
        .require_git(false)
        .add_custom_ignore_filename(".fdignore")
        .follow_links(true)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| {
            if entry.file_name() == "node_modules" {
                return false;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if is_dir && entry.depth() >= 2 {
                // Inside a skill directory nothing further is a skill.
                if let Some(parent) = entry.path().parent() {
                    return !parent.join(SKILL_FILE).is_file();
                }
            }
            true
        })
        .build();

    let mut files = Vec::new();
    for result in walker {
        let entry = match result {
            Ok(entry) => entry,
            Err(e) => {
                diagnostics.push(ResourceDiagnostic::new(root, format!("error while searching for skills: {e}")));
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let name = entry.file_name();
        let is_skill = if entry.depth() == 1 {
            Path::new(name).extension().is_some_and(|e| e == "md")
        } else {
            name == SKILL_FILE
        };
        if is_skill {
            files.push(entry.into_path());
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn touch(path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "x").unwrap();
    }

    #[test]
    fn finds_root_md_files_and_skill_dirs() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("skills");
        touch(&root.join("quick.md"));
        touch(&root.join("notes.txt"));
        touch(&root.join("alpha/SKILL.md"));
        touch(&root.join("alpha/reference.md"));
        touch(&root.join("alpha/nested/SKILL.md"));
        touch(&root.join("group/beta/SKILL.md"));
        touch(&root.join("group/readme.md"));
        touch(&root.join(".hidden/SKILL.md"));
        touch(&root.join("node_modules/pkg/SKILL.md"));
        touch(&root.join("ignored/SKILL.md"));
        fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
        touch(&root.join("fd/SKILL.md"));
        fs::write(root.join(".fdignore"), "fd\n").unwrap();

        let mut diags = Vec::new();
        let files = skill_files(&root, &mut diags);
        assert!(diags.is_empty());
        let rel: Vec<String> =
            files.iter().map(|p| p.strip_prefix(&root).unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(rel, ["alpha/SKILL.md", "group/beta/SKILL.md", "quick.md"]);
    }

    #[test]
    fn missing_root_is_empty() {
        let mut diags = Vec::new();
        assert!(skill_files(Path::new("/nonexistent/skills/dir"), &mut diags).is_empty());
        assert!(diags.is_empty());
    }
}
