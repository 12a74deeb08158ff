//! omp's host URI sub-protocol through the real binary: schemes registered with
//! `set_host_uri_schemes`, `read` and `write` of `scheme://…` paths answered by the host with
//! `host_uri_result`, a read-only scheme refusing writes, a host error as the tool's error, and
//! an abort withdrawing a request with `host_uri_cancel`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho, redact, tool_results};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

fn schemes() -> Value {
    json!({"type": "set_host_uri_schemes", "schemes": [
        {"scheme": "Notes", "description": "the host's notes"},
        {"scheme": "kb", "writable": true}
    ]})
}

#[tokio::test]
async fn reads_and_writes_of_host_schemes_go_to_the_host() {
    let env = Env::new(vec![
        Turn::tool_call("read", json!({"path": "notes://today/a/../plan b", "offset": 2, "limit": 1})),
        Turn::tool_call("write", json!({"path": "notes://today", "content": "no"})),
        Turn::tool_call("write", json!({"path": "kb://entry", "content": "fresh text"})),
        Turn::tool_call("read", json!({"path": "kb://missing"})),
        Turn::text("Done."),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    assert_eq!(rho.data(schemes()).await, json!({"schemes": ["notes", "kb"]}));

    rho.send(json!({"type": "prompt", "message": "go"})).await;
    let request = rho.until(|f| f["type"] == "host_uri_request").await.pop().unwrap();
    assert_eq!(
        redact(&request),
        json!({"type": "host_uri_request", "id": "[id]", "operation": "read", "url": "notes://today/plan%20b"})
    );
    // An unknown id is ignored; the real answer completes the read.
    rho.send(json!({"type": "host_uri_result", "id": "nope", "content": "wrong"})).await;
    rho.send(json!({"type": "host_uri_result", "id": request["id"], "content": "one\ntwo\nthree\n", "contentType": "text/plain"}))
        .await;
    let write = rho.until(|f| f["type"] == "host_uri_request").await;
    let (first, second) = (tool_results(&write)[0].clone(), tool_results(&write)[1].clone());
    assert!(first.0.starts_with("two"), "the host's text, windowed by offset and limit: {first:?}");
    assert!(!first.1);
    assert_eq!(
        second,
        ("notes:// URLs are read-only for write; use the protocol-specific tool for mutations.".to_owned(), true)
    );
    let write = write.last().unwrap().clone();
    assert_eq!(
        redact(&write),
        json!({"type": "host_uri_request", "id": "[id]", "operation": "write", "url": "kb://entry", "content": "fresh text"})
    );
    rho.send(json!({"type": "host_uri_result", "id": write["id"]})).await;
    let missing = rho.until(|f| f["type"] == "host_uri_request").await;
    assert_eq!(tool_results(&missing)[0], ("Successfully wrote to kb://entry".to_owned(), false));
    let missing = missing.last().unwrap().clone();
    rho.send(
        json!({"type": "host_uri_result", "id": missing["id"], "isError": true, "error": "No entry named missing"}),
    )
    .await;
    let frames = rho.until_agent_end().await;
    assert_eq!(tool_results(&frames), [("No entry named missing".to_owned(), true)]);
    let second_request = &env.request_bodies()[1];
    assert!(second_request.to_string().contains("two"), "the model got the host's text");
}

#[tokio::test]
async fn an_abort_withdraws_a_request_the_host_never_answers() {
    let env = Env::new(vec![Turn::tool_call("read", json!({"path": "kb://slow"})), Turn::text("unused")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.data(schemes()).await;
    rho.send(json!({"type": "prompt", "message": "go"})).await;
    let request = rho.until(|f| f["type"] == "host_uri_request").await.pop().unwrap();
    rho.send(json!({"id": "a", "type": "abort"})).await;
    let frames = rho.until(|f| f["id"] == "a").await;
    let cancel = frames.iter().find(|f| f["type"] == "host_uri_cancel").unwrap();
    assert_eq!(redact(cancel), json!({"type": "host_uri_cancel", "id": "[id]", "targetId": "[id]"}));
    assert_eq!(cancel["targetId"], request["id"]);
    assert_eq!(tool_results(&frames), [("Host URI read for kb://slow was aborted".to_owned(), true)]);
    // A late answer is ignored.
    rho.send(json!({"type": "host_uri_result", "id": request["id"], "content": "late"})).await;
    assert_eq!(rho.data(json!({"type": "get_state"})).await["isStreaming"], false);
}

#[tokio::test]
async fn schemes_are_checked_replaced_and_cleared() {
    let env = Env::new(vec![Turn::tool_call("read", json!({"path": "notes://x"})), Turn::text("Done.")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    for (schemes, error) in [
        (json!(null), "Host URI schemes must be an array"),
        (json!([{"scheme": ""}]), "Host URI scheme must be a non-empty string"),
        (json!([{"scheme": "no spaces"}]), "Host URI scheme contains invalid characters: no spaces"),
        (json!([{"scheme": "file"}]), "Host URI scheme is reserved by rho: file://"),
    ] {
        let response = rho.request(json!({"type": "set_host_uri_schemes", "schemes": schemes})).await;
        assert_eq!((response["success"].clone(), response["error"].clone()), (json!(false), json!(error)));
    }
    assert_eq!(rho.data(schemes()).await, json!({"schemes": ["notes", "kb"]}));
    assert_eq!(rho.data(json!({"type": "set_host_uri_schemes", "schemes": []})).await, json!({"schemes": []}));
    // Cleared: `notes://x` is a path again, and no request goes to the host.
    rho.send(json!({"type": "prompt", "message": "go"})).await;
    let frames = rho.until_agent_end().await;
    assert!(!frames.iter().any(|f| f["type"] == "host_uri_request"));
    let (text, is_error) = tool_results(&frames).pop().unwrap();
    assert!(is_error && text.contains("notes:/x"), "{text}");
}
