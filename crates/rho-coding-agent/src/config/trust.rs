//! Project trust: a project's own code (its MCP servers, its extensions and packages, its
//! settings that choose what commands run) is used only in a folder the user approved.
//!
//! The decisions are pi 1.6's, in its file, so one decision serves both agents:
//! `<agent dir>/trust.json` maps canonical folders to `true` (trusted), `false` (declined) or
//! `null` (no decision), and the nearest folder with a decision, the project's own or one above
//! it, decides. When rho has an agent directory of its own, pi's `trust.json` (in
//! `PI_CODING_AGENT_DIR`, else `~/.pi/agent`) is read beside it, so a folder approved in pi is
//! approved in rho (rho's own decision for the same folder wins); rho writes only its own. `rho trust` and `rho untrust` write it (pi's `/trust`); rho's older
//! `<agent dir>/trusted-projects.json` is still read for folders with no decision there. Without
//! any decision, the agent directory's `defaultProjectTrust` setting applies (`"always"` trusts;
//! `"ask"`, the default, and `"never"` do not). `--trust-project` (`--approve`) trusts and
//! `--no-approve` declines for one run.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The project settings that make rho run something (or let something run unasked): ignored in
/// a project not trusted.
pub const CODE_SETTINGS: &[&str] =
    &["shellPath", "shellCommandPrefix", "bash.environment", "packages", "extensions", "permissions.allow", "hooks"];

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

/// The decisions file of `agent_dir` (pi 1.6's `trust.json`).
pub fn trust_file(agent_dir: &Path) -> PathBuf {
    agent_dir.join("trust.json")
}

/// rho's older approvals file, read for folders `trust.json` has no decision for.
fn legacy_file(agent_dir: &Path) -> PathBuf {
    agent_dir.join("trusted-projects.json")
}

