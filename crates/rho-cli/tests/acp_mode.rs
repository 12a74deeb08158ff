//! ACP mode end to end: the real `rho --mode acp` driven by the official SDK's client side
//! (`agent_client_protocol::Client`, see `acp_client`) over piped stdio, against rho-mock-llm
//! on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::acp_client;
use crate::common;

use acp_client::*;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, EmbeddedResource, EmbeddedResourceResource, ImageContent,
    LoadSessionRequest, PermissionOptionKind, PlanEntryStatus, PromptRequest, SessionConfigKind,
    SessionConfigOptionValue, SessionId, SessionUpdate, SetSessionConfigOptionRequest, SetSessionModeRequest,
    StopReason, TextResourceContents, ToolCallContent, ToolCallStatus, ToolKind,
};
use common::Env;
use pretty_assertions::assert_eq;
use rho_mock_llm::Turn;
use serde_json::json;

#[tokio::test]
async fn initialize_new_session_and_a_prompt_that_streams_text_and_thinking() {
    let env =
        Env::with_api(vec![Turn::text("Hello there, friend.").with_thinking("Pondering.")], "anthropic-messages", true)
            .await;
    let mut acp = Acp::start(&env, &[]).await;
    let init = acp.initialize(false).await;
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    assert!(init.agent_capabilities.load_session);
    assert!(init.agent_capabilities.prompt_capabilities.image);
    assert!(init.agent_capabilities.prompt_capabilities.embedded_context);
    // The subscription logins, as terminal auth methods (`rho login <provider>`).
    let logins: Vec<String> = init
        .auth_methods
        .iter()
        .map(|m| match m {
            agent_client_protocol::v1::schema::AuthMethod::Terminal(t) => t.args.join(" "),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        logins,
        [
            "login anthropic",
            "login github-copilot",
            "login kimi-coding",
            "login meta",
            "login openai",
            "login openai-codex",
            "login openrouter",
            "login radius",
            "login xai"
        ]
    );

    let session = acp.new_session(&env.cwd).await;
    let options = session.config_options.clone().unwrap();
    let ids: Vec<&str> = options.iter().map(|o| &*o.id.0).collect();
    assert_eq!(ids, ["model", "thinking"]);
    let SessionConfigKind::Select(model) = &options[0].kind else { panic!("{options:?}") };
    assert_eq!(&*model.current_value.0, "mock/mock-model");

    let response = acp.prompt(&session.session_id, vec![text("Say hello")]).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    let updates = acp.updates();
    assert!(matches!(updates[0], SessionUpdate::AvailableCommandsUpdate(_)), "{:?}", updates[0]);
    assert_eq!(chunks(&updates, thought), "Pondering.");
    assert_eq!(chunks(&updates, agent_text), "Hello there, friend.");

    // The thinking level is a config option; the answer carries the options as they are now.
    let set = SetSessionConfigOptionRequest::new(
        session.session_id.clone(),
        "thinking",
        SessionConfigOptionValue::value_id("high"),
    );
    let options = acp.request(set).await.unwrap().config_options;
    let SessionConfigKind::Select(level) = &options[1].kind else { panic!("{options:?}") };
    assert_eq!(&*level.current_value.0, "high");
    let bad = SetSessionConfigOptionRequest::new(
        session.session_id.clone(),
        "model",
        SessionConfigOptionValue::value_id("nope/x"),
    );
    assert!(acp.request(bad).await.is_err());
    assert!(acp.close().await.success());
}

#[tokio::test]
async fn tool_calls_are_announced_run_and_finished_with_diffs_and_the_plan() {
    let todo = json!({"ops": [{"op": "replace", "phases": [{"name": "Work", "tasks": [
        {"content": "Fix the greeting", "status": "in_progress"}]}]}]});
    let edit = json!({"path": "a.txt", "edits": [{"oldText": "hello", "newText": "goodbye"}]});
    let env = Env::new(vec![
        Turn::tool_call("todo_write", todo),
        Turn::tool_call("edit", edit),
        Turn::tool_call("bash", json!({"command": "exit 3"})),
        Turn::text("Done."),
    ])
    .await;
    std::fs::write(env.cwd.join("a.txt"), "hello world\n").unwrap();
    // The task stays open: no reminder turn after "Done.".
    let mut acp = Acp::start(&env, &["--tools", "+todo_write", "--setting", "todo.reminders=false"]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    let response = acp.prompt(&session.session_id, vec![text("Fix it")]).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(std::fs::read_to_string(env.cwd.join("a.txt")).unwrap(), "goodbye world\n");

    let updates = acp.updates();
    let plan = updates.iter().find_map(|u| match u {
        SessionUpdate::Plan(p) => Some(p),
        _ => None,
    });
    let plan = plan.expect("a plan");
    assert_eq!(plan.entries[0].content, "Fix the greeting");
    assert_eq!(plan.entries[0].status, PlanEntryStatus::InProgress);

    let calls: Vec<_> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect();
    let kinds: Vec<(ToolKind, &str)> = calls.iter().map(|c| (c.kind, c.title.as_str())).collect();
    assert_eq!(
        kinds,
        [(ToolKind::Think, "Update the todo list"), (ToolKind::Edit, "Edit a.txt"), (ToolKind::Execute, "`exit 3`")]
    );
    let edit_call = calls[1];
    assert_eq!(edit_call.status, ToolCallStatus::Pending);
    assert_eq!(edit_call.locations[0].path, env.cwd.join("a.txt"));

    let statuses = |id: &str| -> Vec<ToolCallStatus> {
        updates
            .iter()
            .filter_map(|u| match u {
                SessionUpdate::ToolCallUpdate(t) if &*t.tool_call_id.0 == id => t.fields.status,
                _ => None,
            })
            .collect()
    };
    assert_eq!(statuses(&edit_call.tool_call_id.0), [ToolCallStatus::InProgress, ToolCallStatus::Completed]);
    assert_eq!(statuses(&calls[2].tool_call_id.0), [ToolCallStatus::InProgress, ToolCallStatus::Failed]);
    let diff = updates.iter().find_map(|u| match u {
        SessionUpdate::ToolCallUpdate(t) => t.fields.content.as_ref()?.iter().find_map(|c| match c {
            ToolCallContent::Diff(d) => Some(d.clone()),
            _ => None,
        }),
        _ => None,
    });
    let diff = diff.expect("the edit's diff");
    assert_eq!((diff.old_text.as_deref(), diff.new_text.as_str()), (Some("hello"), "goodbye"));
    assert_eq!(diff.path, env.cwd.join("a.txt"));
    assert_eq!(chunks(&updates, agent_text), "Done.");
    acp.close().await;
}

#[tokio::test]
async fn the_file_tools_use_the_editors_buffers_when_it_offers_them() {
    let env = Env::new(vec![
        Turn::tool_call("read", json!({"path": "a.txt"})),
        Turn::tool_call("edit", json!({"path": "a.txt", "edits": [{"oldText": "unsaved", "newText": "edited"}]})),
        Turn::tool_call("write", json!({"path": "new.txt", "content": "fresh"})),
        Turn::text("Done."),
    ])
    .await;
    let a = env.cwd.join("a.txt");
    std::fs::write(&a, "on disk\n").unwrap();
    let mut acp = Acp::start(&env, &[]).await;
    acp.editor.buffers.lock().unwrap().insert(a.clone(), "unsaved buffer\n".into());
    acp.initialize(true).await;
    let session = acp.new_session(&env.cwd).await;
    acp.prompt(&session.session_id, vec![text("Edit a.txt")]).await.unwrap();

    let requests = acp.editor.requests.lock().unwrap().clone();
    let new = env.cwd.join("new.txt");
    let expected = [
        format!("read {}", a.display()),
        format!("read {}", a.display()),
        format!("write {}", a.display()),
        format!("write {}", new.display()),
    ];
    assert_eq!(requests, expected);
    assert_eq!(acp.editor.buffers.lock().unwrap()[&a], "edited buffer\n");
    assert_eq!(acp.editor.buffers.lock().unwrap()[&new], "fresh");
    // The model saw the buffer, and the disk is the editor's to save.
    let bodies = env.request_bodies();
    assert!(bodies[1].to_string().contains("unsaved buffer"), "{}", bodies[1]);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "on disk\n");
    assert!(!new.exists());
    acp.updates();
    acp.close().await;
}

#[tokio::test]
async fn a_prompt_inlines_embedded_files_and_carries_images() {
    let env = Env::new(vec![Turn::text("Seen.")]).await;
    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    let file = EmbeddedResource::new(EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
        "fn main() {}",
        format!("file://{}", env.cwd.join("main.rs").display()),
    )));
    let blocks = vec![
        text("Explain "),
        ContentBlock::Resource(file),
        ContentBlock::Image(ImageContent::new("iVBORw0KGgo=", "image/png")),
    ];
    acp.prompt(&session.session_id, blocks).await.unwrap();
    let body = env.request_bodies()[0].to_string();
    let block = format!("<file name=\\\"{}\\\">\\nfn main() {{}}\\n</file>", env.cwd.join("main.rs").display());
    assert!(body.contains(&block), "{body}");
    assert!(body.contains("iVBORw0KGgo="), "{body}");
    acp.updates();
    acp.close().await;
}

