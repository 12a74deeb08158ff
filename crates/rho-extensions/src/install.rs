//! Getting the host onto the machine. The host's JavaScript is part of rho's binary and is
//! written to the host folder (`<agent dir>/extension-host/`, or `RHO_EXTENSION_HOST_DIR`); its
//! one dependency, pi's published package at [`PI_VERSION`], is installed there with `npm ci`
//! the first time an extension is used, with a line on stderr saying so. The lock file travels
//! with rho too, so every machine gets the dependency tree rho was tested with (the registry's
//! newest versions of pi's dependencies are not always installable together). Node.js 22.19 or
//! newer must be on the machine (`RHO_NODE` names another binary), as pi needs; without it,
//! [`InstallError::NoNode`] or [`InstallError::OldNode`] says what to install.
//!
//! Moving the pin: change [`PI_VERSION`] and `host/package.json`, run `npm install` in `host/`
//! to write `host/package-lock.json`, and run the tests; rho installs the new version into the
//! same folder on next use.

use std::path::{Path, PathBuf};
use std::process::Stdio;

/// The package the host loads extensions with: pi's, whose loader resolves both the scope
/// extensions import today (`@earendil-works/*`) and pi 0.73's (`@mariozechner/*`).
pub const PI_PACKAGE: &str = "@earendil-works/pi-coding-agent";

/// The version of [`PI_PACKAGE`] the host loads extensions with.
pub const PI_VERSION: &str = "1.6.0";

/// The oldest Node.js the host (and pi) runs on: major, minor.
const MIN_NODE: (u32, u32) = (22, 19);
/// [`MIN_NODE`] as people write it.
const MIN_NODE_TEXT: &str = "22.19";

/// The host's files, as they are written to the host folder.
const HOST_FILES: &[(&str, &str)] = &[
    ("package.json", include_str!("../host/package.json")),
    ("package-lock.json", include_str!("../host/package-lock.json")),
    ("host.mjs", include_str!("../host/host.mjs")),
    ("channel.mjs", include_str!("../host/channel.mjs")),
    ("session-mirror.mjs", include_str!("../host/session-mirror.mjs")),
    ("ui.mjs", include_str!("../host/ui.mjs")),
    ("components.mjs", include_str!("../host/components.mjs")),
    ("provider-streams.mjs", include_str!("../host/provider-streams.mjs")),
    ("native-providers.mjs", include_str!("../host/native-providers.mjs")),
    ("render.mjs", include_str!("../host/render.mjs")),
    ("resolve.mjs", include_str!("../host/resolve.mjs")),
    ("packages.mjs", include_str!("../host/packages.mjs")),
    ("output-cap.mjs", include_str!("../host/output-cap.mjs")),
    ("loading.mjs", include_str!("../host/loading.mjs")),
    ("virtual-models.mjs", include_str!("../host/virtual-models.mjs")),
    ("answers.mjs", include_str!("../host/answers.mjs")),
    ("project-trust.mjs", include_str!("../host/project-trust.mjs")),
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstallError {
    #[error(
        "Extensions need Node.js {MIN_NODE_TEXT} or newer with npm, and none was found ({0}). Install Node.js \
         (https://nodejs.org or your package manager), or start rho with --no-extensions."
    )]
    NoNode(String),
    #[error(
        "Extensions need Node.js {MIN_NODE_TEXT} or newer; {node} is {version}. Install a newer Node.js, or start rho \
         with --no-extensions."
    )]
    OldNode { node: String, version: String },
    #[error("cannot write the extension host to {path}: {error}")]
    Write { path: String, error: String },
    #[error(
        "cannot install the extension host into {dir}: {error}. Run `npm install` there by hand, or start rho with \
         --no-extensions."
    )]
    Npm { dir: String, error: String },
}

/// A host ready to start: the node binary and the entry script.
#[derive(Debug, Clone)]
pub struct Runtime {
    pub node: PathBuf,
    pub script: PathBuf,
    pub dir: PathBuf,
}

impl Runtime {
    /// The script behind `rho install | remove | update | list` (pi's package manager).
    pub fn packages_script(&self) -> PathBuf {
        self.dir.join("packages.mjs")
    }
}

/// Where the host lives: `RHO_EXTENSION_HOST_DIR`, else `<agent dir>/extension-host`.
pub fn host_dir(agent_dir: &Path) -> PathBuf {
    match std::env::var_os("RHO_EXTENSION_HOST_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => agent_dir.join("extension-host"),
    }
}

/// Finds Node.js, writes the host's files and installs pi's package when it is missing.
/// `progress` receives the one line said before an installation.
pub async fn prepare(agent_dir: &Path, progress: &mut (dyn FnMut(&str) + Send)) -> Result<Runtime, InstallError> {
    let node = find_node().await?;
    let dir = host_dir(agent_dir);
    write_files(&dir)?;
    if installed_version(&dir).as_deref() != Some(PI_VERSION) {
        install(&dir, &node, progress).await?;
    }
    Ok(Runtime { script: dir.join("host.mjs"), node, dir })
}

async fn find_node() -> Result<PathBuf, InstallError> {
    let node =
        std::env::var_os("RHO_NODE").filter(|v| !v.is_empty()).map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let output = tokio::process::Command::new(&node)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .await
        .map_err(|e| InstallError::NoNode(format!("{}: {e}", node.display())))?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    match node_version(&version) {
        Some(found) if found >= MIN_NODE => Ok(node),
        _ => Err(InstallError::OldNode { node: node.display().to_string(), version }),
    }
}

