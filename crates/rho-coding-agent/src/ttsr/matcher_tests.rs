//! Tests of [`super::TtsrMatcher`].

use super::*;
use crate::config::settings::TtsrContextMode;
use crate::ttsr::compile::{Compiled, compile_rule};
use crate::ttsr::rule::{RuleLevel, RuleSource};

fn settings() -> TtsrSettings {
    TtsrSettings {
        enabled: true,
        context_mode: TtsrContextMode::Discard,
        repeat_mode: TtsrRepeatMode::Once,
        repeat_gap: 2,
        interrupt_mode: TtsrInterruptMode::Always,
    }
}

struct R<'a> {
    name: &'a str,
    condition: &'a [&'a str],
    scope: &'a [&'a str],
    globs: &'a [&'a str],
    mode: Option<TtsrInterruptMode>,
}

const BASE: R<'static> = R { name: "r", condition: &["x"], scope: &[], globs: &[], mode: None };

fn compiled(r: R<'_>) -> CompiledRule {
    let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let rule = Rule {
        name: r.name.into(),
        path: format!("/p/.rho/rules/{}.md", r.name).into(),
        content: format!("Rule {}.", r.name),
        globs: strings(r.globs),
        always_apply: None,
        description: None,
        condition: strings(r.condition),
        scope: strings(r.scope),
        interrupt_mode: r.mode,
        source: RuleSource {
            provider: "native".into(),
            provider_name: "rho".into(),
            path: format!("/p/.rho/rules/{}.md", r.name).into(),
            level: RuleLevel::Project,
        },
    };
    match compile_rule(rule) {
        Compiled::Rule(rule, _) => *rule,
        other => panic!("{other:?}"),
    }
}

fn matcher(rules: Vec<R<'_>>, settings: TtsrSettings) -> TtsrMatcher {
    TtsrMatcher::new(rules.into_iter().map(compiled).collect(), settings, PathBuf::from("/p"))
}

fn text(i: usize, delta: &str) -> AssistantMessageEvent {
    AssistantMessageEvent::TextDelta { content_index: i, delta: delta.into() }
}

fn thinking(i: usize, delta: &str) -> AssistantMessageEvent {
    AssistantMessageEvent::ThinkingDelta { content_index: i, delta: delta.into() }
}

fn tool_start(i: usize, name: &str) -> AssistantMessageEvent {
    AssistantMessageEvent::ToolCallStart { content_index: i, id: format!("call-{i}"), name: name.into() }
}

fn tool(i: usize, delta: &str) -> AssistantMessageEvent {
    AssistantMessageEvent::ToolCallDelta { content_index: i, delta: delta.into() }
}

fn names(m: &Option<TtsrMatch>) -> Vec<String> {
    m.as_ref().map(|m| m.rules.iter().map(|r| r.name.clone()).collect()).unwrap_or_default()
}

#[test]
fn a_condition_split_across_deltas_fires_on_the_delta_that_completes_it() {
    let mut m = matcher(vec![R { name: "no-console", condition: &["console\\.log\\("], ..BASE }], settings());
    m.turn_start();
    assert_eq!(m.on_event(&AssistantMessageEvent::TextStart { content_index: 0 }), None);
    assert_eq!(m.on_event(&text(0, "I will add con")), None);
    assert_eq!(m.on_event(&text(0, "sole.lo")), None);
    let hit = m.on_event(&text(0, "g(\"debug\")"));
    assert_eq!(names(&hit), vec!["no-console"]);
    let hit = hit.unwrap();
    assert_eq!((hit.source, hit.interrupt), (StreamSource::Text, true));
    assert_eq!(hit.rpc_rules()[0].name, "no-console");
    assert!(hit.injection_text().contains("rule=\"no-console\""));
    // It does not fire again in the same turn, even without an injection.
    assert_eq!(m.on_event(&text(0, " console.log(")), None);
}

#[test]
fn text_and_thinking_blocks_have_separate_buffers() {
    let mut m = matcher(vec![R { condition: &["ab"], scope: &["text", "thinking"], ..BASE }], settings());
    m.turn_start();
    assert_eq!(m.on_event(&thinking(0, "a")), None);
    assert_eq!(m.on_event(&text(1, "b")), None);
    assert_eq!(names(&m.on_event(&thinking(0, "b"))), vec!["r"]);
}

