//! Script semantics over HTTP: turn selection, repeat, exhaustion, stalls, floods, recording.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ANTHROPIC, COMPLETIONS, GEMINI, RESPONSES, body_for, post, serve};
use futures::StreamExt;
use pretty_assertions::assert_eq;
use rho_mock_llm::{EXHAUSTED, MockServer, Script, Turn};
use serde_json::{Value, json};

const ALL: [&str; 4] = [ANTHROPIC, COMPLETIONS, RESPONSES, GEMINI];

/// The reply text a client would assemble, in any of the four formats.
fn text_of(reply: &common::Reply) -> String {
    reply
        .events
        .iter()
        .filter(|e| e.data != "[DONE]")
        .map(common::Ev::json)
        .filter_map(|e| {
            if e["type"] == "content_block_delta" && e["delta"]["type"] == "text_delta" {
                return e["delta"]["text"].as_str().map(str::to_owned);
            }
            if e["type"] == "response.output_text.delta" {
                return e["delta"].as_str().map(str::to_owned);
            }
            if let Some(t) = e["choices"][0]["delta"]["content"].as_str() {
                return Some(t.to_owned());
            }
            let parts = e["candidates"][0]["content"]["parts"].as_array()?;
            Some(parts.iter().filter_map(|p| p["text"].as_str()).collect())
        })
        .collect()
}

#[tokio::test]
async fn one_script_serves_every_api_in_turn() {
    let server = serve(ALL.iter().map(|p| Turn::text(format!("for {p}"))).collect()).await;
    for path in ALL {
        let reply = post(&server, path, &body_for(path, "q")).await;
        assert_eq!(text_of(&reply), format!("for {path}"));
    }
    let apis: Vec<String> = server.requests().into_iter().map(|r| r.api).collect();
    assert_eq!(apis, ["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"]);
    assert_eq!(server.remaining_turns(), 0);
}

#[tokio::test]
async fn parallel_clients_each_get_their_matching_turn() {
    let server = serve(vec![
        Turn::text("answer for A").when_body_contains("agent-A"),
        Turn::text("answer for B").when_body_contains("agent-B"),
        Turn::text("answer for C").when_body_contains("agent-C"),
    ])
    .await;
    let ask = |marker: &'static str| {
        let server = &server;
        async move { text_of(&post(server, ANTHROPIC, &body_for(ANTHROPIC, marker)).await) }
    };
    let (c, b, a) = tokio::join!(ask("agent-C"), ask("agent-B"), ask("agent-A"));
    assert_eq!((a.as_str(), b.as_str(), c.as_str()), ("answer for A", "answer for B", "answer for C"));
}

#[tokio::test]
async fn a_turn_may_be_kept_for_one_api() {
    let server = serve(vec![Turn::text("gemini only").when_api("google-generative-ai"), Turn::text("anyone")]).await;
    let first = post(&server, COMPLETIONS, &body_for(COMPLETIONS, "x")).await;
    assert_eq!(text_of(&first), "anyone");
    let second = post(&server, GEMINI, &body_for(GEMINI, "x")).await;
    assert_eq!(text_of(&second), "gemini only");
}

#[tokio::test]
async fn repeat_serves_a_turn_several_times() {
    let server = serve(vec![Turn::error(529, "Overloaded").repeat(3), Turn::text("finally")]).await;
    for _ in 0..3 {
        let reply = post(&server, ANTHROPIC, &body_for(ANTHROPIC, "x")).await;
        assert_eq!(reply.status, 529);
        assert_eq!(reply.error_json()["error"]["type"], "overloaded_error");
    }
    let reply = post(&server, ANTHROPIC, &body_for(ANTHROPIC, "x")).await;
    assert_eq!(text_of(&reply), "finally");
}

