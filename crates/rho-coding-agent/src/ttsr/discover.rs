//! Finding rule files. Providers are searched in priority order and the first rule loaded
//! under a name wins; within a provider, project directories (nearest first) come before the
//! user's.
//!
//! | provider (`_source.provider`) | project (each directory walked up from the cwd) | user |
//! |---|---|---|
//! | `native` (rho) | `.rho/rules/*.{md,mdc}` | `<agentDir>/rules/*.{md,mdc}` |
//! | `omp`, `xcsh`, `pi` | `.omp/rules`, `.xcsh/rules`, `.pi/rules` (`*.{md,mdc}`) | |
//! | `cursor` | `.cursor/rules/*.{mdc,md}` | `~/.cursor/rules/*.{mdc,md}` |
//! | `windsurf` | `.windsurf/rules/*.md` | `~/.codeium/windsurf/memories/global_rules.md` |
//! | `cline` | `.clinerules` (a file, rule `clinerules`, or a directory of `*.md`) | |
//! | `agents` | `.agent/rules`, `.agents/rules` (`*.{md,mdc}`) | |
//!
//! The walk goes from the cwd up to the first directory holding `.git`, never into the home
//! directory itself (its dot-folders are the user level); outside a repository it goes up to
//! the file system root. Every problem (an unreadable file, a field that was ignored, a rule
//! that can never fire) comes back as a diagnostic; nothing is printed.

use std::collections::HashSet;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::compile::{Compiled, CompiledRule, compile_rule};
use super::parse::parse_rule;
use super::rule::{Rule, RuleLevel, RuleSource};
use crate::config::ConfigPaths;
use crate::prompt::ResourceDiagnostic;

/// Every rule found (TTSR or not), first-wins by name, and the problems met on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleDiscovery {
    pub rules: Vec<Rule>,
    pub diagnostics: Vec<ResourceDiagnostic>,
}

#[derive(Debug, Clone, Copy)]
struct Provider {
    id: &'static str,
    name: &'static str,
}

const NATIVE: Provider = Provider { id: "native", name: "rho" };
const OMP: Provider = Provider { id: "omp", name: "oh-my-pi" };
const XCSH: Provider = Provider { id: "xcsh", name: "xcsh" };
const PI: Provider = Provider { id: "pi", name: "pi" };
const CURSOR: Provider = Provider { id: "cursor", name: "Cursor" };
const WINDSURF: Provider = Provider { id: "windsurf", name: "Windsurf" };
const CLINE: Provider = Provider { id: "cline", name: "Cline" };
const AGENTS: Provider = Provider { id: "agents", name: "Agents" };

const MARKDOWN: &[&str] = &["md", "mdc"];
const MD_ONLY: &[&str] = &["md"];

#[derive(Debug, Clone)]
enum Location {
    /// Every file with one of the extensions; the rule name is the file stem.
    Dir(PathBuf, &'static [&'static str]),
    /// One file holding one rule of the given name.
    File(PathBuf, &'static str),
    /// Cline's `.clinerules`: a file (that rule) or a directory of `*.md`.
    FileOrDir(PathBuf, &'static str),
}

#[derive(Debug, Clone)]
struct Source {
    provider: Provider,
    level: RuleLevel,
    location: Location,
}

/// The project directories searched, nearest first.
pub fn project_dirs(cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        if Some(dir) == home {
            break;
        }
        dirs.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            break;
        }
    }
    dirs
}

