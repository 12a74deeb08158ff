//! pi 1.6's command line: `--name`, `--session-id`, `--tools` patterns and `-name` entries,
//! `--exclude-tools`, `--no-mcp`, `--approve`/`--no-approve`, `--tui-mode`, `--use-theme`, and
//! `rho auth …`. A word rho does not know as a command is an error naming it.

use std::process::Output;

use serde_json::{Value, json};

use crate::common::{Env, Rho, read_jsonl};

async fn output(env: &Env, args: &[&str], stdin: &str) -> Output {
    use tokio::io::AsyncWriteExt;
    let mut child = env.command(args).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).await.unwrap();
    drop(input);
    tokio::time::timeout(std::time::Duration::from_secs(20), child.wait_with_output()).await.unwrap().unwrap()
}

async fn tools(env: &Env, args: &[&str]) -> Vec<String> {
    let mut all = vec!["--no-session"];
    all.extend_from_slice(args);
    let mut rho = Rho::start(env, &all).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    state["dumpTools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn tools_take_patterns_removals_and_exclusions() {
    let env = Env::new(vec![]).await;
    assert_eq!(tools(&env, &["--tools", "-write"]).await, ["read", "bash", "edit"]);
    assert_eq!(tools(&env, &["--tools", "+grep"]).await, ["read", "bash", "edit", "write", "grep"]);
    assert_eq!(tools(&env, &["--tools", "read,gr*,*_write"]).await, ["read", "grep", "todo_write"]);
    assert_eq!(tools(&env, &["-xt", "b*,edit"]).await, ["read", "write"]);
    assert_eq!(tools(&env, &["--exclude-tools", "write", "--tools", "read,write,ls"]).await, ["read", "ls"]);
    // Naming only MCP tools is an allowlist without any other tool.
    assert!(tools(&env, &["--tools", "mcp__docs__*"]).await.is_empty());
}

#[tokio::test]
async fn a_session_is_named_and_found_by_its_id() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("Noted.")]).await;
    let mut rho = Rho::start(&env, &["--name", "Refactor auth", "--session-id", "my-task.1"]).await;
    // Something is said: a session where nothing was is not kept.
    rho.send(json!({"type": "prompt", "message": "remember this"})).await;
    rho.until_agent_end().await;
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["sessionName"], "Refactor auth");
    assert_eq!(state["sessionId"], "my-task.1");
    let file = state["sessionFile"].as_str().unwrap().to_owned();
    assert!(file.ends_with("_my-task.1.jsonl"), "{file}");
    rho.close_stdin();
    assert!(rho.wait().await.success());
    let lines = read_jsonl(std::path::Path::new(&file));
    assert_eq!(lines[0]["id"], "my-task.1");
    assert!(lines.iter().any(|l| l["type"] == "session_info" && l["name"] == "Refactor auth"), "{lines:?}");

    // The same id again opens that session; the same name again adds nothing.
    let mut again = Rho::start(&env, &["-n", "Refactor auth", "--session-id", "my-task.1"]).await;
    let state = again.data(json!({"type": "get_state"})).await;
    assert_eq!(state["sessionFile"], json!(file));
    again.close_stdin();
    assert!(again.wait().await.success());
    assert_eq!(read_jsonl(std::path::Path::new(&file)).len(), lines.len());

    let bad = output(&env, &["--mode", "rpc", "--session-id", "../escape"], "").await;
    assert_eq!(bad.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("Invalid session id \"../escape\""), "{stderr}");
}

/// The MCP servers `get_state` lists, by name.
async fn mcp_servers(env: &Env, args: &[&str]) -> Vec<String> {
    let mut all = vec!["--no-session"];
    all.extend_from_slice(args);
    let mut rho = Rho::start(env, &all).await;
    let state: Value = rho.data(json!({"type": "get_state"})).await;
    state["mcpServers"]
        .as_array()
        .map_or_else(Vec::new, |servers| servers.iter().map(|s| s["name"].as_str().unwrap().to_owned()).collect())
}

