//! Inbound frames: the commands a host sends, the UI and host-tool replies, and the reading of
//! one input line into exactly one of them or an error response (docs/protocol.md,
//! "Inbound dispatch" and "Errors", with docs/decisions.md D3: an `id` is echoed on every answer
//! to a line that carried one).

use rho_types::queue::{InterruptMode, QueueMode};
use rho_types::types::ImageContent;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::response::RpcResponse;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum StreamingBehavior {
    #[serde(rename = "steer")]
    Steer,
    #[serde(rename = "followUp")]
    FollowUp,
}

/// A command, discriminated by `type`. Unknown extra fields are ignored. Its names (`name()`,
/// [`COMMAND_NAMES`]) come from the variants, as serde's tags do.
/// What `rewind` puts back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RewindRestore {
    /// The files and the conversation.
    #[default]
    Both,
    /// The files only: the conversation stays.
    Code,
    /// The conversation only: the files stay.
    Conversation,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, strum::IntoStaticStr, strum::VariantNames)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
#[strum(serialize_all = "snake_case")]
pub enum RpcCommand {
    Prompt {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<Vec<Value>>")]
        images: Option<Vec<ImageContent>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        streaming_behavior: Option<StreamingBehavior>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        locale: Option<String>,
    },
    Steer {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<Vec<Value>>")]
        images: Option<Vec<ImageContent>>,
    },
    FollowUp {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<Vec<Value>>")]
        images: Option<Vec<ImageContent>>,
    },
    Abort,
    /// pi 1.6: empty both queues and answer what was in them.
    ClearQueue,
    AbortAndPrompt {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<Vec<Value>>")]
        images: Option<Vec<ImageContent>>,
    },
    NewSession {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_session: Option<String>,
    },
    GetState,
    /// Validated by the handler (errors name the offending phase or task).
    SetTodos {
        phases: Value,
    },
    /// Validated by the handler with the reference's texts.
    SetHostTools {
        tools: Value,
    },
    /// omp's: the URL schemes (`[{scheme, description?, writable?, immutable?}]`) whose
    /// resources the host serves. Validated by the handler with omp's texts.
    SetHostUriSchemes {
        schemes: Value,
    },
    SetModel {
        provider: String,
        model_id: String,
    },
    CycleModel,
    GetAvailableModels,
    /// Validated by the handler (`Invalid thinking level: <level>`).
    SetThinkingLevel {
        level: String,
    },
    CycleThinkingLevel,
    /// pi 1.6: the levels the current model takes.
    GetAvailableThinkingLevels,
    SetSteeringMode {
        #[schemars(with = "String")]
        mode: QueueMode,
    },
    SetFollowUpMode {
        #[schemars(with = "String")]
        mode: QueueMode,
    },
    SetInterruptMode {
        #[schemars(with = "String")]
        mode: InterruptMode,
    },
    Compact {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        custom_instructions: Option<String>,
    },
    SetAutoCompaction {
        enabled: bool,
    },
    SetAutoRetry {
        enabled: bool,
    },
    AbortRetry,
    Bash {
        command: String,
        /// pi 1.6: keep the command and its output out of the model's context.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exclude_from_context: Option<bool>,
    },
    AbortBash,
    GetSessionStats,
    ExportHtml {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_path: Option<String>,
    },
    SwitchSession {
        session_path: String,
    },
    Branch {
        entry_id: String,
    },
    /// pi's name for `branch`.
    Fork {
        entry_id: String,
    },
    /// pi 0.73: duplicate the current branch into a new session.
    Clone,
    /// rho: put back the files rho changed since a user message, move the conversation back
    /// to just before it, or both.
    Rewind {
        entry_id: String,
        #[serde(default)]
        restore: RewindRestore,
        #[serde(default)]
        force: bool,
        #[serde(default)]
        dry_run: bool,
    },
    GetBranchMessages,
    /// pi's name for `get_branch_messages`.
    GetForkMessages,
    /// pi 1.6: the session's entries in append order, after `since` when given.
    GetEntries {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since: Option<String>,
    },
    /// pi 1.6: the session as a tree of entries.
    GetTree,
    GetLastAssistantText,
    SetSessionName {
        name: String,
    },
    GetMessages,
    GetCommands,
    SetLocale {
        locale: String,
    },
    GetIntegrations,
    /// omp: switch to protocol `protocolVersion` (only 2: chunked large frames).
    NegotiateProtocol {
        #[schemars(with = "u32")]
        protocol_version: Value,
    },
    /// omp: the slash commands, in omp's shape.
    GetAvailableCommands,
    /// omp: the conversation a page at a time.
    GetMessagesPage {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cursor: Option<String>,
        /// Validated by the handler (1 to 256).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<u32>")]
        limit: Option<Value>,
    },
    /// omp: priority service tier on or off.
    SetFastMode {
        enabled: bool,
    },
    /// omp: which sub-agent frames to send (`off`, `progress`, `events`).
    SetSubagentSubscription {
        #[schemars(with = "String")]
        level: Value,
    },
    /// omp: the sub-agents running now.
    GetSubagents,
    /// omp: a sub-agent's transcript, read from a byte offset of its session file.
    GetSubagentMessages {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subagent_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_file: Option<String>,
        /// `null` is a value here (and not a finite number), as omp reads it.
        #[serde(
            default,
            deserialize_with = "crate::response::present_or_null",
            skip_serializing_if = "Option::is_none"
        )]
        #[schemars(with = "Option<u64>")]
        from_byte: Option<Value>,
    },
    /// omp: the providers one can log in to.
    GetLoginProviders,
    /// omp: log in to one of them (the URL to open comes as an `open_url` UI request, a pasted
    /// code is asked with `input`); answered when the login is done.
    Login {
        provider_id: String,
    },
    /// omp: replace the history with a handoff document written by the model.
    Handoff {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        custom_instructions: Option<String>,
    },
}

