//! The Chat Completions request body in each server's dialect, built for models of a given
//! provider, base URL and `compat`, and the stream half over recorded chunk bodies; one theme a
//! file.

mod caching;
mod conversation;
mod dialects;
mod stream;
mod thinking;

use std::collections::BTreeMap;

use serde_json::Value;

use super::format::build_body;
use crate::model::{Model, ThinkingLevel, api};
use crate::providers::test_fixtures::model;
use crate::stream::StreamOptions;
use crate::types::Context;

/// A model on OpenAI's provider at `base_url`.
fn gpt(id: &str, base_url: &str) -> Model {
    model(api::OPENAI_COMPLETIONS, "openai", id, base_url)
}

/// A reasoning model of `provider` at `base_url`, with `compat` when it is not null.
fn served(provider: &str, id: &str, base_url: &str, compat: Value) -> Model {
    let mut m = model(api::OPENAI_COMPLETIONS, provider, id, base_url);
    m.compat = (!compat.is_null()).then_some(compat);
    m
}

/// `model` with a `thinkingLevelMap`; `None` is the map's `null`.
fn mapped(mut model: Model, map: &[(ThinkingLevel, Option<&str>)]) -> Model {
    let map: BTreeMap<_, _> = map.iter().map(|(level, value)| (*level, value.map(str::to_owned))).collect();
    model.thinking_level_map = Some(map);
    model
}

fn options(thinking: ThinkingLevel) -> StreamOptions {
    StreamOptions { thinking, ..Default::default() }
}

fn hi() -> Context {
    Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![crate::providers::test_fixtures::user("hi")],
        tools: vec![],
    }
}

/// The body `model` is sent for [`hi`] at `level`.
fn body(model: &Model, level: ThinkingLevel) -> Value {
    build_body(model, &hi(), &options(level))
}
