//! Checkpoints and rewind through the real binary: `write` and `edit` keep what each file held
//! (in the agent directory, never in the project), and `rewind` over RPC puts the files rho
//! changed since a user message back (a file created since is removed), moves the conversation
//! back to just before the message, or both; a file changed outside rho since is named and left
//! alone unless forced.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

fn edit(path: &str, old: &str, new: &str) -> Turn {
    Turn::tool_call("edit", json!({"path": path, "edits": [{"oldText": old, "newText": new}]}))
}

fn write(path: &str, content: &str) -> Turn {
    Turn::tool_call("write", json!({"path": path, "content": content}))
}

/// The script: a first exchange, then a prompt whose turns create `a.txt`, edit `b.txt`,
/// overwrite `c.txt` and edit `d.txt`.
async fn changed_files() -> Env {
    let env = Env::new(vec![
        Turn::text("ok"),
        write("a.txt", "a1"),
        edit("b.txt", "b0", "b1"),
        write("c.txt", "c1"),
        edit("d.txt", "d0", "d1"),
        Turn::text("done"),
    ])
    .await;
    for name in ["b", "c", "d"] {
        std::fs::write(env.cwd.join(format!("{name}.txt")), format!("{name}0")).unwrap();
    }
    env
}

async fn run_both_prompts(rho: &mut Rho) -> String {
    rho.send(json!({"type": "prompt", "message": "first"})).await;
    rho.until_agent_end().await;
    rho.send(json!({"type": "prompt", "message": "change the files"})).await;
    rho.until_agent_end().await;
    rho.send(json!({"id": "m", "type": "get_fork_messages"})).await;
    let messages = rho.until(|f| f["id"] == "m").await.pop().unwrap();
    let second = &messages["data"]["messages"][1];
    assert_eq!(second["text"], "change the files");
    second["entryId"].as_str().unwrap().to_owned()
}

fn read(env: &Env, name: &str) -> Option<String> {
    std::fs::read_to_string(env.cwd.join(name)).ok()
}

async fn rewind(rho: &mut Rho, fields: Value) -> Value {
    let mut command = json!({"id": "r", "type": "rewind"});
    command.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    rho.send(command).await;
    rho.until(|f| f["id"] == "r").await.pop().unwrap()
}

fn paths(env: &Env, names: &[&str]) -> Vec<String> {
    names.iter().map(|n| env.cwd.join(n).display().to_string()).collect()
}

/// Three files rho changed are put back and one created is removed; the one changed outside
/// rho since is named and kept; the conversation moves back to before the message.
#[tokio::test]
async fn a_rewind_restores_the_files_and_spares_one_changed_outside() {
    let env = changed_files().await;
    let mut rho = Rho::start(&env, &[]).await;
    let entry = run_both_prompts(&mut rho).await;
    assert_eq!(
        ["a.txt", "b.txt", "c.txt", "d.txt"].map(|n| read(&env, n)),
        ["a1", "b1", "c1", "d1"].map(|t| Some(t.to_owned()))
    );
    std::fs::write(env.cwd.join("d.txt"), "d outside").unwrap();

    let preview = rewind(&mut rho, json!({"entryId": entry, "dryRun": true})).await;
    let expected = json!({
        "restored": paths(&env, &["a.txt", "b.txt", "c.txt"]),
        "changedOutside": paths(&env, &["d.txt"]),
        "notKept": [],
        "failed": [],
    });
    assert_eq!(preview, json!({"id": "r", "type": "response", "command": "rewind", "success": true, "data": expected}));
    assert_eq!(read(&env, "b.txt").as_deref(), Some("b1"), "a dry run changed a file");

    let done = rewind(&mut rho, json!({"entryId": entry})).await;
    let mut expected = expected;
    expected["text"] = json!("change the files");
    assert_eq!(done["data"], expected);
    assert_eq!(
        ["a.txt", "b.txt", "c.txt", "d.txt"].map(|n| read(&env, n)),
        [None, Some("b0".into()), Some("c0".into()), Some("d outside".into())]
    );
    // The conversation is back to just before the message.
    rho.send(json!({"id": "g", "type": "get_messages"})).await;
    let messages = rho.until(|f| f["id"] == "g").await.pop().unwrap();
    let roles: Vec<&str> =
        messages["data"]["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
    // Nothing was kept in the project.
    let mut names: Vec<String> =
        std::fs::read_dir(&env.cwd).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["b.txt", "c.txt", "d.txt"]);
}

/// `restore: "code"` keeps the conversation and records the rewind, so a second rewind sees the
/// files as they are; `force` overwrites a file changed outside rho.
#[tokio::test]
async fn a_code_rewind_keeps_the_conversation_and_force_overwrites() {
    let env = changed_files().await;
    let mut rho = Rho::start(&env, &[]).await;
    let entry = run_both_prompts(&mut rho).await;
    std::fs::write(env.cwd.join("d.txt"), "d outside").unwrap();

    let done = rewind(&mut rho, json!({"entryId": entry, "restore": "code", "force": true})).await;
    assert_eq!(done["data"]["restored"], json!(paths(&env, &["a.txt", "b.txt", "c.txt", "d.txt"])));
    assert_eq!(done["data"].get("text"), None);
    assert_eq!(read(&env, "d.txt").as_deref(), Some("d0"));
    rho.send(json!({"id": "g", "type": "get_messages"})).await;
    let messages = rho.until(|f| f["id"] == "g").await.pop().unwrap();
    assert!(messages["data"]["messages"].as_array().unwrap().len() > 4, "the conversation moved");

    // Once more: the files already are as they were, so there is nothing to do.
    let again = rewind(&mut rho, json!({"entryId": entry, "restore": "code", "dryRun": true})).await;
    assert_eq!(again["data"]["restored"], json!([]));
    assert_eq!(again["data"]["changedOutside"], json!([]));
}

/// A rewind names only user messages of the current branch; with checkpoints turned off it
/// says so.
#[tokio::test]
async fn a_rewind_to_no_user_message_or_without_checkpoints_is_refused() {
    let env = changed_files().await;
    let mut rho = Rho::start(&env, &[]).await;
    let answer = rewind(&mut rho, json!({"entryId": "nope"})).await;
    assert_eq!(
        answer,
        json!({"id": "r", "type": "response", "command": "rewind", "success": false,
               "error": "Invalid entry ID for rewinding: not a user message on the current branch"})
    );
    drop(rho);

    let mut rho = Rho::start(&env, &["--setting", "checkpoints.enabled=false"]).await;
    let entry = run_both_prompts(&mut rho).await;
    let answer = rewind(&mut rho, json!({"entryId": entry, "restore": "code"})).await;
    assert_eq!(answer["error"], "Checkpoints are turned off (checkpoints.enabled)");
    assert_eq!(read(&env, "b.txt").as_deref(), Some("b1"));
}
