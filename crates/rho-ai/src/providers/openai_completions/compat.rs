//! What an OpenAI-compatible server accepts. Chat Completions is spoken by many servers that
//! differ in details (the system role's name, the output-cap field, how thinking is switched,
//! whether usage is streamed); these flags say which dialect a model gets. Known providers are
//! recognised from the provider name or base URL, as the reference recognises them, and
//! `model.compat` overrides any flag. Any other server (a local llama.cpp, vLLM or Ollama
//! included) gets OpenAI's dialect — `max_completion_tokens`, `store: false` — unless its
//! `compat` says otherwise, but the `system` role: the `developer` role (for reasoning models)
//! goes to OpenAI's own API only, as pi 1.6 sends it.

use serde_json::{Map, Value};

use crate::model::Model;

/// How a reasoning model's thinking is switched on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThinkingFormat {
    /// `reasoning_effort`.
    OpenAi,
    /// Top-level `enable_thinking` (z.ai).
    Zai,
    /// Top-level `enable_thinking` (Qwen).
    Qwen,
    /// `chat_template_kwargs.enable_thinking` (Qwen served by vLLM / SGLang).
    QwenChatTemplate,
    /// OpenRouter's `reasoning: {effort}`, `effort: "none"` when thinking is off.
    OpenRouter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MaxTokensField {
    MaxCompletionTokens,
    MaxTokens,
}

impl MaxTokensField {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::MaxCompletionTokens => "max_completion_tokens",
            Self::MaxTokens => "max_tokens",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Compat {
    pub supports_store: bool,
    pub supports_developer_role: bool,
    pub supports_reasoning_effort: bool,
    pub reasoning_effort_map: Map<String, Value>,
    pub supports_usage_in_streaming: bool,
    pub max_tokens_field: MaxTokensField,
    pub requires_tool_result_name: bool,
    pub requires_assistant_after_tool_result: bool,
    pub requires_thinking_as_text: bool,
    /// Tool-call ids of exactly nine letters and digits (Mistral).
    pub requires_mistral_tool_ids: bool,
    pub thinking_format: ThinkingFormat,
    pub supports_strict_mode: bool,
    /// OpenRouter's `provider` routing preferences, sent as is.
    pub open_router_routing: Option<Value>,
}

impl Compat {
    /// The flags for `model`: detected from its provider and base URL, then `model.compat`.
    pub(crate) fn for_model(model: &Model) -> Self {
        let mut compat = Self::detect(model);
        let flag = |key: &str, value: &mut bool| {
            if let Some(v) = model.compat_bool(key) {
                *value = v;
            }
        };
        flag("supportsStore", &mut compat.supports_store);
        flag("supportsDeveloperRole", &mut compat.supports_developer_role);
        flag("supportsReasoningEffort", &mut compat.supports_reasoning_effort);
        flag("supportsUsageInStreaming", &mut compat.supports_usage_in_streaming);
        flag("requiresToolResultName", &mut compat.requires_tool_result_name);
        flag("requiresAssistantAfterToolResult", &mut compat.requires_assistant_after_tool_result);
        flag("requiresThinkingAsText", &mut compat.requires_thinking_as_text);
        flag("requiresMistralToolIds", &mut compat.requires_mistral_tool_ids);
        flag("supportsStrictMode", &mut compat.supports_strict_mode);
        match model.compat_str("maxTokensField") {
            Some("max_tokens") => compat.max_tokens_field = MaxTokensField::MaxTokens,
            Some("max_completion_tokens") => {
                compat.max_tokens_field = MaxTokensField::MaxCompletionTokens;
            }
            _ => {}
        }
        match model.compat_str("thinkingFormat") {
            Some("openai") => compat.thinking_format = ThinkingFormat::OpenAi,
            Some("zai") => compat.thinking_format = ThinkingFormat::Zai,
            Some("qwen") => compat.thinking_format = ThinkingFormat::Qwen,
            Some("qwen-chat-template") => {
                compat.thinking_format = ThinkingFormat::QwenChatTemplate;
            }
            Some("openrouter") => compat.thinking_format = ThinkingFormat::OpenRouter,
            _ => {}
        }
        let object = |key: &str| model.compat.as_ref()?.get(key)?.as_object().cloned();
        if let Some(map) = object("reasoningEffortMap") {
            compat.reasoning_effort_map = map;
        }
        if let Some(routing) = object("openRouterRouting") {
            compat.open_router_routing = Some(Value::Object(routing));
        }
        compat
    }

    /// The flags known providers need; the rest get OpenAI's dialect.
    fn detect(model: &Model) -> Self {
        let provider = model.provider.as_str();
        let url = model.base_url.to_ascii_lowercase();
        let is = |name: &str, host: &str| provider == name || url.contains(host);
        let zai = is("zai", "api.z.ai");
        let xai = is("xai", "api.x.ai");
        let mistral = is("mistral", "mistral.ai");
        let chutes = url.contains("chutes.ai");
        let moonshot = provider == "moonshotai" || provider == "moonshotai-cn" || url.contains("api.moonshot.");
        let cloudflare_workers = is("cloudflare-workers-ai", "api.cloudflare.com");
        let cloudflare_gateway = is("cloudflare-ai-gateway", "gateway.ai.cloudflare.com");
        let non_standard = zai
            || xai
            || mistral
            || chutes
            || moonshot
            || cloudflare_workers
            || cloudflare_gateway
            || is("cerebras", "cerebras.ai")
            || is("deepseek", "deepseek.com")
            || is("opencode", "opencode.ai");
        let mut reasoning_effort_map = Map::new();
        if is("groq", "api.groq.com") && model.id == "qwen/qwen3-32b" {
            for level in ["minimal", "low", "medium", "high", "xhigh"] {
                reasoning_effort_map.insert(level.into(), Value::String("default".into()));
            }
        }
        // The developer role is OpenAI's own: other hosts' chat templates often reject it and all
        // of them take `system`, so only OpenAI's API gets it unless a model says so (pi 1.6).
        let openai = is("openai", "api.openai.com");
        Self {
            supports_store: !non_standard,
            supports_developer_role: openai,
            supports_reasoning_effort: !xai && !zai && !moonshot && !cloudflare_gateway,
            reasoning_effort_map,
            supports_usage_in_streaming: true,
            max_tokens_field: if chutes || mistral || moonshot || cloudflare_gateway {
                MaxTokensField::MaxTokens
            } else {
                MaxTokensField::MaxCompletionTokens
            },
            requires_tool_result_name: mistral,
            requires_assistant_after_tool_result: false,
            requires_thinking_as_text: mistral,
            requires_mistral_tool_ids: mistral,
            thinking_format: if zai {
                ThinkingFormat::Zai
            } else if is("openrouter", "openrouter.ai") {
                ThinkingFormat::OpenRouter
            } else {
                ThinkingFormat::OpenAi
            },
            supports_strict_mode: !moonshot && !cloudflare_gateway,
            open_router_routing: None,
        }
    }
}
