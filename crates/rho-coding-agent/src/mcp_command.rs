//! `rho mcp …`, pi 1.6's `pi mcp`: add a server to `mcp.json` (the user's, or with `-l` the
//! project's `.pi/mcp.json`, the file pi reads too), remove one, or list every configured server
//! with its state after trying to start it, without a session. The other entries and keys of the
//! file are kept as they were. Sign-in commands rho does not have are refused with the reason.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::config::ConfigPaths;

const USAGE: &str = "Usage:
  rho mcp add <server> [-l] [--env KEY=VALUE]... [--cwd <dir>] [--exposure <mode>] [--description <text>] -- <command> [args...]
  rho mcp add <server> [-l] --url <url> [--header KEY=VALUE]... [--bearer-token-env-var <NAME>]
  rho mcp remove <server> [-l]
  rho mcp list [--json]";

/// The arguments after `mcp` when the command line is `rho mcp …`.
pub fn command(raw: &[String]) -> Option<&[String]> {
    match raw.split_first() {
        Some((first, rest)) if first == "mcp" => Some(rest),
        _ => None,
    }
}

/// Runs `rho mcp <args>`; the exit code.
pub async fn run(args: &[String], paths: &ConfigPaths) -> i32 {
    let result = match args.first().map(String::as_str) {
        Some("--help" | "-h" | "help") => Ok(USAGE.to_owned()),
        Some("add") => add(&args[1..], paths),
        Some("remove") => remove(&args[1..], paths),
        Some("list") => return list(args[1..].iter().any(|a| a == "--json"), paths).await,
        Some(verb @ ("login" | "logout")) => {
            Err(format!("rho has no MCP sign-in yet: `rho mcp {verb}` is not supported (set the server's headers)"))
        }
        Some(other) => Err(format!("unknown mcp command \"{other}\"\n\n{USAGE}")),
        None => Err(format!("name an mcp command\n\n{USAGE}")),
    };
    match result {
        Ok(text) => {
            say(&text);
            0
        }
        Err(message) => {
            eprintln!("Error: {message}");
            2
        }
    }
}

fn say(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}").and_then(|()| stdout.flush());
}

/// The file a command changes: the user's `mcp.json`, or with `-l`/`--local` the project's.
fn target(args: &[String], paths: &ConfigPaths) -> PathBuf {
    if args.iter().any(|a| a == "-l" || a == "--local") {
        paths.cwd.join(".pi").join("mcp.json")
    } else {
        paths.agent_dir.join("mcp.json")
    }
}

/// A server name as pi allows it: letters, digits, `_` and `-`.
fn check_name(name: Option<&String>) -> Result<&str, String> {
    match name {
        Some(name) if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') => {
            Ok(name)
        }
        Some(name) if !name.starts_with('-') => {
            Err(format!("invalid server name \"{name}\": use letters, digits, '_' and '-'"))
        }
        _ => Err(format!("name the server\n\n{USAGE}")),
    }
}

/// `KEY=VALUE` into an object.
fn pair(raw: &str, option: &str) -> Result<(String, Value), String> {
    match raw.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), Value::from(value))),
        _ => Err(format!("{option} takes KEY=VALUE, found \"{raw}\"")),
    }
}

/// The entry `rho mcp add` writes, from its options (everything after `--` is the command).
fn entry(options: &[String]) -> Result<Value, String> {
    let (options, command) = match options.iter().position(|a| a == "--") {
        Some(i) => (&options[..i], Some(&options[i + 1..])),
        None => (options, None),
    };
    let mut entry = Map::new();
    let mut env = Map::new();
    let mut headers = Map::new();
    let mut iter = options.iter();
    while let Some(option) = iter.next() {
        let mut value = || iter.next().cloned().ok_or_else(|| format!("{option} needs a value"));
        match option.as_str() {
            "-l" | "--local" => {}
            "--url" => {
                entry.insert("url".into(), value()?.into());
            }
            "--env" => {
                let (k, v) = pair(&value()?, "--env")?;
                env.insert(k, v);
            }
            "--header" => {
                let (k, v) = pair(&value()?, "--header")?;
                headers.insert(k, v);
            }
            "--cwd" => {
                entry.insert("cwd".into(), value()?.into());
            }
            "--bearer-token-env-var" => {
                headers.insert("Authorization".into(), format!("Bearer ${{{}}}", value()?).into());
            }
            "--exposure" => {
                let mode = value()?;
                if rho_mcp::Exposure::parse(&mode).is_none() {
                    return Err(format!(
                        "--exposure is one of {}, found \"{mode}\"",
                        rho_mcp::Exposure::NAMES.join(", ")
                    ));
                }
                entry.insert("exposure".into(), mode.into());
            }
            "--description" => {
                entry.insert("description".into(), value()?.into());
            }
            other if other.starts_with("--oauth") => {
                return Err(format!("{other}: rho has no MCP sign-in yet; set the server's headers instead"));
            }
            other => return Err(format!("unknown option \"{other}\"\n\n{USAGE}")),
        }
    }
    match (command, entry.contains_key("url")) {
        (Some([program, args @ ..]), false) => {
            entry.insert("command".into(), program.clone().into());
            if !args.is_empty() {
                entry.insert("args".into(), args.to_vec().into());
            }
            if !env.is_empty() {
                entry.insert("env".into(), env.into());
            }
        }
        (None, true) => {
            if !headers.is_empty() {
                entry.insert("headers".into(), headers.into());
            }
        }
        (Some(_), true) => return Err("give a command after -- or --url, not both".into()),
        _ => return Err(format!("give the server's command after --, or --url\n\n{USAGE}")),
    }
    // Stable key order: the transport first, as people write these files.
    let order = ["command", "args", "env", "cwd", "url", "headers", "exposure", "description"];
    let mut ordered = Map::new();
    for key in order {
        if let Some(value) = entry.remove(key) {
            ordered.insert(key.into(), value);
        }
    }
    Ok(Value::Object(ordered))
}

