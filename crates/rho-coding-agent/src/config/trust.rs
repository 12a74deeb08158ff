//! Project trust: a project's own code (its MCP servers, its extensions and packages, its
//! settings that choose what commands run) is used only in a folder the user approved. The
//! approvals are `<agent dir>/trusted-projects.json` (`rho trust`, `rho untrust`), private to the
//! user; `--trust-project` approves for one run.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The project settings that make rho run something (or let something run unasked): ignored in
/// a project not trusted.
pub const CODE_SETTINGS: &[&str] =
    &["shellPath", "shellCommandPrefix", "bash.environment", "packages", "extensions", "permissions.allow"];

/// True for a project settings key that is one of [`CODE_SETTINGS`] (or inside one).
pub fn is_code_setting(key: &str) -> bool {
    super::settings::is_key_under(key, CODE_SETTINGS)
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    /// Canonical folder → when it was approved (ISO 8601).
    #[serde(default)]
    projects: BTreeMap<String, String>,
}

/// The approvals file of `agent_dir`.
pub fn trust_file(agent_dir: &Path) -> PathBuf {
    agent_dir.join("trusted-projects.json")
}

/// The folder's key: its canonical path (a symlinked path is the folder it names).
fn key(dir: &Path) -> String {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()).to_string_lossy().into_owned()
}

fn read(agent_dir: &Path) -> TrustFile {
    std::fs::read_to_string(trust_file(agent_dir))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// Whether the user approved `dir`.
pub fn is_trusted(agent_dir: &Path, dir: &Path) -> bool {
    read(agent_dir).projects.contains_key(&key(dir))
}

/// Approves `dir`; `false` when it already was.
pub fn trust(agent_dir: &Path, dir: &Path) -> std::io::Result<bool> {
    let mut file = read(agent_dir);
    let now =
        time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
    let added = file.projects.insert(key(dir), now).is_none();
    write(agent_dir, &file)?;
    Ok(added)
}

/// Withdraws the approval of `dir`; `false` when there was none.
pub fn untrust(agent_dir: &Path, dir: &Path) -> std::io::Result<bool> {
    let mut file = read(agent_dir);
    let removed = file.projects.remove(&key(dir)).is_some();
    if removed {
        write(agent_dir, &file)?;
    }
    Ok(removed)
}

/// Written whole to a private temporary file and renamed over the old one.
fn write(agent_dir: &Path, file: &TrustFile) -> std::io::Result<()> {
    std::fs::create_dir_all(agent_dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(agent_dir)?;
    let text = serde_json::to_string_pretty(file).map_err(std::io::Error::other)?;
    temp.write_all(text.as_bytes())?;
    temp.as_file().sync_all()?;
    temp.persist(trust_file(agent_dir)).map_err(|e| e.error)?;
    Ok(())
}

/// What in the project at `cwd` would run code, one line each (for the notice and the
/// question): its MCP config files and extension folders that exist, and its settings files
/// that set [`CODE_SETTINGS`].
pub fn project_code(cwd: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for file in [".mcp.json", ".rho/mcp.json"] {
        if let Some(servers) = mcp_servers(&cwd.join(file)) {
            found.push(format!("{file} (MCP servers: {servers})"));
        }
    }
    for dir in [".pi/extensions", ".rho/extensions"] {
        if std::fs::read_dir(cwd.join(dir)).is_ok_and(|mut entries| entries.next().is_some()) {
            found.push(format!("{dir}/ (extensions)"));
        }
    }
    for file in [".pi/settings.json", ".rho/settings.json"] {
        let keys = super::settings::file_keys(&cwd.join(file));
        let set: Vec<&str> = CODE_SETTINGS
            .iter()
            .copied()
            .filter(|code| keys.iter().any(|k| super::settings::is_key_under(k, &[code])))
            .collect();
        if !set.is_empty() {
            found.push(format!("{file} ({})", set.join(", ")));
        }
    }
    found
}

/// The server names of an MCP config file, when it exists and names any.
fn mcp_servers(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let names: Vec<String> = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) => value["mcpServers"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default(),
        Err(_) => return Some("unreadable".into()),
    };
    (!names.is_empty()).then(|| names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approvals_are_remembered_by_folder_and_can_be_withdrawn() {
        let dir = tempfile::tempdir().unwrap();
        let (agent, project) = (dir.path().join("agent"), dir.path().join("project"));
        std::fs::create_dir_all(&project).unwrap();
        assert!(!is_trusted(&agent, &project));
        assert!(trust(&agent, &project).unwrap());
        assert!(!trust(&agent, &project).unwrap(), "already trusted");
        assert!(is_trusted(&agent, &project.join("../project")), "the same folder by another path");
        assert!(!is_trusted(&agent, dir.path()), "not its parent");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(trust_file(&agent)).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(untrust(&agent, &project).unwrap());
        assert!(!is_trusted(&agent, &project));
        assert!(!untrust(&agent, &project).unwrap());
    }

    #[test]
    fn what_would_run_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        std::fs::write(cwd.join(".mcp.json"), r#"{"mcpServers": {"evil": {"command": "sh"}}}"#).unwrap();
        std::fs::create_dir_all(cwd.join(".pi/extensions")).unwrap();
        std::fs::write(cwd.join(".pi/extensions/x.ts"), "").unwrap();
        std::fs::write(
            cwd.join(".pi/settings.json"),
            r#"{"shellPath": "./sh", "bash": {"environment": {"A": "1"}}, "theme": "x"}"#,
        )
        .unwrap();
        assert_eq!(
            project_code(cwd),
            [
                ".mcp.json (MCP servers: evil)",
                ".pi/extensions/ (extensions)",
                ".pi/settings.json (shellPath, bash.environment)"
            ]
        );
        assert!(is_code_setting("bash.environment.LD_PRELOAD") && !is_code_setting("bashful"));
    }
}
