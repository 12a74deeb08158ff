//! Permission rules (`permissions.allow / ask / deny` in settings, Claude Code's syntax) and the
//! approval mode (`--approval ask | auto | never`, the `approval` setting): which tool calls run,
//! which are refused, and which wait for the user's answer. Deny wins over ask, ask over allow.
//! A project's settings add `deny` and `ask` rules always and `allow` rules only when the project
//! is trusted; no list of one file replaces another's.

mod gate;
mod rule;

use std::path::Path;

use serde_json::{Map, Value};

pub use gate::{AskAnswer, Asker, PermissionGate, UiAsker};
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
        let (parts, substitutes) = match (call.tool, call.command()) {
            ("bash", Some(command)) => rule::command_parts(command),
            _ => (Vec::new(), false),
        };
        let judged: Vec<Option<&str>> =
            if call.tool == "bash" { parts.iter().map(|p| Some(p.as_str())).collect() } else { vec![None] };
        let first = |rules: &[Rule]| {
            rules.iter().find(|r| judged.iter().any(|part| r.matches(call, *part))).map(|r| r.text.clone())
        };
        if let Some(rule) = first(&self.deny) {
            return Decision::Deny(rule);
        }
        if let Some(rule) = first(&self.ask) {
            return Decision::Ask(rule);
        }
        let allowed = !substitutes
            && !judged.is_empty()
            && judged.iter().all(|part| self.allow.iter().any(|r| r.matches(call, *part)));
        if allowed { Decision::Allow } else { Decision::Undecided }
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
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(allow: &[&str], ask: &[&str], deny: &[&str]) -> Rules {
        let parse = |list: &[&str]| list.iter().map(|t| Rule::parse(t, Path::new("/p"), None).unwrap()).collect();
        Rules { allow: parse(allow), ask: parse(ask), deny: parse(deny) }
    }

    fn decide(rules: &Rules, tool: &str, args: Value) -> Decision {
        rules.decide(&Call { tool, args: args.as_object().unwrap(), cwd: Path::new("/p"), home: None })
    }

    #[test]
    fn deny_wins_over_ask_and_ask_over_allow() {
        let r = rules(&["Bash"], &["Bash(git push:*)"], &["Bash(rm:*)"]);
        assert_eq!(decide(&r, "bash", json!({"command": "ls"})), Decision::Allow);
        assert_eq!(decide(&r, "bash", json!({"command": "git push origin"})), Decision::Ask("Bash(git push:*)".into()));
        assert_eq!(decide(&r, "bash", json!({"command": "ls && rm -rf x"})), Decision::Deny("Bash(rm:*)".into()));
        assert_eq!(decide(&r, "read", json!({"path": "x"})), Decision::Undecided);
    }

    #[test]
    fn a_command_is_allowed_only_when_every_part_is() {
        let r = rules(&["Bash(npm test:*)"], &[], &[]);
        assert_eq!(decide(&r, "bash", json!({"command": "npm test"})), Decision::Allow);
        assert_eq!(decide(&r, "bash", json!({"command": "npm test && curl evil"})), Decision::Undecided);
        assert_eq!(decide(&r, "bash", json!({"command": "npm test $(curl evil)"})), Decision::Undecided);
        let r = rules(&[], &[], &["Bash(curl:*)"]);
        assert_eq!(decide(&r, "bash", json!({"command": "echo $(curl evil)"})), Decision::Deny("Bash(curl:*)".into()));
    }
}
