//! Permission rules and the approval mode through the real binary: a deny rule refuses a call
//! (also hidden in a compound command or a substitution) and nothing happens; an ask rule asks
//! an RPC host with an `extension_ui_request` select and runs or refuses the call by its answer
//! ("always" is remembered for the session); print mode, having no one to ask, refuses;
//! `--approval never` refuses without asking and `--approval ask` asks before any call that can
//! change something; a project's settings add deny rules but cannot allow anything unless the
//! project is trusted, nor drop the user's own deny rules. Commands are judged as the shell
//! parses them: every spelling of a denied command is refused, and an output redirection is a
//! write that a command's allow rule does not cover; a path rule sees every spelling of its path
//! (`@`, `~`, a symlink, `/proc/self/root`, a folder above it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

fn write_global(env: &Env, settings: Value) {
    std::fs::write(env.agent_dir.join("settings.json"), settings.to_string()).unwrap();
}

/// The `(isError, text)` of each tool result in `frames`.
fn results(frames: &[Value]) -> Vec<(bool, String)> {
    frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .map(|f| (f["isError"] == true, f["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()))
        .collect()
}

fn bash(command: &str) -> Turn {
    Turn::tool_call("bash", json!({ "command": command }))
}

#[tokio::test]
async fn deny_rules_refuse_and_nothing_runs() {
    let env = Env::new(vec![
        bash("touch made && rm -f keep"),
        bash("echo $(rm -f keep)"),
        Turn::tool_call("read", json!({"path": ".env"})),
        bash("touch made"),
        Turn::text("done"),
    ])
    .await;
    std::fs::write(env.cwd.join("keep"), "").unwrap();
    std::fs::write(env.cwd.join(".env"), "SECRET=1").unwrap();
    write_global(&env, json!({"permissions": {"deny": ["Bash(rm:*)", "Read(./.env)"]}}));
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "clean up"})).await;
    let results = results(&rho.until_agent_end().await);
    let denied =
        |rule: &str| (true, format!("Permission denied: the rule {rule} in permissions.deny refuses this call."));
    assert_eq!(results[..3], [denied("Bash(rm:*)"), denied("Bash(rm:*)"), denied("Read(./.env)")]);
    assert_eq!(results[3], (false, "(no output)".to_owned()));
    assert!(env.cwd.join("keep").exists(), "a denied command ran");
    assert!(env.cwd.join("made").exists());
}

#[tokio::test]
async fn an_ask_rule_asks_the_rpc_host_and_always_is_remembered() {
    let env =
        Env::new(vec![bash("echo one"), bash("echo two"), bash("echo three"), bash("echo three"), Turn::text("done")])
            .await;
    write_global(&env, json!({"permissions": {"ask": ["Bash(echo:*)"]}}));
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "talk"})).await;
    let mut answers = ["Allow once", "Deny", "Allow always (this session)"].into_iter();
    let (mut frames, mut asked) = (Vec::new(), Vec::new());
    loop {
        let frame = rho.next().await;
        if frame["type"] == "extension_ui_request" {
            assert_eq!(frame["method"], "select");
            assert_eq!(frame["options"], json!(["Allow once", "Allow always (this session)", "Deny"]));
            asked.push(frame["title"].as_str().unwrap().to_owned());
            let answer = answers.next().expect("asked more than three times");
            rho.send(json!({"type": "extension_ui_response", "id": frame["id"], "value": answer})).await;
        }
        let end = frame["type"] == "agent_end";
        frames.push(frame);
        if end {
            break;
        }
    }
    assert_eq!(
        asked,
        [
            "Allow this call? (the rule Bash(echo:*) in permissions.ask)\nbash: echo one",
            "Allow this call? (the rule Bash(echo:*) in permissions.ask)\nbash: echo two",
            "Allow this call? (the rule Bash(echo:*) in permissions.ask)\nbash: echo three",
        ],
        "the fourth call was allowed always"
    );
    let rejected = "The user rejected this bash call. Do not retry it as it was; ask what they want instead.";
    assert_eq!(
        results(&frames),
        [
            (false, "one\n".to_owned()),
            (true, rejected.to_owned()),
            (false, "three\n".to_owned()),
            (false, "three\n".to_owned())
        ]
    );
}

