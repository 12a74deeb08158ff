//! Which session file a run uses (docs/session-format.md, "Choosing the session at start-up"):
//! `--no-session` (memory only), `--session <path|id prefix>`, `--continue` / `--resume` (the
//! newest session of this directory), else a new session in `--session-dir` or the default
//! directory for the cwd.

use std::path::{Path, PathBuf};

use rho_session::{LoadWarning, Session, find_session_by_id_prefix, most_recent_session, session_dir_for_cwd};

use super::StartupError;
use crate::cli::Cli;
use crate::config::ConfigPaths;

/// The session this run writes, locked against a second writer (another rho on the same file
/// would grow a second branch from the same leaf without either knowing).
pub fn select_session(cli: &Cli, paths: &ConfigPaths) -> Result<Session, StartupError> {
    let mut session = choose(cli, paths)?;
    if let Err(e) = session.lock() {
        let path = session.session_file().map(Path::to_path_buf).unwrap_or_default();
        return Err(failed(&path, e));
    }
    Ok(session)
}

fn choose(cli: &Cli, paths: &ConfigPaths) -> Result<Session, StartupError> {
    let cwd = &paths.cwd;
    if cli.no_session {
        return Ok(Session::in_memory(cwd));
    }
    let dir = cli.session_dir.clone().unwrap_or_else(|| session_dir_for_cwd(&paths.agent_dir, cwd));
    if let Some(arg) = &cli.session {
        return open_named(arg, &dir, paths);
    }
    if let Some(arg) = &cli.fork {
        return fork_named(arg, &dir, paths);
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
