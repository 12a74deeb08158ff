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
    let installed = dir.join("node_modules/@mariozechner/pi-coding-agent/package.json").is_file();
    if installed {
        return Some(dir);
    }
    let install =
        "cp crates/rho-extensions/host/package*.json target/extension-host/ && npm ci --prefix target/extension-host";
    assert!(
        std::env::var("RHO_EXTENSIONS_REQUIRE_PI").as_deref() != Ok("1"),
        "pi's package is required but not installed in {} ({install})",
        dir.display()
    );
    eprintln!("SKIPPED {test}: pi's package is not installed in {}. To run it: {install}", dir.display());
    None
}

/// One of this crate's fixture extensions (`tests/fixtures/extensions/<name>`).
pub fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/extensions").join(name).display().to_string()
}

/// One of the examples pi's package ships (`examples/extensions/<name>`).
pub fn example(host: &Path, name: &str) -> String {
    host.join("node_modules/@mariozechner/pi-coding-agent/examples/extensions").join(name).display().to_string()
}

impl Env {
    /// Runs rho with this extension host folder.
    pub fn with_extension_host(mut self, host: PathBuf) -> Self {
        self.extension_host = Some(host);
        self
    }
}
