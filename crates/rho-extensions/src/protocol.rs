//! The messages between rho and its extension host: newline-delimited JSON over a Unix socket,
//! one serde enum per direction. rho's messages that want an answer carry an `id` and are
//! answered with a `result`; the host's requests (dialogs, session actions that return
//! something) carry an `id` and are answered with a `response`. Payloads that are pi's own
//! structures (events, messages, schemas, session entries) travel as JSON values: the host hands
//! them to pi's code as they are.

pub use crate::registrations::{
    CommandRegistration, Diagnostic, FlagRegistration, LoadError, LoadedExtension, Registrations, ShortcutRegistration,
    ToolRegistration,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What rho sends the host.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum ToHost {
    /// Load the extensions and bind them to this session; answered with [`Registrations`].
    Init(Box<Init>),
    /// Session entries appended since the last sync (or the whole session after a `reset`).
    Sync(SessionSync),
    /// What the extensions read synchronously: the fields of [`HostState`] that changed.
    State {
        state: Value,
    },
    /// A run began: `ctx.signal` is a fresh signal until `run_end`.
    RunStart,
    /// The run was aborted: `ctx.signal` fires.
    RunAbort,
    RunEnd,
    /// An event for the handlers; `kind` picks how results combine (pi's `emit*` methods).
    Event {
        kind: String,
        event: Value,
    },
    /// The session was replaced (new, resume, fork) or reloaded: the extensions are torn down
    /// and loaded again; answered with the new [`Registrations`].
    Replace {
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        previous_session_file: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        target_session_file: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        sync: Option<SessionSync>,
    },
    /// Run a registered tool; `tool_update`s stream its partial results.
    Tool {
        name: String,
        tool_call_id: String,
        params: Value,
    },
    /// The lines an extension's renderer draws for a custom message or a tool's call or result
    /// at `width`; answered with `{lines}`, or null when it has none.
    Render(Box<RenderRequest>),
    /// Stream a reply with an extension's `streamSimple` (registered for `model.api`): pi-ai's
    /// stream events come back as `stream_event`s, the answer ends the stream.
    ProviderStream {
        model: Value,
        context: Value,
        options: Value,
    },
    /// Ask a virtual model's `route` where one request goes; answered with `{provider, id,
    /// thinkingLevel}`, and `state` when the router returned new state. (The model's id is
    /// `modelId`: `id` is the request's.)
    Route(Box<RouteRequest>),
    /// pi 1.6's `project_trust` for the project at `cwd`, asked of extensions loaded without the
    /// project's own: answered with the first `{trusted: "yes" | "no", remember}`, or null when
    /// every handler left it undecided.
    ProjectTrust {
        cwd: String,
    },
    /// Run a registered command (`/name args`).
    Command {
        name: String,
        args: String,
    },
    /// Run the handler of a registered shortcut.
    Shortcut {
        shortcut: String,
    },
    /// Abort the tool call or command that request `target` started.
    Cancel {
        target: String,
    },
    /// The answer to one of the host's requests.
    Response {
        id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A key for the terminal component `target`, in the terminal's own byte sequence.
    ComponentInput {
        target: String,
        data: String,
    },
    /// Sets the text of the extension's editor (rho's Ctrl+C clears it).
    EditorText {
        text: String,
    },
    /// The terminal's new size: open components render again.
    Resize(TerminalSize),
    /// Answered once the handlers of every event sent before are done.
    Flush,
    /// Answered at once, outside the event queue: the host's event loop still runs.
    Ping,
    /// rho is exiting: `session_shutdown` runs, then the host is closed.
    Shutdown,
}

/// One request made with a virtual model (see [`ToHost::Route`]): pi 1.6's `ModelRouteRequest`
/// without the models, which the host looks up.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RouteRequest {
    pub provider: String,
    pub model_id: String,
    /// `user`, `continuation`, `retry` or `direct`.
    pub reason: String,
    pub thinking_level: String,
    /// The conversation the request is made with, as pi-ai's messages.
    pub messages: Value,
    /// The router's state last stored on the branch (never for `direct`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// For `retry`: the failed reply, which `messages` no longer holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<Value>,
}

/// What to render (see [`ToHost::Render`]).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "target", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum RenderRequest {
    /// A custom message, by its `customType`'s renderer.
    Message { message: Value, width: u16, expanded: bool },
    /// A tool's call, by the tool's `renderCall`.
    ToolCall { tool_name: String, tool_call_id: String, args: Value, width: u16, expanded: bool },
    /// A custom entry (`appendEntry`), by its `customType`'s entry renderer.
    Entry { entry: Value, width: u16, expanded: bool },
    /// Markdown rho is about to draw, through the extensions' markdown transformers
    /// (`registerMarkdownTransformer`) in load order; the answer is `{markdown}`.
    Markdown {
        markdown: String,
        /// The surface: `user`, `assistant`, `assistant-thinking`, `custom`, `summary` or
        /// `changelog`.
        message_type: String,
        /// A partial assistant block still streaming.
        is_streaming: bool,
        /// The columns the markdown is drawn in.
        available_width: u16,
        /// The session entry's id, for a message drawn from the session file.
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        /// Its ISO time, with the id.
        #[serde(skip_serializing_if = "Option::is_none")]
        timestamp: Option<String>,
    },
    /// A tool's result, by the tool's `renderResult`.
    ToolResult {
        tool_name: String,
        tool_call_id: String,
        args: Value,
        result: Value,
        is_error: bool,
        width: u16,
        expanded: bool,
    },
}

