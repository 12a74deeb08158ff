//! Providers reached through OpenAI-compatible Chat Completions: OpenRouter, xAI, Groq,
//! Cerebras, Mistral and DeepSeek.
//!
//! xAI, Cerebras and DeepSeek are "non-standard" servers: no `developer` role and no `store`
//! field. xAI and DeepSeek reason without a `reasoning_effort` knob; on Cerebras only the
//! gpt-oss model takes one. Mistral is spoken to through its OpenAI-compatible endpoint, whose
//! other quirks (tool-call ids, `max_tokens`) the Chat Completions provider recognises by name.

use super::{CatalogModel, CatalogProvider, m};
use crate::model::api;

/// Flags for servers that have neither the `developer` role nor `store`.
const NON_STANDARD: &[(&str, bool)] = &[("supportsStore", false), ("supportsDeveloperRole", false)];
const NO_EFFORT: &[(&str, bool)] = &[("supportsReasoningEffort", false)];
const EFFORT: &[(&str, bool)] = &[("supportsReasoningEffort", true)];
const NON_STANDARD_NO_EFFORT: &[(&str, bool)] =
    &[("supportsStore", false), ("supportsDeveloperRole", false), ("supportsReasoningEffort", false)];

pub(super) static OPENROUTER: CatalogProvider = CatalogProvider {
    name: "openrouter",
    api: api::OPENAI_COMPLETIONS,
    base_url: "https://openrouter.ai/api/v1",
    default_model: "openai/gpt-5.1-codex",
    compat: &[],
    models: OPENROUTER_MODELS,
};

#[rustfmt::skip]
static OPENROUTER_MODELS: &[CatalogModel] = &[
    m("anthropic/claude-opus-4.6", "Anthropic: Claude Opus 4.6", true, true, [5.0, 25.0, 0.5, 6.25], 200_000, 128_000),
    m("anthropic/claude-sonnet-4.6", "Anthropic: Claude Sonnet 4.6", true, true, [3.0, 15.0, 0.3, 3.75], 1_000_000, 64_000),
    m("anthropic/claude-sonnet-4.5", "Anthropic: Claude Sonnet 4.5", true, true, [3.0, 15.0, 0.3, 3.75], 1_000_000, 64_000),
    m("anthropic/claude-haiku-4.5", "Anthropic: Claude Haiku 4.5", true, true, [1.0, 5.0, 0.1, 1.25], 200_000, 64_000),
    m("openai/gpt-5.4", "OpenAI: GPT-5.4", true, true, [2.5, 15.0, 0.25, 0.0], 1_050_000, 128_000),
    m("openai/gpt-5.1-codex", "OpenAI: GPT-5.1-Codex", true, true, [1.25, 10.0, 0.125, 0.0], 400_000, 128_000),
    m("openai/gpt-oss-120b", "OpenAI: gpt-oss-120b", true, false, [0.05, 0.25, 0.0, 0.0], 131_072, 32_768),
    m("google/gemini-3.1-pro-preview", "Google: Gemini 3.1 Pro Preview", true, true, [2.0, 12.0, 0.2, 0.375], 1_048_576, 65_536),
    m("google/gemini-2.5-flash", "Google: Gemini 2.5 Flash", true, true, [0.3, 2.5, 0.03, 0.0833], 1_048_576, 65_535),
    m("x-ai/grok-4.1-fast", "xAI: Grok 4.1 Fast", true, true, [0.2, 0.5, 0.05, 0.0], 2_000_000, 30_000),
    m("deepseek/deepseek-v3.2", "DeepSeek: DeepSeek V3.2", true, false, [0.26, 0.38, 0.13, 0.0], 163_840, 65_536),
    m("moonshotai/kimi-k2.5", "MoonshotAI: Kimi K2.5", true, true, [0.6, 3.0, 0.1, 0.0], 262_144, 65_536),
    m("z-ai/glm-4.7", "Z.AI: GLM 4.7", true, false, [0.6, 2.2, 0.11, 0.0], 202_752, 65_536),
    m("qwen/qwen3-coder", "Qwen: Qwen3 Coder 480B A35B", false, false, [0.22, 0.95, 0.0, 0.0], 262_144, 65_536),
    m("minimax/minimax-m2.1", "MiniMax: MiniMax M2.1", true, false, [0.3, 1.2, 0.03, 0.0], 196_608, 65_536),
];

