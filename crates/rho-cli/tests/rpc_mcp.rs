//! MCP servers through the real binary: rho-mcp's fixture server (a real MCP server over stdio)
//! configured in the project's `.mcp.json`, driven by `rho --mode rpc` (and once by print mode)
//! against rho-mock-llm. The model calls `mcp__fixture__*` tools, `get_state` shows the servers,
//! `get_commands` their prompts, `/mcp__fixture__greet` expands one, an abort cancels a call on
//! the server, a crash is reported once, and no server outlives rho.
//!
//! The fixture binary belongs to rho-mcp, so Cargo gives this crate no `CARGO_BIN_EXE_` for it:
//! it is found beside `rho` in the target directory. `cargo nextest run --workspace` builds it
//! (a workspace build builds every member's binaries); a run of this crate alone builds it here
//! first when it is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::mcp::{fixture_server, marker_dir};
use common::{Env, Rho, alive};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

/// A fixture entry of `mcpServers`.
fn fixture_entry(env: &Env, args: &[&str]) -> Value {
    json!({
        "command": fixture_server(),
        "args": args,
        "env": {"FIXTURE_DIR": marker_dir(env)},
    })
}

/// Writes the project's `.mcp.json`.
fn write_mcp_json(env: &Env, servers: Value) {
    std::fs::write(env.cwd.join(".mcp.json"), json!({ "mcpServers": servers }).to_string()).unwrap();
    env.trust_project();
}

/// Frames up to the `available_commands_update` that lists `command`: the server offering it
/// is ready (its tools are in the tool set from then on).
async fn until_command(rho: &mut Rho, command: &str) -> Vec<Value> {
    until_commands(rho, &[command]).await
}

/// Frames up to the `available_commands_update` that lists every one of `commands`.
async fn until_commands(rho: &mut Rho, commands: &[&str]) -> Vec<Value> {
    rho.until(|f| {
        f["type"] == "available_commands_update"
            && commands.iter().all(|name| f["commands"].as_array().unwrap().iter().any(|c| c["name"] == *name))
    })
    .await
}

