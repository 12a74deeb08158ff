//! Prompt templates: markdown files whose text a prompt `/name args…` expands to.
//!
//! Searched, in this order (the first template loaded under a name wins): `<agentDir>/prompts`,
//! `<cwd>/.rho/prompts`, `<cwd>/.pi/prompts`, `~/.pi/agent/prompts`, `~/.claude/commands`,
//! `<cwd>/.claude/commands`, then the settings' `prompts` paths and `--prompt-template` paths.
//! Only `*.md` files directly in a directory are templates. The name is the file stem; the
//! description is the front matter's `description`, else the first non-empty line of the body.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::frontmatter::parse_front_matter;
use super::resource::{Location, ResourceDiagnostic, ResourcePaths};
use super::template_args::{parse_command_args, substitute_args};
use crate::config::ConfigPaths;

/// A description taken from the body is cut to this many characters (then `...`).
const FIRST_LINE_DESCRIPTION_MAX: usize = 60;

/// One loaded template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    pub name: String,
    /// Empty when the file has neither a `description` nor any text.
    pub description: String,
    /// The body, without front matter, trimmed.
    pub content: String,
    pub file_path: PathBuf,
    pub location: Location,
}

/// The conventional template directories for `paths`, in search order.
pub fn default_template_dirs(paths: &ConfigPaths) -> Vec<(PathBuf, Location)> {
    let mut dirs = vec![
        (paths.agent_dir.join("prompts"), Location::User),
        (paths.project_dir().join("prompts"), Location::Project),
        (paths.pi_project_dir().join("prompts"), Location::Project),
    ];
    if let Some(p) = paths.in_home(".pi/agent/prompts") {
        dirs.push((p, Location::User));
    }
    if let Some(p) = paths.in_home(".claude/commands") {
        dirs.push((p, Location::User));
    }
    dirs.push((paths.cwd.join(".claude/commands"), Location::Project));
    dirs
}

/// Loads every template for `paths` and `extra`; problems come back as diagnostics.
pub fn load_prompt_templates(
    paths: &ConfigPaths,
    extra: &ResourcePaths,
) -> (Vec<PromptTemplate>, Vec<ResourceDiagnostic>) {
    let mut loader = Loader::default();
    if !extra.skip_defaults {
        for (dir, location) in default_template_dirs(paths) {
            if dir.is_dir() {
                loader.load_dir(&dir, location);
            }
        }
        for raw in &extra.settings {
            loader.load_path(&paths.resolve(raw), Location::Path);
        }
    }
    for raw in &extra.cli {
        loader.load_path(&paths.resolve(raw), Location::Path);
    }
    (loader.templates, loader.diagnostics)
}

#[derive(Default)]
struct Loader {
    templates: Vec<PromptTemplate>,
    diagnostics: Vec<ResourceDiagnostic>,
    by_name: HashMap<String, PathBuf>,
}

impl Loader {
    fn load_dir(&mut self, dir: &Path, location: Location) {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                self.diagnostics
                    .push(ResourceDiagnostic::new(dir, format!("cannot read prompt template directory: {e}")));
                return;
            }
        };
        let mut files: Vec<PathBuf> =
            entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| is_markdown(p) && p.is_file()).collect();
        files.sort();
        for file in files {
            self.load_file(&file, location);
        }
    }

    fn load_path(&mut self, path: &Path, location: Location) {
        if path.is_dir() {
            self.load_dir(path, location);
        } else if path.is_file() {
            if is_markdown(path) {
                self.load_file(path, location);
            } else {
                self.diagnostics.push(ResourceDiagnostic::new(path, "prompt template path is not a markdown file"));
            }
        } else {
            self.diagnostics.push(ResourceDiagnostic::new(path, "prompt template path does not exist"));
        }
    }

    fn load_file(&mut self, path: &Path, location: Location) {
        let Some(template) = read_template(path, location, &mut self.diagnostics) else {
            return;
        };
        if let Some(winner) = self.by_name.get(&template.name) {
            if *winner != template.file_path {
                self.diagnostics.push(ResourceDiagnostic::new(
                    path,
                    format!(
                        "prompt template \"{}\" is already loaded from {}; this one is ignored",
                        template.name,
                        winner.display()
                    ),
                ));
            }
            return;
        }
        self.by_name.insert(template.name.clone(), template.file_path.clone());
        self.templates.push(template);
    }
}

fn is_markdown(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "md")
        && !path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

fn read_template(path: &Path, location: Location, diagnostics: &mut Vec<ResourceDiagnostic>) -> Option<PromptTemplate> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            diagnostics.push(ResourceDiagnostic::new(path, format!("cannot read prompt template: {e}")));
            return None;
        }
    };
    let (description, body) = match parse_front_matter(&text) {
        Ok(fm) => (fm.str_field("description").map(str::to_owned), fm.body),
        Err(e) => {
            diagnostics.push(ResourceDiagnostic::new(path, format!("{e}; the template is used without it")));
            (None, super::frontmatter::strip_front_matter(&text))
        }
    };
    let content = body.trim().to_owned();
    let description = description.unwrap_or_else(|| first_line_description(&content));
    let name = path.file_stem()?.to_string_lossy().into_owned();
    Some(PromptTemplate { name, description, content, file_path: path.to_path_buf(), location })
}

