//! Skill discovery in every location kind (over a temporary home), diagnostics, collisions,
//! the prompt block and `/skill:` expansion.

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::*;

struct Tree {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    paths: ConfigPaths,
}

/// A home, an agent dir in it, and a git repository `repo` with the working directory
/// `repo/sub`.
fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let agent = home.join(".rho/agent");
    let repo = tmp.path().join("repo");
    let cwd = repo.join("sub");
    fs::create_dir_all(&agent).unwrap();
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::create_dir_all(&cwd).unwrap();
    let paths = ConfigPaths::new(Some(home.clone()), agent, cwd);
    Tree { _tmp: tmp, home, paths }
}

fn skill_md(dir: &Path, name: &str, description: &str) -> PathBuf {
    let file = dir.join(name).join("SKILL.md");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nSteps for {name}.\n"))
        .unwrap();
    file
}

#[test]
fn one_skill_from_each_location_in_order() {
    let t = tree();
    let cwd = t.paths.cwd.clone();
    let repo = cwd.parent().unwrap().to_path_buf();
    let settings_dir = t.home.join("extra-skills");
    let cli_file = t.home.join("one-off.md");
    let expected = [
        (skill_md(&t.paths.agent_dir.join("skills"), "agent-dir", "a"), Location::User),
        (skill_md(&t.home.join(".agents/skills"), "home-agents", "b"), Location::User),
        (skill_md(&cwd.join(".rho/skills"), "rho-project", "c"), Location::Project),
        (skill_md(&cwd.join(".pi/skills"), "pi-project", "d"), Location::Project),
        (skill_md(&t.home.join(".pi/agent/skills"), "pi-user", "e"), Location::User),
        (skill_md(&t.home.join(".claude/skills"), "claude-user", "f"), Location::User),
        (skill_md(&cwd.join(".claude/skills"), "claude-project", "g"), Location::Project),
        (skill_md(&cwd.join(".agents/skills"), "cwd-agents", "h"), Location::Project),
        (skill_md(&repo.join(".agents/skills"), "repo-agents", "i"), Location::Project),
        (skill_md(&settings_dir, "from-settings", "j"), Location::Path),
        (cli_file.clone(), Location::Path),
    ];
    fs::write(&cli_file, "---\ndescription: k\n---\nbody").unwrap();
    // Above the git root: not searched.
    skill_md(&repo.parent().unwrap().join(".agents/skills"), "above-git-root", "z");

    let extra = ResourcePaths {
        skip_defaults: false,
        settings: vec!["~/extra-skills".into()],
        cli: vec![cli_file.to_string_lossy().into_owned()],
    };
    let (skills, diags) = load_skills(&t.paths, &extra);
    assert_eq!(diags, []);
    let got: Vec<(PathBuf, Location)> = skills.iter().map(|s| (s.file_path.clone(), s.location)).collect();
    assert_eq!(got, expected);
    assert_eq!(skills.last().unwrap().name, "one-off");
    assert_eq!(skills[0].name, "agent-dir");
    assert_eq!(skills[0].description, "a");
    assert_eq!(skills[0].base_dir, t.paths.agent_dir.join("skills/agent-dir"));
}

#[test]
fn skip_defaults_keeps_only_command_line_paths() {
    let t = tree();
    skill_md(&t.paths.agent_dir.join("skills"), "agent-dir", "a");
    let cli = skill_md(&t.home.join("cli"), "cli-skill", "c");
    let extra = ResourcePaths {
        skip_defaults: true,
        settings: vec![t.home.join("nothing").to_string_lossy().into_owned()],
        cli: vec![cli.parent().unwrap().to_string_lossy().into_owned()],
    };
    let (skills, diags) = load_skills(&t.paths, &extra);
    assert_eq!(diags, []);
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].name, "cli-skill");
}

#[test]
fn first_loaded_wins_and_symlinks_load_once() {
    let t = tree();
    let first = skill_md(&t.paths.agent_dir.join("skills"), "dup", "first");
    let second = skill_md(&t.paths.cwd.join(".rho/skills"), "dup", "second");
    #[cfg(unix)]
    {
        fs::create_dir_all(t.home.join(".agents/skills")).unwrap();
        std::os::unix::fs::symlink(first.parent().unwrap(), t.home.join(".agents/skills/dup-link")).unwrap();
    }
    let (skills, diags) = load_skills(&t.paths, &ResourcePaths::default());
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].description, "first");
    // Only the real collision is reported; the symlinked copy is skipped silently.
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].path, second);
    assert_eq!(
        diags[0].message,
        format!("skill \"dup\" is already loaded from {}; this one is ignored", first.display())
    );
}