#[test]
fn once_never_fires_again_after_injection() {
    let mut m = matcher(vec![BASE], settings());
    for turn in 0..4 {
        m.turn_start();
        let hit = m.on_event(&text(0, "x"));
        if turn == 0 {
            assert_eq!(names(&hit), vec!["r"]);
            m.mark_injected(["r"]);
        } else {
            assert_eq!(hit, None, "turn {turn}");
        }
        m.turn_end();
    }
    assert_eq!(m.injected_rule_names(), vec!["r"]);
}

#[test]
fn a_rule_not_injected_may_fire_again_next_turn() {
    let mut m = matcher(vec![BASE], settings());
    m.turn_start();
    assert!(m.on_event(&text(0, "x")).is_some());
    m.turn_end();
    m.turn_start();
    assert!(m.on_event(&text(0, "x")).is_some());
}

#[test]
fn after_gap_fires_again_once_enough_turns_ended() {
    let mut m = matcher(vec![BASE], TtsrSettings { repeat_mode: TtsrRepeatMode::AfterGap, ..settings() });
    let mut fired = Vec::new();
    for turn in 0..6 {
        m.turn_start();
        if let Some(hit) = m.on_event(&text(0, "x")) {
            fired.push(turn);
            m.mark_injected(hit.rule_names());
        }
        m.turn_end();
    }
    assert_eq!(fired, vec![0, 2, 4], "gap of 2 turns");
}

#[test]
fn restored_injections_count_from_turn_zero() {
    let mut m = matcher(vec![BASE], TtsrSettings { repeat_mode: TtsrRepeatMode::AfterGap, ..settings() });
    m.restore_injected(["r"]);
    m.turn_start();
    assert_eq!(m.on_event(&text(0, "x")), None);
    m.turn_end();
    m.turn_end();
    m.turn_start();
    assert!(m.on_event(&text(0, "x")).is_some());
}

