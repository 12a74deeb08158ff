//! The session commands through the real binary, against the files they write: the record on
//! disk as the run goes, new_session, switch_session (and a missing path), branch / fork and
//! get_branch_messages, clone, set_session_name, export_html, and a restart that resumes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho, read_jsonl};
use rho_mock_llm::Turn;
use serde_json::json;

fn answers(n: usize) -> Vec<Turn> {
    (1..=n).map(|i| Turn::text(format!("Answer {i}."))).collect()
}

#[tokio::test]
async fn the_session_file_records_every_message_as_it_ends() {
    let env = Env::new(answers(1)).await;
    let mut rho = Rho::start(&env, &[]).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    let file = std::path::PathBuf::from(state["sessionFile"].as_str().unwrap());
    // The header is on disk before anything is said.
    let lines = read_jsonl(&file);
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 3);
    rho.send(json!({"type": "prompt", "message": "hello"})).await;
    rho.until_agent_end().await;
    let kinds: Vec<String> = read_jsonl(&file)
        .iter()
        .map(|l| match l["type"].as_str().unwrap() {
            "message" => format!("message:{}", l["message"]["role"].as_str().unwrap()),
            other => other.to_owned(),
        })
        .collect();
    assert_eq!(
        kinds,
        ["session", "model_change", "thinking_level_change", "message:system", "message:user", "message:assistant"]
    );
}

#[tokio::test]
async fn new_session_switch_session_and_a_missing_path() {
    let env = Env::new(answers(2)).await;
    let mut rho = Rho::start(&env, &[]).await;
    rho.send(json!({"type": "prompt", "message": "first"})).await;
    rho.until_agent_end().await;
    let first = rho.data(json!({"type": "get_state"})).await;
    let first_file = first["sessionFile"].as_str().unwrap().to_owned();

    let created = rho.data(json!({"type": "new_session", "parentSession": first_file})).await;
    assert_eq!(created, json!({"cancelled": false}));
    let second = rho.data(json!({"type": "get_state"})).await;
    assert_ne!(second["sessionFile"], first["sessionFile"]);
    assert_eq!(second["messageCount"], 0);
    let header = &read_jsonl(std::path::Path::new(second["sessionFile"].as_str().unwrap()))[0];
    assert_eq!(header["parentSession"], json!(first_file));

    let switched = rho.data(json!({"type": "switch_session", "sessionPath": first_file})).await;
    assert_eq!(switched, json!({"cancelled": false}));
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["sessionFile"], json!(first_file));
    assert_eq!(state["messageCount"], 3);

    // A path with no file starts an empty session there (pi 0.73), its directories created.
    let fresh = env.dir.path().join("elsewhere/deep/s.jsonl");
    let switched = rho.data(json!({"type": "switch_session", "sessionPath": fresh})).await;
    assert_eq!(switched, json!({"cancelled": false}));
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["sessionFile"], json!(fresh));
    assert_eq!(state["messageCount"], 0);
    assert_ne!(state["sessionId"], second["sessionId"]);
    assert_eq!(read_jsonl(&fresh)[0]["type"], "session");
    // One that cannot be created is an error, and the session stays as it was.
    let blocked = env.dir.path().join("a-file");
    std::fs::write(&blocked, "").unwrap();
    let refused = rho.request(json!({"type": "switch_session", "sessionPath": blocked.join("s.jsonl")})).await;
    assert_eq!(refused["success"], false, "{refused}");
    assert_eq!(rho.data(json!({"type": "get_state"})).await["sessionFile"], json!(fresh));

    // A path that is not a regular file is refused at once: a FIFO nobody writes to would hold
    // the dispatcher forever, /dev/zero would never end.
    let fifo = env.dir.path().join("pipe.jsonl");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    for (path, kind) in [(fifo.as_path(), "a FIFO"), (std::path::Path::new("/dev/zero"), "a character device")] {
        let refused = rho.request(json!({"type": "switch_session", "sessionPath": path})).await;
        assert_eq!(
            refused["error"],
            format!("Not a session file: {} (it is {kind}, not a regular file)", path.display()),
            "{refused}"
        );
    }
    // A file whose first line is longer than any header is not read whole.
    let long = env.dir.path().join("long.jsonl");
    std::fs::write(&long, "x".repeat(1 << 20)).unwrap();
    let refused = rho.request(json!({"type": "switch_session", "sessionPath": long})).await;
    assert_eq!(
        refused["error"],
        format!("Not a session file: {} (its first line is longer than any session header)", long.display())
    );
    assert_eq!(rho.data(json!({"type": "get_state"})).await["sessionFile"], json!(fresh));
}

