//! The `rho-mock-llm` binary: prints its URL first, serves the script, records requests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A client for the mock's plain-HTTP address (a crypto provider installed, as reqwest needs one
/// to build even when no TLS is spoken).
fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

fn first_line(child: &mut Child) -> String {
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    line.trim_end().to_owned()
}

#[tokio::test]
async fn serves_a_script_file_and_records_requests() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let record = dir.path().join("requests.jsonl");
    std::fs::write(&script, r#"{"turns":[{"text":"from the binary"}]}"#).unwrap();
    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_rho-mock-llm"))
            .arg("--script")
            .arg(&script)
            .arg("--record")
            .arg(&record)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let url = first_line(&mut child.0);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let body = client()
        .post(format!("{url}/v1/messages"))
        .body(json!({"model": "m", "stream": true}).to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.contains("\"text\":\"from the\""), "{body}");
    assert!(body.contains("event: message_stop"));
    let line = std::fs::read_to_string(&record).unwrap();
    let recorded: Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(recorded["path"], "/v1/messages");
    assert_eq!(recorded["api"], "anthropic-messages");
}

#[tokio::test]
async fn reads_the_script_from_stdin() {
    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_rho-mock-llm"))
            .args(["--script", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut stdin = child.0.stdin.take().unwrap();
    stdin.write_all(br#"{"turns":[{"error":{"status":529,"message":"busy"}}]}"#).unwrap();
    drop(stdin);
    let url = first_line(&mut child.0);
    let response = client().post(format!("{url}/v1/chat/completions")).body("{}").send().await.unwrap();
    assert_eq!(response.status(), 529);
    assert!(response.text().await.unwrap().contains("busy"));
}

#[test]
fn a_bad_script_fails_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.json");
    std::fs::write(&script, r#"{"turns":[{"txet":"typo"}]}"#).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_rho-mock-llm")).arg("--script").arg(&script).output().unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("txet"), "{stderr}");
}