fn read_file(path: &Path) -> Result<Map<String, Value>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Map::new()),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(format!("{} does not hold a JSON object; it was not changed", path.display())),
            Err(e) => Err(format!("{} is not valid JSON ({e}); it was not changed", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn write_file(path: &Path, root: &Map<String, Value>) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut text = serde_json::to_string_pretty(root).map_err(|e| e.to_string())?;
    text.push('\n');
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn add(args: &[String], paths: &ConfigPaths) -> Result<String, String> {
    let name = check_name(args.first())?;
    let entry = entry(&args[1..])?;
    let path = target(args, paths);
    let mut root = read_file(&path)?;
    let servers = root.entry("mcpServers").or_insert_with(|| json!({}));
    let Some(servers) = servers.as_object_mut() else {
        return Err(format!("mcpServers in {} is not an object; it was not changed", path.display()));
    };
    let replaced = servers.insert(name.to_owned(), entry).is_some();
    write_file(&path, &root)?;
    let verb = if replaced { "Replaced" } else { "Added" };
    Ok(format!("{verb} MCP server \"{name}\" in {}", path.display()))
}

fn remove(args: &[String], paths: &ConfigPaths) -> Result<String, String> {
    let name = check_name(args.first())?;
    let path = target(args, paths);
    let mut root = read_file(&path)?;
    let removed = root.get_mut("mcpServers").and_then(Value::as_object_mut).and_then(|s| s.shift_remove(name));
    if removed.is_none() {
        return Err(format!("there is no MCP server \"{name}\" in {}", path.display()));
    }
    write_file(&path, &root)?;
    Ok(format!("Removed MCP server \"{name}\" from {}", path.display()))
}

/// `rho mcp list`: every configured server started, its state and tools printed; 1 when a file
/// or entry is invalid or an enabled server did not start.
async fn list(json_output: bool, paths: &ConfigPaths) -> i32 {
    let trusted = crate::config::trust::is_trusted(&paths.agent_dir, &paths.cwd);
    let files = rho_mcp::McpConfig::paths(&paths.cwd, &paths.agent_dir);
    let files = if trusted { &files[..] } else { &files[..1] };
    let (config, diagnostics) = rho_mcp::McpConfig::from_files(files, &paths.cwd, &|name| std::env::var(name).ok());
    let options = rho_mcp::McpOptions::new(&paths.cwd).with_log_dir(paths.agent_dir.join("logs"));
    let manager = rho_mcp::McpManager::start(config, options);
    manager.settled().await;
    let statuses = manager.status();
    let tools: Vec<String> = manager.tools().iter().map(|t| t.name().to_owned()).collect();
    manager.shutdown().await;
    let failed = statuses.iter().any(|s| matches!(s.state, rho_mcp::ServerState::Failed(_)));
    if json_output {
        let servers: Vec<Value> = statuses
            .iter()
            .map(|s| {
                let prefix = format!("mcp__{}__", rho_mcp::name::sanitize(&s.name));
                let mut entry = json!({"name": s.name, "state": s.state.as_str(),
                    "tools": tools.iter().filter(|t| t.starts_with(&prefix)).collect::<Vec<_>>()});
                if let rho_mcp::ServerState::Failed(error) = &s.state {
                    entry["error"] = error.clone().into();
                }
                entry
            })
            .collect();
        let problems: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        say(&json!({"servers": servers, "problems": problems}).to_string());
    } else {
        for d in &diagnostics {
            eprintln!("Warning: {d}");
        }
        if statuses.is_empty() {
            say("No MCP servers are configured.");
        }
        for s in &statuses {
            let line = match &s.state {
                rho_mcp::ServerState::Failed(error) => format!("{}: failed: {error}", s.name),
                state => format!("{}: {} ({} tools)", s.name, state.as_str(), s.tool_count),
            };
            say(&line);
        }
        if !trusted && files.len() < 4 {
            let project = rho_mcp::McpConfig::paths(&paths.cwd, &paths.agent_dir)[1..].iter().any(|p| p.exists());
            if project {
                say("(The project's own MCP files are not read: it is not trusted. `rho trust` allows them.)");
            }
        }
    }
    i32::from(failed || !diagnostics.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn entries_from_options() {
        assert_eq!(
            entry(&words(&["--env", "A=${B}", "--exposure", "direct", "--", "npx", "-y", "server"])).unwrap(),
            json!({"command": "npx", "args": ["-y", "server"], "env": {"A": "${B}"}, "exposure": "direct"})
        );
        assert_eq!(
            entry(&words(&["--url", "https://x/mcp", "--bearer-token-env-var", "TOKEN"])).unwrap(),
            json!({"url": "https://x/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}})
        );
        assert!(entry(&words(&["--exposure", "loud", "--", "x"])).unwrap_err().contains("--exposure is one of"));
        assert!(entry(&words(&["--url", "u", "--", "x"])).unwrap_err().contains("not both"));
        assert!(entry(&words(&["--env", "novalue", "--", "x"])).unwrap_err().contains("KEY=VALUE"));
        assert!(entry(&words(&["--oauth-client-id", "c", "--url", "u"])).unwrap_err().contains("no MCP sign-in"));
        assert!(check_name(Some(&"a b".to_owned())).is_err());
        assert_eq!(check_name(Some(&"docs_2-x".to_owned())), Ok("docs_2-x"));
    }
}
