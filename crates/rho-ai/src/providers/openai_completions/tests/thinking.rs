//! Thinking in each server's terms (`compat.thinkingFormat`), with the model's
//! `thinkingLevelMap` deciding the values and which levels exist.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{body, gpt, mapped, served};
use crate::model::ThinkingLevel::{self, High, Low, Max, Medium, Minimal, Off, Xhigh};

/// The body's fields among `keys`, the rest left out.
fn fields(body: &Value, keys: &[&str]) -> Value {
    Value::Object(keys.iter().filter_map(|k| Some(((*k).to_owned(), body.get(*k)?.clone()))).collect())
}

const KEYS: [&str; 5] = ["reasoning_effort", "reasoning", "thinking", "enable_thinking", "chat_template_kwargs"];

/// What `model` is sent to ask for `level`.
fn asked(model: &crate::model::Model, level: ThinkingLevel) -> Value {
    fields(&body(model, level), &KEYS)
}

#[test]
fn openai_reasoning_effort() {
    let openai = gpt("gpt-5-mini", "https://api.openai.com/v1");
    assert_eq!(asked(&openai, Off), json!({}));
    assert_eq!(asked(&openai, Xhigh), json!({"reasoning_effort": "high"}), "no xhigh on gpt-5-mini");
    assert_eq!(asked(&gpt("gpt-5.2", "https://api.openai.com/v1"), Xhigh), json!({"reasoning_effort": "xhigh"}));
    let mut plain = openai.clone();
    plain.reasoning = false;
    assert_eq!(asked(&plain, High), json!({}));
    // Off is said where the model's map names a value for it.
    let gpt_oss = mapped(
        served("baseten", "openai/gpt-oss-120b", "https://inference.baseten.co/v1", json!(null)),
        &[(Off, Some("none")), (Minimal, Some("minimal")), (High, Some("high"))],
    );
    assert_eq!(asked(&gpt_oss, Off), json!({"reasoning_effort": "none"}));
    let xai = served("xai", "grok-4", "https://api.x.ai/v1", json!(null));
    assert_eq!(asked(&xai, High), json!({}));
    assert_eq!(asked(&mapped(xai, &[(Off, Some("none"))]), Off), json!({}), "no effort field at all");
    let groq = served("groq", "qwen/qwen3-32b", "https://api.groq.com/openai/v1", json!(null));
    assert_eq!(asked(&groq, Low), json!({"reasoning_effort": "default"}));
    let remapped = served("custom", "m", "http://localhost:8000/v1", json!({"reasoningEffortMap": {"minimal": "low"}}));
    assert_eq!(asked(&remapped, Minimal), json!({"reasoning_effort": "low"}));
}

/// OpenRouter takes `reasoning: {effort}`; off is `none` unless the model's map says otherwise,
/// or says thinking cannot be switched off.
#[test]
fn openrouter_reasoning_object() {
    let m = served("openrouter", "openai/gpt-5.2", "https://openrouter.ai/api/v1", json!(null));
    assert_eq!(asked(&m, High), json!({"reasoning": {"effort": "high"}}));
    assert_eq!(asked(&m, Xhigh), json!({"reasoning": {"effort": "xhigh"}}));
    assert_eq!(asked(&m, Off), json!({"reasoning": {"effort": "none"}}));
    let always_on = mapped(m.clone(), &[(Off, None), (High, Some("max"))]);
    assert_eq!(asked(&always_on, Off), json!({}));
    assert_eq!(asked(&always_on, High), json!({"reasoning": {"effort": "max"}}));
    assert_eq!(asked(&mapped(m.clone(), &[(Off, Some("minimal"))]), Off), json!({"reasoning": {"effort": "minimal"}}));
    let mut plain = m;
    plain.reasoning = false;
    assert_eq!(asked(&plain, Off), json!({}));
}

