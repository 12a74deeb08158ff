//! One permission rule in Claude Code's syntax, and what it matches: `Bash` (every command),
//! `Bash(npm run test:*)` (commands starting so), `Bash(git status)` (that command), `Read(./.env)`
//! and `Edit(src/**)` (paths, gitignore-style globs: `./` or bare from the project, `~/` from
//! home, `//` from the root), `Write(…)`, `mcp__server` / `mcp__server__*` (a server's tools),
//! `mcp__server__tool`, or any other tool's own name (`task`, an extension's tool).

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use serde_json::{Map, Value};

/// A parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// As written, for messages.
    pub text: String,
    name: String,
    spec: Option<Spec>,
}

#[derive(Debug, Clone)]
enum Spec {
    /// `Bash(prefix:*)`.
    CommandPrefix(String),
    /// `Bash(exact command)`.
    Command(String),
    /// `Read(…)`, `Edit(…)`, `Write(…)`: where the path may be.
    Path(GlobMatcher),
    /// A specifier rho does not interpret (`WebFetch(domain:…)`): matches nothing.
    Other,
}

/// The tools a rule name stands for: Claude Code's names for rho's built-in tools.
fn tools_of(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "Bash" | "bash" => &["bash"],
        "Read" => &["read", "grep", "find", "ls"],
        "Edit" => &["edit", "write"],
        "Write" => &["write"],
        _ => return None,
    })
}

/// A call as the rules see it.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub tool: &'a str,
    pub args: &'a Map<String, Value>,
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
}

impl Call<'_> {
    /// The absolute path a path tool acts on (the project for grep/find/ls without one).
    fn path(&self) -> Option<PathBuf> {
        let raw = self.args.get("path").and_then(Value::as_str).unwrap_or(".");
        Some(normalize(&self.cwd.join(crate::config::expand_tilde(raw, self.home))))
    }

    /// `bash`'s command.
    pub fn command(&self) -> Option<&str> {
        self.args.get("command").and_then(Value::as_str)
    }
}

impl Rule {
    /// Parses `text`; the error says what is wrong with it.
    pub fn parse(text: &str, cwd: &Path, home: Option<&Path>) -> Result<Rule, String> {
        let trimmed = text.trim();
        let (name, spec) = match trimmed.split_once('(') {
            Some((name, rest)) => {
                let inner =
                    rest.strip_suffix(')').ok_or_else(|| format!("\"{trimmed}\" has no closing parenthesis"))?;
                (name.trim(), Some(inner.trim()))
            }
            None => (trimmed, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '.')) {
            return Err(format!("\"{trimmed}\" does not start with a tool name"));
        }
        let spec = match spec {
            None | Some("") | Some("*") => None,
            Some(spec) if matches!(name, "Bash" | "bash") => Some(match spec.strip_suffix(":*") {
                Some(prefix) => Spec::CommandPrefix(prefix.trim().to_owned()),
                None => Spec::Command(spec.to_owned()),
            }),
            Some(spec) if matches!(name, "Read" | "Edit" | "Write") => Some(Spec::Path(path_glob(spec, cwd, home)?)),
            Some(_) => Some(Spec::Other),
        };
        Ok(Rule { text: trimmed.to_owned(), name: name.to_owned(), spec })
    }

    /// Whether the rule names `tool` at all.
    fn names(&self, tool: &str) -> bool {
        if let Some(tools) = tools_of(&self.name) {
            return tools.contains(&tool);
        }
        if let Some(server) = self.name.strip_prefix("mcp__") {
            let server = server.strip_suffix("__*").unwrap_or(server);
            return match server.split_once("__") {
                Some(_) => self.name == tool,
                None => {
                    tool.strip_prefix("mcp__").and_then(|t| t.strip_prefix(server)).is_some_and(|t| t.starts_with("__"))
                }
            };
        }
        self.name == tool
    }

    /// Whether the rule covers `call`; for `bash`, `part` is one of the command's parts.
    pub fn matches(&self, call: &Call<'_>, part: Option<&str>) -> bool {
        if !self.names(call.tool) {
            return false;
        }
        match &self.spec {
            None => true,
            Some(Spec::CommandPrefix(prefix)) => part.is_some_and(|p| {
                p == prefix || p.strip_prefix(prefix.as_str()).is_some_and(|rest| rest.starts_with(char::is_whitespace))
            }),
            Some(Spec::Command(command)) => part.is_some_and(|p| p == command),
            Some(Spec::Path(glob)) => call.path().is_some_and(|path| glob.is_match(path)),
            Some(Spec::Other) => false,
        }
    }
}

