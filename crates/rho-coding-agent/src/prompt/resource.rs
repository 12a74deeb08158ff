//! What the prompt resources (context files, skills, templates, `SYSTEM.md`) share: where a
//! resource was found, the extra paths a user configured, and the warnings loading produces.

use std::fmt;
use std::path::PathBuf;

use rho_rpc::SlashCommandLocation;

/// Where a skill or template comes from, as `get_commands` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// Under the home directory (the agent dir, `~/.pi/agent`, `~/.claude`, `~/.agents`).
    User,
    /// Under the working directory or its ancestors.
    Project,
    /// Named in settings or on the command line.
    Path,
}

impl From<Location> for SlashCommandLocation {
    fn from(l: Location) -> Self {
        match l {
            Location::User => SlashCommandLocation::User,
            Location::Project => SlashCommandLocation::Project,
            Location::Path => SlashCommandLocation::Path,
        }
    }
}

/// Which locations to search besides the conventional ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourcePaths {
    /// Skip the conventional locations and the settings paths (`--no-skills`); the
    /// command-line paths are still loaded.
    pub skip_defaults: bool,
    /// Paths from settings (`skills`, `prompts`).
    pub settings: Vec<String>,
    /// Paths from the command line (`--skill`, `--prompt-template`).
    pub cli: Vec<String>,
}

/// A problem with one file: reported, and the file (or the part of it) skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDiagnostic {
    pub path: PathBuf,
    pub message: String,
}

impl ResourceDiagnostic {
    pub fn new(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for ResourceDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Warning: {}: {}", self.path.display(), self.message)
    }
}

/// Errors while using a loaded resource.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot read skill \"{name}\" at {path}: {source}")]
    SkillRead { name: String, path: PathBuf, source: std::io::Error },
}
