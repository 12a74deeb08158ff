//! The OpenAI Responses wire format, as a plain HTTP client sees it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{RESPONSES, one};
use pretty_assertions::assert_eq;
use rho_mock_llm::{DEFAULT_THINKING_SIGNATURE, StopReason, Turn, Usage};
use serde_json::{Value, json};

fn concat(events: &[Value], kind: &str) -> String {
    events.iter().filter(|e| e["type"] == kind).map(|e| e["delta"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn text_reply_is_a_message_item_between_created_and_completed() {
    let reply = one(RESPONSES, Turn::text("Hello, world!")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.names(),
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let events = reply.jsons();
    for (i, (event, name)) in events.iter().zip(reply.names()).enumerate() {
        assert_eq!(event["type"], name);
        assert_eq!(event["sequence_number"], i);
    }
    assert_eq!(events[0]["response"]["status"], "in_progress");
    assert_eq!(events[0]["response"]["model"], "gpt-test");
    let item_id = events[2]["item"]["id"].as_str().unwrap();
    assert_eq!(events[2]["item"]["type"], "message");
    assert_eq!(events[4]["item_id"], item_id);
    assert_eq!(concat(&events, "response.output_text.delta"), "Hello, world!");
    assert_eq!(events[6]["text"], "Hello, world!");
    let completed = &events[9]["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["output"][0]["content"][0]["text"], "Hello, world!");
}

#[tokio::test]
async fn thinking_is_a_reasoning_item_with_summary_and_encrypted_content() {
    let turn = Turn::text("Answer.").with_thinking("Thinking it over.");
    let events = one(RESPONSES, turn).await.jsons();
    let added: Vec<&Value> = events.iter().filter(|e| e["type"] == "response.output_item.added").collect();
    assert_eq!(added[0]["item"]["type"], "reasoning");
    assert_eq!(added[1]["item"]["type"], "message");
    assert_eq!(added[1]["output_index"], 1);
    assert_eq!(concat(&events, "response.reasoning_summary_text.delta"), "Thinking it over.");
    let done =
        events.iter().find(|e| e["type"] == "response.output_item.done" && e["item"]["type"] == "reasoning").unwrap();
    assert_eq!(done["item"]["encrypted_content"], DEFAULT_THINKING_SIGNATURE);
    assert_eq!(done["item"]["summary"][0]["text"], "Thinking it over.");
}

#[tokio::test]
async fn function_call_arguments_stream_in_several_deltas() {
    let args = json!({"path": "src/lib.rs", "limit": 40});
    let turn = Turn::tool_call("read", args.clone()).with_chunk_size(4);
    let events = one(RESPONSES, turn).await.jsons();
    let added = events.iter().find(|e| e["type"] == "response.output_item.added").unwrap();
    assert_eq!(added["item"]["type"], "function_call");
    assert_eq!(added["item"]["call_id"], "call_mock_1");
    assert_eq!(added["item"]["name"], "read");
    assert_eq!(added["item"]["arguments"], "");
    let pieces = events.iter().filter(|e| e["type"] == "response.function_call_arguments.delta").count();
    assert!(pieces > 3);
    let text = concat(&events, "response.function_call_arguments.delta");
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), args);
    let done = events.iter().find(|e| e["type"] == "response.function_call_arguments.done").unwrap();
    assert_eq!(done["arguments"], text);
    assert_eq!(events.last().unwrap()["type"], "response.completed");
}

#[tokio::test]
async fn usage_is_in_the_final_response_and_length_is_incomplete() {
    let usage = Usage { input: 10, output: 20, cache_read: 30, cache_write: 0, reasoning: 4 };
    let turn = Turn::text("x").with_usage(usage).with_stop_reason(StopReason::Length);
    let events = one(RESPONSES, turn).await.jsons();
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.incomplete");
    assert_eq!(last["response"]["status"], "incomplete");
    assert_eq!(last["response"]["incomplete_details"]["reason"], "max_output_tokens");
    let u = &last["response"]["usage"];
    assert_eq!(u["input_tokens"], 40);
    assert_eq!(u["input_tokens_details"]["cached_tokens"], 30);
    assert_eq!(u["output_tokens"], 20);
    assert_eq!(u["output_tokens_details"]["reasoning_tokens"], 4);
    assert_eq!(u["total_tokens"], 60);
}

#[tokio::test]
async fn http_errors_use_the_openai_error_json() {
    let reply = one(RESPONSES, Turn::error(500, "boom").with_retry_after_ms(250)).await;
    assert_eq!(reply.status, 500);
    assert_eq!(reply.header("retry-after-ms"), Some("250"));
    assert_eq!(reply.error_json()["error"]["message"], "boom");
    assert_eq!(reply.error_json()["error"]["type"], "server_error");
}

#[tokio::test]
async fn stream_error_is_response_failed() {
    let turn = Turn::text("partial").with_stream_error("server_error", "The model failed");
    let reply = one(RESPONSES, turn).await;
    let last = reply.jsons().pop().unwrap();
    assert_eq!(last["type"], "response.failed");
    assert_eq!(last["response"]["status"], "failed");
    assert_eq!(last["response"]["error"], json!({"code": "server_error", "message": "The model failed"}));
    assert!(!reply.names().contains(&"response.completed"));
}

#[tokio::test]
async fn stream_error_as_an_error_event_or_unframed() {
    let turn = Turn::text("partial").with_stream_error("rate_limit_exceeded", "Slow down").as_error_event();
    let reply = one(RESPONSES, turn).await;
    assert_eq!(reply.names().last(), Some(&"error"));
    let last = reply.jsons().pop().unwrap();
    assert_eq!((&last["code"], &last["message"]), (&json!("rate_limit_exceeded"), &json!("Slow down")));
    let turn = Turn::text("partial").with_stream_error("server_error", "Upstream failed").unframed();
    let body = common::one_raw(RESPONSES, turn).await;
    let (_, rest) = body.rsplit_once("\n\n").unwrap();
    let error: Value = serde_json::from_str(rest).unwrap();
    assert_eq!(error["error"]["message"], "Upstream failed");
}

/// gpt-oss servers stream raw reasoning as `reasoning_text` content.
#[tokio::test]
async fn reasoning_text_streams_as_content_of_the_reasoning_item() {
    let turn = Turn::text("Answer.").with_thinking("Raw thoughts.").with_reasoning_text().with_chunk_size(4);
    let events = one(RESPONSES, turn).await.jsons();
    assert_eq!(concat(&events, "response.reasoning_text.delta"), "Raw thoughts.");
    assert!(events.iter().all(|e| e["type"] != "response.reasoning_summary_text.delta"));
    let part = events.iter().find(|e| e["type"] == "response.content_part.added").unwrap();
    assert_eq!(part["part"], json!({"type": "reasoning_text", "text": ""}));
    let done = events.iter().find(|e| e["type"] == "response.output_item.done").unwrap();
    assert_eq!(done["item"]["content"], json!([{"type": "reasoning_text", "text": "Raw thoughts."}]));
    assert_eq!(done["item"]["summary"], json!([]));
}

/// A turn's phase is on its message item, added and done.
#[tokio::test]
async fn the_message_item_carries_the_phase() {
    let events = one(RESPONSES, Turn::text("Checking.").with_phase("commentary")).await.jsons();
    let items: Vec<&Value> = events.iter().filter_map(|e| e.get("item")).collect();
    assert!(items.iter().all(|i| i["phase"] == "commentary"), "{items:?}");
    assert_eq!(items.len(), 2);
}

#[tokio::test]
async fn disconnect_after_cuts_the_body() {
    let reply = one(RESPONSES, Turn::text("a long reply").disconnect_after(5)).await;
    assert_eq!(reply.events.len(), 5);
    assert!(reply.transport_error.is_some());
}

#[tokio::test]
async fn malformed_sends_an_event_that_is_not_json() {
    let reply = one(RESPONSES, Turn::text("a long reply").malformed()).await;
    assert_eq!(reply.events.len(), 4);
    assert_eq!(reply.events[3].event, "response.output_text.delta");
    assert!(serde_json::from_str::<Value>(&reply.events[3].data).is_err());
}
