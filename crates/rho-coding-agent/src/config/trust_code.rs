//! What a trust decision approved: a digest of the project's own code (see
//! [`super::trust::project_code`]) taken when the folder was trusted, kept in
//! `<agent dir>/trusted-code.json` (rho's own file; pi's `trust.json` keeps pi's format). Code
//! that changed since, whoever changed it (a confined command planting an extension, a pull, a
//! download), is not run until the user trusts the folder again. A folder trusted before any
//! digest was kept (in pi, or by an older rho) has its digest taken at its next start.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The files whose whole content is project code.
const CODE_FILES: [&str; 3] = [".mcp.json", ".pi/mcp.json", ".rho/mcp.json"];

/// The folders whose every file is project code: extensions and sub-agent definitions.
const CODE_FOLDERS: [&str; 5] = [".pi/extensions", ".rho/extensions", ".rho/agents", ".omp/agents", ".pi/agents"];

/// The settings files whose code settings ([`super::trust::CODE_SETTINGS`]) are project code.
const SETTINGS_FILES: [&str; 2] = [".pi/settings.json", ".rho/settings.json"];

/// Content hashed in full up to this much; past it, a file counts by its size and time.
const CONTENT_BUDGET: u64 = 64 * 1024 * 1024;

/// The state of a trusted folder's code against its digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeState {
    /// As it was when trusted.
    Unchanged,
    /// No digest was kept; one is now.
    Recorded,
    /// Changed since it was trusted.
    Changed,
}

fn digests_file(agent_dir: &Path) -> PathBuf {
    agent_dir.join("trusted-code.json")
}

fn read_digests(agent_dir: &Path) -> serde_json::Map<String, serde_json::Value> {
    std::fs::read_to_string(digests_file(agent_dir))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|value| value.as_object().cloned())
        .unwrap_or_default()
}

/// Compares the code of `dir` with its digest; keeps one when there was none.
pub fn check(agent_dir: &Path, dir: &Path) -> CodeState {
    let now = digest(dir);
    match read_digests(agent_dir).get(&super::trust::key(dir)).and_then(|v| v.as_str()) {
        Some(kept) if kept == now => CodeState::Unchanged,
        Some(_) => CodeState::Changed,
        None => {
            if let Err(e) = record_digest(agent_dir, dir, now) {
                tracing::warn!("cannot keep the digest of {}'s code: {e}", dir.display());
            }
            CodeState::Recorded
        }
    }
}

/// Keeps the digest of `dir`'s code as it is now (the folder was just trusted).
pub fn record(agent_dir: &Path, dir: &Path) -> std::io::Result<()> {
    record_digest(agent_dir, dir, digest(dir))
}

fn record_digest(agent_dir: &Path, dir: &Path, digest: String) -> std::io::Result<()> {
    let mut digests = read_digests(agent_dir);
    digests.insert(super::trust::key(dir), serde_json::Value::String(digest));
    let sorted: std::collections::BTreeMap<_, _> = digests.into_iter().collect();
    let text = serde_json::to_string_pretty(&sorted).map_err(std::io::Error::other)?;
    super::trust::write_private(agent_dir, &digests_file(agent_dir), text + "\n")
}

/// `sha256:<hex>` of the project code of `cwd`: each part named by its path, so a file moved
/// between places changes it too.
pub fn digest(cwd: &Path) -> String {
    let mut hasher = Sha256::new();
    let mut budget = CONTENT_BUDGET;
    for file in CODE_FILES {
        hash_file(&mut hasher, cwd, Path::new(file), &mut budget);
    }
    for folder in CODE_FOLDERS {
        let mut files: Vec<PathBuf> = ignore::WalkBuilder::new(cwd.join(folder))
            .standard_filters(false)
            .follow_links(false)
            .build()
            .flatten()
            .filter(|entry| entry.file_type().is_some_and(|t| !t.is_dir()))
            .filter_map(|entry| entry.path().strip_prefix(cwd).ok().map(Path::to_path_buf))
            .collect();
        files.sort();
        for file in files {
            hash_file(&mut hasher, cwd, &file, &mut budget);
        }
    }
    for file in SETTINGS_FILES {
        let Some(value) = std::fs::read_to_string(cwd.join(file))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        else {
            continue;
        };
        for key in super::trust::CODE_SETTINGS {
            let pointer = format!("/{}", key.replace('.', "/"));
            if let Some(code) = value.pointer(&pointer) {
                hasher.update(format!("{file}#{key}\0{code}\0").as_bytes());
            }
        }
    }
    let hex: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn hash_file(hasher: &mut Sha256, cwd: &Path, rel: &Path, budget: &mut u64) {
    let path = cwd.join(rel);
    let Ok(meta) = std::fs::symlink_metadata(&path) else { return };
    hasher.update(rel.as_os_str().as_encoded_bytes());
    hasher.update([0]);
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&path).unwrap_or_default();
        hasher.update(b"link\0");
        hasher.update(target.as_os_str().as_encoded_bytes());
    } else if meta.len() <= *budget
        && let Ok(content) = std::fs::read(&path)
    {
        *budget -= meta.len();
        hasher.update(&content);
    } else {
        let modified = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        hasher.update(format!("{}:{:?}", meta.len(), modified).as_bytes());
    }
    hasher.update([0]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_that_changes_after_trust_is_seen_and_other_files_are_not() {
        let agent = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let dir = project.path();
        std::fs::create_dir_all(dir.join(".pi/extensions")).unwrap();
        std::fs::write(dir.join(".pi/extensions/a.ts"), "export default () => {}").unwrap();
        std::fs::write(dir.join(".pi/settings.json"), r#"{"model": "a", "packages": ["x"]}"#).unwrap();
        assert_eq!(check(agent.path(), dir), CodeState::Recorded);
        assert_eq!(check(agent.path(), dir), CodeState::Unchanged);
        // Not code: the project's sources, a settings key that runs nothing.
        std::fs::write(dir.join("main.rs"), "fn main() {}").unwrap();
        std::fs::write(dir.join(".pi/settings.json"), r#"{"model": "b", "packages": ["x"]}"#).unwrap();
        assert_eq!(check(agent.path(), dir), CodeState::Unchanged);
        for change in [
            (".pi/extensions/nested/b.ts", "planted"),
            (".mcp.json", r#"{"mcpServers": {"x": {"command": "sh"}}}"#),
            (".rho/agents/task.md", "---\ntools: bash\n---\nplanted"),
        ] {
            std::fs::create_dir_all(dir.join(change.0).parent().unwrap()).unwrap();
            std::fs::write(dir.join(change.0), change.1).unwrap();
            assert_eq!(check(agent.path(), dir), CodeState::Changed, "{}", change.0);
            record(agent.path(), dir).unwrap();
            assert_eq!(check(agent.path(), dir), CodeState::Unchanged);
        }
        std::fs::write(dir.join(".pi/settings.json"), r#"{"model": "b", "packages": ["y"]}"#).unwrap();
        assert_eq!(check(agent.path(), dir), CodeState::Changed);
    }
}
