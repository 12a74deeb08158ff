//! `/rewind` in ACP mode: typed in the editor, it puts back the files rho changed since the last
//! prompt and moves the conversation back; the editor lists it among the commands.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::acp_client;
use crate::common;

use acp_client::*;
use agent_client_protocol::v1::schema::{SessionUpdate, StopReason};
use common::Env;
use pretty_assertions::assert_eq;
use rho_mock_llm::Turn;
use serde_json::json;

#[tokio::test]
async fn rewind_in_the_editor_restores_the_files_of_the_last_prompt() {
    let env = Env::new(vec![
        Turn::tool_call("write", json!({"path": "new.txt", "content": "made"})),
        Turn::tool_call("edit", json!({"path": "a.txt", "edits": [{"oldText": "before", "newText": "after"}]})),
        Turn::text("Done."),
    ])
    .await;
    let a = env.cwd.join("a.txt");
    std::fs::write(&a, "before\n").unwrap();
    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    acp.prompt(&session.session_id, vec![text("Change the files")]).await.unwrap();
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "after\n");
    let listed = acp.updates().into_iter().any(|u| match u {
        SessionUpdate::AvailableCommandsUpdate(update) => update.available_commands.iter().any(|c| c.name == "rewind"),
        _ => false,
    });
    assert!(listed, "the editor was not told of /rewind");

    let answer = acp.prompt(&session.session_id, vec![text("/rewind")]).await.unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let said = chunks(&acp.updates(), agent_text);
    let restored = format!("Restored: {}, {}", a.display(), env.cwd.join("new.txt").display());
    assert_eq!(said, format!("Rewound the conversation to before the last prompt.\n{restored}"));
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "before\n");
    assert!(!env.cwd.join("new.txt").exists());
    assert_eq!(env.request_bodies().len(), 3, "/rewind reached the model");

    let wrong = acp.prompt(&session.session_id, vec![text("/rewind everything")]).await.unwrap();
    assert_eq!(wrong.stop_reason, StopReason::EndTurn);
    assert_eq!(chunks(&acp.updates(), agent_text), "Unknown /rewind argument: everything (code or conversation)");
    acp.close().await;
}
