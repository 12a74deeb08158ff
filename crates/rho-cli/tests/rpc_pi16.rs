//! What pi 1.6 added to the protocol, driven through the real binary: the dispositions of
//! `prompt`, `steer` and `follow_up`, `agent_settled`, `clear_queue`,
//! `get_available_thinking_levels`, `get_entries`, `get_tree`, and `bash`'s streamed output and
//! `excludeFromContext`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Env, Rho, redact, types};
use rho_mock_llm::Turn;
use serde_json::{Value, json};

/// A reply slow enough to act during it (about 2 s).
fn slow(text: &str) -> Turn {
    Turn::text(text).with_chunk_size(1).with_chunk_delay_ms(100)
}

#[tokio::test]
async fn queued_input_is_answered_queued_and_clear_queue_hands_it_back() {
    let env = Env::new(vec![slow("one two three four five six seven"), Turn::text("Never asked for.")]).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"id": "p1", "type": "prompt", "message": "start"})).await;
    let started = rho.until(|f| f["id"] == "p1").await;
    assert_eq!(started.last().unwrap()["data"], json!({"disposition": "started"}));
    rho.until(|f| f["type"] == "message_update").await;

    let queued = json!({"disposition": "queued"});
    assert_eq!(rho.data(json!({"type": "steer", "message": "go left"})).await, queued);
    assert_eq!(rho.data(json!({"type": "follow_up", "message": "then summarize"})).await, queued);
    let prompt = json!({"type": "prompt", "message": "and test it", "streamingBehavior": "followUp"});
    assert_eq!(rho.data(prompt).await, queued);

    rho.send(json!({"id": "c", "type": "clear_queue"})).await;
    let frames = rho.until(|f| f["id"] == "c").await;
    assert_eq!(
        &frames[frames.len() - 2..],
        [
            json!({"type": "queue_update", "steering": [], "followUp": []}),
            json!({"id": "c", "type": "response", "command": "clear_queue", "success": true,
                   "data": {"steering": ["go left"], "followUp": ["then summarize", "and test it"]}}),
        ]
    );
    // Nothing queued reaches the model: the run ends with the one reply.
    let rest = rho.until(|f| f["type"] == "agent_settled").await;
    assert_eq!(rest.last().unwrap(), &json!({"type": "agent_settled", "aborted": false}));
    assert_eq!(env.request_bodies().len(), 1);
    let cleared = rho.data(json!({"type": "clear_queue"})).await;
    assert_eq!(cleared, json!({"steering": [], "followUp": []}));
}

#[tokio::test]
async fn agent_settled_follows_the_last_agent_end_of_a_retried_prompt() {
    let env = Env::new(vec![Turn::error(503, "overloaded"), Turn::text("Recovered.")]).await;
    let mut rho = Rho::start(&env, &["--no-session", "--setting", "retry.baseDelayMs=1"]).await;
    rho.send(json!({"id": "p", "type": "prompt", "message": "hi"})).await;
    let frames = rho.until(|f| f["type"] == "agent_settled").await;
    let kinds: Vec<String> = types(&frames)
        .into_iter()
        .filter(|t| {
            ["agent_start", "agent_end", "auto_retry_start", "auto_retry_end", "agent_settled"].contains(&t.as_str())
        })
        .collect();
    assert_eq!(
        kinds,
        ["agent_start", "agent_end", "auto_retry_start", "agent_start", "auto_retry_end", "agent_end", "agent_settled"]
    );
    let ends: Vec<(&Value, &Value)> =
        frames.iter().filter(|f| f["type"] == "agent_end").map(|f| (&f["willRetry"], &f["isTerminal"])).collect();
    assert_eq!(ends, [(&json!(true), &json!(false)), (&json!(false), &json!(true))]);
    assert_eq!(frames.last().unwrap(), &json!({"type": "agent_settled", "aborted": false}));
}

