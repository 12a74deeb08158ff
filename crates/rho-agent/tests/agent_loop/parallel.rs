//! One assistant message with several tool calls: they run concurrently, yet their results are
//! reported in the order of the calls (docs/decisions.md D6); calls that write the same file run
//! one after another, so no edit is lost however the path is spelled.

use pretty_assertions::assert_eq;
use rho_agent::AgentEvent;
use rho_types::AgentMessage;
use serde_json::json;

use crate::common::*;

/// Three bash calls that can only finish in the order 3, 2, 1: the first waits for the second,
/// the second for the third. Run one at a time they would never finish (each has a timeout so
/// the test fails instead of hanging).
#[tokio::test]
async fn results_are_reported_in_call_order_whatever_order_tools_finish_in() {
    let first = format!("{}; echo 1 >> order.log; echo one", wait_for_file("two.done"));
    let second = format!("{}; echo 2 >> order.log; touch two.done; echo two", wait_for_file("three.done"));
    let third = "echo 3 >> order.log; touch three.done; echo three".to_owned();
    let calls: Vec<_> = [first, second, third]
        .iter()
        .map(|c| json!({"name": "bash", "arguments": {"command": c, "timeout": 10}}))
        .collect();
    let h = Harness::start(json!([{"toolCalls": calls}, {"text": "All three ran."}])).await;
    h.prompt("Run the three commands.").await;

    assert_eq!(h.read("order.log"), "3\n2\n1\n", "the tools finished in reverse order");
    let events = h.events();
    let call_ids = called_tool_ids(&events);
    assert_eq!(call_ids.len(), 3);
    assert_eq!(ended_tool_ids(&events), call_ids);
    let outcomes = tool_outcomes(&events);
    let texts: Vec<&str> = outcomes.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(texts, ["one\n", "two\n", "three\n"]);
    assert!(outcomes.iter().all(|(_, is_error)| !is_error));

    // Every start comes before the first end, in call order.
    let names = type_names(&events);
    let starts: Vec<usize> = positions(&names, "tool_execution_start");
    let first_end = names.iter().position(|t| *t == "tool_execution_end").unwrap();
    assert!(starts.iter().all(|s| *s < first_end));
    let started: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(started, call_ids);

    // Each end is followed at once by its result message; turn_end lists them in call order.
    for end in positions(&names, "tool_execution_end") {
        assert_eq!(&names[end + 1..end + 3], ["message_start", "message_end"]);
    }
    let turn_end = events.iter().find_map(|e| match e {
        AgentEvent::TurnEnd { tool_results, .. } if !tool_results.is_empty() => Some(tool_results.clone()),
        _ => None,
    });
    let ids: Vec<String> = turn_end.unwrap().into_iter().map(|r| r.tool_call_id).collect();
    assert_eq!(ids, call_ids);

    // The conversation and the next request hold them in call order too.
    let results: Vec<String> = h
        .agent
        .messages()
        .iter()
        .filter_map(|m| match m {
            AgentMessage::ToolResult(r) => Some(r.tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(results, call_ids);
    let sent = &h.requests()[1].body["messages"][2]["content"];
    let sent_ids: Vec<&str> = (0..3).map(|i| sent[i]["tool_use_id"].as_str().unwrap()).collect();
    assert_eq!(sent_ids, call_ids);
}

fn positions(names: &[&str], name: &str) -> Vec<usize> {
    names.iter().enumerate().filter(|(_, t)| **t == name).map(|(i, _)| i).collect()
}

/// Four edits of one file in one message, each naming the file differently: all four land.
#[tokio::test]
async fn edits_of_one_file_in_one_message_all_apply() {
    let h = Harness::start(json!([])).await;
    std::fs::create_dir(h.path("sub")).unwrap();
    let lines = ["alpha", "beta", "gamma", "delta"];
    h.write("notes.txt", &lines.map(|l| format!("{l}\n")).concat());
    let calls: Vec<_> = ["relative", "dot", "absolute", "parent"]
        .iter()
        .zip(lines)
        .map(|(how, line)| {
            json!({"name": "edit", "arguments": {
                "path": spelled(h.dir.path(), how, "notes.txt"),
                "oldText": line,
                "newText": line.to_uppercase(),
            }})
        })
        .collect();
    h.server.push_turns(vec![
        serde_json::from_value(json!({"toolCalls": calls})).unwrap(),
        serde_json::from_value(json!({"text": "Edited."})).unwrap(),
    ]);
    h.prompt("Upper-case every line.").await;

    let outcomes = tool_outcomes(&h.events());
    assert_eq!(outcomes.len(), 4);
    for (text, is_error) in &outcomes {
        assert!(!is_error, "{text}");
        assert!(text.starts_with("Successfully replaced 1 block(s) in "), "{text}");
    }
    assert_eq!(h.read("notes.txt"), "ALPHA\nBETA\nGAMMA\nDELTA\n");
}

/// A write and edits of one file through a symlink and through its real name: they are one
/// file, so they run in call order and nothing is lost.
#[tokio::test]
async fn writes_through_a_symlink_are_ordered_with_the_real_file() {
    let h = Harness::start(json!([])).await;
    h.write("real.txt", "draft\n");
    std::os::unix::fs::symlink(h.path("real.txt"), h.path("link.txt")).unwrap();
    let calls = json!([
        {"name": "write", "arguments": {"path": "link.txt", "content": "one\ntwo\nthree\n"}},
        {"name": "edit", "arguments": {"path": "real.txt", "oldText": "one", "newText": "ONE"}},
        {"name": "edit", "arguments": {"path": "link.txt", "oldText": "two", "newText": "TWO"}},
        {"name": "edit", "arguments": {"path": "real.txt", "oldText": "three", "newText": "THREE"}},
    ]);
    h.server.push_turns(vec![
        serde_json::from_value(json!({"toolCalls": calls})).unwrap(),
        serde_json::from_value(json!({"text": "Done."})).unwrap(),
    ]);
    h.prompt("Rewrite it.").await;

    let outcomes = tool_outcomes(&h.events());
    assert!(outcomes.iter().all(|(_, is_error)| !is_error), "{outcomes:?}");
    assert_eq!(h.read("real.txt"), "ONE\nTWO\nTHREE\n");
    assert!(h.path("link.txt").symlink_metadata().unwrap().file_type().is_symlink());
}
