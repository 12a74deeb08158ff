//! Background commands through the real binary: with their tools on, `bash` with
//! `run_in_background` returns an id at once; `bash_output` reads what the command printed since
//! the last read and whether it runs; `kill_bash` stops it and what it started; and a command
//! still running when rho exits is gone with it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use crate::common;

use common::{Env, Rho};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

fn bash(args: Value) -> Turn {
    Turn::tool_call("bash", args)
}

/// The text of each tool result in `frames`.
fn texts(frames: &[Value]) -> Vec<String> {
    common::tool_results(frames).into_iter().map(|(text, _)| text).collect()
}

/// Whether the process in `pid_file` is gone (or dead and waiting to be reaped).
fn gone(pid_file: &Path) -> bool {
    let pid = std::fs::read_to_string(pid_file).unwrap().trim().to_owned();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    matches!(stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]), None | Some("Z"))
}

#[tokio::test]
async fn a_background_command_is_started_read_stopped_and_gone_at_exit() {
    let env = Env::new(vec![
        bash(json!({"command": "printf 'line one\\n'; echo $$ > job.pid; sleep 30", "run_in_background": true})),
        // The model waits for the command to have printed (a loop of its own, in the script).
        bash(json!({"command": "while [ ! -s job.pid ]; do sleep 0.01; done; echo ready"})),
        Turn::tool_call("bash_output", json!({"bash_id": "bash_1"})),
        Turn::tool_call("bash_output", json!({"bash_id": "bash_1"})),
        Turn::tool_call("kill_bash", json!({"shell_id": "bash_1"})),
        Turn::tool_call("bash_output", json!({"bash_id": "bash_1"})),
        Turn::tool_call("bash_output", json!({"bash_id": "bash_9"})),
        Turn::text("done"),
        bash(json!({"command": "sleep 60 & echo $! > left.pid; wait", "run_in_background": true})),
        bash(json!({"command": "while [ ! -s left.pid ]; do sleep 0.01; done; echo ready"})),
        Turn::text("left running"),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+bash_output,+kill_bash"]).await;
    rho.send(json!({"type": "prompt", "message": "start the server"})).await;
    let frames = rho.until_agent_end().await;
    assert_eq!(
        texts(&frames),
        [
            "Command running in the background with id bash_1. Read its output with bash_output, stop it with kill_bash.",
            "ready\n",
            "[bash_1: running]\nline one\n",
            "[bash_1: running]\n(no new output)",
            "Stopped bash_1",
            "[bash_1: killed]\n(no new output)",
            "No background command bash_9 (there are: bash_1)",
        ]
    );
    assert!(gone(&env.cwd.join("job.pid")), "kill_bash left the command running");
    // The model was offered the tools, and bash's run_in_background.
    let tools = env.request_bodies()[0]["tools"].to_string();
    assert!(tools.contains("bash_output") && tools.contains("kill_bash") && tools.contains("run_in_background"));

    rho.send(json!({"type": "prompt", "message": "start another"})).await;
    rho.until_agent_end().await;
    assert!(!gone(&env.cwd.join("left.pid")), "the command should still run");
    rho.close_stdin();
    assert!(rho.wait().await.success());
    assert!(gone(&env.cwd.join("left.pid")), "a background command outlived rho");
}

/// Without their tools, `bash` takes no `run_in_background` and runs the command as always.
#[tokio::test]
async fn without_their_tools_bash_has_no_background() {
    let env = Env::new(vec![bash(json!({"command": "echo hi", "run_in_background": true})), Turn::text("done")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "hi"})).await;
    let frames = rho.until_agent_end().await;
    assert_eq!(texts(&frames), ["hi\n"]);
    assert!(!env.request_bodies()[0]["tools"].to_string().contains("run_in_background"));
}
