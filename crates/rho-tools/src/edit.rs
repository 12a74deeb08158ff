//! The `edit` tool: replaces one unique occurrence of `oldText` with `newText`. The match is
//! exact after line-ending normalization, else fuzzy (NFKC, trailing whitespace, smart quotes,
//! dashes, special spaces; see [`crate::edit_match`]); either way only the matched region of the
//! original changes, so a BOM, CRLF line endings and every untouched byte stay as they were.
//! Uniqueness is judged on the fuzzy-normalized text, like the reference. The result carries the
//! compact diff and the first changed line; the write target is the resolved path with symlinks
//! followed ([`crate::path::write_identity`]).

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use rho_agent::{AgentToolResult, Tool, ToolContext, ToolError};
use serde_json::{Value, json};

use crate::ToolOptions;
use crate::abort::blocking;
use crate::args::{self, Args};
use crate::edit_diff::generate_diff_string;
use crate::edit_match::{Mode, View, count_occurrences, normalize_fuzzy, normalize_line_endings};
use crate::os_error;
use crate::path::{resolve_to_cwd, write_identity};

const DESCRIPTION: &str = "Edit a file by replacing one exact piece of text. oldText must match the file exactly, including whitespace, indentation and line breaks, and must occur only once (add surrounding lines to make it unique); it is replaced by newText. Use this for precise, targeted changes.";

const BOM: char = '\u{FEFF}';

pub struct EditTool {
    options: ToolOptions,
    schema: Value,
}

impl EditTool {
    pub fn new(options: ToolOptions) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
                "oldText": {"type": "string", "description": "Exact text to find and replace (must match exactly)"},
                "newText": {"type": "string", "description": "New text to replace the old text with"}
            },
            "required": ["path", "oldText", "newText"]
        });
        Self { options, schema }
    }
}

impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn write_target(&self, args: &Args) -> Option<PathBuf> {
        let path = args::opt_string(args, "path")?;
        Some(write_identity(&resolve_to_cwd(&path, &self.options.cwd)))
    }

    fn execute<'a>(&'a self, args: Args, ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let request = EditRequest {
                path: args::string(&args, "path")?,
                old_text: args::string(&args, "oldText")?,
                new_text: args::string(&args, "newText")?,
            };
            let abs = resolve_to_cwd(&request.path, &self.options.cwd);
            blocking(&ctx.cancel, move || request.run(&abs)).await
        })
    }
}

struct EditRequest {
    path: String,
    old_text: String,
    new_text: String,
}

/// The file's line ending: CRLF when its first `\n` is preceded by `\r`.
fn uses_crlf(text: &str) -> bool {
    match text.find('\n') {
        Some(lf) => lf > 0 && text.as_bytes()[lf - 1] == b'\r',
        None => false,
    }
}

impl EditRequest {
    fn run(self, abs: &Path) -> Result<AgentToolResult, ToolError> {
        let not_found = || ToolError::new(format!("File not found: {}", self.path));
        let meta = std::fs::metadata(abs).map_err(|_| not_found())?;
        if meta.is_dir() {
            return Err(ToolError::new(os_error::EISDIR_READ));
        }
        std::fs::OpenOptions::new().read(true).write(true).open(abs).map_err(|_| not_found())?;
        let raw = std::fs::read(abs).map_err(|e| ToolError::new(os_error::describe(&e, "open", abs)))?;
        let raw = String::from_utf8(raw)
            .map_err(|_| ToolError::new(format!("Cannot edit {}: the file is not valid UTF-8 text.", self.path)))?;
        let (bom, body) = match raw.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, raw.as_str()),
        };

        let new_body = self.replace(body)?;
        let base = normalize_line_endings(body);
        let updated = normalize_line_endings(&new_body);
        if base == updated {
            return Err(ToolError::new(format!(
                "No changes made to {}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.",
                self.path
            )));
        }

        let mut output = String::with_capacity(new_body.len() + 3);
        if bom {
            output.push(BOM);
        }
        output.push_str(&new_body);
        std::fs::write(abs, output).map_err(|e| ToolError::new(os_error::describe(&e, "open", abs)))?;

        let diff = generate_diff_string(&base, &updated, 4);
        let mut details = json!({"diff": diff.diff});
        if let Some(line) = diff.first_changed_line {
            details["firstChangedLine"] = json!(line);
        }
        Ok(AgentToolResult::text(format!("Successfully replaced text in {}.", self.path)).with_details(details))
    }

    /// The file body with the one match of `old_text` replaced.
    fn replace(&self, body: &str) -> Result<String, ToolError> {
        let old_lf = normalize_line_endings(&self.old_text);
        let exact = View::build(body, Mode::LineEndings);
        let fuzzy = View::build(body, Mode::Fuzzy);
        let fuzzy_old = normalize_fuzzy(&old_lf);

        let splice = if let Some(at) = exact.text.find(&old_lf) {
            exact.to_original(at..at + old_lf.len())
        } else if let Some(at) = fuzzy.text.find(&fuzzy_old) {
            fuzzy.to_original(at..at + fuzzy_old.len())
        } else {
            return Err(ToolError::new(format!(
                "Could not find the exact text in {}. The old text must match exactly including all whitespace and newlines.",
                self.path
            )));
        };

        let occurrences = count_occurrences(&fuzzy.text, &fuzzy_old);
        if occurrences > 1 {
            return Err(ToolError::new(format!(
                "Found {occurrences} occurrences of the text in {}. The text must be unique. Please provide more context to make it unique.",
                self.path
            )));
        }

        let mut replacement = splice.prefix;
        replacement.push_str(&normalize_line_endings(&self.new_text));
        replacement.push_str(&splice.suffix);
        if uses_crlf(body) {
            replacement = replacement.replace('\n', "\r\n");
        }
        let mut out = String::with_capacity(body.len() + replacement.len());
        out.push_str(&body[..splice.orig.start]);
        out.push_str(&replacement);
        out.push_str(&body[splice.orig.end..]);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_crlf_from_the_first_line_break() {
        assert!(uses_crlf("a\r\nb\n"));
        assert!(!uses_crlf("a\nb\r\n"));
        assert!(!uses_crlf("no breaks"));
        assert!(!uses_crlf("\n"));
    }
}