fn sources(paths: &ConfigPaths) -> Vec<Source> {
    let projects = project_dirs(&paths.cwd, paths.home.as_deref());
    let mut out = Vec::new();
    let project = |out: &mut Vec<Source>, provider: Provider, sub: &str, exts: &'static [&'static str]| {
        for dir in &projects {
            out.push(Source { provider, level: RuleLevel::Project, location: Location::Dir(dir.join(sub), exts) });
        }
    };
    let user = |provider: Provider, location: Location| Source { provider, level: RuleLevel::User, location };

    project(&mut out, NATIVE, ".rho/rules", MARKDOWN);
    out.push(user(NATIVE, Location::Dir(paths.agent_dir.join("rules"), MARKDOWN)));
    project(&mut out, OMP, ".omp/rules", MARKDOWN);
    project(&mut out, XCSH, ".xcsh/rules", MARKDOWN);
    project(&mut out, PI, ".pi/rules", MARKDOWN);
    project(&mut out, CURSOR, ".cursor/rules", MARKDOWN);
    if let Some(p) = paths.in_home(".cursor/rules") {
        out.push(user(CURSOR, Location::Dir(p, MARKDOWN)));
    }
    project(&mut out, WINDSURF, ".windsurf/rules", MD_ONLY);
    if let Some(p) = paths.in_home(".codeium/windsurf/memories/global_rules.md") {
        out.push(user(WINDSURF, Location::File(p, "global_rules")));
    }
    for dir in &projects {
        out.push(Source {
            provider: CLINE,
            level: RuleLevel::Project,
            location: Location::FileOrDir(dir.join(".clinerules"), "clinerules"),
        });
    }
    project(&mut out, AGENTS, ".agent/rules", MARKDOWN);
    project(&mut out, AGENTS, ".agents/rules", MARKDOWN);
    out
}

/// Finds every rule for `paths`.
pub fn discover_rules(paths: &ConfigPaths) -> RuleDiscovery {
    let mut found = RuleDiscovery::default();
    let mut seen = HashSet::new();
    for source in sources(paths) {
        for (name, file) in files(&source.location, &mut found.diagnostics) {
            if seen.contains(&name) {
                continue;
            }
            let text = match std::fs::read_to_string(&file) {
                Ok(text) => text,
                Err(e) => {
                    found.diagnostics.push(ResourceDiagnostic::new(&file, format!("cannot read rule: {e}")));
                    continue;
                }
            };
            let rule_source = RuleSource {
                provider: source.provider.id.to_owned(),
                provider_name: source.provider.name.to_owned(),
                path: file.clone(),
                level: source.level,
            };
            let (rule, warnings) = parse_rule(&name, &file, &text, rule_source);
            found.diagnostics.extend(warnings.into_iter().map(|w| ResourceDiagnostic::new(&file, w)));
            seen.insert(name);
            found.rules.push(rule);
        }
    }
    found
}

/// The TTSR rules for `paths`, compiled: discovery, then every rule with a condition. Rules
/// that can never fire are left out with a diagnostic.
pub fn load_ttsr_rules(paths: &ConfigPaths) -> (Vec<CompiledRule>, Vec<ResourceDiagnostic>) {
    let RuleDiscovery { rules, mut diagnostics } = discover_rules(paths);
    let mut compiled = Vec::new();
    for rule in rules {
        let path = rule.path.clone();
        match compile_rule(rule) {
            Compiled::Rule(rule, warnings) => {
                diagnostics.extend(warnings.into_iter().map(|w| ResourceDiagnostic::new(&path, w)));
                compiled.push(*rule);
            }
            Compiled::NotTtsr => {}
            Compiled::Skipped(reasons) => {
                diagnostics.extend(reasons.into_iter().map(|w| ResourceDiagnostic::new(&path, w)));
            }
        }
    }
    (compiled, diagnostics)
}

/// `(rule name, file)` for a location, in file-name order.
fn files(location: &Location, diagnostics: &mut Vec<ResourceDiagnostic>) -> Vec<(String, PathBuf)> {
    match location {
        Location::Dir(dir, exts) => dir_files(dir, exts, diagnostics),
        Location::File(path, name) => {
            if path.is_file() {
                vec![((*name).to_owned(), path.clone())]
            } else {
                Vec::new()
            }
        }
        Location::FileOrDir(path, name) => {
            if path.is_dir() {
                dir_files(path, MD_ONLY, diagnostics)
            } else if path.is_file() {
                vec![((*name).to_owned(), path.clone())]
            } else {
                Vec::new()
            }
        }
    }
}

