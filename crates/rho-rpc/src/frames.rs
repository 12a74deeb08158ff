//! Outbound frames that are neither responses nor events: the `ready` handshake, extension UI
//! requests, host tool calls and cancels, extension errors; and [`OutFrame`], everything a host
//! can read from rho's stdout.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::Event;
use crate::response::RpcResponse;

/// The first stdout line (docs/decisions.md D2): rho's version (xcsh's clients wait for it), and
/// the protocol versions and frame limits omp's client reads to negotiate protocol 2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename = "ready", rename_all = "camelCase")]
pub struct Ready {
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported_protocol_versions: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_frame_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_reassembled_frame_bytes: Option<u64>,
}

impl Ready {
    /// A `ready` frame with only the version, as xcsh writes it.
    pub fn version(version: impl Into<String>) -> Self {
        Self {
            version: version.into(),
            protocol_version: None,
            supported_protocol_versions: None,
            max_frame_bytes: None,
            max_reassembled_frame_bytes: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NotifyType {
    Info,
    Warning,
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum WidgetPlacement {
    #[serde(rename = "aboveEditor")]
    AboveEditor,
    #[serde(rename = "belowEditor")]
    BelowEditor,
}

/// What an `extension_ui_request` asks, with the method's fields in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "method", rename_all_fields = "camelCase")]
pub enum UiMethod {
    #[serde(rename = "select")]
    Select {
        title: String,
        options: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    #[serde(rename = "confirm")]
    Confirm {
        title: String,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    #[serde(rename = "input")]
    Input {
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        placeholder: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    #[serde(rename = "editor")]
    Editor {
        title: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefill: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt_style: Option<bool>,
    },
    #[serde(rename = "notify")]
    Notify {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        notify_type: Option<NotifyType>,
    },
    #[serde(rename = "setStatus")]
    SetStatus {
        status_key: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status_text: Option<String>,
    },
    #[serde(rename = "setWidget")]
    SetWidget {
        widget_key: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        widget_lines: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        widget_placement: Option<WidgetPlacement>,
    },
    #[serde(rename = "setTitle")]
    SetTitle { title: String },
    #[serde(rename = "set_editor_text")]
    SetEditorText { text: String },
    /// Withdraws an open dialog.
    #[serde(rename = "cancel")]
    Cancel { target_id: String },
    /// omp: a page for the person to open (a login's), with what to do there.
    #[serde(rename = "open_url")]
    OpenUrl {
        url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instructions: Option<String>,
    },
}

impl UiMethod {
    /// Dialogs wait for an answer; the rest are fire-and-forget.
    pub fn is_dialog(&self) -> bool {
        matches!(self, Self::Select { .. } | Self::Confirm { .. } | Self::Input { .. } | Self::Editor { .. })
    }
}

/// `{"type":"extension_ui_request","id":…,"method":…,…}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename = "extension_ui_request")]
pub struct UiRequest {
    pub id: String,
    #[serde(flatten)]
    pub method: UiMethod,
}

/// rho asks the host to run one of its tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename = "host_tool_call", rename_all = "camelCase")]
pub struct HostToolCall {
    pub id: String,
    pub tool_call_id: String,
    pub tool_name: String,
    pub arguments: Map<String, Value>,
}

/// What a host URI request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HostUriOperation {
    Read,
    Write,
}

/// rho asks the host for a resource under one of its URL schemes (`read`), or to replace one
/// (`write`, with `content`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename = "host_uri_request", rename_all = "camelCase")]
pub struct HostUriRequest {
    pub id: String,
    pub operation: HostUriOperation,
    /// The URL, normalized (as a WHATWG `URL`'s `href`).
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// rho withdraws a host URI request (abort).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename = "host_uri_cancel", rename_all = "camelCase")]
pub struct HostUriCancel {
    pub id: String,
    pub target_id: String,
}

/// rho withdraws a host tool call (abort or steering).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename = "host_tool_cancel", rename_all = "camelCase")]
pub struct HostToolCancel {
    pub id: String,
    pub target_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename = "extension_error", rename_all = "camelCase")]
pub struct ExtensionError {
    pub extension_path: String,
    pub event: String,
    pub error: String,
}

/// A host tool as `set_host_tools` registers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RpcHostToolDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub description: String,
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<bool>,
}

/// omp's protocol 2: one piece of a frame too large for one line (base64 of up to 256 KiB of
/// the frame's JSON); the pieces of one frame are consecutive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename = "rpc_chunk", rename_all = "camelCase")]
pub struct RpcChunk {
    pub chunk_id: String,
    pub index: usize,
    pub count: usize,
    pub byte_length: usize,
    pub data: String,
}

/// Anything rho writes to stdout in RPC mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OutFrame {
    Ready(Ready),
    Chunk(RpcChunk),
    Response(Box<RpcResponse>),
    UiRequest(UiRequest),
    HostToolCall(HostToolCall),
    HostToolCancel(HostToolCancel),
    HostUriRequest(HostUriRequest),
    HostUriCancel(HostUriCancel),
    ExtensionError(ExtensionError),
    Event(Box<Event>),
}

impl OutFrame {
    /// Reads one stdout line.
    pub fn parse(line: &str) -> Result<Self, serde_json::Error> {
        Self::from_value(serde_json::from_str(line)?)
    }

    /// Reads one stdout line already parsed as JSON.
    pub fn from_value(value: Value) -> Result<Self, serde_json::Error> {
        // Dispatch on the tag first so an error names the right frame type.
        match value.get("type").and_then(Value::as_str) {
            Some("ready") => serde_json::from_value(value).map(Self::Ready),
            Some("rpc_chunk") => serde_json::from_value(value).map(Self::Chunk),
            Some("response") => serde_json::from_value(value).map(|r| Self::Response(Box::new(r))),
            Some("extension_ui_request") => serde_json::from_value(value).map(Self::UiRequest),
            Some("host_tool_call") => serde_json::from_value(value).map(Self::HostToolCall),
            Some("host_tool_cancel") => serde_json::from_value(value).map(Self::HostToolCancel),
            Some("host_uri_request") => serde_json::from_value(value).map(Self::HostUriRequest),
            Some("host_uri_cancel") => serde_json::from_value(value).map(Self::HostUriCancel),
            Some("extension_error") => serde_json::from_value(value).map(Self::ExtensionError),
            _ => event_from_value(value).map(|e| Self::Event(Box::new(e))),
        }
    }
}

/// Tries both event enums so that a malformed event is reported by the enum that knows its
/// `type` (the untagged [`Event`] would only say that no variant matched).
fn event_from_value(value: Value) -> Result<Event, serde_json::Error> {
    let agent_error = match serde_json::from_value(value.clone()) {
        Ok(e) => return Ok(Event::Agent(e)),
        Err(e) => e,
    };
    let ty = value.get("type").map(Value::to_string);
    let unknown = |e: &serde_json::Error| e.to_string().starts_with("unknown variant");
    match serde_json::from_value(value) {
        Ok(e) => Ok(Event::Session(e)),
        Err(session_error) if unknown(&session_error) && unknown(&agent_error) => {
            Err(serde::de::Error::custom(format!("unknown frame type {}", ty.unwrap_or_default())))
        }
        Err(session_error) if unknown(&agent_error) => Err(session_error),
        Err(_) => Err(agent_error),
    }
}
