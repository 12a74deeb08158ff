//! Claude Code's hooks from settings.json through the real binary: `PreToolUse` blocks a call
//! (its reason reaches the model), `PostToolUse` adds feedback to a result, `UserPromptSubmit`
//! stops a prompt or adds context, `Stop` keeps the agent going, `SessionStart` adds context,
//! `PreCompact` and `SessionEnd` hear their events, `Notification` hears a permission question;
//! every hook reads its event as Claude Code writes it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common;

use common::{Env, Rho};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

/// The command that runs the script `body`, written to the test's folder as `<name>.sh`.
fn hook(env: &Env, name: &str, body: &str) -> String {
    let path = env.dir.path().join(format!("{name}.sh"));
    std::fs::write(&path, body).unwrap();
    format!("sh '{}'", path.display())
}

fn write_hooks(env: &Env, hooks: Value) {
    std::fs::write(env.agent_dir.join("settings.json"), json!({ "hooks": hooks }).to_string()).unwrap();
}

/// The JSON lines a hook appended to `file`, waiting (bounded) until there are `count`.
async fn events(file: &Path, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let lines: Vec<Value> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        if lines.len() >= count || Instant::now() > deadline {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Claude Code's `PreToolUse` hooks from settings.json: a command that exits 2 blocks the call
/// with its stderr, one that prints a `deny` decision blocks it with its reason, and a call the
/// matcher does not name runs untouched; the hook reads the event as Claude Code writes it.
#[tokio::test]
async fn pre_tool_use_hooks_block_calls_as_claude_code_s_do() {
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "rm -rf keep"})),
        Turn::tool_call("bash", json!({"command": "echo fine"})),
        Turn::tool_call("write", json!({"path": "new.txt", "content": "x"})),
        Turn::tool_call("read", json!({"path": "keep"})),
        Turn::text("done"),
    ])
    .await;
    std::fs::write(env.cwd.join("keep"), "kept").unwrap();
    let hook = env.dir.path().join("hook.sh");
    std::fs::write(
        &hook,
        r#"input=$(cat)
printf '%s' "$input" > "$CLAUDE_PROJECT_DIR/last-event.json"
case "$input" in
  *'"command":"rm '*) echo "no rm here" >&2; exit 2;;
  *'"tool_name":"Write"'*) printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"writes are reviewed"}}';;
esac
exit 0
"#,
    )
    .unwrap();
    let hooks = json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash|Write", "hooks": [{"type": "command", "command": format!("sh '{}'", hook.display())}]}
    ]}});
    std::fs::write(env.agent_dir.join("settings.json"), hooks.to_string()).unwrap();
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "clean up"})).await;
    let results: Vec<(bool, String)> = rho
        .until_agent_end()
        .await
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .map(|f| (f["isError"] == true, f["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()))
        .collect();
    assert_eq!(
        results,
        [
            (true, "Blocked by a PreToolUse hook: no rm here".to_owned()),
            (false, "fine\n".to_owned()),
            (true, "Blocked by a PreToolUse hook: writes are reviewed".to_owned()),
            (false, "kept".to_owned()),
        ]
    );
    assert!(env.cwd.join("keep").exists() && !env.cwd.join("new.txt").exists());
    let event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.cwd.join("last-event.json")).unwrap()).unwrap();
    assert_eq!(event["hook_event_name"], "PreToolUse");
    assert_eq!(event["tool_name"], "Write");
    assert_eq!(event["tool_input"], json!({"path": "new.txt", "content": "x"}));
    assert_eq!(event["cwd"], env.cwd.display().to_string());
    assert!(event["session_id"].as_str().is_some_and(|id| !id.is_empty()), "{event}");
}

/// Claude Code's `PostToolUse` hooks: after the call ran, a hook that exits 2 adds its stderr to
/// the result as feedback the model reads, and one whose JSON has `additionalContext` adds that;
/// the event carries the result.
#[tokio::test]
async fn post_tool_use_hooks_add_feedback_to_the_result() {
    let env = Env::new(vec![Turn::tool_call("bash", json!({"command": "echo built"})), Turn::text("done")]).await;
    let hook = env.dir.path().join("post.sh");
    std::fs::write(
        &hook,
        "input=$(cat)\nprintf '%s' \"$input\" > \"$CLAUDE_PROJECT_DIR/post-event.json\"\n\
         echo 'now run the tests' >&2\nexit 2\n",
    )
    .unwrap();
    let context = r#"printf '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "the build is cached"}}'"#;
    let hooks = json!({"hooks": {"PostToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": format!("sh '{}'", hook.display())},
                                      {"type": "command", "command": context}]}
    ]}});
    std::fs::write(env.agent_dir.join("settings.json"), hooks.to_string()).unwrap();
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "build"})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["isError"], false, "{end}");
    assert_eq!(
        end["result"]["content"],
        json!([{"type": "text", "text": "built\n"}, {"type": "text", "text": "PostToolUse hook: now run the tests"},
               {"type": "text", "text": "PostToolUse hook: the build is cached"}])
    );
    // The model reads it in the tool result it gets.
    let sent = env.request_bodies()[1]["messages"].to_string();
    assert!(sent.contains("PostToolUse hook: now run the tests"), "{sent}");
    let event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.cwd.join("post-event.json")).unwrap()).unwrap();
    assert_eq!((event["hook_event_name"].as_str(), event["tool_name"].as_str()), (Some("PostToolUse"), Some("Bash")));
    assert_eq!(event["tool_response"]["content"][0]["text"], "built\n");
}

