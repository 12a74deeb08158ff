//! No stdout line passes the frame bound, whatever its source (docs/decisions.md D17): a reply of
//! one 3 MB delta, its `text_end` and `message_end`, a 2 MB id, a 5 MB session name; under protocol
//! 2 (omp's `negotiate_protocol`) large frames arrive whole, chunked. The harness fails any test
//! that reads a line over 1 MiB.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use base64::Engine as _;
use common::{Env, Rho};
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

#[tokio::test]
async fn a_3_mb_reply_in_one_delta_stays_within_the_bound_and_loses_no_text() {
    let text = big_text();
    let env = Env::new(vec![Turn::text(text.clone()).with_chunk_size(0)]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
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

    rho.send(json!({"type": "prompt", "message": "say a lot"})).await;
    let frames = frames_until_agent_end(&mut rho).await;
    assert_eq!(streamed_text(&frames), text);
    let end = frames.iter().find(|f| f["assistantMessageEvent"]["type"] == "text_end").unwrap();
    assert_eq!(end["assistantMessageEvent"]["content"], text.as_str());
    let agent_end = frames.last().unwrap();
    assert_eq!(agent_end["messages"][1]["content"][0]["text"], text.as_str());
    assert!(agent_end.get("truncated").is_none());
}

#[tokio::test]
async fn a_2_mb_id_and_a_5_mb_session_name_get_answers_within_the_bound() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let id = "i".repeat(2_000_000);
    rho.send(json!({"id": id, "type": "get_state"})).await;
    let response = rho.next().await;
    assert_eq!((response["type"].as_str(), response["success"].as_bool()), (Some("response"), Some(true)));
    assert!(response["id"].as_str().unwrap().ends_with(OMITTED_SUFFIX), "the id is omitted and marked");

    let name = "n".repeat(5_000_000);
    rho.data(json!({"type": "set_session_name", "name": name})).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    assert!(state["sessionName"].as_str().unwrap().ends_with(OMITTED_SUFFIX));
    assert_eq!(state["isStreaming"], false);
}