/// `trust.json` as a map of folder to decision (`None` for `null`); empty when missing or
/// unreadable (an unreadable file decides nothing, and is never overwritten by `trust`).
fn read_decisions(agent_dir: &Path) -> std::io::Result<serde_json::Map<String, serde_json::Value>> {
    match std::fs::read_to_string(trust_file(agent_dir)) {
        Ok(text) => match serde_json::from_str::<serde_json::Value>(text.trim_start_matches('\u{feff}')) {
            Ok(serde_json::Value::Object(map)) => Ok(map),
            _ => Err(std::io::Error::other(format!("{} is not a JSON object", trust_file(agent_dir).display()))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(serde_json::Map::new()),
        Err(e) => Err(e),
    }
}

/// pi's agent directory, when it is not `agent_dir`: `PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
fn pi_agent_dir(agent_dir: &Path) -> Option<PathBuf> {
    let home = dirs::home_dir();
    let pi = match std::env::var_os(super::paths::PI_AGENT_DIR_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => super::paths::expand_tilde(&dir.to_string_lossy(), home.as_deref()),
        None => home?.join(".pi").join("agent"),
    };
    let same = |a: &Path, b: &Path| a.canonicalize().ok().zip(b.canonicalize().ok()).is_some_and(|(a, b)| a == b);
    (pi != agent_dir && !same(&pi, agent_dir)).then_some(pi)
}

/// The nearest decision for `dir` or a folder above it, in rho's file and pi's.
fn decision(agent_dir: &Path, dir: &Path) -> Option<bool> {
    let mut decisions = pi_agent_dir(agent_dir).and_then(|pi| read_decisions(&pi).ok()).unwrap_or_default();
    decisions.extend(read_decisions(agent_dir).ok()?);
    let dir = PathBuf::from(key(dir));
    dir.ancestors().find_map(|folder| decisions.get(folder.to_string_lossy().as_ref())?.as_bool())
}

/// The agent directory's `defaultProjectTrust` (`ask` when unset or unreadable).
pub fn default_project_trust(agent_dir: &Path) -> String {
    std::fs::read_to_string(agent_dir.join("settings.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| v.get("defaultProjectTrust")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| "ask".to_owned())
}

/// The folder's key: its canonical path (a symlinked path is the folder it names).
pub(super) fn key(dir: &Path) -> String {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()).to_string_lossy().into_owned()
}

fn read_legacy(agent_dir: &Path) -> TrustFile {
    std::fs::read_to_string(legacy_file(agent_dir))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// Whether `dir` is trusted: the nearest decision in `trust.json`, else rho's older approval,
/// else `defaultProjectTrust: "always"`.
pub fn is_trusted(agent_dir: &Path, dir: &Path) -> bool {
    match decision(agent_dir, dir) {
        Some(trusted) => trusted,
        None => read_legacy(agent_dir).projects.contains_key(&key(dir)) || default_project_trust(agent_dir) == "always",
    }
}

/// Whether a decision (not the default) says `dir` is declined: nothing asks about it then.
pub fn is_declined(agent_dir: &Path, dir: &Path) -> bool {
    decision(agent_dir, dir) == Some(false)
}

/// Trusts `dir` (and its code as it is now, see [`super::trust_code`]) from now on; `false`
/// when it already was.
pub fn trust(agent_dir: &Path, dir: &Path) -> std::io::Result<bool> {
    let was = is_trusted(agent_dir, dir);
    set_decision(agent_dir, dir, true)?;
    super::trust_code::record(agent_dir, dir)?;
    Ok(!was)
}

/// Whether `dir` is trusted by a decision (not by `defaultProjectTrust`) and its code changed
/// since: it is then not run until trusted again.
pub fn code_changed(agent_dir: &Path, dir: &Path) -> bool {
    let decided = match decision(agent_dir, dir) {
        Some(trusted) => trusted,
        None => read_legacy(agent_dir).projects.contains_key(&key(dir)),
    };
    decided && super::trust_code::check(agent_dir, dir) == super::trust_code::CodeState::Changed
}

/// Declines `dir` from now on (pi's "Do not trust"); `false` when it was not trusted.
pub fn untrust(agent_dir: &Path, dir: &Path) -> std::io::Result<bool> {
    let was = is_trusted(agent_dir, dir);
    set_decision(agent_dir, dir, false)?;
    let mut legacy = read_legacy(agent_dir);
    if legacy.projects.remove(&key(dir)).is_some() {
        let text = serde_json::to_string_pretty(&legacy).map_err(std::io::Error::other)?;
        write_private(agent_dir, &legacy_file(agent_dir), text)?;
    }
    Ok(was)
}

/// Records `dir`'s decision in `trust.json`, keeping the others, keys sorted as pi writes them.
fn set_decision(agent_dir: &Path, dir: &Path, trusted: bool) -> std::io::Result<()> {
    let mut decisions = read_decisions(agent_dir)?;
    decisions.insert(key(dir), serde_json::Value::Bool(trusted));
    let sorted: BTreeMap<String, serde_json::Value> = decisions.into_iter().collect();
    let mut text = serde_json::to_string_pretty(&sorted).map_err(std::io::Error::other)?;
    text.push('\n');
    write_private(agent_dir, &trust_file(agent_dir), text)
}

/// Written whole to a private temporary file and renamed over the old one.
pub(super) fn write_private(agent_dir: &Path, path: &Path, text: String) -> std::io::Result<()> {
    std::fs::create_dir_all(agent_dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(agent_dir)?;
    temp.write_all(text.as_bytes())?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// What in the project at `cwd` would run code, one line each (for the notice and the
/// question): its MCP config files, extension and sub-agent folders that exist, and its
/// settings files that set [`CODE_SETTINGS`].
pub fn project_code(cwd: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for file in [".mcp.json", ".pi/mcp.json", ".rho/mcp.json"] {
        if let Some(servers) = mcp_servers(&cwd.join(file)) {
            found.push(format!("{file} (MCP servers: {servers})"));
        }
    }
    for dir in [".pi/extensions", ".rho/extensions"] {
        if std::fs::read_dir(cwd.join(dir)).is_ok_and(|mut entries| entries.next().is_some()) {
            found.push(format!("{dir}/ (extensions)"));
        }
    }
    for dir in [".rho/agents", ".omp/agents", ".pi/agents"] {
        if std::fs::read_dir(cwd.join(dir)).is_ok_and(|mut entries| entries.next().is_some()) {
            found.push(format!("{dir}/ (sub-agents, which may replace rho's own)"));
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
    fn pi_1_6s_decisions_are_shared_nearest_folder_first() {
        let dir = tempfile::tempdir().unwrap();
        let (agent, parent) = (dir.path().join("agent"), dir.path().join("work"));
        let (child, declined) = (parent.join("app"), parent.join("vendor"));
        for d in [&child, &declined] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir_all(&agent).unwrap();
        let canonical = |p: &Path| p.canonicalize().unwrap().to_string_lossy().into_owned();
        let decisions = serde_json::json!({canonical(&parent): true, canonical(&declined): false, "/elsewhere": null});
        std::fs::write(trust_file(&agent), decisions.to_string()).unwrap();
        assert!(is_trusted(&agent, &child), "a trusted parent folder trusts what is in it");
        assert!(!is_trusted(&agent, &declined) && is_declined(&agent, &declined), "the nearest decision wins");
        assert!(!is_trusted(&agent, dir.path()), "not the folder above");

        // rho's older approvals still count where pi's file says nothing.
        let legacy = serde_json::json!({"projects": {canonical(dir.path()): "2026-01-01T00:00:00Z"}});
        std::fs::write(agent.join("trusted-projects.json"), legacy.to_string()).unwrap();
        assert!(is_trusted(&agent, dir.path()));
        assert!(untrust(&agent, dir.path()).unwrap());
        assert!(!is_trusted(&agent, dir.path()) && is_declined(&agent, dir.path()));

        // `rho trust` writes pi's file, keeping its other decisions, keys sorted.
        assert!(trust(&agent, &declined).unwrap());
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(trust_file(&agent)).unwrap()).unwrap();
        assert_eq!(written[canonical(&declined)], true);
        assert_eq!(written[canonical(&parent)], true);
        assert_eq!(written["/elsewhere"], serde_json::Value::Null);
        let keys: Vec<&String> = written.as_object().unwrap().keys().collect();
        assert!(keys.is_sorted(), "{keys:?}");

        // With no decision, the agent directory's defaultProjectTrust; a decision still wins.
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(!is_trusted(&agent, elsewhere.path()));
        std::fs::write(agent.join("settings.json"), r#"{"defaultProjectTrust": "always"}"#).unwrap();
        assert!(is_trusted(&agent, elsewhere.path()));
        assert!(!is_trusted(&agent, dir.path()), "declined above, whatever the default");
    }

    #[test]
    fn an_unreadable_decisions_file_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let (agent, project) = (dir.path().join("agent"), dir.path().join("project"));
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(trust_file(&agent), "{not json").unwrap();
        assert!(!is_trusted(&agent, &project));
        assert!(trust(&agent, &project).is_err());
        assert_eq!(std::fs::read_to_string(trust_file(&agent)).unwrap(), "{not json");
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