/// The size of the terminal that draws the extensions' components.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TerminalSize {
    pub columns: u16,
    pub rows: u16,
}

/// What the host is started with.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Init {
    pub cwd: String,
    pub agent_dir: String,
    /// `-e` values as given: files, folders and package sources, resolved by pi's package
    /// manager in the host as pi resolves them.
    pub cli: Vec<String>,
    /// `--no-extensions`: only the `-e` ones.
    pub no_extensions: bool,
    /// The project is trusted: pi's package manager resolves its settings and folders too
    /// (otherwise only the user's own and the `-e` ones).
    pub trusted_project: bool,
    /// The entry files only rho looks for (`.rho/extensions/`); the host loads them after what
    /// pi's package manager resolves.
    pub extensions: Vec<String>,
    /// `--name value` / `--name` from the command line, for the flags extensions register.
    pub flag_values: Vec<(String, FlagValue)>,
    /// pi's `ctx.hasUI`: false in print and JSON mode.
    #[serde(rename = "hasUI")]
    pub has_ui: bool,
    /// pi's `ctx.mode`: `tui`, `rpc`, `json` or `print`.
    pub mode: &'static str,
    /// How long a handler may run before the host goes on to the next event (rho gives up on
    /// the answer then too).
    pub hook_timeout_ms: u64,
    /// The theme setting, for `ctx.ui.theme`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// The terminal that draws components (`ctx.ui.custom()`, widget factories): only the
    /// interactive mode has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal: Option<TerminalSize>,
    pub session: SessionSync,
    /// [`HostState`], all of it.
    pub state: Value,
    /// The APIs rho speaks itself: a pi-ai `Provider` an extension registers
    /// (`pi.registerProvider(provider)`) is spoken to by rho for these, by its own stream for
    /// others.
    pub spoken_apis: &'static [&'static str],
}

/// What the extensions read without awaiting (`ctx.model`, `pi.getActiveTools()`,
/// `ctx.isIdle()`, …): rho sends the fields that changed (`state`, and `init`'s `state`), the
/// host keeps the rest as it last heard them. pi's own structures travel as JSON values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostState {
    /// `ctx.model`.
    pub model: Option<Value>,
    /// `pi.getThinkingLevel()`.
    pub thinking_level: String,
    /// `ctx.isIdle()`.
    pub idle: bool,
    /// `ctx.hasPendingMessages()`: how many wait.
    pub pending_messages: usize,
    /// `pi.getSessionName()`.
    pub session_name: Option<String>,
    /// `pi.getActiveTools()`.
    pub active_tools: Vec<String>,
    /// `pi.getAllTools()`: pi's tool info objects.
    pub all_tools: Vec<Value>,
    /// `ctx.getSystemPrompt()`.
    pub system_prompt: String,
    /// `ctx.getContextUsage()`.
    pub context_usage: Option<Value>,
    /// rho's own slash commands, for `pi.getCommands()` (the extensions' are the host's).
    pub commands: Vec<Value>,
    /// `ctx.scopedModels`: the models Ctrl+P cycles.
    pub scoped_models: Vec<ScopedModelState>,
}

/// One of [`HostState::scoped_models`] (pi's `ScopedModel`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScopedModelState {
    pub model: Value,
    pub thinking_level: Option<String>,
}

/// The skills, prompt templates and themes packages (and `-e` folders) bring.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PackageResources {
    #[serde(default)]
    pub skills: Vec<String>,
    #[serde(default)]
    pub prompts: Vec<String>,
    /// Theme files and folders (pi's theme format, which rho's terminal reads).
    #[serde(default)]
    pub themes: Vec<String>,
}