#[tokio::test]
async fn with_no_one_to_ask_or_approvals_off_a_call_that_needs_approval_is_refused() {
    let env = Env::new(vec![bash("touch pushed"), Turn::text("done")]).await;
    write_global(&env, json!({"permissions": {"ask": ["Bash(touch:*)"]}}));
    let output = env.command(&["-p", "--model", "mock/mock-model", "--no-session", "go"]).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!env.cwd.join("pushed").exists());
    let request = env.request_bodies().pop().unwrap().to_string();
    assert!(
        request.contains(
            "Permission denied: this call needs the user's approval (the rule Bash(touch:*) in permissions.ask), and \
             there is no one to ask in this mode."
        ),
        "{request}"
    );

    env.server.push_turns(vec![bash("touch pushed"), Turn::text("done")]);
    let mut rho = Rho::start(&env, &["--no-session", "--approval", "never"]).await;
    rho.send(json!({"type": "prompt", "message": "go"})).await;
    let frames = rho.until_agent_end().await;
    assert!(frames.iter().all(|f| f["type"] != "extension_ui_request"), "asked though approvals are off");
    assert_eq!(
        results(&frames)[0].1,
        "Permission denied: this call needs the user's approval (the rule Bash(touch:*) in permissions.ask), and \
         approvals are off (--approval never)."
    );
    assert!(!env.cwd.join("pushed").exists());
}

#[tokio::test]
async fn approval_ask_asks_before_changes_but_not_before_reads_or_allowed_calls() {
    let env = Env::new(vec![
        Turn::tool_call("read", json!({"path": "notes.txt"})),
        bash("npm test"),
        Turn::tool_call("write", json!({"path": "out.txt", "content": "x"})),
        Turn::text("done"),
    ])
    .await;
    std::fs::write(env.cwd.join("notes.txt"), "n").unwrap();
    write_global(&env, json!({"permissions": {"allow": ["Bash(npm test:*)"]}}));
    let mut rho = Rho::start(&env, &["--no-session", "--approval", "ask"]).await;
    let (_, asked) = run_answering(&mut rho, "work", "Deny").await;
    assert_eq!(asked, ["Allow this call? (--approval ask)\nwrite: out.txt"]);
    assert!(!env.cwd.join("out.txt").exists());
}

/// The frames of one prompt, answering every question with `answer`; the questions' titles.
async fn run_answering(rho: &mut Rho, prompt: &str, answer: &str) -> (Vec<Value>, Vec<String>) {
    rho.send(json!({"type": "prompt", "message": prompt})).await;
    let (mut frames, mut asked) = (Vec::new(), Vec::new());
    loop {
        let frame = rho.next().await;
        if frame["type"] == "extension_ui_request" {
            asked.push(frame["title"].as_str().unwrap().to_owned());
            rho.send(json!({"type": "extension_ui_response", "id": frame["id"], "value": answer})).await;
        }
        let end = frame["type"] == "agent_end";
        frames.push(frame);
        if end {
            return (frames, asked);
        }
    }
}

#[tokio::test]
async fn a_project_adds_deny_rules_but_allows_nothing_unless_trusted() {
    let env = Env::new(vec![bash("touch a"), bash("ls"), Turn::text("done")]).await;
    write_global(&env, json!({"permissions": {"deny": ["Bash(touch:*)"]}}));
    std::fs::create_dir_all(env.cwd.join(".pi")).unwrap();
    // The project's deny list adds to the user's (it does not replace it); its allow list counts
    // only in a trusted project.
    std::fs::write(
        env.cwd.join(".pi/settings.json"),
        json!({"permissions": {"deny": ["Bash(echo:*)"], "allow": ["Bash"]}}).to_string(),
    )
    .unwrap();
    let mut rho = Rho::start(&env, &["--no-session", "--approval", "ask"]).await;
    let (frames, asked) = run_answering(&mut rho, "go", "Deny").await;
    let outcome = results(&frames);
    assert_eq!(outcome[0].1, "Permission denied: the rule Bash(touch:*) in permissions.deny refuses this call.");
    assert_eq!(asked, ["Allow this call? (--approval ask)\nbash: ls"], "the untrusted project's allow rule counted");
    drop(rho);

    env.server.push_turns(vec![bash("echo hi"), bash("ls"), Turn::text("done")]);
    env.trust_project();
    let mut rho = Rho::start(&env, &["--no-session", "--approval", "ask"]).await;
    let (frames, asked) = run_answering(&mut rho, "go", "Deny").await;
    assert!(asked.is_empty(), "the trusted project's allow rule covers ls: {asked:?}");
    let outcome = results(&frames);
    assert_eq!(outcome[0].1, "Permission denied: the rule Bash(echo:*) in permissions.deny refuses this call.");
    assert!(!outcome[1].0, "{:?}", outcome[1]);
}

