//! Which session file a run uses (docs/session-format.md, "Choosing the session at start-up"):
//! `--no-session` (memory only), `--session <path|id prefix>`, `--continue` / `--resume` (the
//! newest session of this directory), else a new session in the session directory
//! ([`session_dir`]).

use std::path::{Path, PathBuf};

use rho_session::{LoadWarning, Session, find_session_by_id_prefix, most_recent_session, session_dir_for_cwd};

use super::StartupError;
use crate::cli::Cli;
use crate::config::{ConfigPaths, Settings};

/// The variable that moves the session directory.
pub const SESSION_DIR_ENV: &str = "RHO_CODING_AGENT_SESSION_DIR";

/// pi's variable for its session directory, read when rho's is not set: rho writes pi's
/// format, so a pi user's sessions and rho's can share the folder.
pub const PI_SESSION_DIR_ENV: &str = "PI_CODING_AGENT_SESSION_DIR";

/// Where this run's sessions are kept, as pi decides it: `--session-dir`; else
/// `RHO_CODING_AGENT_SESSION_DIR` (or pi's `PI_CODING_AGENT_SESSION_DIR`); else the global
/// `sessionDir` setting; else the working directory's folder under the agent dir's `sessions`.
/// `~` and relative paths resolve as every user-given path does.
pub fn session_dir(cli: &Cli, paths: &ConfigPaths, settings: &Settings) -> PathBuf {
    session_dir_from(cli, paths, settings, |name| std::env::var(name).ok())
}

fn session_dir_from(
    cli: &Cli,
    paths: &ConfigPaths,
    settings: &Settings,
    env: impl Fn(&str) -> Option<String>,
) -> PathBuf {
    if let Some(dir) = &cli.session_dir {
        return paths.resolve(&dir.to_string_lossy());
    }
    let named = [SESSION_DIR_ENV, PI_SESSION_DIR_ENV].into_iter().find_map(|name| env(name).filter(|v| !v.is_empty()));
    match named.or_else(|| settings.get_string("sessionDir").filter(|v| !v.is_empty())) {
        Some(dir) => paths.resolve(&dir),
        None => session_dir_for_cwd(&paths.agent_dir, &paths.cwd),
    }
}

/// The session this run writes, locked against a second writer (another rho on the same file
/// would grow a second branch from the same leaf without either knowing).
pub fn select_session(cli: &Cli, paths: &ConfigPaths, settings: &Settings) -> Result<Session, StartupError> {
    let mut session = choose(cli, paths, settings)?;
    if let Err(e) = session.lock() {
        let path = session.session_file().map(Path::to_path_buf).unwrap_or_default();
        return Err(failed(&path, e));
    }
    Ok(session)
}

fn choose(cli: &Cli, paths: &ConfigPaths, settings: &Settings) -> Result<Session, StartupError> {
    let cwd = &paths.cwd;
    if cli.no_session {
        return Ok(Session::in_memory(cwd));
    }
    let dir = session_dir(cli, paths, settings);
    if let Some(arg) = &cli.session {
        return open_named(arg, &dir, paths);
    }
    if let Some(arg) = &cli.fork {
        return fork_named(arg, &dir, paths);
    }
    if let Some(id) = &cli.session_id {
        return with_id(id, &dir, paths);
    }
    if (cli.continue_session || cli.resume)
        && let Some(path) = most_recent_session(&dir)
    {
        return open(&path);
    }
    Session::create(&dir, cwd, None).map_err(|e| failed(&dir, e))
}

/// `--session`: a file path, or the id prefix of a session of this or another project (which
/// is then forked into this directory).
fn open_named(arg: &str, dir: &Path, paths: &ConfigPaths) -> Result<Session, StartupError> {
    if arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl") {
        let path = PathBuf::from(arg);
        if path.exists() {
            return open(&path);
        }
        return Session::create_at(&path, &paths.cwd, None).map_err(|e| failed(&path, e));
    }
    let Some(found) = find_session_by_id_prefix(&paths.agent_dir, dir, arg) else {
        return Err(StartupError::new(format!("No session found matching '{arg}'"), 1));
    };
    if found.in_other_project {
        eprintln!("Session found in different project: {}; forking it into this directory", found.info.cwd);
        let (session, warnings) =
            Session::fork_from(&found.info.path, dir, &paths.cwd).map_err(|e| failed(&found.info.path, e))?;
        report(&found.info.path, &warnings);
        return Ok(session);
    }
    open(&found.info.path)
}

