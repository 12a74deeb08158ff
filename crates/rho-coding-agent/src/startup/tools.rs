//! Which tools a session starts with, chosen as pi 1.6 chooses them: `read`, `bash`, `edit` and
//! `write`, unless the `defaultTools` setting says otherwise (plain names replace the defaults,
//! `+name` adds a tool, `-name` removes one); `--tools` with plain names replaces the selection,
//! with only `+name`/`-name` entries it changes it; `--no-builtin-tools` then drops the built-ins
//! and `--no-tools` everything. rho's own tools (`todo_write`, `ask`, `task`, `web_fetch`) are
//! named the same way: they are one setting away (`"defaultTools": ["+todo_write"]`,
//! `--tools +web_fetch`). An ACP
//! session also starts with `todo_write`: its todos are the editor's plan, a surface of ACP's own.
//! Plain `--tools` entries may be patterns (`*`); entries starting with `mcp__` choose the MCP
//! tools (all of them stay otherwise); `--exclude-tools` patterns keep tools of any source out.

use crate::agent_session::{ToolFilter, ToolSelection, tool_pattern_matches};
use crate::cli::{Cli, Mode};
use crate::config::Settings;

use super::StartupError;

/// The tools a session has when nothing chooses others (pi's).
const DEFAULT_TOOLS: &[&str] = &["read", "bash", "edit", "write"];

/// rho's own tools, which a selection may name beside the built-ins.
pub const OWN_TOOL_NAMES: &[&str] =
    &["todo_write", "ask", "task", "web_fetch", "web_search", "bash_output", "kill_bash", "tool_search"];

/// The session's tools from the command line and the settings, and what the command line keeps
/// out of the tools that come later (extensions, MCP servers).
pub fn select(cli: &Cli, settings: &Settings) -> Result<(ToolSelection, ToolFilter), StartupError> {
    let fail = |what: &str, e: String| StartupError::new(format!("Error: {what}: {e}"), 1);
    let trimmed = |entries: &[String]| -> Vec<String> {
        entries.iter().map(|n| n.trim()).filter(|n| !n.is_empty()).map(str::to_owned).collect()
    };
    let exclude = cli.exclude_tools.as_deref().map(trimmed).unwrap_or_default();
    let entries = cli.tools.as_deref().map(trimmed);
    // `--tools` entries naming MCP tools (`mcp__…`) choose among them; the others stay out of it.
    let mcp: Vec<String> = entries.iter().flatten().filter(|e| e.starts_with("mcp__")).cloned().collect();
    let filter = ToolFilter { exclude: exclude.clone(), mcp: (!mcp.is_empty()).then_some(mcp) };
    if cli.no_tools {
        return Ok((ToolSelection::None, filter));
    }
    let defaults = match settings.default_tools() {
        Some(entries) => default_tools(&entries).map_err(|e| fail("defaultTools", e))?,
        None => {
            let mut names: Vec<String> = DEFAULT_TOOLS.iter().map(|n| (*n).to_owned()).collect();
            if cli.mode == Some(Mode::Acp) {
                names.push("todo_write".to_owned());
            }
            names
        }
    };
    let mut names = match entries {
        // Only MCP tools named: an allowlist with no other tool in it.
        Some(entries) if !entries.is_empty() && entries.iter().all(|e| e.starts_with("mcp__")) => Vec::new(),
        Some(entries) => {
            let entries: Vec<String> = entries.into_iter().filter(|e| !e.starts_with("mcp__")).collect();
            let entries = expand_patterns(&entries);
            resolve(defaults, &entries).map_err(|e| fail("--tools", e))?
        }
        None => defaults,
    };
    names.retain(|name| {
        let known = rho_tools::builtin_tool_names().contains(&name.as_str()) || OWN_TOOL_NAMES.contains(&name.as_str());
        if !known {
            eprintln!("{}", unknown_tool_warning(name));
        }
        known
    });
    if cli.no_builtin_tools {
        names.retain(|name| !rho_tools::builtin_tool_names().contains(&name.as_str()));
    }
    names.retain(|name| !exclude.iter().any(|p| tool_pattern_matches(p, name)));
    Ok((ToolSelection::Names(names), filter))
}

