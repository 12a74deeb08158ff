//! Why a model request failed, classified so the layers above know what to do about it:
//! retry it, compact the context and retry, ask for credentials, or report it.
//!
//! A failed request never surfaces as a Rust error from a stream: it ends the stream with an
//! `error` event whose message carries `errorMessage` (the provider's own words) and whose
//! `failure` carries one of these.

use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;

/// What the caller should do about a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Transient: rate limits, overload, 5xx, dropped connections, streams cut short.
    Retryable,
    /// The request was too large for the model's context window.
    ContextOverflow,
    /// Credentials missing, invalid or not allowed.
    Auth,
    /// Anything else; retrying will not help.
    Other,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// The server answered with an error status. Retryable for 408, 409, 429 and 5xx (529 is
    /// Anthropic's "overloaded").
    #[error("{status} {message}")]
    Http {
        status: u16,
        message: String,
        retry_after: Option<Duration>,
        /// The provider's own code for the error, when its body names one (Anthropic's
        /// `error.details.error_code`).
        code: Option<String>,
    },
    /// The provider reported an error inside the stream (e.g. Anthropic's `overloaded_error`).
    /// Retryable when the error type says overload or rate limiting.
    #[error("{message}")]
    Stream { error_type: String, message: String },
    /// The connection could not be made or broke (retryable).
    #[error("Connection error: {0}")]
    Connection(String),
    /// The stream ended before the message was complete (retryable).
    #[error("Stream ended before the response was complete{0}")]
    StreamEnded(String),
    /// No bytes arrived for longer than the idle timeout (retryable).
    #[error("Stream stalled: no data for {0} ms")]
    Idle(u64),
    /// The response was not the wire format we expected.
    #[error("Invalid response from provider: {0}")]
    Decode(String),
    /// No API key could be found for the provider.
    #[error("No API key found for {0}.")]
    MissingApiKey(String),
    /// The provider's subscription login gave no token (it could not be refreshed); the text
    /// says which login and what to do.
    #[error("{0}")]
    Login(String),
    /// The provider's configuration is incomplete (a base URL placeholder whose variable is
    /// not set); the text says which.
    #[error("{0}")]
    Config(String),
    /// The model names an API rho does not speak.
    #[error("Unsupported API: {0}")]
    UnsupportedApi(String),
    /// The request could not be built.
    #[error("Invalid request: {0}")]
    Request(String),
}

/// The longest error text rho keeps from a provider. A server that answers with megabytes of
/// error must not make the session line, every later frame and every `get_messages` carry them.
pub const MAX_ERROR_TEXT: usize = 8 * 1024;

/// Cuts `text` to [`MAX_ERROR_TEXT`] bytes (at a character boundary), saying how much was cut.
pub fn cap_error_text(text: &mut String) {
    if text.len() <= MAX_ERROR_TEXT {
        return;
    }
    let mut end = MAX_ERROR_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    text.truncate(end);
    text.push_str(&format!("… [{cut} more bytes]"));
}

impl ProviderError {
    /// The error with every text it carries cut to [`MAX_ERROR_TEXT`].
    pub fn capped(mut self) -> Self {
        match &mut self {
            Self::Http { message, .. } => cap_error_text(message),
            Self::Stream { error_type, message } => {
                cap_error_text(error_type);
                cap_error_text(message);
            }
            Self::Connection(text)
            | Self::StreamEnded(text)
            | Self::Decode(text)
            | Self::MissingApiKey(text)
            | Self::Login(text)
            | Self::Config(text)
            | Self::UnsupportedApi(text)
            | Self::Request(text) => cap_error_text(text),
            Self::Idle(_) => {}
        }
        self
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Http { status, message, .. } => {
                // A 429 is a limit to wait out, even when its text talks about tokens.
                if *status != 429
                    && (is_context_overflow(message) || is_context_overflow(&format!("{status} {message}")))
                {
                    ErrorKind::ContextOverflow
                } else if matches!(status, 401 | 403) {
                    ErrorKind::Auth
                } else if matches!(status, 408 | 409 | 425 | 429) || *status >= 500 {
                    ErrorKind::Retryable
                } else {
                    ErrorKind::Other
                }
            }
            Self::Stream { error_type, message } => {
                if is_context_overflow(message) {
                    ErrorKind::ContextOverflow
                } else if is_retryable_message(error_type) || is_retryable_message(message) {
                    ErrorKind::Retryable
                } else if error_type.contains("authentication") || error_type.contains("permission") {
                    ErrorKind::Auth
                } else {
                    ErrorKind::Other
                }
            }
            Self::Connection(_) | Self::StreamEnded(_) | Self::Idle(_) => ErrorKind::Retryable,
            Self::MissingApiKey(_) | Self::Login(_) => ErrorKind::Auth,
            Self::Decode(_) | Self::Config(_) | Self::UnsupportedApi(_) | Self::Request(_) => ErrorKind::Other,
        }
    }

    pub fn is_retryable(&self) -> bool {
        self.kind() == ErrorKind::Retryable
    }

    /// The delay the server asked for (`Retry-After`, or a `retry-after-ms` header).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

