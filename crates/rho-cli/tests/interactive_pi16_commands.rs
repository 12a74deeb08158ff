//! pi 1.6's editor commands through the real `rho` in a pseudo-terminal against rho-mock-llm:
//! `/login`'s API keys, `/thinking`, `/trust`, `/name` without a name, `/mcp`, and `/share`
//! (with a stand-in for the GitHub CLI).
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

/// A stand-in `gh` in its own folder: `auth status` exits with `auth`, `gist create` copies the
/// file it is given beside itself and prints a gist URL.
fn fake_gh(dir: &std::path::Path, auth: u8) -> String {
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = auth ]; then exit {auth}; fi\necho \"$@\" > '{0}/args'\nfor f; do :; done\ncp \"$f\" '{0}/shared.html'\necho https://gist.github.com/someone/abc123\n",
        bin.display()
    );
    let gh = bin.join("gh");
    std::fs::write(&gh, script).unwrap();
    std::fs::set_permissions(&gh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_makes_a_private_gist_of_the_session() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("Shared answer.")]).await;
    let path = fake_gh(env.dir.path(), 0);
    let term = Terminal::start_with(&env, &[], &[("PATH", &path)]);
    term.ready().await;
    term.submit("something to share");
    term.wait_idle_with("Shared answer.").await;
    term.submit("/share");
    let screen = term.wait_for("Gist: https://gist.github.com/someone/abc123").await;
    assert!(screen.contains("Share URL: https://pi.dev/session/#abc123"), "{screen}");
    let bin = env.dir.path().join("fake-bin");
    let args = std::fs::read_to_string(bin.join("args")).unwrap();
    assert!(args.starts_with("gist create --public=false ") && args.trim_end().ends_with("session.html"), "{args}");
    let html = std::fs::read_to_string(bin.join("shared.html")).unwrap();
    assert!(html.contains("<html") && html.contains("something to share"), "the session's HTML export");

    // Not logged in: said, and no gist.
    let path = fake_gh(env.dir.path(), 1);
    std::fs::remove_file(bin.join("args")).unwrap();
    let term = Terminal::start_with(&env, &[], &[("PATH", &path)]);
    term.ready().await;
    term.submit("/share");
    term.wait_for("GitHub CLI is not logged in. Run 'gh auth login' first.").await;
    assert!(!bin.join("args").exists());
}

/// `/export <file>.jsonl` (pi 1.6): the branch as a session file of its own, each entry chained
/// to the one before it, which opens as a session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_to_jsonl_writes_the_branch_as_a_session() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("Exported answer.")]).await;
    let mut term = Terminal::start(&env, &[]);
    term.ready().await;
    term.submit("something to keep");
    term.wait_idle_with("Exported answer.").await;
    term.submit("/export out/branch.jsonl");
    term.wait_for("Exported to:").await;
    let path = env.cwd.join("out/branch.jsonl");
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!((&lines[0]["type"], &lines[0]["version"]), (&json!("session"), &json!(3)));
    for pair in lines[1..].windows(2) {
        assert_eq!(pair[1]["parentId"], pair[0]["id"], "{pair:?}");
    }
    assert_eq!(lines[1]["parentId"], serde_json::Value::Null);
    // A place that cannot be written is said so; the session goes on.
    term.submit("/export /proc/rho-cannot-write-here.jsonl");
    term.wait_for("Error: cannot write /proc/rho-cannot-write-here.jsonl").await;
    term.send(keys::CTRL_D);
    assert_eq!(term.exit_code().await, 0);

    let opened = Terminal::start(&env, &["--session", path.to_str().unwrap()]);
    let screen = opened.wait_for("Exported answer.").await;
    assert!(screen.contains("something to keep"), "{screen}");
}

/// `/share` with Radius authentication (pi 1.6): the branch goes up as a Radius artifact, with
/// the `pi.share` entry after it, and the artifact's address is the answer; with
/// `sessionShareDestination: "radius"` and no Radius authentication, it says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_uploads_a_radius_artifact_when_signed_in_to_radius() {
    let env = Env::new(vec![rho_mock_llm::Turn::text("Shared through Radius.")]).await;
    let url = env.server.url();
    let vars = [("PI_RADIUS_GATEWAY", url.as_str()), ("RADIUS_API_KEY", "radius-key")];
    let term = Terminal::start_with(&env, &[], &vars);
    term.ready().await;
    term.submit("something for the team");
    term.wait_idle_with("Shared through Radius.").await;
    term.submit("/share");
    let screen = term.wait_for("Share URL: https://radius.example/artifacts/").await;
    assert!(!screen.contains("Gist:"), "{screen}");
    let upload = env.server.requests().into_iter().find(|r| r.path == "/v1/artifacts").unwrap();
    assert_eq!(upload.header("authorization"), Some("Bearer radius-key"));
    assert_eq!(upload.header("content-type"), Some("application/x-ndjson"));
    let text = match &upload.body {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["type"], "session");
    let last = lines.last().unwrap();
    assert_eq!((&last["customType"], &last["parentId"]), (&json!("pi.share"), &lines[lines.len() - 2]["id"]));
    assert!(last["data"]["systemPrompt"].as_str().unwrap().contains("rho"), "{last}");
    assert!(last["data"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "read"), "{last}");

    std::fs::write(env.agent_dir.join("settings.json"), r#"{"sessionShareDestination": "radius"}"#).unwrap();
    let term = Terminal::start_with(&env, &[], &[("PI_RADIUS_GATEWAY", url.as_str())]);
    term.ready().await;
    term.submit("/share");
    term.wait_for("Radius authentication is not configured. Run '/login radius' first.").await;
}

/// `/mcp reconnect <server>` (pi 1.6's reconnect): a server that failed to start is started
/// again from its config, and now it answers; an unknown name is said so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_reconnect_starts_a_server_again() {
    let env = Env::new(vec![]).await;
    let fixture = common::mcp::fixture_server();
    let flag = env.dir.path().join("ready");
    let script = format!("if [ -e '{}' ]; then exec '{}'; else exit 3; fi", flag.display(), fixture.display());
    let config = json!({"mcpServers": {"flaky": {"command": "sh", "args": ["-c", script]}}});
    std::fs::write(env.agent_dir.join("mcp.json"), config.to_string()).unwrap();
    let term = Terminal::start(&env, &[]);
    term.ready().await;
    let state = |wanted: &'static str| {
        let term = &term;
        async move {
            for _ in 0..50 {
                term.submit("/mcp");
                let screen = term.wait_for("MCP servers:").await;
                if screen.lines().rev().find(|l| l.starts_with("  flaky  ")).is_some_and(|l| l.contains(wanted)) {
                    return true;
                }
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            false
        }
    };
    assert!(state("failed").await, "{}", term.screen());
    std::fs::write(&flag, "").unwrap();
    term.submit("/mcp reconnect flaky");
    term.wait_for("Reconnecting MCP server flaky").await;
    assert!(state("ready").await, "{}", term.screen());
    term.submit("/mcp reconnect nobody");
    term.wait_for("No MCP server named nobody").await;
}
