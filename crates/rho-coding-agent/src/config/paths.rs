//! Where rho looks for its files: the agent dir (`~/.rho/agent`, or `RHO_CODING_AGENT_DIR`; a pi
//! user's `~/.pi/agent` or `PI_CODING_AGENT_DIR` when rho has none of its own), the project dirs
//! (`<cwd>/.rho`, and pi's `<cwd>/.pi` for compatibility) and the home directory.
//!
//! Everything home-relative goes through [`ConfigPaths::home`], so tests build a `ConfigPaths`
//! over temporary directories and never read the real home.

use std::path::{Path, PathBuf};

/// The environment variable that moves the agent dir.
pub const AGENT_DIR_ENV: &str = "RHO_CODING_AGENT_DIR";

/// pi's variable for its agent dir, read when rho has no agent dir of its own.
pub const PI_AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

/// rho's config folder name, in the home directory and in a project.
pub const CONFIG_DIR_NAME: &str = ".rho";

/// pi's project folder name; its project settings, skills and prompts are read too.
pub const PI_CONFIG_DIR_NAME: &str = ".pi";

/// The settings file name, in the agent dir and in each project dir.
pub const SETTINGS_FILE_NAME: &str = "settings.json";

/// The roots every lookup starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigPaths {
    /// The user's home directory; `None` when it cannot be determined (home-relative
    /// locations are then skipped).
    pub home: Option<PathBuf>,
    /// The agent dir: global settings, skills, prompts, `SYSTEM.md`, `AGENTS.md`.
    pub agent_dir: PathBuf,
    /// The working directory rho runs in (absolute).
    pub cwd: PathBuf,
}

impl ConfigPaths {
    /// Explicit roots (tests, embedding). A relative `cwd` or `agent_dir` is made absolute
    /// against the process's current directory.
    pub fn new(home: Option<PathBuf>, agent_dir: PathBuf, cwd: PathBuf) -> Self {
        Self { home, agent_dir: absolutize(agent_dir), cwd: absolutize(cwd) }
    }

    /// The real roots: home from the OS and the agent dir [`choose_agent_dir`] picks. When it
    /// is pi's, stderr says so (once per process).
    pub fn from_env(cwd: PathBuf) -> Self {
        let home = dirs::home_dir();
        let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let (agent_dir, source) = choose_agent_dir(home.as_deref(), env, |p| p.is_dir());
        static SAID: std::sync::Once = std::sync::Once::new();
        if source == AgentDirSource::Pi {
            SAID.call_once(|| {
                eprintln!("rho: using pi's agent directory {} (rho has none of its own)", agent_dir.display())
            });
        }
        Self::new(home, agent_dir, cwd)
    }

    /// `<agentDir>/settings.json`.
    pub fn global_settings_file(&self) -> PathBuf {
        self.agent_dir.join(SETTINGS_FILE_NAME)
    }

    /// The project settings files in merge order: pi's `<cwd>/.pi/settings.json`, then rho's
    /// `<cwd>/.rho/settings.json` (which wins).
    pub fn project_settings_files(&self) -> [PathBuf; 2] {
        [self.pi_project_dir().join(SETTINGS_FILE_NAME), self.project_dir().join(SETTINGS_FILE_NAME)]
    }

    /// `<cwd>/.rho`.
    pub fn project_dir(&self) -> PathBuf {
        self.cwd.join(CONFIG_DIR_NAME)
    }

    /// `<cwd>/.pi`.
    pub fn pi_project_dir(&self) -> PathBuf {
        self.cwd.join(PI_CONFIG_DIR_NAME)
    }

    /// `<agentDir>/models.json` (custom providers and models).
    pub fn models_file(&self) -> PathBuf {
        self.agent_dir.join("models.json")
    }

    /// `<agentDir>/auth.json` (stored API keys).
    pub fn auth_file(&self) -> PathBuf {
        self.agent_dir.join("auth.json")
    }

    /// `<agentDir>/sessions` (the default session directory root).
    pub fn sessions_dir(&self) -> PathBuf {
        self.agent_dir.join("sessions")
    }

    /// `~/<rel>`, or `None` without a home directory.
    pub fn in_home(&self, rel: &str) -> Option<PathBuf> {
        self.home.as_ref().map(|h| h.join(rel))
    }

    /// Resolves a user-given path: `~` and `~/…` against the home directory, absolute paths
    /// as they are, relative paths against the working directory.
    pub fn resolve(&self, raw: &str) -> PathBuf {
        let expanded = expand_tilde(raw.trim(), self.home.as_deref());
        if expanded.is_absolute() { expanded } else { self.cwd.join(expanded) }
    }
}

/// Whose agent dir is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentDirSource {
    Rho,
    /// A pi user's: pi's sessions, settings, models and keys are read (and written in pi's own
    /// formats, so pi reads them back).
    Pi,
}

/// The agent dir: `RHO_CODING_AGENT_DIR`; else `~/.rho/agent` when it exists; else a pi
/// user's own (`PI_CODING_AGENT_DIR`, or `~/.pi/agent` when it exists); else `~/.rho/agent`.
pub fn choose_agent_dir(
    home: Option<&Path>,
    env: impl Fn(&str) -> Option<PathBuf>,
    exists: impl Fn(&Path) -> bool,
) -> (PathBuf, AgentDirSource) {
    let rho = agent_dir_from(home, env(AGENT_DIR_ENV).as_deref());
    if env(AGENT_DIR_ENV).is_some() || exists(&rho) {
        return (rho, AgentDirSource::Rho);
    }
    if let Some(dir) = env(PI_AGENT_DIR_ENV) {
        return (expand_tilde(&dir.to_string_lossy(), home), AgentDirSource::Pi);
    }
    if let Some(pi) = home.map(|h| h.join(PI_CONFIG_DIR_NAME).join("agent")).filter(|p| exists(p)) {
        return (pi, AgentDirSource::Pi);
    }
    (rho, AgentDirSource::Rho)
}

