//! The command line: `rho [options] [@files...] [messages...]`, with pi's flags
//! (docs/agent-behavior.md, "Command line") plus the ones RPC hosts of the pi family pass.

use std::path::PathBuf;

use clap::{ArgAction, Parser, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// The final answer as text (like -p)
    Text,
    /// Every event as one JSON line
    Json,
    /// The pi-family RPC protocol on stdin/stdout
    Rpc,
    /// The Agent Client Protocol on stdin/stdout (Zed and other editors)
    Acp,
}

/// `--rpc-message-update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MessageUpdate {
    /// The step alone, with the reply's usage so far (pi 1.6)
    Delta,
    /// The step with the whole message so far (the seed protocol: omp, xcsh)
    Cumulative,
}

/// rho: a coding agent.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "rho",
    version,
    disable_version_flag = true,
    about = "rho, a coding agent",
    long_about = "rho, a coding agent. Give it a task as a message; files as @path arguments.\n\n\
                  Piped stdin, the @files and the first message are one prompt; each further message runs as\n\
                  its own prompt, in order. pi's flags are understood (-nc, -nt, -nbt, -ns, -np, --fork, …).",
    after_help = "Commands:\n  rho install <source> [-l]   Install a pi package (npm:, git:, a URL or a path) and add it to settings\n  rho remove <source> [-l]    Remove a package (also: uninstall)\n  rho update [source]         Update packages not pinned to a version\n  rho list                    List the packages in settings\n  rho config                  Turn a package's extensions, skills, prompt templates and themes on or off\n  rho login|logout <provider> A subscription login (anthropic, openai-codex, github-copilot, …)\n  rho trust|untrust [dir]     Approve a project's MCP servers, extensions and command settings\n\nExamples:\n  rho -p \"fix the failing test\"\n  rho --model anthropic/claude-sonnet-4-5:high -p @src/main.rs \"explain this\"\n  git diff | rho -p \"write a commit message\"\n  rho --mode rpc --no-session        (drive rho from another program)\n  rho --mode acp                     (an editor's agent: Zed's agent_servers)\n  rho login anthropic                (a Claude Pro/Max login, kept in auth.json as pi keeps it)\n\n\
                  Environment: ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, … (one per provider);\n\
                  RHO_CODING_AGENT_DIR moves the agent directory (default ~/.rho/agent; a pi user's ~/.pi/agent\n\
                  or PI_CODING_AGENT_DIR when rho has none); RHO_CODING_AGENT_SESSION_DIR (or pi's\n\
                  PI_CODING_AGENT_SESSION_DIR) the session directory; HTTPS_PROXY, NO_PROXY and\n\
                  NODE_EXTRA_CA_CERTS as in pi."
)]
pub struct Cli {
    /// Print the final answer and exit (non-interactive)
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Output mode
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<Mode>,

    /// Provider of --model (e.g. anthropic, openai, google, or one from models.json)
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,

    /// Model: provider/id, an id, part of one, optionally with :<thinking>
    #[arg(long, value_name = "PATTERN")]
    pub model: Option<String>,

    /// Models cycle_model walks: comma-separated patterns or globs, each optionally :<thinking>
    #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
    pub models: Option<Vec<String>>,

    /// Thinking level: off, minimal, low, medium, high, xhigh, max
    #[arg(long, value_name = "LEVEL")]
    pub thinking: Option<String>,

    /// API key for the selected model's provider (not saved)
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,

    /// The tools to offer (comma-separated: read, bash, edit, write, grep, find, ls, and rho's
    /// todo_write, ask, task); only +name/-name entries change the default selection instead
    #[arg(short = 't', long, value_name = "LIST", value_delimiter = ',', allow_hyphen_values = true)]
    pub tools: Option<Vec<String>>,

    /// Tools to keep out, whatever their source (comma-separated names or patterns with *, MCP
    /// tools included; pi: -xt)
    #[arg(long, value_name = "LIST", value_delimiter = ',', allow_hyphen_values = true)]
    pub exclude_tools: Option<Vec<String>>,

