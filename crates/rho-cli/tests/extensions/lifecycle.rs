//! The session's lifecycle through the fixture `lifecycle.ts`: an extension command starts a
//! new session (seeded, then continued in `withSession`), a resume is refused, model changes
//! and session starts are heard, a compaction is written by the extension, its skills join
//! the session's, and `prepareArguments` accepts a tool's old argument shape.

use rho_mock_llm::Turn;
use serde_json::{Value, json};

use crate::common::extensions::{fixture, pi_host};
use crate::common::{Env, Rho, read_jsonl};

fn statuses(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .filter(|f| f["type"] == "extension_ui_request" && f["method"] == "setStatus")
        .map(|f| format!("{}={}", f["statusKey"].as_str().unwrap(), f["statusText"].as_str().unwrap_or("")))
        .collect()
}

#[tokio::test]
async fn extensions_drive_and_see_the_session_lifecycle() {
    let Some(host) = pi_host("extensions_drive_and_see_the_session_lifecycle") else { return };
    let env =
        Env::new(vec![Turn::tool_call("echo_text", json!({"oldText": "from an old session"})), Turn::text("Echoed.")])
            .await
            .with_extension_host(host);
    let args = ["-e", &fixture("lifecycle.ts"), "--setting", "compaction.keepRecentTokens=1"];
    let mut rho = Rho::spawn(&env, &args).await;
    let frames = rho.until(|f| f["type"] == "ready").await;
    // session_start ran before ready (its status went out first).
    assert_eq!(statuses(&frames), ["lifecycle=started: startup"]);

    // The skill the extension brought is a command.
    let commands = rho.data(json!({"type": "get_commands"})).await;
    let names: Vec<&str> =
        commands["commands"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"skill:greet") && names.contains(&"fresh"), "{names:?}");

    // prepareArguments turns the old shape into the schema's.
    rho.send(json!({"type": "prompt", "id": "p", "message": "echo"})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["result"]["content"][0]["text"], "echo: from an old session", "{end}");
    assert_eq!(end["isError"], false);

    // An extension-written compaction.
    let compacted = rho.data(json!({"type": "compact"})).await;
    assert!(compacted["summary"].as_str().unwrap().starts_with("Summary by extension of "), "{compacted}");
    assert!(compacted.get("details").is_none(), "no details were given: {compacted}");

    // A model change is heard.
    rho.send(json!({"type": "set_model", "id": "m", "provider": "mock", "modelId": "mock-small"})).await;
    let frames = rho.until(|f| f["type"] == "extension_ui_request" && f["statusKey"] == "model").await;
    assert_eq!(statuses(&frames), ["model=set: mock/mock-small"]);

    // A resume is refused by the extension; nothing changes.
    let first = env.session_files()[0].clone();
    let refused = rho.data(json!({"type": "switch_session", "sessionPath": first})).await;
    assert_eq!(refused, json!({"cancelled": true}));

    // The command starts a new session, seeded by setup; withSession runs in it.
    rho.send(json!({"type": "prompt", "id": "f", "message": "/fresh"})).await;
    let frames = rho.until(|f| f["method"] == "notify").await;
    let statuses = statuses(&frames);
    assert!(statuses.contains(&"lifecycle=started: new".to_owned()), "{statuses:?}");
    let notice = frames.last().unwrap();
    // The model and thinking level the new session starts with, and the seeded message.
    assert_eq!(notice["message"], "now in 5 entries", "{notice}");
    // The edit the setup wrote holds in the new session's context.
    let messages = rho.data(json!({"type": "get_messages"})).await;
    let texts: Vec<String> = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            blocks => blocks[0]["text"].as_str().unwrap_or_default().to_owned(),
        })
        .collect();
    assert_eq!(texts, ["seeded by setup", "shortened"]);
    let state = rho.data(json!({"type": "get_state"})).await;
    let new_file = state["sessionFile"].as_str().unwrap().to_owned();
    assert_ne!(new_file, first.display().to_string());

    rho.close_stdin();
    rho.wait().await;
    let entries = read_jsonl(std::path::Path::new(&new_file));
    let seeded: Vec<&Value> = entries.iter().filter(|e| e["type"] == "message").collect();
    assert_eq!(seeded.len(), 2);
    assert_eq!(seeded[0]["message"]["content"][0]["text"], "seeded by setup");
    let edit = entries.iter().find(|e| e["type"] == "context_edit").expect("the setup's edit");
    assert_eq!((&edit["targetId"], &edit["replacement"]), (&seeded[1]["id"], &json!({"content": "shortened"})));
}

/// stdin's end and SIGTERM together, as process managers send them, are one orderly shutdown that
/// waits for the extensions' `session_shutdown`; a second signal ends the process at once.
#[tokio::test]
async fn eof_and_sigterm_are_one_shutdown_and_a_second_signal_exits_at_once() {
    let Some(host) = pi_host("eof_and_sigterm_are_one_shutdown_and_a_second_signal_exits_at_once") else { return };
    let env = Env::new(vec![]).await.with_extension_host(host);
    let args = ["--no-session", "-e", &fixture("slow-shutdown.ts"), "--setting", "extensionHookTimeoutMs=20000"];
    let mut rho = Rho::start(&env, &args).await;
    assert_eq!(rho.data(json!({"type": "get_state"})).await["isStreaming"], false);
    let pid = nix::unistd::Pid::from_raw(rho.child.id().unwrap() as i32);
    rho.close_stdin();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    // The shutdown goes on, waiting for the handler: neither the end of input nor the signal
    // cut it short.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert!(rho.child.try_wait().unwrap().is_none(), "the first signal ended the shutdown");
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = rho.wait().await;
    assert_eq!(status.code(), Some(143));
}

/// An extension's `ctx.shutdown()` while the agent is idle ends the process, with no command to
/// wait for.
#[tokio::test]
async fn an_extension_shutdown_while_idle_ends_the_process() {
    let Some(host) = pi_host("an_extension_shutdown_while_idle_ends_the_process") else { return };
    let env = Env::new(vec![]).await.with_extension_host(host);
    let mut rho = Rho::start(&env, &["--no-session", "-e", &fixture("shutdown-on-timer.ts")]).await;
    let status = rho.wait().await;
    assert_eq!(status.code(), Some(0));
}