/// Every command name, for telling an unknown command from a malformed one.
pub const COMMAND_NAMES: &[&str] = <RpcCommand as strum::VariantNames>::VARIANTS;

impl RpcCommand {
    /// The command's `type` string.
    pub fn name(&self) -> &'static str {
        self.into()
    }

    /// Commands that interrupt or complete work act at once, never queued behind a slow
    /// command (docs/decisions.md D4).
    pub fn is_immediate(&self) -> bool {
        matches!(self, Self::Abort | Self::AbortBash | Self::AbortRetry)
    }
}

/// A host's answer to an `extension_ui_request` dialog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiResponse {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
}

/// `host_tool_result`: the host finished a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostToolResult {
    pub id: String,
    /// An `AgentToolResult` (`content` is an array), passed through verbatim.
    pub result: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

/// `host_tool_update`: progress of a host tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostToolUpdate {
    pub id: String,
    pub partial_result: Map<String, Value>,
}

/// `host_uri_result`: the host's answer to a `host_uri_request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostUriResult {
    pub id: String,
    /// The resource's text (a read), or the failure's text when `error` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// `text/markdown`, `application/json` or `text/plain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What one input line is.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// Blank or whitespace-only: ignored.
    Blank,
    UiResponse(UiResponse),
    HostToolResult(HostToolResult),
    HostToolUpdate(HostToolUpdate),
    HostUriResult(HostUriResult),
    Command {
        id: Option<Value>,
        command: RpcCommand,
    },
    /// Not a valid command: answer with this response and read on.
    Invalid(RpcResponse),
}

/// The prefix of every parse error.
pub const PARSE_ERROR_PREFIX: &str = "Failed to parse command: ";

/// Classifies and parses one input line (without its `\n`; a trailing `\r` is ignored).
pub fn parse_line(line: &[u8]) -> Inbound {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => return Inbound::Invalid(RpcResponse::parse_error(format!("input is not valid UTF-8 ({e})"))),
    };
    // Blank means JSON whitespace only: a line of, say, a vertical tab or a no-break space is
    // not a command and gets a parse error like any other garbage.
    if text.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        return Inbound::Blank;
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Inbound::Invalid(RpcResponse::parse_error(e.to_string())),
    };
    parse_value(value)
}

