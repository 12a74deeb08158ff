//! pi 1.6's editor commands through the real `rho` in a pseudo-terminal against rho-mock-llm:
//! `/login`'s API keys, `/thinking`, `/trust`, `/name` without a name, and `/mcp`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::interactive_support;

use common::Env;
use interactive_support::{Terminal, keys};
use serde_json::json;

/// `/login` offers an API key for the providers that take one, as pi 1.6 does: picked, it is asked
/// for in a dialog and saved in auth.json as pi saves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_lists_api_keys_and_saves_one_asked_in_a_dialog() {
    let env = Env::new(vec![]).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("/login");
    let list = term.wait_for("Log in to").await;
    assert!(list.contains("subscription"), "{list}");
    term.send("mistral");
    term.wait_for("API key").await;
    term.send(keys::ENTER);
    term.wait_for("API key for mistral").await;
    term.send("sk-mistral-test");
    term.send(keys::ENTER);
    term.wait_for("Saved an API key for mistral").await;
    let auth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("auth.json")).unwrap()).unwrap();
    assert_eq!(auth["mistral"], json!({"type": "api_key", "key": "sk-mistral-test"}));
}

/// pi 1.6's `/thinking`, `/trust` and `/name` without a name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_trust_and_name_as_pi_1_6_has_them() {
    let env = Env::with_api(vec![], "anthropic-messages", true).await;
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("/thinking high");
    term.wait_for("Thinking: high").await;
    term.submit("/thinking");
    let list = term.wait_for("Thinking level").await;
    assert!(list.contains("high") && list.contains("current"), "{list}");
    term.send(keys::ESCAPE);
    term.wait_until("the list closed", |s| !s.contains("Thinking level")).await;
    term.submit("/thinking sideways");
    term.wait_for("Unknown thinking level \"sideways\"").await;

    term.submit("/trust");
    // The decision in force is highlighted: not trusted, the second row.
    term.wait_for("→ Do not trust this project").await;
    term.send(keys::UP);
    term.wait_for("→ Trust this project").await;
    term.send(keys::ENTER);
    term.wait_for("Trusted: this project's MCP servers").await;
    let decisions: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("trust.json")).unwrap()).unwrap();
    let cwd = env.cwd.canonicalize().unwrap();
    assert_eq!(decisions[cwd.to_str().unwrap()], json!(true), "{decisions}");

    term.submit("/name");
    term.wait_for("The session has no name").await;
    term.submit("/name release work");
    term.wait_for("Session named: release work").await;
    term.submit("/name");
    term.wait_for("Session name: release work").await;
}

/// `/mcp` lists the MCP servers and where each stands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_lists_the_servers_and_their_state() {
    let env = Env::new(vec![]).await;
    let broken = json!({"mcpServers": {"broken": {"command": "sh", "args": ["-c", "exit 3"]}}});
    std::fs::write(env.agent_dir.join("mcp.json"), broken.to_string()).unwrap();
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    let mut listed = false;
    for _ in 0..50 {
        term.submit("/mcp");
        let screen = term.wait_for("MCP servers:").await;
        if screen.contains("  broken  failed: ") {
            listed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert!(listed, "{}", term.screen());
}
