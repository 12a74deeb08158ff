//! Where a rule listens: its `scope` tokens compiled, and the file-glob tests for tool calls.
//!
//! Tokens: `text`, `thinking`, `tool` / `toolcall` (any tool call), `tool:<name>` or a bare
//! `<name>` (that tool), each tool form optionally followed by `(<path glob>)`. Without a
//! `scope` a rule listens to text and every tool call, not to thinking. Tool names compare
//! case-insensitively. A path glob matches when the call's path, or its file name, matches;
//! `*` does not cross `/`, `**` does.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

/// What part of the stream a delta belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamSource {
    Text,
    Thinking,
    Tool,
}

/// One `tool...` token.
#[derive(Debug, Clone)]
pub(crate) struct ToolScope {
    name: Option<String>,
    glob: Option<GlobMatcher>,
}

/// A rule's compiled scope.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    pub text: bool,
    pub thinking: bool,
    pub any_tool: bool,
    tools: Vec<ToolScope>,
}

impl Scope {
    fn default_scope() -> Self {
        Self { text: true, thinking: false, any_tool: true, tools: Vec::new() }
    }

    /// Whether any stream can reach the rule.
    pub fn reachable(&self) -> bool {
        self.text || self.thinking || self.any_tool || !self.tools.is_empty()
    }

    pub fn listens_to_tools(&self) -> bool {
        self.any_tool || !self.tools.is_empty()
    }

    /// Whether a delta from `source` (with the tool's name and path candidates) is in scope.
    pub fn allows(&self, source: StreamSource, tool: Option<&str>, paths: &[String]) -> bool {
        match source {
            StreamSource::Text => self.text,
            StreamSource::Thinking => self.thinking,
            StreamSource::Tool => {
                self.any_tool
                    || self.tools.iter().any(|scope| {
                        scope.name.as_deref().is_none_or(|name| tool.is_some_and(|t| t.eq_ignore_ascii_case(name)))
                            && scope.glob.as_ref().is_none_or(|glob| glob_matches(glob, paths))
                    })
            }
        }
    }
}

/// Compiles `tokens`; invalid tokens are skipped with a warning each.
pub(crate) fn compile_scope(tokens: &[String]) -> (Scope, Vec<String>) {
    if tokens.is_empty() {
        return (Scope::default_scope(), Vec::new());
    }
    let mut scope = Scope { text: false, thinking: false, any_tool: false, tools: Vec::new() };
    let mut warnings = Vec::new();
    for token in tokens {
        let token = token.trim();
        match token.to_ascii_lowercase().as_str() {
            "" => {}
            "text" => scope.text = true,
            "thinking" => scope.thinking = true,
            "tool" | "toolcall" => scope.any_tool = true,
            _ => match parse_tool_token(token) {
                Ok(tool) if tool.name.is_none() && tool.glob.is_none() => scope.any_tool = true,
                Ok(tool) => scope.tools.push(tool),
                Err(e) => warnings.push(format!("scope token \"{token}\" skipped: {e}")),
            },
        }
    }
    (scope, warnings)
}

fn parse_tool_token(token: &str) -> Result<ToolScope, String> {
    let (head, glob) = match token.split_once('(') {
        Some((head, rest)) => {
            let pattern = rest.strip_suffix(')').ok_or("missing closing parenthesis")?.trim();
            if pattern.is_empty() {
                return Err("empty path glob".into());
            }
            (head.trim(), Some(compile_glob(pattern)?))
        }
        None => (token, None),
    };
    let name = match head.split_once(':') {
        Some((prefix, name)) if prefix.eq_ignore_ascii_case("tool") => Some(name),
        Some(_) => return Err("expected text, thinking, tool, tool:<name> or <name>".into()),
        None if head.eq_ignore_ascii_case("tool") || head.eq_ignore_ascii_case("toolcall") => None,
        None => Some(head),
    };
    if let Some(name) = name
        && (name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
    {
        return Err(format!("invalid tool name \"{name}\""));
    }
    Ok(ToolScope { name: name.map(str::to_ascii_lowercase), glob })
}

/// A path glob: `*` stays within one path segment.
pub(crate) fn compile_glob(pattern: &str) -> Result<GlobMatcher, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("invalid glob \"{pattern}\": {e}"))
}