/// Classifies and parses one inbound JSON value.
pub fn parse_value(value: Value) -> Inbound {
    let Value::Object(mut map) = value else {
        if value.is_null() {
            return Inbound::Invalid(RpcResponse::parse_error("a command must be a JSON object, got null".into()));
        }
        return Inbound::Invalid(RpcResponse::unknown(None, None));
    };
    // Echoed as sent, `null` included (as the reference does: `id: command.id`).
    let id = map.get("id").cloned();
    let ty = match map.get("type") {
        None | Some(Value::Null) => return Inbound::Invalid(RpcResponse::unknown(id, None)),
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Inbound::Invalid(RpcResponse::unknown(id, Some(other.to_string()))),
    };
    match ty.as_str() {
        "extension_ui_response" => {
            return match serde_json::from_value::<UiResponse>(Value::Object(map)) {
                Ok(r) => Inbound::UiResponse(r),
                // A reply we cannot read names no dialog we could resolve: ignored.
                Err(_) => Inbound::Blank,
            };
        }
        "host_tool_result" if host_frame_ok(&map, "result") => {
            if let Ok(r) = serde_json::from_value::<HostToolResult>(Value::Object(map.clone())) {
                return Inbound::HostToolResult(r);
            }
        }
        "host_uri_result" if map.get("id").is_some_and(Value::is_string) => {
            if let Ok(r) = serde_json::from_value::<HostUriResult>(Value::Object(map.clone())) {
                return Inbound::HostUriResult(r);
            }
        }
        "host_tool_update" if host_frame_ok(&map, "partialResult") => {
            if let Ok(r) = serde_json::from_value::<HostToolUpdate>(Value::Object(map.clone())) {
                return Inbound::HostToolUpdate(r);
            }
        }
        _ => {}
    }
    if !COMMAND_NAMES.contains(&ty.as_str()) {
        return Inbound::Invalid(RpcResponse::unknown(id, Some(ty)));
    }
    map.remove("id");
    // The command takes the map's strings as they are (a prompt may be megabytes); what the
    // error path needs is the map's shape, kept without its long strings.
    let shape = skeleton(&map);
    match serde_path_to_error::deserialize::<_, RpcCommand>(Value::Object(map)) {
        Ok(command) => Inbound::Command { id, command },
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            let field = if path == "." || path.is_empty() { offending_field(&shape) } else { Some(path) };
            let message = match field {
                Some(field) => format!("Invalid field `{field}`: {inner}"),
                None => capitalize(&inner),
            };
            Inbound::Invalid(RpcResponse::error(id, ty, message))
        }
    }
}

/// `map` with every string longer than any name or enum value the commands take replaced by an
/// empty one: the same fields of the same types, for finding the one with the wrong type.
fn skeleton(map: &Map<String, Value>) -> Map<String, Value> {
    fn shape(value: &Value) -> Value {
        match value {
            Value::String(s) if s.len() > 256 => Value::String(String::new()),
            Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
            Value::Object(map) => Value::Object(skeleton(map)),
            other => other.clone(),
        }
    }
    map.iter().map(|(k, v)| (k.clone(), shape(v))).collect()
}