    /// No built-in tools
    #[arg(long)]
    pub no_tools: bool,

    /// No built-in tools (read, bash, edit, …); rho's own tools stay (pi: -nbt)
    #[arg(long)]
    pub no_builtin_tools: bool,

    /// Do not read AGENTS.md / CLAUDE.md context files (pi: -nc)
    #[arg(long)]
    pub no_context_files: bool,

    /// Continue from a copy of a session (a path or an id prefix) in a new session file
    #[arg(long, value_name = "PATH|ID")]
    pub fork: Option<String>,

    /// Accepted for pi's command line; rho does nothing online at start-up
    #[arg(long)]
    pub offline: bool,

    /// Load a pi extension (a .ts/.js file or a folder; repeatable)
    #[arg(short = 'e', long = "extension", value_name = "PATH", action = ArgAction::Append)]
    pub extensions: Vec<String>,

    /// Load only the -e extensions, not those of the settings and the extension folders (pi: -ne)
    #[arg(long)]
    pub no_extensions: bool,

    /// Load themes from this file or folder too (repeatable); the `theme` setting or /settings picks one
    #[arg(long = "theme", value_name = "PATH", action = ArgAction::Append)]
    pub themes: Vec<PathBuf>,

    /// Do not look for themes in the theme folders or the `themes` setting (--theme paths still load)
    #[arg(long)]
    pub no_themes: bool,

    /// Replace the system prompt (text, or a file to read it from)
    #[arg(long, value_name = "TEXT|FILE")]
    pub system_prompt: Option<String>,

    /// Append to the system prompt (text, or a file to read it from; repeatable, in order)
    #[arg(long, value_name = "TEXT|FILE", action = ArgAction::Append)]
    pub append_system_prompt: Vec<String>,

    /// Continue the most recent session of this directory
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,

    /// Resume a session: pick one of this directory's (in a terminal; else the most recent)
    #[arg(short = 'r', long)]
    pub resume: bool,

    /// Use this session file, or the session whose id starts with this
    #[arg(long, value_name = "PATH|ID")]
    pub session: Option<String>,

    /// Keep sessions in this directory
    #[arg(long, value_name = "DIR")]
    pub session_dir: Option<PathBuf>,

    /// Do not save the session
    #[arg(long)]
    pub no_session: bool,

    /// Name the session (its display name in /resume and the session list)
    #[arg(short = 'n', long, value_name = "NAME")]
    pub name: Option<String>,

    /// Use this directory's session with this id, or start one with it
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,

    /// Start no MCP server and offer no MCP tool
    #[arg(long)]
    pub no_mcp: bool,

    /// The interactive screen: regular (rho's scrollback screen) or fullscreen (pi 1.6's
    /// default, which rho draws as the regular one)
    #[arg(long, value_name = "MODE", value_parser = ["fullscreen", "regular"])]
    pub tui_mode: Option<String>,

    /// The theme of the interactive mode for this run (a name, or dark/light names as name/name)
    #[arg(long, value_name = "NAME")]
    pub use_theme: Option<String>,

    /// Confine the model's commands and writes: read-only, workspace-write (the project and the
    /// temp dir; no network unless sandbox.network) or danger-full-access (the default)
    #[arg(long, value_name = "MODE", value_parser = rho_sandbox::SandboxMode::NAMES)]
    pub sandbox: Option<String>,

    /// When tool calls no permission rule decides ask: auto (never; the default), ask (every
    /// call that can change something), never (what would ask is refused)
    #[arg(long, value_name = "MODE", value_parser = crate::permissions::Approval::NAMES)]
    pub approval: Option<String>,

    /// Run this project's own MCP servers, extensions and command settings for this run without
    /// approving it (`rho trust` approves a folder from now on; pi: --approve, -a)
    #[arg(short = 'a', long, visible_alias = "approve")]
    pub trust_project: bool,

    /// Ignore the project's own files for this run, even when it is trusted (pi: -na)
    #[arg(long, conflicts_with = "trust_project")]
    pub no_approve: bool,

