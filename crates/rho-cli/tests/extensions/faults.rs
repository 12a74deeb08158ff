//! Extension code that fails, through the fixture `faults.ts`: each failure is reported with
//! the extension and the event, and the agent goes on; a crashed host is started again; a hook
//! that never answers is given up on, and a host that spins is replaced; an extension that exits
//! as it loads fails only its own load; and a machine without Node.js 22.19 gets one clear error.

use rho_mock_llm::Turn;
use serde_json::{Value, json};

use crate::common::extensions::{example, fixture, pi_host};
use crate::common::{Env, Rho, tool_results};

#[tokio::test]
async fn failures_are_reported_and_the_agent_goes_on() {
    let Some(host) = pi_host("failures_are_reported_and_the_agent_goes_on") else { return };
    let env = Env::new(vec![
        Turn::tool_call("fail", json!({"why": "it must"})),
        Turn::tool_call("crash", json!({})),
        Turn::tool_call("alive", json!({})),
        Turn::tool_call("read", json!({"path": "x"})),
        Turn::text("Survived."),
    ])
    .await
    .with_extension_host(host);
    let faults = fixture("faults.ts");
    let args = ["--no-session", "-e", &faults, "--setting", "extensionHookTimeoutMs=500"];
    let mut rho = Rho::start(&env, &args).await;
    rho.send(json!({"type": "prompt", "id": "p", "message": "break things"})).await;
    let frames = rho.until_agent_end().await;

    let results = tool_results(&frames);
    assert_eq!(results[0], ("failed because it must".to_owned(), true));
    assert!(results[1].1 && results[1].0.contains("the extension host exited"), "{results:?}");
    assert!(results[2].0.starts_with("alive in "), "restarted on next use: {results:?}");
    assert_eq!(
        results[3],
        ("Extension failed, blocking execution: no answer within 0.5 s".to_owned(), true),
        "a hook that never answers blocks the call"
    );
    let errors: Vec<&Value> = frames.iter().filter(|f| f["type"] == "extension_error").collect();
    let turn_start = errors.iter().find(|e| e["event"] == "turn_start").unwrap();
    assert_eq!(turn_start["error"], "turn_start handler broke");
    assert!(turn_start["extensionPath"].as_str().unwrap().ends_with("faults.ts"), "{turn_start}");
    assert!(errors.iter().any(|e| e["event"] == "exit"), "the crash is reported: {errors:?}");
    assert_eq!(frames.last().unwrap()["type"], "agent_end");
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["isStreaming"], false);
}

#[tokio::test]
async fn without_node_the_start_fails_with_one_clear_error() {
    let env = Env::new(vec![]).await;
    let mut command = env.command(&["--mode", "rpc", "-e", &fixture("hooks.ts")]);
    command.env("RHO_NODE", env.dir.path().join("no-such-node"));
    let output = command.output().await.unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Extensions need Node.js 22.19 or newer with npm, and none was found"), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing on the protocol channel: {:?}", output.stdout);
}

/// pi 1.6 needs Node.js 22.19: an older one is named, with what to do.
#[tokio::test]
async fn an_older_node_is_one_clear_error() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new(vec![]).await;
    let node = env.dir.path().join("node");
    std::fs::write(&node, "#!/bin/sh\necho v20.20.2\n").unwrap();
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut command = env.command(&["--mode", "rpc", "-e", &fixture("hooks.ts")]);
    command.env("RHO_NODE", &node);
    let output = command.output().await.unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = format!(
        "Extensions need Node.js 22.19 or newer; {} is v20.20.2. Install a newer Node.js, or start rho with \
         --no-extensions.",
        node.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing on the protocol channel: {:?}", output.stdout);
}

#[tokio::test]
async fn an_unknown_option_is_an_error_when_no_extension_takes_it() {
    let env = Env::new(vec![]).await;
    let output = env.command(&["--mode", "rpc", "--plan"]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim(), "Error: Unknown option: --plan");
}

/// A named extension that is not there is reported, and the run goes on without starting a host.
#[tokio::test]
async fn a_missing_extension_file_is_reported_and_the_run_goes_on() {
    let env = Env::new(vec![Turn::text("Still here.")]).await;
    let mut command = env.command(&["-p", "--model", "mock/mock-model", "--no-session", "-e", "gone.ts", "hi"]);
    // No host could start: no Node.js at all.
    command.env("RHO_NODE", env.dir.path().join("no-such-node"));
    let output = command.output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Still here.\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Failed to load extension:") && stderr.contains("gone.ts does not exist"), "{stderr}");
}