/// DeepSeek: `thinking: {type}` and the effort from the map; no `thinking` at all when the map
/// says it cannot be switched off.
#[test]
fn deepseek_thinking() {
    let v4 = [(Minimal, None), (Low, None), (Medium, None), (High, Some("high")), (Max, Some("max"))];
    let m = mapped(served("deepseek", "deepseek-v4-pro", "https://api.deepseek.com", json!(null)), &v4);
    assert_eq!(asked(&m, High), json!({"thinking": {"type": "enabled"}, "reasoning_effort": "high"}));
    assert_eq!(asked(&m, Max), json!({"thinking": {"type": "enabled"}, "reasoning_effort": "max"}));
    assert_eq!(asked(&m, Off), json!({"thinking": {"type": "disabled"}}));
    let always_on = mapped(m.clone(), &[(Off, None), (High, Some("high"))]);
    assert_eq!(asked(&always_on, Off), json!({}));
    let no_effort =
        served("deepseek", "deepseek-v4-pro", "https://api.deepseek.com", json!({"supportsReasoningEffort": false}));
    assert_eq!(asked(&no_effort, High), json!({"thinking": {"type": "enabled"}}));
}

/// z.ai: `thinking: {type, clear_thinking: false}`; an effort only where the model takes one
/// and its map does not rule the level out.
#[test]
fn zai_thinking() {
    let glm = served("zai", "glm-4.7", "https://api.z.ai/api/coding/paas/v4", json!(null));
    assert_eq!(asked(&glm, High), json!({"thinking": {"type": "enabled", "clear_thinking": false}}));
    assert_eq!(asked(&glm, Off), json!({"thinking": {"type": "disabled"}}));
    let map = [(Off, Some("none")), (Low, None), (High, Some("high")), (Max, Some("max"))];
    let compat = json!({"supportsReasoningEffort": true});
    let glm5 = mapped(served("zai", "glm-5.2", "https://api.z.ai/api/coding/paas/v4", compat), &map);
    assert_eq!(
        asked(&glm5, Max),
        json!({"thinking": {"type": "enabled", "clear_thinking": false}, "reasoning_effort": "max"})
    );
    assert_eq!(asked(&glm5, Low), json!({"thinking": {"type": "enabled", "clear_thinking": false}}));
    assert_eq!(asked(&glm5, Off), json!({"thinking": {"type": "disabled"}}));
}

/// Qwen: top-level `enable_thinking`, with an effort where the model takes one.
#[test]
fn qwen_thinking() {
    let url = "https://token-plan.maas.qwencloudapi.com/compatible-mode/v1";
    let compat = json!({"thinkingFormat": "qwen", "supportsStore": false, "supportsReasoningEffort": true});
    let flash = mapped(served("qwen-token-plan", "qwen3.8-flash", url, compat), &[(Off, None), (Low, Some("low"))]);
    assert_eq!(asked(&flash, Low), json!({"enable_thinking": true, "reasoning_effort": "low"}));
    assert_eq!(asked(&flash, Medium), json!({"enable_thinking": true, "reasoning_effort": "medium"}));
    assert_eq!(asked(&flash, Off), json!({"enable_thinking": false}));
    let kimi = served(
        "qwen-token-plan",
        "kimi-k2.5",
        url,
        json!({"thinkingFormat": "qwen", "supportsReasoningEffort": false}),
    );
    assert_eq!(asked(&kimi, High), json!({"enable_thinking": true}));
}

/// Qwen behind vLLM / SGLang: the chat template's switch, keeping earlier thinking.
#[test]
fn qwen_chat_template_thinking() {
    let m = served("custom", "qwen3-32b", "http://localhost:8000/v1", json!({"thinkingFormat": "qwen-chat-template"}));
    assert_eq!(asked(&m, Low), json!({"chat_template_kwargs": {"enable_thinking": true, "preserve_thinking": true}}));
    assert_eq!(asked(&m, Off), json!({"chat_template_kwargs": {"enable_thinking": false, "preserve_thinking": true}}));
}

/// Together: `reasoning: {enabled}`, with an effort where the model takes one.
#[test]
fn together_thinking() {
    let url = "https://api.together.ai/v1";
    let plain = served("together", "deepseek-ai/DeepSeek-V4.1-Flash", url, json!(null));
    assert_eq!(asked(&plain, High), json!({"reasoning": {"enabled": true}}));
    assert_eq!(asked(&plain, Off), json!({"reasoning": {"enabled": false}}));
    let pro = served("together", "deepseek-ai/DeepSeek-V4-Pro-0813", url, json!({"supportsReasoningEffort": true}));
    assert_eq!(asked(&pro, High), json!({"reasoning": {"enabled": true}, "reasoning_effort": "high"}));
}

