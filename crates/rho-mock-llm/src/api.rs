//! Which provider API a request path belongs to, by the real paths each provider serves.
//!
//! Clients build their URLs from a base URL plus the API's own path, so the server answers
//! both the `/v1`-prefixed and the bare OpenAI paths, and Gemini's `models/{model}:method`
//! under `/v1beta` (and `/v1`).

/// The wire APIs, named as rho names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Api {
    AnthropicMessages,
    OpenAiCompletions,
    OpenAiResponses,
    GoogleGenerativeAi,
    BedrockConverseStream,
    /// pi's own message protocol (the Radius gateway's).
    PiMessages,
}

impl Api {
    pub const ALL: [Api; 6] = [
        Api::AnthropicMessages,
        Api::OpenAiCompletions,
        Api::OpenAiResponses,
        Api::GoogleGenerativeAi,
        Api::BedrockConverseStream,
        Api::PiMessages,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Api::AnthropicMessages => "anthropic-messages",
            Api::OpenAiCompletions => "openai-completions",
            Api::OpenAiResponses => "openai-responses",
            Api::GoogleGenerativeAi => "google-generative-ai",
            Api::BedrockConverseStream => "bedrock-converse-stream",
            Api::PiMessages => "pi-messages",
        }
    }
}

impl std::fmt::Display for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a path asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub api: Api,
    /// The model named in the path (Gemini and Bedrock), percent-decoded.
    pub path_model: Option<String>,
    /// Gemini `generateContent`: one JSON answer instead of a stream.
    pub whole: bool,
}

/// The route for `path`, or `None` for a path no provider serves.
pub fn route(path: &str) -> Option<Route> {
    let simple = |api| Some(Route { api, path_model: None, whole: false });
    match path.trim_end_matches('/') {
        "/v1/messages" => return simple(Api::AnthropicMessages),
        // pi-messages: `{baseUrl}/messages`, its base URL the gateway's root.
        "/messages" => return simple(Api::PiMessages),
        "/v1/chat/completions" | "/chat/completions" => return simple(Api::OpenAiCompletions),
        // Azure OpenAI's v1 endpoint and ChatGPT's Codex backend speak the same wire.
        "/v1/responses"
        | "/responses"
        | "/openai/v1/responses"
        | "/codex/responses"
        | "/backend-api/codex/responses" => {
            return simple(Api::OpenAiResponses);
        }
        _ => {}
    }
    // Bedrock's ConverseStream: the model id (an ARN escaped into one segment) in the path.
    if let Some(model) = path.strip_prefix("/model/").and_then(|rest| rest.strip_suffix("/converse-stream"))
        && !model.is_empty()
        && !model.contains('/')
    {
        let model = percent_encoding::percent_decode_str(model).decode_utf8_lossy().into_owned();
        return Some(Route { api: Api::BedrockConverseStream, path_model: Some(model), whole: false });
    }
    // Gemini's API, and Vertex AI's (`…/publishers/google/models/{model}`, with or without a
    // project and location before it).
    let rest = path
        .strip_prefix("/v1beta/models/")
        .or_else(|| path.strip_prefix("/v1/models/"))
        .or_else(|| path.split_once("/publishers/google/models/").map(|(_, model)| model))?;
    let (model, method) = rest.rsplit_once(':')?;
    let whole = match method {
        "streamGenerateContent" => false,
        "generateContent" => true,
        _ => return None,
    };
    if model.is_empty() {
        return None;
    }
    Some(Route { api: Api::GoogleGenerativeAi, path_model: Some(model.to_owned()), whole })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_every_provider_path() {
        let api = |p: &str| route(p).map(|r| r.api);
        assert_eq!(api("/v1/messages"), Some(Api::AnthropicMessages));
        assert_eq!(api("/v1/chat/completions"), Some(Api::OpenAiCompletions));
        assert_eq!(api("/chat/completions"), Some(Api::OpenAiCompletions));
        assert_eq!(api("/messages"), Some(Api::PiMessages));
        assert_eq!(api("/v1/responses"), Some(Api::OpenAiResponses));
        assert_eq!(api("/responses/"), Some(Api::OpenAiResponses));
        assert_eq!(api("/backend-api/codex/responses"), Some(Api::OpenAiResponses));
        let vertex = "/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent";
        assert_eq!(api(vertex), Some(Api::GoogleGenerativeAi));
        assert_eq!(route(vertex).unwrap().path_model.as_deref(), Some("gemini-2.5-pro"));
        let bedrock = route("/model/us.anthropic.claude-sonnet-4-v1%3A0/converse-stream").unwrap();
        assert_eq!(bedrock.api, Api::BedrockConverseStream);
        assert_eq!(bedrock.path_model.as_deref(), Some("us.anthropic.claude-sonnet-4-v1:0"));
        assert_eq!(api("/model//converse-stream"), None);
        assert_eq!(api("/v1/complete"), None);
        assert_eq!(api("/"), None);
    }

    #[test]
    fn routes_gemini_methods_with_their_model() {
        let r = route("/v1beta/models/gemini-2.5-flash:streamGenerateContent").unwrap();
        assert_eq!(r.api, Api::GoogleGenerativeAi);
        assert_eq!(r.path_model.as_deref(), Some("gemini-2.5-flash"));
        assert!(!r.whole);
        assert!(route("/v1beta/models/g:generateContent").unwrap().whole);
        assert_eq!(route("/v1beta/models/g:countTokens"), None);
        assert_eq!(route("/v1beta/models/:generateContent"), None);
        assert_eq!(route("/v1beta/models/g"), None);
    }
}