#[test]
fn scope_excludes_other_sources() {
    let mut m = matcher(
        vec![
            R { name: "default", ..BASE },
            R { name: "text-only", scope: &["text"], ..BASE },
            R { name: "thinking-only", scope: &["thinking"], ..BASE },
            R { name: "bash-only", scope: &["tool:bash"], ..BASE },
        ],
        settings(),
    );
    m.turn_start();
    assert_eq!(names(&m.on_event(&thinking(0, "x"))), vec!["thinking-only"]);
    m.turn_start();
    assert_eq!(names(&m.on_event(&text(1, "x"))), vec!["default", "text-only"]);
    m.turn_start();
    m.on_event(&tool_start(2, "read"));
    assert_eq!(names(&m.on_event(&tool(2, r#"{"path":"x"}"#))), vec!["default"]);
    m.turn_start();
    m.on_event(&tool_start(3, "bash"));
    let hit = m.on_event(&tool(3, r#"{"command":"x"}"#)).unwrap();
    assert_eq!(names(&Some(hit.clone())), vec!["default", "bash-only"]);
    assert_eq!((hit.tool_name.as_deref(), hit.tool_call_id.as_deref()), (Some("bash"), Some("call-3")));
}

#[test]
fn tool_arguments_are_matched_decoded() {
    let mut m = matcher(vec![R { condition: &["\"hi\"\\);\\n}"], scope: &["tool"], ..BASE }], settings());
    m.turn_start();
    m.on_event(&tool_start(0, "write"));
    assert_eq!(m.on_event(&tool(0, r#"{"path":"a.rs","content":"fn main() {\n  print(\"hi"#)), None);
    assert_eq!(names(&m.on_event(&tool(0, r#"\");\n}"}"#))), vec!["r"]);
}

#[test]
fn glob_scopes_wait_for_the_path_and_then_search_the_whole_call() {
    // `*.rs` as a condition: edits and writes of Rust files, whatever they contain.
    let mut m = matcher(
        vec![
            R { name: "rust-files", condition: &[".*"], scope: &["tool:edit(*.rs)", "tool:write(*.rs)"], ..BASE },
            R { name: "unwrap-in-src", condition: &["\\.unwrap\\(\\)"], globs: &["src/**"], ..BASE },
        ],
        settings(),
    );
    m.turn_start();
    m.on_event(&tool_start(0, "write"));
    // Content first, path last: nothing can match until the path is known.
    assert_eq!(m.on_event(&tool(0, r#"{"content":"let v = x.unwrap();","#)), None);
    assert_eq!(m.on_event(&tool(0, r#""path":"./src/lib"#)), None);
    let hit = m.on_event(&tool(0, r#".rs"}"#));
    assert_eq!(names(&hit), vec!["rust-files", "unwrap-in-src"]);
    // Other tools and other files are out of scope.
    m.turn_start();
    m.on_event(&tool_start(1, "read"));
    assert_eq!(
        m.on_event(&tool(1, r#"{"path":"src/lib.rs","x":".unwrap()"}"#)).map(|h| names(&Some(h))),
        Some(vec!["unwrap-in-src".to_owned()])
    );
    m.turn_start();
    m.on_event(&tool_start(2, "edit"));
    assert_eq!(m.on_event(&tool(2, r#"{"path":"docs/a.md","newText":"x.unwrap()"}"#)), None);
    // Text never carries a path, so a rule with globs ignores it.
    m.turn_start();
    assert_eq!(m.on_event(&text(3, "x.unwrap()")), None);
}

#[test]
fn interrupt_modes_per_rule_and_global() {
    let prose = |mode| R { name: "p", mode: Some(mode), ..BASE };
    let mut m = matcher(vec![prose(TtsrInterruptMode::ProseOnly)], settings());
    m.turn_start();
    assert!(m.on_event(&text(0, "x")).unwrap().interrupt);
    m.turn_start();
    m.on_event(&tool_start(1, "bash"));
    assert!(!m.on_event(&tool(1, r#"{"c":"x"}"#)).unwrap().interrupt);

    let mut m = matcher(vec![BASE], TtsrSettings { interrupt_mode: TtsrInterruptMode::ToolOnly, ..settings() });
    m.turn_start();
    assert!(!m.on_event(&text(0, "x")).unwrap().interrupt);
    m.turn_start();
    m.on_event(&tool_start(1, "bash"));
    assert!(m.on_event(&tool(1, r#"{"c":"x"}"#)).unwrap().interrupt);

    // One interrupting rule among the matches interrupts.
    let mut m = matcher(
        vec![R { name: "quiet", mode: Some(TtsrInterruptMode::Never), ..BASE }, R { name: "loud", ..BASE }],
        settings(),
    );
    m.turn_start();
    let hit = m.on_event(&text(0, "x")).unwrap();
    assert_eq!((hit.rules.len(), hit.interrupt), (2, true));
    let mut m = matcher(vec![R { name: "quiet", mode: Some(TtsrInterruptMode::Never), ..BASE }], settings());
    m.turn_start();
    assert!(!m.on_event(&text(0, "x")).unwrap().interrupt);
}

#[test]
fn the_search_window_keeps_anchors_right() {
    let mut m = matcher(
        vec![R { name: "start", condition: &["^foo"], ..BASE }, R { name: "word", condition: &["\\bbar\\b"], ..BASE }],
        settings(),
    );
    m.turn_start();
    let long = "a".repeat(3 * MATCH_WINDOW);
    assert_eq!(m.on_event(&text(0, &long)), None);
    assert_eq!(m.on_event(&text(0, "foo")), None, "^ is the start of the buffer, not of the window");
    assert_eq!(m.on_event(&text(0, "bar")), None, "no word boundary before bar");
    assert_eq!(names(&m.on_event(&text(0, " bar "))), vec!["word"]);
    m.turn_start();
    assert_eq!(names(&m.on_event(&text(0, "fo"))), Vec::<String>::new());
    assert_eq!(names(&m.on_event(&text(0, "o"))), vec!["start"]);
    // Multi-byte text before the window start does not break the char boundary.
    m.turn_start();
    assert_eq!(m.on_event(&text(0, &"é".repeat(MATCH_WINDOW))), None);
    assert_eq!(names(&m.on_event(&text(0, " bar"))), vec!["word"]);
}

#[test]
fn disabled_or_ruleless_matchers_do_nothing() {
    let mut m = matcher(vec![BASE], TtsrSettings { enabled: false, ..settings() });
    assert!(!m.has_rules());
    assert_eq!(m.on_event(&text(0, "x")), None);
    let mut m = matcher(vec![], settings());
    assert_eq!(m.on_event(&text(0, "x")), None);
}

#[test]
fn deltas_without_a_start_event_still_count() {
    let mut m = matcher(vec![BASE], settings());
    assert_eq!(names(&m.on_event(&tool(5, r#"{"a":"x"}"#))), vec!["r"]);
    assert_eq!(m.rules().count(), 1);
}