#[tokio::test]
async fn cancel_ends_the_prompt_cancelled_and_a_failed_reply_is_an_error() {
    let env = Env::new(vec![
        Turn::text("A very slow answer that never finishes in time.").with_chunk_size(4).with_chunk_delay_ms(400),
        Turn::error(401, "invalid x-api-key"),
    ])
    .await;
    let mut acp = Acp::start(&env, &["--setting", "retry.enabled=false"]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    let cx = acp.cx.clone();
    let id = session.session_id.clone();
    let pending =
        tokio::spawn(async move { cx.send_request(PromptRequest::new(id, vec![text("Go")])).block_task().await });
    // Cancel once the answer has started to stream.
    while acp.updates.recv().await.is_some_and(|n| agent_text(&n.update).is_none()) {}
    acp.cx.send_notification(CancelNotification::new(session.session_id.clone())).unwrap();
    let response = tokio::time::timeout(TIMEOUT, pending).await.unwrap().unwrap().unwrap();
    assert_eq!(response.stop_reason, StopReason::Cancelled);

    let failed = acp.prompt(&session.session_id, vec![text("Again")]).await.unwrap_err();
    assert!(failed.message.contains("invalid x-api-key"), "{failed:?}");
    let unknown = acp.prompt(&SessionId::new("no-such-session"), vec![text("x")]).await.unwrap_err();
    assert!(unknown.message.contains("Unknown session"), "{unknown:?}");
    acp.close().await;
}

#[tokio::test]
async fn load_replays_a_session_before_answering_and_the_session_goes_on() {
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "echo replayed"})),
        Turn::text("First answer."),
        Turn::text("Second answer."),
    ])
    .await;
    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    acp.prompt(&session.session_id, vec![text("First question")]).await.unwrap();
    acp.updates();
    assert!(acp.close().await.success());

    let files = env.session_files();
    assert_eq!(files.len(), 1);
    let before = std::fs::read(&files[0]).unwrap();
    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    acp.request(LoadSessionRequest::new(session.session_id.clone(), env.cwd.clone())).await.unwrap();
    // Loading only reads, and options sent back as they are change nothing: nothing is
    // appended to the file it loads.
    for (option, value) in [("model", "mock/mock-model"), ("thinking", "medium")] {
        let same = SetSessionConfigOptionRequest::new(
            session.session_id.clone(),
            option,
            SessionConfigOptionValue::value_id(value),
        );
        acp.request(same).await.unwrap();
    }
    assert_eq!(std::fs::read(&files[0]).unwrap(), before, "session/load wrote to the file");
    let replayed = acp.updates();
    assert_eq!(chunks(&replayed, user_text), "First question");
    assert_eq!(chunks(&replayed, agent_text), "First answer.");
    let finished = replayed.iter().any(|u| {
        matches!(u, SessionUpdate::ToolCallUpdate(t) if t.fields.status == Some(ToolCallStatus::Completed)
            && format!("{:?}", t.fields.content).contains("replayed"))
    });
    assert!(finished, "{replayed:?}");

    acp.prompt(&session.session_id, vec![text("Second question")]).await.unwrap();
    let body = env.request_bodies()[2].to_string();
    assert!(body.contains("First question") && body.contains("Second question"), "{body}");
    let missing = LoadSessionRequest::new(SessionId::new("/no/such/session.jsonl"), env.cwd.clone());
    assert!(acp.request(missing).await.is_err());
    acp.close().await;
}

