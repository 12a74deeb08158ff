//! Permission rules (`permissions.allow / ask / deny` in settings, Claude Code's syntax) and the
//! approval mode (`--approval ask | auto | never`, the `approval` setting): which tool calls run,
//! which are refused, and which wait for the user's answer. Deny wins over ask, ask over allow.
//! A project's settings add `deny` and `ask` rules always and `allow` rules only when the project
//! is trusted; no list of one file replaces another's.
//!
//! A `bash` command is judged by what the shell parser finds in it ([`shell`]): every simple
//! command, wrappers peeled, and every file it redirects output to, judged as a write by the
//! `Edit` / `Write` rules. A path tool is judged by every spelling of its path ([`paths`]).

mod gate;
mod paths;
mod rule;
mod shell;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use gate::{AskAnswer, Asker, PermissionGate, UiAsker};
use paths::Scope;
pub use rule::{Call, Rule};

use crate::config::Settings;

/// When a call no rule decides asks the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Approval {
    /// Only `ask` rules ask (pi's behaviour: everything else runs).
    #[default]
    Auto,
    /// Every call that can change something asks, unless an `allow` rule covers it.
    Ask,
    /// Nothing asks: what would ask is refused (for runs nobody watches).
    Never,
}

impl Approval {
    pub const NAMES: [&'static str; 3] = ["auto", "ask", "never"];

    fn parse(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(Self::Auto),
            "ask" => Some(Self::Ask),
            "never" => Some(Self::Never),
            _ => None,
        }
    }
}

/// What the rules say of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// A deny rule covers it (the rule's text).
    Deny(String),
    /// An ask rule covers it.
    Ask(String),
    /// Allow rules cover it (every part of a command).
    Allow,
    /// A command the parser cannot read in full, where a `deny` or `ask` rule (its text) for
    /// `bash` may be what it hides: asked, never run unasked.
    Unreadable(String),
    /// No rule decides: the approval mode does.
    Undecided,
}

/// The rules in force.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    allow: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
}

impl Rules {
    /// The rules of every settings layer (global, the project's, `--setting`), each list the
    /// union of the layers'; problems are returned as warnings.
    pub fn from_settings(settings: &Settings, cwd: &Path, home: Option<&Path>) -> (Rules, Vec<String>) {
        let mut warnings = Vec::new();
        let mut list = |key: &str| -> Vec<Rule> {
            let (global, project) = settings.by_file(key);
            let layers = [global, project, settings.command_line_overrides().get(key)];
            let texts = layers.into_iter().flatten().filter_map(Value::as_array).flatten().filter_map(Value::as_str);
            texts
                .filter_map(|text| match Rule::parse(text, cwd, home) {
                    Ok(rule) => Some(rule),
                    Err(e) => {
                        warnings.push(format!("Warning: {key}: {e}; the rule is ignored"));
                        None
                    }
                })
                .collect()
        };
        let rules =
            Rules { allow: list("permissions.allow"), ask: list("permissions.ask"), deny: list("permissions.deny") };
        (rules, warnings)
    }

    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    /// What the rules say of `call`. A command is judged part by part: one part denied or asked
    /// is enough, and it is allowed only when every part is.
    pub fn decide(&self, call: &Call<'_>) -> Decision {
        if let ("bash", Some(command)) = (call.tool, call.command()) {
            return self.decide_command(call, command);
        }
        if let Some(scope) = path_scope(call.tool) {
            return self.decide_path(call, scope);
        }
        if call.tool == "web_fetch" {
            let url = call.args.get("url").and_then(Value::as_str).unwrap_or_default();
            return self.first_of(
                |rules| rules.iter().find(|r| r.matches_url(url)),
                || self.allow.iter().any(|r| r.matches_url(url)),
            );
        }
        self.first_of(
            |rules| rules.iter().find(|r| r.is_whole_tool(call.tool)),
            || self.allow.iter().any(|r| r.is_whole_tool(call.tool)),
        )
    }

    /// Deny, then ask, by `refusing`; then allow when `allowed`.
    fn first_of<'r>(
        &'r self,
        refusing: impl Fn(&'r [Rule]) -> Option<&'r Rule>,
        allowed: impl FnOnce() -> bool,
    ) -> Decision {
        if let Some(rule) = refusing(&self.deny) {
            return Decision::Deny(rule.text.clone());
        }
        if let Some(rule) = refusing(&self.ask) {
            return Decision::Ask(rule.text.clone());
        }
        if allowed() { Decision::Allow } else { Decision::Undecided }
    }