/// A command-line flag's value: `--name` alone, or `--name value`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum FlagValue {
    Set(bool),
    Text(String),
}

/// Session entries for the host's copy of the session.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSync {
    /// Start over with this header (a new or switched session); the entries follow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset: Option<SessionReset>,
    /// Entries in pi's format, oldest first.
    pub entries: Vec<Value>,
    pub leaf_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionReset {
    pub header: Value,
    pub file: Option<String>,
    pub dir: Option<String>,
}

/// What the host sends rho.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum FromHost {
    /// The host is up (its first line).
    Hello { pid: u32 },
    /// The answer to rho's request `id`.
    Result {
        id: String,
        #[serde(default)]
        value: Option<Value>,
        #[serde(default)]
        error: Option<String>,
    },
    /// A running tool's partial result.
    ToolUpdate { id: String, partial: Value },
    /// An event of a reply an extension streams (`provider_stream`).
    StreamEvent { id: String, event: Value },
    /// A handler, tool or command failed (pi's `extension_error`).
    Error(ExtensionFault),
    /// Tools or commands were registered after start-up.
    Registrations(Box<Registrations>),
    /// `ctx.ui`: a dialog (with `id`, answered with its result) or a notice (without).
    Ui {
        #[serde(default)]
        id: Option<String>,
        #[serde(flatten)]
        request: serde_json::Map<String, Value>,
    },
    /// A dialog's signal fired: withdraw it.
    UiCancel { target: String },
    /// A terminal component's lines, each time it renders.
    Component(ComponentFrame),
    /// A terminal component is gone (done, replaced, or its extensions unloaded).
    ComponentClose { id: String },
    /// The extension's editor submitted its text (a prompt).
    EditorSubmit { text: String },
    /// The extension's editor handed an app action (`app.interrupt`, `app.clear`, …) to rho.
    EditorAction {
        action: String,
        /// The editor's text then.
        #[serde(default)]
        text: String,
    },
    /// Something the extensions asked of the session.
    Action {
        #[serde(default)]
        id: Option<String>,
        #[serde(flatten)]
        action: Action,
    },
}

/// One render of a terminal component: the lines pi-tui's `render(width)` gave, with their
/// ANSI styles.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComponentFrame {
    pub id: String,
    pub kind: ComponentKind,
    pub lines: Vec<String>,
    /// A widget's key and placement (`aboveEditor`, `belowEditor`).
    #[serde(default)]
    pub widget_key: Option<String>,
    #[serde(default)]
    pub widget_placement: Option<String>,
}

/// Where a component is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ComponentKind {
    /// `ctx.ui.custom()`: in the editor's place, with the keys.
    Editor,
    /// `ctx.ui.custom(…, { overlay: true })`: over the screen, with the keys.
    Overlay,
    /// A widget factory: above or below the editor, without the keys.
    Widget,
    /// `ctx.ui.setFooter()`: in the place of rho's footer.
    Footer,
    /// `ctx.ui.setHeader()`: at start, in the place of rho's header.
    Header,
    /// `ctx.ui.setEditorComponent()`: in the place of rho's editor, with the keys rho does not
    /// take itself.
    CustomEditor,
}

/// A virtual model as an extension defines it (pi 1.6's `VirtualModelDefinition`, without its
/// `route`).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VirtualModelDefinition {
    pub provider: String,
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    /// The levels offered for selection (`["off"]` when not given).
    #[serde(default)]
    pub thinking_levels: Option<Vec<String>>,
    #[serde(default)]
    pub context_window: Option<u64>,
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// `text`, `image` (both when not given).
    #[serde(default)]
    pub input: Option<Vec<String>>,
}

/// An MCP server an extension registered: its name, its `mcpServers` entry, and the extension.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerRegistration {
    pub name: String,
    pub config: Value,
    pub extension_path: String,
}

