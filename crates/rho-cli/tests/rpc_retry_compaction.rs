//! Auto-retry and compaction through the real binary against scripted failures: 429 with
//! Retry-After, three 529s, abort_retry during the wait, a 401 reported at once; threshold
//! auto-compaction with both generations of events, manual compaction with a focus, a context
//! overflow compacted and retried once, and a compacted session that reloads to the same context.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho, redact, types};
use rho_mock_llm::{Turn, Usage};
use serde_json::{Value, json};

/// Short back-off so the tests do not sleep for seconds.
const FAST_RETRY: &[&str] = &["--no-session", "--setting", "retry.baseDelayMs=20"];

fn session_events(frames: &[Value]) -> Vec<Value> {
    frames
        .iter()
        .filter(|f| {
            let t = f["type"].as_str().unwrap_or("");
            t.starts_with("auto_") || t.starts_with("compaction_")
        })
        .map(redact)
        .collect()
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_after_the_servers_delay() {
    let env = Env::new(vec![Turn::error(429, "Rate limited").with_retry_after(0.3), Turn::text("Made it.")]).await;
    let mut rho = Rho::start(&env, FAST_RETRY).await;
    rho.send(json!({"type": "prompt", "message": "hi"})).await;
    let mut frames = rho.until_agent_end().await;
    frames.extend(rho.until_agent_end().await);
    assert_eq!(
        session_events(&frames),
        [
            json!({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 300,
                   "errorMessage": frames.iter().find(|f| f["type"] == "message_end" && f["message"]["role"] == "assistant").unwrap()["message"]["errorMessage"]}),
            json!({"type": "auto_retry_end", "success": true, "attempt": 1}),
        ]
    );
    assert!(frames.iter().filter(|f| f["type"] == "agent_start").count() == 2);
    assert_eq!(frames.last().unwrap()["messages"][0]["content"][0]["text"], "Made it.");
    assert_eq!(env.request_bodies().len(), 2);
    // omp's `isTerminal`: the failed run says the retry follows; the last one ends the prompt.
    assert_eq!(is_terminal(&frames), [false, true]);
}

/// `isTerminal` of each `agent_end` in `frames`.
fn is_terminal(frames: &[Value]) -> Vec<bool> {
    frames.iter().filter(|f| f["type"] == "agent_end").map(|f| f["isTerminal"].as_bool().unwrap()).collect()
}

#[tokio::test]
async fn a_retry_given_up_ends_the_prompt_with_a_terminal_agent_end() {
    let env = Env::new(vec![Turn::error(503, "Unavailable").repeat(2)]).await;
    let mut rho =
        Rho::start(&env, &["--no-session", "--setting", "retry.baseDelayMs=20", "--setting", "retry.maxRetries=1"])
            .await;
    rho.send(json!({"type": "prompt", "message": "hi"})).await;
    let mut frames = rho.until_agent_end().await;
    frames.extend(rho.until(|f| f["type"] == "auto_retry_end").await);
    assert_eq!(is_terminal(&frames), [false, true], "the second failure is the last run");
    assert_eq!(frames.last().unwrap()["success"], false);
    assert_eq!(env.request_bodies().len(), 2);
}

#[tokio::test]
async fn three_overloaded_replies_then_success() {
    let env = Env::new(vec![Turn::error(529, "Overloaded").repeat(3), Turn::text("Finally.")]).await;
    let mut rho = Rho::start(&env, FAST_RETRY).await;
    rho.send(json!({"type": "prompt", "message": "hi"})).await;
    let frames = rho.until(|f| f["type"] == "auto_retry_end").await;
    let events = session_events(&frames);
    let attempts: Vec<(String, Value)> =
        events.iter().map(|e| (e["type"].as_str().unwrap().to_owned(), e["attempt"].clone())).collect();
    assert_eq!(
        attempts,
        [
            ("auto_retry_start".to_owned(), json!(1)),
            ("auto_retry_start".to_owned(), json!(2)),
            ("auto_retry_start".to_owned(), json!(3)),
            ("auto_retry_end".to_owned(), json!(3)),
        ]
    );
    assert_eq!(events[1]["delayMs"], 40);
    assert_eq!(events[2]["delayMs"], 80);
    assert_eq!(events[3]["success"], true);
    let frames = rho.until_agent_end().await;
    assert_eq!(frames.last().unwrap()["messages"][0]["content"][0]["text"], "Finally.");
}

#[tokio::test]
async fn abort_retry_cancels_the_wait() {
    let env = Env::new(vec![Turn::error(503, "Unavailable"), Turn::text("never")]).await;
    let mut rho = Rho::start(&env, &["--no-session", "--setting", "retry.baseDelayMs=30000"]).await;
    rho.send(json!({"type": "prompt", "message": "hi"})).await;
    rho.until(|f| f["type"] == "auto_retry_start").await;
    assert_eq!(rho.data(json!({"type": "get_state"})).await["isStreaming"], true);
    rho.send(json!({"id": "r", "type": "abort_retry"})).await;
    let frames = rho.until(|f| f["type"] == "auto_retry_end").await;
    assert_eq!(
        frames.last().unwrap(),
        &json!({"type": "auto_retry_end", "success": false, "attempt": 1, "finalError": "Retry cancelled"})
    );
    assert_eq!(rho.data(json!({"type": "get_state"})).await["isStreaming"], false);
    assert_eq!(env.request_bodies().len(), 1);
}

#[tokio::test]
async fn a_prompt_during_the_retry_wait_is_taken_and_carried_by_the_retry() {
    let env = Env::new(vec![Turn::error(529, "Overloaded"), Turn::text("Both answered.")]).await;
    let mut rho = Rho::start(&env, &["--no-session", "--setting", "retry.baseDelayMs=30000"]).await;
    rho.send(json!({"type": "prompt", "message": "first"})).await;
    rho.until(|f| f["type"] == "auto_retry_start").await;
    // pi's client prompts again as soon as it reads agent_end; pi takes it.
    let accepted = rho.request(json!({"type": "prompt", "message": "second"})).await;
    assert_eq!(accepted["success"], true, "{accepted}");
    // The retry goes at once (not after 30 s), with both messages.
    let frames = rho.until(|f| f["type"] == "auto_retry_end").await;
    assert_eq!(frames.last().unwrap(), &json!({"type": "auto_retry_end", "success": true, "attempt": 1}));
    let frames = rho.until_agent_end().await;
    assert_eq!(
        frames.last().unwrap()["messages"].as_array().map(Vec::len),
        Some(2),
        "the user's message and the reply"
    );
    let bodies = env.request_bodies();
    assert_eq!(bodies.len(), 2);
    let said: Vec<&str> =
        bodies[1]["messages"].as_array().unwrap().iter().filter_map(|m| m["content"][0]["text"].as_str()).collect();
    assert_eq!(said, ["first", "second"]);
}

#[tokio::test]
async fn an_auth_error_is_reported_at_once_without_retries() {
    let env = Env::new(vec![Turn::error(401, "invalid x-api-key")]).await;
    let mut rho = Rho::start(&env, FAST_RETRY).await;
    rho.send(json!({"type": "prompt", "message": "hi"})).await;
    let frames = rho.until_agent_end().await;
    assert!(session_events(&frames).is_empty());
    let end = frames.iter().find(|f| f["type"] == "message_end" && f["message"]["role"] == "assistant").unwrap();
    assert_eq!(end["message"]["stopReason"], "error");
    assert!(end["message"]["errorMessage"].as_str().unwrap().contains("invalid x-api-key"), "{end}");
    assert_eq!(rho.data(json!({"type": "get_state"})).await["isStreaming"], false);
    assert_eq!(env.request_bodies().len(), 1);
}

#[tokio::test]
async fn crossing_the_threshold_compacts_with_both_generations_of_events() {
    let big = Usage { input: 950, output: 20, ..Usage::default() };
    let env =
        Env::new(vec![Turn::text("One."), Turn::text("Two.").with_usage(big), Turn::text("## Goal\nKeep going")]).await;
    let mut rho = Rho::start(
        &env,
        &[
            "--model",
            "mock/mock-small",
            "--setting",
            "compaction.keepRecentTokens=3",
            "--setting",
            "compaction.reserveTokens=100",
        ],
    )
    .await;
    rho.send(json!({"type": "prompt", "message": "first"})).await;
    assert!(session_events(&rho.until_agent_end().await).is_empty());
    rho.send(json!({"type": "prompt", "message": "second"})).await;
    let mut frames = rho.until_agent_end().await;
    frames.extend(rho.until(|f| f["type"] == "compaction_end").await);
    let events = session_events(&frames);
    assert_eq!(types(&events), ["auto_compaction_start", "compaction_start", "auto_compaction_end", "compaction_end"]);
    insta::assert_json_snapshot!(events);
    let summary_request = &env.request_bodies()[2];
    let system = summary_request["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("summar"), "{system}");
    let prompt = summary_request["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(prompt.starts_with("<conversation>\n[User]: first\n\n[Assistant]: One.\n</conversation>"), "{prompt}");
    assert!(prompt.contains("## Goal") && prompt.contains("## Critical Context"), "{prompt}");
    // The lifecycle ended before compaction_end went out.
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!((state["isCompacting"].clone(), state["isStreaming"].clone()), (json!(false), json!(false)));
    assert_eq!(state["messageCount"], 4, "declared prompt, summary, second, Two.");
}

/// A conversation short enough to keep whole is not compacted: no summary request, and the
/// error pi gives, in the answer and (with pi's prefix) in `compaction_end`.
#[tokio::test]
async fn a_conversation_short_enough_to_keep_is_not_compacted() {
    let env = Env::new(vec![Turn::text("One.")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"id": "c", "type": "compact"})).await;
    let empty = rho.until(|f| f["id"] == "c").await;
    insta::assert_json_snapshot!("nothing_to_compact", empty);
    rho.send(json!({"type": "prompt", "message": "first"})).await;
    rho.until(|f| f["type"] == "agent_settled").await;
    rho.send(json!({"id": "c", "type": "compact"})).await;
    assert_eq!(rho.until(|f| f["id"] == "c").await, empty);
    assert_eq!(env.request_bodies().len(), 1, "the prompt's, and no summary request");
}

#[tokio::test]
async fn manual_compaction_with_a_focus_and_a_reload_to_the_same_context() {
    let env =
        Env::new(vec![Turn::text("One."), Turn::text("Two."), Turn::text("## Goal\nShip it"), Turn::text("Three.")])
            .await;
    let mut rho = Rho::start(&env, &["--setting", "compaction.keepRecentTokens=3"]).await;
    for text in ["first", "second"] {
        rho.send(json!({"type": "prompt", "message": text})).await;
        rho.until_agent_end().await;
    }
    rho.send(json!({"id": "c", "type": "compact", "customInstructions": "the parser"})).await;
    let frames = rho.until(|f| f["id"] == "c").await;
    let response = frames.last().unwrap();
    assert_eq!(response["success"], true, "{response}");
    assert!(response["data"]["summary"].as_str().unwrap().starts_with("## Goal\nShip it"));
    assert!(response["data"]["tokensBefore"].as_u64().unwrap() > 0);
    assert_eq!(types(&session_events(&frames)), ["compaction_start", "compaction_end"]);
    let prompt = env.request_bodies()[2]["messages"][0]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(prompt.ends_with("Additional focus: the parser"), "{prompt}");
    let before = rho.data(json!({"type": "get_messages"})).await;
    assert_eq!(before["messages"][0]["role"], "system", "the compaction keeps the declared prompt");
    assert_eq!(before["messages"][1]["role"], "compactionSummary");

    let again = rho.request(json!({"type": "compact"})).await;
    assert_eq!(again["error"], "Already compacted");
    rho.close_stdin();
    assert!(rho.wait().await.success());

    let mut reloaded = Rho::start(&env, &["--continue"]).await;
    let after = reloaded.data(json!({"type": "get_messages"})).await;
    assert_eq!(after, before);
    reloaded.send(json!({"type": "prompt", "message": "third"})).await;
    reloaded.until_agent_end().await;
    let sent = &env.request_bodies()[3]["messages"];
    assert!(sent[0]["content"][0]["text"].as_str().unwrap().contains("Ship it"), "{sent}");
}

/// A reasoning model's summary thinks at the session's level, as the conversation does (pi 1.6).
#[tokio::test]
async fn the_summary_thinks_at_the_sessions_level() {
    let env = Env::with_api(
        vec![Turn::text("One."), Turn::text("Two."), Turn::text("## Goal\nShip it")],
        "anthropic-messages",
        true,
    )
    .await;
    let mut rho = Rho::start(&env, &["--setting", "compaction.keepRecentTokens=3", "--thinking", "low"]).await;
    for text in ["first", "second"] {
        rho.send(json!({"type": "prompt", "message": text})).await;
        rho.until_agent_end().await;
    }
    let response = rho.request(json!({"type": "compact"})).await;
    assert_eq!(response["success"], true, "{response}");
    let bodies = env.request_bodies();
    assert_eq!(bodies[0]["thinking"]["type"], "enabled", "{}", bodies[0]);
    assert_eq!(bodies[2]["thinking"], bodies[0]["thinking"], "the summary at the conversation's level");
}

#[tokio::test]
async fn a_context_overflow_is_compacted_once_and_retried() {
    let env = Env::new(vec![
        Turn::text("Earlier answer."),
        Turn::error(400, "prompt is too long: 250000 tokens > 200000 maximum"),
        Turn::text("## Goal\nSummarized"),
        Turn::text("Worked after compaction."),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--no-session", "--setting", "compaction.keepRecentTokens=1"]).await;
    rho.send(json!({"type": "prompt", "message": "earlier"})).await;
    rho.until_agent_end().await;
    rho.send(json!({"type": "prompt", "message": "now a huge one"})).await;
    let mut frames = rho.until_agent_end().await;
    frames.extend(rho.until_agent_end().await);
    let events = session_events(&frames);
    assert_eq!(events[0], json!({"type": "auto_compaction_start", "reason": "overflow", "action": "context-full"}));
    let end = events.iter().find(|e| e["type"] == "auto_compaction_end").unwrap();
    assert_eq!((end["aborted"].clone(), end["willRetry"].clone()), (json!(false), json!(true)));
    assert_eq!(frames.last().unwrap()["messages"][0]["content"][0]["text"], "Worked after compaction.");
    assert_eq!(env.request_bodies().len(), 4);
    assert_eq!(is_terminal(&frames), [false, true], "the overflowed run is followed by the retried one");
}

#[tokio::test]
async fn get_state_reports_compaction_and_abort_cancels_it() {
    let big = Usage { input: 950, output: 20, ..Usage::default() };
    let env = Env::new(vec![
        Turn::text("One."),
        Turn::text("Two.").with_usage(big),
        Turn::text("## Goal\nnever finished").with_delay_ms(3000),
    ])
    .await;
    let args = [
        "--model",
        "mock/mock-small",
        "--setting",
        "compaction.keepRecentTokens=3",
        "--setting",
        "compaction.reserveTokens=100",
    ];
    let mut rho = Rho::start(&env, &args).await;
    rho.send(json!({"type": "prompt", "message": "first"})).await;
    rho.until_agent_end().await;
    rho.send(json!({"type": "prompt", "message": "second"})).await;
    rho.until(|f| f["type"] == "compaction_start").await;
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!((state["isCompacting"].clone(), state["isStreaming"].clone()), (json!(true), json!(true)));
    rho.send(json!({"id": "a", "type": "abort"})).await;
    // The abort is answered at once; the compaction's end may come before or after the answer.
    let mut frames = rho.until(|f| f["id"] == "a").await;
    if !frames.iter().any(|f| f["type"] == "auto_compaction_end") {
        frames.extend(rho.until(|f| f["type"] == "auto_compaction_end").await);
    }
    let end = frames.iter().find(|f| f["type"] == "auto_compaction_end").unwrap();
    assert_eq!(end["aborted"], true);
    assert!(end.get("result").is_none());
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!((state["isCompacting"].clone(), state["isStreaming"].clone()), (json!(false), json!(false)));
    assert_eq!(state["messageCount"], 5, "nothing was compacted");
}

#[tokio::test]
async fn an_empty_413_is_a_context_overflow_too() {
    let empty_413: Turn = serde_json::from_value(json!({"error": {"status": 413, "body": ""}})).unwrap();
    let env = Env::new(vec![
        Turn::text("Earlier answer."),
        empty_413,
        Turn::text("## Goal\nSummarized"),
        Turn::text("Fits now."),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--no-session", "--setting", "compaction.keepRecentTokens=1"]).await;
    rho.send(json!({"type": "prompt", "message": "earlier"})).await;
    rho.until_agent_end().await;
    rho.send(json!({"type": "prompt", "message": "now"})).await;
    let first = rho.until_agent_end().await;
    let failed = first.iter().find(|f| f["type"] == "message_end" && f["message"]["stopReason"] == "error").unwrap();
    assert_eq!(failed["message"]["errorMessage"], "413 status code (no body)");
    let frames = rho.until_agent_end().await;
    assert!(frames.iter().any(|f| f["type"] == "auto_compaction_start" && f["reason"] == "overflow"));
    assert_eq!(frames.last().unwrap()["messages"][0]["content"][0]["text"], "Fits now.");
}

/// pi 1.6 compacts within a run too: a tool result that takes the conversation past the
/// threshold (the reply's usage, 720, and the result's estimate, 200, over 1000 less 100) is
/// compacted before the next request, which then carries the summary and what was kept (the
/// call and its result: the keep of 205 tokens is reached at the call, which splits the turn).
#[tokio::test]
async fn a_run_that_crosses_the_threshold_is_compacted_before_its_next_request() {
    let small = Usage { input: 10, output: 5, ..Usage::default() };
    let large = Usage { input: 700, output: 20, ..Usage::default() };
    let env = Env::new(vec![
        Turn::text("One.").with_usage(small),
        Turn::tool_call("read", json!({"path": "big.txt"})).with_usage(large),
        // The summary of what came before the kept turn, and of the turn's start (its prompt).
        Turn::text("## Goal\nRead the big file"),
        Turn::text("## Goal\nRead the big file"),
        Turn::text("Read it."),
    ])
    .await;
    std::fs::write(env.cwd.join("big.txt"), "word ".repeat(160)).unwrap();
    let args = [
        "--model",
        "mock/mock-small",
        "--setting",
        "compaction.keepRecentTokens=205",
        "--setting",
        "compaction.reserveTokens=100",
    ];
    let mut rho = Rho::start(&env, &args).await;
    rho.send(json!({"type": "prompt", "message": "first"})).await;
    assert!(session_events(&rho.until_agent_end().await).is_empty());
    rho.send(json!({"type": "prompt", "message": "read big.txt"})).await;
    let frames = rho.until_agent_end().await;
    let events = session_events(&frames);
    assert_eq!(types(&events), ["auto_compaction_start", "compaction_start", "auto_compaction_end", "compaction_end"]);
    assert_eq!((&events[0]["reason"], &events[3]["willRetry"]), (&json!("threshold"), &json!(false)));
    assert!(events[2]["result"]["summary"].as_str().unwrap().starts_with("## Goal"), "{events:#?}");
    // Between the tool's result and the reply that follows it.
    let position = |pred: &dyn Fn(&Value) -> bool| frames.iter().position(pred).unwrap();
    let tool_end = position(&|f| f["type"] == "tool_execution_end");
    let compacted = position(&|f| f["type"] == "compaction_end");
    let last_reply = frames.iter().rposition(|f| f["type"] == "message_start" && f["message"]["role"] == "assistant");
    assert!(tool_end < compacted && Some(compacted) < last_reply, "{frames:#?}");

    let bodies = env.request_bodies();
    assert_eq!(bodies.len(), 5, "the prompt, the tool call's turn, two summaries, the reply after them");
    let after = serde_json::to_string(&bodies[4]["messages"]).unwrap();
    assert!(after.contains("Read the big file") && after.contains("tool_result"), "{after}");
    assert!(!after.contains("One."), "what was summarised is not sent again: {after}");
    let end = frames.iter().rfind(|f| f["type"] == "message_end").unwrap();
    assert_eq!(end["message"]["content"][0]["text"], "Read it.");
}
