//! The `web_fetch` tool (`--tools +web_fetch`) against a page served on 127.0.0.1: HTML comes
//! back as text with its links, an error status is an error result with the page, binary
//! content is refused, and the read-only sandbox keeps it off.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho};
use rho_mock_llm::Turn;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Serves each connection the next of `pages` (status line, content type, body); the address.
async fn serve(pages: Vec<(&'static str, &'static str, &'static [u8])>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        for (status, content_type, body) in pages {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = vec![0u8; 4096];
            let _ = stream.read(&mut request).await;
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await.unwrap();
            stream.write_all(body).await.unwrap();
        }
    });
    format!("http://{addr}")
}

fn results(frames: &[serde_json::Value]) -> Vec<(bool, String)> {
    frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .map(|f| (f["isError"] == true, f["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()))
        .collect()
}

#[tokio::test]
async fn a_page_comes_back_as_text_and_what_is_not_text_or_not_found_says_so() {
    let page: &[u8] = b"<html><head><title>T</title></head><body><h1>Release notes</h1>\
        <p>See <a href=\"https://example.com/changes\">the changes</a>.</p><script>var x = 1;</script></body></html>";
    let base = serve(vec![
        ("200 OK", "text/html; charset=utf-8", page),
        ("404 Not Found", "text/plain", b"no such page"),
        ("200 OK", "image/png", b"\x89PNG\r\n\x1a\n"),
    ])
    .await;
    let env = Env::new(vec![
        Turn::tool_call("web_fetch", json!({"url": format!("{base}/notes?token=secret")})),
        Turn::tool_call("web_fetch", json!({"url": format!("{base}/missing")})),
        Turn::tool_call("web_fetch", json!({"url": format!("{base}/logo.png")})),
        Turn::tool_call("web_fetch", json!({"url": "file:///etc/passwd"})),
        Turn::text("fetched"),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+web_fetch"]).await;
    rho.send(json!({"type": "prompt", "message": "read the notes"})).await;
    let results = results(&rho.until_agent_end().await);
    let (error, text) = &results[0];
    assert!(!error, "{text}");
    assert!(text.starts_with(&format!("URL: {base}/notes?***\nStatus: 200 OK\n\n")), "{text}");
    assert!(text.contains("Release notes") && text.contains("the changes"), "{text}");
    assert!(text.contains("https://example.com/changes") && !text.contains("var x"), "{text}");
    assert_eq!(results[1], (true, format!("URL: {base}/missing\nStatus: 404 Not Found\n\nno such page")));
    assert_eq!(results[2], (true, format!("{base}/logo.png is not text (image/png, 8B): not shown")));
    assert_eq!(results[3], (true, "Only http and https URLs are fetched, not file:".to_owned()));
    // The model is told of the tool.
    let tools = &env.request_bodies()[0]["tools"];
    assert!(tools.as_array().unwrap().iter().any(|t| t["name"] == "web_fetch"), "{tools}");
}

#[tokio::test]
async fn the_read_only_sandbox_keeps_it_off() {
    let env =
        Env::outside_tmp(vec![Turn::tool_call("web_fetch", json!({"url": "http://127.0.0.1:9/"})), Turn::text("done")])
            .await;
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+web_fetch", "--sandbox", "read-only"]).await;
    rho.send(json!({"type": "prompt", "message": "fetch"})).await;
    let results = results(&rho.until_agent_end().await);
    assert_eq!(
        results,
        [(
            true,
            "The read-only sandbox keeps the network closed: http://127.0.0.1:9/ was not fetched (sandbox.network: \
             true opens it)"
                .to_owned()
        )]
    );
}