#[tokio::test]
async fn branch_continues_from_before_a_user_message_in_a_new_file() {
    let env = Env::new(answers(3)).await;
    let mut rho = Rho::start(&env, &[]).await;
    for text in ["first question", "second question"] {
        rho.send(json!({"type": "prompt", "message": text})).await;
        rho.until_agent_end().await;
    }
    let listed = rho.data(json!({"type": "get_branch_messages"})).await;
    let entries = listed["messages"].as_array().unwrap();
    assert_eq!(
        entries.iter().map(|e| e["text"].as_str().unwrap()).collect::<Vec<_>>(),
        ["first question", "second question"]
    );
    let second_id = entries[1]["entryId"].clone();

    // omp's branch, like pi's fork, continues in a new file holding the branch so far.
    let before = rho.data(json!({"type": "get_state"})).await;
    let branched = rho.data(json!({"type": "branch", "entryId": second_id})).await;
    assert_eq!(branched, json!({"text": "second question", "cancelled": false}));
    let after = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(after["messageCount"], 3);
    assert_ne!(after["sessionFile"], before["sessionFile"]);
    rho.send(json!({"type": "prompt", "message": "another way"})).await;
    rho.until_agent_end().await;
    // The listing covers the new file: its first question, then the new one.
    let listed = rho.data(json!({"type": "get_fork_messages"})).await;
    let texts: Vec<&str> = listed["messages"].as_array().unwrap().iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["first question", "another way"]);

    let bad = rho.request(json!({"type": "branch", "entryId": "nope"})).await;
    assert_eq!(bad["error"], "Invalid entry ID for branching");
    let bad = rho.request(json!({"type": "fork", "entryId": "nope"})).await;
    assert_eq!((bad["command"].as_str(), bad["error"].as_str()), (Some("fork"), Some("Invalid entry ID for forking")));
}

#[tokio::test]
async fn fork_continues_in_a_new_file_that_names_its_parent() {
    let env = Env::new(answers(2)).await;
    let mut rho = Rho::start(&env, &[]).await;
    for text in ["first question", "second question"] {
        rho.send(json!({"type": "prompt", "message": text})).await;
        rho.until_agent_end().await;
    }
    let before = rho.data(json!({"type": "get_state"})).await;
    let original = before["sessionFile"].as_str().unwrap().to_owned();
    let lines_before = read_jsonl(std::path::Path::new(&original)).len();
    let listed = rho.data(json!({"type": "get_fork_messages"})).await;
    let second_id = listed["messages"][1]["entryId"].clone();

    let forked = rho.data(json!({"type": "fork", "entryId": second_id})).await;
    assert_eq!(forked, json!({"text": "second question", "cancelled": false}));
    let after = rho.data(json!({"type": "get_state"})).await;
    assert_ne!(after["sessionFile"], before["sessionFile"]);
    assert_ne!(after["sessionId"], before["sessionId"]);
    assert_eq!(after["messageCount"], 3, "the messages before the forked one (the declared prompt first)");
    let new_file = read_jsonl(std::path::Path::new(after["sessionFile"].as_str().unwrap()));
    assert_eq!(new_file[0]["parentSession"], json!(original));
    assert_eq!(read_jsonl(std::path::Path::new(&original)).len(), lines_before, "the original is untouched");
    // Forking the first message starts over from the declared prompt (the entry before it), with
    // the lineage kept.
    let first_id = listed["messages"][0]["entryId"].clone();
    rho.send(json!({"type": "switch_session", "sessionPath": original})).await;
    rho.until(|f| f["type"] == "response").await;
    rho.data(json!({"type": "fork", "entryId": first_id})).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["messageCount"], 1);
    let messages = rho.data(json!({"type": "get_messages"})).await;
    assert_eq!(messages["messages"][0]["role"], "system");
}

