//! A pi user's home, nothing set up for rho: their `~/.pi/agent` (models, sessions) is used,
//! stderr says so once, `rho -p` answers with their model, and `rho --continue` goes on in the
//! session file of their agent dir.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::process::Output;

use common::{Env, read_jsonl};
use rho_mock_llm::Turn;

/// `env`'s agent dir moved to `~/.pi/agent`, and rho run without `RHO_CODING_AGENT_DIR`.
async fn run_as_pi_user(env: &Env, args: &[&str]) -> Output {
    let mut command = env.command(args);
    command.env_remove("RHO_CODING_AGENT_DIR").env_remove("PI_CODING_AGENT_DIR").stdin(std::process::Stdio::null());
    tokio::time::timeout(std::time::Duration::from_secs(20), command.output()).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_pi_users_home_works_with_no_set_up() {
    let env = Env::new(vec![Turn::text("From pi's config."), Turn::text("Still here.")]).await;
    let pi_agent = env.dir.path().join(".pi/agent");
    std::fs::create_dir_all(pi_agent.parent().unwrap()).unwrap();
    std::fs::rename(&env.agent_dir, &pi_agent).unwrap();

    let first = run_as_pi_user(&env, &["-p", "--model", "mock/mock-model", "hello"]).await;
    let stderr = String::from_utf8(first.stderr.clone()).unwrap();
    assert!(first.status.success(), "{stderr}");
    assert_eq!(String::from_utf8(first.stdout).unwrap(), "From pi's config.\n");
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [format!("rho: using pi's agent directory {} (rho has none of its own)", pi_agent.display())]
    );
    // The session went where pi keeps them, in pi's layout.
    let sessions: Vec<_> = std::fs::read_dir(pi_agent.join("sessions")).unwrap().flatten().collect();
    assert_eq!(sessions.len(), 1);

    let again = run_as_pi_user(&env, &["-p", "--continue", "--model", "mock/mock-model", "and now?"]).await;
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(String::from_utf8(again.stdout).unwrap(), "Still here.\n");
    let dir = sessions[0].path();
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|f| f.path()).collect();
    assert_eq!(files.len(), 1, "--continue went on in the same file");
    let users: Vec<String> = read_jsonl(&files[0])
        .iter()
        .filter(|e| e["message"]["role"] == "user")
        .map(|e| e["message"]["content"][0]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(users, ["hello", "and now?"]);
    // The second request carried the first exchange.
    assert_eq!(env.request_bodies()[1]["messages"].as_array().unwrap().len(), 3);
}