/// `v22.19.0` as (22, 19).
fn node_version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().trim_start_matches('v').split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |m| m.parse().ok())?;
    Some((major, minor))
}

/// Writes each host file whose contents differ (a newer rho replaces an older host).
fn write_files(dir: &Path) -> Result<(), InstallError> {
    let failed =
        |path: &Path, e: std::io::Error| InstallError::Write { path: path.display().to_string(), error: e.to_string() };
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, e))?;
    for (name, contents) in HOST_FILES {
        let path = dir.join(name);
        if std::fs::read(&path).is_ok_and(|current| current == contents.as_bytes()) {
            continue;
        }
        // Written beside and renamed, so a host starting meanwhile never reads half a file.
        let temporary = dir.join(format!(".{name}.{}", std::process::id()));
        std::fs::write(&temporary, contents).map_err(|e| failed(&temporary, e))?;
        std::fs::rename(&temporary, &path).map_err(|e| failed(&path, e))?;
    }
    Ok(())
}

/// The version of pi's package installed in `dir`, if any.
fn installed_version(dir: &Path) -> Option<String> {
    let manifest = dir.join("node_modules").join(PI_PACKAGE).join("package.json");
    let text = std::fs::read_to_string(manifest).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value.get("version")?.as_str().map(str::to_owned)
}

/// `npm install` in the host folder, one rho at a time (a lock file in the folder).
async fn install(dir: &Path, node: &Path, progress: &mut (dyn FnMut(&str) + Send)) -> Result<(), InstallError> {
    let npm_failed = |error: String| InstallError::Npm { dir: dir.display().to_string(), error };
    let lock_path = dir.join(".install.lock");
    let lock_file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| npm_failed(format!("cannot open {}: {e}", lock_path.display())))?;
    let _lock =
        tokio::task::spawn_blocking(move || nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusive))
            .await
            .map_err(|e| npm_failed(e.to_string()))?
            .map_err(|(_, e)| npm_failed(format!("cannot lock {}: {e}", lock_path.display())))?;
    // Another rho may have installed it while this one waited for the lock.
    if installed_version(dir).as_deref() == Some(PI_VERSION) {
        return Ok(());
    }
    progress(&format!(
        "Installing the extension host ({PI_PACKAGE} {PI_VERSION}) into {} with npm; this happens once.",
        dir.display()
    ));
    let npm = npm_beside(node);
    let stderr = std::io::stderr();
    let to_stderr = || {
        use std::os::fd::AsFd;
        stderr.as_fd().try_clone_to_owned().map(Stdio::from).unwrap_or_else(|_| Stdio::null())
    };
    let status = tokio::process::Command::new(&npm)
        .args(["ci", "--omit=dev", "--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=error"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(to_stderr())
        .stderr(to_stderr())
        .status()
        .await
        .map_err(|e| npm_failed(format!("cannot run {}: {e}", npm.display())))?;
    if !status.success() {
        return Err(npm_failed(format!("npm ci {status}")));
    }
    match installed_version(dir) {
        Some(v) if v == PI_VERSION => Ok(()),
        other => Err(npm_failed(format!("npm installed version {}", other.unwrap_or_else(|| "none".into())))),
    }
}

/// npm from the same folder as `node` when it is there, else from `PATH`.
fn npm_beside(node: &Path) -> PathBuf {
    let beside = node.parent().map(|dir| dir.join("npm"));
    match beside {
        Some(npm) if npm.is_file() => npm,
        _ => PathBuf::from("npm"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_and_its_lock_pin_the_same_pi_as_rho() {
        let manifest: serde_json::Value = serde_json::from_str(HOST_FILES[0].1).unwrap();
        assert_eq!(manifest["dependencies"][PI_PACKAGE], PI_VERSION);
        let lock: serde_json::Value = serde_json::from_str(HOST_FILES[1].1).unwrap();
        assert_eq!(lock["packages"][""]["dependencies"], manifest["dependencies"]);
        assert_eq!(lock["packages"][format!("node_modules/{PI_PACKAGE}")]["version"], PI_VERSION);
    }

    #[test]
    fn node_versions_compare_by_major_then_minor() {
        assert_eq!(node_version("v22.19.0\n"), Some((22, 19)));
        assert_eq!(node_version("v24"), Some((24, 0)));
        assert_eq!(node_version("garbage"), None);
        assert!(node_version("v22.18.1").unwrap() < MIN_NODE);
        assert!(node_version("v20.20.2").unwrap() < MIN_NODE);
        assert!(node_version("v23.0.0").unwrap() >= MIN_NODE);
    }

    #[test]
    fn host_files_are_written_once_and_replaced_when_they_change() {
        let dir = tempfile::tempdir().unwrap();
        write_files(dir.path()).unwrap();
        let script = dir.path().join(HOST_FILES[2].0);
        let first = std::fs::metadata(&script).unwrap().modified().unwrap();
        write_files(dir.path()).unwrap();
        assert_eq!(std::fs::metadata(&script).unwrap().modified().unwrap(), first);
        std::fs::write(&script, "stale").unwrap();
        write_files(dir.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&script).unwrap(), HOST_FILES[2].1);
        assert_eq!(installed_version(dir.path()), None);
    }
}
