//! rho-mcp's fixture server for the tests that configure MCP servers: its path (built when
//! this run has not built it) and the directory where it leaves its markers.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::Env;

/// rho-mcp's fixture server, built if this run has not built it.
pub fn fixture_server() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = Path::new(env!("CARGO_BIN_EXE_rho")).with_file_name("rho-mcp-fixture-server");
        if !path.is_file() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
            let mut build = std::process::Command::new(cargo);
            build.args(["build", "-p", "rho-mcp", "--bin", "rho-mcp-fixture-server"]);
            if path.parent().and_then(Path::file_name).is_some_and(|d| d == "release") {
                build.arg("--release");
            }
            let status = build.current_dir(env!("CARGO_MANIFEST_DIR")).status().expect("cargo runs");
            assert!(status.success() && path.is_file(), "could not build {}", path.display());
        }
        path
    })
    .clone()
}

/// Where the fixture leaves its markers (`starts`, `slow-started`, `slow-cancelled`).
pub fn marker_dir(env: &Env) -> PathBuf {
    let dir = env.dir.path().join("fixture");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
