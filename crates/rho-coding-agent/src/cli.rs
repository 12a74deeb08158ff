//! The command line: `rho [options] [@files...] [messages...]`, with pi's flags (agent-behavior.md
//! §10.1) plus the ones RPC hosts of the pi family pass.

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
}

/// rho: a coding agent.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "rho",
    version,
    disable_version_flag = true,
    about = "rho, a coding agent",
    long_about = "rho, a coding agent. Give it a task as a message; files as @path arguments.\n\n\
                  Each message runs as its own prompt, in order. Piped stdin becomes the first message.",
    after_help = "Examples:\n  rho -p \"fix the failing test\"\n  rho --model anthropic/claude-sonnet-4-5:high -p @src/main.rs \"explain this\"\n  git diff | rho -p \"write a commit message\"\n  rho --mode rpc --no-session        (drive rho from another program)\n\n\
                  Environment: ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, … (one per provider);\n\
                  RHO_CODING_AGENT_DIR moves the agent directory (default ~/.rho/agent)."
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

    /// Thinking level: off, minimal, low, medium, high, xhigh
    #[arg(long, value_name = "LEVEL")]
    pub thinking: Option<String>,

    /// API key for the selected model's provider (not saved)
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,

    /// Only these built-in tools (comma-separated: read, bash, edit, write, grep, find, ls)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub tools: Option<Vec<String>>,

    /// No built-in tools
    #[arg(long)]
    pub no_tools: bool,

    /// Replace the system prompt (text, or a file to read it from)
    #[arg(long, value_name = "TEXT|FILE")]
    pub system_prompt: Option<String>,

    /// Append to the system prompt (text, or a file to read it from)
    #[arg(long, value_name = "TEXT|FILE")]
    pub append_system_prompt: Option<String>,

    /// Continue the most recent session of this directory
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,

    /// Resume a session: the most recent one of this directory (there is no picker yet)
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

    /// RPC mode: the largest stdout line, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = crate::modes::encoder::DEFAULT_MAX_FRAME_BYTES)]
    pub rpc_max_frame_bytes: usize,

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
}

impl Cli {
    /// The effective mode: `--mode`, else text when `-p` was given or stdin is piped, else
    /// none (interactive, which rho does not have yet).
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
}
