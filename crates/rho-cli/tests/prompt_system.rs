//! The whole prompt pipeline over a fixture project (tests/fixtures/prompt): settings from the
//! global, pi and rho files, context files, skills, templates, `get_commands`, prompt expansion
//! and the composed system prompt, snapshotted with the fixture's temporary root redacted.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use rho_coding_agent::config::{ConfigPaths, LoadOptions, Settings};
use rho_coding_agent::prompt::{
    PromptTool, ResourcePaths, SystemPromptInput, build_system_prompt, expand_prompt, load_context_files,
    load_prompt_templates, load_skills, resolve_prompt_texts, slash_commands,
};

const ROOT_PLACEHOLDER: &str = "/FIXTURE";

/// The fixture copied to a temporary directory (so nothing above it, and no other test, can
/// change what is found).
struct Project {
    tmp: tempfile::TempDir,
    paths: ConfigPaths,
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn project() -> Project {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prompt");
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&fixture, tmp.path());
    let home = tmp.path().join("home");
    let paths = ConfigPaths::new(Some(home.clone()), home.join(".rho/agent"), tmp.path().join("work/app"));
    Project { tmp, paths }
}

impl Project {
    fn redact(&self, text: &str) -> String {
        text.replace(&self.tmp.path().display().to_string(), ROOT_PLACEHOLDER)
    }
}

/// The built-in tools with their blurbs (docs/tools.md, "Prompt blurbs").
fn builtin_tools() -> Vec<PromptTool> {
    [
        ("read", "Read file contents"),
        ("bash", "Execute bash commands (ls, grep, find, etc.)"),
        ("edit", "Make surgical edits to files (find exact text and replace)"),
        ("write", "Create or overwrite files"),
    ]
    .into_iter()
    .map(|(n, b)| PromptTool::new(n, b))
    .collect()
}

#[test]
fn settings_from_the_fixture() {
    let p = project();
    let (settings, diags) = Settings::load(&p.paths, &LoadOptions::default());
    assert_eq!(diags, []);
    assert_eq!(settings.default_model().as_deref(), Some("claude-sonnet-4-5"));
    // .pi over global, legacy queueMode migrated; .rho adds its own key.
    assert_eq!(settings.compaction().reserve_tokens, 9000);
    assert_eq!(settings.compaction().keep_recent_tokens, 10000);
    assert_eq!(settings.steering_mode(), rho_types::QueueMode::All);
    assert!(!settings.todo().enabled);

    let (rpc, _) = Settings::load(&p.paths, &LoadOptions { rpc_mode: true, ..LoadOptions::default() });
    assert!(rpc.todo().enabled);
}

#[test]
fn system_prompt_snapshot() {
    let p = project();
    let (context_files, diags) = load_context_files(&p.paths);
    assert_eq!(diags, []);
    let context_files: Vec<_> = context_files.into_iter().filter(|f| f.path.starts_with(p.tmp.path())).collect();
    assert_eq!(context_files.len(), 3);
    let (skills, diags) = load_skills(&p.paths, &ResourcePaths::default());
    assert_eq!(diags, []);
    let (texts, diags) = resolve_prompt_texts(&p.paths, None, Some("Prefer small commits."));
    assert_eq!(diags, []);
    let tools = builtin_tools();
    let date = time::Date::from_calendar_date(2026, time::Month::January, 15).unwrap();
    let prompt = build_system_prompt(&SystemPromptInput {
        cwd: &p.paths.cwd,
        tools: &tools,
        custom_prompt: texts.custom.as_deref(),
        append_prompt: texts.append.as_deref(),
        context_files: &context_files,
        skills: &skills,
        date,
        readme_path: None,
    });
    insta::assert_snapshot!("system_prompt", p.redact(&prompt));
}

#[test]
fn commands_and_expansion() {
    let p = project();
    let (settings, _) = Settings::load(&p.paths, &LoadOptions::default());
    let resources = ResourcePaths { skip_defaults: false, settings: settings.skill_paths(), cli: vec![] };
    let (skills, _) = load_skills(&p.paths, &resources);
    let (templates, diags) = load_prompt_templates(
        &p.paths,
        &ResourcePaths { settings: settings.prompt_paths(), ..ResourcePaths::default() },
    );
    assert_eq!(diags, []);
    let commands = slash_commands(&templates, &skills, settings.enable_skill_commands());
    let json = p.redact(&serde_json::to_string_pretty(&commands).unwrap());
    insta::assert_snapshot!("get_commands", json);

    let enable = settings.enable_skill_commands();
    assert_eq!(
        expand_prompt("/review src/db.rs 'error handling' locking", &templates, &skills, enable).unwrap(),
        "Review src/db.rs for bugs. Focus on: error handling locking"
    );
    assert_eq!(
        expand_prompt("/explain \"lifetimes\" and borrows", &templates, &skills, enable).unwrap(),
        "Explain lifetimes and borrows in simple terms."
    );
    let skill = expand_prompt("/skill:commit-message keep it short", &templates, &skills, enable).unwrap();
    assert_eq!(
        p.redact(&skill),
        "<skill name=\"commit-message\" location=\"/FIXTURE/home/.rho/agent/skills/commit-message/SKILL.md\">\n\
         References are relative to /FIXTURE/home/.rho/agent/skills/commit-message.\n\n\
         # Commit messages\n\n1. Run `git diff --staged`.\n2. Follow the format in [format.md](format.md).\n\
         </skill>\n\nkeep it short"
    );
    assert_eq!(expand_prompt("/unknown thing", &templates, &skills, enable).unwrap(), "/unknown thing");
}