static OVERFLOW: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(concat!(
        r"(?i)prompt is too long|input is too long for requested model|exceeds the context window",
        r"|input token count.*exceeds the maximum|maximum prompt length is \d+",
        r"|reduce the length of the messages|maximum context length is \d+ tokens",
        r"|exceeds the limit of \d+|exceeds the available context size|greater than the context length",
        r"|context window exceeds limit|exceeded model token limit",
        r"|too large for model with \d+ maximum context length|model_context_window_exceeded",
        r"|context[_ ]length[_ ]exceeded|too many tokens|token limit exceeded",
        r"|^4(00|13)\s*(status code)?\s*\(no body\)"
    ))
    .expect("static regex")
});

static RETRYABLE: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(concat!(
        r"(?i)overloaded|rate.?limit|too many requests|429|500|502|503|504|529|service.?unavailable",
        r"|server.?error|internal.?error|connection.?error|connection.?refused|other side closed",
        r"|fetch failed|upstream.?connect|reset before headers|terminated|retry delay|usage limit",
        r"|stream ended|stream stalled|throttl"
    ))
    .expect("static regex")
});

/// Texts that can match an overflow pattern but describe throttling ("Throttling error: Too
/// many tokens, please wait", tokens-per-minute rate limits).
static NOT_OVERFLOW: LazyLock<Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"(?i)^(throttling error|service unavailable):|rate.?limit|too many requests").expect("static regex")
});

/// Whether an error text says the context window was exceeded (the reference's patterns),
/// throttling texts excepted.
pub fn is_context_overflow(message: &str) -> bool {
    OVERFLOW.is_match(message) && !NOT_OVERFLOW.is_match(message)
}

/// Whether an error text describes a transient failure (the reference's patterns, used when
/// only the text of an error is known, e.g. for a message loaded from a session).
pub fn is_retryable_message(message: &str) -> bool {
    RETRYABLE.is_match(message)
}

/// Classifies an error text when no structured failure is at hand.
pub fn classify_message(message: &str) -> ErrorKind {
    if is_context_overflow(message) {
        ErrorKind::ContextOverflow
    } else if is_retryable_message(message) {
        ErrorKind::Retryable
    } else {
        ErrorKind::Other
    }
}

#[cfg(test)]
mod cap_tests {
    use super::*;

    #[test]
    fn long_error_texts_are_cut_at_a_character_boundary() {
        let error =
            ProviderError::Http { status: 500, message: "é".repeat(50_000), retry_after: None, code: None }.capped();
        let ProviderError::Http { message, .. } = &error else { unreachable!() };
        assert!(message.len() < MAX_ERROR_TEXT + 32);
        assert!(message.ends_with("… [91808 more bytes]"), "{}", &message[message.len() - 40..]);
        let short = ProviderError::Stream { error_type: "x".into(), message: "short".into() };
        assert_eq!(short.clone().capped(), short);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, message: &str) -> ProviderError {
        ProviderError::Http { status, message: message.into(), retry_after: None, code: None }
    }

    #[test]
    fn statuses_classify() {
        assert_eq!(http(429, "Rate limited").kind(), ErrorKind::Retryable);
        assert_eq!(http(500, "boom").kind(), ErrorKind::Retryable);
        assert_eq!(http(529, "Overloaded").kind(), ErrorKind::Retryable);
        assert_eq!(http(401, "invalid x-api-key").kind(), ErrorKind::Auth);
        assert_eq!(http(400, "bad tool schema").kind(), ErrorKind::Other);
        assert_eq!(http(400, "prompt is too long: 250000 tokens > 200000 maximum").kind(), ErrorKind::ContextOverflow);
    }

    #[test]
    fn throttling_that_mentions_tokens_is_not_an_overflow() {
        assert_eq!(http(429, "Too many tokens, please wait before trying again.").kind(), ErrorKind::Retryable);
        let bedrock = ProviderError::Stream {
            error_type: "throttlingException".into(),
            message: "Throttling error: Too many tokens, please wait before trying again.".into(),
        };
        assert_eq!(bedrock.kind(), ErrorKind::Retryable);
        assert_eq!(classify_message("Rate limit reached: too many tokens per minute"), ErrorKind::Retryable);
        // Real overflows still are.
        assert_eq!(http(400, "too many tokens in the request").kind(), ErrorKind::ContextOverflow);
        assert_eq!(http(413, "413 (no body)").kind(), ErrorKind::ContextOverflow);
        // An empty 413 or 400 reads "<status> status code (no body)", as the reference writes it.
        assert_eq!(http(413, "status code (no body)").kind(), ErrorKind::ContextOverflow);
        assert_eq!(http(400, "status code (no body)").kind(), ErrorKind::ContextOverflow);
        assert_eq!(http(404, "status code (no body)").kind(), ErrorKind::Other);
    }

    #[test]
    fn stream_errors_classify() {
        let e = ProviderError::Stream { error_type: "overloaded_error".into(), message: "Overloaded".into() };
        assert_eq!(e.kind(), ErrorKind::Retryable);
        assert_eq!(ProviderError::StreamEnded(String::new()).kind(), ErrorKind::Retryable);
        assert_eq!(ProviderError::Decode("x".into()).kind(), ErrorKind::Other);
    }

    #[test]
    fn messages_classify() {
        assert_eq!(classify_message("429 Too Many Requests"), ErrorKind::Retryable);
        assert_eq!(classify_message("maximum context length is 8192 tokens"), ErrorKind::ContextOverflow);
        assert_eq!(classify_message("invalid request"), ErrorKind::Other);
    }
}
