//! What an OpenAI-compatible server accepts. Chat Completions is spoken by many servers that
//! differ in details (the system role's name, the output-cap field, how thinking is switched,
//! whether usage is streamed, how prompts are cached, which headers pin a session to a replica);
//! these flags say which dialect a model gets. Known providers are recognised from the provider
//! name or base URL, as pi 1.6 recognises them, and `model.compat` overrides any flag. Any other
//! server (a local llama.cpp, vLLM or Ollama included) gets OpenAI's dialect —
//! `max_completion_tokens`, `store: false` — unless its `compat` says otherwise, but the `system`
//! role: the `developer` role (for reasoning models) goes to OpenAI's own API only. Tools carry
//! `strict` only where `compat.supportsStrictMode` turns it on: being OpenAI-compatible does not
//! mean taking strict schemas.
//!
//! Mistral is the one dialect pi 1.6 no longer has here (it speaks Mistral's own API); rho still
//! reaches Mistral over Chat Completions, with the flags pi 0.73 gave it.

use serde_json::{Map, Value};

use crate::model::Model;

/// How a reasoning model's thinking is switched on and sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThinkingFormat {
    /// `reasoning_effort`.
    OpenAi,
    /// OpenRouter's `reasoning: {effort}`, `effort: "none"` when thinking is off.
    OpenRouter,
    /// `thinking: {type}` and `reasoning_effort` (DeepSeek).
    DeepSeek,
    /// `thinking: {type, clear_thinking}` (z.ai).
    Zai,
    /// Top-level `enable_thinking` (Qwen).
    Qwen,
    /// `chat_template_kwargs.enable_thinking` (Qwen served by vLLM / SGLang).
    QwenChatTemplate,
    /// `reasoning: {enabled}` (Together).
    Together,
    /// `reasoning: {effort}`, only for a level the model's map names (Ant Ling).
    AntLing,
    /// `reasoning_effort` from the model's map and `chat_template_args` from
    /// `compat.chatTemplateArgs` (Baseten).
    Baseten,
    /// `chat_template_kwargs` from `compat.chatTemplateKwargs`.
    ChatTemplate,
}

impl ThinkingFormat {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "openai" => Self::OpenAi,
            "openrouter" => Self::OpenRouter,
            "deepseek" => Self::DeepSeek,
            "zai" => Self::Zai,
            "qwen" => Self::Qwen,
            "qwen-chat-template" => Self::QwenChatTemplate,
            "together" => Self::Together,
            "ant-ling" => Self::AntLing,
            "baseten" => Self::Baseten,
            "chat-template" => Self::ChatTemplate,
            _ => return None,
        })
    }
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

/// The headers that carry the session id so a server keeps a session on one replica
/// (`compat.sessionAffinityFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionAffinity {
    /// `openai`: `session_id`, `x-client-request-id` and `x-session-affinity`.
    Full,
    /// `openai-nosession`: `x-client-request-id` and `x-session-affinity`.
    WithoutSessionId,
    /// `openrouter`: `x-session-id`.
    OpenRouter,
}

impl SessionAffinity {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "openai" => Self::Full,
            "openai-nosession" => Self::WithoutSessionId,
            "openrouter" => Self::OpenRouter,
            _ => return None,
        })
    }

    fn header_names(self) -> &'static [&'static str] {
        match self {
            Self::Full => &["session_id", "x-client-request-id", "x-session-affinity"],
            Self::WithoutSessionId => &["x-client-request-id", "x-session-affinity"],
            Self::OpenRouter => &["x-session-id"],
        }
    }
}