/// Whether any of `paths`, or its file name, matches.
pub(crate) fn glob_matches(glob: &GlobMatcher, paths: &[String]) -> bool {
    paths.iter().any(|p| glob.is_match(p) || p.rsplit_once('/').is_some_and(|(_, name)| glob.is_match(name)))
}

/// The forms a tool call's path argument is matched in: as given (with `/` separators), without
/// a leading `./`, absolute, and relative to `cwd` when inside it.
pub(crate) fn path_candidates(raw: &str, cwd: &Path) -> Vec<String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Vec::new();
    }
    let slashed = trimmed.replace('\\', "/");
    let mut out = vec![slashed.clone()];
    if let Some(rest) = slashed.strip_prefix("./") {
        out.push(rest.to_owned());
    }
    let absolute = normalize(&cwd.join(trimmed));
    out.push(absolute.to_string_lossy().replace('\\', "/"));
    if let Ok(relative) = absolute.strip_prefix(normalize(cwd))
        && !relative.as_os_str().is_empty()
    {
        out.push(relative.to_string_lossy().replace('\\', "/"));
    }
    let mut unique = Vec::with_capacity(out.len());
    for p in out {
        if !unique.contains(&p) {
            unique.push(p);
        }
    }
    unique
}

/// Resolves `.` and `..` without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(tokens: &[&str]) -> (Scope, Vec<String>) {
        compile_scope(&tokens.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>())
    }

    fn paths(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn default_is_text_and_tools_not_thinking() {
        let (s, _) = scope(&[]);
        assert!(s.allows(StreamSource::Text, None, &[]));
        assert!(s.allows(StreamSource::Tool, Some("bash"), &[]));
        assert!(!s.allows(StreamSource::Thinking, None, &[]));
    }

    #[test]
    fn tokens() {
        let (s, w) = scope(&["thinking", "tool:Edit(*.rs)", "bash"]);
        assert!(w.is_empty(), "{w:?}");
        assert!(s.allows(StreamSource::Thinking, None, &[]));
        assert!(!s.allows(StreamSource::Text, None, &[]));
        assert!(s.allows(StreamSource::Tool, Some("bash"), &[]));
        assert!(s.allows(StreamSource::Tool, Some("edit"), &paths(&["src/main.rs"])));
        assert!(!s.allows(StreamSource::Tool, Some("edit"), &paths(&["src/main.ts"])));
        assert!(!s.allows(StreamSource::Tool, Some("edit"), &[]), "path not known yet");
        assert!(!s.allows(StreamSource::Tool, Some("write"), &paths(&["src/main.rs"])));
        let (s, _) = scope(&["toolcall"]);
        assert!(s.allows(StreamSource::Tool, Some("anything"), &[]));
        let (s, _) = scope(&["tool(src/**)"]);
        assert!(s.allows(StreamSource::Tool, Some("write"), &paths(&["src/a/b.rs"])));
        assert!(!s.allows(StreamSource::Tool, Some("write"), &paths(&["lib/a.rs"])));
    }

    #[test]
    fn bad_tokens_warn_and_an_empty_scope_is_unreachable() {
        let (s, w) = scope(&["tool:ed it", "x:y", "edit(", "edit()", "tool:edit([)"]);
        assert_eq!(w.len(), 5, "{w:?}");
        assert!(!s.reachable());
        assert!(scope(&["text"]).0.reachable());
    }

    #[test]
    fn star_stays_in_a_segment_but_file_names_match() {
        let glob = compile_glob("*.rs").unwrap();
        assert!(glob_matches(&glob, &paths(&["deep/dir/main.rs"])));
        let glob = compile_glob("src/*.rs").unwrap();
        assert!(glob_matches(&glob, &paths(&["src/main.rs"])));
        assert!(!glob_matches(&glob, &paths(&["src/a/main.rs"])));
    }

    #[test]
    fn path_candidates_cover_relative_and_absolute_forms() {
        let cwd = Path::new("/work/p");
        assert_eq!(path_candidates("./src/a.rs", cwd), vec!["./src/a.rs", "src/a.rs", "/work/p/src/a.rs"]);
        assert_eq!(path_candidates("/work/p/b.rs", cwd), vec!["/work/p/b.rs", "b.rs"]);
        assert_eq!(path_candidates("../q/c.rs", cwd), vec!["../q/c.rs", "/work/q/c.rs"]);
        assert!(path_candidates("  ", cwd).is_empty());
    }
}