#[tokio::test]
async fn an_exhausted_script_answers_500_in_each_format() {
    let server = serve(vec![]).await;
    for path in ALL {
        let reply = post(&server, path, &body_for(path, "x")).await;
        assert_eq!(reply.status, 500);
        let body = reply.error_json();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(EXHAUSTED), "{message}");
    }
    assert_eq!(post(&server, ANTHROPIC, &body_for(ANTHROPIC, "x")).await.error_json()["type"], "error");
}

#[tokio::test]
async fn unmatched_requests_count_as_exhaustion_and_leave_the_turn() {
    let server = serve(vec![Turn::text("later").when_body_contains("never-sent")]).await;
    let reply = post(&server, COMPLETIONS, &body_for(COMPLETIONS, "x")).await;
    assert_eq!(reply.status, 500);
    assert_eq!(server.remaining_turns(), 1);
}

#[tokio::test]
async fn pushed_turns_are_served_after_the_script() {
    let server = serve(vec![Turn::text("one")]).await;
    server.push_turns(vec![Turn::text("two"), Turn::text("three")]);
    assert_eq!(server.remaining_turns(), 3);
    for want in ["one", "two", "three"] {
        let reply = post(&server, RESPONSES, &body_for(RESPONSES, "x")).await;
        assert_eq!(text_of(&reply), want);
    }
    assert_eq!(server.remaining_turns(), 0);
}