/// The agent dir for a home directory and an optional override (the value of
/// `RHO_CODING_AGENT_DIR`).
pub fn agent_dir_from(home: Option<&Path>, override_dir: Option<&Path>) -> PathBuf {
    if let Some(dir) = override_dir {
        return expand_tilde(&dir.to_string_lossy(), home);
    }
    match home {
        Some(h) => h.join(CONFIG_DIR_NAME).join("agent"),
        None => PathBuf::from(CONFIG_DIR_NAME).join("agent"),
    }
}

/// The agent dir of this process (`RHO_CODING_AGENT_DIR` or `~/.rho/agent`).
pub fn agent_dir() -> PathBuf {
    let home = dirs::home_dir();
    let override_dir = std::env::var_os(AGENT_DIR_ENV).filter(|v| !v.is_empty()).map(PathBuf::from);
    agent_dir_from(home.as_deref(), override_dir.as_deref())
}

/// Expands a leading `~` (alone or followed by a separator) to `home`; anything else, or no
/// home, is returned unchanged.
pub fn expand_tilde(raw: &str, home: Option<&Path>) -> PathBuf {
    let Some(home) = home else {
        return PathBuf::from(raw);
    };
    if raw == "~" {
        return home.to_path_buf();
    }
    if let Some(rest) = raw.strip_prefix("~/").or_else(|| raw.strip_prefix("~\\")) {
        return home.join(rest);
    }
    PathBuf::from(raw)
}

fn absolutize(p: PathBuf) -> PathBuf {
    if p.is_absolute() { p } else { std::path::absolute(&p).unwrap_or(p) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_dir_defaults_under_home() {
        let dir = agent_dir_from(Some(Path::new("/home/u")), None);
        assert_eq!(dir, PathBuf::from("/home/u/.rho/agent"));
    }

    #[test]
    fn agent_dir_override_expands_tilde() {
        let dir = agent_dir_from(Some(Path::new("/home/u")), Some(Path::new("~/custom/agent")));
        assert_eq!(dir, PathBuf::from("/home/u/custom/agent"));
        let dir = agent_dir_from(Some(Path::new("/home/u")), Some(Path::new("/abs/agent")));
        assert_eq!(dir, PathBuf::from("/abs/agent"));
    }

    #[test]
    fn a_pi_users_agent_dir_is_used_when_rho_has_none() {
        let home = Some(Path::new("/home/u"));
        let none = |_: &str| None;
        let only = |dirs: &'static [&'static str]| move |p: &Path| dirs.iter().any(|d| p == Path::new(d));
        // rho's own wins when it exists, pi's when only pi's does.
        assert_eq!(
            choose_agent_dir(home, none, only(&["/home/u/.rho/agent", "/home/u/.pi/agent"])),
            (PathBuf::from("/home/u/.rho/agent"), AgentDirSource::Rho)
        );
        assert_eq!(
            choose_agent_dir(home, none, only(&["/home/u/.pi/agent"])),
            (PathBuf::from("/home/u/.pi/agent"), AgentDirSource::Pi)
        );
        // Neither: rho's, to be created.
        assert_eq!(choose_agent_dir(home, none, only(&[])), (PathBuf::from("/home/u/.rho/agent"), AgentDirSource::Rho));
        // The variables: rho's first, then pi's.
        let pi_env = |name: &str| (name == PI_AGENT_DIR_ENV).then(|| PathBuf::from("~/pi-agent"));
        assert_eq!(choose_agent_dir(home, pi_env, only(&[])), (PathBuf::from("/home/u/pi-agent"), AgentDirSource::Pi));
        let both = |name: &str| Some(PathBuf::from(if name == AGENT_DIR_ENV { "/rho" } else { "/pi" }));
        assert_eq!(choose_agent_dir(home, both, only(&[])), (PathBuf::from("/rho"), AgentDirSource::Rho));
    }

    #[test]
    fn tilde_only_at_the_start() {
        let home = Some(Path::new("/h"));
        assert_eq!(expand_tilde("~", home), PathBuf::from("/h"));
        assert_eq!(expand_tilde("~/a", home), PathBuf::from("/h/a"));
        assert_eq!(expand_tilde("a/~/b", home), PathBuf::from("a/~/b"));
        assert_eq!(expand_tilde("~user/x", home), PathBuf::from("~user/x"));
        assert_eq!(expand_tilde("~/a", None), PathBuf::from("~/a"));
    }

    #[test]
    fn project_settings_files_pi_first_then_rho() {
        let p = ConfigPaths::new(None, "/agent".into(), "/work/proj".into());
        assert_eq!(
            p.project_settings_files(),
            [PathBuf::from("/work/proj/.pi/settings.json"), PathBuf::from("/work/proj/.rho/settings.json")]
        );
        assert_eq!(p.global_settings_file(), PathBuf::from("/agent/settings.json"));
    }

    #[test]
    fn resolve_relative_absolute_and_home() {
        let p = ConfigPaths::new(Some("/h".into()), "/agent".into(), "/cwd".into());
        assert_eq!(p.resolve("skills"), PathBuf::from("/cwd/skills"));
        assert_eq!(p.resolve("/x/y"), PathBuf::from("/x/y"));
        assert_eq!(p.resolve("~/s"), PathBuf::from("/h/s"));
    }
}
