//! Skills: markdown files with a `name` and `description` in their front matter that the model
//! may load with the read tool when a task matches, or that a user invokes as
//! `/skill:name args`.
//!
//! Searched, in this order (the first skill loaded under a name wins): `<agentDir>/skills`,
//! `~/.agents/skills`, `<cwd>/.rho/skills`, `<cwd>/.pi/skills`, `~/.pi/agent/skills`,
//! `~/.claude/skills`, `<cwd>/.claude/skills`, `.agents/skills` in the working directory and
//! each parent up to the git root, then the settings' `skills` paths and `--skill` paths. The
//! same file reached twice (a symlink) is loaded once, silently.

mod block;
mod discover;
mod validate;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

pub use block::{expand_skill_command, skills_prompt_block};
pub use discover::SKILL_FILE;
pub use validate::{MAX_DESCRIPTION_LEN, MAX_NAME_LEN};

use super::frontmatter::parse_front_matter;
use super::resource::{Location, ResourceDiagnostic, ResourcePaths};
use crate::config::ConfigPaths;

/// One loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The skill's markdown file (absolute).
    pub file_path: PathBuf,
    /// The directory relative references in the skill resolve against.
    pub base_dir: PathBuf,
    pub location: Location,
    /// `disable-model-invocation: true`: not listed in the system prompt, still invocable.
    pub disable_model_invocation: bool,
}

/// The conventional skill directories for `paths`, in search order.
pub fn default_skill_dirs(paths: &ConfigPaths) -> Vec<(PathBuf, Location)> {
    let mut dirs = vec![(paths.agent_dir.join("skills"), Location::User)];
    if let Some(p) = paths.in_home(".agents/skills") {
        dirs.push((p, Location::User));
    }
    dirs.push((paths.project_dir().join("skills"), Location::Project));
    dirs.push((paths.pi_project_dir().join("skills"), Location::Project));
    if let Some(p) = paths.in_home(".pi/agent/skills") {
        dirs.push((p, Location::User));
    }
    if let Some(p) = paths.in_home(".claude/skills") {
        dirs.push((p, Location::User));
    }
    dirs.push((paths.cwd.join(".claude/skills"), Location::Project));
    for dir in up_to_git_root(&paths.cwd) {
        dirs.push((dir.join(".agents/skills"), Location::Project));
    }
    dirs
}

/// `cwd` and its parents up to and including the first one holding `.git`; only `cwd` when
/// none does.
fn up_to_git_root(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            return dirs;
        }
    }
    vec![cwd.to_path_buf()]
}

/// Loads every skill for `paths` and `extra`; problems come back as diagnostics.
pub fn load_skills(paths: &ConfigPaths, extra: &ResourcePaths) -> (Vec<Skill>, Vec<ResourceDiagnostic>) {
    let mut loader = Loader::default();
    if !extra.skip_defaults {
        for (dir, location) in default_skill_dirs(paths) {
            loader.load_dir(&dir, location);
        }
        for raw in &extra.settings {
            loader.load_path(&paths.resolve(raw), Location::Path);
        }
    }
    for raw in &extra.cli {
        loader.load_path(&paths.resolve(raw), Location::Path);
    }
    (loader.skills, loader.diagnostics)
}

#[derive(Default)]
struct Loader {
    skills: Vec<Skill>,
    diagnostics: Vec<ResourceDiagnostic>,
    by_name: HashMap<String, PathBuf>,
    seen_files: HashSet<PathBuf>,
}

impl Loader {
    fn load_dir(&mut self, dir: &Path, location: Location) {
        for file in discover::skill_files(dir, &mut self.diagnostics) {
            self.load_file(&file, location);
        }
    }

    fn load_path(&mut self, path: &Path, location: Location) {
        if path.is_dir() {
            self.load_dir(path, location);
        } else if path.is_file() {
            if path.extension().is_some_and(|e| e == "md") {
                self.load_file(path, location);
            } else {
                self.diagnostics.push(ResourceDiagnostic::new(path, "skill path is not a markdown file"));
            }
        } else {
            self.diagnostics.push(ResourceDiagnostic::new(path, "skill path does not exist"));
        }
    }

    fn load_file(&mut self, path: &Path, location: Location) {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.seen_files.contains(&real) {
            return;
        }
        let Some(skill) = read_skill(path, location, &mut self.diagnostics) else {
            return;
        };
        if let Some(winner) = self.by_name.get(&skill.name) {
            self.diagnostics.push(ResourceDiagnostic::new(
                path,
                format!("skill \"{}\" is already loaded from {}; this one is ignored", skill.name, winner.display()),
            ));
            return;
        }
        self.seen_files.insert(real);
        self.by_name.insert(skill.name.clone(), skill.file_path.clone());
        self.skills.push(skill);
    }
}

/// Reads one skill file; `None` (with a diagnostic) when it cannot be used.
fn read_skill(path: &Path, location: Location, diagnostics: &mut Vec<ResourceDiagnostic>) -> Option<Skill> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            diagnostics.push(ResourceDiagnostic::new(path, format!("cannot read skill file: {e}")));
            return None;
        }
    };
    let fm = match parse_front_matter(&text) {
        Ok(fm) => fm,
        Err(e) => {
            diagnostics.push(ResourceDiagnostic::new(path, format!("{e}; the skill is not loaded")));
            return None;
        }
    };
    let is_skill_md = path.file_name().is_some_and(|n| n == SKILL_FILE);
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let expected = if is_skill_md { base_dir.file_name() } else { path.file_stem() }
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = fm.str_field("name").map(str::to_owned).unwrap_or_else(|| expected.clone());
    let warn = |diagnostics: &mut Vec<ResourceDiagnostic>, message: String| {
        diagnostics.push(ResourceDiagnostic::new(path, message));
    };
    for w in validate::name_warnings(&name, &expected, is_skill_md) {
        warn(diagnostics, w);
    }
    let Some(description) = fm.str_field("description") else {
        warn(diagnostics, "description is missing from the front matter; the skill is not loaded".into());
        return None;
    };
    for w in validate::description_warnings(description) {
        warn(diagnostics, w);
    }
    Some(Skill {
        name,
        description: description.to_owned(),
        file_path: path.to_path_buf(),
        base_dir,
        location,
        disable_model_invocation: fm.fields.get("disable-model-invocation") == Some(&serde_json::Value::Bool(true)),
    })
}

#[cfg(test)]
mod tests;
