//! The fixture server's tools through rho's `Tool` trait, over a real stdio child: listing,
//! names and schemas, each kind of result, list_changed, prompts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use pretty_assertions::assert_eq;
use rho_mcp::{PromptRole, ServerState};
use rho_types::types::UserContent;
use serde_json::json;
use support::*;

#[tokio::test]
async fn tools_are_listed_with_names_descriptions_and_schemas() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("fx", &dir, &[])], options(&dir)).await;
    let status = manager.status();
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].state, ServerState::Ready);
    assert_eq!(status[0].tool_count, FIXTURE_TOOLS);
    assert_eq!(status[0].prompt_count, 1);

    let names: Vec<String> = manager.tools().iter().map(|t| t.name().to_owned()).collect();
    assert!(names.contains(&"mcp__fx__echo".to_owned()), "{names:?}");
    // Characters model APIs refuse become `_`.
    assert!(names.contains(&"mcp__fx__no_description_odd_name".to_owned()), "{names:?}");
    for name in &names {
        assert!(name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    }

    let echo = tool(&manager, "mcp__fx__echo");
    assert_eq!(echo.description(), "Echoes its text.");
    assert_eq!(echo.label(), "fx: echo");
    assert_eq!(
        echo.parameters(),
        &json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    );
    // A schema without `type` gets an object type; a tool without description gets its name.
    let odd = tool(&manager, "mcp__fx__no_description_odd_name");
    assert_eq!(odd.parameters(), &json!({"properties": {}, "type": "object"}));
    assert_eq!(odd.description(), "no.description/odd name");
    let result = call(odd.as_ref(), json!({})).await.unwrap();
    assert_eq!(result.text_content(), "no.description/odd name");
    manager.shutdown().await;
}

#[tokio::test]
async fn text_and_structured_content() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("fx", &dir, &[])], options(&dir)).await;

    let echo = call(tool(&manager, "mcp__fx__echo").as_ref(), json!({"text": "hi there"})).await.unwrap();
    assert_eq!(echo.content, vec![UserContent::text("hi there")]);
    assert_eq!(echo.details, Some(json!({"server": "fx", "tool": "echo"})));

    let add = call(tool(&manager, "mcp__fx__add").as_ref(), json!({"a": 2, "b": 3.5})).await.unwrap();
    assert_eq!(add.text_content(), "5.5");
    assert_eq!(add.details, Some(json!({"server": "fx", "tool": "add", "structuredContent": {"sum": 5.5}})));

    // No text block: the structured content is shown to the model as JSON too.
    let only = call(tool(&manager, "mcp__fx__structured_only").as_ref(), json!({})).await.unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&only.text_content()).unwrap(),
        json!({"ok": true, "items": [1, 2]})
    );
    assert_eq!(only.details.unwrap()["structuredContent"], json!({"ok": true, "items": [1, 2]}));

    let empty = call(tool(&manager, "mcp__fx__empty").as_ref(), json!({})).await.unwrap();
    assert_eq!(empty.text_content(), "(no output)");
    manager.shutdown().await;
}

#[tokio::test]
async fn is_error_becomes_a_tool_error() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("fx", &dir, &[])], options(&dir)).await;
    let err = call(tool(&manager, "mcp__fx__fail").as_ref(), json!({"message": "disk is full"})).await.unwrap_err();
    assert_eq!(err.0, "disk is full");
    manager.shutdown().await;
}

