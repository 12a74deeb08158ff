//! One permission rule in Claude Code's syntax, and what it matches: `Bash` (every command),
//! `Bash(npm run test:*)` (commands whose words start with these), `Bash(git status)` (that
//! command), `Read(./.env)` and `Edit(src/**)` (paths, gitignore-style globs: `./` or bare from the
//! project, `~/` from home, `//` from the root), `Write(…)`, `mcp__server` / `mcp__server__*` (a
//! server's tools), `mcp__server__tool`, or any other tool's own name (`task`, an extension's tool).
//! A command rule is compared word by word with a simple command as the shell parser reads it.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::paths::{PathPattern, Scope, normalize};
use super::shell::{self, Word};

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
    /// `Bash(prefix:*)`: the prefix's words.
    CommandPrefix(Vec<String>),
    /// `Bash(exact command)`: its words.
    Command(Vec<String>),
    /// `Read(…)`, `Edit(…)`, `Write(…)`: where the path may be.
    Path(PathPattern),
    /// `WebFetch(domain:example.com)`: the host, or one under it.
    Domain(String),
    /// A specifier rho does not interpret: matches nothing.
    Other,
}

/// The tools a rule name stands for: Claude Code's names for rho's built-in tools.
fn tools_of(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "Bash" | "bash" => &["bash"],
        "Read" => &["read", "grep", "find", "ls"],
        "Edit" => &["edit", "write"],
        "Write" => &["write"],
        "WebFetch" => &["web_fetch"],
        "WebSearch" => &["web_search"],
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
                Some(prefix) => Spec::CommandPrefix(command_words(prefix)),
                None => Spec::Command(command_words(spec)),
            }),
            Some(spec) if matches!(name, "Read" | "Edit" | "Write") => {
                Some(Spec::Path(PathPattern::new(&absolute_pattern(spec, cwd, home), spec)?))
            }
            Some(spec) if name == "WebFetch" => Some(match spec.strip_prefix("domain:") {
                Some(domain) => Spec::Domain(domain.trim().trim_start_matches("*.").to_ascii_lowercase()),
                None => Spec::Other,
            }),
            Some(_) => Some(Spec::Other),
        };
        Ok(Rule { text: trimmed.to_owned(), name: name.to_owned(), spec })
    }

    /// Whether the rule names `tool` at all.
    pub fn names(&self, tool: &str) -> bool {
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

    /// Whether the rule names `tool` with nothing narrowing it (`Bash`, `Read`, `task`).
    pub fn is_whole_tool(&self, tool: &str) -> bool {
        self.spec.is_none() && self.names(tool)
    }

    /// Whether the rule covers a `web_fetch` of `url`: `WebFetch` alone, or a `domain:` it lies in.
    pub fn matches_url(&self, url: &str) -> bool {
        if !self.names("web_fetch") {
            return false;
        }
        match &self.spec {
            None => true,
            Some(Spec::Domain(domain)) => {
                let host = url.split_once("://").map_or(url, |(_, rest)| rest);
                let host = host.split(['/', '?', '#']).next().unwrap_or_default();
                let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
                let host = host.split(':').next().unwrap_or_default().to_ascii_lowercase();
                host == *domain || host.ends_with(&format!(".{domain}"))
            }
            Some(_) => false,
        }
    }

    /// Whether the rule covers a simple command's words (a rule naming `bash`).
    pub fn matches_words(&self, words: &[Word]) -> bool {
        if !self.names("bash") {
            return false;
        }
        let same = |rule: &[String], words: &[Word]| rule.iter().zip(words).all(|(r, w)| w.as_deref() == Some(r));
        match &self.spec {
            None => true,
            Some(Spec::CommandPrefix(prefix)) => words.len() >= prefix.len() && same(prefix, words),
            Some(Spec::Command(command)) => words.len() == command.len() && same(command, words),
            Some(Spec::Path(_) | Spec::Domain(_) | Spec::Other) => false,
        }
    }

    /// Whether a refusing rule reaches `path` as `tool` uses it.
    pub fn touches(&self, tool: &str, path: &Path, scope: Scope) -> bool {
        self.names(tool)
            && match &self.spec {
                None => true,
                Some(Spec::Path(pattern)) => pattern.touches(path, scope),
                Some(_) => false,
            }
    }

    /// Whether an allowing rule covers all of `path` as `tool` uses it.
    pub fn covers(&self, tool: &str, path: &Path, scope: Scope) -> bool {
        self.names(tool)
            && match &self.spec {
                None => true,
                Some(Spec::Path(pattern)) => pattern.covers(path, scope),
                Some(_) => false,
            }
    }
}

/// A command rule's words, read as the shell reads them (`git commit -m "x y"` is four words);
/// split at spaces when the text is not one plain command.
fn command_words(text: &str) -> Vec<String> {
    let text = text.trim();
    shell::rule_words(text).unwrap_or_else(|| text.split_whitespace().map(str::to_owned).collect())
}