/// A path rule's glob, made absolute: `//x` from the root, `~/x` from home, `/x`, `./x` and `x`
/// from the project.
fn path_glob(spec: &str, cwd: &Path, home: Option<&Path>) -> Result<GlobMatcher, String> {
    let absolute = if let Some(rest) = spec.strip_prefix("//") {
        PathBuf::from("/").join(rest)
    } else if spec.starts_with("~/") {
        crate::config::expand_tilde(spec, home)
    } else {
        normalize(&cwd.join(spec.trim_start_matches('/')))
    };
    GlobBuilder::new(&absolute.to_string_lossy())
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|e| format!("\"{spec}\" is not a path pattern: {e}"))
}

/// `path` with `.` and `..` taken by name.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A shell command's simple commands, for rules to judge one by one: split at `;`, `&&`, `||`,
/// `|`, `&`, newlines, and around substituted commands (`$(…)`, backquotes, `<(…)`, subshells),
/// so a deny rule sees `curl` in `echo $(curl …)`. The flag says whether the command substitutes
/// commands into itself, which no allow rule can vouch for.
pub fn command_parts(command: &str) -> (Vec<String>, bool) {
    let substitutes = ["$(", "`", "<(", ">("].iter().any(|s| command.contains(s));
    let parts = command
        .split(['\n', ';', '&', '|', '`', '(', ')'])
        .map(|p| p.trim().trim_matches(['$', '<', '>']).trim())
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    (parts, substitutes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call<'a>(tool: &'a str, args: &'a Value) -> Call<'a> {
        Call { tool, args: args.as_object().unwrap(), cwd: Path::new("/p"), home: Some(Path::new("/h")) }
    }

    fn rule(text: &str) -> Rule {
        Rule::parse(text, Path::new("/p"), Some(Path::new("/h"))).unwrap()
    }

    #[test]
    fn bash_rules_match_commands_by_prefix_or_whole() {
        let args = json!({"command": "npm run test --watch"});
        let c = call("bash", &args);
        assert!(rule("Bash(npm run test:*)").matches(&c, Some("npm run test --watch")));
        assert!(rule("Bash(npm run test:*)").matches(&c, Some("npm run test")));
        assert!(!rule("Bash(npm run test:*)").matches(&c, Some("npm run tests")));
        assert!(rule("Bash(git status)").matches(&c, Some("git status")));
        assert!(!rule("Bash(git status)").matches(&c, Some("git status -s")));
        assert!(rule("Bash").matches(&c, Some("anything")));
        assert!(!rule("Bash").matches(&call("read", &json!({"path": "x"})), None));
        assert_eq!(
            command_parts("a && b | c; d\ne"),
            (vec!["a".into(), "b".into(), "c".into(), "d".into(), "e".into()], false)
        );
        assert_eq!(command_parts("npm test $(rm -rf /)"), (vec!["npm test".into(), "rm -rf /".into()], true));
    }

    #[test]
    fn path_rules_match_from_the_project_home_or_root() {
        let env = json!({"path": ".env"});
        assert!(rule("Read(./.env)").matches(&call("read", &env), None));
        assert!(rule("Read(./.env)").matches(&call("grep", &env), None));
        assert!(!rule("Read(./.env)").matches(&call("write", &env), None));
        assert!(rule("Edit(src/**)").matches(&call("write", &json!({"path": "src/a/b.rs"})), None));
        assert!(!rule("Edit(src/*)").matches(&call("write", &json!({"path": "src/a/b.rs"})), None));
        assert!(!rule("Edit(src/**)").matches(&call("edit", &json!({"path": "src/../x.rs"})), None));
        assert!(rule("Read(~/.ssh/**)").matches(&call("read", &json!({"path": "/h/.ssh/id_rsa"})), None));
        assert!(rule("Read(//etc/**)").matches(&call("read", &json!({"path": "../../etc/passwd"})), None));
    }

    #[test]
    fn mcp_and_other_tools_match_by_name() {
        let none = json!({});
        assert!(rule("mcp__github").matches(&call("mcp__github__create_issue", &none), None));
        assert!(rule("mcp__github__*").matches(&call("mcp__github__create_issue", &none), None));
        assert!(!rule("mcp__git").matches(&call("mcp__github__create_issue", &none), None));
        assert!(rule("mcp__github__create_issue").matches(&call("mcp__github__create_issue", &none), None));
        assert!(!rule("mcp__github__create_issue").matches(&call("mcp__github__list", &none), None));
        assert!(rule("task").matches(&call("task", &none), None));
        assert!(!rule("WebFetch(domain:example.com)").matches(&call("WebFetch", &none), None));
        assert!(Rule::parse("Bash(npm", Path::new("/"), None).unwrap_err().contains("no closing parenthesis"));
    }
}
