//! The `write` tool: creates or overwrites a file with the given content as UTF-8, creating
//! missing parent directories, and says `Successfully wrote to <path>` (pi 1.6's words; pi 0.73
//! also gave a size). Its write target is the resolved path with symlinks
//! followed, so the agent loop never runs two writes to one file at once, however it is named. With a
//! [`crate::FileAccess`] the content goes through it (the parent directories are still made here).

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use rho_agent::{Tool, ToolContext, ToolError};
use rho_types::AgentToolResult;
use serde_json::Value;

use crate::ToolOptions;
use crate::abort::{abortable, blocking};
use crate::args::Args;
use crate::os_error;
use crate::params::{self, Parameters, WriteParams};
use crate::path::{resolve_to_cwd, write_identity};

const DESCRIPTION: &str = "Write content to a file at the given path. Creates the file if it does not exist and overwrites it if it does; missing parent directories are created as needed.";

pub struct WriteTool {
    options: ToolOptions,
}

impl WriteTool {
    pub fn new(options: ToolOptions) -> Self {
        Self { options }
    }
}

/// Creates `abs`'s parent directories and writes `content` to it.
impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        WriteParams::schema()
    }

    fn write_target(&self, args: &Args) -> Option<PathBuf> {
        // The file alone orders the writes; the content is not needed for that.
        let path = crate::args::opt_string(args, "path")?;
        Some(write_identity(&resolve_to_cwd(&path, &self.options.cwd)))
    }

    fn execute<'a>(&'a self, args: Args, ctx: ToolContext) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let WriteParams { path, content } = params::parse(&args)?;
            if let Some(target) = self.options.host_uris.as_ref().and_then(|h| h.target(&path))
                && let Some(host) = self.options.host_uris.clone()
            {
                if !target.writable {
                    return Err(ToolError::new(crate::host_uri::read_only(&target.scheme)));
                }
                host.write(target.url, content, ctx.cancel.clone()).await.map_err(ToolError::new)?;
                return Ok(AgentToolResult::text(format!("Successfully wrote to {path}")));
            }
            let abs = resolve_to_cwd(&path, &self.options.cwd);
            crate::sandbox_check::check_write(&self.options, &abs)?;
            match self.options.file_access.clone() {
                Some(files) => {
                    let parent = abs.parent().map(Path::to_path_buf);
                    if let Some(parent) = parent {
                        blocking(&ctx.cancel, move || {
                            std::fs::create_dir_all(&parent)
                                .map_err(|e| ToolError::new(os_error::describe(&e, "mkdir", &parent)))
                        })
                        .await?;
                    }
                    let checkpoints = self.options.checkpoints.clone();
                    abortable(&ctx.cancel, async move {
                        let kept = checkpoints.as_ref().map(|c| (c.clone(), c.keep(&abs, None), content.clone()));
                        files
                            .write_text(abs.clone(), content)
                            .await
                            .map_err(|e| ToolError::new(os_error::describe(&e, "open", &abs)))?;
                        if let Some((checkpoints, before, written)) = kept {
                            checkpoints.wrote(&abs, before, written.as_bytes());
                        }
                        Ok(())
                    })
                    .await?;
                }
                None => {
                    let sandbox = self.options.sandbox.clone();
                    let checkpoints = self.options.checkpoints.clone();
                    blocking(&ctx.cancel, move || {
                        let before = checkpoints.as_ref().map(|c| c.keep(&abs, None));
                        crate::sandbox_check::write_file(sandbox.as_deref(), &abs, content.as_bytes())?;
                        if let (Some(checkpoints), Some(before)) = (checkpoints, before) {
                            checkpoints.wrote(&abs, before, content.as_bytes());
                        }
                        Ok(())
                    })
                    .await?
                }
            }
            Ok(AgentToolResult::text(format!("Successfully wrote to {path}")))
        })
    }
}