/// A host that acts on `agent_end` at once (pi 0.73's and omp's clients do): an `abort` then
/// does not make the finished prompt aborted, and the next prompt is answered after the previous
/// one's `agent_settled`, never before it. Repeated, as the host's commands race the closing.
#[tokio::test]
async fn commands_sent_on_agent_end_come_after_its_agent_settled() {
    const PROMPTS: usize = 20;
    let env = Env::new((0..=PROMPTS).map(|_| Turn::text("Done.")).collect()).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.send(json!({"id": "p0", "type": "prompt", "message": "go"})).await;
    rho.until(|f| f["type"] == "agent_end").await;
    // Whether the last frame read is the previous prompt's agent_end (the race to test).
    let mut at_agent_end = true;
    for i in 1..=PROMPTS {
        let (abort, prompt) = (format!("a{i}"), format!("p{i}"));
        rho.send(json!({"id": abort, "type": "abort"})).await;
        rho.send(json!({"id": prompt, "type": "prompt", "message": "go"})).await;
        // Both answers, in whichever order they come.
        let mut frames = rho.until(|f| f["id"] == abort || f["id"] == prompt).await;
        let other = if frames.last().unwrap()["id"] == abort { prompt.clone() } else { abort.clone() };
        frames.extend(rho.until(|f| f["id"] == other).await);
        if at_agent_end {
            let at = |id: &str| frames.iter().position(|f| f["id"] == id).unwrap();
            let settled = frames.iter().position(|f| f["type"] == "agent_settled").expect("agent_settled");
            assert!(settled < at(&abort) && settled < at(&prompt), "agent_settled first: {frames:?}");
        }
        let settles: Vec<&Value> = frames.iter().filter(|f| f["type"] == "agent_settled").collect();
        assert!(settles.iter().all(|f| f["aborted"] == false), "prompt {i}: {frames:?}");
        // A late answer to the abort may come after this prompt's run: then the next prompt does
        // not race its agent_end.
        at_agent_end = !frames.iter().any(|f| f["type"] == "agent_end");
        if at_agent_end {
            rho.until(|f| f["type"] == "agent_end").await;
        }
    }
}

#[tokio::test]
async fn thinking_levels_are_the_models() {
    let env = Env::with_api(vec![], "anthropic-messages", true).await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let levels = rho.data(json!({"type": "get_available_thinking_levels"})).await;
    assert_eq!(levels, json!({"levels": ["off", "minimal", "low", "medium", "high"]}));
    let before = rho.data(json!({"type": "get_state"})).await["thinkingLevel"].clone();
    rho.data(json!({"type": "set_model", "provider": "mock", "modelId": "mock-small"})).await;
    let levels = rho.data(json!({"type": "get_available_thinking_levels"})).await;
    assert_eq!(levels, json!({"levels": ["off"]}));
    // Back to the reasoning model: pi 1.6 keeps the session's level ("off" on the small model)
    // when no default level is set, where pi 0.73 went back to the default.
    rho.data(json!({"type": "set_model", "provider": "mock", "modelId": "mock-model"})).await;
    let after = rho.data(json!({"type": "get_state"})).await["thinkingLevel"].clone();
    assert_eq!((before, after), (json!("medium"), json!("off")));
}

#[tokio::test]
async fn entries_and_the_tree_read_the_session_file() {
    let env = Env::new(vec![Turn::text("Hello.")]).await;
    let mut rho = Rho::start(&env, &[]).await;
    rho.send(json!({"type": "prompt", "message": "hi"})).await;
    rho.until(|f| f["type"] == "agent_settled").await;

    let all = rho.data(json!({"type": "get_entries"})).await;
    let entries = all["entries"].as_array().unwrap();
    let kinds: Vec<&str> = entries.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["model_change", "thinking_level_change", "message", "message", "message"]);
    assert_eq!(entries[2]["message"]["role"], "system");
    assert_eq!(all["leafId"], entries[4]["id"]);
    // The entries are the file's lines, header left out.
    let file = std::fs::read_to_string(&env.session_files()[0]).unwrap();
    let lines: Vec<Value> = file.lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(entries, &lines);

    let after = rho.data(json!({"type": "get_entries", "since": entries[1]["id"]})).await;
    assert_eq!(after["entries"], json!(entries[2..]));
    let none = rho.data(json!({"type": "get_entries", "since": entries[4]["id"]})).await;
    assert_eq!(none["entries"], json!([]));
    let bogus = rho.request(json!({"type": "get_entries", "since": "nope"})).await;
    assert_eq!((&bogus["success"], &bogus["error"]), (&json!(false), &json!("Entry not found: nope")));

    let tree = rho.data(json!({"type": "get_tree"})).await;
    insta::assert_json_snapshot!("get_tree", redact(&tree));
    // One chain: each entry the only child of the one before.
    let mut node = &tree["tree"][0];
    for entry in entries {
        assert_eq!(&node["entry"], entry);
        node = &node["children"][0];
    }
}