/// Waits (bounded) until `cond` holds: for what a server does out of rho's sight.
async fn eventually(what: &str, cond: impl Fn() -> bool) {
    for _ in 0..500 {
        if cond() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

/// The pids of every fixture start.
fn starts(env: &Env) -> Vec<u32> {
    std::fs::read_to_string(marker_dir(env).join("starts"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn of_type<'a>(frames: &'a [Value], kind: &str) -> Vec<&'a Value> {
    frames.iter().filter(|f| f["type"] == kind).collect()
}

#[tokio::test]
async fn an_mcp_tool_is_offered_with_its_schema_and_its_result_reaches_the_next_request() {
    let env =
        Env::new(vec![Turn::tool_call("mcp__fixture__echo", json!({"text": "from the server"})), Turn::text("Done.")])
            .await;
    write_mcp_json(&env, json!({"fixture": fixture_entry(&env, &[])}));
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    until_command(&mut rho, "mcp__fixture__greet").await;

    let state = rho.data(json!({"type": "get_state"})).await;
    insta::assert_json_snapshot!("mcp_get_state_servers", state["mcpServers"]);
    let dumped: Vec<&str> =
        state["dumpTools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(dumped.contains(&"mcp__fixture__echo") && dumped.contains(&"read"), "{dumped:?}");
    // Offered, not listed: the system prompt does not change with the servers.
    assert!(!state["systemPrompt"].as_str().unwrap().contains("mcp__"));

    rho.send(json!({"type": "prompt", "message": "Echo something."})).await;
    let frames = rho.until_agent_end().await;
    let end = of_type(&frames, "tool_execution_end")[0];
    insta::assert_json_snapshot!("mcp_echo_tool_execution_end", common::redact(end));

    let bodies = env.request_bodies();
    let echo = bodies[0]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "mcp__fixture__echo").unwrap();
    assert_eq!(echo["description"], "Echoes its text.");
    assert_eq!(
        echo["input_schema"],
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    );
    let result = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result", "{}", bodies[1]);
    assert_eq!(result["content"], "from the server", "{result}");
}

#[tokio::test]
async fn get_state_and_get_commands_show_the_servers_and_a_prompt_command_expands() {
    let env = Env::new(vec![Turn::text("Hello to Bob said.")]).await;
    write_mcp_json(
        &env,
        json!({
            "fixture": fixture_entry(&env, &[]),
            "broken": fixture_entry(&env, &["--fail-start"]),
            "off": {"command": "does-not-matter", "enabled": false},
        }),
    );
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let frames = until_command(&mut rho, "mcp__fixture__greet").await;
    let update = frames.last().unwrap();
    let greet = update["commands"].as_array().unwrap().iter().find(|c| c["name"] == "mcp__fixture__greet").unwrap();
    assert_eq!(
        *greet,
        json!({"name": "mcp__fixture__greet", "description": "Greets someone.", "input": {"hint": "arguments"}, "source": "mcp_prompt"})
    );
    // The broken server's failure is a notice (and a line on stderr), once.
    let notice = match of_type(&frames, "notice").first() {
        Some(notice) => (*notice).clone(),
        None => rho.until(|f| f["type"] == "notice").await.pop().unwrap(),
    };
    assert_eq!(notice["source"], "mcp");
    assert_eq!(notice["level"], "warning");
    assert!(notice["message"].as_str().unwrap().starts_with("MCP server \"broken\": could not be started"), "{notice}");

    let state = rho.data(json!({"type": "get_state"})).await;
    let servers = state["mcpServers"].as_array().unwrap();
    let brief: Vec<(&str, &str)> =
        servers.iter().map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap())).collect();
    assert_eq!(brief, [("broken", "failed"), ("fixture", "ready"), ("off", "disabled")]);
    assert!(servers[0]["error"].as_str().is_some_and(|e| !e.is_empty()), "{}", servers[0]);
    assert_eq!(servers[2], json!({"name": "off", "status": "disabled", "toolCount": 0, "promptCount": 0}));

    let commands = rho.data(json!({"type": "get_commands"})).await;
    let mcp: Vec<&Value> =
        commands["commands"].as_array().unwrap().iter().filter(|c| c["source"] == "mcp_prompt").collect();
    assert_eq!(
        mcp,
        [&json!({"name": "mcp__fixture__greet", "description": "Greets someone.", "source": "mcp_prompt"})]
    );

    // A required argument missing: a precise error, nothing sent.
    let refused = rho.request(json!({"type": "prompt", "message": "/mcp__fixture__greet"})).await;
    assert_eq!(refused["success"], false);
    assert_eq!(refused["error"], "MCP prompt /mcp__fixture__greet needs: name");

    let accepted = rho.request(json!({"type": "prompt", "message": "/mcp__fixture__greet Bob"})).await;
    assert_eq!(accepted["success"], true, "{accepted}");
    rho.until_agent_end().await;
    let bodies = env.request_bodies();
    assert_eq!(bodies.len(), 1);
    assert_eq!(bodies[0]["messages"][0]["content"][0]["text"], "Say hello to Bob.\n\nHello, Bob!");
}

#[tokio::test]
async fn abort_cancels_an_mcp_call_on_the_server() {
    let env = Env::new(vec![Turn::tool_call("mcp__fixture__slow", json!({"ms": 60_000})), Turn::text("after")]).await;
    write_mcp_json(&env, json!({"fixture": fixture_entry(&env, &[])}));
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    until_command(&mut rho, "mcp__fixture__greet").await;

    rho.send(json!({"type": "prompt", "message": "Be slow."})).await;
    rho.until(|f| f["type"] == "tool_execution_start").await;
    let markers = marker_dir(&env);
    eventually("the slow call to start on the server", || markers.join("slow-started").exists()).await;
    let aborted = rho.request(json!({"type": "abort"})).await;
    assert_eq!(aborted["success"], true);
    eventually("the server to see notifications/cancelled", || markers.join("slow-cancelled").exists()).await;
    let messages = rho.data(json!({"type": "get_messages"})).await;
    let result = messages["messages"].as_array().unwrap().iter().find(|m| m["role"] == "toolResult").unwrap();
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(env.request_bodies().len(), 1, "the aborted run made no further request");
}

#[tokio::test]
async fn a_crashed_server_is_reported_once_and_restarted_when_next_called() {
    let env = Env::new(vec![
        Turn::tool_call("mcp__fixture__exit", json!({})),
        Turn::text("It exited."),
        Turn::tool_call("mcp__fixture__echo", json!({"text": "back"})),
        Turn::text("It is back."),
    ])
    .await;
    write_mcp_json(&env, json!({"fixture": fixture_entry(&env, &[])}));
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    until_command(&mut rho, "mcp__fixture__greet").await;

    rho.send(json!({"type": "prompt", "message": "Exit."})).await;
    let mut frames = rho.until_agent_end().await;
    let end = of_type(&frames, "tool_execution_end")[0].clone();
    assert_eq!(end["isError"], true, "{end}");
    // The exit's notice may follow the run's end.
    if of_type(&frames, "notice").is_empty() {
        frames.extend(rho.until(|f| f["type"] == "notice").await);
    }
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["mcpServers"][0]["status"], "failed", "{}", state["mcpServers"]);
    assert_eq!(state["mcpServers"][0]["error"], "the server exited");

    rho.send(json!({"type": "prompt", "message": "Echo."})).await;
    frames.extend(rho.until_agent_end().await);
    let echo =
        of_type(&frames, "tool_execution_end").into_iter().find(|f| f["toolName"] == "mcp__fixture__echo").unwrap();
    assert_eq!(echo["isError"], false, "{echo}");
    assert_eq!(echo["result"]["content"][0]["text"], "back");
    assert_eq!(starts(&env).len(), 2, "started, then restarted once");

    // Closing rho shows every frame: the exit was reported once.
    rho.close_stdin();
    assert!(rho.wait().await.success());
    for line in rho.rest().await {
        frames.push(serde_json::from_str(&line).unwrap());
    }
    let notices: Vec<&Value> = of_type(&frames, "notice");
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0]["message"].as_str().unwrap().starts_with("MCP server \"fixture\": the server exited"));
}

