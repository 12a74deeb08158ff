//! Loading, merging, the RPC reset, diagnostics and writes, over temporary directories.

use std::fs;
use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::config::paths::ConfigPaths;
use rho_ai::Transport;

struct Fixture {
    _dir: tempfile::TempDir,
    paths: ConfigPaths,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let agent = home.join(".rho/agent");
    let cwd = dir.path().join("proj");
    fs::create_dir_all(&agent).unwrap();
    fs::create_dir_all(&cwd).unwrap();
    let paths = ConfigPaths::new(Some(home), agent, cwd);
    Fixture { _dir: dir, paths }
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn load(f: &Fixture, options: &LoadOptions) -> (Settings, Vec<SettingsDiagnostic>) {
    Settings::load(&f.paths, options)
}

#[test]
fn defaults_without_any_file() {
    let f = fixture();
    let (s, diags) = load(&f, &LoadOptions::default());
    assert!(diags.is_empty());
    let c = s.compaction();
    assert!(c.enabled);
    assert_eq!(c.reserve_tokens, 16384);
    assert_eq!(c.keep_recent_tokens, 20000);
    assert_eq!(c.threshold_tokens, None);
    assert_eq!(s.retry(), RetrySettings { enabled: true, max_retries: 3, base_delay_ms: 2000, max_delay_ms: 60000 });
    assert_eq!(s.branch_summary().reserve_tokens, 16384);
    assert!(!s.branch_summary().skip_prompt);
    assert_eq!(s.steering_mode(), rho_types::QueueMode::OneAtATime);
    assert_eq!(s.follow_up_mode(), rho_types::QueueMode::OneAtATime);
    assert_eq!(s.interrupt_mode(), rho_types::InterruptMode::Wait);
    assert_eq!(s.transport(), Transport::Auto);
    assert_eq!(s.default_thinking_level(), None);
    assert_eq!(s.default_model(), None);
    assert_eq!(s.thinking_budgets(), ThinkingBudgets::default());
    assert!(s.images().auto_resize);
    assert!(!s.images().block_images);
    assert!(s.enable_skill_commands());
    assert!(s.skill_paths().is_empty());
    assert_eq!(s.enabled_models(), None);
    let t = s.todo();
    assert!(t.enabled && t.reminders && t.eager);
    assert_eq!(t.reminders_max, 3);
    assert_eq!(t.clear_delay_secs, 60);
    assert!(!t.completion_enabled);
    let task = s.task();
    assert_eq!(task.isolation.mode, IsolationMode::None);
    assert_eq!(task.isolation.merge, IsolationMerge::Patch);
    assert_eq!(task.isolation.commits, IsolationCommits::Generic);
    assert!(task.eager);
    assert_eq!(task.max_concurrency, 32);
    assert_eq!(task.max_recursion_depth, 2);
    assert!(task.disabled_agents.is_empty());
    assert!(!task.verification.enabled);
    assert_eq!(task.verification.default_profile, "");
    assert_eq!(task.verification.max_retries, 1);
    assert_eq!(task.verification.failure_context_line_limit, 200);
    assert!(task.verification.profiles.is_empty());
    assert!(!task.budget.any_limit());
    assert_eq!(task.budget.warn_at_ratio, 0.8);
    let ttsr = s.ttsr();
    assert!(ttsr.enabled);
    assert_eq!(ttsr.context_mode, TtsrContextMode::Discard);
    assert_eq!(ttsr.repeat_mode, TtsrRepeatMode::Once);
    assert_eq!(ttsr.repeat_gap, 10);
    assert_eq!(ttsr.interrupt_mode, TtsrInterruptMode::Always);
    assert!(!s.async_jobs().enabled);
    assert_eq!(s.async_jobs().max_jobs, 100);
    assert!(!s.bash_auto_background().enabled);
    assert_eq!(s.bash_auto_background().threshold_ms, 60000);
    assert_eq!(s.get_u64("compaction.reserveTokens"), Some(16384));
    assert_eq!(s.get("compaction.reserveTokens"), None);
}

#[test]
fn precedence_global_then_pi_then_rho_then_command_line() {
    let f = fixture();
    write(
        &f.paths.global_settings_file(),
        r#"{"defaultModel":"g","defaultProvider":"g","steeringMode":"all","retry":{"maxRetries":1,"baseDelayMs":10}}"#,
    );
    let [pi, rho] = f.paths.project_settings_files();
    write(&pi, r#"{"defaultModel":"pi","defaultProvider":"pi","retry":{"maxRetries":2}}"#);
    write(&rho, r#"{"defaultModel":"rho","retry.maxRetries":4}"#);
    let options = LoadOptions { overrides: vec!["defaultModel=cli".parse().unwrap()], ..LoadOptions::default() };
    let (s, diags) = load(&f, &options);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(s.default_model().as_deref(), Some("cli"));
    assert_eq!(s.default_provider().as_deref(), Some("pi"));
    assert_eq!(s.steering_mode(), rho_types::QueueMode::All);
    // Per-key merge: the project's maxRetries, the global baseDelayMs.
    assert_eq!(s.retry().max_retries, 4);
    assert_eq!(s.retry().base_delay_ms, 10);

    let (s, _) = load(&f, &LoadOptions::default());
    assert_eq!(s.default_model().as_deref(), Some("rho"));
}

#[test]
fn nested_and_dotted_spellings_mix_across_files() {
    let f = fixture();
    write(&f.paths.global_settings_file(), r#"{"compaction":{"enabled":false,"reserveTokens":1000}}"#);
    let [_, rho] = f.paths.project_settings_files();
    write(&rho, r#"{"compaction.reserveTokens":2000,"task.isolation.mode":"worktree"}"#);
    let (s, diags) = load(&f, &LoadOptions::default());
    assert!(diags.is_empty());
    assert!(!s.compaction().enabled);
    assert_eq!(s.compaction().reserve_tokens, 2000);
    assert_eq!(s.task().isolation.mode, IsolationMode::Worktree);
    assert_eq!(s.section("compaction").len(), 2);
}

#[test]
fn rpc_mode_ignores_workflow_keys_from_files_but_keeps_the_command_line() {
    let f = fixture();
    write(
        &f.paths.global_settings_file(),
        r#"{"todo":{"enabled":false,"reminders.max":9},"task.maxConcurrency":4,"async.enabled":true,
            "bash":{"autoBackground":{"enabled":true}},"tasks.todoClearDelay":5,"compaction.enabled":false}"#,
    );
    let [_, rho] = f.paths.project_settings_files();
    write(&rho, r#"{"task":{"verification":{"enabled":true},"budget":{"maxToolCalls":3}},"todo.eager":false}"#);
    let options = LoadOptions {
        overrides: vec![
            "task.verification.enabled=true".parse().unwrap(),
            "task.budget.maxCostUsd=1.5".parse().unwrap(),
        ],
        rpc_mode: true,
        trusted_project: false,
    };
    let (s, diags) = load(&f, &options);
    assert!(diags.is_empty());
    let todo = s.todo();
    assert!(todo.enabled && todo.eager);
    assert_eq!(todo.reminders_max, 3);
    assert_eq!(s.task().max_concurrency, 32);
    assert!(!s.async_jobs().enabled);
    assert!(!s.bash_auto_background().enabled);
    assert_eq!(s.task().budget.max_tool_calls, None);
    // Kept: the command line, and keys outside the reset list.
    assert!(s.task().verification.enabled);
    assert_eq!(s.task().budget.max_cost_usd, Some(1.5));
    assert_eq!(s.todo().clear_delay_secs, 5);
    assert!(!s.compaction().enabled);

    // Outside RPC mode the files apply.
    let (s, _) = load(&f, &LoadOptions::default());
    assert!(!s.todo().enabled);
    assert_eq!(s.todo().reminders_max, 9);
    assert_eq!(s.task().max_concurrency, 4);
    assert!(s.async_jobs().enabled);
    assert!(s.bash_auto_background().enabled);
    assert_eq!(s.task().budget.max_tool_calls, Some(3));
}

#[test]
fn reset_prefixes_match_whole_segments() {
    assert!(is_rpc_reset_key("task.maxConcurrency"));
    assert!(is_rpc_reset_key("todo.reminders.max"));
    assert!(is_rpc_reset_key("bash.autoBackground.thresholdMs"));
    assert!(!is_rpc_reset_key("tasks.todoClearDelay"));
    assert!(!is_rpc_reset_key("todoCompletion.enabled"));
    assert!(!is_rpc_reset_key("bash.environment"));
}

#[test]
fn a_broken_file_is_reported_once_and_the_others_still_apply() {
    let f = fixture();
    let global = f.paths.global_settings_file();
    write(&global, "{\"defaultModel\": \"x\",\n  oops }");
    let [_, rho] = f.paths.project_settings_files();
    write(&rho, r#"{"retry":{"enabled":false}}"#);
    let (s, diags) = load(&f, &LoadOptions::default());
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].source, SettingsSource::File(global.clone()));
    assert!(matches!(diags[0].problem, SettingsProblem::InvalidJson(_)));
    let text = diags[0].to_string();
    assert!(text.contains(&global.display().to_string()), "{text}");
    assert!(text.contains("line 2"), "{text}");
    assert_eq!(s.default_model(), None);
    assert!(!s.retry().enabled);
    assert_eq!(s.compaction().reserve_tokens, 16384);
}

#[test]
fn unreadable_and_non_object_files_are_reported() {
    let f = fixture();
    // A directory where the file should be cannot be read as a file.
    fs::create_dir_all(f.paths.global_settings_file()).unwrap();
    let [pi, _] = f.paths.project_settings_files();
    write(&pi, "[1, 2]");
    let (_, diags) = load(&f, &LoadOptions::default());
    assert_eq!(diags.len(), 2, "{diags:?}");
    assert!(matches!(diags[0].problem, SettingsProblem::Unreadable(_)));
    assert_eq!(diags[1].source, SettingsSource::File(pi));
    assert_eq!(diags[1].problem, SettingsProblem::NotAnObject);
}

#[test]
fn empty_file_and_bom_are_fine() {
    let f = fixture();
    write(&f.paths.global_settings_file(), "  \n");
    let [pi, _] = f.paths.project_settings_files();
    write(&pi, "\u{feff}{\"defaultModel\":\"m\"}");
    let (s, diags) = load(&f, &LoadOptions::default());
    assert!(diags.is_empty());
    assert_eq!(s.default_model().as_deref(), Some("m"));
}

#[test]
fn wrongly_typed_values_are_reported_and_fall_back() {
    let f = fixture();
    let global = f.paths.global_settings_file();
    write(
        &global,
        r#"{"compaction":{"reserveTokens":"lots","enabled":false},"steeringMode":"sometimes","retry.maxRetries":5}"#,
    );
    let [_, rho] = f.paths.project_settings_files();
    write(&rho, r#"{"retry":{"maxRetries":-1}}"#);
    let options =
        LoadOptions { overrides: vec!["images.blockImages=maybe".parse().unwrap()], ..LoadOptions::default() };
    let (s, diags) = load(&f, &options);
    let keys: Vec<String> = diags
        .iter()
        .map(|d| match &d.problem {
            SettingsProblem::InvalidValue { key, .. } => key.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(keys, ["compaction.reserveTokens", "steeringMode", "retry.maxRetries", "images.blockImages"]);
    assert_eq!(
        diags[0].to_string(),
        format!(
            "Warning: settings file {}: \"compaction.reserveTokens\" must be a non-negative integer, found \"lots\"; the value is ignored",
            global.display()
        )
    );
    assert_eq!(diags[3].source, SettingsSource::CommandLine);
    assert_eq!(s.compaction().reserve_tokens, 16384);
    assert!(!s.compaction().enabled);
    assert_eq!(s.steering_mode(), rho_types::QueueMode::OneAtATime);
    // The project's bad value is dropped, so the global one shows through.
    assert_eq!(s.retry().max_retries, 5);
    assert!(!s.images().block_images);
}

#[test]
fn typed_groups_read_set_values() {
    let (s, diags) = Settings::from_json(json!({
        "defaultThinkingLevel": "high",
        "modelThinkingLevels": {"openai/gpt-5.2": "xhigh"},
        "interruptMode": "immediate",
        "transport": "auto",
        "thinkingBudgets": {"low": 100, "high": 900},
        "shellPath": "~/bin/bash",
        "shellCommandPrefix": "shopt -s expand_aliases",
        "enabledModels": ["claude-*", "gpt-5"],
        "task": {
            "isolation": {"mode": "fuse-overlay", "merge": "branch", "commits": "ai"},
            "agentModelOverrides": {"explore": "openai/gpt-5.2"},
            "disabledAgents": ["plan"],
            "verification": {
                "enabled": true,
                "defaultProfile": "ci",
                "profiles": {"ci": {"mode": "command", "onFailure": "retry_once",
                    "commands": [{"name": "lint", "command": "cargo clippy", "timeoutMs": 60000}]}}
            },
            "budget": {"maxWallTimeMs": 1000, "warnAtRatio": 0.5}
        },
        "ttsr": {"repeatMode": "after-gap", "interruptMode": "prose-only", "contextMode": "keep"},
        "compaction": {"thresholdTokens": -1, "thresholdPercent": 70}
    }));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(s.default_thinking_level(), Some(rho_types::ThinkingLevel::High));
    assert_eq!(s.model_thinking_level("openai", "gpt-5.2"), Some(rho_types::ThinkingLevel::Xhigh));
    assert_eq!(s.interrupt_mode(), rho_types::InterruptMode::Immediate);
    assert_eq!(s.transport(), Transport::Auto);
    let b = s.thinking_budgets();
    assert_eq!(b.for_level(rho_types::ThinkingLevel::Low), Some(100));
    assert_eq!(b.for_level(rho_types::ThinkingLevel::Medium), None);
    assert_eq!(s.shell_command_prefix().as_deref(), Some("shopt -s expand_aliases"));
    assert_eq!(s.enabled_models().unwrap(), ["claude-*", "gpt-5"]);
    let t = s.task();
    assert_eq!(t.isolation.mode, IsolationMode::FuseOverlay);
    assert_eq!(t.isolation.merge, IsolationMerge::Branch);
    assert_eq!(t.isolation.commits, IsolationCommits::Ai);
    assert_eq!(t.agent_model_overrides["explore"], "openai/gpt-5.2");
    assert_eq!(t.disabled_agents, ["plan"]);
    let ci = &t.verification.profiles["ci"];
    assert_eq!(ci.mode, Some(rho_rpc::VerifyMode::Command));
    assert_eq!(ci.on_failure, Some(rho_rpc::VerifyOnFailure::RetryOnce));
    assert_eq!(ci.commands[0].timeout_ms, Some(60000));
    assert_eq!(t.budget.max_wall_time_ms, Some(1000));
    assert_eq!(t.budget.warn_at_ratio, 0.5);
    assert!(t.budget.any_limit());
    let ttsr = s.ttsr();
    assert_eq!(ttsr.repeat_mode, TtsrRepeatMode::AfterGap);
    assert_eq!(ttsr.interrupt_mode, TtsrInterruptMode::ProseOnly);
    assert_eq!(ttsr.context_mode, TtsrContextMode::Keep);
    assert_eq!(s.compaction().threshold_tokens, None);
    assert_eq!(s.compaction().threshold_percent, Some(70.0));
}

#[test]
fn shell_path_expands_home() {
    let f = fixture();
    write(&f.paths.global_settings_file(), r#"{"shellPath":"~/bin/bash"}"#);
    let (s, _) = load(&f, &LoadOptions::default());
    assert_eq!(s.shell_path().unwrap(), f.paths.home.as_ref().unwrap().join("bin/bash"));
}

#[test]
fn invalid_verification_profiles_are_reported() {
    let (s, diags) = Settings::from_json(json!({
        "task.verification.profiles": {"ci": {"commands": [{"name": "x"}]}}
    }));
    assert_eq!(diags.len(), 1);
    assert!(diags[0].to_string().contains("task.verification.profiles"));
    assert!(s.task().verification.profiles.is_empty());
}

#[test]
fn keys_rho_does_not_read_are_named_once_per_file() {
    let f = fixture();
    write(
        &f.paths.global_settings_file(),
        r#"{"lastChangelogVersion": "1.6.0", "tuiMode": "fullscreen", "markdown": {"codeBlockIndent": "  "}, "theme": "dark"}"#,
    );
    let (_, diags) = load(&f, &LoadOptions::default());
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(
        diags[0].to_string(),
        format!(
            "Warning: settings file {}: rho does not support these settings, which have no effect: markdown.codeBlockIndent, tuiMode",
            f.paths.global_settings_file().display()
        ),
        "pi's own bookkeeping (lastChangelogVersion) is no setting to warn about"
    );
}

#[test]
fn set_global_changes_one_key_and_keeps_the_rest() {
    let f = fixture();
    let global = f.paths.global_settings_file();
    write(
        &global,
        r#"{"theme":"light","compaction":{"reserveTokens":1000},"custom":{"a":[1,2]},"steeringMode":"all"}"#,
    );
    let (mut s, _) = load(&f, &LoadOptions::default());
    s.set_global("steeringMode", json!("one-at-a-time")).unwrap();
    s.set_global("compaction.enabled", json!(false)).unwrap();
    s.set_global("defaultModel", json!("claude-opus-4-6")).unwrap();
    let written: Value = serde_json::from_str(&fs::read_to_string(&global).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({
            "theme": "light",
            "compaction": {"reserveTokens": 1000, "enabled": false},
            "custom": {"a": [1, 2]},
            "steeringMode": "one-at-a-time",
            "defaultModel": "claude-opus-4-6"
        })
    );
    assert!(!s.compaction().enabled);
    assert_eq!(s.steering_mode(), rho_types::QueueMode::OneAtATime);
    // A fresh load sees the same.
    let (again, diags) = load(&f, &LoadOptions::default());
    // The key rho does not know is kept in the file and named once.
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(matches!(&diags[0].problem, SettingsProblem::NotSupported { keys } if keys == &["custom.a"]));
    assert_eq!(again.default_model().as_deref(), Some("claude-opus-4-6"));
    assert!(!again.compaction().enabled);
    assert_eq!(again.compaction().reserve_tokens, 1000);
}

#[test]
fn set_global_updates_dotted_spelling_in_place() {
    let f = fixture();
    let global = f.paths.global_settings_file();
    write(&global, r#"{"retry.enabled": true, "x": 1}"#);
    let (mut s, _) = load(&f, &LoadOptions::default());
    s.set_global("retry.enabled", json!(false)).unwrap();
    let written: Value = serde_json::from_str(&fs::read_to_string(&global).unwrap()).unwrap();
    assert_eq!(written, json!({"retry.enabled": false, "x": 1}));
}

#[test]
fn set_global_creates_the_file_and_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("deep/agent");
    let paths = ConfigPaths::new(None, agent.clone(), dir.path().join("cwd"));
    let (mut s, _) = Settings::load(&paths, &LoadOptions::default());
    s.set_global("interruptMode", json!("immediate")).unwrap();
    let written: Value = serde_json::from_str(&fs::read_to_string(agent.join("settings.json")).unwrap()).unwrap();
    assert_eq!(written, json!({"interruptMode": "immediate"}));
    assert_eq!(s.interrupt_mode(), rho_types::InterruptMode::Immediate);
}

#[test]
fn set_global_never_overwrites_a_broken_file() {
    let f = fixture();
    let global = f.paths.global_settings_file();
    write(&global, "{ not json");
    let (mut s, diags) = load(&f, &LoadOptions::default());
    assert_eq!(diags.len(), 1);
    let err = s.set_global("steeringMode", json!("all")).unwrap_err();
    assert!(matches!(err, SettingsError::Unparsable { .. }), "{err}");
    assert_eq!(fs::read_to_string(&global).unwrap(), "{ not json");
}

#[test]
fn set_global_rejects_a_wrongly_typed_value() {
    let f = fixture();
    let (mut s, _) = load(&f, &LoadOptions::default());
    let err = s.set_global("retry.enabled", json!("yes")).unwrap_err();
    assert_eq!(err.to_string(), "setting \"retry.enabled\" must be true or false, found \"yes\"");
    assert!(!f.paths.global_settings_file().exists());
}

#[test]
fn project_values_still_win_after_set_global() {
    let f = fixture();
    let [_, rho] = f.paths.project_settings_files();
    write(&rho, r#"{"followUpMode":"all"}"#);
    let (mut s, _) = load(&f, &LoadOptions::default());
    s.set_global("followUpMode", json!("one-at-a-time")).unwrap();
    assert_eq!(s.follow_up_mode(), rho_types::QueueMode::All);
}

#[test]
fn set_global_null_removes_the_key() {
    let f = fixture();
    let global = f.paths.global_settings_file();
    write(&global, r#"{"defaultModel":"a","theme":"t"}"#);
    let (mut s, _) = load(&f, &LoadOptions::default());
    s.set_global("defaultModel", Value::Null).unwrap();
    let written: Value = serde_json::from_str(&fs::read_to_string(&global).unwrap()).unwrap();
    assert_eq!(written, json!({"theme": "t"}));
    assert_eq!(s.default_model(), None);
}

#[test]
fn a_negative_todo_clear_delay_means_never() {
    let (s, diagnostics) = Settings::from_json(serde_json::json!({"tasks": {"todoClearDelay": -1}}));
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(s.todo().clear_delay_secs, -1);
}