#[tokio::test]
async fn images_and_resources() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("fx", &dir, &[])], options(&dir)).await;
    let image = call(tool(&manager, "mcp__fx__image").as_ref(), json!({})).await.unwrap();
    assert_eq!(image.content.len(), 2);
    assert_eq!(image.content[0], UserContent::text("a pixel"));
    match &image.content[1] {
        UserContent::Image(img) => {
            assert_eq!(img.mime_type, "image/png");
            assert!(img.data.starts_with("iVBORw0KGgo"));
        }
        other => panic!("expected an image, got {other:?}"),
    }

    let resources = call(tool(&manager, "mcp__fx__resources").as_ref(), json!({})).await.unwrap();
    assert_eq!(
        resources.content,
        vec![
            UserContent::text("[Resource: file:///notes.txt]\nfile contents"),
            UserContent::text("[Resource: file:///data.bin (application/octet-stream, 6 bytes, binary, not shown)]"),
        ]
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn list_changed_refreshes_that_servers_tools() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("fx", &dir, &[])], options(&dir)).await;
    let mut changes = manager.subscribe();
    changes.borrow_and_update();
    assert!(!manager.tools().iter().any(|t| t.name() == "mcp__fx__late"));

    let added = call(tool(&manager, "mcp__fx__add_tool").as_ref(), json!({})).await.unwrap();
    assert_eq!(added.text_content(), "added");
    eventually("the late tool", || manager.tools().iter().any(|t| t.name() == "mcp__fx__late")).await;
    assert!(changes.has_changed().unwrap(), "a change was signalled");
    assert_eq!(manager.status()[0].tool_count, FIXTURE_TOOLS + 1);
    let late = call(tool(&manager, "mcp__fx__late").as_ref(), json!({})).await.unwrap();
    assert_eq!(late.text_content(), "late");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_flood_of_list_changed_costs_a_few_lists() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("fx", &dir, &[])], options(&dir)).await;
    let lists = || std::fs::read_to_string(dir.join("lists")).unwrap_or_default().lines().count();
    let at_start = lists();
    let sent = call(tool(&manager, "mcp__fx__notify_many").as_ref(), json!({"count": 20000})).await.unwrap();
    assert_eq!(sent.text_content(), "notified");
    // The notifications arrive before the answer; the re-lists they cause settle soon after.
    let mut last = lists();
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let now = lists();
        if now == last {
            break;
        }
        last = now;
    }
    let relisted = last - at_start;
    // One re-list per pause of the burst, at least one each 500 ms while it goes on: a few
    // (4 here on a debug build), never one per notification.
    assert!((1..=50).contains(&relisted), "20,000 notifications made {relisted} tools/list requests");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_large_result_is_capped_and_saved_whole() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("fx", &dir, &[])], options(&dir)).await;
    // About 10 MB: 2000 lines reach the model, the whole text a file it can read.
    let result = call(tool(&manager, "mcp__fx__big").as_ref(), json!({"lines": 900_000})).await.unwrap();
    let text = result.text_content();
    assert!(text.len() < 60_000, "{} bytes went to the model", text.len());
    let details = result.details.unwrap();
    let path = details["fullOutputPath"].as_str().unwrap().to_owned();
    assert!(text.ends_with(&format!(
        "[Showing lines 1-2000 of 900000. Full output: {path}; read it with offset=2001 to continue.]"
    )));
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 900_000);
    std::fs::remove_file(&path).unwrap();
    manager.shutdown().await;
}

/// A result over rmcp's 16 MiB line bound (which rmcp would drop without a word, leaving the call
/// to wait out its timeout) fails the call at once, says why, and the server is started again
/// for the next call.
#[tokio::test]
async fn a_result_over_16_mib_fails_the_call_at_once() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("fx", &dir, &[])], options(&dir)).await;
    let big = tool(&manager, "mcp__fx__big");
    // About 21 MB of JSON.
    let err = call(big.as_ref(), json!({"lines": 1_800_000})).await.unwrap_err();
    assert_eq!(
        err.0,
        "MCP server \"fx\" sent a message over 16 MiB (a result too large to take); its connection was closed, and it is restarted on next use"
    );
    let echo = call(tool(&manager, "mcp__fx__echo").as_ref(), json!({"text": "again"})).await.unwrap();
    assert_eq!(echo.text_content(), "again");
    manager.shutdown().await;
}

#[tokio::test]
async fn prompts_are_listed_and_fetched() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("fx", &dir, &[])], options(&dir)).await;
    let prompts = manager.prompts();
    assert_eq!(prompts.len(), 1);
    let greet = &prompts[0];
    assert_eq!(greet.command, "mcp__fx__greet");
    assert_eq!(greet.description.as_deref(), Some("Greets someone."));
    assert_eq!(greet.arguments.len(), 1);
    assert!(greet.arguments[0].required);

    let arguments = greet.bind_arguments("Ada").unwrap();
    let messages = manager.get_prompt("mcp__fx__greet", arguments, &Default::default()).await.unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].role, PromptRole::User);
    assert_eq!(messages[0].content, vec![UserContent::text("Say hello to Ada.")]);
    assert_eq!(messages[1].role, PromptRole::Assistant);
    assert!(manager.get_prompt("mcp__fx__nope", Default::default(), &Default::default()).await.is_err());
    manager.shutdown().await;
}

#[tokio::test]
async fn servers_whose_names_sanitize_alike_get_distinct_tool_names() {
    let (_guard, dir) = temp();
    let manager = settled(vec![fixture("a.b", &dir, &[]), fixture("a_b", &dir, &[])], options(&dir)).await;
    let echoes: Vec<String> = manager
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .filter(|n| n.ends_with("echo") || n.ends_with("echo_2"))
        .collect();
    assert_eq!(echoes, vec!["mcp__a_b__echo".to_owned(), "mcp__a_b__echo_2".to_owned()]);
    // Each still reaches its own server.
    for name in echoes {
        assert_eq!(call(tool(&manager, &name).as_ref(), json!({"text": "x"})).await.unwrap().text_content(), "x");
    }
    manager.shutdown().await;
}