/// What an extension asked the session to do (pi's `ExtensionAPI` and context actions).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Action {
    SendMessage {
        message: Value,
        #[serde(default)]
        options: Option<SendOptions>,
        /// The event whose handler sent it, when one did (`agent_end`: the run is ending).
        #[serde(default)]
        during: Option<String>,
    },
    SendUserMessage {
        content: Value,
        #[serde(default)]
        options: Option<SendOptions>,
    },
    AppendEntry {
        custom_type: String,
        #[serde(default)]
        data: Option<Value>,
    },
    SetSessionName {
        name: String,
    },
    SetLabel {
        entry_id: String,
        #[serde(default)]
        label: Option<String>,
    },
    SetActiveTools {
        names: Vec<String>,
    },
    SetModel {
        provider: String,
        model_id: String,
    },
    SetThinkingLevel {
        level: String,
    },
    Abort,
    Shutdown,
    Compact {
        #[serde(default)]
        custom_instructions: Option<String>,
    },
    RegisterProvider {
        provider: String,
        config: Value,
        #[serde(default)]
        stream_simple: bool,
    },
    UnregisterProvider {
        provider: String,
    },
    /// `pi.registerVirtualModel(definition)`; its `route` stays in the host ([`ToHost::Route`]).
    RegisterVirtualModel {
        definition: VirtualModelDefinition,
    },
    UnregisterVirtualModel {
        provider: String,
        id: String,
    },
    /// The MCP servers the extensions have registered now (`pi.registerMcpServer`), all of them,
    /// after each change.
    SetMcpServers {
        servers: Vec<McpServerRegistration>,
    },
    WaitForIdle,
    NewSession {
        #[serde(default)]
        parent_session: Option<String>,
        /// Entries the extension's `setup` appended to the new session.
        #[serde(default)]
        entries: Option<Vec<Value>>,
    },
    Fork {
        entry_id: String,
        #[serde(default)]
        position: Option<String>,
    },
    NavigateTree {
        target_id: String,
        #[serde(default)]
        summarize: Option<bool>,
        #[serde(default)]
        custom_instructions: Option<String>,
        #[serde(default)]
        replace_instructions: Option<bool>,
        #[serde(default)]
        label: Option<String>,
    },
    SwitchSession {
        session_path: String,
    },
    Reload,
}

/// `sendMessage` / `sendUserMessage` options.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendOptions {
    /// `steer` (the default), `followUp` or `nextTurn`.
    #[serde(default)]
    pub deliver_as: Option<String>,
    #[serde(default)]
    pub trigger_turn: Option<bool>,
    /// `sendUserMessage`: the text is read as a typed prompt (an extension command, a prompt
    /// template, a skill) rather than sent as it is.
    #[serde(default)]
    pub expand_prompt_templates: Option<bool>,
}

/// A failure inside extension code.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionFault {
    pub extension_path: String,
    pub event: String,
    pub error: String,
    #[serde(default)]
    pub stack: Option<String>,
}

/// One line for the host: the message, with `id` when it is a request.
pub(crate) fn encode(id: Option<&str>, message: &ToHost) -> Vec<u8> {
    #[derive(Serialize, JsonSchema)]
    struct Envelope<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a str>,
        #[serde(flatten)]
        message: &'a ToHost,
    }
    let mut line = serde_json::to_vec(&Envelope { id, message }).unwrap_or_else(|e| {
        // Only a non-string map key could fail here; the host answers the id with an error.
        serde_json::to_vec(&serde_json::json!({"type": "invalid", "id": id, "error": e.to_string()}))
            .unwrap_or_default()
    });
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn requests_carry_their_id_beside_the_tagged_message() {
        let line = encode(Some("r7"), &ToHost::Command { name: "review".into(), args: "all".into() });
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value, json!({"id": "r7", "type": "command", "name": "review", "args": "all"}));
        let line = encode(None, &ToHost::RunAbort);
        assert_eq!(line, b"{\"type\":\"run_abort\"}\n");
    }

    #[test]
    fn host_actions_and_dialogs_parse_into_their_variants() {
        let action: FromHost = serde_json::from_value(json!({
            "type": "action", "id": "h3", "action": "setModel", "provider": "anthropic", "modelId": "claude"
        }))
        .unwrap();
        let FromHost::Action { id, action: Action::SetModel { provider, model_id } } = action else {
            panic!("{action:?}")
        };
        assert_eq!((id.as_deref(), provider.as_str(), model_id.as_str()), (Some("h3"), "anthropic", "claude"));

        let notice: FromHost =
            serde_json::from_value(json!({"type": "action", "action": "sendMessage", "message": {"customType": "x"}}))
                .unwrap();
        assert!(matches!(notice, FromHost::Action { id: None, action: Action::SendMessage { .. } }));

        let ui: FromHost = serde_json::from_value(
            json!({"type": "ui", "id": "h1", "method": "confirm", "title": "t", "message": "m"}),
        )
        .unwrap();
        let FromHost::Ui { id, request } = ui else { panic!() };
        assert_eq!(id.as_deref(), Some("h1"));
        assert_eq!(Value::Object(request), json!({"method": "confirm", "title": "t", "message": "m"}));
    }
}
