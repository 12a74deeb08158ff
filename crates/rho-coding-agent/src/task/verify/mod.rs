//! `verify` (docs/protocol.md, "Verification"): which verification a batch gets, from the argument
//! and the `task.verification.*` settings, and the attempts themselves ([`attempt`]).
//!
//! Resolution (docs/protocol.md, "Verification" and "Verification edge cases"):
//! - absent or `false`: none, unless the task is isolated and `requireForIsolated` is on (then
//!   the default profile);
//! - `true` or `""`: the profile named by `defaultProfile`;
//! - a string: that profile;
//! - an object: inline commands, or with `profile` that profile with the inline `commands`
//!   appended and the inline `mode` / `onFailure` taking precedence.
//!
//! With `task.verification.enabled` off, a requested verification is recorded as
//! `not_requested` (with `requested: true`) and nothing runs. A profile that does not exist is a
//! tool error before anything runs.

pub mod attempt;

use rho_rpc::{VerificationResult, VerificationStatus, VerifyMode, VerifyOnFailure};

use super::params::VerifySpec;
use crate::config::settings::{TaskVerifyConfig, VerificationCommand, VerificationSettings};

/// A verification to run after each sub-agent.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyPlan {
    pub profile: Option<String>,
    pub mode: VerifyMode,
    pub commands: Vec<VerificationCommand>,
    pub on_failure: VerifyOnFailure,
    /// `task.verification.maxRetries`: repair runs allowed with `retry_once`.
    pub max_retries: u32,
    /// `task.verification.failureContextLineLimit`: output lines kept for the repair prompt.
    pub context_lines: usize,
}

/// What a batch's tasks get.
#[derive(Debug, Clone, PartialEq)]
pub enum Verification {
    /// Not asked for: results carry no `verification`.
    None,
    /// Asked for while `task.verification.enabled` is off.
    Disabled,
    Plan(VerifyPlan),
}

impl Verification {
    /// The result for a task whose verification never ran (`status` given).
    pub fn unrun(&self, status: VerificationStatus) -> Option<VerificationResult> {
        match self {
            Self::None => None,
            Self::Disabled => Some(VerificationResult {
                requested: true,
                profile: None,
                mode: None,
                status: VerificationStatus::NotRequested,
                attempts: Vec::new(),
                retries_used: 0,
                on_failure: None,
            }),
            Self::Plan(plan) => Some(VerificationResult {
                requested: true,
                profile: plan.profile.clone(),
                mode: Some(plan.mode),
                status,
                attempts: Vec::new(),
                retries_used: 0,
                on_failure: Some(plan.on_failure),
            }),
        }
    }
}

enum Wanted<'a> {
    DefaultProfile,
    Named(&'a str),
    Inline(&'a super::params::InlineVerify),
}

/// The verification for a batch; the error is the model-facing text.
pub fn resolve(
    spec: Option<&VerifySpec>,
    isolated: bool,
    settings: &VerificationSettings,
) -> Result<Verification, String> {
    let wanted = match spec {
        None | Some(VerifySpec::Flag(false)) if isolated && settings.require_for_isolated => Wanted::DefaultProfile,
        None | Some(VerifySpec::Flag(false)) => return Ok(Verification::None),
        Some(VerifySpec::Flag(true)) => Wanted::DefaultProfile,
        Some(VerifySpec::Profile(name)) if name.trim().is_empty() => Wanted::DefaultProfile,
        Some(VerifySpec::Profile(name)) => Wanted::Named(name.trim()),
        Some(VerifySpec::Inline(inline)) => Wanted::Inline(inline),
    };
    if !settings.enabled {
        return Ok(Verification::Disabled);
    }
    let (profile, config) = match wanted {
        Wanted::DefaultProfile => {
            let name = settings.default_profile.trim();
            if name.is_empty() {
                return Err("verify: true needs a default profile; set task.verification.defaultProfile, or name a \
                            profile, or give the commands inline"
                    .into());
            }
            (Some(name.to_owned()), profile(settings, name)?.clone())
        }
        Wanted::Named(name) => (Some(name.to_owned()), profile(settings, name)?.clone()),
        Wanted::Inline(inline) => {
            let commands = inline.commands.clone().unwrap_or_default();
            match inline.profile.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
                Some(name) => {
                    let mut base = profile(settings, name)?.clone();
                    base.commands.extend(commands);
                    base.mode = inline.mode.or(base.mode);
                    base.on_failure = inline.on_failure.or(base.on_failure);
                    (Some(name.to_owned()), base)
                }
                None => (None, TaskVerifyConfig { mode: inline.mode, commands, on_failure: inline.on_failure }),
            }
        }
    };
    Ok(Verification::Plan(VerifyPlan {
        profile,
        mode: config.mode.unwrap_or(VerifyMode::Command),
        commands: config.commands,
        on_failure: config.on_failure.unwrap_or(VerifyOnFailure::ReturnFailure),
        max_retries: u32::try_from(settings.max_retries).unwrap_or(u32::MAX),
        context_lines: usize::try_from(settings.failure_context_line_limit).unwrap_or(usize::MAX),
    }))
}

