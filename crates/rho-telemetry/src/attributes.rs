//! The names rho's spans and metrics carry: OpenTelemetry's GenAI semantic conventions where
//! they have a word for it, `rho.*` for the rest (prompt caching, cost, stop reasons, tool
//! outcomes).

pub(crate) const SESSION_ID: &str = "session.id";

pub(crate) const OPERATION_NAME: &str = "gen_ai.operation.name";
pub(crate) const AGENT_NAME: &str = "gen_ai.agent.name";
/// The provider, under the convention's older name (which many dashboards still read) and
/// under its current one.
pub(crate) const SYSTEM: &str = "gen_ai.system";
pub(crate) const PROVIDER_NAME: &str = "gen_ai.provider.name";
pub(crate) const REQUEST_MODEL: &str = "gen_ai.request.model";
pub(crate) const RESPONSE_MODEL: &str = "gen_ai.response.model";
pub(crate) const RESPONSE_ID: &str = "gen_ai.response.id";
pub(crate) const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
pub(crate) const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
pub(crate) const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
pub(crate) const TOKEN_TYPE: &str = "gen_ai.token.type";
pub(crate) const TOOL_NAME: &str = "gen_ai.tool.name";
pub(crate) const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";

pub(crate) const API: &str = "rho.api";
pub(crate) const STOP_REASON: &str = "rho.stop_reason";
pub(crate) const CACHE_READ_TOKENS: &str = "rho.usage.cache_read_tokens";
pub(crate) const CACHE_WRITE_TOKENS: &str = "rho.usage.cache_write_tokens";
pub(crate) const COST_USD: &str = "rho.cost_usd";
pub(crate) const TTFT_MS: &str = "rho.ttft_ms";
pub(crate) const ABORTED: &str = "rho.aborted";
pub(crate) const MODEL_REQUESTS: &str = "rho.model_requests";
pub(crate) const TOOL_CALLS: &str = "rho.tool_calls";
pub(crate) const TOOL_IS_ERROR: &str = "rho.tool.is_error";
pub(crate) const TOOL_DURATION_MS: &str = "rho.tool.duration_ms";
pub(crate) const TOOL_OUTCOME: &str = "rho.tool.outcome";

/// `gen_ai.operation.name` of a prompt's span, a model request's and a tool call's.
pub(crate) const INVOKE_AGENT: &str = "invoke_agent";
pub(crate) const CHAT: &str = "chat";
pub(crate) const EXECUTE_TOOL: &str = "execute_tool";
