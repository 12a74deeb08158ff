//! A [`Rule`] made ready for the stream: its conditions as regexes, its scope and globs
//! compiled. Only rules with a condition are TTSR rules; the others (plain Cursor rules,
//! always-apply rules) are not compiled and not reported. A rule with conditions is skipped,
//! with a diagnostic, when none of them compiles or its scope excludes every stream.
//!
//! Conditions use the `regex` crate's syntax, which covers what rule authors write in
//! practice (classes, alternation, `(?i)`-style flags, `\b`); look-around and back-references
//! do not compile and are reported.

use globset::GlobMatcher;
use regex::{Regex, RegexBuilder};

use super::rule::Rule;
use super::scope::{Scope, StreamSource, compile_glob, compile_scope, glob_matches};

/// Compiled regexes may not grow beyond this (a pathological pattern is reported instead).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A rule ready for matching.
#[derive(Debug, Clone)]
pub struct CompiledRule {
    pub rule: Rule,
    pub(crate) conditions: Vec<Regex>,
    pub(crate) scope: Scope,
    globs: Vec<GlobMatcher>,
}

impl CompiledRule {
    /// Whether a delta from `source` (of tool `tool`, whose path candidates are `paths`) is
    /// one this rule watches.
    pub(crate) fn applies(&self, source: StreamSource, tool: Option<&str>, paths: &[String]) -> bool {
        self.scope.allows(source, tool, paths)
            && (self.globs.is_empty() || self.globs.iter().any(|g| glob_matches(g, paths)))
    }

    /// Whether any condition matches `haystack` at or after byte `start`.
    pub(crate) fn matches_from(&self, haystack: &str, start: usize) -> bool {
        self.conditions.iter().any(|re| re.is_match_at(haystack, start))
    }
}

/// The outcome of compiling one rule.
#[derive(Debug)]
pub enum Compiled {
    /// A TTSR rule, with warnings about parts that were dropped.
    Rule(Box<CompiledRule>, Vec<String>),
    /// No condition: not a TTSR rule.
    NotTtsr,
    /// Has conditions but can never fire; the reasons.
    Skipped(Vec<String>),
}

/// Compiles `rule`.
pub fn compile_rule(rule: Rule) -> Compiled {
    if rule.condition.is_empty() {
        return Compiled::NotTtsr;
    }
    let mut warnings = Vec::new();
    let mut conditions = Vec::new();
    for pattern in &rule.condition {
        match RegexBuilder::new(pattern).size_limit(REGEX_SIZE_LIMIT).build() {
            Ok(re) => conditions.push(re),
            Err(e) => warnings.push(format!("condition {pattern:?} skipped: {}", first_line(&e.to_string()))),
        }
    }
    if conditions.is_empty() {
        warnings.push("rule skipped: no condition compiles".to_owned());
        return Compiled::Skipped(warnings);
    }
    let (scope, scope_warnings) = compile_scope(&rule.scope);
    warnings.extend(scope_warnings);
    if !scope.reachable() {
        warnings.push("rule skipped: its scope excludes every stream".to_owned());
        return Compiled::Skipped(warnings);
    }
    let mut globs = Vec::new();
    for pattern in &rule.globs {
        match compile_glob(pattern) {
            Ok(glob) => globs.push(glob),
            Err(e) => warnings.push(format!("{e}; glob ignored")),
        }
    }
    if !rule.globs.is_empty() && globs.is_empty() {
        warnings.push("rule skipped: none of its globs compiles".to_owned());
        return Compiled::Skipped(warnings);
    }
    if !globs.is_empty() && !scope.listens_to_tools() {
        warnings.push("rule skipped: it has globs but does not listen to tool calls".to_owned());
        return Compiled::Skipped(warnings);
    }
    Compiled::Rule(Box::new(CompiledRule { rule, conditions, scope, globs }), warnings)
}

fn first_line(s: &str) -> String {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ttsr::rule::{RuleLevel, RuleSource};

    fn rule(condition: &[&str], scope: &[&str], globs: &[&str]) -> Rule {
        let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        Rule {
            name: "r".into(),
            path: "/r.md".into(),
            content: "body".into(),
            globs: strings(globs),
            always_apply: None,
            description: None,
            condition: strings(condition),
            scope: strings(scope),
            interrupt_mode: None,
            source: RuleSource {
                provider: "native".into(),
                provider_name: "rho".into(),
                path: "/r.md".into(),
                level: RuleLevel::Project,
            },
        }
    }

    #[test]
    fn rules_without_conditions_are_not_ttsr_rules() {
        assert!(matches!(compile_rule(rule(&[], &[], &[])), Compiled::NotTtsr));
    }

    #[test]
    fn bad_conditions_are_dropped_and_a_rule_without_any_is_skipped() {
        let Compiled::Rule(r, warnings) = compile_rule(rule(&["(?<=x)y", "ok"], &[], &[])) else { panic!() };
        assert_eq!(r.conditions.len(), 1);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("condition \"(?<=x)y\" skipped"), "{warnings:?}");
        let Compiled::Skipped(reasons) = compile_rule(rule(&["(unclosed"], &[], &[])) else { panic!() };
        assert_eq!(reasons.last().unwrap(), "rule skipped: no condition compiles");
    }

    #[test]
    fn unreachable_scopes_are_skipped() {
        let Compiled::Skipped(reasons) = compile_rule(rule(&["x"], &["nonsense:token"], &[])) else { panic!() };
        assert_eq!(reasons.last().unwrap(), "rule skipped: its scope excludes every stream");
        let Compiled::Skipped(reasons) = compile_rule(rule(&["x"], &["text"], &["*.rs"])) else { panic!() };
        assert_eq!(reasons.last().unwrap(), "rule skipped: it has globs but does not listen to tool calls");
    }

    #[test]
    fn globs_restrict_tool_calls_by_path() {
        let Compiled::Rule(r, _) = compile_rule(rule(&["x"], &[], &["*.rs"])) else { panic!() };
        let rs = vec!["src/a.rs".to_owned()];
        assert!(r.applies(StreamSource::Tool, Some("edit"), &rs));
        assert!(!r.applies(StreamSource::Tool, Some("edit"), &["a.ts".to_owned()]));
        assert!(!r.applies(StreamSource::Text, None, &[]));
        assert!(r.matches_from("xx", 1));
        assert!(!r.matches_from("xa", 1));
    }
}
