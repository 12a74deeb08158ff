//! What the model is told when rules fire: one block per rule, wrapped in
//! `<system-interrupt reason="rule_violation" rule="…" path="…">` tags, saying why the output
//! stopped and that the rule must be followed, then the rule's own text. The session sends it
//! as a hidden `custom` message (`customType: "ttsr-injection"`) and continues the run.

use rho_types::types::{Attribution, UserMessageContent};
use rho_types::{AgentMessage, CustomMessage};
use serde_json::json;

use super::rule::Rule;

/// `customType` of the injection message.
pub const INJECTION_CUSTOM_TYPE: &str = "ttsr-injection";

/// An attribute value with the characters that would end or break it escaped.
fn attribute(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;")
}

/// The injection for one rule.
pub fn rule_injection(rule: &Rule) -> String {
    format!(
        "<system-interrupt reason=\"rule_violation\" rule=\"{}\" path=\"{}\">\n\
         Your output was stopped because it broke a rule the user set for this project.\n\
         This is not a prompt injection: it is the coding agent enforcing the project's own rules.\n\
         You **must** follow the instruction below from now on, including when you redo the interrupted work.\n\
         \n\
         {}\n\
         </system-interrupt>",
        attribute(&rule.name),
        attribute(&rule.path.to_string_lossy()),
        rule.content
    )
}

/// The injection for all `rules`, blocks separated by a blank line.
pub fn injection_text<'a>(rules: impl IntoIterator<Item = &'a Rule>) -> String {
    rules.into_iter().map(rule_injection).collect::<Vec<_>>().join("\n\n")
}

/// The hidden message the session appends (`details.rules` names the rules).
pub fn injection_message<'a>(rules: impl IntoIterator<Item = &'a Rule> + Clone, timestamp: i64) -> AgentMessage {
    let names: Vec<&str> = rules.clone().into_iter().map(|r| r.name.as_str()).collect();
    AgentMessage::Custom(CustomMessage {
        custom_type: INJECTION_CUSTOM_TYPE.to_owned(),
        content: UserMessageContent::Text(injection_text(rules).into()),
        display: false,
        details: Some(json!({ "rules": names })),
        attribution: Some(Attribution::Agent),
        timestamp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ttsr::rule::{RuleLevel, RuleSource};

    fn rule(name: &str, content: &str) -> Rule {
        Rule {
            name: name.into(),
            path: format!("/p/.rho/rules/{name}.md").into(),
            content: content.into(),
            globs: vec![],
            always_apply: None,
            description: None,
            condition: vec!["x".into()],
            scope: vec![],
            interrupt_mode: None,
            source: RuleSource {
                provider: "native".into(),
                provider_name: "rho".into(),
                path: format!("/p/.rho/rules/{name}.md").into(),
                level: RuleLevel::Project,
            },
        }
    }

    #[test]
    fn one_block_per_rule() {
        let rules = [rule("no-console", "Use the logger."), rule("a\"b", "Second.")];
        let text = injection_text(&rules);
        assert_eq!(
            text,
            "<system-interrupt reason=\"rule_violation\" rule=\"no-console\" path=\"/p/.rho/rules/no-console.md\">\n\
             Your output was stopped because it broke a rule the user set for this project.\n\
             This is not a prompt injection: it is the coding agent enforcing the project's own rules.\n\
             You **must** follow the instruction below from now on, including when you redo the interrupted work.\n\
             \n\
             Use the logger.\n\
             </system-interrupt>\n\
             \n\
             <system-interrupt reason=\"rule_violation\" rule=\"a&quot;b\" path=\"/p/.rho/rules/a&quot;b.md\">\n\
             Your output was stopped because it broke a rule the user set for this project.\n\
             This is not a prompt injection: it is the coding agent enforcing the project's own rules.\n\
             You **must** follow the instruction below from now on, including when you redo the interrupted work.\n\
             \n\
             Second.\n\
             </system-interrupt>"
        );
        let AgentMessage::Custom(m) = injection_message(&rules, 3) else { panic!() };
        assert_eq!(m.custom_type, "ttsr-injection");
        assert!(!m.display);
        assert_eq!(m.details, Some(json!({"rules": ["no-console", "a\"b"]})));
        assert_eq!(m.content.text_joined(""), text);
    }
}
