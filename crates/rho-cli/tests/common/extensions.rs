//! pi's package for the extension tests. `.ci/run` installs it under `target/extension-host`
//! (or `RHO_EXTENSION_HOST_DIR` names where it is) and sets `RHO_EXTENSIONS_REQUIRE_PI=1`, so a
//! missing package fails the tests there; elsewhere each such test prints `SKIPPED …` with the
//! install command and passes.

use std::path::{Path, PathBuf};

use super::Env;

/// The folder holding pi's package (and, once a test ran, rho's host files), or `None` after
/// printing why the test is skipped.
pub fn pi_host(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("RHO_EXTENSION_HOST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/extension-host"));
    let installed = dir.join("node_modules/@earendil-works/pi-coding-agent/package.json").is_file();
    let node = node_version();
    if installed && node.is_some_and(|v| v >= (22, 19)) {
        return Some(dir);
    }
    let (missing, install) = if installed {
        (
            format!("Node.js 22.19 or newer is not found ({} is {node:?})", test_node().display()),
            "npm install --prefix target/node node@22.23.3",
        )
    } else {
        (
            format!("pi's package is not installed in {}", dir.display()),
            "cp crates/rho-extensions/host/package*.json target/extension-host/ && npm ci --prefix target/extension-host",
        )
    };
    assert!(std::env::var("RHO_EXTENSIONS_REQUIRE_PI").as_deref() != Ok("1"), "{missing} ({install})");
    eprintln!("SKIPPED {test}: {missing}. To run it: {install}");
    None
}

/// The Node.js the extension host runs on in the tests: `RHO_NODE`, else the one `.ci/run`
/// installs under `target/node` (pi needs 22.19 or newer, which a machine may not have), else
/// `node` from `PATH`.
pub fn test_node() -> PathBuf {
    if let Some(node) = std::env::var_os("RHO_NODE").filter(|v| !v.is_empty()) {
        return PathBuf::from(node);
    }
    let installed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/node/node_modules/node/bin/node");
    if installed.is_file() { installed } else { PathBuf::from("node") }
}

/// [`test_node`]'s version as (major, minor).
fn node_version() -> Option<(u32, u32)> {
    let output = std::process::Command::new(test_node()).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut parts = text.trim().trim_start_matches('v').split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// One of this crate's fixture extensions (`tests/fixtures/extensions/<name>`).
pub fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/extensions").join(name).display().to_string()
}

/// One of the examples pi's package ships (`examples/extensions/<name>`).
pub fn example(host: &Path, name: &str) -> String {
    host.join("node_modules/@earendil-works/pi-coding-agent/examples/extensions").join(name).display().to_string()
}

impl Env {
    /// Runs rho with this extension host folder.
    pub fn with_extension_host(mut self, host: PathBuf) -> Self {
        self.extension_host = Some(host);
        self
    }
}