/// Serde loses the path inside an internally tagged enum, so a wrong-typed field is found by
/// taking each field out in turn: the one whose absence fixes the command (or turns the error
/// into "missing field" for that very field) is the culprit. Only runs on the error path.
fn offending_field(map: &Map<String, Value>) -> Option<String> {
    map.keys().filter(|k| k.as_str() != "type").find_map(|key| {
        let mut without = map.clone();
        without.remove(key);
        match serde_json::from_value::<RpcCommand>(Value::Object(without)) {
            Ok(_) => Some(key.clone()),
            Err(e) if e.to_string() == format!("missing field `{key}`") => Some(key.clone()),
            Err(_) => None,
        }
    })
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn host_frame_ok(map: &Map<String, Value>, payload: &str) -> bool {
    map.get("id").is_some_and(Value::is_string)
        && map.get(payload).and_then(Value::as_object).and_then(|o| o.get("content")).is_some_and(Value::is_array)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn invalid(line: &str) -> String {
        match parse_line(line.as_bytes()) {
            Inbound::Invalid(r) => rho_types::json::to_string(&r).unwrap(),
            other => panic!("expected an error for {line}, got {other:?}"),
        }
    }

    #[test]
    fn commands_parse_with_their_id() {
        let parsed =
            parse_line(br#"{"id":"req_1","type":"prompt","message":"hi","streamingBehavior":"followUp","extra":1}"#);
        assert_eq!(
            parsed,
            Inbound::Command {
                id: Some(json!("req_1")),
                command: RpcCommand::Prompt {
                    message: "hi".into(),
                    images: None,
                    streaming_behavior: Some(StreamingBehavior::FollowUp),
                    locale: None
                }
            }
        );
        assert_eq!(
            parse_line(b"{\"type\":\"set_steering_mode\",\"mode\":\"all\"}\r"),
            Inbound::Command { id: None, command: RpcCommand::SetSteeringMode { mode: QueueMode::All } }
        );
    }

    #[test]
    fn error_frames_follow_the_spec_and_decision_3() {
        assert!(
            invalid("{not json").starts_with(
                r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: "#
            )
        );
        assert_eq!(
            invalid(r#"{"id":"x","type":"frobnicate"}"#),
            r#"{"id":"x","type":"response","command":"frobnicate","success":false,"error":"Unknown command: frobnicate"}"#
        );
        assert_eq!(
            invalid(r#"{"id":"x"}"#),
            r#"{"id":"x","type":"response","success":false,"error":"Unknown command: undefined"}"#
        );
        assert_eq!(invalid("[1]"), r#"{"type":"response","success":false,"error":"Unknown command: undefined"}"#);
        assert!(invalid("null").contains(r#""command":"parse""#));
        assert_eq!(
            invalid(r#"{"id":"y","type":"prompt","message":5}"#),
            r#"{"id":"y","type":"response","command":"prompt","success":false,"error":"Invalid field `message`: invalid type: integer `5`, expected a string"}"#
        );
        assert_eq!(
            invalid(r#"{"type":"set_session_name"}"#),
            r#"{"type":"response","command":"set_session_name","success":false,"error":"Missing field `name`"}"#
        );
        assert!(invalid("{\"type\":\"abort\"}\u{0}\u{ff}").contains("parse"));
    }

    #[test]
    fn invalid_utf8_is_a_parse_error() {
        let r = parse_line(&[b'{', 0xff, b'}']);
        assert!(matches!(r, Inbound::Invalid(ref resp) if resp.command.as_deref() == Some("parse")));
    }

    #[test]
    fn blank_lines_and_sub_protocol_frames() {
        assert_eq!(parse_line(b"   "), Inbound::Blank);
        assert_eq!(parse_line(b" \t\r"), Inbound::Blank);
        assert!(matches!(parse_line(b"\x0b"), Inbound::Invalid(_)));
        assert!(matches!(parse_line("\u{a0}".as_bytes()), Inbound::Invalid(_)));
        assert!(matches!(
            parse_line(br#"{"type":"extension_ui_response","id":"u1","value":"x"}"#),
            Inbound::UiResponse(_)
        ));
        assert!(matches!(
            parse_line(br#"{"type":"host_tool_result","id":"h1","result":{"content":[]}}"#),
            Inbound::HostToolResult(_)
        ));
        assert!(matches!(
            parse_line(
                br#"{"type":"host_tool_update","id":"h1","partialResult":{"content":[{"type":"text","text":"w"}]}}"#
            ),
            Inbound::HostToolUpdate(_)
        ));
        assert_eq!(
            invalid(r#"{"type":"host_tool_result","id":"h1","result":{"content":"nope"}}"#),
            r#"{"id":"h1","type":"response","command":"host_tool_result","success":false,"error":"Unknown command: host_tool_result"}"#
        );
    }
}

#[cfg(test)]
mod names_tests {
    use super::*;

    /// strum's names are serde's tags: every name parses as the command of that name.
    #[test]
    fn every_name_is_the_serde_tag() {
        assert!(COMMAND_NAMES.len() >= 45, "{} names", COMMAND_NAMES.len());
        for name in COMMAND_NAMES {
            // A body with every field a command may need; unknown fields are ignored.
            let body = serde_json::json!({"type": name, "message": "m", "mode": "all", "level": "low", "enabled": true,
                "provider": "p", "modelId": "m", "command": "c", "sessionPath": "s", "entryId": "e", "name": "n",
                "locale": "en", "phases": [], "tools": [], "protocolVersion": 2});
            match parse_value(body) {
                Inbound::Command { command, .. } => assert_eq!(command.name(), *name),
                // Known, with a field this body gets wrong for it: still not an unknown command.
                Inbound::Invalid(r) if r.command.as_deref() == Some(name) => {
                    assert!(!r.error.unwrap_or_default().starts_with("Unknown command"), "{name}");
                }
                other => panic!("{name}: {other:?}"),
            }
        }
    }
}
