//! pi's packages through rho's package commands (pi's own package manager, for rho's agent dir):
//! a local package installed, listed, loaded at start (its extension's tool, its skill) and
//! removed.

use rho_mock_llm::Turn;
use serde_json::{Value, json};

use crate::common::extensions::{fixture, pi_host};
use crate::common::{Env, Rho};

#[tokio::test]
async fn a_package_is_installed_listed_loaded_and_removed() {
    let Some(host) = pi_host("a_package_is_installed_listed_loaded_and_removed") else { return };
    let env = Env::new(vec![Turn::tool_call("package_tool", json!({})), Turn::text("Used it.")])
        .await
        .with_extension_host(host);
    let package = fixture("package-demo");
    let run = |args: &[&str]| env.command(args).output();

    let installed = run(&["install", &package]).await.unwrap();
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));
    assert_eq!(
        String::from_utf8_lossy(&installed.stdout).lines().last(),
        Some(format!("Installed {package}").as_str())
    );
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("settings.json")).unwrap()).unwrap();
    assert_eq!(settings["packages"].as_array().map(Vec::len), Some(1), "{settings}");

    let listed = run(&["list"]).await.unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.starts_with("User packages:\n"), "{listed}");

    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let commands = rho.data(json!({"type": "get_commands"})).await;
    let names: Vec<&str> =
        commands["commands"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"skill:pkg-skill"), "the package's skill: {names:?}");
    rho.send(json!({"type": "prompt", "id": "p", "message": "use the package"})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["result"]["content"][0]["text"], "from the package", "{end}");
    rho.close_stdin();
    rho.wait().await;

    let removed = run(&["remove", &package]).await.unwrap();
    assert!(removed.status.success(), "{}", String::from_utf8_lossy(&removed.stderr));
    let listed = run(&["list"]).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "No packages installed.\n");
    let missing = run(&["remove", &package]).await.unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("No matching package found"));
}
