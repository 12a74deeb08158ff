//! A TTSR rule as discovered: a markdown file's body plus what its front matter says about when
//! it fires, and where it came from. [`Rule::to_rpc`] is its `ttsr_triggered` shape.

use std::path::PathBuf;

use rho_rpc::{TtsrRule, TtsrRuleSource};

use crate::config::settings::TtsrInterruptMode;

/// Whether a rule file belongs to the user or to the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleLevel {
    User,
    Project,
}

impl RuleLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
        }
    }
}

/// Which provider found a rule, and where (`_source` on the wire).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSource {
    /// The provider's id (`native`, `cursor`, `windsurf`, ...).
    pub provider: String,
    /// Its display name (`rho`, `Cursor`, ...).
    pub provider_name: String,
    pub path: PathBuf,
    pub level: RuleLevel,
}

/// One rule file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The file stem (`no-console` for `no-console.md`).
    pub name: String,
    pub path: PathBuf,
    /// The body after the front matter, trimmed.
    pub content: String,
    /// File globs the tool call's path must match (`globs`).
    pub globs: Vec<String>,
    pub always_apply: Option<bool>,
    pub description: Option<String>,
    /// Regex conditions, any of which fires the rule (`condition`, or the legacy
    /// `ttsr_trigger` / `ttsrTrigger`); glob-looking conditions already moved into `scope`.
    pub condition: Vec<String>,
    /// Stream scope tokens (`text`, `thinking`, `tool`, `tool:edit(*.rs)`, ...).
    pub scope: Vec<String>,
    /// Per-rule override of `ttsr.interruptMode`.
    pub interrupt_mode: Option<TtsrInterruptMode>,
    pub source: RuleSource,
}

/// An interrupt mode by its settings name.
pub fn interrupt_mode_name(mode: TtsrInterruptMode) -> &'static str {
    match mode {
        TtsrInterruptMode::Always => "always",
        TtsrInterruptMode::ProseOnly => "prose-only",
        TtsrInterruptMode::ToolOnly => "tool-only",
        TtsrInterruptMode::Never => "never",
    }
}

/// An interrupt mode from its settings name.
pub fn parse_interrupt_mode(s: &str) -> Option<TtsrInterruptMode> {
    match s {
        "always" => Some(TtsrInterruptMode::Always),
        "prose-only" => Some(TtsrInterruptMode::ProseOnly),
        "tool-only" => Some(TtsrInterruptMode::ToolOnly),
        "never" => Some(TtsrInterruptMode::Never),
        _ => None,
    }
}

fn non_empty(list: &[String]) -> Option<Vec<String>> {
    (!list.is_empty()).then(|| list.to_vec())
}

impl Rule {
    /// The rule as `ttsr_triggered.rules[]` carries it.
    pub fn to_rpc(&self) -> TtsrRule {
        TtsrRule {
            name: self.name.clone(),
            path: self.path.to_string_lossy().into_owned(),
            content: self.content.clone(),
            globs: non_empty(&self.globs),
            always_apply: self.always_apply,
            description: self.description.clone(),
            condition: non_empty(&self.condition),
            scope: non_empty(&self.scope),
            interrupt_mode: self.interrupt_mode.map(|m| interrupt_mode_name(m).to_owned()),
            source: Some(TtsrRuleSource {
                provider: self.source.provider.clone(),
                provider_name: self.source.provider_name.clone(),
                path: self.source.path.to_string_lossy().into_owned(),
                level: self.source.level.as_str().to_owned(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rpc_shape() {
        let rule = Rule {
            name: "no-console".into(),
            path: "/p/.rho/rules/no-console.md".into(),
            content: "Use the logger.".into(),
            globs: vec![],
            always_apply: None,
            description: Some("d".into()),
            condition: vec!["console\\.log".into()],
            scope: vec!["tool:edit(*.ts)".into()],
            interrupt_mode: Some(TtsrInterruptMode::ProseOnly),
            source: RuleSource {
                provider: "native".into(),
                provider_name: "rho".into(),
                path: "/p/.rho/rules/no-console.md".into(),
                level: RuleLevel::Project,
            },
        };
        assert_eq!(
            serde_json::to_value(rule.to_rpc()).unwrap(),
            json!({"name":"no-console","path":"/p/.rho/rules/no-console.md","content":"Use the logger.",
                "description":"d","condition":["console\\.log"],"scope":["tool:edit(*.ts)"],
                "interruptMode":"prose-only",
                "_source":{"provider":"native","providerName":"rho","path":"/p/.rho/rules/no-console.md","level":"project"}})
        );
        for mode in [
            TtsrInterruptMode::Always,
            TtsrInterruptMode::ProseOnly,
            TtsrInterruptMode::ToolOnly,
            TtsrInterruptMode::Never,
        ] {
            assert_eq!(parse_interrupt_mode(interrupt_mode_name(mode)), Some(mode));
        }
        assert_eq!(parse_interrupt_mode("sometimes"), None);
    }
}