/// Claude Code's `UserPromptSubmit` hooks: one that exits 2 stops the prompt (nothing reaches the
/// model, a notice says why); what one prints on exit 0 goes to the model with the prompt.
#[tokio::test]
async fn user_prompt_submit_hooks_stop_a_prompt_or_add_context() {
    let env = Env::new(vec![Turn::text("noted")]).await;
    let hook = env.dir.path().join("prompt.sh");
    std::fs::write(
        &hook,
        "input=$(cat)\ncase \"$input\" in\n  *deploy*) echo 'no deploys on Fridays' >&2; exit 2;;\nesac\n\
         echo 'Context: the build uses make.'\n",
    )
    .unwrap();
    let hooks = json!({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": format!("sh '{}'", hook.display())}]}
    ]}});
    std::fs::write(env.agent_dir.join("settings.json"), hooks.to_string()).unwrap();
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"id": "p1", "type": "prompt", "message": "deploy now"})).await;
    let frames = rho.until(|f| f["type"] == "notice").await;
    assert_eq!(
        frames.last().unwrap(),
        &json!({"type": "notice", "level": "error", "source": "hooks",
                "message": "Prompt blocked by a UserPromptSubmit hook: no deploys on Fridays"})
    );
    assert!(env.request_bodies().is_empty(), "the blocked prompt reached the model");

    rho.send(json!({"type": "prompt", "message": "build it"})).await;
    rho.until_agent_end().await;
    assert_eq!(
        env.request_bodies()[0]["messages"][0]["content"][0]["text"],
        "build it\n\nContext: the build uses make."
    );
}

/// Claude Code's `Stop` hooks: one that exits 2 keeps the agent going with its reason as the
/// model's next message; the next time it is told `stop_hook_active` and lets it stop.
#[tokio::test]
async fn a_stop_hook_keeps_the_agent_going_until_it_is_satisfied() {
    let env = Env::new(vec![Turn::text("done"), Turn::text("tests pass")]).await;
    let log = env.dir.path().join("stop.jsonl");
    let command = hook(
        &env,
        "stop",
        &format!(
            "input=$(cat)\nprintf '%s\\n' \"$input\" >> '{}'\n             case \"$input\" in *'\"stop_hook_active\":false'*) echo 'run the tests too' >&2; exit 2;; esac\n",
            log.display()
        ),
    );
    write_hooks(&env, json!({"Stop": [{"hooks": [{"type": "command", "command": command}]}]}));
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "fix it"})).await;
    let frames = rho.until(|f| f["type"] == "agent_settled").await;
    let bodies = env.request_bodies();
    assert_eq!(bodies.len(), 2, "the hook did not keep the agent going");
    let last = bodies[1]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][0]["text"], "Stop hook feedback:\nrun the tests too");
    let stops = events(&log, 2).await;
    let active: Vec<&Value> = stops.iter().map(|e| &e["stop_hook_active"]).collect();
    assert_eq!(active, [&json!(false), &json!(true)]);
    assert_eq!(stops[0]["hook_event_name"], "Stop");
    // The feedback is recorded in the session, and the host hears of it.
    let entry = frames.iter().find(|f| f["type"] == "entry_appended").expect("no entry_appended");
    assert_eq!(
        (&entry["entry"]["type"], &entry["entry"]["customType"], &entry["entry"]["content"]),
        (&json!("custom_message"), &json!("hook_feedback"), &json!("Stop hook feedback:\nrun the tests too"))
    );
}

