use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::model::{ThinkingLevel, api};
use crate::providers::test_fixtures::*;

fn codex() -> Model {
    model(api::OPENAI_CODEX_RESPONSES, "openai-codex", "gpt-5.2-codex", "https://chatgpt.com/backend-api")
}

#[test]
fn the_url_is_completed_from_any_part_of_its_path() {
    for base in
        ["https://chatgpt.com/backend-api", "https://chatgpt.com/backend-api/", "https://chatgpt.com/backend-api/codex"]
    {
        assert_eq!(url(base), "https://chatgpt.com/backend-api/codex/responses", "{base}");
    }
    assert_eq!(url("http://127.0.0.1:9/codex/responses"), "http://127.0.0.1:9/codex/responses");
    assert_eq!(url(""), "https://chatgpt.com/backend-api/codex/responses");
}

#[test]
fn thinking_off_leaves_reasoning_out_and_a_level_keeps_it() {
    let context = Context { system_prompt: None, messages: vec![user("hi")], tools: vec![] };
    let off = build_body(&codex(), &context, &StreamOptions { thinking: ThinkingLevel::Off, ..Default::default() });
    assert_eq!(off.get("instructions"), None, "no system prompt: none sent (pi 1.6)");
    assert_eq!(off["input"], json!([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]));
    assert_eq!(off["include"], json!(["reasoning.encrypted_content"]));
    let high = build_body(&codex(), &context, &StreamOptions { thinking: ThinkingLevel::High, ..Default::default() });
    assert_eq!(high["reasoning"], json!({"effort": "high", "summary": "auto"}));
    let keys: Vec<&String> = high.as_object().unwrap().keys().collect();
    assert_eq!(keys[..4], ["model", "store", "stream", "input"]);
    // The system prompt leads the input as a developer item, for the prompt cache (pi 1.6).
    let prompted = Context { system_prompt: Some("Be terse.".into()), messages: vec![user("hi")], tools: vec![] };
    let body = build_body(&codex(), &prompted, &StreamOptions::default());
    assert_eq!(body.get("instructions"), None);
    assert_eq!(body["input"][0], json!({"role": "developer", "content": "Be terse."}));
}
