//! A problem found while loading the MCP configuration or running a server, returned as a value:
//! this crate never prints. Each one names the file and field (config problems) or the server
//! (runtime problems) it concerns, so the line a caller shows is actionable on its own.

use std::fmt;
use std::path::PathBuf;

/// One problem, reported once. `Display` gives the line to show a user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The config file concerned, if any.
    pub path: Option<PathBuf>,
    /// The JSON path of the offending value in that file (`mcpServers.github.args[1]`).
    pub field: Option<String>,
    /// The server concerned, if any.
    pub server: Option<String>,
    /// What went wrong and what follows from it.
    pub message: String,
}

impl Diagnostic {
    pub(crate) fn file(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self { path: Some(path.into()), field: None, server: None, message: message.into() }
    }

    pub(crate) fn field(
        path: impl Into<PathBuf>,
        server: &str,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            path: Some(path.into()),
            field: Some(field.into()),
            server: Some(server.to_owned()),
            message: message.into(),
        }
    }

    pub(crate) fn server(server: &str, message: impl Into<String>) -> Self {
        Self { path: None, field: None, server: Some(server.to_owned()), message: message.into() }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, &self.field, &self.server) {
            (Some(path), Some(field), _) => write!(f, "MCP config {}: {field}: {}", path.display(), self.message),
            (Some(path), None, _) => write!(f, "MCP config {}: {}", path.display(), self.message),
            (None, _, Some(server)) => write!(f, "MCP server \"{server}\": {}", self.message),
            (None, _, None) => write!(f, "MCP: {}", self.message),
        }
    }
}