/// The statuses a call went through after it was announced.
fn statuses(updates: &[SessionUpdate], id: &str) -> Vec<ToolCallStatus> {
    updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCallUpdate(t) if &*t.tool_call_id.0 == id => t.fields.status,
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn ask_mode_asks_before_edits_and_commands_and_a_rejected_call_is_an_error_the_model_sees() {
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "echo ran > ran.txt"})),
        Turn::tool_call("write", json!({"path": "w.txt", "content": "written"})),
        Turn::tool_call("write", json!({"path": "w2.txt", "content": "again"})),
        Turn::tool_call("read", json!({"path": "w.txt"})),
        Turn::text("Done."),
        Turn::tool_call("bash", json!({"command": "echo free > free.txt"})),
        Turn::text("Done again."),
    ])
    .await;
    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    let modes = session.modes.clone().expect("modes");
    let ids: Vec<&str> = modes.available_modes.iter().map(|m| &*m.id.0).collect();
    assert_eq!((&*modes.current_mode_id.0, ids), ("auto", vec!["auto", "ask"]));
    let unknown = SetSessionModeRequest::new(session.session_id.clone(), "plan");
    assert!(acp.request(unknown).await.unwrap_err().message.contains("Unknown mode: plan"));
    acp.request(SetSessionModeRequest::new(session.session_id.clone(), "ask")).await.unwrap();

    // bash rejected; write allowed always (so the second write and the read ask nothing).
    acp.editor.permission_answers.lock().unwrap().extend(["reject", "allow-always"]);
    let response = acp.prompt(&session.session_id, vec![text("Go")]).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    let asked = acp.editor.permission_requests.lock().unwrap().clone();
    let titles: Vec<_> = asked.iter().map(|r| r.tool_call.fields.title.clone().unwrap()).collect();
    assert_eq!(titles, ["`echo ran > ran.txt`", "Write w.txt"]);
    let kinds: Vec<_> = asked[0].options.iter().map(|o| (&*o.option_id.0, o.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("allow", PermissionOptionKind::AllowOnce),
            ("allow-always", PermissionOptionKind::AllowAlways),
            ("reject", PermissionOptionKind::RejectOnce)
        ]
    );
    let diff = asked[1].tool_call.fields.content.clone().unwrap();
    assert!(matches!(&diff[0], ToolCallContent::Diff(d) if d.new_text == "written"), "{diff:?}");
    assert!(!env.cwd.join("ran.txt").exists());
    assert_eq!(std::fs::read_to_string(env.cwd.join("w.txt")).unwrap(), "written");
    assert_eq!(std::fs::read_to_string(env.cwd.join("w2.txt")).unwrap(), "again");
    let updates = acp.updates();
    let bash_id = &asked[0].tool_call.tool_call_id.0;
    assert_eq!(statuses(&updates, bash_id), [ToolCallStatus::InProgress, ToolCallStatus::Failed]);
    let second = env.request_bodies()[1].to_string();
    assert!(second.contains("The user rejected this bash call"), "{second}");

    // Back to auto: nothing is asked.
    acp.request(SetSessionModeRequest::new(session.session_id.clone(), "auto")).await.unwrap();
    acp.prompt(&session.session_id, vec![text("Again")]).await.unwrap();
    assert_eq!(acp.editor.permission_requests.lock().unwrap().len(), 2);
    assert_eq!(std::fs::read_to_string(env.cwd.join("free.txt")).unwrap(), "free\n");
    acp.updates();
    acp.close().await;
}

