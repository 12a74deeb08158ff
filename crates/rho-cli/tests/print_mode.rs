//! Print mode, JSON mode and the command line through the real binary: `-p` prints only the
//! answer, `--mode json` writes the header and every event in RPC mode's shapes, `@file`
//! arguments and piped stdin, each message as its own prompt, `--list-models`, and the errors a
//! person meets (unknown flag, unknown model, missing key, missing file) with their exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::Output;

use common::Env;
use rho_mock_llm::Turn;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

async fn run(env: &Env, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = env.command(args).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).await.unwrap();
    }
    drop(input);
    tokio::time::timeout(std::time::Duration::from_secs(20), child.wait_with_output()).await.unwrap().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

#[tokio::test]
async fn print_mode_prints_only_the_answer() {
    let env = Env::new(vec![
        Turn::text("Reading.").with_tool_call("read", json!({"path": "a.txt"})),
        Turn::text("Two files."),
    ])
    .await;
    std::fs::write(env.cwd.join("a.txt"), "").unwrap();
    let out = run(&env, &["-p", "--model", "mock/mock-model", "what is here?"], None).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Two files.\n");
    assert_eq!(stderr(&out), "");

    let env = Env::new(vec![
        Turn::text("Reading.").with_tool_call("read", json!({"path": "a.txt"})),
        Turn::text("Two files."),
    ])
    .await;
    std::fs::write(env.cwd.join("a.txt"), "").unwrap();
    let verbose = run(&env, &["-p", "--verbose", "--model", "mock/mock-model", "what is here?"], None).await;
    assert_eq!(stdout(&verbose), "Two files.\n");
    assert_eq!(stderr(&verbose), "→ read {\"path\":\"a.txt\"}\n✓ read\n");
}

/// A model behind pi's own protocol (`pi-messages`, the Radius gateway's) reads, calls a tool
/// and answers as any other: the second request carries the first reply and the tool's result
/// as pi serializes them.
#[tokio::test]
async fn a_pi_messages_model_runs_a_tool_turn() {
    let env = Env::with_api(
        vec![Turn::text("Reading.").with_tool_call("read", json!({"path": "a.txt"})), Turn::text("It says hi.")],
        "pi-messages",
        false,
    )
    .await;
    std::fs::write(env.cwd.join("a.txt"), "hi\n").unwrap();
    let out = run(&env, &["-p", "--model", "mock/mock-model", "what does a.txt say?"], None).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "It says hi.\n");
    let requests = env.server.requests();
    assert_eq!(requests.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(), ["/messages", "/messages"]);
    let messages = &requests[1].body["context"]["messages"];
    let roles: Vec<&str> = messages.as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult"]);
    assert_eq!(messages[1]["content"][1]["type"], "toolCall");
    assert_eq!(messages[2]["content"][0]["text"], "hi\n");
    assert_eq!(requests[1].body["model"], "mock-model");
    assert!(requests[1].body["context"]["systemPrompt"].as_str().is_some_and(|p| !p.is_empty()));
}

#[tokio::test]
async fn json_mode_writes_the_header_then_every_event_like_rpc_mode() {
    let env = Env::new(vec![Turn::text("Hello there.").with_chunk_size(0)]).await;
    let out = run(&env, &["--mode", "json", "--no-session", "--model", "mock/mock-model", "hi"], None).await;
    assert!(out.status.success());
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["type"], "session");
    let types: Vec<&str> = lines[1..].iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "message_start",
            "message_update",
            "message_update",
            "message_update",
            "message_end",
            "turn_end",
            "agent_end",
            "agent_settled"
        ]
    );
    // pi 1.6's JSON stream: each update is the step and the usage, no snapshot of the message.
    let update = &lines[9];
    let keys: Vec<&str> = update.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["type", "usage", "assistantMessageEvent"]);
    assert_eq!(update["assistantMessageEvent"]["type"], "text_delta");
    assert!(update["assistantMessageEvent"].get("partial").is_none());
}

