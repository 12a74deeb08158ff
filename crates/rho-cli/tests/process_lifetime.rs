//! Every process rho starts for the model ends with rho: a daemon a command started (in a
//! session of its own, out of the command's process group) and a background job of a finished
//! command end when rho exits cleanly and when it is killed with SIGKILL; so does an MCP server
//! that ignores both end of input and SIGTERM, and a sub-agent's command. The spill files of its
//! commands go with it too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho, alive, eventually};
use rho_mock_llm::Turn;
use serde_json::json;

async fn ends(pid: u32) -> bool {
    eventually(|| !alive(pid)).await
}

/// Starts a daemon and a background job through RPC `bash`; their pids.
async fn leave_processes(rho: &mut Rho) -> (u32, u32) {
    let command = "setsid sleep 300 >/dev/null 2>&1 & echo $!; sleep 301 >/dev/null 2>&1 & echo $!";
    let output = rho.data(json!({"type": "bash", "command": command})).await["output"].as_str().unwrap().to_owned();
    let pids: Vec<u32> = output.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert!(alive(pids[0]) && alive(pids[1]), "{output}");
    (pids[0], pids[1])
}

#[tokio::test]
async fn what_commands_left_running_ends_with_a_clean_exit() {
    let env = Env::new(Vec::new()).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let (daemon, job) = leave_processes(&mut rho).await;
    rho.close_stdin();
    assert!(rho.wait().await.success());
    assert!(ends(daemon).await, "the daemon outlived rho");
    assert!(ends(job).await, "the background job outlived rho");
}

#[tokio::test]
async fn what_commands_left_running_ends_when_rho_is_killed() {
    let env = Env::new(Vec::new()).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let (daemon, job) = leave_processes(&mut rho).await;
    rho.child.start_kill().unwrap();
    rho.child.wait().await.unwrap();
    assert!(ends(daemon).await, "the daemon outlived a killed rho");
    assert!(ends(job).await, "the background job outlived a killed rho");
}

#[tokio::test]
async fn an_mcp_server_that_ignores_eof_and_sigterm_ends_with_rho() {
    for kill in [false, true] {
        let env = Env::new(Vec::new()).await;
        let pid_file = env.dir.path().join("server.pid");
        let script =
            format!("trap '' TERM HUP; echo $$ > '{}'; exec 0<&-; while :; do sleep 1; done", pid_file.display());
        std::fs::write(
            env.agent_dir.join("mcp.json"),
            json!({"mcpServers": {"stubborn": {"command": "sh", "args": ["-c", script]}}}).to_string(),
        )
        .unwrap();
        let mut rho = Rho::start(&env, &["--no-session"]).await;
        let _ = rho.data(json!({"type": "get_state"})).await;
        // Written, not only created: `echo $$ >` makes the file before it writes the number.
        let written = || std::fs::read_to_string(&pid_file).is_ok_and(|text| text.ends_with('\n'));
        assert!(eventually(written).await, "the server did not start");
        let pid: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        if kill {
            rho.child.start_kill().unwrap();
            rho.child.wait().await.unwrap();
        } else {
            rho.close_stdin();
            rho.wait().await;
        }
        assert!(ends(pid).await, "the server outlived rho (killed: {kill})");
    }
}

#[tokio::test]
async fn the_spill_files_of_a_killed_rho_are_removed() {
    let env = Env::new(Vec::new()).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    // 100,000 lines: past the limits, so the whole output goes to a spill file.
    let result = rho.data(json!({"type": "bash", "command": "seq 100000"})).await;
    let spill = std::path::PathBuf::from(result["fullOutputPath"].as_str().unwrap_or_else(|| panic!("{result}")));
    assert!(spill.is_file(), "{result}");
    rho.child.start_kill().unwrap();
    rho.child.wait().await.unwrap();
    assert!(eventually(|| !spill.exists()).await, "{} outlived a killed rho", spill.display());
}

/// A sub-agent's command ends with a killed rho: the sub-agent's own guardian is not taken for
/// one of the parent's processes and killed before it can sweep.
#[tokio::test]
async fn a_sub_agents_command_ends_when_rho_is_killed() {
    let env = Env::new(vec![
        Turn::tool_call(
            "task",
            json!({"agent": "reviewer", "tasks": [
            {"id": "Sleeper", "description": "sleep", "assignment": "SUB-MARK: sleep"}]}),
        ),
        Turn::tool_call("bash", json!({"command": "sleep 300 & echo $! > sub.pid; wait"}))
            .when_body_contains("SUB-MARK"),
    ])
    .await;
    let pid_file = env.cwd.join("sub.pid");
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+task"]).await;
    rho.send(json!({"type": "prompt", "message": "delegate"})).await;
    let written = || std::fs::read_to_string(&pid_file).is_ok_and(|text| text.ends_with('\n'));
    assert!(eventually(written).await, "the sub-agent's command did not start");
    let pid: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    rho.child.start_kill().unwrap();
    rho.child.wait().await.unwrap();
    assert!(ends(pid).await, "the sub-agent's command outlived a killed rho");
}