/// `--session-id`: this directory's session with exactly this id, or a new one with it.
fn with_id(id: &str, dir: &Path, paths: &ConfigPaths) -> Result<Session, StartupError> {
    if let Some(found) = find_session_by_id_prefix(&paths.agent_dir, dir, id)
        && !found.in_other_project
        && found.info.id == id
    {
        return open(&found.info.path);
    }
    Session::create_with_id(dir, &paths.cwd, id).map_err(|e| match e {
        rho_session::SessionError::InvalidId(_) => StartupError::new(format!("Error: {e}"), 1),
        e => failed(dir, e),
    })
}

/// `--fork`: a session (a path, or an id prefix of any project's) copied into a new file of
/// this directory, its header naming the original as `parentSession`.
fn fork_named(arg: &str, dir: &Path, paths: &ConfigPaths) -> Result<Session, StartupError> {
    let source = if arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl") {
        let path = paths.resolve(arg);
        if !path.exists() {
            return Err(StartupError::new(format!("Error: Session file not found: {}", path.display()), 1));
        }
        path
    } else {
        find_session_by_id_prefix(&paths.agent_dir, dir, arg)
            .map(|found| found.info.path)
            .ok_or_else(|| StartupError::new(format!("No session found matching '{arg}'"), 1))?
    };
    let (session, warnings) = Session::fork_from(&source, dir, &paths.cwd).map_err(|e| failed(&source, e))?;
    report(&source, &warnings);
    Ok(session)
}

fn open(path: &Path) -> Result<Session, StartupError> {
    let (session, warnings) = Session::open(path).map_err(|e| failed(path, e))?;
    report(path, &warnings);
    Ok(session)
}

fn report(path: &Path, warnings: &[LoadWarning]) {
    for w in warnings {
        eprintln!("Warning: {}: {w}", path.display());
    }
}

fn failed(path: &Path, e: rho_session::SessionError) -> StartupError {
    match e {
        // The message names the file already.
        rho_session::SessionError::Locked { .. } => StartupError::new(format!("Error: {e}"), 1),
        e => StartupError::new(format!("Error: session {}: {e}", path.display()), 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli(args: &[&str]) -> Cli {
        crate::cli::parse(std::iter::once("rho").chain(args.iter().copied()).map(Into::into)).unwrap()
    }

    fn settings(value: serde_json::Value) -> Settings {
        Settings::from_json(value).0
    }

    #[test]
    fn the_session_dir_is_the_flag_then_the_variables_then_the_setting_then_the_default() {
        let paths = ConfigPaths::new(Some("/home/u".into()), "/home/u/.rho/agent".into(), "/work/p".into());
        let configured = settings(serde_json::json!({"sessionDir": "~/from-setting"}));
        let none = settings(serde_json::json!({}));
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
        };
        let both = env(&[(SESSION_DIR_ENV, "/rho-sessions"), (PI_SESSION_DIR_ENV, "/pi-sessions")]);
        let flag = cli(&["--session-dir", "here"]);
        assert_eq!(session_dir_from(&flag, &paths, &configured, both), PathBuf::from("/work/p/here"));
        let plain = cli(&[]);
        assert_eq!(session_dir_from(&plain, &paths, &configured, both), PathBuf::from("/rho-sessions"));
        let pi = env(&[(SESSION_DIR_ENV, ""), (PI_SESSION_DIR_ENV, "~/pi-sessions")]);
        assert_eq!(session_dir_from(&plain, &paths, &configured, pi), PathBuf::from("/home/u/pi-sessions"));
        assert_eq!(session_dir_from(&plain, &paths, &configured, env(&[])), PathBuf::from("/home/u/from-setting"));
        assert_eq!(
            session_dir_from(&plain, &paths, &none, env(&[])),
            session_dir_for_cwd(&paths.agent_dir, &paths.cwd)
        );
    }
}
