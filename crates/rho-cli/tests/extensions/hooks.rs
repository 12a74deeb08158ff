//! The hooks whose answers change what rho does, through the fixture `hooks.ts`: what the model
//! is sent (input, before_agent_start, context, before_provider_request) and what its tool
//! calls do (tool_call, tool_result).

use rho_mock_llm::Turn;
use serde_json::{Value, json};

use crate::common::extensions::{fixture, pi_host};
use crate::common::{Env, Rho, read_jsonl, types};

#[tokio::test]
async fn hooks_shape_the_request_and_the_tool_calls() {
    let Some(host) = pi_host("hooks_shape_the_request_and_the_tool_calls") else { return };
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "echo hi"})),
        Turn::tool_call("write", json!({"path": "out.txt", "content": "x"})),
        Turn::text("Arr."),
        Turn::text("Forgotten."),
    ])
    .await
    .with_extension_host(host);
    let mut rho = Rho::start(&env, &["-e", &fixture("hooks.ts")]).await;

    rho.send(json!({"type": "prompt", "id": "p1", "message": "?quick what is rust"})).await;
    let frames = rho.until_agent_end().await;
    let ends: Vec<Value> = frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .map(|f| json!([f["toolName"], f["result"]["content"], f["isError"]]))
        .collect();
    assert_eq!(
        ends,
        [
            json!(["bash", [{"type": "text", "text": "patched\nhi\n"}, {"type": "text", "text": "[checked by hooks]"}], false]),
            json!(["write", [{"type": "text", "text": "No writing today"}], true]),
        ]
    );
    assert!(!env.cwd.join("out.txt").exists());

    let first = &env.request_bodies()[0];
    let system = first["system"].to_string();
    assert!(system.contains("Always answer like a pirate."), "{system}");
    assert_eq!(first["metadata"], json!({"user_id": "hooks-fixture"}));
    let messages = first["messages"].to_string();
    assert!(messages.contains("Respond briefly: what is rust (from rpc)"), "{messages}");
    assert!(messages.contains("Noted a prompt of 40 characters"), "{messages}");

    // Handled by the extension: answered, and nothing runs.
    let response = rho.request(json!({"type": "prompt", "message": "ping"})).await;
    assert_eq!(response["success"], true, "{response}");
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["isStreaming"], false);
    assert_eq!(env.request_bodies().len(), 3);

    // The context hook keeps a message from the model; the session keeps it.
    rho.send(json!({"type": "prompt", "id": "p2", "message": "FORGET this"})).await;
    let frames = rho.until_agent_end().await;
    assert!(types(&frames).contains(&"agent_end".to_owned()));
    let last = env.request_bodies().last().cloned().unwrap();
    assert!(!last["messages"].to_string().contains("FORGET this\""), "{last}");

    rho.close_stdin();
    rho.wait().await;
    let entries = read_jsonl(&env.session_files()[0]);
    let kinds: Vec<String> = entries
        .iter()
        .map(|e| match e["type"].as_str().unwrap() {
            "message" => format!("message:{}", e["message"]["role"].as_str().unwrap()),
            "custom_message" => format!("custom_message:{}", e["customType"].as_str().unwrap()),
            other => other.to_owned(),
        })
        .collect();
    assert!(kinds.contains(&"custom_message:hooks-note".to_owned()), "{kinds:?}");
    let user: Vec<&Value> =
        entries.iter().filter(|e| e["type"] == "message" && e["message"]["role"] == "user").collect();
    assert_eq!(user[0]["message"]["content"][0]["text"], "Respond briefly: what is rust (from rpc)");
    assert_eq!(user[1]["message"]["content"][0]["text"], "FORGET this");
}