#[tokio::test]
async fn generated_tool_call_ids_count_up_across_turns() {
    let server = serve(vec![Turn::tool_call("ls", json!({})), Turn::tool_call("ls", json!({}))]).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let reply = post(&server, ANTHROPIC, &body_for(ANTHROPIC, "x")).await;
        let start = reply.jsons().into_iter().find(|e| e["content_block"]["type"] == "tool_use").unwrap();
        ids.push(start["content_block"]["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids, ["toolu_mock_1", "toolu_mock_2"]);
}

#[tokio::test]
async fn requests_are_recorded_in_memory_and_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("requests.jsonl");
    let script = Script::new(vec![Turn::text("a"), Turn::text("b")]);
    let server = MockServer::start_with_record(script, &file).await.unwrap();
    post(&server, ANTHROPIC, &body_for(ANTHROPIC, "first")).await;
    post(&server, "/v1beta/models/g:streamGenerateContent?alt=sse", &json!({"n": 2})).await;
    let missing = post(&server, "/v2/nothing?x=1", &json!({})).await;
    assert_eq!(missing.status, 404);
    assert!(missing.error_json()["error"]["message"].as_str().unwrap().contains("/v2/nothing"));

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let first = &requests[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.api, "anthropic-messages");
    assert_eq!(first.header("X-Api-Key"), Some("test-key"));
    assert_eq!(first.headers["content-type"], "application/json");
    assert_eq!(first.body["messages"][0]["content"], "first");
    assert_eq!(requests[1].query, "alt=sse");
    assert_eq!(requests[1].body, json!({"n": 2}));
    assert_eq!(requests[2].api, "unknown");
    assert_eq!(requests[2].query, "x=1");
    assert_eq!(server.last_request().unwrap().path, "/v2/nothing");

    let lines: Vec<Value> =
        std::fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let in_memory: Vec<Value> = requests.iter().map(|r| serde_json::to_value(r).unwrap()).collect();
    assert_eq!(lines, in_memory);
}

#[tokio::test]
async fn non_json_bodies_are_recorded_as_text_and_get_is_refused() {
    let server = serve(vec![Turn::text("a")]).await;
    let url = format!("{}{ANTHROPIC}", server.url());
    let reply = common::client().post(&url).body("not json").send().await.unwrap();
    assert_eq!(reply.status(), 200);
    let get = common::client().get(&url).send().await.unwrap();
    assert_eq!(get.status(), 405);
    let requests = server.requests();
    assert_eq!(requests[0].body, Value::String("not json".into()));
    assert_eq!(requests[1].method, "GET");
}

#[tokio::test]
async fn delay_stalls_before_the_headers() {
    let server = serve(vec![Turn::text("late").with_delay_ms(600_000)]).await;
    let url = format!("{}{ANTHROPIC}", server.url());
    let request = tokio::spawn(async move { common::client().post(&url).body("{}").send().await });
    while server.requests().is_empty() {
        tokio::task::yield_now().await;
    }
    // The turn is taken and the request is waiting for its status line.
    assert_eq!(server.remaining_turns(), 0);
    assert!(!request.is_finished());
    drop(server);
    let response = request.await.unwrap().unwrap();
    assert_eq!(response.status(), 503);
}

#[tokio::test]
async fn paced_events_are_flushed_one_by_one() {
    let turn = Turn::text("abc").with_chunk_size(1).with_chunk_delay_ms(600_000);
    let server = serve(vec![turn]).await;
    let response = common::client()
        .post(format!("{}{COMPLETIONS}", server.url()))
        .body(body_for(COMPLETIONS, "x").to_string())
        .send()
        .await
        .unwrap();
    let mut body = response.bytes_stream();
    let first = body.next().await.unwrap().unwrap();
    let text = String::from_utf8(first.to_vec()).unwrap();
    assert!(text.starts_with("data: {") && text.ends_with("\n\n"), "{text}");
    assert_eq!(text.matches("data:").count(), 1);
    server.shutdown();
    let mut ended_early = false;
    while let Some(chunk) = body.next().await {
        if chunk.is_err() {
            ended_early = true;
        }
    }
    assert!(ended_early);
}

#[tokio::test]
async fn a_flood_streams_every_delta_in_every_format() {
    let server = serve(vec![Turn::flood(5000, 20).repeat(4)]).await;
    let expected = "abcdefghijklmnopqrst".repeat(5000);
    for path in ALL {
        let reply = post(&server, path, &body_for(path, "x")).await;
        assert!(reply.transport_error.is_none(), "{path}");
        let text = text_of(&reply);
        assert_eq!(text.len(), expected.len(), "{path}");
        assert!(text == expected, "{path}: flood text differs");
        let deltas = reply.events.iter().filter(|e| e.data.contains("\"abcdefghijklmnopqrst\"")).count();
        assert_eq!(deltas, 5000, "{path}");
    }
    let responses = post_responses_flood_sequence().await;
    assert!(responses.windows(2).all(|w| w[1] == w[0] + 1));
}

/// The Responses flood keeps `sequence_number` increasing through the flood.
async fn post_responses_flood_sequence() -> Vec<u64> {
    let server = serve(vec![Turn::flood(300, 5).with_thinking("t")]).await;
    let reply = post(&server, RESPONSES, &body_for(RESPONSES, "x")).await;
    reply.jsons().iter().map(|e| e["sequence_number"].as_u64().unwrap()).collect()
}

#[tokio::test]
async fn scripts_load_from_json() {
    let script =
        Script::from_json(r#"{"turns": [{"text": "from json", "usage": {"input": 7}}, {"error": {"status": 401}}]}"#)
            .unwrap();
    let server = MockServer::start(script).await.unwrap();
    let ok = post(&server, ANTHROPIC, &body_for(ANTHROPIC, "x")).await;
    assert_eq!(text_of(&ok), "from json");
    assert_eq!(ok.jsons()[0]["message"]["usage"]["input_tokens"], 7);
    let denied = post(&server, ANTHROPIC, &body_for(ANTHROPIC, "x")).await;
    assert_eq!(denied.status, 401);
    assert_eq!(denied.error_json()["error"]["message"], "Invalid API key");
}

#[tokio::test]
async fn disconnect_inside_a_large_flood_sends_exactly_n_events() {
    // message_start, content_block_start, ping, then 40 000 of the 50 000 deltas.
    let turn = Turn::flood(50_000, 20).disconnect_after(3 + 40_000);
    let reply = common::one(ANTHROPIC, turn).await;
    assert_eq!(reply.events.len(), 40_003);
    assert!(reply.transport_error.is_some());
    assert_eq!(text_of(&reply).len(), 40_000 * 20);
}