/// Plain entries with `*` become the built-in and rho tools they match (a pattern that matches
/// none is kept, to be warned about as an unknown tool).
fn expand_patterns(entries: &[String]) -> Vec<String> {
    let known: Vec<&str> = rho_tools::builtin_tool_names().iter().chain(OWN_TOOL_NAMES).copied().collect();
    let mut out: Vec<String> = Vec::new();
    for entry in entries {
        if is_modifier(entry) || !entry.contains('*') {
            out.push(entry.clone());
            continue;
        }
        let matched: Vec<&str> = known.iter().copied().filter(|n| tool_pattern_matches(entry, n)).collect();
        if matched.is_empty() {
            out.push(entry.clone());
        }
        for name in matched {
            if !out.iter().any(|o| o == name) {
                out.push(name.to_owned());
            }
        }
    }
    out
}

fn is_modifier(entry: &str) -> bool {
    entry.starts_with('+') || entry.starts_with('-')
}

/// The `defaultTools` setting: its plain names (pi's four when it has none, or nothing when the
/// list is empty), then its `+name` and `-name` entries applied.
fn default_tools(entries: &[String]) -> Result<Vec<String>, String> {
    let plain: Vec<String> = entries.iter().filter(|e| !is_modifier(e)).cloned().collect();
    let base = if plain.is_empty() && !entries.is_empty() {
        DEFAULT_TOOLS.iter().map(|n| (*n).to_owned()).collect()
    } else {
        plain
    };
    let modifiers: Vec<String> = entries.iter().filter(|e| is_modifier(e)).cloned().collect();
    resolve(base, &modifiers)
}

/// `entries` applied to `base`: plain names replace it (an empty list empties it), `+name` and
/// `-name` entries add to and take from it; the two kinds cannot be mixed.
fn resolve(base: Vec<String>, entries: &[String]) -> Result<Vec<String>, String> {
    let modifiers = entries.iter().filter(|e| is_modifier(e)).count();
    if modifiers == 0 {
        return Ok(if entries.is_empty() { base } else { entries.to_vec() });
    }
    if modifiers < entries.len() {
        return Err("tool names cannot be mixed with +name or -name entries".into());
    }
    if let Some(pattern) = entries.iter().find(|e| e.contains('*')) {
        return Err(format!("+name and -name entries take exact tool names, not patterns: {pattern}"));
    }
    let mut tools = base;
    for entry in entries {
        let name = &entry[1..];
        let at = tools.iter().position(|t| t == name);
        match (entry.starts_with('+'), at) {
            (true, None) if !name.is_empty() => tools.push(name.to_owned()),
            (false, Some(i)) => {
                tools.remove(i);
            }
            _ => {}
        }
    }
    Ok(tools)
}

fn unknown_tool_warning(name: &str) -> String {
    let valid: Vec<&str> = rho_tools::builtin_tool_names().iter().chain(OWN_TOOL_NAMES).copied().collect();
    format!("Warning: Unknown tool \"{name}\". Valid tools: {}", valid.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn plain_names_replace_and_modifiers_change() {
        let base = names(DEFAULT_TOOLS);
        assert_eq!(resolve(base.clone(), &names(&["grep", "ls"])), Ok(names(&["grep", "ls"])));
        assert_eq!(default_tools(&[]), Ok(Vec::new()));
        assert_eq!(default_tools(&names(&["-write"])), Ok(names(&["read", "bash", "edit"])));
        assert_eq!(default_tools(&names(&["grep", "+ls"])), Ok(names(&["grep", "ls"])));
        assert_eq!(
            resolve(base.clone(), &names(&["+todo_write", "-write", "+read"])),
            Ok(names(&["read", "bash", "edit", "todo_write"]))
        );
        assert_eq!(
            resolve(base.clone(), &names(&["grep", "-write"])),
            Err("tool names cannot be mixed with +name or -name entries".into())
        );
        assert_eq!(
            resolve(base, &names(&["+mcp__*"])),
            Err("+name and -name entries take exact tool names, not patterns: +mcp__*".into())
        );
    }

    #[test]
    fn patterns_expand_to_the_tools_they_match() {
        assert_eq!(expand_patterns(&names(&["read", "gr*", "*_write"])), names(&["read", "grep", "todo_write"]));
        assert_eq!(expand_patterns(&names(&["zz*", "+ls"])), names(&["zz*", "+ls"]));
        let filter = ToolFilter { exclude: names(&["b*"]), mcp: Some(names(&["mcp__docs__*"])) };
        assert!(!filter.allows("bash", false));
        assert!(filter.allows("read", false));
        assert!(filter.allows("mcp__docs__search", true));
        assert!(!filter.allows("mcp__other__search", true));
        assert!(ToolFilter::default().allows("mcp__other__search", true));
    }
}