/// pi 1.6's events reach the handlers: `before_agent_start` names what started the run (a
/// user's prompt, or a custom message with `triggerTurn`), `agent_settled` follows the run,
/// `ui_prompt_start` / `ui_prompt_end` surround a dialog, `ctx.mode` is `rpc`, a header
/// `before_provider_headers` adds is sent, `context_with_system` changes the request, and `provider_stream_event` sees the provider's own
/// events.
#[tokio::test]
async fn pi_1_6_events_reach_the_handlers() {
    let Some(host) = pi_host("pi_1_6_events_reach_the_handlers") else { return };
    let env = Env::new(vec![Turn::text("Hi."), Turn::text("Poked.")]).await.with_extension_host(host);
    let events = fixture("pi16-events.ts");
    let mut rho = Rho::start(&env, &["--no-session", "-e", &events]).await;
    let notice = |frame: &Value| frame["method"] == "notify";
    let settled = |frame: &Value| frame["method"] == "notify" && frame["message"] == "agent_settled aborted=false";

    rho.send(json!({"type": "prompt", "id": "p1", "message": "hello"})).await;
    let mut frames = rho.until(settled).await;
    rho.send(json!({"type": "prompt", "id": "p2", "message": "/poke"})).await;
    frames.extend(rho.until(settled).await);
    rho.send(json!({"type": "prompt", "id": "p3", "message": "/ask"})).await;
    let dialog = rho.until(|f| f["method"] == "confirm").await;
    let id = dialog.last().unwrap()["id"].clone();
    assert!(!dialog.iter().any(|f| f["id"] == "p3"), "a command's prompt is answered once it finished: {dialog:?}");
    frames.extend(dialog);
    rho.send(json!({"type": "extension_ui_response", "id": id, "confirmed": true})).await;
    let answered = |f: &Value| f["type"] == "response" && f["id"] == "p3";
    let ended = |f: &Value| f["method"] == "notify" && f["message"] == "ui_prompt_end confirm";
    let mut after = rho.until(|f| answered(f) || ended(f)).await;
    let first = after.last().unwrap().clone();
    after.extend(rho.until(|f| if answered(&first) { ended(f) } else { answered(f) }).await);
    let response = after.iter().find(|f| answered(f)).unwrap();
    assert_eq!(response["data"], json!({"disposition": "handled"}));
    frames.extend(after);

    // An extension's command of a built-in's name runs instead of the built-in.
    rho.send(json!({"type": "prompt", "id": "t", "message": "/tools"})).await;
    let tools = rho.until(|f| f["type"] == "response" && f["id"] == "t").await;
    assert!(tools.iter().any(|f| f["message"] == "the extension's /tools"), "{tools:?}");
    assert!(!tools.iter().any(|f| f["type"] == "command_output"), "{tools:?}");
    // sendUserMessage with expandPromptTemplates reads the text as a typed prompt: the command runs.
    rho.send(json!({"type": "prompt", "id": "r", "message": "/relay"})).await;
    rho.until(|f| f["message"] == "the extension's /tools").await;
    let listed = rho.data(json!({"type": "get_available_commands"})).await;
    let tools: Vec<&Value> = listed["commands"].as_array().unwrap().iter().filter(|c| c["name"] == "tools").collect();
    assert_eq!(tools.len(), 1, "{listed}");
    assert_eq!(tools[0]["description"], "Takes the name of a built-in");

    let raw = frames.iter().find(|f| f["method"] == "setStatus").expect("the agent_end status");
    assert_eq!(raw["statusText"], "raw events: true", "provider_stream_event saw the provider's events");
    let notices: Vec<&str> = frames.iter().filter(|f| notice(f)).map(|f| f["message"].as_str().unwrap()).collect();
    assert_eq!(
        notices,
        [
            "before_agent_start user hello in rpc",
            "agent_settled aborted=false",
            "before_agent_start custom poke in rpc",
            "agent_settled aborted=false",
            "ui_prompt_start confirm Sure?",
            "ui_prompt_end confirm",
        ]
    );
    assert!(env.request_bodies()[1].to_string().contains("poked"), "the custom message started the run");
    assert!(env.request_bodies()[0].to_string().contains("(noted)"), "context_with_system changed the request");
    let system = env.request_bodies()[0]["system"].to_string();
    assert!(
        system.contains("\\n\\n<house_rules>\\nBe brief.\\n</house_rules>"),
        "a section follows the prompt: {system}"
    );
    let request = env.server.last_request().unwrap();
    assert_eq!(request.headers.get("x-extension").map(String::as_str), Some("pi16-events"));
}

/// Messages an `agent_end` handler sends go to the model next, in their order, one at a time, as
/// in pi 1.6 (where the run is still active then and goes on with them).
#[tokio::test]
async fn a_message_sent_at_agent_end_goes_to_the_model_next() {
    let Some(host) = pi_host("a_message_sent_at_agent_end_goes_to_the_model_next") else { return };
    let env = Env::new(vec![Turn::text("First."), Turn::text("Going on."), Turn::text("Done.")])
        .await
        .with_extension_host(host);
    let nudge = fixture("agent-end-nudge.ts");
    let mut rho = Rho::start(&env, &["--no-session", "-e", &nudge]).await;
    rho.send(json!({"type": "prompt", "id": "p", "message": "hello"})).await;
    rho.until_agent_end().await;
    let frames = rho.until_agent_end().await;
    let last = frames.iter().rfind(|f| f["type"] == "message_end").unwrap();
    assert_eq!(last["message"]["content"][0]["text"], "Done.");
    let texts = |request: &Value| -> Vec<String> {
        request["messages"].as_array().unwrap().iter().map(|m| m["content"].to_string()).collect()
    };
    let bodies = env.request_bodies();
    let second = texts(&bodies[1]);
    assert_eq!(second.len(), 3, "{second:?}");
    assert!(second[0].contains("hello") && second[1].contains("First.") && second[2].contains("Keep going."));
    let third = texts(&bodies[2]);
    assert_eq!(third.len(), 5, "{third:?}");
    assert!(third[3].contains("Going on.") && third[4].contains("And then this."), "{third:?}");
}