/// In RPC mode the host hears of it too, as an `extension_error` after `ready`.
#[tokio::test]
async fn an_extension_that_does_not_load_is_an_extension_error_frame() {
    let env = Env::new(vec![]).await;
    let mut command = env.command(&["--mode", "rpc", "--no-session", "--model", "mock/mock-model", "-e", "gone.ts"]);
    command.env("RHO_NODE", env.dir.path().join("no-such-node"));
    let mut rho = Rho::start_command(command).await;
    let error = rho.next().await;
    let path = env.cwd.join("gone.ts");
    assert_eq!(
        error,
        json!({"type": "extension_error", "extensionPath": path, "event": "load",
            "error": format!("Failed to load extension: {} does not exist", path.display())})
    );
    assert_eq!(rho.data(json!({"type": "get_state"})).await["isStreaming"], false);
}

/// A handler that waits forever is given up on at the deadline and the host goes on with the
/// next event; one that spins forever leaves the host deaf to a ping, so the host is killed and a
/// fresh one runs the next call.
#[tokio::test]
async fn a_stuck_hook_is_given_up_on_and_a_spinning_host_replaced() {
    let Some(host) = pi_host("a_stuck_hook_is_given_up_on_and_a_spinning_host_replaced") else { return };
    let env = Env::new(vec![
        Turn::tool_call("read", json!({"path": "x"})),
        Turn::tool_call("alive", json!({})),
        Turn::tool_call("spin", json!({})),
        Turn::tool_call("alive", json!({})),
        Turn::text("Survived."),
    ])
    .await
    .with_extension_host(host);
    let faults = fixture("faults.ts");
    let args = ["--no-session", "-e", &faults, "--setting", "extensionHookTimeoutMs=500"];
    let mut rho = Rho::start(&env, &args).await;
    rho.send(json!({"type": "prompt", "id": "p", "message": "get stuck"})).await;
    let frames = rho.until_agent_end().await;

    let pids = std::fs::read_to_string(env.cwd.join("host-pids.txt")).unwrap();
    let pids: Vec<&str> = pids.lines().collect();
    assert_eq!(pids.len(), 2, "one host, then its replacement: {pids:?}");
    let blocked = "Extension failed, blocking execution: no answer within 0.5 s".to_owned();
    assert_eq!(
        tool_results(&frames),
        [
            (blocked.clone(), true),
            (format!("alive in {}", pids[0]), false),
            (blocked, true),
            (format!("alive in {}", pids[1]), false),
        ],
        "the waiting handler does not hold up the next call; the spinning host is replaced"
    );
    let errors: Vec<&Value> = frames.iter().filter(|f| f["type"] == "extension_error").collect();
    let timeout = errors.iter().find(|e| e["event"] == "timeout").expect("the stuck host is reported");
    assert!(timeout["error"].as_str().unwrap().starts_with("the extension host stopped answering"), "{timeout}");
    let first = nix::unistd::Pid::from_raw(pids[0].parse().unwrap());
    assert!(nix::sys::signal::kill(first, None).is_err(), "the spinning host is gone");
}

/// `process.exit()` while an extension loads fails that extension's load (an `extension_error`
/// in RPC mode, a line on stderr in print mode); the others load and the run goes on.
#[tokio::test]
async fn an_extension_that_exits_as_it_loads_only_fails_its_own_load() {
    let Some(host) = pi_host("an_extension_that_exits_as_it_loads_only_fails_its_own_load") else { return };
    let env = Env::new(vec![Turn::tool_call("hello", json!({"name": "you"})), Turn::text("Loaded.")])
        .await
        .with_extension_host(host.clone());
    let exits = fixture("exit-at-load.ts");
    let hello = example(&host, "hello.ts");
    let mut rho = Rho::start(&env, &["--no-session", "-e", &exits, "-e", &hello]).await;
    let error = rho.next().await;
    assert_eq!(
        error,
        json!({"type": "extension_error", "extensionPath": exits, "event": "load",
            "error": "Failed to load extension: process.exit(1) was called while the extension loaded"})
    );
    rho.send(json!({"type": "prompt", "id": "p", "message": "greet"})).await;
    let frames = rho.until_agent_end().await;
    assert_eq!(tool_results(&frames), [("Hello, you!".to_owned(), false)]);

    let env = Env::new(vec![Turn::text("Printed.")]).await.with_extension_host(host);
    let output =
        env.command(&["-p", "--model", "mock/mock-model", "--no-session", "-e", &exits, "hi"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Printed.\n");
    assert!(stderr.contains("process.exit(1) was called while the extension loaded"), "{stderr}");
}