fn dir_files(dir: &Path, exts: &[&str], diagnostics: &mut Vec<ResourceDiagnostic>) -> Vec<(String, PathBuf)> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => return Vec::new(),
        Err(e) => {
            diagnostics.push(ResourceDiagnostic::new(dir, format!("cannot list rules: {e}")));
            return Vec::new();
        }
    };
    let mut files: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .filter_map(|path| {
            let file_name = path.file_name()?.to_str()?;
            if file_name.starts_with('.') {
                return None;
            }
            let ext = path.extension()?.to_str()?;
            if !exts.iter().any(|e| e.eq_ignore_ascii_case(ext)) {
                return None;
            }
            let stem = path.file_stem()?.to_str()?.to_owned();
            Some((stem, path))
        })
        .collect();
    files.sort_by(|a, b| a.1.file_name().cmp(&b.1.file_name()));
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    struct Fixture {
        _tmp: TempDir,
        root: PathBuf,
        paths: ConfigPaths,
    }

    /// `<tmp>/home` (home, agent dir `home/.rho/agent`) and `<tmp>/home/repo/sub` (cwd, with
    /// `.git` in `repo`).
    fn fixture() -> Fixture {
        let tmp = TempDir::new().unwrap();
        let root = tmp.path().to_path_buf();
        let home = root.join("home");
        let cwd = home.join("repo/sub");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(home.join("repo/.git")).unwrap();
        let paths = ConfigPaths::new(Some(home.clone()), home.join(".rho/agent"), cwd);
        Fixture { _tmp: tmp, root, paths }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn rule_md(condition: &str) -> String {
        format!("---\ncondition: \"{condition}\"\n---\nbody of {condition}\n")
    }

    fn summary(found: &RuleDiscovery) -> Vec<(String, String, &'static str)> {
        found.rules.iter().map(|r| (r.name.clone(), r.source.provider.clone(), r.source.level.as_str())).collect()
    }

    #[test]
    fn each_location_is_found() {
        let f = fixture();
        let home = f.paths.home.clone().unwrap();
        let cwd = f.paths.cwd.clone();
        let repo = cwd.parent().unwrap().to_path_buf();
        write(&cwd.join(".rho/rules/native-project.md"), &rule_md("a"));
        write(&repo.join(".rho/rules/native-parent.mdc"), &rule_md("b"));
        write(&f.paths.agent_dir.join("rules/native-user.md"), &rule_md("c"));
        write(&cwd.join(".omp/rules/omp.md"), &rule_md("d"));
        write(&cwd.join(".xcsh/rules/xcsh.md"), &rule_md("e"));
        write(&cwd.join(".pi/rules/pi.md"), &rule_md("f"));
        write(&cwd.join(".cursor/rules/cursor.mdc"), &rule_md("g"));
        write(&home.join(".cursor/rules/cursor-user.mdc"), &rule_md("h"));
        write(&cwd.join(".windsurf/rules/windsurf.md"), &rule_md("i"));
        write(&cwd.join(".windsurf/rules/ignored.mdc"), &rule_md("x"));
        write(&home.join(".codeium/windsurf/memories/global_rules.md"), &rule_md("j"));
        write(&repo.join(".clinerules"), &rule_md("k"));
        write(&cwd.join(".agent/rules/agent.md"), &rule_md("l"));
        write(&cwd.join(".agents/rules/agents.md"), &rule_md("m"));
        write(&cwd.join(".rho/rules/notes.txt"), "not a rule");
        write(&cwd.join(".rho/rules/.hidden.md"), &rule_md("x"));
        let found = discover_rules(&f.paths);
        assert!(found.diagnostics.is_empty(), "{:?}", found.diagnostics);
        assert_eq!(
            summary(&found),
            vec![
                ("native-project".into(), "native".into(), "project"),
                ("native-parent".into(), "native".into(), "project"),
                ("native-user".into(), "native".into(), "user"),
                ("omp".into(), "omp".into(), "project"),
                ("xcsh".into(), "xcsh".into(), "project"),
                ("pi".into(), "pi".into(), "project"),
                ("cursor".into(), "cursor".into(), "project"),
                ("cursor-user".into(), "cursor".into(), "user"),
                ("windsurf".into(), "windsurf".into(), "project"),
                ("global_rules".into(), "windsurf".into(), "user"),
                ("clinerules".into(), "cline".into(), "project"),
                ("agent".into(), "agents".into(), "project"),
                ("agents".into(), "agents".into(), "project"),
            ]
        );
        let cline = found.rules.iter().find(|r| r.name == "clinerules").unwrap();
        assert_eq!(cline.condition, vec!["k"]);
        assert_eq!(cline.content, "body of k");
        assert_eq!(cline.source.path, repo.join(".clinerules"));
        assert_eq!(found.rules[0].source.provider_name, "rho");
    }

    #[test]
    fn first_wins_by_name_in_priority_order() {
        let f = fixture();
        let cwd = f.paths.cwd.clone();
        let repo = cwd.parent().unwrap().to_path_buf();
        write(&f.paths.agent_dir.join("rules/shared.md"), &rule_md("user"));
        write(&repo.join(".rho/rules/shared.md"), &rule_md("parent"));
        write(&cwd.join(".cursor/rules/shared.mdc"), &rule_md("cursor"));
        write(&cwd.join(".rho/rules/near.md"), &rule_md("near"));
        write(&repo.join(".rho/rules/near.md"), &rule_md("far"));
        write(&cwd.join(".clinerules/near.md"), &rule_md("cline"));
        let found = discover_rules(&f.paths);
        let condition = |name: &str| found.rules.iter().find(|r| r.name == name).unwrap().condition[0].clone();
        assert_eq!(condition("shared"), "parent", "project before user, native before cursor");
        assert_eq!(condition("near"), "near", "nearest directory first");
        assert_eq!(found.rules.len(), 2);
    }

    #[test]
    fn the_walk_stops_at_the_git_root_and_never_enters_home() {
        let f = fixture();
        let home = f.paths.home.clone().unwrap();
        write(&home.join(".rho/rules/in-home.md"), &rule_md("x"));
        write(&home.join(".agents/rules/home-agents.md"), &rule_md("x"));
        let dirs = project_dirs(&f.paths.cwd, Some(&home));
        assert_eq!(dirs, vec![f.paths.cwd.clone(), home.join("repo")]);
        assert!(discover_rules(&f.paths).rules.is_empty());
        // Without a repository and outside home, the walk goes to the root.
        let outside = f.root.join("a/b");
        std::fs::create_dir_all(&outside).unwrap();
        let dirs = project_dirs(&outside, Some(&home));
        assert_eq!(dirs.first(), Some(&outside));
        assert_eq!(dirs.last().map(|d| d.parent()), Some(None));
    }

    #[test]
    fn invalid_rules_are_skipped_with_a_diagnostic() {
        let f = fixture();
        let dir = f.paths.cwd.join(".rho/rules");
        write(&dir.join("bad-regex.md"), "---\ncondition: \"(unclosed\"\n---\nx\n");
        write(&dir.join("nowhere.md"), "---\ncondition: x\nscope: bogus:token\n---\nx\n");
        write(&dir.join("plain.md"), "---\ndescription: no condition, not a TTSR rule\n---\nx\n");
        write(&dir.join("good.md"), "---\ncondition: [\"ok\", \"(?<=no)\"]\ninterruptMode: maybe\n---\nx\n");
        write(&dir.join("bad-yaml.md"), "---\ncondition: [unclosed\n---\nx\n");
        let (rules, diagnostics) = load_ttsr_rules(&f.paths);
        assert_eq!(rules.iter().map(|r| r.rule.name.as_str()).collect::<Vec<_>>(), vec!["good"]);
        let messages: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        let about = |file: &str| messages.iter().filter(|m| m.contains(&format!("{file}.md:"))).count();
        assert_eq!(about("bad-regex"), 2, "{messages:#?}");
        assert_eq!(about("nowhere"), 2, "{messages:#?}");
        assert_eq!(about("good"), 2, "{messages:#?}");
        assert_eq!(about("plain"), 0, "{messages:#?}");
        assert!(messages.iter().any(|m| m.contains("rule skipped: no condition compiles")));
        assert!(messages.iter().any(|m| m.contains("rule skipped: its scope excludes every stream")));
    }
}
