//! The commands and events of the current pi / omp generation, driven through the real binary:
//! omp's commands (paged messages, slash commands, fast mode, sub-agents, login providers,
//! handoff), `thinking_level_changed` and `model_changed` before the answer, and
//! `contextUsage`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho, read_jsonl};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

async fn converse(rho: &mut Rho, prompts: &[&str]) {
    for text in prompts {
        rho.send(json!({"type": "prompt", "message": text})).await;
        rho.until_agent_end().await;
    }
}

#[tokio::test]
async fn messages_come_a_page_at_a_time_and_a_stale_cursor_is_refused() {
    let env = Env::new((0..4).map(|i| Turn::text(format!("Answer {i}."))).collect()).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    converse(&mut rho, &["one", "two", "three"]).await;

    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut command = json!({"type": "get_messages_page", "limit": 4});
        if !cursor.is_null() {
            command["cursor"] = cursor.clone();
        }
        let page = rho.data(command).await;
        assert_eq!(page["totalMessages"], 7);
        seen.extend(page["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap().to_owned()));
        match page.get("nextCursor") {
            Some(next) => cursor = next.clone(),
            None => break,
        }
    }
    assert_eq!(seen, ["system", "user", "assistant", "user", "assistant", "user", "assistant"]);

    let first = rho.data(json!({"type": "get_messages_page", "limit": 2})).await;
    converse(&mut rho, &["four"]).await;
    let stale = rho.request(json!({"type": "get_messages_page", "cursor": first["nextCursor"]})).await;
    assert_eq!(
        (stale["error"].as_str(), stale["code"].as_str()),
        (Some("RPC message cursor is stale"), Some("stale_cursor"))
    );
    let bad = rho.request(json!({"type": "get_messages_page", "limit": 0})).await;
    assert_eq!(
        bad,
        json!({"id": bad["id"], "type": "response", "command": "get_messages_page", "success": false,
               "error": "RPC message page limit must be between 1 and 256"})
    );
}

#[tokio::test]
async fn omp_commands_answer_as_omp_does() {
    let env = Env::new(vec![]).await;
    let prompts = env.cwd.join(".rho/prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(prompts.join("review.md"), "---\ndescription: Review a file\n---\nReview $1").unwrap();
    let mut rho = Rho::start(&env, &["--no-session"]).await;

    let commands = rho.data(json!({"type": "get_available_commands"})).await;
    let commands = commands["commands"].as_array().unwrap();
    let builtins: Vec<&str> =
        commands.iter().filter(|c| c["source"] == "builtin").map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(builtins, ["model", "export", "session", "tools", "compact", "handoff", "rename"]);
    assert_eq!(
        commands[0],
        json!({"name": "model", "aliases": ["models"], "description": "Show current model selection", "source": "builtin"})
    );
    assert_eq!(commands.last().unwrap(), &json!({"name": "review", "description": "Review a file", "source": "file"}));

    rho.send(json!({"id": "f", "type": "set_fast_mode", "enabled": true})).await;
    let frames = rho.until(|f| f["id"] == "f").await;
    assert_eq!(
        frames,
        [
            json!({"type": "notice", "level": "info", "source": "priority",
                   "message": "The current model has no service-tier control for /fast to toggle."}),
            json!({"id": "f", "type": "response", "command": "set_fast_mode", "success": false,
                   "error": "Fast mode is unavailable for the current model."})
        ]
    );
    assert_eq!(
        rho.data(json!({"type": "set_fast_mode", "enabled": false})).await,
        json!({"enabled": false, "active": false})
    );

    let bogus = rho.request(json!({"type": "set_subagent_subscription", "level": "bogus"})).await;
    assert_eq!(bogus["error"], "Invalid subagent subscription level: bogus");
    assert_eq!(
        rho.data(json!({"type": "set_subagent_subscription", "level": "progress"})).await,
        json!({"level": "progress"})
    );
    assert_eq!(rho.data(json!({"type": "get_subagents"})).await, json!({"subagents": []}));
    for (command, error) in [
        (json!({"type": "get_subagent_messages"}), "get_subagent_messages requires subagentId or sessionFile"),
        (
            json!({"type": "get_subagent_messages", "subagentId": "x"}),
            "Unknown subagent or session file unavailable: x",
        ),
        (json!({"type": "get_subagent_messages", "sessionFile": "/etc/passwd"}), "Unknown subagent session file"),
        (
            json!({"type": "get_subagent_messages", "subagentId": "x", "fromByte": "3"}),
            "fromByte must be a finite number",
        ),
    ] {
        assert_eq!(rho.request(command).await["error"], error);
    }
    assert_eq!(
        rho.data(json!({"type": "get_login_providers"})).await,
        json!({"providers": [
            {"id": "anthropic", "name": "Anthropic (Claude Pro/Max)", "available": true, "authenticated": false},
            {"id": "github-copilot", "name": "GitHub Copilot", "available": true, "authenticated": false},
            {"id": "kimi-coding", "name": "Kimi Code (subscription)", "available": true, "authenticated": false},
            {"id": "meta", "name": "Meta (Muse subscription)", "available": true, "authenticated": false},
            {"id": "openai", "name": "OpenAI (ChatGPT subscription)", "available": true, "authenticated": false},
            {"id": "openai-codex", "name": "ChatGPT Plus/Pro (Codex Subscription)", "available": true,
             "authenticated": false},
            {"id": "openrouter", "name": "OpenRouter", "available": true, "authenticated": false},
            {"id": "radius", "name": "Radius", "available": true, "authenticated": false},
            {"id": "xai", "name": "xAI (Grok/X subscription)", "available": true, "authenticated": false}
        ]})
    );
    // A login in auth.json (pi's shape) shows as authenticated.
    let login = json!({"anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}});
    std::fs::write(env.agent_dir.join("auth.json"), login.to_string()).unwrap();
    let listed = rho.data(json!({"type": "get_login_providers"})).await;
    assert_eq!(listed["providers"][0]["authenticated"], json!(true), "{listed}");
    assert_eq!(listed["providers"][1]["authenticated"], json!(false), "{listed}");
    let handoff = rho.request(json!({"type": "handoff"})).await;
    assert_eq!(handoff["error"], "Nothing to hand off (no messages yet)");
}

#[tokio::test]
async fn handoff_replaces_the_history_with_a_document() {
    let env = Env::new(vec![
        Turn::text("Done with step one."),
        Turn::text("## Goal\nFinish the parser.\n## Next\nStep two.").when_body_contains("handoff document"),
    ])
    .await;
    let mut rho = Rho::start(&env, &[]).await;
    converse(&mut rho, &["do step one"]).await;
    rho.send(json!({"id": "h", "type": "handoff", "customInstructions": "mention the tests"})).await;
    let frames = rho.until(|f| f["id"] == "h").await;
    assert_eq!(
        frames.last().unwrap(),
        &json!({"id": "h", "type": "response", "command": "handoff", "success": true, "data": {}})
    );
    assert!(
        frames.iter().all(|f| !f["type"].as_str().unwrap().contains("compaction")),
        "handoff sends no compaction events"
    );
    let summary_request = env.request_bodies().pop().unwrap().to_string();
    assert!(summary_request.contains("mention the tests"));
    let file = rho.data(json!({"type": "get_state"})).await["sessionFile"].as_str().unwrap().to_owned();
    let compaction = read_jsonl(std::path::Path::new(&file)).into_iter().find(|e| e["type"] == "compaction").unwrap();
    assert!(compaction["summary"].as_str().unwrap().contains("Finish the parser."));
}

#[tokio::test]
async fn level_and_model_changes_are_announced_before_the_answer() {
    let env = Env::with_api(vec![], "anthropic-messages", true).await;
    let mut rho = Rho::start(&env, &["--no-session", "--thinking", "low"]).await;
    rho.send(json!({"id": "t", "type": "set_thinking_level", "level": "high"})).await;
    assert_eq!(
        rho.until(|f| f["id"] == "t").await,
        [
            json!({"type": "thinking_level_changed", "level": "high", "thinkingLevel": "high"}),
            json!({"id": "t", "type": "response", "command": "set_thinking_level", "success": true})
        ]
    );
    // The same level again changes nothing and says nothing.
    rho.send(json!({"id": "t2", "type": "set_thinking_level", "level": "high"})).await;
    assert_eq!(rho.until(|f| f["id"] == "t2").await.len(), 1);

    rho.send(json!({"id": "m", "type": "set_model", "provider": "mock", "modelId": "mock-small"})).await;
    let frames = rho.until(|f| f["id"] == "m").await;
    let kinds: Vec<&str> = frames.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["model_changed", "thinking_level_changed", "response"]);
    assert_eq!(frames[0], json!({"type": "model_changed"}));
    assert_eq!(frames[1]["level"], "off", "mock-small does not reason");
}

#[tokio::test]
async fn context_usage_says_how_full_the_window_is() {
    let env = Env::new(vec![Turn::text("Hi.")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let empty = rho.data(json!({"type": "get_session_stats"})).await;
    assert_eq!(empty["contextUsage"], json!({"tokens": 0, "contextWindow": 200000, "percent": 0}));
    converse(&mut rho, &["hello"]).await;
    let stats = rho.data(json!({"type": "get_session_stats"})).await;
    // The mock reports 100 input and 50 output tokens.
    assert_eq!(stats["contextUsage"], json!({"tokens": 150, "contextWindow": 200000, "percent": 0.075}));
    let state = rho.data(json!({"type": "get_state"})).await;
    assert_eq!(state["contextUsage"], stats["contextUsage"]);
}

#[tokio::test]
async fn small_shapes_as_pi_and_omp_write_them() {
    let env = Env::new(vec![Turn::text("")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    // No output is no lines; the command says where it ran.
    let quiet = rho.data(json!({"type": "bash", "command": "true"})).await;
    assert_eq!((quiet["totalLines"].as_u64(), quiet["outputLines"].as_u64()), (Some(0), Some(0)));
    assert_eq!(quiet["workingDir"], json!(env.cwd.to_string_lossy()));
    // `fromByte: null` is there and is not a number.
    let null = rho.request(json!({"type": "get_subagent_messages", "subagentId": "x", "fromByte": null})).await;
    assert_eq!(null["error"], "fromByte must be a finite number");
    // A blank reply has no text.
    converse(&mut rho, &["say nothing"]).await;
    assert_eq!(rho.data(json!({"type": "get_last_assistant_text"})).await, json!({}));
}

/// omp's `login`: the page to open comes as an `open_url` UI request (GitHub's device code in
/// its instructions), other commands are answered meanwhile, and the answer comes once the login
/// is saved; an unknown provider is refused as omp refuses it.
#[tokio::test]
async fn login_runs_beside_the_other_commands_and_answers_when_done() {
    let env = Env::new(vec![]).await;
    let copilot_token = "tid=1;exp=9;proxy-ep=proxy.individual.githubcopilot.com";
    env.server.accept_github_device("gho_rpc");
    env.server.accept_oauth_refresh(
        "gho_rpc",
        rho_mock_llm::IssuedTokens { access_token: copilot_token.into(), refresh_token: None, expires_in: 1800 },
    );
    let url = env.server.url();
    let mut command = env.command(&["--mode", "rpc", "--model", "mock/mock-model"]);
    command.env("RHO_OAUTH_GITHUB_URL", &url);
    command.env("RHO_OAUTH_TOKEN_URL_GITHUB_COPILOT", format!("{url}/copilot_internal/v2/token"));
    command.env("RHO_COPILOT_BASE_URL", &url);
    let mut rho = Rho::start_command(command).await;

    assert_eq!(
        rho.request(json!({"type": "login", "providerId": "nope"})).await["error"],
        "Unknown OAuth provider: nope"
    );
    rho.send(json!({"id": "in", "type": "login", "providerId": "github-copilot"})).await;
    let opened = rho.until(|f| f["type"] == "extension_ui_request").await;
    let request = opened.last().unwrap();
    assert_eq!(request["method"], "open_url");
    assert_eq!(request["url"], "https://github.com/login/device");
    assert_eq!(request["instructions"], "Enter code: WDJB-MJHT");
    // The login waits for GitHub; a command sent now is answered first.
    rho.send(json!({"id": "state", "type": "get_state"})).await;
    let frames = rho.until(|f| f["id"] == "in").await;
    let state_at = frames.iter().position(|f| f["id"] == "state").expect("get_state answered during the login");
    assert!(state_at < frames.len() - 1);
    assert_eq!(
        frames.last().unwrap(),
        &json!({"id": "in", "type": "response", "command": "login", "success": true,
                "data": {"providerId": "github-copilot"}})
    );
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(env.agent_dir.join("auth.json")).unwrap()).unwrap();
    assert_eq!(auth["github-copilot"]["access"], copilot_token);
    let listed = rho.data(json!({"type": "get_login_providers"})).await;
    assert_eq!(listed["providers"][1]["authenticated"], json!(true), "{listed}");
}

/// omp's built-in slash commands sent as prompts: each answers in `command_output` frames and
/// `{agentInvoked: false}`, and none reaches the model.
#[tokio::test]
async fn builtin_slash_commands_run_instead_of_reaching_the_model() {
    let env = Env::new(vec![Turn::text("First answer."), Turn::text("## Goal\nSummarized")]).await;
    let mut rho = Rho::start(&env, &["--setting", "compaction.keepRecentTokens=1"]).await;
    let session_id = rho.data(json!({"type": "get_state"})).await["sessionId"].clone();

    // Text before the answer, the answer with `agentInvoked: false`.
    let said = |frames: Vec<Value>| -> (Vec<String>, Value) {
        let texts = frames
            .iter()
            .filter(|f| f["type"] == "command_output")
            .map(|f| f["text"].as_str().unwrap().to_owned())
            .collect();
        let answer = frames.last().unwrap().clone();
        (texts, answer)
    };
    for (prompt, expected) in [
        ("/model", "Current model: mock/mock-model".to_owned()),
        ("/models nope", "Unknown model: nope. List available models with get_available_models.".to_owned()),
        ("/model mock/mock-model", "Model set to mock/mock-model.".to_owned()),
        ("/rename Parser work", "Session renamed to Parser work.".to_owned()),
        ("/rename", "Usage: /rename <title>".to_owned()),
        (
            "/session",
            format!("Session: {}\nTitle: Parser work\nCWD: {}", session_id.as_str().unwrap(), env.cwd.display()),
        ),
        ("/session delete", "Usage: /session [info]".to_owned()),
    ] {
        rho.send(json!({"id": prompt, "type": "prompt", "message": prompt})).await;
        let frames = rho.until(|f| f["id"] == prompt).await;
        // omp's update frames after a change of model or title.
        let updates: Vec<&Value> = frames
            .iter()
            .filter(|f| ["session_info_update", "config_update"].contains(&f["type"].as_str().unwrap()))
            .collect();
        let title = if prompt == "/model mock/mock-model" { None } else { Some("Parser work") };
        let expected_updates = match prompt {
            "/model mock/mock-model" => vec![
                json!({"type": "session_info_update", "sessionId": session_id}),
                json!({"type": "config_update", "model": updates[1]["model"], "thinkingLevel": "off"}),
            ],
            "/rename Parser work" => {
                vec![json!({"type": "session_info_update", "title": title, "sessionId": session_id})]
            }
            _ => vec![],
        };
        assert_eq!(updates, expected_updates.iter().collect::<Vec<_>>(), "{prompt}");
        if prompt == "/model mock/mock-model" {
            assert_eq!(
                (&updates[1]["model"]["provider"], &updates[1]["model"]["id"]),
                (&json!("mock"), &json!("mock-model"))
            );
        }
        let (texts, answer) = said(frames);
        assert_eq!(texts, [expected], "{prompt}");
        assert_eq!(
            answer,
            json!({"id": prompt, "type": "response", "command": "prompt", "success": true,
                "data": {"agentInvoked": false, "disposition": "handled"}})
        );
        // omp's `prompt_result` says the prompt is over.
        assert_eq!(rho.next().await, json!({"type": "prompt_result", "id": prompt, "agentInvoked": false}));
    }
    rho.send(json!({"id": "t", "type": "prompt", "message": "/tools"})).await;
    let (texts, _) = said(rho.until(|f| f["id"] == "t").await);
    let lines: Vec<&str> = texts[0].lines().collect();
    assert!(lines.contains(&"* read") && lines.contains(&"* bash") && lines.contains(&"- grep"), "{lines:?}");
    assert_eq!(env.request_bodies().len(), 0, "nothing reached the model");

    // `/handoff` with nothing said, then `/compact` after a reply: in the background, output after
    // the answer.
    rho.send(json!({"id": "h", "type": "prompt", "message": "/handoff"})).await;
    let frames = rho.until(|f| f["type"] == "command_output").await;
    assert_eq!(frames.last().unwrap()["text"], "Handoff failed: Nothing to hand off (no messages yet)");
    converse(&mut rho, &["hello"]).await;
    rho.send(json!({"id": "c", "type": "prompt", "message": "/compact:keep the greeting"})).await;
    let frames = rho.until(|f| f["type"] == "command_output").await;
    let answer = frames.iter().position(|f| f["id"] == "c").unwrap();
    let output = frames.last().unwrap()["text"].as_str().unwrap();
    assert!(answer < frames.len() - 1, "the answer came first");
    assert!(output.starts_with("Compaction complete."), "{output}");
    assert_eq!(rho.next().await, json!({"type": "prompt_result", "id": "c", "agentInvoked": false}));
    let summary_requests = env.request_bodies()[1..].iter().map(Value::to_string).collect::<Vec<_>>();
    assert!(summary_requests.iter().any(|r| r.contains("keep the greeting")), "the focus reached the summary request");
}

/// omp's `tokens.reasoning`: the reasoning tokens providers report, counted inside `output` as
/// before and also on their own (the message's usage says them as pi 1.6's `reasoning`).
#[tokio::test]
async fn session_stats_count_the_reasoning_tokens_providers_report() {
    let usage = rho_mock_llm::Usage { input: 100, output: 40, reasoning: 12, ..Default::default() };
    let env =
        Env::with_api(vec![Turn::text("Thought it through.").with_usage(usage)], "openai-completions", true).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"type": "prompt", "message": "think"})).await;
    let end = rho.until_agent_end().await.pop().unwrap();
    assert_eq!(end["messages"][2]["usage"]["reasoning"], 12);
    let stats = rho.data(json!({"type": "get_session_stats"})).await;
    assert_eq!(stats["tokens"]["reasoning"], 12);
}

/// get_state's `systemPrompt` is one string (xcsh's clients read a string); a host that negotiated
/// omp's protocol 2 reads omp's list of sections, and gets the prompt as its one section.
#[tokio::test]
async fn the_system_prompt_is_a_list_for_a_host_of_protocol_2() {
    let env = Env::new(vec![]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let prompt = rho.data(json!({"type": "get_state"})).await["systemPrompt"].clone();
    assert!(prompt.as_str().unwrap().contains("Current working directory"), "{prompt}");
    rho.data(json!({"type": "negotiate_protocol", "protocolVersion": 2})).await;
    let sections = rho.data(json!({"type": "get_state"})).await["systemPrompt"].clone();
    let sections: Vec<&str> = sections.as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    // The prompt's own sections, which joined with blank lines are the prompt.
    assert_eq!(sections.join("\n\n"), prompt.as_str().unwrap());
    assert!(sections.len() >= 3 && sections[0].starts_with("You are rho"), "{sections:?}");
    assert!(sections.last().unwrap().starts_with("Current working directory"), "{sections:?}");
}

/// The seed protocol's hosts know no `system` message (xcsh's client refuses a role it does not
/// know): pi 1.6's declared prompt is recorded in the session file and kept off their wire.
#[tokio::test]
async fn seed_protocol_hosts_never_see_the_declared_prompt() {
    let env = Env::new(vec![Turn::text("One."), Turn::text("Two.")]).await;
    // xcsh's client starts rho with --no-title; omp's negotiates protocol 2.
    let mut xcsh = Rho::start(&env, &["--no-title"]).await;
    xcsh.send(json!({"type": "prompt", "message": "first"})).await;
    let frames = xcsh.until_agent_end().await;
    let roles: Vec<&str> = frames
        .iter()
        .filter(|f| f["type"] == "message_start" || f["type"] == "message_end")
        .filter_map(|f| f["message"]["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "user", "assistant", "assistant"]);
    let end_roles: Vec<&str> =
        frames.last().unwrap()["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(end_roles, ["user", "assistant"]);
    let messages = xcsh.data(json!({"type": "get_messages"})).await;
    assert_eq!(messages["messages"].as_array().unwrap().len(), 2);
    assert_eq!(xcsh.data(json!({"type": "get_state"})).await["messageCount"], 2);
    let file = xcsh.data(json!({"type": "get_state"})).await["sessionFile"].as_str().unwrap().to_owned();
    xcsh.close_stdin();
    assert!(xcsh.wait().await.success());
    let recorded: Vec<String> = read_jsonl(std::path::Path::new(&file))
        .iter()
        .filter_map(|l| l["message"]["role"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(recorded, ["system", "user", "assistant"], "the session file records it all the same");

    let mut omp = Rho::start(&env, &["--no-session"]).await;
    omp.data(json!({"type": "negotiate_protocol", "protocolVersion": 2})).await;
    omp.send(json!({"type": "prompt", "message": "second"})).await;
    let frames = omp.until_agent_end().await;
    assert!(!frames.iter().any(|f| f["message"]["role"] == "system"), "a declared prompt reached omp's host");
    let page = omp.data(json!({"type": "get_messages_page", "limit": 10})).await;
    assert_eq!(page["totalMessages"], 2);
}