    /// Override a setting for this run (repeatable): --setting retry.maxRetries=5
    #[arg(long = "setting", value_name = "KEY=VALUE", action = ArgAction::Append)]
    pub settings: Vec<String>,

    /// List the models with credentials (optionally only those matching SEARCH) and exit
    #[arg(long, value_name = "SEARCH", num_args = 0..=1, default_missing_value = "")]
    pub list_models: Option<String>,

    /// Export a session file to HTML and exit: --export <session.jsonl> [out.html]
    #[arg(long, value_name = "SESSION", num_args = 1..=2)]
    pub export: Option<Vec<PathBuf>>,

    /// Show tool activity on stderr (print mode)
    #[arg(long)]
    pub verbose: bool,

    /// Do not load skills
    #[arg(long)]
    pub no_skills: bool,

    /// Load a skill from this path too (repeatable)
    #[arg(long = "skill", value_name = "PATH", action = ArgAction::Append)]
    pub skills: Vec<PathBuf>,

    /// Do not load prompt templates
    #[arg(long)]
    pub no_prompt_templates: bool,

    /// Load a prompt template from this path too (repeatable)
    #[arg(long = "prompt-template", value_name = "PATH", action = ArgAction::Append)]
    pub prompt_templates: Vec<PathBuf>,

    /// RPC mode: the largest stdout line, in bytes (default: a line as long as its frame, as pi
    /// writes them; omp's 1 MiB under its protocol 2)
    #[arg(long, value_name = "BYTES")]
    pub rpc_max_frame_bytes: Option<usize>,

    /// RPC mode: how streamed replies are written: `delta` (pi 1.6's message_update) or
    /// `cumulative` (each update also carries the whole message so far, as omp and xcsh write
    /// it; the default when started with --no-title or after omp's negotiate_protocol)
    #[arg(long, value_name = "SHAPE")]
    pub rpc_message_update: Option<MessageUpdate>,

    /// Do not load time-traveling stream rules (.rho/rules, Cursor, Windsurf, Cline rules)
    #[arg(long)]
    pub no_rules: bool,

    /// Accepted for pi-family hosts; rho never generates session titles in RPC mode
    #[arg(long, hide = true)]
    pub no_title: bool,

    /// Accepted for pi-family hosts (a host-side session id)
    #[arg(long, hide = true, value_name = "ID")]
    pub provider_session_id: Option<String>,

    /// Print the version and exit
    #[arg(short = 'v', long = "version", action = ArgAction::Version)]
    pub version: Option<bool>,

    /// Messages (each runs as its own prompt) and @file arguments
    #[arg(value_name = "MESSAGES")]
    pub args: Vec<String>,

    /// `--name [value]` options rho does not know, for the flags extensions register (pi's
    /// rules: `--name=value`, `--name value` unless the next word starts with `-` or `@`, else
    /// `--name` alone).
    #[arg(skip)]
    pub extension_flags: Vec<(String, rho_extensions::FlagValue)>,
}

/// Parses the command line; options rho does not know are kept for the extensions' flags
/// instead of failing (they fail later when no extension registers them).
pub fn parse(args: impl IntoIterator<Item = std::ffi::OsString>) -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let command = Cli::command();
    let (known, extension_flags) = split_extension_flags(normalize_args(args), &command);
    let matches = command.try_get_matches_from(known)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    cli.extension_flags = extension_flags;
    Ok(cli)
}

