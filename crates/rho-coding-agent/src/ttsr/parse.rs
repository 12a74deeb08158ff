//! Reading a rule file: front matter (through [`crate::prompt::frontmatter`]) to a [`Rule`].
//!
//! - `condition` is a string or a list of regexes; the legacy `ttsr_trigger` / `ttsrTrigger`
//!   are read when it is absent. A condition that looks like a file glob rather than a regex
//!   (`*.rs`, or a pattern with `/` and glob characters but no regex metacharacters) becomes
//!   the scopes `tool:edit(<glob>)` and `tool:write(<glob>)`, with `.*` as the condition when
//!   no real regex is left.
//! - `scope` and `globs` are strings or lists; a string may hold several comma-separated
//!   tokens (commas inside `()`, `[]`, `{}` or quotes do not split), and quotes around a token
//!   are dropped.
//! - `interruptMode` overrides `ttsr.interruptMode`; an unknown value is ignored with a warning.
//!
//! Cursor's `.mdc` files often carry front matter that is not valid YAML (`globs: *.ts`), so
//! when the YAML parser refuses the block, simple `key: value` lines (and `- item` lists) are
//! read instead.

use std::path::Path;

use serde_json::{Map, Value};

use super::rule::{Rule, RuleSource, parse_interrupt_mode};
use crate::prompt::frontmatter::{parse_front_matter, strip_front_matter};

/// The tools a glob-looking condition scopes a rule to.
const GLOB_CONDITION_TOOLS: [&str; 2] = ["edit", "write"];

/// A rule from the text of its file, with warnings about fields that were ignored.
pub fn parse_rule(name: &str, path: &Path, text: &str, source: RuleSource) -> (Rule, Vec<String>) {
    let (fields, body) = match parse_front_matter(text) {
        Ok(fm) => (fm.fields, fm.body),
        Err(_) => (lenient_fields(text), strip_front_matter(text)),
    };
    let mut warnings = Vec::new();
    let raw_condition = ["condition", "ttsr_trigger", "ttsrTrigger"].iter().find_map(|k| fields.get(*k));
    let mut condition = Vec::new();
    let mut inferred_scope = Vec::new();
    for token in raw_condition.map(string_list).unwrap_or_default() {
        if is_likely_file_glob(&token) {
            inferred_scope.extend(GLOB_CONDITION_TOOLS.iter().map(|tool| format!("tool:{tool}({token})")));
        } else {
            condition.push(token);
        }
    }
    if condition.is_empty() && !inferred_scope.is_empty() {
        condition.push(".*".to_owned());
    }
    let mut scope = fields.get("scope").map(token_list).unwrap_or_default();
    scope.extend(inferred_scope);
    let interrupt_mode = match fields.get("interruptMode") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if parse_interrupt_mode(s.trim()).is_some() => parse_interrupt_mode(s.trim()),
        Some(other) => {
            warnings.push(format!(
                "unknown interruptMode {other} (expected always, prose-only, tool-only or never); using the setting"
            ));
            None
        }
    };
    let always_apply = match fields.get("alwaysApply") {
        Some(Value::Bool(b)) => Some(*b),
        Some(Value::String(s)) if s.trim() == "true" => Some(true),
        Some(Value::String(s)) if s.trim() == "false" => Some(false),
        _ => None,
    };
    let description =
        fields.get("description").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    let rule = Rule {
        name: name.to_owned(),
        path: path.to_path_buf(),
        content: body.trim().to_owned(),
        globs: fields.get("globs").map(token_list).unwrap_or_default(),
        always_apply,
        description,
        condition: dedup(condition),
        scope: dedup(scope),
        interrupt_mode,
        source,
    };
    (rule, warnings)
}

/// A string or a list of strings, trimmed, blanks and duplicates dropped.
fn string_list(value: &Value) -> Vec<String> {
    let items: Vec<String> = match value {
        Value::String(s) => vec![s.trim().to_owned()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).map(|s| s.trim().to_owned()).collect(),
        _ => Vec::new(),
    };
    dedup(items.into_iter().filter(|s| !s.is_empty()).collect())
}

