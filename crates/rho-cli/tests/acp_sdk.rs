//! ACP mode driven by the official TypeScript SDK's client (`@agentclientprotocol/sdk` on npm):
//! runs bench/acp/run.mjs with node against the built `rho` and rho-mock-llm (in-process here,
//! serving bench/acp/script.json and recording every request for the script's checks).
//!
//! Gated: it needs `node` and the SDK. When either is missing the test prints `SKIPPED ...` with
//! the reason and how to install it, and passes (.config/nextest.toml shows its output even then,
//! so the skip is never silent); with `RHO_ACP_REQUIRE_SDK=1` (what CI sets once it installs the
//! SDK) it fails instead. The SDK is looked for in `$RHO_ACP_SDK` (a directory
//! holding `node_modules`) and then in `<workspace>/target/acp-sdk`, where CI puts it with:
//!
//! ```sh
//! npm install --no-audit --no-fund --prefix target/acp-sdk @agentclientprotocol/sdk@2.4.0
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rho_mock_llm::{MockOptions, MockServer, Script};

const PACKAGE: &str = "node_modules/@agentclientprotocol/sdk/package.json";
/// The SDK version the script is written against (and CI installs).
const SDK_VERSION: &str = "2.4.0";
const TIMEOUT: Duration = Duration::from_secs(120);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `(node, the directory holding node_modules)`, or why the test cannot run.
fn sdk() -> Result<(String, PathBuf), String> {
    let node = std::env::var("RHO_ACP_NODE").unwrap_or_else(|_| "node".to_owned());
    match std::process::Command::new(&node).arg("--version").output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => return Err(format!("`{node} --version` failed ({})", out.status)),
        Err(e) => return Err(format!("node is not available (`{node}`: {e})")),
    }
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("RHO_ACP_SDK") {
        candidates.push(PathBuf::from(dir));
    }
    candidates.push(workspace().join("target/acp-sdk"));
    let found = candidates
        .iter()
        .find(|dir| dir.join(PACKAGE).is_file())
        .ok_or_else(|| format!("@agentclientprotocol/sdk is not installed (looked in {candidates:?})"))?;
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(found.join(PACKAGE)).unwrap())
        .map_err(|e| format!("the SDK's package.json is not JSON: {e}"))?;
    match manifest["version"].as_str() {
        Some(SDK_VERSION) => Ok((node, found.clone())),
        other => Err(format!(
            "@agentclientprotocol/sdk {other:?} is installed in {}; the check is written for {SDK_VERSION}",
            found.display()
        )),
    }
}

#[tokio::test]
async fn the_typescript_sdk_client_drives_rho_end_to_end() {
    let (node, sdk_dir) = match sdk() {
        Ok(found) => found,
        Err(why) => {
            let install = format!("npm install --prefix target/acp-sdk @agentclientprotocol/sdk@{SDK_VERSION}");
            assert!(
                std::env::var_os("RHO_ACP_REQUIRE_SDK").is_none(),
                "the TypeScript SDK check cannot run and RHO_ACP_REQUIRE_SDK is set: {why}. Install it: {install}"
            );
            eprintln!("SKIPPED the_typescript_sdk_client_drives_rho_end_to_end: {why}. To run it: {install}");
            return;
        }
    };
    let bench = workspace().join("bench/acp");
    let script: Script = serde_json::from_str(&std::fs::read_to_string(bench.join("script.json")).unwrap()).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let record = scratch.path().join("requests.jsonl");
    let options = MockOptions { record: Some(record.clone()), ..MockOptions::default() };
    let server = MockServer::start_with(script, options).await.unwrap();

    let run = tokio::process::Command::new(node)
        .arg(bench.join("run.mjs"))
        .env("RHO_BIN", env!("CARGO_BIN_EXE_rho"))
        .env("MOCK_URL", server.url())
        .env("MOCK_RECORD", &record)
        .env("ACP_SDK", &sdk_dir)
        .env("TMPDIR", scratch.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(TIMEOUT, run).await.expect("run.mjs did not finish in time").unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "run.mjs failed ({}):\n{stdout}", out.status);
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}
