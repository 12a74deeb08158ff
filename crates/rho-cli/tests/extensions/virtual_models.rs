//! Virtual models (pi 1.6's `registerVirtualModel`), through the fixture `virtual-model.ts`: the
//! selection is the virtual model while each request goes where the router sends it, the reply
//! names that model, the router's state is stored on the branch and handed back, a retry tells
//! the router what failed, a summary is routed as `direct`, a router that fails or names no
//! physical model ends the request with pi's words, and a resumed session selects the virtual
//! model again.

use rho_mock_llm::Turn;
use serde_json::{Value, json};

use crate::common::extensions::{fixture, pi_host};
use crate::common::{Env, Rho, read_jsonl, redact};

fn replies(frames: &[Value]) -> Vec<Value> {
    frames
        .iter()
        .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "assistant")
        .map(|f| redact(&f["message"]))
        .collect()
}

async fn settle(rho: &mut Rho) -> Vec<Value> {
    rho.until(|f| f["type"] == "agent_settled").await
}

#[tokio::test]
async fn a_virtual_model_routes_each_request_and_keeps_its_state_on_the_branch() {
    let Some(host) = pi_host("a_virtual_model_routes_each_request_and_keeps_its_state_on_the_branch") else {
        return;
    };
    let turns = vec![
        Turn::tool_call("write", json!({"path": "plan.txt", "content": "step 1\n"})),
        Turn::text("Wrote the plan."),
        Turn::error(503, "overloaded"),
        Turn::text("Building."),
        Turn::text("## Goal\nA summary."),
    ];
    let env = Env::with_api(turns, "anthropic-messages", true).await.with_extension_host(host);
    let extension = fixture("virtual-model.ts");
    let args =
        ["-e", extension.as_str(), "--setting", "retry.baseDelayMs=20", "--setting", "compaction.keepRecentTokens=1"];
    let mut rho = Rho::start(&env, &args).await;
    // mock-small's window (1,000 tokens) measures the context once it answered: no automatic
    // compaction gets in the way of the script.
    let manual = rho.request(json!({"type": "set_auto_compaction", "enabled": false})).await;
    assert_eq!(manual["success"], true, "{manual}");

    // Listed and chosen like any model; the selection stays the virtual one.
    let models = rho.data(json!({"type": "get_available_models"})).await;
    let listed = models["models"].as_array().unwrap().iter().find(|m| m["provider"] == "router").cloned();
    insta::assert_json_snapshot!("virtual_model_listed", listed);
    let chosen = rho.request(json!({"type": "set_model", "provider": "router", "modelId": "auto"})).await;
    assert_eq!(chosen["success"], true, "{chosen}");
    let level = rho.request(json!({"type": "set_thinking_level", "level": "high"})).await;
    assert_eq!(level["success"], true, "{level}");

    // Planned on mock-model; after the write the route moves to mock-small, with new state.
    rho.send(json!({"type": "prompt", "id": "p1", "message": "Write the plan"})).await;
    let frames = settle(&mut rho).await;
    insta::assert_json_snapshot!("virtual_model_replies", replies(&frames));
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!((&state["model"]["provider"], &state["model"]["id"]), (&json!("router"), &json!("auto")), "{state}");
    assert_eq!(state["thinkingLevel"], "high", "{state}");

    // The state is handed back; a failed request is retried and the router told what failed.
    rho.send(json!({"type": "prompt", "id": "p2", "message": "Go on"})).await;
    let frames = settle(&mut rho).await;
    let last = replies(&frames).pop().unwrap();
    assert_eq!((&last["model"], &last["content"][0]["text"]), (&json!("mock-small"), &json!("Building.")));

    // A route to no physical model, and a router that throws: the request ends with the reason.
    for (prompt, error) in [
        ("misroute this", "Virtual model router/auto routed to mock/nowhere, which is not a physical model."),
        ("router-fails now", "the router is down"),
    ] {
        rho.send(json!({"type": "prompt", "message": prompt})).await;
        let reply = replies(&settle(&mut rho).await).pop().unwrap();
        assert_eq!(
            (&reply["provider"], &reply["model"], &reply["api"], &reply["stopReason"], &reply["errorMessage"]),
            (&json!("router"), &json!("auto"), &json!("pi-virtual"), &json!("error"), &json!(error)),
            "{reply}"
        );
    }

    // A summary is asked outside the loop: routed as `direct`, to mock-small.
    let compacted = rho.request(json!({"type": "compact"})).await;
    assert_eq!(compacted["success"], true, "{compacted}");
    let requests = env.request_bodies();
    let models: Vec<&str> = requests.iter().map(|b| b["model"].as_str().unwrap()).collect();
    assert_eq!(models, ["mock-model", "mock-small", "mock-small", "mock-small", "mock-small"]);
    // mock-model was asked at high, mock-small (no reasoning) without thinking.
    assert!(requests[0].get("thinking").is_some(), "{}", requests[0]);
    assert!(requests[1].get("thinking").is_none(), "{}", requests[1]);

    rho.send(json!({"type": "prompt", "id": "r", "message": "/routes"})).await;
    let notice = rho.until(|f| f["method"] == "notify").await.pop().unwrap();
    insta::assert_snapshot!("virtual_model_routes", notice["message"].as_str().unwrap());

    let file = env.session_files().pop().unwrap();
    let states: Vec<Value> = read_jsonl(&file)
        .into_iter()
        .filter(|e| e["type"] == "custom" && e["customType"] == "pi.virtual-model-state")
        .map(|e| e["data"].clone())
        .collect();
    assert_eq!(
        states,
        [
            json!({"provider": "router", "modelId": "auto", "state": {"phase": "plan"}}),
            json!({"provider": "router", "modelId": "auto", "state": {"phase": "build"}}),
        ]
    );
    rho.close_stdin();
    rho.wait().await;

    // Resumed (without `--model`), the branch selects the virtual model again, though its
    // replies name the models it routed to.
    let mut rho = Rho::start_command(env.command(&["--mode", "rpc", "-e", extension.as_str(), "--continue"])).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!((&state["model"]["provider"], &state["model"]["id"]), (&json!("router"), &json!("auto")), "{state}");
    rho.close_stdin();
    rho.wait().await;
}

