//! The real MCP servers from npm that some tests run with node, found where CI installs them.

use std::path::{Path, PathBuf};

/// An npm package holding an MCP server (`dist/index.js`).
pub struct NpmServer {
    /// `@modelcontextprotocol/server-everything`
    pub package: &'static str,
    pub version: &'static str,
    /// The `--prefix` CI installs it under, relative to the workspace.
    pub prefix: &'static str,
    /// A variable naming another directory to look in (one holding `node_modules`, or the
    /// package's own).
    pub dir_var: &'static str,
    /// The variable that makes a missing package a failure instead of a skip.
    pub require_var: &'static str,
}

impl NpmServer {
    pub fn install_line(&self) -> String {
        format!("npm install --no-audit --no-fund --prefix {} {}@{}", self.prefix, self.package, self.version)
    }

    /// `(node, dist/index.js)`, or why the test cannot run.
    pub fn locate(&self) -> Result<(String, PathBuf), String> {
        let node = std::env::var("RHO_MCP_NODE").unwrap_or_else(|_| "node".to_owned());
        match std::process::Command::new(&node).arg("--version").output() {
            Ok(out) if out.status.success() => {}
            Ok(out) => return Err(format!("`{node} --version` failed ({})", out.status)),
            Err(e) => return Err(format!("node is not available (`{node}`: {e})")),
        }
        let in_modules = format!("node_modules/{}", self.package);
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut candidates = Vec::new();
        if let Ok(dir) = std::env::var(self.dir_var) {
            candidates.push(PathBuf::from(&dir).join(&in_modules));
            candidates.push(PathBuf::from(dir));
        }
        candidates.push(workspace.join(self.prefix).join(&in_modules));
        candidates
            .iter()
            .map(|dir| dir.join("dist/index.js"))
            .find(|index| index.is_file())
            // node resolves `..` by name, not through symlinks: give it the real path.
            .map(|index| (node, std::fs::canonicalize(&index).unwrap_or(index)))
            .ok_or_else(|| format!("{} is not installed (looked in {candidates:?})", self.package))
    }

    /// Why test `name` cannot run, as the line it prints; panics instead when the package is
    /// required.
    pub fn skip(&self, name: &str, why: &str) -> String {
        let message = format!("SKIPPED {name}: {why}. To run it: {}", self.install_line());
        let required = std::env::var_os(self.require_var).is_some();
        assert!(!required, "{message} ({} is set)", self.require_var);
        message
    }
}

/// `(node, dist/index.js)` of `$server` when available; otherwise prints why not and returns
/// from the test (or fails it when the package is required).
#[macro_export]
macro_rules! gated {
    ($server:expr, $name:literal) => {
        match $server.locate() {
            Ok(found) => found,
            Err(why) => {
                eprintln!("{}", $server.skip($name, &why));
                return;
            }
        }
    };
}
