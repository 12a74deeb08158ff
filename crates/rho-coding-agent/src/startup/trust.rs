//! Whether this run uses the project's own code (see [`crate::config::trust`]): approved before
//! (`rho trust`), for this run (`--trust-project`), or, in the interactive mode, when asked once
//! on the terminal; otherwise one notice names what was skipped and how to allow it.

use std::io::{BufRead, IsTerminal, Write};

use crate::cli::Cli;
use crate::config::ConfigPaths;
use crate::config::trust;

/// Whether the trusted project's code changed since it was trusted, as this start found it:
/// asked once per folder and process (the start asks it from several places, and the digest
/// reads the project's code).
fn code_changed(paths: &ConfigPaths) -> bool {
    static FOUND: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, bool>>> =
        std::sync::LazyLock::new(Default::default);
    let mut found = FOUND.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    *found.entry(paths.cwd.clone()).or_insert_with(|| trust::code_changed(&paths.agent_dir, &paths.cwd))
}

/// Whether the project's own code may run in this run: trusted, and not changed since.
pub fn project_trusted(cli: &Cli, paths: &ConfigPaths) -> bool {
    !cli.no_approve && (cli.trust_project || (trust::is_trusted(&paths.agent_dir, &paths.cwd) && !code_changed(paths)))
}

/// The one notice of a run in a project not trusted (or whose code changed since it was) that
/// has code of its own; `None` when there is nothing to say.
pub fn skipped_notice(paths: &ConfigPaths) -> Option<String> {
    let found = trust::project_code(&paths.cwd);
    let why = if code_changed(paths) { "its code changed since it was trusted" } else { "the project is not trusted" };
    (!found.is_empty()).then(|| {
        format!(
            "Warning: this project's own code was not started, as {why}: {}. Run `rho trust` in {} to allow it \
             from now on (`rho untrust` withdraws it), or start with --trust-project for one run.",
            found.join("; "),
            paths.cwd.display()
        )
    })
}

/// pi 1.6's `project_trust`: in a project with code of its own that neither the command line nor
/// a saved decision settles, the user's and the command line's extensions are asked first (the
/// first yes or no wins; `remember` saves it). Nothing is asked when no such extension is
/// configured. pi asks them even over a saved decision; rho keeps the saved one, so that a
/// start in a decided project never waits for Node.
pub async fn ask_extensions(cli: &mut Cli, ui: super::ExtensionUi) {
    if cli.no_approve || cli.trust_project {
        return;
    }
    let Ok(cwd) = std::env::current_dir() else { return };
    let paths = ConfigPaths::from_env(cwd);
    let decided = trust::is_trusted(&paths.agent_dir, &paths.cwd) || trust::is_declined(&paths.agent_dir, &paths.cwd);
    if decided || trust::project_code(&paths.cwd).is_empty() {
        return;
    }
    let (settings, _) = crate::config::Settings::load(&paths, &crate::config::LoadOptions::default());
    let Ok(Some(config)) = super::extension_config(cli, &paths, &settings, ui) else { return };
    let Some(answer) = crate::extensions::project_trust::ask(&config, &paths.cwd, &paths.agent_dir).await else {
        return;
    };
    if answer.remember {
        let saved = if answer.trusted {
            trust::trust(&paths.agent_dir, &paths.cwd)
        } else {
            trust::untrust(&paths.agent_dir, &paths.cwd)
        };
        if let Err(e) = saved {
            eprintln!("Warning: cannot remember the extension's trust decision ({e}); it holds for this run only");
        }
    }
    if answer.trusted {
        cli.trust_project = true;
    } else {
        cli.no_approve = true;
    }
}

/// The interactive mode's question, before the screen is taken over: in a project not trusted
/// that has code of its own, lists it and asks. "y" trusts it from now on, "o" for this run
/// (sets `cli.trust_project`), anything else starts none of it.
pub fn ask_on_terminal(cli: &mut Cli, paths: &ConfigPaths) {
    if cli.no_approve || project_trusted(cli, paths) || !std::io::stdin().is_terminal() {
        return;
    }
    // Declined before, or never to be asked about (pi 1.6's `defaultProjectTrust: "never"`).
    if trust::is_declined(&paths.agent_dir, &paths.cwd) || trust::default_project_trust(&paths.agent_dir) == "never" {
        return;
    }
    let found = trust::project_code(&paths.cwd);
    if found.is_empty() {
        return;
    }
    let mut err = std::io::stderr();
    if code_changed(paths) {
        let _ = writeln!(err, "The code of {} changed since you trusted it; rho would run:", paths.cwd.display());
    } else {
        let _ = writeln!(err, "{} has code of its own that rho would run:", paths.cwd.display());
    }
    for item in &found {
        let _ = writeln!(err, "  {item}");
    }
    let _ = write!(err, "Trust this project? [y] yes, remember  [o] this time only  [N] no: ");
    let _ = err.flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return;
    }
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => match trust::trust(&paths.agent_dir, &paths.cwd) {
            Ok(_) => cli.trust_project = true,
            Err(e) => {
                let _ = writeln!(err, "Warning: cannot remember the approval ({e}); trusted for this run only");
                cli.trust_project = true;
            }
        },
        "o" | "once" => cli.trust_project = true,
        _ => {}
    }
}

/// `rho trust [DIR]` / `rho untrust [DIR]`: records or withdraws the approval of DIR (the
/// current folder by default); the exit code.
pub fn run_command(trusting: bool, dir: Option<&str>) -> i32 {
    let Ok(cwd) = std::env::current_dir() else {
        eprintln!("Error: cannot read the current directory");
        return 1;
    };
    let paths = ConfigPaths::from_env(cwd);
    let dir = dir.map_or_else(|| paths.cwd.clone(), |d| paths.cwd.join(d));
    if !dir.is_dir() {
        eprintln!("Error: {} is not a folder", dir.display());
        return 1;
    }
    let shown = dir.canonicalize().unwrap_or_else(|_| dir.clone());
    let outcome = if trusting { trust::trust(&paths.agent_dir, &dir) } else { trust::untrust(&paths.agent_dir, &dir) };
    let said = match (trusting, outcome) {
        (true, Ok(_)) => {
            format!("Trusted {}: its MCP servers, extensions and settings run from now on.", shown.display())
        }
        (false, Ok(true)) => format!("{} is no longer trusted.", shown.display()),
        (false, Ok(false)) => format!("{} was not trusted.", shown.display()),
        (_, Err(e)) => {
            eprintln!("Error: cannot write {}: {e}", trust::trust_file(&paths.agent_dir).display());
            return 1;
        }
    };
    // The command's answer is its output (the interactive and RPC modes never come here).
    let _ = writeln!(std::io::stdout().lock(), "{said}");
    0
}