#[tokio::test]
async fn the_servers_end_with_rho() {
    let env = Env::new(vec![]).await;
    write_mcp_json(
        &env,
        json!({"a": fixture_entry(&env, &[]), "b": fixture_entry(&env, &[]), "c": fixture_entry(&env, &[])}),
    );
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let rho_pid = rho.child.id().unwrap();
    until_commands(&mut rho, &["mcp__a__greet", "mcp__b__greet", "mcp__c__greet"]).await;
    let pids = starts(&env);
    assert_eq!(pids.len(), 3);
    assert!(pids.iter().all(|p| alive(*p)));
    // Each server is rho's child, in a process group of its own.
    for pid in &pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
        assert_eq!(fields[1], rho_pid.to_string(), "parent of {pid}");
        assert_eq!(fields[2], pid.to_string(), "process group of {pid}");
    }

    rho.close_stdin();
    assert!(rho.wait().await.success());
    let left: Vec<u32> = pids.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "servers outlived rho: {left:?}");
}

#[tokio::test]
async fn config_problems_are_reported_once_and_the_good_servers_start() {
    let env = Env::new(vec![]).await;
    std::fs::write(
        env.cwd.join(".mcp.json"),
        json!({"mcpServers": {
            "fixture": fixture_entry(&env, &[]),
            "typo": {"command": "x", "args": "--flag"},
            "secret": {"command": "x", "env": {"TOKEN": "${RHO_TEST_UNSET_VARIABLE}"}},
        }})
        .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(env.cwd.join(".rho")).unwrap();
    std::fs::write(env.cwd.join(".rho/mcp.json"), "{\"mcpServers\": ").unwrap();
    env.trust_project();
    let mut rho = Rho::spawn(&env, &["--no-session"]).await;
    let ready = rho.next().await;
    assert_eq!(ready["type"], "ready");
    until_command(&mut rho, "mcp__fixture__greet").await;
    let state = rho.data(json!({"type": "get_state"})).await;
    let names: Vec<&str> =
        state["mcpServers"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["fixture"]);

    rho.close_stdin();
    assert!(rho.wait().await.success());
    let mut stderr = String::new();
    use tokio::io::AsyncReadExt;
    rho.child.stderr.take().unwrap().read_to_string(&mut stderr).await.unwrap();
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Warning: MCP config")).collect();
    assert_eq!(warnings.len(), 3, "{stderr}");
    assert!(warnings.iter().any(|w| w.contains("mcpServers.typo.args")), "{stderr}");
    assert!(warnings.iter().any(|w| w.contains("RHO_TEST_UNSET_VARIABLE")), "{stderr}");
    assert!(warnings.iter().any(|w| w.contains(".rho/mcp.json")), "{stderr}");
}

#[tokio::test]
async fn without_mcp_config_nothing_changes() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    assert!(state.get("mcpServers").is_none(), "{state}");
    let commands = rho.data(json!({"type": "get_commands"})).await;
    assert_eq!(commands["commands"], json!([]));
    rho.close_stdin();
    assert!(rho.wait().await.success());
    assert!(rho.rest().await.is_empty());
}

#[tokio::test]
async fn print_mode_waits_for_the_servers_and_their_tools_work() {
    let env = Env::new(vec![Turn::tool_call("mcp__fixture__add", json!({"a": 2, "b": 3})), Turn::text("Five.")]).await;
    write_mcp_json(&env, json!({"fixture": fixture_entry(&env, &[])}));
    let out = env.command(&["--mode", "json", "--no-session", "--model", "mock/mock-model", "Add."]).output();
    let out = tokio::time::timeout(Duration::from_secs(30), out).await.unwrap().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let frames: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["isError"], false, "{end}");
    assert_eq!(end["result"]["content"][0]["text"], "5");
    assert_eq!(end["result"]["details"]["structuredContent"]["sum"].as_f64(), Some(5.0), "{end}");
    let pids = starts(&env);
    assert_eq!(pids.len(), 1);
    assert!(!alive(pids[0]), "the server outlived rho");
}

