//! Extension tools: called by the model, their results in the conversation, and a tool that
//! opens a dialog through the RPC extension UI sub-protocol.

use rho_mock_llm::Turn;
use serde_json::json;

use crate::common::extensions::{example, fixture, pi_host};
use crate::common::{Env, Rho, redact, tool_results};

/// pi's `hello.ts`: the model calls the extension's tool and gets its result back.
#[tokio::test]
async fn an_extension_tool_runs_and_its_result_reaches_the_model() {
    let Some(host) = pi_host("an_extension_tool_runs_and_its_result_reaches_the_model") else { return };
    let env = Env::new(vec![Turn::tool_call("hello", json!({"name": "World"})), Turn::text("Greeted.")])
        .await
        .with_extension_host(host.clone());
    let mut rho = Rho::start(&env, &["--no-session", "-e", &example(&host, "hello.ts")]).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    let tools: Vec<&str> = state["dumpTools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"hello"), "{tools:?}");

    rho.send(json!({"type": "prompt", "id": "p", "message": "greet the world"})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    insta::assert_json_snapshot!("hello_tool_execution_end", redact(end));
    let second = &env.request_bodies()[1];
    assert!(second.to_string().contains("Hello, World!"), "{second}");
    // The tool is offered to the model with the extension's schema.
    let offered = env.request_bodies()[0]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "hello").cloned();
    insta::assert_json_snapshot!("hello_tool_as_offered", offered);
}

/// pi's `permission-gate.ts` asks through `extension_ui_request` in RPC mode; the host's answer
/// (or its dismissal) decides.
#[tokio::test]
async fn a_tool_call_gate_asks_the_rpc_host_and_blocks_on_no() {
    let Some(host) = pi_host("a_tool_call_gate_asks_the_rpc_host_and_blocks_on_no") else { return };
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "rm -rf ./build"})),
        Turn::tool_call("bash", json!({"command": "sudo rm -rf ./build"})),
        Turn::text("Understood."),
    ])
    .await
    .with_extension_host(host.clone());
    let mut rho = Rho::start(&env, &["--no-session", "-e", &example(&host, "permission-gate.ts")]).await;
    rho.send(json!({"type": "prompt", "id": "p", "message": "clean up"})).await;
    let mut frames = rho.until(|f| f["type"] == "extension_ui_request").await;
    let asked = frames.last().cloned().unwrap();
    insta::assert_json_snapshot!("permission_gate_select", redact(&asked));
    rho.send(json!({"type": "extension_ui_response", "id": asked["id"], "value": "No"})).await;
    frames.extend(rho.until(|f| f["type"] == "extension_ui_request").await);
    let asked = frames.last().cloned().unwrap();
    assert!(asked["title"].as_str().unwrap().contains("sudo rm -rf"), "{asked}");
    // Dismissed: the gate's default is to block.
    rho.send(json!({"type": "extension_ui_response", "id": asked["id"], "cancelled": true})).await;
    frames.extend(rho.until_agent_end().await);
    let ends: Vec<_> = frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .map(|f| (f["result"]["content"][0]["text"].clone(), f["isError"].clone()))
        .collect();
    assert_eq!(ends, [(json!("Blocked by user"), json!(true)), (json!("Blocked by user"), json!(true))]);
    assert!(!env.cwd.join("build").exists());
}

/// On a machine where no extension ran before, the first use installs the host into the agent
/// dir (saying so on stderr) and the extension works; the second start finds it installed.
#[tokio::test]
async fn the_first_use_installs_the_host_into_the_agent_dir() {
    let Some(pi) = pi_host("the_first_use_installs_the_host_into_the_agent_dir") else { return };
    let env = Env::new(vec![Turn::tool_call("hello", json!({"name": "again"})), Turn::text("Done.")]).await;
    let hello = example(&pi, "hello.ts");
    let output = env
        .command(&["-p", "--model", "mock/mock-model", "--no-session", "-e", &hello, "greet"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("Installing the extension host (@earendil-works/pi-coding-agent 1.6.0)"), "{stderr}");
    let installed = env.agent_dir.join("extension-host/node_modules/@earendil-works/pi-coding-agent/package.json");
    assert!(installed.is_file());
    assert!(env.request_bodies()[1].to_string().contains("Hello, again!"));

    let output = env
        .command(&["-p", "--model", "mock/mock-model", "--no-session", "-e", &hello, "again"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("Installing"), "installed once: {stderr}");
}

/// An extension tool's output is capped as the built-in tools' is (2000 lines, 50 KiB, the rest
/// in a spill file the notice names), and an answer larger than the channel to the host is an
/// error of that call, not the end of the host.
#[tokio::test]
async fn extension_tool_output_is_capped_and_spilled() {
    let Some(host) = pi_host("extension_tool_output_is_capped_and_spilled") else { return };
    let env = Env::new(vec![
        Turn::tool_call("flood", json!({})),
        Turn::tool_call("heavy", json!({})),
        Turn::tool_call("alive", json!({})),
        Turn::text("Done."),
    ])
    .await
    .with_extension_host(host);
    let faults = fixture("faults.ts");
    let mut rho = Rho::start(&env, &["--no-session", "-e", &faults]).await;
    rho.send(json!({"type": "prompt", "id": "p", "message": "flood"})).await;
    let frames = rho.until_agent_end().await;
    let results = tool_results(&frames);

    let (text, is_error) = &results[0];
    assert!(!is_error);
    assert!(text.len() <= 50 * 1024 + 200, "{} bytes", text.len());
    assert!(text.starts_with("line 1\nline 2\n"), "{}", &text[..40]);
    let notice = text.lines().last().unwrap();
    let spill = notice
        .strip_prefix("[Output truncated: showing 2000 of 100000 lines (")
        .and_then(|rest| rest.split("Full output: ").nth(1))
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{notice}"));
    let full = std::fs::read_to_string(spill).unwrap();
    assert_eq!(full.lines().count(), 100_000);
    assert!(full.ends_with("line 100000"));

    let (text, is_error) = &results[1];
    assert!(is_error);
    assert!(text.starts_with("the message is too large for rho's channel ("), "{text}");
    assert!(results[2].0.starts_with("alive in "), "the host goes on: {results:?}");
    let request = env.request_bodies()[1].to_string();
    assert!(request.len() < 100 * 1024, "the model got the capped text: {} bytes", request.len());
    rho.close_stdin();
    assert!(rho.wait().await.success());
    assert!(!std::path::Path::new(spill).exists(), "the spill file goes with the host");
}