#[tokio::test]
async fn clone_copies_the_branch_into_a_new_session() {
    let env = Env::new(answers(1)).await;
    let mut rho = Rho::start(&env, &[]).await;
    rho.send(json!({"type": "prompt", "message": "keep this"})).await;
    rho.until_agent_end().await;
    let before = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(rho.data(json!({"type": "clone"})).await, json!({"cancelled": false}));
    let after = rho.data(json!({"type": "get_state"})).await;
    assert_ne!(after["sessionFile"], before["sessionFile"]);
    assert_eq!(after["messageCount"], 3);
    assert_eq!(env.session_files().len(), 2);
}

#[tokio::test]
async fn session_names_are_cleaned_reported_and_saved() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &[]).await;
    let empty = rho.request(json!({"type": "set_session_name", "name": " \t "})).await;
    assert_eq!(empty["error"], "Session name cannot be empty");
    rho.send(json!({"id": "n", "type": "set_session_name", "name": "  my\tfeature   work "})).await;
    let frames = rho.until(|f| f["id"] == "n").await;
    assert_eq!(frames[0], json!({"type": "session_info_changed", "name": "my feature work"}));
    assert_eq!(rho.data(json!({"type": "get_state"})).await["sessionName"], "my feature work");
}

#[tokio::test]
async fn export_html_writes_a_private_page_or_refuses_an_in_memory_session() {
    let env = Env::new(answers(1)).await;
    let mut rho = Rho::start(&env, &[]).await;
    rho.send(json!({"type": "prompt", "message": "<script>alert(1)</script> hi"})).await;
    rho.until_agent_end().await;
    let out = env.dir.path().join("export.html");
    let data = rho.data(json!({"type": "export_html", "outputPath": out})).await;
    assert_eq!(data["path"], json!(out));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; hi"));
    assert!(html.contains("Answer 1."));

    // The session and its export are the user's alone, as auth.json is.
    let file = std::path::PathBuf::from(rho.data(json!({"type": "get_state"})).await["sessionFile"].as_str().unwrap());
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    assert_eq!(mode(&env.agent_dir.join("sessions")), 0o700);
    assert_eq!(mode(&out), 0o600);

    let mut memory = Rho::start(&env, &["--no-session"]).await;
    let refused = memory.request(json!({"type": "export_html"})).await;
    assert_eq!(refused["error"], "Cannot export in-memory session to HTML");
}

#[tokio::test]
async fn a_restart_with_continue_resumes_where_the_user_was() {
    let env = Env::new(answers(2)).await;
    let mut rho = Rho::start(&env, &[]).await;
    rho.send(json!({"type": "prompt", "message": "remember me"})).await;
    rho.until_agent_end().await;
    rho.close_stdin();
    assert!(rho.wait().await.success());

    let mut again = Rho::start(&env, &["--continue"]).await;
    let state = again.data(json!({"type": "get_state"})).await;
    assert_eq!(state["messageCount"], 3);
    again.send(json!({"type": "prompt", "message": "and now?"})).await;
    again.until_agent_end().await;
    let second_request = &env.request_bodies()[1];
    assert_eq!(second_request["messages"][0]["content"][0]["text"], "remember me");
    assert_eq!(env.session_files().len(), 1);
}

/// A path's permission bits.
fn mode(path: &std::path::Path) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(path).unwrap().permissions()) & 0o777
}