fn first_line_description(content: &str) -> String {
    let Some(line) = content.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return String::new();
    };
    if line.chars().count() <= FIRST_LINE_DESCRIPTION_MAX {
        return line.to_owned();
    }
    let cut: String = line.chars().take(FIRST_LINE_DESCRIPTION_MAX).collect();
    format!("{cut}...")
}

/// Expands `text` when it is `/name args…` and `name` is a template; `None` otherwise (the
/// prompt is then sent as it is).
pub fn expand_template(text: &str, templates: &[PromptTemplate]) -> Option<String> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let template = templates.iter().find(|t| t.name == name)?;
    Some(substitute_args(&template.content, &parse_command_args(args)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::fs;

    fn write(path: &Path, text: &str) -> PathBuf {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
        path.to_path_buf()
    }

    #[test]
    fn a_multibyte_separator_after_the_name_is_not_a_problem() {
        let templates = [PromptTemplate {
            name: "go".into(),
            description: String::new(),
            content: "Go to $1".into(),
            file_path: PathBuf::from("/p/go.md"),
            location: crate::prompt::Location::Project,
        }];
        assert_eq!(expand_template("/go\u{2028}home x", &templates), Some("Go to home".into()));
        assert_eq!(expand_template("/nope\u{2028}x", &templates), None);
    }

    #[test]
    fn one_template_from_each_location_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let agent = home.join(".rho/agent");
        let cwd = tmp.path().join("proj");
        fs::create_dir_all(&cwd).unwrap();
        let paths = ConfigPaths::new(Some(home.clone()), agent.clone(), cwd.clone());
        let expected = [
            (write(&agent.join("prompts/agent.md"), "a"), Location::User),
            (write(&cwd.join(".rho/prompts/rho.md"), "b"), Location::Project),
            (write(&cwd.join(".pi/prompts/pi.md"), "c"), Location::Project),
            (write(&home.join(".pi/agent/prompts/piuser.md"), "d"), Location::User),
            (write(&home.join(".claude/commands/claude.md"), "e"), Location::User),
            (write(&cwd.join(".claude/commands/claudeproj.md"), "f"), Location::Project),
            (write(&home.join("mine/settings.md"), "g"), Location::Path),
            (write(&home.join("cli.md"), "h"), Location::Path),
        ];
        write(&agent.join("prompts/sub/nested.md"), "not a template");
        write(&agent.join("prompts/notes.txt"), "not a template");
        let extra =
            ResourcePaths { skip_defaults: false, settings: vec!["~/mine".into()], cli: vec!["~/cli.md".into()] };
        let (templates, diags) = load_prompt_templates(&paths, &extra);
        assert_eq!(diags, []);
        let got: Vec<(PathBuf, Location)> = templates.iter().map(|t| (t.file_path.clone(), t.location)).collect();
        assert_eq!(got, expected);
        let names: Vec<&str> = templates.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["agent", "rho", "pi", "piuser", "claude", "claudeproj", "settings", "cli"]);
    }

    #[test]
    fn descriptions_and_collisions() {
        let tmp = tempfile::tempdir().unwrap();
        let agent = tmp.path().join("agent");
        let cwd = tmp.path().join("proj");
        let paths = ConfigPaths::new(None, agent.clone(), cwd.clone());
        write(&agent.join("prompts/review.md"), "---\ndescription: Review the diff\n---\n\nReview $@ carefully.\n");
        write(&agent.join("prompts/plain.md"), "\n\n  First line here  \nsecond\n");
        write(&agent.join("prompts/long.md"), &"w".repeat(70));
        write(&agent.join("prompts/empty.md"), "");
        let loser = write(&cwd.join(".rho/prompts/review.md"), "other");
        let (templates, diags) = load_prompt_templates(&paths, &ResourcePaths::default());
        let t = |n: &str| templates.iter().find(|t| t.name == n).unwrap();
        assert_eq!(t("review").description, "Review the diff");
        assert_eq!(t("review").content, "Review $@ carefully.");
        assert_eq!(t("plain").description, "First line here");
        assert_eq!(t("long").description, format!("{}...", "w".repeat(60)));
        assert_eq!(t("empty").description, "");
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].path, loser);
        assert!(diags[0].message.starts_with("prompt template \"review\" is already loaded from"));
    }

    #[test]
    fn expansion() {
        let templates = [PromptTemplate {
            name: "fix".into(),
            description: String::new(),
            content: "Fix $1 in ${@:2}. All: $ARGUMENTS".into(),
            file_path: "/p/fix.md".into(),
            location: Location::User,
        }];
        assert_eq!(
            expand_template(r#"/fix "the bug" a.rs 'b c.rs'"#, &templates).as_deref(),
            Some("Fix the bug in a.rs b c.rs. All: the bug a.rs b c.rs")
        );
        assert_eq!(expand_template("/fix", &templates).as_deref(), Some("Fix  in . All: "));
        assert_eq!(expand_template("/unknown x", &templates), None);
        assert_eq!(expand_template("fix x", &templates), None);
        assert_eq!(expand_template("/fixx", &templates), None);
    }
}