#[tokio::test]
async fn piped_stdin_files_and_the_first_message_are_one_prompt_and_each_later_message_its_own() {
    let env = Env::new(vec![Turn::text("First."), Turn::text("Second.")]).await;
    std::fs::write(env.cwd.join("notes.txt"), "remember the milk").unwrap();
    let out =
        run(&env, &["-p", "--model", "mock/mock-model", "@notes.txt", "summarize", "and again"], Some("piped text\n"))
            .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Second.\n");
    let bodies = env.request_bodies();
    assert_eq!(bodies.len(), 2, "stdin and the first message went in one request");
    let first = bodies[0]["messages"][0]["content"][0]["text"].as_str().unwrap();
    let path = env.cwd.join("notes.txt");
    assert_eq!(
        first,
        format!("piped text\n\n<file name=\"{}\">\nremember the milk\n</file>\nsummarize", path.display())
    );
    let users: Vec<&str> = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(users[1..], ["and again"]);

    // `git diff | rho -p "write a commit message"`: one request.
    let env = Env::new(vec![Turn::text("feat: x")]).await;
    let out =
        run(&env, &["-p", "--model", "mock/mock-model", "write a commit message"], Some("diff --git a b\n")).await;
    assert_eq!(stdout(&out), "feat: x\n");
    let bodies = env.request_bodies();
    assert_eq!(bodies.len(), 1);
    assert_eq!(bodies[0]["messages"][0]["content"][0]["text"], "diff --git a b\n\nwrite a commit message");
}

#[tokio::test]
async fn a_failed_run_exits_non_zero_with_the_error_on_stderr() {
    let env = Env::new(vec![Turn::error(400, "bad request body")]).await;
    let out = run(&env, &["-p", "--model", "mock/mock-model", "hi"], None).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("bad request body"), "{}", stderr(&out));
}

#[tokio::test]
async fn list_models_prints_a_table() {
    let env = Env::new(vec![]).await;
    let out = run(&env, &["--list-models"], None).await;
    assert!(out.status.success());
    insta::assert_snapshot!(stdout(&out));
    let filtered = run(&env, &["--list-models", "small"], None).await;
    assert_eq!(stdout(&filtered).lines().count(), 2);
}

