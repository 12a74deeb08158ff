//! How a reasoning model's thinking is asked for, in each server's terms ([`ThinkingFormat`]), as
//! pi 1.6 asks for it. A level goes out as the model's `thinkingLevelMap` value, else as its own
//! name (`xhigh` only where the model has it, then `compat.reasoningEffortMap`). A `null` in the
//! map rules a level out: z.ai, Baseten and Ant Ling then send no effort at all, and a `null`
//! for `off` means thinking cannot be switched off, so DeepSeek and OpenRouter say nothing when
//! it is off. Thinking off is otherwise said explicitly where the format has a way to say it.
//!
//! Baseten's `chat_template_args` and the `chat-template` format's `chat_template_kwargs` are
//! the model's `compat.chatTemplateArgs` / `compat.chatTemplateKwargs` with their variables
//! filled in ([`super::chat_template`]).

use serde_json::{Map, Value, json};

use super::chat_template;
use super::compat::{Compat, ThinkingFormat};
use crate::model::{Model, ThinkingLevel};
use crate::providers::requested_thinking;
use crate::stream::StreamOptions;

pub(super) fn add_reasoning(body: &mut Map<String, Value>, model: &Model, compat: &Compat, options: &StreamOptions) {
    if !model.reasoning {
        return;
    }
    let level = requested_thinking(model, options);
    // The level, where the server takes an effort field at all.
    let requested_effort = level.filter(|_| compat.supports_reasoning_effort);
    // `thinking.budget` of a chat template: under the request's output cap.
    let ceiling = body.get(compat.max_tokens_field.as_str()).and_then(Value::as_u64).unwrap_or(model.max_tokens);
    let budget = || chat_template::budget(level, level.map_or(0, |l| options.thinking_budgets.for_level(l)), ceiling);
    let mut insert = |key: &str, value: Value| {
        body.insert(key.into(), value);
    };
    match compat.thinking_format {
        ThinkingFormat::OpenAi => {
            let effort = match level {
                Some(level) => requested_effort.map(|_| effort(model, compat, level)),
                None => off_value(model).filter(|_| compat.supports_reasoning_effort).map(|v| json!(v)),
            };
            if let Some(effort) = effort {
                insert("reasoning_effort", effort);
            }
        }
        ThinkingFormat::OpenRouter => {
            let effort = match level {
                Some(level) => Some(effort(model, compat, level)),
                None => off_switch(model).then(|| json!(off_value(model).unwrap_or("none"))),
            };
            if let Some(effort) = effort {
                insert("reasoning", json!({"effort": effort}));
            }
        }
        ThinkingFormat::DeepSeek => {
            if level.is_some() {
                insert("thinking", json!({"type": "enabled"}));
            } else if off_switch(model) {
                insert("thinking", json!({"type": "disabled"}));
            }
            if let Some(level) = requested_effort {
                insert("reasoning_effort", effort(model, compat, level));
            }
        }
        ThinkingFormat::Zai => {
            let thinking = match level {
                Some(_) => json!({"type": "enabled", "clear_thinking": false}),
                None => json!({"type": "disabled"}),
            };
            insert("thinking", thinking);
            if let Some(effort) = requested_effort.and_then(|level| mapped_effort(model, compat, level)) {
                insert("reasoning_effort", effort);
            }
        }
        ThinkingFormat::Qwen => {
            insert("enable_thinking", json!(level.is_some()));
            if let Some(effort) = requested_effort.map(|level| effort(model, compat, level)).filter(Value::is_string) {
                insert("reasoning_effort", effort);
            }
        }
        ThinkingFormat::QwenChatTemplate => {
            insert("chat_template_kwargs", json!({"enable_thinking": level.is_some(), "preserve_thinking": true}));
        }
        ThinkingFormat::Together => {
            insert("reasoning", json!({"enabled": level.is_some()}));
            if let Some(level) = requested_effort {
                insert("reasoning_effort", effort(model, compat, level));
            }
        }
        ThinkingFormat::AntLing => {
            if let Some(effort) = level.and_then(|level| model.provider_level(level)) {
                insert("reasoning", json!({"effort": effort}));
            }
        }
        ThinkingFormat::ChatTemplate => {
            if let Some(kwargs) = chat_template::fill(model, level, budget(), &compat.chat_template_kwargs) {
                insert("chat_template_kwargs", Value::Object(kwargs));
            }
        }
        ThinkingFormat::Baseten => {
            if let Some(args) = chat_template::fill(model, level, budget(), &compat.chat_template_args) {
                insert("chat_template_args", Value::Object(args));
            }
            let effort = match level {
                Some(level) => mapped_effort(model, compat, level),
                None => off_value(model).map(|v| json!(v)),
            };
            if let Some(effort) = effort.filter(|_| compat.supports_reasoning_effort) {
                insert("reasoning_effort", effort);
            }
        }
    }
}

/// The effort a level is sent as: the model's `thinkingLevelMap` value, else `xhigh` only where
/// the model has it, then `reasoningEffortMap`, then the level's name.
fn effort(model: &Model, compat: &Compat, level: ThinkingLevel) -> Value {
    if let Some(value) = model.provider_level(level) {
        return json!(value);
    }
    let level = if level == ThinkingLevel::Xhigh && !model.supports_xhigh() { ThinkingLevel::High } else { level };
    compat.reasoning_effort_map.get(level.as_str()).cloned().unwrap_or_else(|| json!(level.as_str()))
}

/// [`effort`], but nothing for a level the model's map rules out, and only a string.
fn mapped_effort(model: &Model, compat: &Compat, level: ThinkingLevel) -> Option<Value> {
    Some(effort(model, compat, level)).filter(|v| !model.rules_out(level) && v.is_string())
}

/// The value the model's map gives `off`, if it names one.
fn off_value(model: &Model) -> Option<&str> {
    model.provider_level(ThinkingLevel::Off)
}

/// Whether thinking can be switched off: not when the model's map sets `off` to `null`.
fn off_switch(model: &Model) -> bool {
    !model.rules_out(ThinkingLevel::Off)
}
