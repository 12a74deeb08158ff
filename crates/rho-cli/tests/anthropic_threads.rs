//! Anthropic's message threads (pi 1.6) on the wire, against the mock's threads: the first
//! request starts a thread, each later one sends only what followed the last reply (also within a
//! tool loop), an expired thread is started anew with the whole conversation, and an endpoint
//! that knows no threads gets whole requests from then on.

use rho_mock_llm::Turn;
use serde_json::{Value, json};

use crate::common::{Env, Rho};

/// A request's `thread` and its messages as `role: first block type or text`.
fn shape(body: &Value) -> (Value, Vec<String>, bool) {
    let messages = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let first = &m["content"][0];
            let what = first["text"].as_str().map_or_else(|| first["type"].as_str().unwrap().to_owned(), str::to_owned);
            format!("{}: {what}", m["role"].as_str().unwrap())
        })
        .collect();
    (body.get("thread").cloned().unwrap_or(Value::Null), messages, body.get("system").is_some())
}

#[tokio::test]
async fn each_request_after_a_reply_sends_only_what_followed_it() {
    let env = Env::new(vec![
        Turn::text("A1"),
        Turn::text("A2"),
        Turn::tool_call("read", json!({"path": "notes.txt"})),
        Turn::text("A3"),
        Turn::text("A4"),
        Turn::text("A5"),
        Turn::text("A6"),
    ])
    .await;
    std::fs::write(env.cwd.join("notes.txt"), "a note\n").unwrap();
    // The mock's endpoint is not api.anthropic.com: its model says it takes threads.
    let models_path = env.agent_dir.join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&models_path).unwrap()).unwrap();
    models["providers"]["mock"]["models"][0]["compat"] = json!({"supportsMessageThreads": true});
    std::fs::write(&models_path, models.to_string()).unwrap();
    let mut rho = Rho::start(&env, &[]).await;

    for text in ["one", "two", "three"] {
        rho.send(json!({"type": "prompt", "message": text})).await;
        rho.until_agent_end().await;
    }
    // Threads expire on the server: the continuation is refused and sent again whole.
    env.server.expire_threads();
    rho.send(json!({"type": "prompt", "message": "four"})).await;
    rho.until_agent_end().await;
    // An endpoint that knows no threads: sent again without, and no thread from then on.
    env.server.refuse_threads();
    for text in ["five", "six"] {
        rho.send(json!({"type": "prompt", "message": text})).await;
        rho.until_agent_end().await;
    }

    let requests = env.server.requests();
    let betas: Vec<&str> = requests.iter().map(|r| r.headers["anthropic-beta"].as_str()).collect();
    assert!(betas.iter().all(|b| b.contains("message-threads-2026-08-12")), "{betas:?}");
    let shapes: Vec<(Value, Vec<String>, bool)> = requests.iter().map(|r| shape(&r.body)).collect();
    let create = json!({"type": "create"});
    let after = |n: u32| json!({"type": "continue", "previous_message_id": format!("msg_mock_{n}")});
    let mut expected: Vec<(Value, Vec<String>, bool)> = vec![
        (create.clone(), vec!["user: one".into()], true),
        (after(1), vec!["user: two".into()], false),
        (after(2), vec!["user: three".into()], false),
        (after(3), vec!["user: tool_result".into()], false),
        // Refused (thread_not_found), then whole as a new thread.
        (after(4), vec!["user: four".into()], false),
    ];
    let mut whole: Vec<String> = [
        "user: one",
        "assistant: A1",
        "user: two",
        "assistant: A2",
        "user: three",
        "assistant: tool_use",
        "user: tool_result",
        "assistant: A3",
        "user: four",
    ]
    .map(str::to_owned)
    .to_vec();
    expected.push((create, whole.clone(), true));
    // Refused (no code: the field is unknown), then whole without a thread, and so on.
    expected.push((after(6), vec!["user: five".into()], false));
    whole.extend(["assistant: A4", "user: five"].map(str::to_owned));
    expected.push((Value::Null, whole.clone(), true));
    whole.extend(["assistant: A5", "user: six"].map(str::to_owned));
    expected.push((Value::Null, whole, true));
    assert_eq!(shapes, expected);
}
