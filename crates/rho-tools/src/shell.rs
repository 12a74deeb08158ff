//! Which shell runs commands and with what environment: settings `shellPath` when set (it must
//! exist), else `/bin/bash`, else `bash` on `PATH`, else `sh`; always invoked as
//! `<shell> -c <command>`. `<agentDir>/bin` goes first on `PATH` so helper binaries rho installs
//! there are found.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::ToolOptions;

/// The shell to run, or the error text when the configured one is missing.
pub fn resolve_shell(options: &ToolOptions) -> Result<PathBuf, String> {
    if let Some(custom) = &options.shell_path {
        if custom.exists() {
            return Ok(custom.clone());
        }
        let settings =
            options.settings_path.as_ref().map_or_else(|| "your settings file".to_owned(), |p| p.display().to_string());
        return Err(format!(
            "Custom shell path not found: {}\nSet shellPath in {settings} to a shell that exists, or remove it to use bash.",
            custom.display()
        ));
    }
    let bin_bash = Path::new("/bin/bash");
    if bin_bash.exists() {
        return Ok(bin_bash.to_path_buf());
    }
    Ok(find_on_path("bash").unwrap_or_else(|| PathBuf::from("sh")))
}

/// The first executable file called `name` in `PATH`.
fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| candidate.is_file())
}

/// The `PATH` for the shell: `<agent_dir>/bin` first when there is an agent directory.
pub fn shell_path_env(options: &ToolOptions) -> Option<OsString> {
    let bin = options.agent_dir.as_ref()?.join("bin");
    let current = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin];
    dirs.extend(std::env::split_paths(&current));
    std::env::join_paths(dirs).ok()
}

/// The command as run: the settings' prefix line, then the command.
pub fn with_prefix(options: &ToolOptions, command: &str) -> String {
    match &options.shell_command_prefix {
        Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
        _ => command.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_custom_shell_is_an_error_naming_it() {
        let options = ToolOptions {
            shell_path: Some(PathBuf::from("/no/such/shell")),
            settings_path: Some(PathBuf::from("/home/u/.rho/agent/settings.json")),
            ..ToolOptions::new("/tmp")
        };
        let err = resolve_shell(&options).unwrap_err();
        let mut lines = err.lines();
        assert_eq!(lines.next(), Some("Custom shell path not found: /no/such/shell"));
        assert!(lines.next().unwrap().contains("/home/u/.rho/agent/settings.json"));
    }

    #[test]
    fn default_shell_is_bash_when_present() {
        let shell = resolve_shell(&ToolOptions::new("/tmp")).unwrap();
        if Path::new("/bin/bash").exists() {
            assert_eq!(shell, PathBuf::from("/bin/bash"));
        }
    }

    #[test]
    fn prefix_goes_on_its_own_line() {
        let options = ToolOptions { shell_command_prefix: Some("set -e".to_owned()), ..ToolOptions::new("/tmp") };
        assert_eq!(with_prefix(&options, "ls"), "set -e\nls");
        assert_eq!(with_prefix(&ToolOptions::new("/tmp"), "ls"), "ls");
    }

    #[test]
    fn agent_bin_goes_first_on_path() {
        let options = ToolOptions { agent_dir: Some(PathBuf::from("/agent")), ..ToolOptions::new("/tmp") };
        let path = shell_path_env(&options).unwrap();
        let first = std::env::split_paths(&path).next().unwrap();
        assert_eq!(first, PathBuf::from("/agent/bin"));
        assert!(shell_path_env(&ToolOptions::new("/tmp")).is_none());
    }
}
