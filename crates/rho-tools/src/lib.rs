//! rho's built-in tools: `read`, `bash`, `edit`, `write`, `grep`, `find` and `ls`, each in its own
//! module behind rho-agent's [`Tool`] trait, plus the user shell executor behind the RPC `bash`
//! command ([`user_bash`]). Shared machinery lives beside them: path resolution ([`path`]),
//! truncation ([`truncate`]), process groups ([`process`]) and the bash output spill file.
//!
//! grep, find and ls run in-process on ripgrep's crates (`ignore`, `grep-searcher`, `globset`),
//! so rho needs no `rg`/`fd` binary.
#![deny(clippy::print_stdout)]

use std::path::PathBuf;
use std::sync::Arc;

use rho_agent::Tool;

mod abort;
mod args;
pub mod background;
mod background_tools;
mod bash;
pub mod checkpoints;
mod collate;
mod edit;
mod edit_apply;
mod edit_args;
mod edit_diff;
mod edit_match;
mod file_access;
mod find;
mod grep;
pub mod guardian;
mod host_uri;
pub mod image_resize;
mod js;
mod ls;
mod os_error;
mod output;
pub mod params;
pub mod path;
pub mod process;
mod read;
mod read_window;
mod sandbox_check;
pub mod shell;
mod terminal;
pub mod truncate;
pub mod user_bash;
pub mod walk;
mod web_fetch;
mod web_search;
mod write;

pub use background_tools::{BashOutputTool, KillBashTool};
pub use bash::BashTool;
pub use edit::EditTool;
pub use edit_diff::{DiffResult, generate_diff_string};
pub use file_access::FileAccess;
pub use find::FindTool;
pub use grep::GrepTool;
pub use host_uri::{HostTarget, HostUris};
pub use ls::LsTool;
pub use output::remove_spill_files;
pub use read::{ReadTool, image_mime};
pub use terminal::{TerminalCommand, TerminalRun, Terminals};
pub use truncate::{TruncatedBy, TruncationOptions, TruncationResult, format_size};
pub use user_bash::{OnOutput, UserBashError, UserBashResult, run_user_bash};
pub use web_fetch::WebFetchTool;
pub use web_search::{SearchApi, WebSearchTool};
pub use write::WriteTool;

/// What the tools need to know about the session and the user's settings.
#[derive(Debug, Clone)]
pub struct ToolOptions {
    /// The session's working directory: relative paths and `bash` start here.
    pub cwd: PathBuf,
    /// Settings `shellPath`: the shell `bash` runs commands with.
    pub shell_path: Option<PathBuf>,
    /// Settings `shellCommandPrefix`: a line run before every command.
    pub shell_command_prefix: Option<String>,
    /// Settings `images.autoResize` (default true): shrink images `read` returns.
    pub auto_resize_images: bool,
    /// Settings `images.blockImages`: `read` returns no image data.
    pub block_images: bool,
    /// rho's agent directory; `<agent_dir>/bin` is put first on the shell's `PATH`.
    pub agent_dir: Option<PathBuf>,
    /// The settings file named in the error for a missing `shellPath`.
    pub settings_path: Option<PathBuf>,
    /// Settings `bash.environment`: variables set for every shell command.
    pub environment: Vec<(String, String)>,
    /// Where `read`, `edit` and `write` go for text files; `None` is the local file system.
    pub file_access: Option<Arc<dyn FileAccess>>,
    /// Where `bash` runs its commands; `None` is a local process group.
    pub terminals: Option<Arc<dyn Terminals>>,
    /// The host's URL schemes `read` and `write` reach (RPC's `set_host_uri_schemes`).
    pub host_uris: Option<Arc<dyn HostUris>>,
    /// The sandbox commands run in and writes are checked against; `None` is full access.
    pub sandbox: Option<Arc<rho_sandbox::Sandbox>>,
    /// Settings `bash.inheritProviderKeys`: commands see the provider key variables rho reads.
    pub inherit_provider_keys: bool,
    /// The session as the `bash` tool's commands see it; `None` tells them nothing.
    pub session_environment: Option<Arc<dyn SessionEnvironment>>,
    /// Where `write` and `edit` report the files they change; `None` keeps nothing.
    pub checkpoints: Option<Arc<dyn checkpoints::Checkpoints>>,
    /// The session's background commands: `bash` takes `run_in_background` when set.
    pub background: Option<Arc<background::BackgroundJobs>>,
}

