//! Context files: the `AGENTS.md` (else `CLAUDE.md`) of the agent dir and of every directory
//! from the filesystem root down to the working directory, which the system prompt includes
//! under "# Project Context", in that order (general first, most specific last). A directory's
//! `AGENTS.override.md` (pi 1.6) stands in for its `AGENTS.md` or `CLAUDE.md`, and for nothing
//! else.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::resource::ResourceDiagnostic;
use crate::config::ConfigPaths;

/// The names looked for in each directory, preferred first; one file per directory.
pub const CONTEXT_FILE_NAMES: [&str; 5] = ["AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];

/// One loaded context file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// Absolute path, as shown in the prompt.
    pub path: PathBuf,
    pub content: String,
}

/// The context files for `paths`, and a diagnostic for each one that exists but cannot be read.
pub fn load_context_files(paths: &ConfigPaths) -> (Vec<ContextFile>, Vec<ResourceDiagnostic>) {
    let mut dirs = vec![paths.agent_dir.clone()];
    let mut ancestors: Vec<PathBuf> = paths.cwd.ancestors().map(Path::to_path_buf).collect();
    ancestors.reverse();
    dirs.extend(ancestors);

    let mut files = Vec::new();
    let mut diagnostics = Vec::new();
    let mut seen = HashSet::new();
    for dir in dirs {
        let Some(path) = CONTEXT_FILE_NAMES.iter().map(|name| dir.join(name)).find(|p| p.is_file()) else {
            continue;
        };
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !seen.insert(key) {
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(content) => files.push(ContextFile { path, content }),
            Err(e) => diagnostics.push(ResourceDiagnostic::new(path, format!("cannot read context file: {e}"))),
        }
    }
    (files, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Only the files of the test's own tree (a machine may have context files above it).
    fn under(root: &Path, files: Vec<ContextFile>) -> Vec<ContextFile> {
        files.into_iter().filter(|f| f.path.starts_with(root)).collect()
    }

    #[test]
    fn agent_dir_then_root_down_to_cwd() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let agent = root.join("home/.rho/agent");
        let parent = root.join("work");
        let cwd = parent.join("proj");
        fs::create_dir_all(&agent).unwrap();
        fs::create_dir_all(&cwd).unwrap();
        fs::write(agent.join("AGENTS.md"), "global").unwrap();
        fs::write(parent.join("CLAUDE.md"), "parent claude").unwrap();
        fs::write(cwd.join("AGENTS.md"), "project").unwrap();
        fs::write(cwd.join("CLAUDE.md"), "ignored: AGENTS.md wins").unwrap();

        let paths = ConfigPaths::new(Some(root.join("home")), agent.clone(), cwd.clone());
        let (files, diags) = load_context_files(&paths);
        assert!(diags.is_empty());
        let files = under(root, files);
        let got: Vec<(PathBuf, &str)> = files.iter().map(|f| (f.path.clone(), f.content.as_str())).collect();
        assert_eq!(
            got,
            [
                (agent.join("AGENTS.md"), "global"),
                (parent.join("CLAUDE.md"), "parent claude"),
                (cwd.join("AGENTS.md"), "project"),
            ]
        );
    }

    #[test]
    fn an_override_replaces_its_own_folder_s_file_only() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let agent = root.join("agent");
        let cwd = root.join("proj");
        fs::create_dir_all(&agent).unwrap();
        fs::create_dir_all(&cwd).unwrap();
        fs::write(agent.join("AGENTS.md"), "global").unwrap();
        fs::write(root.join("AGENTS.md"), "parent").unwrap();
        fs::write(cwd.join("AGENTS.md"), "project").unwrap();
        fs::write(cwd.join("AGENTS.override.md"), "project override").unwrap();
        let (files, _) = load_context_files(&ConfigPaths::new(None, agent, cwd.clone()));
        let ours = under(root, files.clone());
        let contents: Vec<&str> = ours.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(contents, ["global", "parent", "project override"]);
        assert_eq!(files.last().unwrap().path, cwd.join("AGENTS.override.md"));
    }

    #[test]
    fn agent_dir_inside_the_tree_is_not_read_twice() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("proj");
        fs::create_dir_all(&cwd).unwrap();
        fs::write(cwd.join("AGENTS.md"), "once").unwrap();
        let paths = ConfigPaths::new(None, cwd.clone(), cwd.clone());
        let (files, _) = load_context_files(&paths);
        let files = under(tmp.path(), files);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].content, "once");
    }

    #[test]
    fn unreadable_file_is_reported_and_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("proj");
        fs::create_dir_all(&cwd).unwrap();
        fs::write(tmp.path().join("AGENTS.md"), "parent").unwrap();
        // Not UTF-8: reading it as text fails whoever runs the test.
        let file = cwd.join("AGENTS.md");
        fs::write(&file, [0xff, 0xfe, 0x00, 0xc3]).unwrap();
        let paths = ConfigPaths::new(None, tmp.path().join("agent"), cwd);
        let (files, diags) = load_context_files(&paths);
        let files = under(tmp.path(), files);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].content, "parent");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].path, file);
        assert!(diags[0].message.starts_with("cannot read context file"));
    }
}