#[tokio::test]
async fn errors_a_person_understands() {
    let env = Env::new(vec![]).await;
    let unknown_flag = run(&env, &["--frobnicate"], None).await;
    assert_eq!(unknown_flag.status.code(), Some(2));
    assert_eq!(stderr(&unknown_flag), "Error: Unknown option: --frobnicate\n", "pi's wording");

    let unknown_model = run(&env, &["-p", "--model", "mock-modle", "hi"], None).await;
    assert_eq!(unknown_model.status.code(), Some(2));
    let message = stderr(&unknown_model);
    assert!(
        message.starts_with("Error: Model \"mock-modle\" not found. Use --list-models to see available models. Did you mean: mock/mock-model"),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1);

    let no_key = run(&env, &["-p", "--model", "anthropic/claude-sonnet-4-5", "hi"], None).await;
    assert_eq!(no_key.status.code(), Some(2));
    let message = stderr(&no_key);
    assert!(message.starts_with("Error: No API key found for anthropic."), "{message}");
    assert!(message.contains("ANTHROPIC_API_KEY"), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");

    let missing = run(&env, &["-p", "--model", "mock/mock-model", "@nope.txt", "hi"], None).await;
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(stderr(&missing), format!("Error: File not found: {}\n", env.cwd.join("nope.txt").display()));

    let rpc_files = run(&env, &["--mode", "rpc", "@x.txt"], None).await;
    assert_eq!(rpc_files.status.code(), Some(1));
    assert_eq!(stderr(&rpc_files), "Error: @file arguments are not supported in RPC mode\n");
    assert_eq!(stdout(&rpc_files), "");

    // No session file is left behind by a run that never started.
    assert!(env.session_files().is_empty(), "{:?}", env.session_files());
}

#[tokio::test]
async fn version_and_help() {
    let env = Env::new(vec![]).await;
    let version = run(&env, &["--version"], None).await;
    assert_eq!(stdout(&version), format!("rho {}\n", env!("CARGO_PKG_VERSION")));
    let help = run(&env, &["-h"], None).await;
    assert!(help.status.success());
    let text = stdout(&help);
    for flag in [
        "--print",
        "--mode",
        "--model",
        "--thinking",
        "--tools",
        "--no-session",
        "--setting",
        "--export",
        "--list-models",
    ] {
        assert!(text.contains(flag), "help lacks {flag}");
    }
}

#[tokio::test]
async fn pi_flags_are_understood() {
    let env = Env::new(vec![Turn::text("No context."), Turn::text("Forked.")]).await;
    std::fs::write(env.cwd.join("AGENTS.md"), "PROJECT-RULES").unwrap();
    // pi's multi-letter short flags: -nc leaves AGENTS.md out, -nt every tool.
    let out = run(&env, &["-p", "-nc", "-nt", "--offline", "--model", "mock/mock-model", "hi"], None).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = &env.request_bodies()[0];
    assert!(!sent.to_string().contains("PROJECT-RULES"));
    assert!(sent.get("tools").is_none_or(|t| t.as_array().unwrap().is_empty()), "{}", sent["tools"]);

    // --fork copies a session into a new file that names its parent.
    let first = env.session_files()[0].clone();
    let out = run(&env, &["-p", "--fork", first.to_str().unwrap(), "--model", "mock/mock-model", "go on"], None).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Forked.\n");
    let files = env.session_files();
    assert_eq!(files.len(), 2);
    let forked = files.iter().find(|f| **f != first).unwrap();
    assert_eq!(common::read_jsonl(forked)[0]["parentSession"], first.to_str().unwrap());
    assert_eq!(env.request_bodies()[1]["messages"].as_array().unwrap().len(), 3, "the copy's history went along");

    assert_eq!(env.request_bodies().len(), 2);
}

/// The session directory as pi chooses it: `RHO_CODING_AGENT_SESSION_DIR` (or pi's variable),
/// else the global `sessionDir` setting; a project's `sessionDir` is refused with a warning.
#[tokio::test]
async fn sessions_are_kept_where_the_variable_or_the_global_setting_says() {
    let files_in = |dir: &std::path::Path| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default()
    };
    let env = Env::new(vec![Turn::text("one"), Turn::text("two"), Turn::text("three")]).await;
    let by_variable = env.dir.path().join("by-variable");
    let mut command = env.command(&["-p", "--model", "mock/mock-model", "hi"]);
    command.env("PI_CODING_AGENT_SESSION_DIR", &by_variable);
    let out = command.output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(files_in(&by_variable).len(), 1);

    std::fs::write(env.agent_dir.join("settings.json"), json!({"sessionDir": "~/by-setting"}).to_string()).unwrap();
    let out = run(&env, &["-p", "--model", "mock/mock-model", "hi"], None).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(files_in(&env.dir.path().join("by-setting")).len(), 1, "HOME is the env's folder");

    std::fs::remove_file(env.agent_dir.join("settings.json")).unwrap();
    std::fs::create_dir_all(env.cwd.join(".rho")).unwrap();
    std::fs::write(env.cwd.join(".rho/settings.json"), json!({"sessionDir": "mine"}).to_string()).unwrap();
    let out = run(&env, &["-p", "--model", "mock/mock-model", "hi"], None).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("\"sessionDir\" is ignored in a project's settings"), "{}", stderr(&out));
    assert!(!env.cwd.join("mine").exists());
    assert_eq!(env.session_files().len(), 1, "the default folder");
}