pub(super) static XAI: CatalogProvider = CatalogProvider {
    name: "xai",
    api: api::OPENAI_COMPLETIONS,
    base_url: "https://api.x.ai/v1",
    default_model: "grok-4-fast-non-reasoning",
    compat: NON_STANDARD_NO_EFFORT,
    models: XAI_MODELS,
};

const GROK_FAST: [f64; 4] = [0.2, 0.5, 0.05, 0.0];

#[rustfmt::skip]
static XAI_MODELS: &[CatalogModel] = &[
    m("grok-4", "Grok 4", true, true, [3.0, 15.0, 0.75, 0.0], 256_000, 64_000),
    m("grok-4-1-fast-reasoning", "Grok 4.1 Fast", true, true, GROK_FAST, 2_000_000, 30_000),
    m(
        "grok-4-1-fast-non-reasoning",
        "Grok 4.1 Fast (non-reasoning)",
        false,
        true,
        GROK_FAST,
        2_000_000,
        30_000,
    ),
    m("grok-4-fast-reasoning", "Grok 4 Fast", true, true, GROK_FAST, 2_000_000, 30_000),
    m(
        "grok-4-fast-non-reasoning",
        "Grok 4 Fast (non-reasoning)",
        false,
        true,
        GROK_FAST,
        2_000_000,
        30_000,
    ),
    m("grok-code-fast-1", "Grok Code Fast 1", true, false, [0.2, 1.5, 0.02, 0.0], 256_000, 10_000),
    m("grok-3", "Grok 3", false, false, [3.0, 15.0, 0.75, 0.0], 131_072, 8_192),
    m("grok-3-mini", "Grok 3 Mini", true, false, [0.3, 0.5, 0.075, 0.0], 131_072, 8_192),
];

pub(super) static GROQ: CatalogProvider = CatalogProvider {
    name: "groq",
    api: api::OPENAI_COMPLETIONS,
    base_url: "https://api.groq.com/openai/v1",
    default_model: "openai/gpt-oss-120b",
    compat: &[],
    models: GROQ_MODELS,
};

#[rustfmt::skip]
static GROQ_MODELS: &[CatalogModel] = &[
    m("openai/gpt-oss-120b", "GPT OSS 120B", true, false, [0.15, 0.6, 0.075, 0.0], 131_072, 65_536),
    m("openai/gpt-oss-20b", "GPT OSS 20B", true, false, [0.075, 0.3, 0.0375, 0.0], 131_072, 65_536),
    m("moonshotai/kimi-k2-instruct-0905", "Kimi K2 Instruct 0905", false, false, [1.0, 3.0, 0.5, 0.0], 262_144, 16_384),
    m("qwen/qwen3-32b", "Qwen3 32B", true, false, [0.29, 0.59, 0.0, 0.0], 131_072, 40_960),
    m("llama-3.3-70b-versatile", "Llama 3.3 70B Versatile", false, false, [0.59, 0.79, 0.0, 0.0], 131_072, 32_768),
    m("llama-3.1-8b-instant", "Llama 3.1 8B Instant", false, false, [0.05, 0.08, 0.0, 0.0], 131_072, 131_072),
    m("meta-llama/llama-4-maverick-17b-128e-instruct", "Llama 4 Maverick 17B 128E", false, true, [0.2, 0.6, 0.0, 0.0], 131_072, 8_192),
    m("meta-llama/llama-4-scout-17b-16e-instruct", "Llama 4 Scout 17B 16E", false, true, [0.11, 0.34, 0.0, 0.0], 131_072, 8_192),
];

