//! The sandbox's rule for the tools that write in rho's own process (`write`, `edit`): the same
//! policy the kernel enforces on commands, checked before anything is touched, and the write
//! itself made without a race (see `rho_sandbox::SandboxPolicy::write_file`).

use std::path::Path;

use rho_agent::ToolError;

use rho_sandbox::Sandbox;

use crate::{ToolOptions, os_error};

/// Refuses a write to `abs` that the session's sandbox does not allow.
pub(crate) fn check_write(options: &ToolOptions, abs: &Path) -> Result<(), ToolError> {
    match &options.sandbox {
        Some(sandbox) => sandbox.policy().check_write(abs).map_err(|denied| ToolError::new(denied.to_string())),
        None => Ok(()),
    }
}

/// Writes `contents` to `abs`, its folders made as needed: through the sandbox's race-free
/// writer when there is one.
pub(crate) fn write_file(sandbox: Option<&Sandbox>, abs: &Path, contents: &[u8]) -> Result<(), ToolError> {
    let Some(sandbox) = sandbox else {
        if let Some(parent) = abs.parent() {
            std::fs::create_dir_all(parent).map_err(|e| ToolError::new(os_error::describe(&e, "mkdir", parent)))?;
        }
        return std::fs::write(abs, contents).map_err(|e| ToolError::new(os_error::describe(&e, "open", abs)));
    };
    sandbox.policy().write_file(abs, contents).map_err(|error| match error {
        rho_sandbox::WriteError::Denied(denied) => ToolError::new(denied.to_string()),
        rho_sandbox::WriteError::Io { op, path, source } => ToolError::new(os_error::describe(&source, op, &path)),
    })
}
