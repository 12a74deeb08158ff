//! The `edit` tool: pi 0.73's multi-edit form. One call names a file and a list of `{oldText,
//! newText}` replacements ([`crate::edit_args`] also takes the older single form and `edits`
//! sent as a JSON string). Every `oldText` is matched against the original file, exactly after
//! line-ending normalization, else fuzzily (NFKC, trailing whitespace, smart quotes, dashes,
//! special spaces; see [`crate::edit_match`]); matches must be unique and must not overlap
//! ([`crate::edit_apply`]). Only the matched regions change, so a BOM, CRLF line endings and every
//! untouched byte stay as they were. The result carries the compact diff and the first changed
//! line; the write target is the resolved path with symlinks followed
//! ([`crate::path::write_identity`]), so parallel edits of one file run one after another. With a [`crate::FileAccess`], an existing
//! text file is read and written through it (an editor's buffer); the matching is the same.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use nix::unistd::{AccessFlags, access};
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::{Value, json};

use crate::ToolOptions;
use crate::abort::{abortable, blocking};
use crate::args::{self, Args};
use crate::checkpoints::Checkpoints;
use crate::edit_apply::{EditError, Replacement, apply_edits};
use crate::edit_args::{EditArgs, advertised_schema, prepare};
use crate::edit_diff::{generate_diff_string, unified_patch};
use crate::edit_match::normalize_line_endings;
use crate::file_access::is_text_file;
use crate::os_error;
use crate::path::{resolve_to_cwd, write_identity};

const DESCRIPTION: &str = "Edit one file by exact text replacement. Each edits[].oldText must match a unique region of the file as it was before this call (all edits are matched against the original, not one after another), whitespace and line breaks included, and no two edits may overlap. When two changes touch the same block or nearby lines, merge them into one edit. Keep each oldText small; do not include large unchanged regions to connect distant changes.";

const BOM: char = '\u{FEFF}';

pub struct EditTool {
    options: ToolOptions,
    schema: Value,
}

impl EditTool {
    pub fn new(options: ToolOptions) -> Self {
        Self { options, schema: advertised_schema() }
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

    /// The older single form and `edits` as a JSON string, turned into the multi-edit form.
    fn prepare_arguments(&self, args: Args) -> Args {
        prepare(args)
    }

    fn write_target(&self, args: &Args) -> Option<PathBuf> {
        let path = args::opt_string(args, "path")?;
        Some(write_identity(&resolve_to_cwd(&path, &self.options.cwd)))
    }

    fn execute<'a>(&'a self, args: Args, ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let EditArgs { path, edits } = EditArgs::parse(&args)?;
            let abs = resolve_to_cwd(&path, &self.options.cwd);
            crate::sandbox_check::check_write(&self.options, &abs)?;
            let request = EditRequest { path, edits };
            let sandbox = self.options.sandbox.clone();
            let checkpoints = self.options.checkpoints.clone();
            let Some(files) = self.options.file_access.clone() else {
                return blocking(&ctx.cancel, move || request.run(&abs, sandbox.as_deref(), checkpoints.as_deref()))
                    .await;
            };
            let probe = abs.clone();
            if !blocking(&ctx.cancel, move || Ok(is_text_file(&probe))).await? {
                return blocking(&ctx.cancel, move || request.run(&abs, sandbox.as_deref(), checkpoints.as_deref()))
                    .await;
            }
            abortable(&ctx.cancel, async move {
                let describe = |e: std::io::Error| ToolError::new(os_error::describe(&e, "open", &abs));
                let raw = files.read_text(abs.clone()).await.map_err(describe)?;
                let (output, result) = request.apply(&raw)?;
                let before = checkpoints.as_ref().map(|c| c.keep(&abs, Some(raw.as_bytes())));
                drop(raw);
                let written = before.as_ref().map(|_| output.clone());
                files.write_text(abs.clone(), output).await.map_err(describe)?;
                if let (Some(checkpoints), Some(before), Some(written)) = (checkpoints, before, written) {
                    checkpoints.wrote(&abs, before, written.as_bytes());
                }
                Ok(result)
            })
            .await
        })
    }
}

struct EditRequest {
    path: String,
    edits: Vec<Replacement>,
}

impl EditRequest {
    fn run(
        self,
        abs: &Path,
        sandbox: Option<&rho_sandbox::Sandbox>,
        checkpoints: Option<&dyn Checkpoints>,
    ) -> Result<AgentToolResult, ToolError> {
        access(abs, AccessFlags::R_OK | AccessFlags::W_OK)
            .map_err(|errno| EditError::Access { path: self.path.clone(), code: format!("{errno:?}") })?;
        if std::fs::metadata(abs).is_ok_and(|meta| meta.is_dir()) {
            return Err(ToolError::new(os_error::EISDIR_READ));
        }
        let raw = std::fs::read(abs).map_err(|e| ToolError::new(os_error::describe(&e, "open", abs)))?;
        let raw = String::from_utf8(raw).map_err(|_| EditError::NotUtf8 { path: self.path.clone() })?;
        let (output, result) = self.apply(&raw)?;
        let before = checkpoints.map(|c| c.keep(abs, Some(raw.as_bytes())));
        drop(raw);
        crate::sandbox_check::write_file(sandbox, abs, output.as_bytes())?;
        if let (Some(checkpoints), Some(before)) = (checkpoints, before) {
            checkpoints.wrote(abs, before, output.as_bytes());
        }
        Ok(result)
    }

    /// The file's new text and the tool's result, from its current text.
    fn apply(&self, raw: &str) -> Result<(String, AgentToolResult), ToolError> {
        let (bom, body) = match raw.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, raw),
        };

        let new_body = apply_edits(body, &self.edits, &self.path)?;

        let (old, new) = (normalize_line_endings(body), normalize_line_endings(&new_body));
        let diff = generate_diff_string(&old, &new, 4);
        let mut details = json!({"diff": diff.diff});
        if let Some(line) = diff.first_changed_line {
            details["firstChangedLine"] = json!(line);
        }
        // pi 1.6's standard unified patch of the edit, beside the display diff.
        let patch = unified_patch(&old, &new, 4, &self.path);
        details["patch"] = json!(patch);
        drop((old, new));
        let mut output = new_body;
        if bom {
            output.insert(0, BOM);
        }
        let text = format!("Successfully replaced {} block(s) in {}.", self.edits.len(), self.path);
        Ok((output, AgentToolResult::text(text).with_details(details)))
    }
}