/// Separates the `--options` `command` does not know (and their values) from the rest.
fn split_extension_flags(
    args: Vec<std::ffi::OsString>,
    command: &clap::Command,
) -> (Vec<std::ffi::OsString>, Vec<(String, rho_extensions::FlagValue)>) {
    use rho_extensions::FlagValue;
    let known = |name: &str| -> Option<bool> {
        if name == "help" {
            return Some(false);
        }
        command
            .get_arguments()
            .find(|a| a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|al| al.contains(&name)))
            .map(|a| a.get_action().takes_values())
    };
    let mut kept = Vec::with_capacity(args.len());
    let mut flags = Vec::new();
    let mut args = args.into_iter().peekable();
    if let Some(program) = args.next() {
        kept.push(program);
    }
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str().map(str::to_owned) else {
            kept.push(arg);
            continue;
        };
        if text == "--" {
            kept.push(arg);
            kept.extend(args);
            break;
        }
        let Some(option) = text.strip_prefix("--").filter(|o| !o.is_empty()) else {
            kept.push(arg);
            continue;
        };
        let (name, inline) = match option.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (option, None),
        };
        match known(name) {
            Some(takes_value) => {
                kept.push(arg);
                if takes_value
                    && inline.is_none()
                    && let Some(value) = args.next()
                {
                    kept.push(value);
                }
            }
            None => {
                let value = match inline {
                    Some(value) => FlagValue::Text(value.to_owned()),
                    None => match args.peek().and_then(|next| next.to_str()) {
                        Some(next) if !next.starts_with('-') && !next.starts_with('@') => {
                            let value = next.to_owned();
                            args.next();
                            FlagValue::Text(value)
                        }
                        _ => FlagValue::Set(true),
                    },
                };
                flags.push((name.to_owned(), value));
            }
        }
    }
    (kept, flags)
}

/// pi's multi-letter short flags (`-nc`, `-nt`, …), which no argument parser reads as one
/// flag: each becomes its long form. Everything after `--` is left alone.
pub fn normalize_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out = Vec::new();
    let mut rest = false;
    for arg in args {
        let long = match arg.to_str() {
            _ if rest => None,
            Some("--") => {
                rest = true;
                None
            }
            Some("-nt") => Some("--no-tools"),
            Some("-nbt") => Some("--no-builtin-tools"),
            Some("-nc") => Some("--no-context-files"),
            Some("-ns") => Some("--no-skills"),
            Some("-np") => Some("--no-prompt-templates"),
            Some("-ne") => Some("--no-extensions"),
            Some("-xt") => Some("--exclude-tools"),
            Some("-na") => Some("--no-approve"),
            _ => None,
        };
        out.push(long.map_or(arg, Into::into));
    }
    out
}

impl Cli {
    /// The effective mode when not interactive: `--mode`, else text when `-p` was given, stdin
    /// is piped or messages were given, else none.
    pub fn mode(&self, stdin_piped: bool) -> Option<Mode> {
        self.mode.or((self.print || stdin_piped || !self.args.is_empty()).then_some(Mode::Text))
    }

    /// The `@file` arguments (without the `@`).
    pub fn file_args(&self) -> Vec<&str> {
        self.args.iter().filter_map(|a| a.strip_prefix('@')).filter(|p| !p.is_empty()).collect()
    }

    /// The message arguments.
    pub fn messages(&self) -> Vec<&str> {
        self.args.iter().filter(|a| !a.starts_with('@') || a.len() == 1).map(String::as_str).collect()
    }

    /// `rho login [provider]` / `rho logout [provider]` (without -p or --mode, where the words
    /// are a message).
    pub fn account_command(&self) -> Option<crate::login::AccountCommand> {
        use crate::login::AccountCommand;
        if self.print || self.mode.is_some() || self.args.len() > 2 {
            return None;
        }
        let provider = self.args.get(1).cloned();
        match self.args.first().map(String::as_str) {
            Some("login") => Some(AccountCommand::Login(provider)),
            Some("logout") => Some(AccountCommand::Logout(provider)),
            _ => None,
        }
    }

    /// `rho trust [DIR]` (true) or `rho untrust [DIR]` (false), with the folder.
    pub fn trust_command(&self) -> Option<(bool, Option<&str>)> {
        if self.print || self.mode.is_some() || self.args.len() > 2 {
            return None;
        }
        let dir = self.args.get(1).map(String::as_str);
        match self.args.first().map(String::as_str) {
            Some("trust") => Some((true, dir)),
            Some("untrust") => Some((false, dir)),
            _ => None,
        }
    }
}
