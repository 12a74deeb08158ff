//! Large frames (docs/decisions.md D17): by default every frame arrives whole on one line, as pi
//! writes it; with a bound (`--rpc-max-frame-bytes`) no line passes it, whatever its source (a
//! reply of one 3 MB delta, its `text_end` and `message_end`, a 2 MB id, a 5 MB session name) and
//! nothing is replaced silently; under protocol 2 (omp's `negotiate_protocol`) large frames arrive
//! whole, chunked within omp's 1 MiB bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use base64::Engine as _;
use common::{Env, MAX_FRAME_BYTES, Rho};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

const OMITTED_SUFFIX: &str = "bytes omitted: the frame would exceed 1048576 bytes]";

fn big_text() -> String {
    // Every few bytes something JSON escapes, so escaping is counted too.
    (0..3_000_000).map(|i| if i % 7 == 0 { '"' } else { 'x' }).collect()
}

/// Frames up to `agent_end`, reassembling `rpc_chunk` runs into the frames they carry.
async fn frames_until_agent_end(rho: &mut Rho) -> Vec<Value> {
    let mut frames = Vec::new();
    let mut chunks: Vec<u8> = Vec::new();
    loop {
        let mut frame = rho.next().await;
        if frame["type"] == "rpc_chunk" {
            let data = base64::engine::general_purpose::STANDARD.decode(frame["data"].as_str().unwrap()).unwrap();
            chunks.extend(data);
            if frame["index"].as_u64().unwrap() + 1 < frame["count"].as_u64().unwrap() {
                continue;
            }
            assert_eq!(chunks.len() as u64, frame["byteLength"].as_u64().unwrap());
            frame = serde_json::from_slice(&std::mem::take(&mut chunks)).unwrap();
        }
        let end = frame["type"] == "agent_end";
        frames.push(frame);
        if end {
            return frames;
        }
    }
}

fn streamed_text(frames: &[Value]) -> String {
    frames
        .iter()
        .filter(|f| f["type"] == "message_update" && f["assistantMessageEvent"]["type"] == "text_delta")
        .map(|f| f["assistantMessageEvent"]["delta"].as_str().unwrap())
        .collect()
}

/// rho with omp's bound set by the host, and the harness checking every line against it.
async fn bounded(env: &Env) -> Rho {
    let mut rho = Rho::start(env, &["--no-session", "--rpc-max-frame-bytes", "1048576"]).await;
    rho.bound_lines(MAX_FRAME_BYTES);
    rho
}

/// The reply's frames carry it whole: the deltas, `text_end` and `agent_end`, nothing cut.
fn assert_arrived_whole(frames: &[Value], text: &str) {
    assert_eq!(streamed_text(frames), text);
    let end = frames.iter().find(|f| f["assistantMessageEvent"]["type"] == "text_end").unwrap();
    assert_eq!(end["assistantMessageEvent"]["content"], text);
    let agent_end = frames.last().unwrap();
    assert_eq!(agent_end["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"], text);
    assert!(agent_end.get("truncated").is_none());
}

#[tokio::test]
async fn without_a_bound_a_3_mb_reply_arrives_whole_as_pi_sends_it() {
    let text = big_text();
    let env = Env::new(vec![Turn::text(text.clone()).with_chunk_size(0)]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "say a lot"})).await;
    let frames = frames_until_agent_end(&mut rho).await;
    assert_arrived_whole(&frames, &text);
    let last = rho.data(json!({"type": "get_last_assistant_text"})).await;
    assert_eq!(last["text"], text.as_str());
    let messages = rho.data(json!({"type": "get_messages"})).await;
    assert_eq!(messages["messages"][2]["content"][0]["text"], text.as_str());
}

#[tokio::test]
async fn a_3_mb_reply_in_one_delta_stays_within_the_bound_and_loses_no_text() {
    let text = big_text();
    let env = Env::new(vec![Turn::text(text.clone()).with_chunk_size(0)]).await;
    let mut rho = bounded(&env).await;
    rho.send(json!({"type": "prompt", "message": "say a lot"})).await;
    let frames = frames_until_agent_end(&mut rho).await;

    assert_eq!(streamed_text(&frames), text, "the deltas concatenate to the reply");
    let deltas = frames.iter().filter(|f| f["assistantMessageEvent"]["type"] == "text_delta").count();
    assert!(deltas >= 3, "{deltas} delta frames for 3 MB");
    let end = frames.iter().find(|f| f["assistantMessageEvent"]["type"] == "text_end").unwrap();
    assert!(end["assistantMessageEvent"]["content"].as_str().unwrap().ends_with(OMITTED_SUFFIX), "{end}");
    let message_end = frames.iter().rev().find(|f| f["type"] == "message_end").unwrap();
    assert_eq!(message_end["message"]["stopReason"], "stop");
    assert!(message_end["message"]["content"][0]["text"].as_str().unwrap().ends_with(OMITTED_SUFFIX));
    // The whole reply is kept: the next request carries it back to the model.
    rho.send(json!({"type": "prompt", "message": "and again"})).await;
    rho.until_agent_end().await;
    let second = &env.request_bodies()[1];
    assert_eq!(second["messages"][1]["content"][0]["text"], text);
}

#[tokio::test]
async fn under_protocol_2_large_frames_arrive_whole_in_chunks() {
    let text = big_text();
    let env = Env::new(vec![Turn::text(text.clone()).with_chunk_size(0)]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let refused = rho.request(json!({"type": "negotiate_protocol", "protocolVersion": 1})).await;
    assert_eq!(refused["error"], "Unsupported RPC protocol version: 1");
    let agreed = rho.data(json!({"type": "negotiate_protocol", "protocolVersion": 2})).await;
    assert_eq!(agreed, json!({"protocolVersion": 2}));
    rho.bound_lines(MAX_FRAME_BYTES);

    rho.send(json!({"type": "prompt", "message": "say a lot"})).await;
    let frames = frames_until_agent_end(&mut rho).await;
    assert_arrived_whole(&frames, &text);
}

#[tokio::test]
async fn under_a_bound_a_response_that_cannot_fit_fails_saying_so() {
    let env = Env::new(vec![]).await;
    let mut rho = bounded(&env).await;
    let id = "i".repeat(2_000_000);
    rho.send(json!({"id": id, "type": "get_state"})).await;
    let response = rho.next().await;
    assert_eq!((response["command"].as_str(), response["success"].as_bool()), (Some("get_state"), Some(false)));
    assert!(response.get("id").is_none(), "an id too long to echo is left out");
    assert!(response["error"].as_str().unwrap().starts_with("Response too large"), "{response}");

    let name = "n".repeat(5_000_000);
    rho.data(json!({"type": "set_session_name", "name": name})).await;
    let state = rho.request(json!({"type": "get_state"})).await;
    assert_eq!(
        state["error"],
        "Response too large: it cannot fit in the frame limit of 1048576 bytes (--rpc-max-frame-bytes)"
    );
    // The process goes on: a response that fits is answered.
    assert_eq!(rho.data(json!({"type": "get_session_stats"})).await["userMessages"], 0);
}
