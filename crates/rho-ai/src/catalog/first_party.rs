//! The model makers' own APIs: Anthropic, OpenAI and Google.
//!
//! Anthropic lists both the moving aliases (`claude-sonnet-4-5`) and the dated snapshots they
//! point at (`claude-sonnet-4-5-20250929`); `--model` prefers the alias when a pattern matches
//! both.

use super::{CatalogModel, CatalogProvider, m};
use crate::model::api;

pub(super) static ANTHROPIC: CatalogProvider = CatalogProvider {
    name: "anthropic",
    api: api::ANTHROPIC_MESSAGES,
    base_url: "https://api.anthropic.com",
    default_model: "claude-opus-4-6",
    compat: &[],
    models: ANTHROPIC_MODELS,
};

const OPUS_45: [f64; 4] = [5.0, 25.0, 0.5, 6.25];
const OPUS_41: [f64; 4] = [15.0, 75.0, 1.5, 18.75];
const SONNET: [f64; 4] = [3.0, 15.0, 0.3, 3.75];
const HAIKU_45: [f64; 4] = [1.0, 5.0, 0.1, 1.25];

#[rustfmt::skip]
static ANTHROPIC_MODELS: &[CatalogModel] = &[
    m("claude-opus-4-6", "Claude Opus 4.6", true, true, OPUS_45, 200_000, 128_000),
    m("claude-sonnet-4-6", "Claude Sonnet 4.6", true, true, SONNET, 200_000, 64_000),
    m("claude-opus-4-5", "Claude Opus 4.5", true, true, OPUS_45, 200_000, 64_000),
    m("claude-opus-4-5-20251101", "Claude Opus 4.5", true, true, OPUS_45, 200_000, 64_000),
    m("claude-sonnet-4-5", "Claude Sonnet 4.5", true, true, SONNET, 200_000, 64_000),
    m("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", true, true, SONNET, 200_000, 64_000),
    m("claude-haiku-4-5", "Claude Haiku 4.5", true, true, HAIKU_45, 200_000, 64_000),
    m("claude-haiku-4-5-20251001", "Claude Haiku 4.5", true, true, HAIKU_45, 200_000, 64_000),
    m("claude-opus-4-1", "Claude Opus 4.1", true, true, OPUS_41, 200_000, 32_000),
    m("claude-opus-4-1-20250805", "Claude Opus 4.1", true, true, OPUS_41, 200_000, 32_000),
    m("claude-sonnet-4-0", "Claude Sonnet 4", true, true, SONNET, 200_000, 64_000),
    m("claude-sonnet-4-20250514", "Claude Sonnet 4", true, true, SONNET, 200_000, 64_000),
    m("claude-3-5-haiku-latest", "Claude Haiku 3.5", false, true, [0.8, 4.0, 0.08, 1.0], 200_000, 8_192),
];

pub(super) static OPENAI: CatalogProvider = CatalogProvider {
    name: "openai",
    api: api::OPENAI_RESPONSES,
    base_url: "https://api.openai.com/v1",
    default_model: "gpt-5.4",
    compat: &[],
    models: OPENAI_MODELS,
};

const GPT_52: [f64; 4] = [1.75, 14.0, 0.175, 0.0];
const GPT_5: [f64; 4] = [1.25, 10.0, 0.125, 0.0];

#[rustfmt::skip]
static OPENAI_MODELS: &[CatalogModel] = &[
    m("gpt-5.4", "GPT-5.4", true, true, [2.5, 15.0, 0.25, 0.0], 1_050_000, 128_000),
    m("gpt-5.4-mini", "GPT-5.4 mini", true, true, [0.75, 4.5, 0.075, 0.0], 400_000, 128_000),
    m("gpt-5.4-nano", "GPT-5.4 nano", true, true, [0.2, 1.25, 0.02, 0.0], 400_000, 128_000),
    m("gpt-5.3-codex", "GPT-5.3 Codex", true, true, GPT_52, 400_000, 128_000),
    m("gpt-5.2", "GPT-5.2", true, true, GPT_52, 400_000, 128_000),
    m("gpt-5.2-codex", "GPT-5.2 Codex", true, true, GPT_52, 400_000, 128_000),
    m("gpt-5.1", "GPT-5.1", true, true, GPT_5, 400_000, 128_000),
    m("gpt-5.1-codex", "GPT-5.1 Codex", true, true, GPT_5, 400_000, 128_000),
    m("gpt-5", "GPT-5", true, true, GPT_5, 400_000, 128_000),
    m("gpt-5-mini", "GPT-5 mini", true, true, [0.25, 2.0, 0.025, 0.0], 400_000, 128_000),
    m("o4-mini", "o4-mini", true, true, [1.1, 4.4, 0.275, 0.0], 200_000, 100_000),
    m("gpt-4.1", "GPT-4.1", false, true, [2.0, 8.0, 0.5, 0.0], 1_047_576, 32_768),
    m("gpt-4o", "GPT-4o", false, true, [2.5, 10.0, 1.25, 0.0], 128_000, 16_384),
];

pub(super) static GOOGLE: CatalogProvider = CatalogProvider {
    name: "google",
    api: api::GOOGLE_GENERATIVE_AI,
    base_url: "https://generativelanguage.googleapis.com/v1beta",
    default_model: "gemini-2.5-pro",
    compat: &[],
    models: GOOGLE_MODELS,
};

const GEMINI_3_PRO: [f64; 4] = [2.0, 12.0, 0.2, 0.0];

#[rustfmt::skip]
static GOOGLE_MODELS: &[CatalogModel] = &[
    m("gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", true, true, GEMINI_3_PRO, 1_048_576, 65_536),
    m("gemini-3-pro-preview", "Gemini 3 Pro Preview", true, true, GEMINI_3_PRO, 1_048_576, 65_536),
    m("gemini-3-flash-preview", "Gemini 3 Flash Preview", true, true, [0.5, 3.0, 0.05, 0.0], 1_048_576, 65_536),
    m("gemini-2.5-pro", "Gemini 2.5 Pro", true, true, [1.25, 10.0, 0.125, 0.0], 1_048_576, 65_536),
    m("gemini-2.5-flash", "Gemini 2.5 Flash", true, true, [0.3, 2.5, 0.03, 0.0], 1_048_576, 65_536),
    m("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", true, true, [0.1, 0.4, 0.01, 0.0], 1_048_576, 65_536),
    m("gemini-2.0-flash", "Gemini 2.0 Flash", false, true, [0.1, 0.4, 0.025, 0.0], 1_048_576, 8_192),
];