#[tokio::test]
async fn no_mcp_no_approve_and_the_screen_flags() {
    let env = Env::new(vec![]).await;
    // Servers that are off: listed without being started.
    let off = |name: &str| json!({"mcpServers": {name: {"command": "/nonexistent/server", "enabled": false}}});
    std::fs::write(env.agent_dir.join("mcp.json"), off("global").to_string()).unwrap();
    std::fs::write(env.cwd.join(".mcp.json"), off("project").to_string()).unwrap();
    env.trust_project();
    assert_eq!(mcp_servers(&env, &["--tui-mode", "regular", "--use-theme", "light"]).await, ["global", "project"]);
    // The project's own files are left alone for this run, trusted as it is.
    assert_eq!(mcp_servers(&env, &["-na"]).await, ["global"]);
    assert!(mcp_servers(&env, &["--no-mcp"]).await.is_empty());

    let bad = output(&env, &["--mode", "rpc", "--tui-mode", "sideways"], "").await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("sideways"));
    let both = output(&env, &["--mode", "rpc", "--approve", "--no-approve"], "").await;
    assert_eq!(both.status.code(), Some(2), "{}", String::from_utf8_lossy(&both.stderr));
}

#[tokio::test]
async fn auth_saves_prints_checks_and_removes_a_key() {
    let env = Env::new(vec![]).await;
    let saved = output(&env, &["auth", "login", "openai", "--api-key"], "sk-from-stdin\n").await;
    assert!(saved.status.success(), "{}", String::from_utf8_lossy(&saved.stderr));
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("auth.json")).unwrap()).unwrap();
    assert_eq!(auth["openai"], json!({"type": "api_key", "key": "sk-from-stdin"}));

    let printed = output(&env, &["auth", "print-api-key", "--provider", "openai"], "").await;
    assert_eq!(String::from_utf8_lossy(&printed.stdout), "sk-from-stdin\n");
    let ready = output(&env, &["auth", "check", "--model", "openai/gpt-x"], "").await;
    assert_eq!((ready.status.code(), String::from_utf8_lossy(&ready.stdout).into_owned()), (Some(0), "ready\n".into()));

    let out = output(&env, &["auth", "logout", "openai"], "").await;
    assert!(out.status.success());
    let not_ready = output(&env, &["auth", "check", "--provider", "openai"], "").await;
    assert_eq!(not_ready.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&not_ready.stdout), "not_ready\n");

    let unknown = output(&env, &["auth", "frobnicate"], "").await;
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown auth command \"frobnicate\""));
    assert_eq!(env.request_bodies().len(), 0, "nothing reached a model");
}

#[tokio::test]
async fn a_server_added_with_rho_mcp_add_starts_and_is_listed() {
    let env = Env::new(vec![]).await;
    let server = crate::common::mcp::fixture_server();
    let fixture_dir = format!("FIXTURE_DIR={}", crate::common::mcp::marker_dir(&env).display());
    let server = server.to_string_lossy();
    let added = output(&env, &["mcp", "add", "fixture", "--env", &fixture_dir, "--", &server], "").await;
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    // What was there stays: another key and another server.
    let file = env.agent_dir.join("mcp.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    config["$comment"] = json!("mine");
    config["mcpServers"]["off"] = json!({"command": "x", "enabled": false});
    std::fs::write(&file, config.to_string()).unwrap();
    let again = output(&env, &["mcp", "add", "other", "--url", "https://mcp.example/mcp"], "").await;
    assert!(again.status.success());
    let config: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(config["$comment"], "mine");
    assert_eq!(config["mcpServers"]["fixture"]["command"], json!(server));
    assert_eq!(config["mcpServers"]["other"], json!({"url": "https://mcp.example/mcp"}));
    let removed = output(&env, &["mcp", "remove", "other"], "").await;
    assert!(removed.status.success());

    let listed = output(&env, &["mcp", "list", "--json"], "").await;
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let states: Vec<(&str, &str)> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [("fixture", "ready"), ("off", "disabled")]);
    assert!(listed["servers"][0]["tools"].as_array().unwrap().contains(&json!("mcp__fixture__echo")), "{listed}");

    // A session starts it too: its prompt is a command once it is ready, its tools offered.
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.until(|f| {
        f["type"] == "available_commands_update"
            && f["commands"].as_array().is_some_and(|c| c.iter().any(|c| c["name"] == "mcp__fixture__greet"))
    })
    .await;
    let state = rho.data(json!({"type": "get_state"})).await;
    let tools: Vec<String> =
        state["dumpTools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
    assert!(tools.contains(&"mcp__fixture__echo".to_owned()), "{tools:?}");

    let unknown = output(&env, &["mcp", "connect"], "").await;
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown mcp command \"connect\""));
}