/// When the session goes out as `prompt_cache_key` (`compat.promptCacheKeyMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PromptCacheKey {
    /// To OpenAI's own API, and wherever a long retention is asked for and supported.
    Auto,
    /// Whenever caching is on (proxies that pass it to OpenAI).
    Enabled,
    Disabled,
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
    /// Every replayed assistant message of a reasoning model carries `reasoning_content`, empty
    /// when the turn had none (DeepSeek rejects a history without it).
    pub requires_reasoning_content: bool,
    /// Tool-call ids of exactly nine letters and digits (Mistral).
    pub requires_mistral_tool_ids: bool,
    pub thinking_format: ThinkingFormat,
    pub supports_strict_mode: bool,
    /// `tool_stream: true` with the tools, so z.ai streams tool-call arguments.
    pub zai_tool_stream: bool,
    /// `cache_control` markers as Anthropic places them (`compat.cacheControlFormat`).
    pub anthropic_cache_control: bool,
    pub send_session_affinity_headers: bool,
    pub session_affinity: SessionAffinity,
    /// `prompt_cache_retention: "24h"` (or a one-hour `cache_control`) for a long retention.
    pub supports_long_cache_retention: bool,
    pub prompt_cache_key: PromptCacheKey,
    /// OpenRouter's `provider` routing preferences, sent as is.
    pub open_router_routing: Option<Value>,
    /// `compat.chatTemplateArgs` and `compat.chatTemplateKwargs`, before their `$var`s are filled
    /// in (see `chat_template`).
    pub chat_template_args: Map<String, Value>,
    pub chat_template_kwargs: Map<String, Value>,
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
        flag("requiresReasoningContentOnAssistantMessages", &mut compat.requires_reasoning_content);
        flag("requiresMistralToolIds", &mut compat.requires_mistral_tool_ids);
        flag("supportsStrictMode", &mut compat.supports_strict_mode);
        flag("zaiToolStream", &mut compat.zai_tool_stream);
        flag("sendSessionAffinityHeaders", &mut compat.send_session_affinity_headers);
        flag("supportsLongCacheRetention", &mut compat.supports_long_cache_retention);
        match model.compat_str("maxTokensField") {
            Some("max_tokens") => compat.max_tokens_field = MaxTokensField::MaxTokens,
            Some("max_completion_tokens") => {
                compat.max_tokens_field = MaxTokensField::MaxCompletionTokens;
            }
            _ => {}
        }
        if let Some(format) = model.compat_str("thinkingFormat").and_then(ThinkingFormat::parse) {
            compat.thinking_format = format;
        }
        if let Some(format) = model.compat_str("cacheControlFormat") {
            compat.anthropic_cache_control = format == "anthropic";
        }
        if let Some(format) = model.compat_str("sessionAffinityFormat").and_then(SessionAffinity::parse) {
            compat.session_affinity = format;
        }
        match model.compat_str("promptCacheKeyMode") {
            Some("auto") => compat.prompt_cache_key = PromptCacheKey::Auto,
            Some("enabled") => compat.prompt_cache_key = PromptCacheKey::Enabled,
            Some("disabled") => compat.prompt_cache_key = PromptCacheKey::Disabled,
            _ => {}
        }
        let object = |key: &str| model.compat.as_ref()?.get(key)?.as_object().cloned();
        if let Some(map) = object("reasoningEffortMap") {
            compat.reasoning_effort_map = map;
        }
        if let Some(routing) = object("openRouterRouting") {
            compat.open_router_routing = Some(Value::Object(routing));
        }
        if let Some(args) = object("chatTemplateArgs") {
            compat.chat_template_args = args;
        }
        if let Some(kwargs) = object("chatTemplateKwargs") {
            compat.chat_template_kwargs = kwargs;
        }
        compat
    }

    /// The session-affinity headers a request with `session` carries: none unless the server
    /// asks for them.
    pub(crate) fn affinity_headers<'a>(&self, session: &'a str) -> Vec<(&'static str, &'a str)> {
        if !self.send_session_affinity_headers || session.is_empty() {
            return Vec::new();
        }
        self.session_affinity.header_names().iter().map(|name| (*name, session)).collect()
    }

    /// The flags known providers need; the rest get OpenAI's dialect.
    fn detect(model: &Model) -> Self {
        let provider = model.provider.as_str();
        let url = model.base_url.to_ascii_lowercase();
        let is = |name: &str, host: &str| provider == name || url.contains(host);
        let zai = provider == "zai-coding-cn" || is("zai", "api.z.ai") || url.contains("open.bigmodel.cn");
        let together = is("together", "api.together.ai") || url.contains("api.together.xyz");
        let moonshot = provider == "moonshotai" || provider == "moonshotai-cn" || url.contains("api.moonshot.");
        let openrouter = is("openrouter", "openrouter.ai");
        let cloudflare_workers = is("cloudflare-workers-ai", "api.cloudflare.com");
        let cloudflare_gateway = is("cloudflare-ai-gateway", "gateway.ai.cloudflare.com");
        let nvidia = is("nvidia", "integrate.api.nvidia.com");
        let ant_ling = is("ant-ling", "api.ant-ling.com");
        let deepseek = is("deepseek", "deepseek.com");
        let xai = is("xai", "api.x.ai");
        let chutes = url.contains("chutes.ai");
        let mistral = is("mistral", "mistral.ai");
        let non_standard = zai
            || together
            || moonshot
            || cloudflare_workers
            || cloudflare_gateway
            || nvidia
            || ant_ling
            || deepseek
            || xai
            || chutes
            || mistral
            || is("cerebras", "cerebras.ai")
            || is("opencode", "opencode.ai");
        let max_tokens =
            zai || together || moonshot || cloudflare_gateway || nvidia || ant_ling || deepseek || chutes || mistral;
        let mut reasoning_effort_map = Map::new();
        if is("groq", "api.groq.com") && model.id == "qwen/qwen3-32b" {
            for level in ["minimal", "low", "medium", "high", "xhigh"] {
                reasoning_effort_map.insert(level.into(), Value::String("default".into()));
            }
        }
        // The developer role is OpenAI's own: other hosts' chat templates often reject it and all
        // of them take `system`, so only OpenAI's API gets it unless a model says so.
        let openai = is("openai", "api.openai.com");
        Self {
            supports_store: !non_standard,
            supports_developer_role: openai,
            supports_reasoning_effort: !(xai
                || zai
                || moonshot
                || together
                || cloudflare_gateway
                || nvidia
                || ant_ling),
            reasoning_effort_map,
            supports_usage_in_streaming: true,
            max_tokens_field: if max_tokens { MaxTokensField::MaxTokens } else { MaxTokensField::MaxCompletionTokens },
            requires_tool_result_name: mistral,
            requires_assistant_after_tool_result: false,
            requires_thinking_as_text: mistral,
            requires_reasoning_content: deepseek,
            requires_mistral_tool_ids: mistral,
            thinking_format: if deepseek {
                ThinkingFormat::DeepSeek
            } else if zai {
                ThinkingFormat::Zai
            } else if together {
                ThinkingFormat::Together
            } else if ant_ling {
                ThinkingFormat::AntLing
            } else if openrouter {
                ThinkingFormat::OpenRouter
            } else {
                ThinkingFormat::OpenAi
            },
            supports_strict_mode: false,
            zai_tool_stream: false,
            anthropic_cache_control: provider == "openrouter" && model.id.starts_with("anthropic/"),
            send_session_affinity_headers: openrouter,
            session_affinity: if openrouter { SessionAffinity::OpenRouter } else { SessionAffinity::Full },
            supports_long_cache_retention: !(together
                || cloudflare_workers
                || cloudflare_gateway
                || nvidia
                || ant_ling),
            prompt_cache_key: PromptCacheKey::Auto,
            open_router_routing: None,
            chat_template_args: Map::new(),
            chat_template_kwargs: Map::new(),
        }
    }
}
