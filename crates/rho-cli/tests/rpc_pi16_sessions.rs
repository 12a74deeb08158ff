//! Sessions as pi 1.6 writes them, continued in rho: the declared prompt (`system` message
//! entries), context edits, a compaction that kept the prompt, the `max` thinking level and entry
//! types rho does not know. The model is sent what pi sends (rho's own prompt aside), and the file
//! is only ever appended to.

use serde_json::{Value, json};

use crate::common::{Env, Rho, read_jsonl};
use rho_mock_llm::Turn;

/// A pi 1.6 session: a declared prompt, two exchanges, a compaction that kept the second one and
/// the prompt, a context edit that leaves out the kept question and one that rewrites the answer,
/// a third exchange, a usage entry and an entry type from a newer pi, and `max` thinking.
fn pi16_session(cwd: &str) -> Vec<Value> {
    let ts = "2026-11-20T10:00:00.000Z";
    let msg = |id: &str, parent: Option<&str>, message: Value| json!({"type": "message", "id": id, "parentId": parent, "timestamp": ts, "message": message});
    let user = |text: &str| json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1});
    let assistant = |text: &str| {
        json!({"role": "assistant", "content": [{"type": "text", "text": text}], "api": "anthropic-messages",
            "provider": "mock", "model": "mock-model", "usage": {"input": 10, "output": 5, "cacheRead": 0,
            "cacheWrite": 0, "totalTokens": 15, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
            "total": 0}}, "stopReason": "stop", "thinkingLevel": "max", "timestamp": 2})
    };
    let system = json!({"role": "system", "content": "",
        "sections": {"preamble": "You are a coding assistant running inside pi.", "cwd": "<cwd>\n/w\n</cwd>"},
        "toolsAdded": [{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}],
        "timestamp": 1});
    vec![
        json!({"type": "session", "version": 3, "id": "0b5c7a51-0000-4000-8000-000000000001", "timestamp": ts, "cwd": cwd}),
        json!({"type": "model_change", "id": "m1", "parentId": null, "timestamp": ts, "provider": "mock", "modelId": "mock-model"}),
        json!({"type": "thinking_level_change", "id": "t1", "parentId": "m1", "timestamp": ts, "thinkingLevel": "max"}),
        msg("s1", Some("t1"), system.clone()),
        msg("u1", Some("s1"), user("first question")),
        msg("a1", Some("u1"), assistant("first answer")),
        msg("u2", Some("a1"), user("second question")),
        msg("a2", Some("u2"), assistant("second answer")),
        json!({"type": "compaction", "id": "c1", "parentId": "a2", "timestamp": ts, "summary": "They asked twice.",
            "firstKeptEntryId": "u2", "tokensBefore": 500, "systemMessage": system}),
        json!({"type": "context_edit", "id": "e1", "parentId": "c1", "timestamp": ts, "targetId": "u2", "replacement": null}),
        json!({"type": "context_edit", "id": "e2", "parentId": "e1", "timestamp": ts, "targetId": "a2",
            "replacement": {"content": "second answer, shortened"}}),
        msg("u3", Some("e2"), user("third question")),
        msg("a3", Some("u3"), assistant("third answer")),
        json!({"type": "usage", "id": "g1", "parentId": "a3", "timestamp": ts, "kind": "cache_warm", "provider": "mock",
            "model": "mock-model", "usage": {"input": 0, "output": 0, "cacheRead": 50, "cacheWrite": 0,
            "totalTokens": 50, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}),
        json!({"type": "bookmark_v9", "id": "x1", "parentId": "g1", "timestamp": ts, "note": "from a newer pi"}),
    ]
}