#[tokio::test]
async fn approval_ask_asks_before_a_redirection_that_a_command_rule_does_not_cover() {
    let env = Env::new(vec![
        bash("echo fine"),
        bash("echo 'echo PWNED' >> ~/.bashrc"),
        bash("echo quiet > /dev/null 2>&1"),
        Turn::text("done"),
    ])
    .await;
    write_global(&env, json!({"permissions": {"allow": ["Bash(echo:*)"]}}));
    let mut rho = Rho::start(&env, &["--no-session", "--approval", "ask"]).await;
    let (frames, asked) = run_answering(&mut rho, "go", "Deny").await;
    assert_eq!(asked, ["Allow this call? (--approval ask)\nbash: echo 'echo PWNED' >> ~/.bashrc"]);
    let outcome = results(&frames);
    assert_eq!(outcome[0], (false, "fine\n".to_owned()));
    assert!(outcome[1].0, "{:?}", outcome[1]);
    assert!(!outcome[2].0, "{:?}", outcome[2]);
    assert!(!env.dir.path().join(".bashrc").exists(), "the redirection ran");
}

#[tokio::test]
async fn a_deny_rule_refuses_every_spelling_of_its_command() {
    let spellings = [
        "FOO=1 rm -f keep",
        "\\rm -f keep",
        "\"rm\" -f keep",
        "r\"\"m -f keep",
        "/bin/rm -f keep",
        "command rm -f keep",
        "env FOO=1 rm -f keep",
        "timeout 5 rm -f keep",
        "{ rm -f keep; }",
        "true && (rm -f keep)",
        "if true; then rm -f keep; fi",
        "bash -c 'rm -f keep'",
        "eval 'rm -f keep'",
        "f(){ rm -f keep; }; f",
        "echo keep | xargs rm -f",
        "echo `rm -f keep`",
    ];
    let mut turns: Vec<Turn> = spellings.iter().map(|s| bash(s)).collect();
    turns.push(bash("touch made"));
    turns.push(Turn::text("done"));
    let env = Env::new(turns).await;
    std::fs::write(env.cwd.join("keep"), "").unwrap();
    write_global(&env, json!({"permissions": {"deny": ["Bash(rm:*)"]}}));
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "clean up"})).await;
    let outcome = results(&rho.until_agent_end().await);
    let denied = (true, "Permission denied: the rule Bash(rm:*) in permissions.deny refuses this call.".to_owned());
    for (spelling, result) in spellings.iter().zip(&outcome) {
        assert_eq!(*result, denied, "{spelling}");
    }
    assert_eq!(outcome[spellings.len()], (false, "(no output)".to_owned()));
    assert!(env.cwd.join("keep").exists(), "a denied command ran");
    assert!(env.cwd.join("made").exists());
}

#[tokio::test]
async fn a_read_deny_rule_refuses_every_spelling_of_its_folder() {
    let env = Env::new(Vec::new()).await;
    let home = env.dir.path().to_path_buf();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), env.cwd.join("keys")).unwrap();
    let ssh = home.join(".ssh").display().to_string();
    let calls = [
        ("read", json!({"path": format!("@{ssh}/id_rsa")})),
        ("read", json!({"path": "@~/.ssh/id_rsa"})),
        ("read", json!({"path": "keys/id_rsa"})),
        ("read", json!({"path": format!("/proc/self/root{ssh}/id_rsa")})),
        ("grep", json!({"pattern": "PRIVATE", "path": "~"})),
        ("find", json!({"pattern": "*", "path": ssh})),
        ("ls", json!({"path": "~/.ssh"})),
    ];
    let mut turns: Vec<Turn> = calls.iter().map(|(tool, args)| Turn::tool_call(tool, args.clone())).collect();
    turns.push(Turn::text("done"));
    env.server.push_turns(turns);
    write_global(&env, json!({"permissions": {"deny": ["Read(~/.ssh/**)"]}}));
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "read,grep,find,ls"]).await;
    rho.send(json!({"type": "prompt", "message": "look"})).await;
    let frames = rho.until_agent_end().await;
    let outcome = results(&frames);
    let denied =
        (true, "Permission denied: the rule Read(~/.ssh/**) in permissions.deny refuses this call.".to_owned());
    assert_eq!(outcome.len(), calls.len());
    for ((tool, args), result) in calls.iter().zip(&outcome) {
        assert_eq!(*result, denied, "{tool} {args}");
    }
    assert!(!serde_json::to_string(&frames).unwrap().contains("PRIVATE KEY"));
}