#[tokio::test]
async fn bash_streams_its_output_under_its_id_and_can_stay_out_of_context() {
    let env = Env::new(vec![Turn::text("Seen.")]).await;
    let mut rho = Rho::start(&env, &[]).await;
    rho.send(json!({"id": "b1", "type": "bash", "command": "echo one; sleep 0.2; echo two"})).await;
    let frames = rho.until(|f| f["id"] == "b1" && f["type"] == "response").await;
    let (updates, response) = frames.split_at(frames.len() - 1);
    assert!(updates.iter().all(|f| f["type"] == "bash_execution_update" && f["id"] == "b1"), "{updates:?}");
    let streamed: String = updates.iter().map(|f| f["delta"].as_str().unwrap()).collect();
    assert_eq!(streamed, "one\ntwo\n");
    assert_eq!(response[0]["data"]["output"], "one\ntwo\n");

    let secret = json!({"id": "b2", "type": "bash", "command": "echo hidden-output", "excludeFromContext": true});
    let answer = rho.request(secret).await;
    assert_eq!(answer["data"]["output"], "hidden-output\n");
    rho.send(json!({"type": "prompt", "message": "what ran?"})).await;
    rho.until(|f| f["type"] == "agent_settled").await;
    let sent = env.request_bodies()[0]["messages"].to_string();
    assert!(sent.contains("echo one; sleep 0.2; echo two"), "{sent}");
    assert!(!sent.contains("hidden-output"), "{sent}");
    // Kept in the session, marked.
    let file = std::fs::read_to_string(&env.session_files()[0]).unwrap();
    let hidden = file.lines().find(|l| l.contains("hidden-output")).unwrap();
    assert_eq!(serde_json::from_str::<Value>(hidden).unwrap()["message"]["excludeFromContext"], true);
}

