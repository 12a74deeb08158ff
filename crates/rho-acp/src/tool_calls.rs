//! How a tool call looks in an editor: its title, its kind (the icon and grouping ACP clients
//! use), the files it touches, and the diffs of `edit` and `write`, from the tool's name and
//! arguments. Tools rho does not know (host, MCP, future ones) are `other`, titled by name.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{Diff, ToolCallContent, ToolCallLocation, ToolKind};
use rho_tools::params::{self, BashParams, FindParams, GrepParams, ReadParams, WriteParams};
use serde_json::{Map, Value};

/// The kind ACP clients show for a tool.
pub(super) fn kind(tool: &str) -> ToolKind {
    match tool {
        "read" => ToolKind::Read,
        "edit" | "write" => ToolKind::Edit,
        "bash" => ToolKind::Execute,
        "grep" | "find" | "ls" => ToolKind::Search,
        "fetch" | "web_fetch" | "web_search" => ToolKind::Fetch,
        "todo_write" | "task" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

fn text<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// A one-line title: what the call does, with its main argument.
pub(super) fn title(tool: &str, args: &Map<String, Value>) -> String {
    let path = text(args, "path");
    match tool {
        "read" => {
            let mut title = format!("Read {}", path.unwrap_or_default());
            let read = params::read::<ReadParams>(args);
            let (offset, limit) = read.map_or((None, None), |r| (params::whole(r.offset), params::whole(r.limit)));
            match (offset, limit) {
                (Some(from), Some(n)) if n > 0 => title.push_str(&format!(" (lines {from}-{})", from + n - 1)),
                (Some(from), None) => title.push_str(&format!(" (from line {from})")),
                _ => {}
            }
            title
        }
        "edit" => format!("Edit {}", path.unwrap_or_default()),
        "write" => format!("Write {}", path.unwrap_or_default()),
        "bash" => params::read::<BashParams>(args)
            .filter(|b| !b.command.is_empty())
            .map_or_else(|| "bash".to_owned(), |b| format!("`{}`", first_line(&b.command))),
        "grep" => match params::read::<GrepParams>(args).filter(|g| !g.pattern.is_empty()) {
            Some(GrepParams { pattern, path: Some(dir), .. }) if !dir.is_empty() => format!("grep \"{pattern}\" {dir}"),
            Some(GrepParams { pattern, .. }) => format!("grep \"{pattern}\""),
            None => "grep".to_owned(),
        },
        "find" => params::read::<FindParams>(args)
            .filter(|f| !f.pattern.is_empty())
            .map_or_else(|| "find".to_owned(), |f| format!("Find {}", f.pattern)),
        "ls" => format!("List {}", path.unwrap_or(".")),
        "todo_write" => "Update the todo list".to_owned(),
        "task" => text(args, "description").map_or_else(|| "task".to_owned(), |d| format!("Task: {}", first_line(d))),
        other => other.to_owned(),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default().trim()
}

/// `path` made absolute against `cwd` (ACP clients want absolute paths).
pub(super) fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let path = rho_coding_agent::config::expand_tilde(path, dirs::home_dir().as_deref());
    if path.is_absolute() { path } else { cwd.join(path) }
}

/// The files the call touches, so the editor can follow along.
pub(super) fn locations(cwd: &Path, tool: &str, args: &Map<String, Value>) -> Vec<ToolCallLocation> {
    let Some(path) = text(args, "path") else {
        return Vec::new();
    };
    match tool {
        "read" => {
            let offset = params::read::<ReadParams>(args).and_then(|r| params::whole(r.offset));
            let line = offset.and_then(|l| u32::try_from(l).ok());
            vec![ToolCallLocation::new(absolute(cwd, path)).line(line)]
        }
        "edit" | "write" | "grep" | "find" | "ls" => vec![ToolCallLocation::new(absolute(cwd, path))],
        _ => Vec::new(),
    }
}

/// The diffs of a finished `edit` (one per replacement: its old and new text) or `write` (the
/// new content; the old one is not kept).
pub(super) fn diffs(cwd: &Path, tool: &str, args: &Map<String, Value>) -> Vec<ToolCallContent> {
    let Some(path) = text(args, "path").map(|p| absolute(cwd, p)) else {
        return Vec::new();
    };
    match tool {
        "write" => {
            let content = params::read::<WriteParams>(args).map(|w| w.content).unwrap_or_default();
            vec![Diff::new(path, content).into()]
        }
        "edit" => params::edit_pairs(args)
            .into_iter()
            .map(|(old, new)| Diff::new(path.clone(), new).old_text(old).into())
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn kinds_and_titles_follow_the_tool() {
        assert_eq!(kind("read"), ToolKind::Read);
        assert_eq!(kind("edit"), ToolKind::Edit);
        assert_eq!(kind("bash"), ToolKind::Execute);
        assert_eq!(kind("grep"), ToolKind::Search);
        assert_eq!(kind("todo_write"), ToolKind::Think);
        assert_eq!(kind("mcp_thing"), ToolKind::Other);
        assert_eq!(title("read", &args(json!({"path": "a.rs", "offset": 3, "limit": 2}))), "Read a.rs (lines 3-4)");
        assert_eq!(title("bash", &args(json!({"command": "ls -la\necho"}))), "`ls -la`");
        assert_eq!(title("grep", &args(json!({"pattern": "fn", "path": "src"}))), "grep \"fn\" src");
        assert_eq!(title("mcp_thing", &Map::new()), "mcp_thing");
    }

    #[test]
    fn locations_and_diffs_use_absolute_paths() {
        let cwd = Path::new("/work");
        let read = locations(cwd, "read", &args(json!({"path": "src/a.rs", "offset": 7})));
        assert_eq!(read, vec![ToolCallLocation::new("/work/src/a.rs").line(7)]);
        assert!(locations(cwd, "bash", &args(json!({"command": "ls"}))).is_empty());
        let edit = args(json!({"path": "/abs/b.rs", "edits": [{"oldText": "a", "newText": "b"}]}));
        assert_eq!(
            diffs(cwd, "edit", &edit),
            vec![ToolCallContent::from(Diff::new("/abs/b.rs", "b").old_text("a".to_owned()))]
        );
        let single = args(json!({"path": "c.rs", "oldText": "x", "newText": "y"}));
        assert_eq!(diffs(cwd, "edit", &single).len(), 1);
        let write = diffs(cwd, "write", &args(json!({"path": "n.txt", "content": "hi"})));
        assert_eq!(write, vec![ToolCallContent::from(Diff::new("/work/n.txt", "hi"))]);
    }
}
