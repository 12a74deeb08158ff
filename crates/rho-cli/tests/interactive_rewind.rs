//! `/rewind` through the real `rho` in a pseudo-terminal against rho-mock-llm: a user message
//! picked (each with how many files rho changed since), the code and the conversation restored;
//! a file changed outside rho is asked about and, declined, left as it is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::interactive_support;

use common::Env;
use interactive_support::{Terminal, keys};
use rho_mock_llm::Turn;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_restores_the_files_and_asks_about_one_changed_outside() {
    let env = Env::new(vec![
        Turn::text("first answer"),
        Turn::tool_call("write", json!({"path": "new.txt", "content": "made"})),
        Turn::tool_call("edit", json!({"path": "kept.txt", "edits": [{"oldText": "old", "newText": "new"}]})),
        Turn::tool_call("edit", json!({"path": "theirs.txt", "edits": [{"oldText": "old", "newText": "new"}]})),
        Turn::text("second answer"),
    ])
    .await;
    std::fs::write(env.cwd.join("kept.txt"), "old").unwrap();
    std::fs::write(env.cwd.join("theirs.txt"), "old").unwrap();
    let term = Terminal::start(&env, &[]);
    term.two_exchanges().await;
    std::fs::write(env.cwd.join("theirs.txt"), "mine").unwrap();

    term.submit("/rewind");
    let list = term.wait_for("Rewind to before a message").await;
    assert!(list.contains("3 files changed since"), "{list}");
    term.send(keys::ENTER);
    term.wait_for("Restore code and conversation").await;
    term.send(keys::ENTER);
    let question = term.wait_for("changed outside rho since rho wrote it. Overwrite?").await;
    assert!(question.contains("theirs.txt"), "{question}");
    term.send("No");
    term.wait_for("→ No").await;
    term.send(keys::ENTER);
    let screen = term.wait_for("Rewound to before the selected message").await;
    assert!(screen.contains("Restored 2 files"), "{screen}");
    assert!(screen.contains("Left as they are (changed outside rho since)"), "{screen}");
    assert!(!env.cwd.join("new.txt").exists());
    assert_eq!(std::fs::read_to_string(env.cwd.join("kept.txt")).unwrap(), "old");
    assert_eq!(std::fs::read_to_string(env.cwd.join("theirs.txt")).unwrap(), "mine");
    // The message is back in the editor.
    term.wait_for("› second question").await;
}

/// `/tree` to a point before rho changed a file offers to put the file as it was there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moving_in_the_tree_offers_to_restore_the_files() {
    let env = Env::new(vec![
        Turn::text("first answer"),
        Turn::tool_call("write", json!({"path": "notes.txt", "content": "second"})),
        Turn::text("second answer"),
    ])
    .await;
    std::fs::write(env.cwd.join("notes.txt"), "first").unwrap();
    let term = Terminal::start(&env, &["--setting", "branchSummary.skipPrompt=true"]);
    term.two_exchanges().await;
    term.submit("/tree");
    term.wait_for("Session tree").await;
    term.send("first answer");
    term.wait_for("→ assistant: first answer").await;
    term.send(keys::ENTER);
    let question = term.wait_for("Restore the 1 file rho changed").await;
    assert!(question.contains("notes.txt"), "{question}");
    term.send(keys::ENTER);
    term.wait_for("Restored 1 file").await;
    assert_eq!(std::fs::read_to_string(env.cwd.join("notes.txt")).unwrap(), "first");
}