/// The session as the model's commands see it, read when each `bash` command starts (pi 1.6's
/// `PI_SESSION_ID`, `PI_SESSION_FILE`, `PI_PROVIDER`, `PI_MODEL`, `PI_REASONING_LEVEL`); the
/// user's own commands (`!cmd`, a host's `bash`) do not get them.
pub trait SessionEnvironment: Send + Sync + std::fmt::Debug {
    fn variables(&self) -> Vec<(&'static str, String)>;
}

/// Every process rho starts for a shell carries these markers (pi 1.6's): `AI_AGENT` names the
/// agent that started it, `PI_CODING_AGENT` says it runs inside a pi-family agent.
pub const PROCESS_MARKERS: [(&str, &str); 2] = [("AI_AGENT", "rho"), ("PI_CODING_AGENT", "true")];

impl Default for ToolOptions {
    fn default() -> Self {
        Self {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            shell_path: None,
            shell_command_prefix: None,
            auto_resize_images: true,
            block_images: false,
            agent_dir: None,
            settings_path: None,
            environment: Vec::new(),
            file_access: None,
            terminals: None,
            host_uris: None,
            sandbox: None,
            inherit_provider_keys: false,
            session_environment: None,
            checkpoints: None,
            background: None,
        }
    }
}

impl ToolOptions {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self { cwd: cwd.into(), ..Self::default() }
    }
}

const BUILTIN_TOOL_NAMES: &[&str] = &["read", "bash", "edit", "write", "grep", "find", "ls"];
const DEFAULT_TOOL_NAMES: &[&str] = &["read", "bash", "edit", "write"];
const READ_ONLY_TOOL_NAMES: &[&str] = &["read", "grep", "find", "ls"];

/// Every built-in tool, in the reference's order.
pub fn builtin_tool_names() -> &'static [&'static str] {
    BUILTIN_TOOL_NAMES
}

/// The tools active when no `--tools` is given.
pub fn default_tool_names() -> &'static [&'static str] {
    DEFAULT_TOOL_NAMES
}

/// The tools that never change files.
pub fn read_only_tool_names() -> &'static [&'static str] {
    READ_ONLY_TOOL_NAMES
}

/// The system prompt's one-line summary of a built-in tool (`- <name>: <blurb>`).
pub fn blurb(name: &str) -> Option<&'static str> {
    Some(match name {
        "read" => "Read file contents",
        "bash" => "Execute bash commands (ls, grep, find, etc.)",
        "edit" => "Make surgical edits to files (find exact text and replace)",
        "write" => "Create or overwrite files",
        "grep" => "Search file contents for patterns (respects .gitignore)",
        "find" => "Find files by glob pattern (respects .gitignore)",
        "ls" => "List directory contents",
        "web_fetch" => "Fetch a web page or other text over http or https",
        "web_search" => "Search the web",
        "bash_output" => "Read the new output of a background command",
        "kill_bash" => "Stop a background command",
        _ => return None,
    })
}

/// The warning for a `--tools` name that is not a built-in.
pub fn unknown_tool_warning(name: &str) -> String {
    format!("Warning: Unknown tool \"{name}\". Valid tools: {}", BUILTIN_TOOL_NAMES.join(", "))
}

/// The built-in tool called `name`, or `None` for an unknown name.
pub fn create_tool(name: &str, options: &ToolOptions) -> Option<Arc<dyn Tool>> {
    let options = options.clone();
    Some(match name {
        "read" => Arc::new(ReadTool::new(options)),
        "bash" => Arc::new(BashTool::new(options)),
        "edit" => Arc::new(EditTool::new(options)),
        "write" => Arc::new(WriteTool::new(options)),
        "grep" => Arc::new(GrepTool::new(options)),
        "find" => Arc::new(FindTool::new(options)),
        "ls" => Arc::new(LsTool::new(options)),
        _ => return None,
    })
}

/// The built-in tools named, in the order given; unknown names are skipped (see
/// [`unknown_tool_warning`]).
pub fn create_tools<S: AsRef<str>>(names: &[S], options: &ToolOptions) -> Vec<Arc<dyn Tool>> {
    names.iter().filter_map(|name| create_tool(name.as_ref(), options)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_a_tool_and_a_blurb() {
        let options = ToolOptions::new("/tmp");
        for name in builtin_tool_names() {
            let tool = create_tool(name, &options).unwrap();
            assert_eq!(tool.name(), *name);
            assert!(blurb(name).is_some());
            let schema = tool.parameters();
            assert_eq!(schema["type"], "object");
            for (_, prop) in schema["properties"].as_object().unwrap() {
                assert!(prop["description"].is_string());
            }
            assert!(!tool.description().is_empty());
        }
        assert!(create_tool("nope", &options).is_none());
        assert_eq!(create_tools(&["ls", "nope", "read"], &options).len(), 2);
        assert_eq!(default_tool_names(), ["read", "bash", "edit", "write"]);
    }

    #[test]
    fn unknown_tool_warning_text() {
        assert_eq!(
            unknown_tool_warning("x"),
            "Warning: Unknown tool \"x\". Valid tools: read, bash, edit, write, grep, find, ls"
        );
    }
}
