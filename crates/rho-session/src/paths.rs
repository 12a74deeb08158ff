//! Where session files live: `<agentDir>/sessions/--<encoded cwd>--/<ts>_<uuid>.jsonl`, with
//! pi's encoding of the working directory, so rho and pi find each other's sessions by the same
//! rules. The agent dir is `~/.rho/agent` unless `RHO_CODING_AGENT_DIR` says otherwise.

use std::path::{Path, PathBuf};

/// The environment variable that overrides the agent dir.
pub const AGENT_DIR_ENV: &str = "RHO_CODING_AGENT_DIR";

/// Expands a leading `~` or `~/` to `home`.
fn expand_tilde(raw: &str, home: Option<&Path>) -> PathBuf {
    match (raw, home) {
        ("~", Some(home)) => home.to_path_buf(),
        (s, Some(home)) if s.starts_with("~/") => home.join(&s[2..]),
        (s, _) => PathBuf::from(s),
    }
}

/// The agent dir from an explicit override value (the environment variable's) and a home dir.
pub fn agent_dir_from(override_value: Option<&str>, home: Option<&Path>) -> PathBuf {
    match override_value.filter(|v| !v.is_empty()) {
        Some(v) => expand_tilde(v, home),
        None => home.map(|h| h.join(".rho").join("agent")).unwrap_or_else(|| PathBuf::from(".rho").join("agent")),
    }
}

/// rho's agent dir: `$RHO_CODING_AGENT_DIR` (with `~` expanded) or `~/.rho/agent`.
pub fn agent_dir() -> PathBuf {
    let value = std::env::var(AGENT_DIR_ENV).ok();
    agent_dir_from(value.as_deref(), dirs::home_dir().as_deref())
}

/// `<agentDir>/sessions`.
pub fn sessions_root(agent_dir: &Path) -> PathBuf {
    agent_dir.join("sessions")
}

/// The directory name pi gives a working directory: one leading `/` or `\` dropped, every `/`,
/// `\` and `:` replaced by `-`, wrapped in `--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix('/').or_else(|| cwd.strip_prefix('\\')).unwrap_or(cwd);
    let encoded: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{encoded}--")
}

/// The default session directory for `cwd` (not created here).
pub fn session_dir_for_cwd(agent_dir: &Path, cwd: &Path) -> PathBuf {
    sessions_root(agent_dir).join(encode_cwd(&cwd.to_string_lossy()))
}

/// The file name of a new session: `<timestamp with : and . as ->_<session id>.jsonl`.
pub fn session_file_name(iso_timestamp: &str, session_id: &str) -> String {
    format!("{}_{session_id}.jsonl", crate::id::file_name_timestamp(iso_timestamp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_encoding_matches_pi() {
        assert_eq!(encode_cwd("/home/me/proj"), "--home-me-proj--");
        assert_eq!(encode_cwd("C:\\work\\x"), "--C--work-x--");
        assert_eq!(encode_cwd("/a/b-c"), "--a-b-c--");
        assert_eq!(encode_cwd("//srv/x"), "---srv-x--");
    }

    #[test]
    fn agent_dir_override_and_default() {
        let home = Path::new("/home/me");
        assert_eq!(agent_dir_from(None, Some(home)), PathBuf::from("/home/me/.rho/agent"));
        assert_eq!(agent_dir_from(Some(""), Some(home)), PathBuf::from("/home/me/.rho/agent"));
        assert_eq!(agent_dir_from(Some("~/x/agent"), Some(home)), PathBuf::from("/home/me/x/agent"));
        assert_eq!(agent_dir_from(Some("~"), Some(home)), PathBuf::from("/home/me"));
        assert_eq!(agent_dir_from(Some("/opt/agent"), Some(home)), PathBuf::from("/opt/agent"));
    }

    #[test]
    fn session_paths() {
        let agent = Path::new("/h/.rho/agent");
        assert_eq!(
            session_dir_for_cwd(agent, Path::new("/home/me/proj")),
            PathBuf::from("/h/.rho/agent/sessions/--home-me-proj--")
        );
        assert_eq!(session_file_name("2026-03-15T22:40:18.123Z", "0f8b"), "2026-03-15T22-40-18-123Z_0f8b.jsonl");
    }
}