/// Ant Ling: `reasoning: {effort}` only for a level the model's map names.
#[test]
fn ant_ling_thinking() {
    let url = "https://api.ant-ling.com/v1";
    let map = [(Off, None), (Minimal, None), (Low, None), (Medium, None), (High, Some("high")), (Xhigh, Some("xhigh"))];
    let ring = mapped(served("ant-ling", "Ring-2.6-1T", url, json!(null)), &map);
    assert_eq!(asked(&ring, Xhigh), json!({"reasoning": {"effort": "xhigh"}}));
    assert_eq!(asked(&ring, Medium), json!({}));
    assert_eq!(asked(&ring, Off), json!({}));
    assert_eq!(asked(&served("ant-ling", "Ring-1T", url, json!(null)), High), json!({}));
}

/// Baseten: `reasoning_effort` from the map, `off` included where the map names it.
#[test]
fn baseten_thinking() {
    let compat = json!({"thinkingFormat": "baseten", "supportsReasoningEffort": true});
    let map = [(Off, Some("none")), (Minimal, None), (High, Some("high")), (Max, Some("max"))];
    let glm = mapped(served("baseten", "zai-org/GLM-5.2", "https://inference.baseten.co/v1", compat.clone()), &map);
    assert_eq!(asked(&glm, High), json!({"reasoning_effort": "high"}));
    assert_eq!(asked(&glm, Medium), json!({"reasoning_effort": "medium"}), "a level the map does not name");
    assert_eq!(asked(&glm, Minimal), json!({}), "a level the map rules out");
    assert_eq!(asked(&glm, Off), json!({"reasoning_effort": "none"}));
    let unmapped = served("baseten", "m", "https://inference.baseten.co/v1", compat);
    assert_eq!(asked(&unmapped, Off), json!({}));
    let mut no_effort = glm.clone();
    no_effort.compat = Some(json!({"thinkingFormat": "baseten", "supportsReasoningEffort": false}));
    assert_eq!(asked(&no_effort, High), json!({}));
}

/// Baseten's `chat_template_args` and the `chat-template` format's `chat_template_kwargs`, with
/// their variables filled in for the level.
#[test]
fn chat_template_values_are_sent_filled_in() {
    let compat = json!({"thinkingFormat": "baseten", "supportsReasoningEffort": false,
        "chatTemplateArgs": {"enable_thinking": {"$var": "thinking.enabled"}, "effort": {"$var": "thinking.effort"}}});
    let glm =
        mapped(served("baseten", "zai-org/GLM-5.2", "https://inference.baseten.co/v1", compat), &[(High, Some("max"))]);
    let args = |level| fields(&body(&glm, level), &["chat_template_args"]);
    assert_eq!(args(High), json!({"chat_template_args": {"enable_thinking": true, "effort": "max"}}));
    assert_eq!(args(Low), json!({"chat_template_args": {"enable_thinking": true, "effort": "low"}}));
    assert_eq!(args(Off), json!({"chat_template_args": {"enable_thinking": false}}));

    let kwargs = json!({"thinkingFormat": "chat-template", "maxTokensField": "max_tokens",
        "chatTemplateKwargs": {"thinking": {"$var": "thinking.enabled", "omitWhenOff": true},
                               "budget": {"$var": "thinking.budget"}, "style": "terse"}});
    let vllm = served("vllm", "qwen3", "http://localhost:8000/v1", kwargs);
    let sent = body(&vllm, Low);
    let budget = sent["chat_template_kwargs"]["budget"].as_u64().unwrap();
    assert!(budget > 0 && budget + 1024 <= sent["max_tokens"].as_u64().unwrap(), "{sent}");
    assert_eq!(sent["chat_template_kwargs"]["thinking"], json!(true));
    assert_eq!(
        fields(&body(&vllm, Off), &["chat_template_kwargs"]),
        json!({"chat_template_kwargs": {"style": "terse"}})
    );
}