#[tokio::test]
async fn a_long_session_is_one_deep_tree_and_comes_whole() {
    let env = Env::new(vec![]).await;
    let path = env.dir.path().join("long.jsonl");
    let mut text = json!({"type": "session", "version": 3, "id": "long", "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": env.cwd})
    .to_string();
    let depth = 20_000;
    for i in 0..depth {
        let parent = if i == 0 { Value::Null } else { json!(format!("e{}", i - 1)) };
        let entry = json!({"type": "custom", "id": format!("e{i}"), "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z", "customType": "note", "data": {"n": i}});
        text.push('\n');
        text.push_str(&entry.to_string());
    }
    text.push('\n');
    std::fs::write(&path, text).unwrap();
    let mut rho = Rho::start(&env, &["--session", path.to_str().unwrap()]).await;
    rho.send(json!({"id": "t", "type": "get_tree"})).await;
    let line = loop {
        let line = rho.next_line().await;
        if line.contains(r#""id":"t""#) {
            break line;
        }
    };
    // Walk the nesting by hand: a parser with a depth limit could not read it.
    assert!(line.contains(r#""success":true"#), "{:.300}", line);
    assert_eq!(line.matches(r#""customType":"note""#).count(), depth);
    assert_eq!(line.matches(r#""children":["#).count(), depth);
    // One leaf, the last entry, at the bottom of the chain.
    assert_eq!(line.matches(r#""children":[]"#).count(), 1);
    let leaf = line.find(r#""children":[]"#).unwrap();
    assert!(line[..leaf].rfind(r#""n":"#).is_some_and(|at| line[at..].starts_with(r#""n":19999"#)));
    assert_eq!(rho.data(json!({"type": "get_state"})).await["sessionId"], "long");
}

#[tokio::test]
async fn a_compaction_whose_summary_fails_once_is_retried_and_reports_its_cost() {
    let env = Env::new(vec![
        Turn::text("First answer."),
        Turn::error(503, "overloaded"),
        Turn::text("The summary.").with_usage(rho_mock_llm::Usage { input: 400, output: 30, ..Default::default() }),
    ])
    .await;
    let args = ["--no-session", "--setting", "retry.baseDelayMs=1", "--setting", "compaction.keepRecentTokens=1"];
    let mut rho = Rho::start(&env, &args).await;
    rho.send(json!({"type": "prompt", "message": "hi"})).await;
    rho.until(|f| f["type"] == "agent_settled").await;
    rho.send(json!({"id": "c", "type": "compact"})).await;
    let frames = rho.until(|f| f["id"] == "c").await;
    let kinds: Vec<&str> = frames.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "compaction_start",
            "summarization_retry_scheduled",
            "summarization_retry_attempt_start",
            "summarization_retry_finished",
            "compaction_end",
            "response"
        ]
    );
    assert_eq!(
        frames[1],
        json!({"type": "summarization_retry_scheduled", "attempt": 1, "maxAttempts": 3, "delayMs": 1,
            "errorMessage": frames[1]["errorMessage"]})
    );
    assert!(frames[1]["errorMessage"].as_str().unwrap().starts_with("503"), "{}", frames[1]);
    assert_eq!(
        frames[2],
        json!({"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "manual"})
    );
    let result = &frames[5]["data"];
    assert_eq!(result, &frames[4]["result"]);
    let keys: Vec<&str> = result.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["summary", "firstKeptEntryId", "tokensBefore", "estimatedTokensAfter", "usage", "details"]);
    assert_eq!((&result["usage"]["input"], &result["usage"]["output"]), (&json!(400), &json!(30)));
    assert!(result["estimatedTokensAfter"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn max_is_a_thinking_level_where_the_model_maps_it() {
    let env = Env::with_api(vec![Turn::text("Thought hard.")], "openai-completions", true).await;
    let path = env.agent_dir.join("models.json");
    let mut models: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    models["providers"]["mock"]["models"][0]["thinkingLevelMap"] = json!({"minimal": null, "max": "max"});
    std::fs::write(&path, models.to_string()).unwrap();
    let mut rho = Rho::start(&env, &["--model", "mock/mock-model:max"]).await;
    assert_eq!(rho.data(json!({"type": "get_state"})).await["thinkingLevel"], "max");
    let levels = rho.data(json!({"type": "get_available_thinking_levels"})).await;
    assert_eq!(levels, json!({"levels": ["off", "low", "medium", "high", "max"]}));
    rho.send(json!({"type": "prompt", "message": "think"})).await;
    rho.until(|f| f["type"] == "agent_settled").await;
    assert_eq!(env.request_bodies()[0]["reasoning_effort"], "max");
    // The level is the session's: recorded, and cycled past like any other.
    let file = std::fs::read_to_string(&env.session_files()[0]).unwrap();
    assert!(file.contains(r#""thinkingLevel":"max""#), "{file}");
    assert_eq!(rho.data(json!({"type": "cycle_thinking_level"})).await, json!({"level": "off"}));
    rho.data(json!({"type": "set_thinking_level", "level": "max"})).await;
    assert_eq!(rho.data(json!({"type": "get_state"})).await["thinkingLevel"], "max");
    // A model without it takes the nearest level it has.
    rho.data(json!({"type": "set_model", "provider": "mock", "modelId": "mock-small"})).await;
    assert_eq!(rho.data(json!({"type": "get_state"})).await["thinkingLevel"], "off");
}

/// pi 1.6's tool selection through the binary: `defaultTools` in settings.json, `--tools` with
/// `+name`/`-name` on top of it, an unknown name warned about and left out, and a list that mixes
/// plain names with `+`/`-` entries refused at start with a clear error.
#[tokio::test]
async fn default_tools_and_tools_flags_choose_the_tools() {
    let env = Env::new(vec![]).await;
    std::fs::write(env.agent_dir.join("settings.json"), r#"{"defaultTools": ["+grep", "-write"]}"#).unwrap();
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+ls,+nope,-bash"]).await;
    let state = rho.data(json!({"type": "get_state"})).await;
    let tools: Vec<&str> = state["dumpTools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["read", "edit", "grep", "ls"]);
    // The warning, on stderr of a run that goes on (it ends at stdin's end, which comes at once).
    let args = ["--mode", "rpc", "--no-session", "--model", "mock/mock-model", "--tools", "+nope"];
    let warned = env.command(&args).output().await.unwrap();
    assert_eq!(warned.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&warned.stderr);
    assert!(stderr.contains("Warning: Unknown tool \"nope\". Valid tools: read, bash, edit, write, grep"), "{stderr}");

    let refused = env.command(&["--mode", "rpc", "--no-session", "--tools", "read,+grep"]).output().await.unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "Error: --tools: tool names cannot be mixed with +name or -name entries\n"
    );
}

/// A command that exits non-zero is an error result that keeps its structured content and
/// details, as pi 1.6 returns it; the model sees the output and the exit status.
#[tokio::test]
async fn a_failing_command_keeps_its_structured_content() {
    let env =
        Env::new(vec![Turn::tool_call("bash", json!({"command": "echo broken; exit 3"})), Turn::text("It failed.")])
            .await;
    let mut rho = Rho::start(&env, &[]).await;
    rho.send(json!({"type": "prompt", "message": "run it"})).await;
    let frames = rho.until(|f| f["type"] == "agent_settled").await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["isError"], true, "{end}");
    let structured = &end["result"]["structuredContent"];
    assert_eq!((&structured["output"], &structured["exit_code"]), (&json!("broken\n"), &json!(3)), "{end}");
    assert_eq!(end["result"]["content"][0]["text"], "broken\n\n\nCommand exited with code 3");
    // `details` is there as for every result (the spec's `{}` when the tool has none).
    assert!(end["result"]["details"].is_object(), "{end}");
    let message = frames.iter().find(|f| f["type"] == "message_end" && f["message"]["role"] == "toolResult").unwrap();
    assert_eq!((&message["message"]["isError"], message["message"]["details"].is_object()), (&json!(true), true));
    let sent = &env.request_bodies()[1]["messages"];
    let result = sent.as_array().unwrap().iter().find(|m| m["role"] == "user" && m.to_string().contains("tool_result"));
    let result = result.map(ToString::to_string).unwrap_or_default();
    assert!(result.contains("Command exited with code 3") && result.contains("\"is_error\":true"), "{sent}");
}

/// pi 1.6's variables: the model's commands learn the session (read as each starts, so a model
/// or level change shows in the next), every command rho starts carries the process markers,
/// and the user's own `bash` gets the markers only.
#[tokio::test]
async fn the_model_s_commands_see_the_session_and_every_command_the_markers() {
    let script = "echo id=${PI_SESSION_ID:+set} file=${PI_SESSION_FILE:-none} \
                  model=$PI_PROVIDER/$PI_MODEL level=$PI_REASONING_LEVEL agent=$AI_AGENT pi=$PI_CODING_AGENT";
    let env = Env::new(vec![
        Turn::tool_call("bash", json!({"command": script})),
        Turn::text("one"),
        Turn::tool_call("bash", json!({"command": script})),
        Turn::text("two"),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    let results = |frames: &[Value]| -> Vec<String> {
        frames
            .iter()
            .filter(|f| f["type"] == "tool_execution_end")
            .map(|f| f["result"]["content"][0]["text"].as_str().unwrap().to_owned())
            .collect()
    };
    rho.send(json!({"type": "prompt", "message": "who am I"})).await;
    let first = results(&rho.until_agent_end().await);
    assert_eq!(first, ["id=set file=none model=mock/mock-model level=off agent=rho pi=true\n"]);
    rho.data(json!({"type": "set_model", "provider": "mock", "modelId": "mock-small"})).await;
    rho.send(json!({"type": "prompt", "message": "and now"})).await;
    let second = results(&rho.until_agent_end().await);
    assert_eq!(second, ["id=set file=none model=mock/mock-small level=off agent=rho pi=true\n"]);
    let user = rho.data(json!({"type": "bash", "command": script})).await;
    assert_eq!(user["output"], "id= file=none model=/ level= agent=rho pi=true\n");
}