/// A path rule's pattern, made absolute: `//x` from the root, `~/x` from home, `/x`, `./x` and
/// `x` from the project.
fn absolute_pattern(spec: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    if let Some(rest) = spec.strip_prefix("//") {
        PathBuf::from("/").join(rest)
    } else if spec.starts_with("~/") {
        crate::config::expand_tilde(spec, home)
    } else {
        normalize(&cwd.join(spec.trim_start_matches('/')))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Rule {
        Rule::parse(text, Path::new("/p"), Some(Path::new("/h"))).unwrap()
    }

    fn words(text: &str) -> Vec<Word> {
        text.split_whitespace().map(|w| Some(w.to_owned())).collect()
    }

    #[test]
    fn bash_rules_match_commands_by_prefix_or_whole() {
        assert!(rule("Bash(npm run test:*)").matches_words(&words("npm run test --watch")));
        assert!(rule("Bash(npm run test:*)").matches_words(&words("npm run test")));
        assert!(!rule("Bash(npm run test:*)").matches_words(&words("npm run tests")));
        assert!(!rule("Bash(npm run test:*)").matches_words(&words("npm run")));
        assert!(rule("Bash(git status)").matches_words(&words("git status")));
        assert!(!rule("Bash(git status)").matches_words(&words("git status -s")));
        assert!(rule("Bash").matches_words(&words("anything")));
        assert!(!rule("Read").matches_words(&words("anything")));
        // Rules are read as the shell reads words; a word that expands matches no rule word.
        assert!(
            rule("Bash(git commit -m \"a b\":*)")
                .matches_words(&words("git commit -m").into_iter().chain([Some("a b".to_owned())]).collect::<Vec<_>>())
        );
        assert!(!rule("Bash(rm:*)").matches_words(&[None, Some("x".into())]));
    }

    #[test]
    fn path_rules_match_from_the_project_home_or_root() {
        let file = Scope::File;
        assert!(rule("Read(./.env)").touches("read", Path::new("/p/.env"), file));
        assert!(rule("Read(./.env)").touches("grep", Path::new("/p/.env"), file));
        assert!(!rule("Read(./.env)").touches("write", Path::new("/p/.env"), file));
        assert!(rule("Edit(src/**)").covers("write", Path::new("/p/src/a/b.rs"), file));
        assert!(!rule("Edit(src/*)").covers("write", Path::new("/p/src/a/b.rs"), file));
        assert!(rule("Read(~/.ssh/**)").touches("read", Path::new("/h/.ssh/id_rsa"), file));
        assert!(rule("Read(//etc/**)").touches("read", Path::new("/etc/passwd"), file));
        // A refused folder refuses what is in it.
        assert!(rule("Read(./secrets)").touches("read", Path::new("/p/secrets/key"), file));
        assert!(!rule("Read(./secrets)").covers("read", Path::new("/p/secrets/key"), file));
    }

    #[test]
    fn a_walking_tool_is_refused_above_a_rule_and_allowed_only_beneath_a_whole_folder() {
        let tree = Scope::Tree;
        let ssh = rule("Read(~/.ssh/**)");
        for root in ["/h/.ssh", "/h", "/", "/h/.ssh/keys"] {
            assert!(ssh.touches("grep", Path::new(root), tree), "{root}");
        }
        assert!(!ssh.touches("grep", Path::new("/h/src"), tree));
        assert!(!ssh.touches("grep", Path::new("/h/.sshx"), tree));
        assert!(rule("Read(src/**/*.env)").touches("find", Path::new("/p/src/a"), tree));
        let src = rule("Read(src/**)");
        assert!(src.covers("grep", Path::new("/p/src"), tree));
        assert!(src.covers("grep", Path::new("/p/src/a"), tree));
        assert!(!src.covers("grep", Path::new("/p"), tree));
        assert!(!rule("Read(src/*.rs)").covers("grep", Path::new("/p/src"), tree));
    }

    #[test]
    fn mcp_and_other_tools_match_by_name() {
        assert!(rule("mcp__github").is_whole_tool("mcp__github__create_issue"));
        assert!(rule("mcp__github__*").is_whole_tool("mcp__github__create_issue"));
        assert!(!rule("mcp__git").is_whole_tool("mcp__github__create_issue"));
        assert!(rule("mcp__github__create_issue").is_whole_tool("mcp__github__create_issue"));
        assert!(!rule("mcp__github__create_issue").is_whole_tool("mcp__github__list"));
        assert!(rule("task").is_whole_tool("task"));
        assert!(!rule("WebFetch(domain:example.com)").is_whole_tool("WebFetch"));
        assert!(Rule::parse("Bash(npm", Path::new("/"), None).unwrap_err().contains("no closing parenthesis"));
    }
}