#[tokio::test]
async fn a_permission_request_the_client_cancels_aborts_the_call() {
    let env = Env::new(vec![
        Turn::tool_call("edit", json!({"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}]})),
        Turn::text("Stopped."),
    ])
    .await;
    std::fs::write(env.cwd.join("a.txt"), "a\n").unwrap();
    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    acp.request(SetSessionModeRequest::new(session.session_id.clone(), "ask")).await.unwrap();
    // No answer queued: the client answers `cancelled`.
    acp.prompt(&session.session_id, vec![text("Edit")]).await.unwrap();
    assert_eq!(acp.editor.permission_requests.lock().unwrap().len(), 1);
    assert_eq!(std::fs::read_to_string(env.cwd.join("a.txt")).unwrap(), "a\n");
    let second = env.request_bodies()[1].to_string();
    assert!(second.contains("Operation aborted"), "{second}");
    acp.updates();
    acp.close().await;
}

/// The terminals a call's updates embed, in order.
fn terminals_shown(updates: &[SessionUpdate], id: &str) -> Vec<String> {
    updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCallUpdate(t) if &*t.tool_call_id.0 == id => t.fields.content.clone(),
            _ => None,
        })
        .flatten()
        .map(|c| match c {
            ToolCallContent::Terminal(t) => t.terminal_id.0.to_string(),
            other => format!("not a terminal: {other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn bash_runs_in_the_editors_terminal_when_it_offers_terminals() {
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": "echo out; pwd"})),
        Turn::tool_call("bash", json!({"command": "echo failing >&2; exit 3"})),
        Turn::text("Done."),
    ])
    .await;
    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize_with(ClientCapabilities::new().terminal(true)).await;
    let session = acp.new_session(&env.cwd).await;
    let response = acp.prompt(&session.session_id, vec![text("Run")]).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);

    let requests = acp.editor.requests.lock().unwrap().clone();
    let one = ["terminal/wait_for_exit", "terminal/output", "terminal/release"];
    let shell = "/bin/bash -c";
    let mut expected = vec![format!("terminal/create {shell} echo out; pwd")];
    expected.extend(one.map(str::to_owned));
    expected.push(format!("terminal/create {shell} echo failing >&2; exit 3"));
    expected.extend(one.map(str::to_owned));
    assert_eq!(requests, expected);

    let updates = acp.updates();
    let calls: Vec<String> = updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCall(c) => Some(c.tool_call_id.0.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(terminals_shown(&updates, &calls[0]), ["term-0", "term-0"], "shown live and at the end");
    assert_eq!(terminals_shown(&updates, &calls[1]), ["term-1", "term-1"]);
    assert_eq!(statuses(&updates, &calls[0]), [ToolCallStatus::InProgress, ToolCallStatus::Completed]);
    assert_eq!(statuses(&updates, &calls[1]), [ToolCallStatus::InProgress, ToolCallStatus::Failed]);

    // The editor's terminal starts from the editor's environment: the provider keys rho reads
    // are set empty there, as they are removed for commands rho runs itself.
    let terminal_env = acp.editor.terminal_env.lock().unwrap().clone();
    for var in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AWS_BEARER_TOKEN_BEDROCK"] {
        assert!(terminal_env[0].contains(&(var.to_owned(), String::new())), "{var}: {:?}", terminal_env[0]);
    }
    assert!(!terminal_env[0].iter().any(|(name, _)| name == "GH_TOKEN"), "git's and gh's tokens stay");

    let bodies = env.request_bodies();
    let first = bodies[1].to_string();
    let cwd = env.cwd.display().to_string();
    assert!(first.contains(&format!("out\\n{cwd}\\n")), "the terminal's output in the cwd: {first}");
    let second = bodies[2].to_string();
    assert!(second.contains("failing\\n\\n\\nCommand exited with code 3"), "{second}");
    acp.close().await;
}

#[tokio::test]
async fn a_command_past_its_timeout_is_killed_in_the_editors_terminal() {
    let env =
        Env::new(vec![Turn::tool_call("bash", json!({"command": "sleep 30", "timeout": 1})), Turn::text("Done.")])
            .await;
    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize_with(ClientCapabilities::new().terminal(true)).await;
    let session = acp.new_session(&env.cwd).await;
    acp.prompt(&session.session_id, vec![text("Wait")]).await.unwrap();
    let requests = acp.editor.requests.lock().unwrap().clone();
    assert_eq!(
        requests,
        [
            "terminal/create /bin/bash -c sleep 30",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release"
        ]
    );
    let second = env.request_bodies()[1].to_string();
    assert!(second.contains("\"content\":\"Command timed out after 1 seconds\""), "{second}");
    acp.updates();
    acp.close().await;
}

/// A prompt refused for want of a key is answered `auth_required`, so the editor offers its
/// logins; a key stored meanwhile (a login made in the editor's terminal) is taken up at the
/// next prompt without restarting rho.
#[tokio::test]
async fn a_missing_key_asks_the_editor_for_a_login_and_a_new_one_is_taken_up() {
    let env = Env::new(vec![Turn::text("Now it works.")]).await;
    let path = env.agent_dir.join("models.json");
    let mut models: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // A key named by a variable that is not set: there is none.
    models["providers"]["mock"]["apiKey"] = json!("$RHO_TEST_UNSET_KEY");
    std::fs::write(&path, models.to_string()).unwrap();
    let acp = Acp::start(&env, &[]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    let hi = || vec![ContentBlock::from("hi")];
    let refused = acp.prompt(&session.session_id, hi()).await.unwrap_err();
    assert_eq!(refused.code, agent_client_protocol::ErrorCode::AUTH_REQUIRED, "{refused:?}");

    std::fs::write(env.agent_dir.join("auth.json"), r#"{"mock": {"type": "api_key", "key": "test-key"}}"#).unwrap();
    let answered = acp.prompt(&session.session_id, hi()).await.unwrap();
    assert_eq!(answered.stop_reason, StopReason::EndTurn);
    assert_eq!(env.server.requests().len(), 1);
    acp.close().await;
}

/// The sandbox commands run in shows in the session's modes.
#[tokio::test]
async fn the_sandbox_shows_in_the_modes() {
    let env = Env::new(vec![]).await;
    let acp = Acp::start(&env, &["--sandbox", "workspace-write"]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    let modes = session.modes.unwrap();
    let descriptions: Vec<String> = modes.available_modes.iter().map(|m| m.description.clone().unwrap()).collect();
    assert_eq!(
        descriptions,
        [
            "Tools run without asking; commands run in the workspace-write sandbox",
            "Ask before edits, writes and commands; commands run in the workspace-write sandbox"
        ]
    );
    acp.close().await;
    // At full access (the default) nothing is said.
    let acp = Acp::start(&env, &["--no-session"]).await;
    acp.initialize(false).await;
    let session = acp.new_session(&env.cwd).await;
    assert_eq!(session.modes.unwrap().available_modes[0].description.as_deref(), Some("Tools run without asking"));
    acp.close().await;
}

/// A project that is not trusted and has code of its own: the session starts none of it, and
/// its first prompt asks the editor, listing what would run. "Not now" changes nothing and is
/// not asked again in that session; "Trust" is remembered, so later sessions ask nothing.
#[tokio::test]
async fn the_editor_is_asked_to_trust_a_project_before_its_first_prompt() {
    let turns = ["One.", "Two.", "Three.", "Four."].map(Turn::text).to_vec();
    let env = Env::new(turns).await;
    // The project's server leaves a marker when it is started.
    let marker = env.cwd.join("started");
    let touch = format!("touch '{}'", marker.display());
    let server = json!({"mcpServers": {"proj": {"command": "sh", "args": ["-c", touch]}}});
    std::fs::write(env.cwd.join(".mcp.json"), server.to_string()).unwrap();
    let trusted = env.agent_dir.join("trust.json");
    let mut acp = Acp::start(&env, &[]).await;
    acp.initialize_with(ClientCapabilities::new()).await;
    let asked = |acp: &Acp| acp.editor.permission_requests.lock().unwrap().clone();

    acp.editor.permission_answers.lock().unwrap().push_back("not-now");
    let first = acp.new_session(&env.cwd).await;
    let response = acp.prompt(&first.session_id, vec![text("Hi")]).await.unwrap();
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    let questions = asked(&acp);
    assert_eq!(questions.len(), 1);
    assert_eq!(questions[0].tool_call.fields.title.as_deref(), Some("Trust this project?"));
    let listed = format!("{:?}", questions[0].tool_call.fields.content);
    assert!(listed.contains(".mcp.json (MCP servers: proj)"), "{listed}");
    let options: Vec<String> = questions[0].options.iter().map(|o| o.option_id.0.to_string()).collect();
    assert_eq!(options, ["trust-project", "not-now"]);
    assert!(!trusted.exists());
    acp.prompt(&first.session_id, vec![text("Again")]).await.unwrap();
    assert_eq!(asked(&acp).len(), 1, "asked once per session");
    assert!(!marker.exists(), "nothing of the project's ran before it was trusted");

    acp.editor.permission_answers.lock().unwrap().push_back("trust-project");
    let second = acp.new_session(&env.cwd).await;
    acp.prompt(&second.session_id, vec![text("Hi")]).await.unwrap();
    assert_eq!(asked(&acp).len(), 2);
    let record = std::fs::read_to_string(&trusted).unwrap();
    let cwd = std::fs::canonicalize(&env.cwd).unwrap();
    assert!(record.contains(&*cwd.to_string_lossy()), "{record}");

    let third = acp.new_session(&env.cwd).await;
    acp.prompt(&third.session_id, vec![text("Hi")]).await.unwrap();
    assert_eq!(asked(&acp).len(), 2, "a trusted project asks nothing");
    assert!(common::eventually(|| marker.exists()).await, "a session after the approval starts the server");
    acp.updates();
    acp.close().await;
}
