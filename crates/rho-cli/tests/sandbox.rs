//! The sandbox, attacked through the real binary: under `--sandbox workspace-write` the model's
//! commands write in the project and nowhere else (not `$HOME`, not `../`, not through a
//! symlink or `/proc/self/root`, not from a re-exec'd child), reach no TCP listener and no Unix
//! socket, while git in the project still works; the write tool is held to the same policy;
//! read-only writes nothing; `get_state` says which box is in force; commands never see the
//! provider keys rho reads unless the settings let them. The home and the project live outside
//! `/tmp` here, since a sandbox lets commands write in the temp dir.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;

use common::{Env, Rho, eventually};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

/// The text of each tool result of the run `prompt` starts, in order.
pub(crate) async fn tool_results(rho: &mut Rho, prompt: &str) -> Vec<(bool, String)> {
    rho.send(json!({"type": "prompt", "message": prompt})).await;
    let frames = rho.until_agent_end().await;
    frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .map(|f| (f["isError"] == true, f["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()))
        .collect()
}

/// Each attempt prints `<name>=<outcome>`; the output is those lines.
fn escape_script(home: &Path, port: u16, socket: &Path) -> String {
    let home = home.display();
    let socket = socket.display();
    let node = |what: &str| {
        format!(
            "node -e \"require('net').connect({what}).on('connect',()=>{{console.log('open');process.exit(0)}})\
             .on('error',e=>{{console.log(e.code);process.exit(0)}})\""
        )
    };
    [
        "echo in > inside.txt && echo inside=ok".to_owned(),
        format!("(echo out > '{home}/outside.txt') 2>/dev/null && echo home=written || echo home=denied"),
        "(echo up > ../up.txt) 2>/dev/null && echo parent=written || echo parent=denied".to_owned(),
        format!("ln -s '{home}' link && (echo via > link/via.txt) 2>/dev/null && echo symlink=written || echo symlink=denied"),
        format!("(echo root > '/proc/self/root{home}/proc.txt') 2>/dev/null && echo procroot=written || echo procroot=denied"),
        format!("sh -c \"exec sh -c 'echo re > {home}/reexec.txt'\" 2>/dev/null && echo reexec=written || echo reexec=denied"),
        format!("echo tcp=$({})", node(&format!("{port},'127.0.0.1'"))),
        format!("echo unix=$({})", node(&format!("'{socket}'"))),
        "git init -q repo && git -C repo -c user.email=a@b -c user.name=n commit -q --allow-empty -m x && echo git=ok"
            .to_owned(),
    ]
    .join("\n")
}

#[tokio::test]
async fn workspace_write_keeps_commands_and_writes_in_the_project() {
    let env = Env::outside_tmp(Vec::new()).await;
    let home = env.cwd.parent().unwrap().to_path_buf();
    let socket_path = home.join("agent.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    let port = env.server.addr().port();
    env.server.push_turns(vec![
        Turn::tool_call("bash", json!({"command": escape_script(&home, port, &socket_path)})),
        Turn::tool_call("write", json!({"path": home.join("written.txt"), "content": "x"})),
        Turn::tool_call("write", json!({"path": "sub/ok.txt", "content": "fine"})),
        Turn::text("done"),
    ]);
    let mut rho = Rho::start(&env, &["--sandbox", "workspace-write", "--no-session"]).await;
    let results = tool_results(&mut rho, "try to get out").await;

    let (bash_error, bash) = &results[0];
    assert!(!bash_error, "{bash}");
    let lines: Vec<&str> = bash.lines().collect();
    assert_eq!(
        lines,
        [
            "inside=ok",
            "home=denied",
            "parent=denied",
            "symlink=denied",
            "procroot=denied",
            "reexec=denied",
            "tcp=EPERM",
            "unix=EPERM",
            "git=ok"
        ]
    );
    for escaped in ["outside.txt", "up.txt", "via.txt", "proc.txt", "reexec.txt"] {
        assert!(!home.join(escaped).exists() && !home.parent().unwrap().join(escaped).exists(), "{escaped}");
    }
    assert!(env.cwd.join("inside.txt").exists());

    let (write_error, write) = &results[1];
    assert!(write_error, "{write}");
    assert!(
        write.starts_with("The workspace-write sandbox allows writes only in ") && write.ends_with("is outside"),
        "{write}"
    );
    assert!(!home.join("written.txt").exists());
    assert_eq!(results[2], (false, "Successfully wrote to sub/ok.txt".to_owned()));
    assert_eq!(std::fs::read_to_string(env.cwd.join("sub/ok.txt")).unwrap(), "fine");

    let state = rho.data(json!({"type": "get_state"})).await;
    let cwd = env.cwd.canonicalize().unwrap().display().to_string();
    assert_eq!(state["sandbox"]["mode"], "workspace-write");
    assert_eq!(state["sandbox"]["network"], false);
    let roots: Vec<&str> =
        state["sandbox"]["writableRoots"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(roots.contains(&cwd.as_str()), "{roots:?}");
}

#[tokio::test]
async fn read_only_writes_nothing_and_full_access_is_pi_s() {
    let env = Env::outside_tmp(vec![
        Turn::tool_call("bash", json!({"command": "(echo x > made.txt) 2>/dev/null || echo denied; cat /etc/hostname >/dev/null && echo read=ok"})),
        Turn::tool_call("edit", json!({"path": "file.txt", "edits": [{"oldText": "a", "newText": "b"}]})),
        Turn::text("done"),
    ])
    .await;
    std::fs::write(env.cwd.join("file.txt"), "a").unwrap();
    let mut rho = Rho::start(&env, &["--sandbox", "read-only", "--no-session"]).await;
    let results = tool_results(&mut rho, "change things").await;
    assert_eq!(results[0], (false, "denied\nread=ok\n".to_owned()));
    assert!(results[1].0, "{:?}", results[1]);
    assert!(results[1].1.starts_with("The read-only sandbox allows no writes"), "{}", results[1].1);
    assert_eq!(std::fs::read_to_string(env.cwd.join("file.txt")).unwrap(), "a");
    assert!(!env.cwd.join("made.txt").exists());
    assert_eq!(rho.data(json!({"type": "get_state"})).await["sandbox"]["mode"], "read-only");
    drop(rho);

    // Without --sandbox nothing changes for a host: no `sandbox` in get_state.
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    assert!(rho.data(json!({"type": "get_state"})).await.get("sandbox").is_none());
}

#[tokio::test]
async fn a_project_cannot_choose_its_own_sandbox() {
    let env = Env::outside_tmp(Vec::new()).await;
    std::fs::create_dir_all(env.cwd.join(".pi")).unwrap();
    std::fs::write(env.cwd.join(".pi/settings.json"), r#"{"sandbox": {"mode": "danger-full-access"}}"#).unwrap();
    std::fs::write(env.agent_dir.join("settings.json"), r#"{"sandbox": {"mode": "workspace-write"}}"#).unwrap();
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    assert_eq!(rho.data(json!({"type": "get_state"})).await["sandbox"]["mode"], "workspace-write");
    let mut stderr_pipe = rho.child.stderr.take().unwrap();
    rho.close_stdin();
    assert!(rho.wait().await.success());
    let mut stderr = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr_pipe, &mut stderr).await.unwrap();
    assert!(
        stderr.contains("\"sandbox.mode\" is ignored in a project's settings (set it in the global settings file or on the command line)"),
        "{stderr}"
    );
}

#[tokio::test]
async fn commands_do_not_see_the_provider_keys_rho_reads() {
    let script = "echo anthropic=${ANTHROPIC_API_KEY:-unset} openai=${OPENAI_API_KEY:-unset} gh=${GH_TOKEN:-unset}";
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": script})),
        Turn::text("done"),
        Turn::tool_call("bash", json!({"command": script})),
        Turn::text("done"),
    ])
    .await;
    let keys = [("ANTHROPIC_API_KEY", "sk-ant-secret"), ("OPENAI_API_KEY", "sk-secret"), ("GH_TOKEN", "gh-token")];
    let mut command = env.command(&["--mode", "rpc", "--model", "mock/mock-model", "--no-session"]);
    command.envs(keys);
    let mut rho = Rho::start_command(command).await;
    let results = tool_results(&mut rho, "what keys are there").await;
    assert_eq!(results[0].1, "anthropic=unset openai=unset gh=gh-token\n");
    drop(rho);

    let mut command = env.command(&[
        "--mode",
        "rpc",
        "--model",
        "mock/mock-model",
        "--no-session",
        "--setting",
        "bash.inheritProviderKeys=true",
    ]);
    command.envs(keys);
    let mut rho = Rho::start_command(command).await;
    let results = tool_results(&mut rho, "and now").await;
    assert_eq!(results[0].1, "anthropic=sk-ant-secret openai=sk-secret gh=gh-token\n");
}

#[tokio::test]
async fn a_project_s_mcp_servers_run_in_the_sandbox_and_the_user_s_own_outside() {
    let env = Env::outside_tmp(Vec::new()).await;
    let home = env.cwd.parent().unwrap().to_path_buf();
    let server = |tag: &str| {
        json!({"command": "sh", "args": ["-c", format!(
            "touch {tag}-inside; (echo x > '{home}/{tag}-escaped') 2>/dev/null; touch {tag}-done",
            home = home.display()
        )]})
    };
    std::fs::write(env.cwd.join(".mcp.json"), json!({"mcpServers": {"project": server("project")}}).to_string())
        .unwrap();
    std::fs::write(env.agent_dir.join("mcp.json"), json!({"mcpServers": {"mine": server("mine")}}).to_string())
        .unwrap();
    env.trust_project();
    let mut rho = Rho::start(&env, &["--sandbox", "workspace-write", "--no-session"]).await;
    assert!(eventually(|| env.cwd.join("project-done").exists() && env.cwd.join("mine-done").exists()).await);
    assert!(env.cwd.join("project-inside").exists() && env.cwd.join("mine-inside").exists());
    assert!(!home.join("project-escaped").exists(), "the project's server wrote outside the sandbox");
    assert!(home.join("mine-escaped").exists(), "the user's own server runs outside the sandbox");
    rho.close_stdin();
    rho.wait().await;
}