/// `SessionStart` adds its output to the first prompt; `PreCompact` hears a manual compaction
/// (its exit-2 message is shown); `SessionEnd` hears `/new` (`clear`) and the end of the
/// process (`other`), and `SessionStart` the new session (`clear`).
#[tokio::test]
async fn session_start_compact_and_end_hooks_hear_their_events() {
    let env = Env::new(vec![Turn::text("hello"), Turn::text("the summary"), Turn::text("again")]).await;
    let log = env.dir.path().join("events.jsonl");
    let logging = format!("input=$(cat)\nprintf '%s\\n' \"$input\" >> '{}'\n", log.display());
    let start = hook(&env, "start", &format!("{logging}echo 'Context: on branch main'\n"));
    let compact = hook(&env, "compact", &format!("{logging}echo 'compacting now' >&2\nexit 2\n"));
    let end = hook(&env, "end", &logging);
    write_hooks(
        &env,
        json!({
            "SessionStart": [{"matcher": "startup|clear", "hooks": [{"type": "command", "command": start}]}],
            "PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": compact}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": end}]}],
        }),
    );
    let mut rho = Rho::start(&env, &["--setting", "compaction.keepRecentTokens=1"]).await;
    rho.send(json!({"type": "prompt", "message": "hi"})).await;
    rho.until_agent_end().await;
    assert_eq!(env.request_bodies()[0]["messages"][0]["content"][0]["text"], "hi\n\nContext: on branch main");

    rho.send(json!({"id": "c", "type": "compact", "customInstructions": "keep the names"})).await;
    let frames = rho.until(|f| f["id"] == "c").await;
    assert!(
        frames.iter().any(|f| f["type"] == "notice" && f["message"] == "PreCompact hook: compacting now"),
        "{frames:#?}"
    );
    // The context was read once: the prompt after the compaction goes as it is.
    rho.send(json!({"type": "prompt", "message": "more"})).await;
    rho.until_agent_end().await;
    let third = env.request_bodies()[2]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(third["content"][0]["text"], "more");

    rho.send(json!({"id": "n", "type": "new_session"})).await;
    rho.until(|f| f["id"] == "n").await;
    rho.close_stdin();
    assert!(rho.wait().await.success());
    let seen = events(&log, 5).await;
    let names: Vec<(String, String)> = seen
        .iter()
        .map(|e| {
            let detail = ["source", "trigger", "reason"].iter().find_map(|k| e[*k].as_str()).unwrap_or_default();
            (e["hook_event_name"].as_str().unwrap().to_owned(), detail.to_owned())
        })
        .collect();
    let expected = [
        ("SessionStart", "startup"),
        ("PreCompact", "manual"),
        ("SessionEnd", "clear"),
        ("SessionStart", "clear"),
        ("SessionEnd", "other"),
    ];
    assert_eq!(names, expected.map(|(a, b)| (a.to_owned(), b.to_owned())));
    assert_eq!(seen[1]["custom_instructions"], "keep the names");
    assert!(seen[0]["transcript_path"].as_str().is_some_and(|p| p.ends_with(".jsonl")), "{}", seen[0]);
}

/// `Notification` hooks hear that rho asks the user about a call, while the question waits.
#[tokio::test]
async fn a_notification_hook_hears_a_permission_question() {
    let env = Env::new(vec![Turn::tool_call("bash", json!({"command": "echo hi"})), Turn::text("done")]).await;
    let log = env.dir.path().join("notes.jsonl");
    let command = hook(&env, "note", &format!("cat >> '{}'\necho >> '{}'\n", log.display(), log.display()));
    let settings = json!({
        "permissions": {"ask": ["Bash(echo:*)"]},
        "hooks": {"Notification": [{"matcher": "permission_prompt", "hooks": [{"type": "command", "command": command}]}]},
    });
    std::fs::write(env.agent_dir.join("settings.json"), settings.to_string()).unwrap();
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "say hi"})).await;
    let asked = rho.until(|f| f["type"] == "extension_ui_request").await.pop().unwrap();
    // Heard before the question is answered.
    let notes = events(&log, 1).await;
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["hook_event_name"], "Notification");
    assert_eq!(notes[0]["notification_type"], "permission_prompt");
    assert_eq!(notes[0]["message"], "rho needs your permission to use Bash");
    rho.send(json!({"type": "extension_ui_response", "id": asked["id"], "value": "Allow once"})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["result"]["content"][0]["text"], "hi\n");
}

/// A hook that outlives its `timeout` is stopped with what it started, and the call goes on as
/// if it had said nothing.
#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_and_the_call_goes_on() {
    let env = Env::new(vec![Turn::tool_call("bash", json!({"command": "echo ran"})), Turn::text("done")]).await;
    let pid_file = env.dir.path().join("sleeper.pid");
    let command = hook(&env, "slow", &format!("sleep 30 &\necho $! > '{}'\nwait\n", pid_file.display()));
    write_hooks(&env, json!({"PreToolUse": [{"hooks": [{"type": "command", "command": command, "timeout": 0.5}]}]}));
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "go"})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!((&end["isError"], &end["result"]["content"][0]["text"]), (&json!(false), &json!("ran\n")));
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_owned();
    // Gone, or dead and waiting to be reaped by whoever adopted it.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]);
    assert!(matches!(state, None | Some("Z")), "the hook's sleep outlived it: {stat}");
}