#[test]
fn diagnostics_name_the_file_and_the_reason() {
    let t = tree();
    let dir = t.paths.cwd.join(".rho/skills");
    let write = |rel: &str, text: &str| -> PathBuf {
        let p = dir.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        p
    };
    let no_desc = write("no-desc/SKILL.md", "---\nname: no-desc\n---\nbody");
    let mismatch = write("folder/SKILL.md", "---\nname: Bad--Name-\ndescription: x\n---\n");
    let long_desc = write("long/SKILL.md", &format!("---\ndescription: {}\n---\n", "d".repeat(1030)));
    let bad_yaml = write("broken/SKILL.md", "---\ndescription: a: b\n---\n");
    write("hidden/SKILL.md", "---\ndescription: |\n  Multi\n  line\ndisable-model-invocation: true\n---\nbody");

    let (skills, diags) = load_skills(&t.paths, &ResourcePaths::default());
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Bad--Name-", "hidden", "long"]);
    let hidden_skill = &skills[1];
    assert!(hidden_skill.disable_model_invocation);
    assert_eq!(hidden_skill.description, "Multi\nline");

    let by_path =
        |p: &Path| -> Vec<String> { diags.iter().filter(|d| d.path == p).map(|d| d.message.clone()).collect() };
    assert_eq!(by_path(&no_desc), ["description is missing from the front matter; the skill is not loaded"]);
    assert_eq!(
        by_path(&mismatch),
        [
            "name \"Bad--Name-\" does not match its directory \"folder\"",
            "name may only contain lowercase letters a-z, digits 0-9 and hyphens",
            "name must not start or end with a hyphen",
            "name must not contain two hyphens in a row",
        ]
    );
    assert_eq!(by_path(&long_desc), ["description is 1030 characters long, more than 1024"]);
    let broken = by_path(&bad_yaml);
    assert_eq!(broken.len(), 1);
    assert!(broken[0].starts_with("invalid front matter: "), "{broken:?}");
    assert!(broken[0].ends_with("; the skill is not loaded"));
    assert_eq!(diags.len(), 7);
}

#[test]
fn missing_and_non_markdown_paths_are_reported() {
    let t = tree();
    let txt = t.home.join("x.txt");
    fs::write(&txt, "x").unwrap();
    let extra = ResourcePaths {
        skip_defaults: false,
        settings: vec!["~/missing".into()],
        cli: vec![txt.to_string_lossy().into_owned()],
    };
    let (_, diags) = load_skills(&t.paths, &extra);
    assert_eq!(
        diags,
        [
            ResourceDiagnostic::new(t.home.join("missing"), "skill path does not exist"),
            ResourceDiagnostic::new(txt, "skill path is not a markdown file"),
        ]
    );
}

fn skill(name: &str, description: &str, file: &Path, hidden: bool) -> Skill {
    Skill {
        name: name.into(),
        description: description.into(),
        file_path: file.to_path_buf(),
        base_dir: file.parent().unwrap().to_path_buf(),
        location: Location::User,
        disable_model_invocation: hidden,
    }
}

#[test]
fn prompt_block_lists_visible_skills_escaped() {
    let block = skills_prompt_block(&[
        skill("a", "Use <this> & \"that\"", Path::new("/s/a/SKILL.md"), false),
        skill("b", "hidden", Path::new("/s/b/SKILL.md"), true),
    ]);
    assert!(block.starts_with("\n\n"));
    let list = block.split("\n\n").nth(2).unwrap();
    assert_eq!(
        list,
        "<available_skills>\n  <skill>\n    <name>a</name>\n    <description>Use &lt;this&gt; &amp; &quot;that&quot;</description>\n    <location>/s/a/SKILL.md</location>\n  </skill>\n</available_skills>"
    );
    let instructions: Vec<&str> = block.split("\n\n").nth(1).unwrap().lines().collect();
    assert_eq!(instructions.len(), 3);
    assert_eq!(skills_prompt_block(&[skill("b", "h", Path::new("/b.md"), true)]), "");
}

#[test]
fn skill_command_expands_with_and_without_args() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("pdf/SKILL.md");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, "---\ndescription: PDFs\n---\n\n# PDF\n\nRun scripts/x.sh\n\n").unwrap();
    let skills = [skill("pdf", "PDFs", &file, true)];
    let base = file.parent().unwrap().display().to_string();
    let expected_head = format!(
        "<skill name=\"pdf\" location=\"{}\">\nReferences are relative to {base}.\n\n# PDF\n\nRun scripts/x.sh\n</skill>",
        file.display()
    );
    assert_eq!(expand_skill_command("/skill:pdf", &skills).unwrap(), Some(expected_head.clone()));
    assert_eq!(
        expand_skill_command("/skill:pdf  merge a.pdf b.pdf ", &skills).unwrap(),
        Some(format!("{expected_head}\n\nmerge a.pdf b.pdf"))
    );
    assert_eq!(expand_skill_command("/skill:nope x", &skills).unwrap(), None);
    assert_eq!(expand_skill_command("/pdf x", &skills).unwrap(), None);
    fs::remove_file(&file).unwrap();
    assert!(expand_skill_command("/skill:pdf", &skills).is_err());
}
