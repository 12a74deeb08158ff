//! What the extension host answers `init` and `replace` with: the extensions loaded and what
//! they registered (tools, commands, shortcuts, flags, renderers, markdown transformers, the
//! events they listen to), with the load errors and flag diagnostics.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::protocol::PackageResources;

/// What the loaded extensions registered.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Registrations {
    #[serde(default)]
    pub extensions: Vec<LoadedExtension>,
    #[serde(default)]
    pub tools: Vec<ToolRegistration>,
    #[serde(default)]
    pub commands: Vec<CommandRegistration>,
    #[serde(default)]
    pub shortcuts: Vec<ShortcutRegistration>,
    #[serde(default)]
    pub flags: Vec<FlagRegistration>,
    /// `customType`s with a message renderer.
    #[serde(default)]
    pub renderers: Vec<String>,
    /// `customType`s of custom entries with a renderer (`registerEntryRenderer`).
    #[serde(default)]
    pub entry_renderers: Vec<String>,
    /// Whether some extension chooses how tool calls are drawn (`registerToolRenderer`): then
    /// every tool's call and result are asked of the host.
    #[serde(default)]
    pub tool_renderers: bool,
    /// The surfaces (`messageType`s) some markdown transformer runs on.
    #[serde(default)]
    pub markdown_transformers: Vec<String>,
    /// The events some handler listens to; only these are sent.
    #[serde(default)]
    pub handlers: Vec<String>,
    /// Problems with the command line's extension flags.
    #[serde(default)]
    pub diagnostics: Vec<Diagnostic>,
    /// Extensions that failed to load.
    #[serde(default)]
    pub errors: Vec<LoadError>,
    /// What the packages brought besides extensions (at start-up only).
    #[serde(default)]
    pub package_resources: Option<PackageResources>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoadedExtension {
    pub path: String,
    pub resolved_path: String,
}

/// A tool an extension registered (`pi.registerTool`).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolRegistration {
    pub name: String,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub description: String,
    pub parameters: Value,
    #[serde(default)]
    pub prompt_snippet: Option<String>,
    #[serde(default)]
    pub prompt_guidelines: Option<Vec<String>>,
    /// The tool has `prepareArguments`: its arguments are prepared and validated in the host.
    #[serde(default)]
    pub prepare_arguments: bool,
    /// The tool draws its call or its result itself (`renderCall`, `renderResult`).
    #[serde(default)]
    pub render_call: bool,
    #[serde(default)]
    pub render_result: bool,
    #[serde(default)]
    pub source_info: Option<Value>,
}

/// A command an extension registered (`pi.registerCommand`); `name` is its invocation name
/// (`review:2` when two extensions register `review`).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandRegistration {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub source_info: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShortcutRegistration {
    pub shortcut: String,
    #[serde(default)]
    pub description: Option<String>,
    pub extension_path: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlagRegistration {
    pub name: String,
    /// `boolean` or `string`.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub default: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct Diagnostic {
    /// `error` or `warning`.
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct LoadError {
    pub path: String,
    pub error: String,
}
