//! The sandbox's rule for the tools that write in rho's own process (`write`, `edit`): the same
//! policy the kernel enforces on commands, checked before anything is touched.

use std::path::Path;

use rho_agent::ToolError;

use crate::ToolOptions;

/// Refuses a write to `abs` that the session's sandbox does not allow.
pub(crate) fn check_write(options: &ToolOptions, abs: &Path) -> Result<(), ToolError> {
    match &options.sandbox {
        Some(sandbox) => sandbox.policy().check_write(abs).map_err(|denied| ToolError::new(denied.to_string())),
        None => Ok(()),
    }
}
