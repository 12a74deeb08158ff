//! The event sequence of a whole run: a prompt, a reply that calls a tool, the tool's result, and
//! the final answer in a second turn (docs/protocol.md, "Event order"), snapshotted; and the same
//! run over every wire API.

use insta::assert_json_snapshot;
use pretty_assertions::assert_eq;
use rho_types::AgentMessage;
use serde_json::{Value, json};

use crate::common::*;

fn two_turn_script() -> Value {
    json!([
        {"text": "Let me read it.", "toolCalls": [{"name": "read", "arguments": {"path": "hello.txt"}}], "chunkSize": 8},
        {"text": "It says hello.", "chunkSize": 8}
    ])
}

#[tokio::test]
async fn a_two_turn_tool_run_emits_the_protocol_sequence() {
    let h = Harness::start(two_turn_script()).await;
    h.write("hello.txt", "hello\n");
    h.prompt("What does hello.txt say?").await;

    let events = h.events();
    let summary: Vec<Value> = events.iter().map(summarize).collect();
    assert_json_snapshot!("two_turn_tool_run", summary, {
        "[].toolCallId" => "[id]",
        "[].message.toolCallId" => "[id]",
        "[].message.content[].id" => "[id]",
        "[].toolResults[][0]" => "[id]",
    });

    // The ids the snapshot hides pair up: the call, its execution and its result.
    let call_ids = called_tool_ids(&events);
    assert_eq!(call_ids.len(), 1);
    assert_eq!(ended_tool_ids(&events), call_ids);

    // agent_end carries the messages of the run in full.
    let Some(rho_agent::AgentEvent::AgentEnd { messages, .. }) = events.last() else { panic!("agent_end last") };
    assert_json_snapshot!("two_turn_agent_end_messages", messages, {
        "[].timestamp" => "[timestamp]",
        "[].duration" => "[duration]",
        "[].ttft" => "[ttft]",
        "[].durationMs" => "[durationMs]",
        "[].responseId" => "[responseId]",
        "[].content[].id" => "[id]",
        "[].toolCallId" => "[id]",
    });
    assert_eq!(h.agent.messages(), *messages);

    // The second request carried the call and its result in Anthropic's form.
    let requests = h.requests();
    assert_eq!(requests.len(), 2);
    let sent = &requests[1].body["messages"];
    assert_eq!(sent[1]["content"][1]["type"], "tool_use");
    assert_eq!(sent[2]["content"][0]["type"], "tool_result");
    assert_eq!(sent[2]["content"][0]["tool_use_id"], json!(call_ids[0]));
    assert_eq!(sent[2]["content"][0]["content"], "hello\n");
}

/// The same run over each wire API ends the same way: the tool ran, its result reached the
/// model in the second request, and the answer closed the run.
#[tokio::test]
async fn a_two_turn_tool_run_works_over_every_api() {
    for wire in WIRES {
        let h = Harness::start_with(wire, two_turn_script()).await;
        h.write("hello.txt", "hello from the file\n");
        h.prompt("What does hello.txt say?").await;
        let events = h.events();

        let turns = type_names(&events).iter().filter(|t| **t == "turn_start").count();
        assert_eq!(turns, 2, "{}", wire.api);
        assert_eq!(tool_outcomes(&events), [("hello from the file\n".to_owned(), false)], "{}", wire.api);
        assert_eq!(ended_tool_ids(&events), called_tool_ids(&events), "{}", wire.api);
        let requests = h.requests();
        assert_eq!(requests.len(), 2, "{}", wire.api);
        assert!(body_mentions(&requests[1], "hello from the file"), "{}: {}", wire.api, requests[1].body);

        let messages = h.agent.messages();
        let roles: Vec<&str> = messages.iter().map(AgentMessage::role).collect();
        assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"], "{}", wire.api);
        let AgentMessage::Assistant(last) = &messages[3] else { unreachable!() };
        assert_eq!(last.text(), "It says hello.", "{}", wire.api);
        assert_calls_paired(&messages);
    }
}