/// The conversation is measured against the model a request is routed to (pi 1.6): 5,000
/// tokens fit mock-model's window, and once the router moves to mock-small (1,000) the
/// conversation is compacted before that request; the route stands.
#[tokio::test]
async fn a_conversation_too_large_for_the_routed_model_is_compacted_first() {
    let Some(host) = pi_host("a_conversation_too_large_for_the_routed_model_is_compacted_first") else { return };
    let large = rho_mock_llm::Usage { input: 5_000, output: 20, ..rho_mock_llm::Usage::default() };
    let turns = vec![
        Turn::text("Hi."),
        Turn::tool_call("write", json!({"path": "plan.txt", "content": "step 1\n"})).with_usage(large),
        Turn::text("## Goal\nWrite the plan"),
        Turn::text("## Goal\nWrite the plan"),
        Turn::text("Wrote the plan."),
    ];
    let env = Env::new(turns).await.with_extension_host(host);
    let extension = fixture("virtual-model.ts");
    let args = [
        "-e",
        extension.as_str(),
        "--setting",
        "compaction.keepRecentTokens=15",
        "--setting",
        "compaction.reserveTokens=100",
    ];
    let mut rho = Rho::start(&env, &args).await;
    let chosen = rho.request(json!({"type": "set_model", "provider": "router", "modelId": "auto"})).await;
    assert_eq!(chosen["success"], true, "{chosen}");
    rho.send(json!({"type": "prompt", "message": "hello"})).await;
    settle(&mut rho).await;
    rho.send(json!({"type": "prompt", "message": "Write the plan"})).await;
    let frames = settle(&mut rho).await;
    let compaction: Vec<&Value> = frames.iter().filter(|f| f["type"] == "compaction_end").collect();
    assert_eq!(compaction.len(), 1, "{frames:#?}");
    assert_eq!(compaction[0]["reason"], "threshold");
    assert!(compaction[0]["result"]["summary"].as_str().unwrap().starts_with("## Goal"), "{compaction:?}");

    let bodies = env.request_bodies();
    let models: Vec<&str> = bodies.iter().map(|b| b["model"].as_str().unwrap()).collect();
    // The summaries are routed as `direct` (to mock-small by the fixture); the reply's request
    // goes where the router sent it.
    assert_eq!(models, ["mock-model", "mock-model", "mock-small", "mock-small", "mock-small"]);
    let last = serde_json::to_string(&bodies[4]["messages"]).unwrap();
    assert!(last.contains("Write the plan") && !last.contains("Hi."), "{last}");
    assert_eq!(replies(&frames).last().unwrap()["content"][0]["text"], "Wrote the plan.");
}
