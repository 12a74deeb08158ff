//! The files a summarized stretch of conversation touched, so a summary can list them even when
//! the model forgets to: paths from `read`, `write` and `edit` tool calls, carried over from
//! one compaction (or branch summary) to the next through its `details`.

use std::collections::BTreeSet;

use rho_types::AgentMessage;
use serde_json::{Value, json};

/// Paths by what was done to them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOperations {
    pub read: BTreeSet<String>,
    pub written: BTreeSet<String>,
    pub edited: BTreeSet<String>,
}

impl FileOperations {
    /// Records the `path` of every `read`, `write` and `edit` call in an assistant message.
    pub fn add_message(&mut self, message: &AgentMessage) {
        let AgentMessage::Assistant(a) = message else {
            return;
        };
        for call in a.tool_calls() {
            let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            let set = match call.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            set.insert(path.to_owned());
        }
    }

    /// Takes over the lists of an earlier summary's `details` (`{readFiles, modifiedFiles}`):
    /// read files as read, modified files as edited. Other shapes are ignored.
    pub fn add_details(&mut self, details: &Value) {
        let strings = |key: &str| {
            details
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        self.read.extend(strings("readFiles"));
        self.edited.extend(strings("modifiedFiles"));
    }

    /// Files only read (never written or edited), sorted.
    pub fn read_files(&self) -> Vec<String> {
        self.read.iter().filter(|f| !self.written.contains(*f) && !self.edited.contains(*f)).cloned().collect()
    }

    /// Files written or edited, sorted.
    pub fn modified_files(&self) -> Vec<String> {
        self.written.union(&self.edited).cloned().collect()
    }

    /// `{readFiles, modifiedFiles}`, the `details` of a compaction or branch summary.
    pub fn details(&self) -> Value {
        json!({"readFiles": self.read_files(), "modifiedFiles": self.modified_files()})
    }
}

/// The blocks appended to a summary: `\n\n<read-files>\n…\n</read-files>` and/or
/// `\n\n<modified-files>\n…\n</modified-files>`, each only when its list is not empty.
pub fn format_file_operations(read_files: &[String], modified_files: &[String]) -> String {
    let mut sections = Vec::new();
    if !read_files.is_empty() {
        sections.push(format!("<read-files>\n{}\n</read-files>", read_files.join("\n")));
    }
    if !modified_files.is_empty() {
        sections.push(format!("<modified-files>\n{}\n</modified-files>", modified_files.join("\n")));
    }
    if sections.is_empty() { String::new() } else { format!("\n\n{}", sections.join("\n\n")) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::test_support::*;
    use serde_json::json;

    #[test]
    fn read_write_edit_calls_are_recorded_and_classified() {
        let mut ops = FileOperations::default();
        ops.add_message(&assistant_calls(vec![
            tool_call("read", json!({"path": "src/b.rs"})),
            tool_call("read", json!({"path": "src/a.rs"})),
            tool_call("edit", json!({"path": "src/a.rs", "oldText": "x", "newText": "y"})),
            tool_call("write", json!({"path": "new.txt", "content": ""})),
            tool_call("bash", json!({"command": "cat other.rs", "path": "ignored"})),
            tool_call("read", json!({"path": 7})),
        ]));
        ops.add_message(&user("read path=src/c.rs"));
        assert_eq!(ops.read_files(), ["src/b.rs"]);
        assert_eq!(ops.modified_files(), ["new.txt", "src/a.rs"]);
        assert_eq!(ops.details(), json!({"readFiles": ["src/b.rs"], "modifiedFiles": ["new.txt", "src/a.rs"]}));
    }

    #[test]
    fn details_of_an_earlier_summary_carry_over() {
        let mut ops = FileOperations::default();
        ops.add_details(&json!({"readFiles": ["z.md", "a.md"], "modifiedFiles": ["m.rs"]}));
        ops.add_details(&json!({"something": "else"}));
        ops.add_details(&json!("not an object"));
        ops.add_message(&assistant_calls(vec![tool_call("write", json!({"path": "a.md"}))]));
        assert_eq!(ops.read_files(), ["z.md"]);
        assert_eq!(ops.modified_files(), ["a.md", "m.rs"]);
    }

    #[test]
    fn blocks_only_for_non_empty_lists() {
        let r = vec!["a".to_owned(), "b".to_owned()];
        let m = vec!["c".to_owned()];
        assert_eq!(format_file_operations(&[], &[]), "");
        assert_eq!(format_file_operations(&r, &[]), "\n\n<read-files>\na\nb\n</read-files>");
        assert_eq!(format_file_operations(&[], &m), "\n\n<modified-files>\nc\n</modified-files>");
        assert_eq!(
            format_file_operations(&r, &m),
            "\n\n<read-files>\na\nb\n</read-files>\n\n<modified-files>\nc\n</modified-files>"
        );
    }
}