fn write_session(env: &Env, lines: &[Value]) -> std::path::PathBuf {
    let dir = rho_session::session_dir_for_cwd(&env.agent_dir, &env.cwd);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("2026-11-20T10-00-00-000Z_0b5c7a51-0000-4000-8000-000000000001.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    file
}

/// `role:first line of text` of each message of a request body.
fn sent(body: &Value) -> Vec<String> {
    crate::common::message_texts(body)
        .into_iter()
        .map(|(role, text)| format!("{role}:{}", text.lines().next().unwrap_or_default()))
        .collect()
}

#[tokio::test]
async fn a_pi16_session_continues_with_what_pi_sends_and_its_file_is_only_appended_to() {
    let env = Env::with_api(vec![Turn::text("Fourth answer.")], "anthropic-messages", true).await;
    // A model that has `max` (pi clamps `max` to `high` on one that does not, and so does rho).
    let models_file = env.agent_dir.join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&models_file).unwrap()).unwrap();
    models["providers"]["mock"]["models"][0]["thinkingLevelMap"] = json!({"xhigh": "xhigh", "max": "max"});
    std::fs::write(&models_file, models.to_string()).unwrap();
    let lines = pi16_session(&env.cwd.to_string_lossy());
    let file = write_session(&env, &lines);
    let before = std::fs::read_to_string(&file).unwrap();

    let mut rho = Rho::start(&env, &["--continue"]).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["thinkingLevel"], "max", "{state}");
    let messages = rho.data(json!({"type": "get_messages"})).await;
    let roles: Vec<&str> =
        messages["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    // The kept prompt, the summary, the edited answer (its question left out), the third exchange.
    assert_eq!(roles, ["system", "compactionSummary", "assistant", "user", "assistant"]);
    assert_eq!(messages["messages"][2]["content"], json!([{"type": "text", "text": "second answer, shortened"}]));
    // The kept answers' usage, and the cache warming's usage entry (never a message).
    let stats = rho.data(json!({"type": "get_session_stats"})).await;
    assert_eq!((&stats["tokens"]["input"], &stats["tokens"]["cacheRead"]), (&json!(20), &json!(50)), "{stats}");

    rho.send(json!({"type": "prompt", "message": "fourth question"})).await;
    let frames = rho.until_agent_end().await;
    // pi's prompt is replaced by rho's: one system message declares what changed.
    let declared: Vec<&Value> = frames
        .iter()
        .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "system")
        .map(|f| &f["message"])
        .collect();
    assert_eq!(declared.len(), 1);
    let sections = declared[0]["sections"].as_object().unwrap();
    assert!(sections["preamble"].as_str().unwrap().starts_with("You are rho"), "{sections:?}");
    let added: Vec<&str> =
        declared[0]["toolsAdded"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(added, ["read", "bash", "edit", "write"], "read is declared again: its definition changed");
    assert_eq!(declared[0]["toolsRemoved"], json!([{"name": "read"}]));

    let body = &env.request_bodies()[0];
    assert_eq!(
        sent(body),
        [
            "user:The conversation history before this point was compacted into the following summary:",
            "assistant:second answer, shortened",
            "user:third question",
            "assistant:third answer",
            "user:fourth question",
        ]
    );
    let system = body["system"].to_string();
    assert!(system.contains("You are rho") && !system.contains("running inside pi"), "{system}");
    rho.close_stdin();
    assert!(rho.wait().await.success());

    // Every line pi wrote is still there, byte for byte, the unknown entry included; rho's
    // entries follow them.
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.starts_with(&before), "the file was rewritten");
    let added: Vec<String> = read_jsonl(&file)[lines.len()..]
        .iter()
        .map(|l| match l["type"].as_str().unwrap() {
            "message" => format!("message:{}", l["message"]["role"].as_str().unwrap()),
            other => other.to_owned(),
        })
        .collect();
    assert_eq!(added, ["message:system", "message:user", "message:assistant"]);
}

#[tokio::test]
async fn a_session_rho_cannot_read_a_word_of_is_never_removed() {
    let env = Env::new(vec![]).await;
    let mut lines = pi16_session(&env.cwd.to_string_lossy());
    // Only the header and entries of types rho does not know.
    lines.truncate(1);
    for i in 0..50 {
        lines.push(json!({"type": "hologram", "id": format!("h{i}"), "parentId": null, "timestamp": "t", "data": "x".repeat(600)}));
    }
    let file = write_session(&env, &lines);
    let before = std::fs::read(&file).unwrap();
    assert!(before.len() > 30_000);

    let mut rho = Rho::start(&env, &["--continue"]).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["sessionFile"], json!(file));
    rho.close_stdin();
    assert!(rho.wait().await.success());
    assert_eq!(std::fs::read(&file).unwrap(), before, "the file is gone or changed");

    // A header alone is a session too.
    let file = write_session(&env, &lines[..1]);
    let mut rho = Rho::start(&env, &["--continue"]).await;
    rho.close_stdin();
    assert!(rho.wait().await.success());
    assert!(file.exists(), "a session file rho did not make was removed");
}