/// [`string_list`], each item split into comma-separated tokens without surrounding quotes.
fn token_list(value: &Value) -> Vec<String> {
    let tokens = string_list(value)
        .iter()
        .flat_map(|s| split_tokens(s))
        .map(|t| unquote(&t).trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect();
    dedup(tokens)
}

fn dedup(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

fn unquote(token: &str) -> &str {
    let bytes = token.as_bytes();
    if bytes.len() >= 2 && (bytes[0] == b'"' || bytes[0] == b'\'') && bytes[bytes.len() - 1] == bytes[0] {
        &token[1..token.len() - 1]
    } else {
        token
    }
}

/// Splits on commas outside brackets and quotes.
pub fn split_tokens(value: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut depth: i32 = 0;
    let mut quote: Option<char> = None;
    let mut prev = '\0';
    for c in value.chars() {
        match quote {
            Some(q) => {
                if c == q && prev != '\\' {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = (depth - 1).max(0),
                ',' if depth == 0 => {
                    tokens.push(std::mem::take(&mut current).trim().to_owned());
                    prev = c;
                    continue;
                }
                _ => {}
            },
        }
        current.push(c);
        prev = c;
    }
    tokens.push(current.trim().to_owned());
    tokens.retain(|t| !t.is_empty());
    tokens
}

/// Whether a condition is a file glob (`*.rs`, `src/**/*.ts`) rather than a regex.
pub fn is_likely_file_glob(token: &str) -> bool {
    let token = token.trim();
    if token.is_empty() || token.contains(['\\', '^', '$', '+', '|', '(', ')']) {
        return false;
    }
    if !token.contains(['?', '*', '[', ']', '{', '}']) {
        return false;
    }
    if token.contains('/') {
        return true;
    }
    token.strip_prefix("*.").is_some_and(|ext| !ext.is_empty() && !ext.contains(char::is_whitespace))
}

/// `key: value` lines (and `- item` lists under a bare `key:`) of a front-matter block that is
/// not valid YAML.
fn lenient_fields(text: &str) -> Map<String, Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).replace("\r\n", "\n");
    let mut fields = Map::new();
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return fields;
    }
    let mut list_key: Option<String> = None;
    for line in lines {
        if line.trim_end() == "---" {
            break;
        }
        let trimmed = line.trim();
        if let Some(item) = trimmed.strip_prefix("- ").or_else(|| (trimmed == "-").then_some("")) {
            if let Some(Value::Array(items)) = list_key.as_ref().and_then(|k| fields.get_mut(k)) {
                items.push(Value::String(unquote(item.trim()).to_owned()));
            }
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().to_owned();
        let value = value.trim();
        list_key = None;
        if key.is_empty() {
            continue;
        }
        let value = if value.is_empty() {
            list_key = Some(key.clone());
            Value::Array(Vec::new())
        } else if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            Value::Array(split_tokens(inner).iter().map(|t| Value::String(unquote(t).to_owned())).collect())
        } else if value == "true" || value == "false" {
            Value::Bool(value == "true")
        } else {
            Value::String(unquote(value).to_owned())
        };
        fields.insert(key, value);
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::TtsrInterruptMode;
    use crate::ttsr::rule::RuleLevel;

    fn source() -> RuleSource {
        RuleSource {
            provider: "native".into(),
            provider_name: "rho".into(),
            path: "/r.md".into(),
            level: RuleLevel::User,
        }
    }

    fn parse(text: &str) -> (Rule, Vec<String>) {
        parse_rule("r", Path::new("/r.md"), text, source())
    }

    #[test]
    fn condition_as_string_or_list_and_legacy_keys() {
        assert_eq!(parse("---\ncondition: console\\.log\n---\nbody\n").0.condition, vec!["console\\.log"]);
        assert_eq!(parse("---\ncondition: [\"a+\", 'b', a+]\n---\n").0.condition, vec!["a+", "b"]);
        assert_eq!(parse("---\nttsr_trigger: \"foo\"\n---\n").0.condition, vec!["foo"]);
        assert_eq!(parse("---\nttsrTrigger: bar\n---\n").0.condition, vec!["bar"]);
        assert_eq!(parse("---\ncondition: x\nttsr_trigger: y\n---\n").0.condition, vec!["x"]);
        let (rule, _) = parse("no front matter at all\n");
        assert!(rule.condition.is_empty());
        assert_eq!(rule.content, "no front matter at all");
    }

    #[test]
    fn glob_conditions_become_edit_and_write_scopes() {
        let (rule, _) = parse("---\ncondition: \"*.rs\"\n---\n");
        assert_eq!(rule.condition, vec![".*"]);
        assert_eq!(rule.scope, vec!["tool:edit(*.rs)", "tool:write(*.rs)"]);
        let (rule, _) = parse("---\ncondition: [\"src/**/*.ts\", \"unwrap\\\\(\\\\)\"]\nscope: text\n---\n");
        assert_eq!(rule.condition, vec!["unwrap\\(\\)"]);
        assert_eq!(rule.scope, vec!["text", "tool:edit(src/**/*.ts)", "tool:write(src/**/*.ts)"]);
        for regex in ["foo.*bar", "^\\*.rs$", "a|b", "*.rs is bad", "src/main.rs", "(x)*"] {
            assert!(!is_likely_file_glob(regex), "{regex}");
        }
        for glob in ["*.rs", "*.test.ts", "src/*", "**/*.{ts,tsx}", "docs/[ab].md"] {
            assert!(is_likely_file_glob(glob), "{glob}");
        }
    }

    #[test]
    fn scope_and_globs_split_on_top_level_commas() {
        let (rule, _) = parse(
            "---\ncondition: x\nscope: \"text, tool:edit(*.{ts,tsx}), 'thinking'\"\nglobs: \"*.ts, src/**\"\n---\n",
        );
        assert_eq!(rule.scope, vec!["text", "tool:edit(*.{ts,tsx})", "thinking"]);
        assert_eq!(rule.globs, vec!["*.ts", "src/**"]);
        assert_eq!(split_tokens("a(b,c),\"d,e\", ,f"), vec!["a(b,c)", "\"d,e\"", "f"]);
    }

    #[test]
    fn other_fields() {
        let (rule, warnings) = parse(
            "---\ncondition: x\ninterruptMode: tool-only\nalwaysApply: true\ndescription: \"  Why  \"\n---\n\n  Body text.\n\n",
        );
        assert!(warnings.is_empty());
        assert_eq!(rule.interrupt_mode, Some(TtsrInterruptMode::ToolOnly));
        assert_eq!(rule.always_apply, Some(true));
        assert_eq!(rule.description.as_deref(), Some("Why"));
        assert_eq!(rule.content, "Body text.");
        let (rule, warnings) = parse("---\ncondition: x\ninterruptMode: sometimes\n---\n");
        assert_eq!(rule.interrupt_mode, None);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("\"sometimes\""), "{warnings:?}");
    }

    #[test]
    fn cursor_front_matter_that_is_not_yaml() {
        let (rule, _) = parse(
            "---\ndescription: TS rules\nglobs: *.ts, *.tsx\nalwaysApply: false\ncondition:\n  - any\\(\n  - \"as unknown\"\n---\nUse types.\n",
        );
        assert_eq!(rule.globs, vec!["*.ts", "*.tsx"]);
        assert_eq!(rule.always_apply, Some(false));
        assert_eq!(rule.description.as_deref(), Some("TS rules"));
        assert_eq!(rule.condition, vec!["any\\(", "as unknown"]);
        assert_eq!(rule.content, "Use types.");
    }
}