pub(super) static CEREBRAS: CatalogProvider = CatalogProvider {
    name: "cerebras",
    api: api::OPENAI_COMPLETIONS,
    base_url: "https://api.cerebras.ai/v1",
    default_model: "zai-glm-4.6",
    compat: NON_STANDARD,
    models: CEREBRAS_MODELS,
};

#[rustfmt::skip]
static CEREBRAS_MODELS: &[CatalogModel] = &[
    m("zai-glm-4.7", "Z.AI GLM-4.7", true, false, [2.25, 2.75, 0.0, 0.0], 131_072, 40_000).with_compat(NO_EFFORT),
    m("zai-glm-4.6", "Z.AI GLM-4.6", true, false, [2.25, 2.75, 0.0, 0.0], 131_072, 40_000).with_compat(NO_EFFORT),
    m("gpt-oss-120b", "GPT OSS 120B", true, false, [0.35, 0.75, 0.0, 0.0], 131_072, 32_768).with_compat(EFFORT),
    m("qwen-3-235b-a22b-instruct-2507", "Qwen 3 235B Instruct", false, false, [0.6, 1.2, 0.0, 0.0], 131_072, 32_768),
    m("llama3.1-8b", "Llama 3.1 8B", false, false, [0.1, 0.1, 0.0, 0.0], 32_768, 8_192),
];

pub(super) static MISTRAL: CatalogProvider = CatalogProvider {
    name: "mistral",
    api: api::OPENAI_COMPLETIONS,
    base_url: "https://api.mistral.ai/v1",
    default_model: "devstral-medium-latest",
    compat: NO_EFFORT,
    models: MISTRAL_MODELS,
};

#[rustfmt::skip]
static MISTRAL_MODELS: &[CatalogModel] = &[
    m("devstral-medium-latest", "Devstral Medium", false, false, [0.4, 2.0, 0.0, 0.0], 262_144, 32_768),
    m("devstral-small-latest", "Devstral Small", false, false, [0.1, 0.3, 0.0, 0.0], 262_144, 32_768),
    m("mistral-large-latest", "Mistral Large", false, true, [0.5, 1.5, 0.0, 0.0], 262_144, 32_768),
    m("mistral-medium-latest", "Mistral Medium", false, true, [0.4, 2.0, 0.0, 0.0], 131_072, 32_768),
    m("mistral-small-latest", "Mistral Small", false, true, [0.1, 0.3, 0.0, 0.0], 131_072, 32_768),
    m("magistral-medium-latest", "Magistral Medium", true, true, [2.0, 5.0, 0.0, 0.0], 131_072, 32_768),
    m("magistral-small-latest", "Magistral Small", true, true, [0.5, 1.5, 0.0, 0.0], 131_072, 32_768),
    m("codestral-latest", "Codestral", false, false, [0.3, 0.9, 0.0, 0.0], 256_000, 32_768),
];

pub(super) static DEEPSEEK: CatalogProvider = CatalogProvider {
    name: "deepseek",
    api: api::OPENAI_COMPLETIONS,
    base_url: "https://api.deepseek.com/v1",
    default_model: "deepseek-chat",
    compat: NON_STANDARD_NO_EFFORT,
    models: DEEPSEEK_MODELS,
};

#[rustfmt::skip]
static DEEPSEEK_MODELS: &[CatalogModel] = &[
    m("deepseek-chat", "DeepSeek V3.2", false, false, [0.28, 0.42, 0.028, 0.0], 128_000, 8_192),
    m(
        "deepseek-reasoner",
        "DeepSeek V3.2 (thinking)",
        true,
        false,
        [0.28, 0.42, 0.028, 0.0],
        128_000,
        65_536,
    ),
];