fn profile<'a>(settings: &'a VerificationSettings, name: &str) -> Result<&'a TaskVerifyConfig, String> {
    settings.profiles.get(name).ok_or_else(|| {
        if settings.profiles.is_empty() {
            format!("Unknown verification profile \"{name}\": no profiles are configured (task.verification.profiles)")
        } else {
            let names: Vec<&str> = settings.profiles.keys().map(String::as_str).collect();
            format!("Unknown verification profile \"{name}\". Profiles: {}", names.join(", "))
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::task::params::InlineVerify;

    fn cmd(name: &str) -> VerificationCommand {
        VerificationCommand { name: name.into(), command: format!("run {name}"), timeout_ms: None, optional: None }
    }

    fn settings() -> VerificationSettings {
        let ci = TaskVerifyConfig {
            mode: Some(VerifyMode::Command),
            commands: vec![cmd("typecheck")],
            on_failure: Some(VerifyOnFailure::DiscardPatch),
        };
        VerificationSettings {
            enabled: true,
            default_profile: "ci".into(),
            require_for_isolated: false,
            max_retries: 1,
            failure_context_line_limit: 200,
            profiles: [("ci".to_owned(), ci)].into(),
        }
    }

    fn plan(v: Verification) -> VerifyPlan {
        match v {
            Verification::Plan(p) => p,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn flags_and_names_pick_profiles() {
        let s = settings();
        assert_eq!(resolve(None, true, &s).unwrap(), Verification::None);
        assert_eq!(resolve(Some(&VerifySpec::Flag(false)), true, &s).unwrap(), Verification::None);
        let p = plan(resolve(Some(&VerifySpec::Flag(true)), true, &s).unwrap());
        assert_eq!((p.profile.as_deref(), p.on_failure), (Some("ci"), VerifyOnFailure::DiscardPatch));
        assert_eq!(plan(resolve(Some(&VerifySpec::Profile(String::new())), true, &s).unwrap()).commands.len(), 1);
        let err = resolve(Some(&VerifySpec::Profile("nope".into())), true, &s).unwrap_err();
        assert_eq!(err, "Unknown verification profile \"nope\". Profiles: ci");
        let required = VerificationSettings { require_for_isolated: true, ..settings() };
        assert_eq!(plan(resolve(None, true, &required).unwrap()).profile.as_deref(), Some("ci"));
        assert_eq!(resolve(None, false, &required).unwrap(), Verification::None);
    }

    #[test]
    fn inline_commands_extend_a_profile() {
        let inline = InlineVerify {
            profile: Some("ci".into()),
            commands: Some(vec![cmd("extra")]),
            on_failure: Some(VerifyOnFailure::RetryOnce),
            ..InlineVerify::default()
        };
        let p = plan(resolve(Some(&VerifySpec::Inline(inline)), true, &settings()).unwrap());
        let names: Vec<&str> = p.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["typecheck", "extra"]);
        assert_eq!((p.mode, p.on_failure), (VerifyMode::Command, VerifyOnFailure::RetryOnce));
        let bare = InlineVerify { commands: Some(vec![cmd("x")]), ..InlineVerify::default() };
        let p = plan(resolve(Some(&VerifySpec::Inline(bare)), true, &settings()).unwrap());
        assert_eq!((p.profile, p.on_failure), (None, VerifyOnFailure::ReturnFailure));
    }

    #[test]
    fn disabled_verification_is_not_requested() {
        let s = VerificationSettings { enabled: false, ..settings() };
        let v = resolve(Some(&VerifySpec::Profile("nope".into())), true, &s).unwrap();
        assert_eq!(v, Verification::Disabled);
        let r = v.unrun(VerificationStatus::Skipped).unwrap();
        assert_eq!((r.requested, r.status), (true, VerificationStatus::NotRequested));
    }
}