/// As omp 18 does, `--tools` and `--no-tools` choose among the built-in tools; the MCP servers'
/// tools are offered either way.
#[tokio::test]
async fn mcp_tools_are_offered_whatever_tools_selects() {
    for args in [&["--tools", "read"][..], &["--no-tools"][..]] {
        let env = Env::new(vec![]).await;
        write_mcp_json(&env, json!({"fixture": fixture_entry(&env, &[])}));
        let mut all = vec!["--no-session"];
        all.extend_from_slice(args);
        let mut rho = Rho::start(&env, &all).await;
        until_command(&mut rho, "mcp__fixture__greet").await;
        let state = rho.data(json!({"type": "get_state"})).await;
        let tools: Vec<&str> =
            state["dumpTools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        let builtin: Vec<&str> = tools.iter().copied().filter(|t| !t.starts_with("mcp__")).collect();
        assert_eq!(builtin, if args[0] == "--tools" { vec!["read"] } else { vec![] }, "{args:?}");
        assert!(tools.contains(&"mcp__fixture__echo"), "{args:?}: {tools:?}");
    }
}

/// A server's `notifications/tools/list_changed` brings its new tool into the tool set, offered
/// from the next request on.
#[tokio::test]
async fn a_tool_list_change_is_followed() {
    let env = Env::new(vec![
        Turn::tool_call("mcp__fixture__add_tool", json!({})),
        Turn::text("Added."),
        Turn::tool_call("mcp__fixture__late", json!({})),
        Turn::text("Called."),
    ])
    .await;
    write_mcp_json(&env, json!({"fixture": fixture_entry(&env, &[])}));
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    until_command(&mut rho, "mcp__fixture__greet").await;
    rho.send(json!({"type": "prompt", "message": "Add a tool."})).await;
    rho.until_agent_end().await;

    // No frame tells of a tool list change: ask until the new tool is there.
    let mut offered = false;
    for _ in 0..250 {
        let state = rho.data(json!({"type": "get_state"})).await;
        if state["dumpTools"].as_array().unwrap().iter().any(|t| t["name"] == "mcp__fixture__late") {
            offered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(offered, "mcp__fixture__late never joined the tool set");

    rho.send(json!({"type": "prompt", "message": "Call it."})).await;
    let frames = rho.until_agent_end().await;
    let end = of_type(&frames, "tool_execution_end")[0];
    assert_eq!(end["toolName"], "mcp__fixture__late");
    assert_eq!(end["isError"], false, "{end}");
    let bodies = env.request_bodies();
    let names = |body: &Value| -> Vec<String> {
        body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    assert!(!names(&bodies[0]).contains(&"mcp__fixture__late".to_owned()));
    assert!(names(&bodies[2]).contains(&"mcp__fixture__late".to_owned()));
}

/// A server that never answers does not hold a one-shot run up until its start-up timeout
/// (30 s): print mode waits a moment for servers its prompt does not name, then goes on.
#[tokio::test]
async fn print_mode_does_not_wait_for_a_hanging_server() {
    let env = Env::new(vec![Turn::text("Answered.")]).await;
    std::fs::write(
        env.agent_dir.join("mcp.json"),
        json!({"mcpServers": {"hangs": {"command": "sh", "args": ["-c", "sleep 300"]}}}).to_string(),
    )
    .unwrap();
    let out = env.command(&["-p", "--no-session", "--model", "mock/mock-model", "hi"]).output();
    let out = tokio::time::timeout(Duration::from_secs(20), out).await.expect("held up by the server").unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Answered.\n");
}

/// An image an MCP tool returns is fitted to the model as a prompt's is: a 3000 pixel wide one
/// reaches the model 2000 wide.
#[tokio::test]
async fn an_mcp_tools_image_is_shrunk_to_what_the_model_takes() {
    use base64::Engine;
    let env =
        Env::new(vec![Turn::tool_call("mcp__fixture__image", json!({"wide": true})), Turn::text("A red line.")]).await;
    write_mcp_json(&env, json!({"fixture": fixture_entry(&env, &[])}));
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    until_command(&mut rho, "mcp__fixture__greet").await;
    rho.send(json!({"type": "prompt", "message": "Show it."})).await;
    rho.until_agent_end().await;
    let bodies = env.request_bodies();
    let result = &bodies[1]["messages"][2]["content"][0];
    let image = result["content"].as_array().unwrap().iter().find(|b| b["type"] == "image").expect("no image");
    let bytes = base64::engine::general_purpose::STANDARD.decode(image["source"]["data"].as_str().unwrap()).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 2000, "{result}");
}