    fn decide_path(&self, call: &Call<'_>, scope: Scope) -> Decision {
        let raw = call.args.get("path").and_then(Value::as_str).unwrap_or(".");
        let given = paths::tool_paths(call.tool, raw, call.cwd, call.home);
        let resolved: Vec<PathBuf> = given.iter().map(|p| paths::resolved(p)).collect();
        let scope = if scope == Scope::Tree && resolved.iter().all(|p| p.is_file()) { Scope::File } else { scope };
        let touches = |rule: &Rule| given.iter().chain(&resolved).any(|p| rule.touches(call.tool, p, scope));
        self.first_of(
            |rules| rules.iter().find(|r| touches(r)),
            || resolved.iter().all(|p| self.allow.iter().any(|r| r.covers(call.tool, p, scope))),
        )
    }

    fn decide_command(&self, call: &Call<'_>, command: &str) -> Decision {
        let script = shell::parse(command);
        let decision = self.decide_script(call, &script);
        if decision == Decision::Undecided
            && script.unaccounted
            && let Some(rule) = self.deny.iter().chain(&self.ask).find(|r| r.names("bash"))
        {
            return Decision::Unreadable(rule.text.clone());
        }
        decision
    }

    fn decide_script(&self, call: &Call<'_>, script: &shell::Script) -> Decision {
        let spelled = |raw: &String| paths::shell_path(raw, call.cwd, call.home);
        let writes: Vec<Option<PathBuf>> = script.writes.iter().map(spelled).collect();
        let reads: Vec<PathBuf> = script.reads.iter().filter_map(spelled).collect();
        let file = |tool: &'static str, rule: &Rule, path: &PathBuf| {
            rule.touches(tool, path, Scope::File) || rule.touches(tool, &paths::resolved(path), Scope::File)
        };
        let refuses = |rule: &Rule| {
            rule.is_whole_tool("bash")
                || script.commands.iter().flat_map(|c| &c.views).any(|view| {
                    rule.matches_words(&view.words) || by_basename(&view.words).is_some_and(|w| rule.matches_words(&w))
                })
                || writes.iter().flatten().any(|path| file("write", rule, path))
                || reads.iter().any(|path| file("read", rule, path))
        };
        self.first_of(
            |rules| rules.iter().find(|r| refuses(r)),
            || {
                if self.allow.iter().any(|r| r.is_whole_tool("bash")) {
                    return true;
                }
                let command_allowed = |command: &shell::SimpleCommand| {
                    !command.needs_allow
                        || command
                            .views
                            .iter()
                            .filter(|view| view.allowable)
                            .any(|view| self.allow.iter().any(|r| r.matches_words(&view.words)))
                };
                let write_allowed = |path: &Option<PathBuf>| {
                    path.as_ref().is_some_and(|path| {
                        self.allow.iter().any(|r| r.covers("write", &paths::resolved(path), Scope::File))
                    })
                };
                !script.unaccounted
                    && !script.commands.is_empty()
                    && script.commands.iter().all(command_allowed)
                    && writes.iter().all(write_allowed)
            },
        )
    }
}

/// A command's words with a path-qualified name (`/bin/rm`) cut to its last part, for refusing
/// rules; `None` when the name has no folder.
fn by_basename(words: &[shell::Word]) -> Option<Vec<shell::Word>> {
    let name = words.first()?.as_deref()?;
    let base = shell::basename(name);
    (base != name).then(|| std::iter::once(Some(base.to_owned())).chain(words[1..].iter().cloned()).collect())
}

/// How much a path tool reaches, if `tool` is one.
fn path_scope(tool: &str) -> Option<Scope> {
    match tool {
        "read" | "edit" | "write" => Some(Scope::File),
        "grep" | "find" | "ls" => Some(Scope::Tree),
        _ => None,
    }
}

/// The approval mode of `settings` (`--approval` is its command-line form).
pub fn approval(settings: &Settings) -> Approval {
    settings.get_string("approval").and_then(|a| Approval::parse(&a)).unwrap_or_default()
}

/// The result the model gets for a call the user refused.
pub fn rejected(tool: &str) -> String {
    format!("The user rejected this {tool} call. Do not retry it as it was; ask what they want instead.")
}

/// Whether a tool only reads (never asked about by `--approval ask`).
fn only_reads(tool: &str) -> bool {
    matches!(tool, "read" | "grep" | "find" | "ls" | "ask") || tool == crate::todo::TODO_WRITE_TOOL_NAME
}

/// A compact description of a call for a question: the command, the path, or the arguments.
fn describe(tool: &str, args: &Map<String, Value>) -> String {
    let text = match (args.get("command"), args.get("path")) {
        (Some(Value::String(command)), _) => command.clone(),
        (_, Some(Value::String(path))) => path.clone(),
        _ => Value::Object(args.clone()).to_string(),
    };
    let short: String = text.chars().take(200).collect();
    let ellipsis = if short.len() < text.len() { "…" } else { "" };
    format!("{tool}: {short}{ellipsis}")
}

#[cfg(test)]
mod tests;
