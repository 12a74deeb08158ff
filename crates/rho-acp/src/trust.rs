//! Project trust through the editor. A session opened in a project that is not trusted and has
//! code of its own (its MCP servers, extensions, settings that run commands) starts none of it,
//! as in every mode. Before the session's first prompt the editor is asked, with
//! `session/request_permission` (the first moment the session exists for it), whether to trust
//! the project: "Trust" records the approval as `rho trust` does, so every session opened in the
//! project from then on starts its code; the session already open keeps running without it.
//! "Not now" asks again in the next session. A client that cannot answer counts as "Not now".

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest, ToolCallContent,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};

use super::permissions::Permissions;

const TRUST: &str = "trust-project";
const NOT_NOW: &str = "not-now";

/// What the session's first prompt asks: the project and what it would run.
#[derive(Debug, Clone)]
pub(super) struct Question {
    agent_dir: PathBuf,
    cwd: PathBuf,
    found: Vec<String>,
}

impl Question {
    /// The question for a session in `cwd`, or `None` when there is nothing to ask (trusted
    /// already, or nothing of the project's own would run).
    pub fn for_session(agent_dir: &Path, cwd: &Path, trusted: bool) -> Option<Self> {
        if trusted {
            return None;
        }
        let found = rho_coding_agent::config::trust::project_code(cwd);
        (!found.is_empty()).then(|| Self { agent_dir: agent_dir.to_path_buf(), cwd: cwd.to_path_buf(), found })
    }

    fn request(&self, permissions: &Permissions) -> Option<RequestPermissionRequest> {
        let text = format!(
            "{} has code of its own that rho would run:\n{}\n\nTrust this project? Sessions opened in it from now on start \
             this code (`rho untrust` withdraws it); this session goes on without it.",
            self.cwd.display(),
            self.found.iter().map(|item| format!("- {item}")).collect::<Vec<_>>().join("\n")
        );
        let fields = ToolCallUpdateFields::new()
            .title("Trust this project?")
            .kind(ToolKind::Other)
            .content(vec![ToolCallContent::from(text)]);
        let options = vec![
            PermissionOption::new(TRUST, "Trust this project", PermissionOptionKind::AllowAlways),
            PermissionOption::new(NOT_NOW, "Not now", PermissionOptionKind::RejectOnce),
        ];
        let session_id = permissions.session_id()?;
        Some(RequestPermissionRequest::new(session_id, ToolCallUpdate::new("trust-project", fields), options))
    }

    /// Asks the editor; a "Trust" is recorded. Errors are logged, never a reason to refuse the
    /// prompt.
    pub async fn ask(self, permissions: &Permissions) {
        let Some(request) = self.request(permissions) else { return };
        let answer = match permissions.send(request).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::info!("the editor did not answer the project trust question: {e}");
                return;
            }
        };
        let trusted =
            matches!(answer.outcome, RequestPermissionOutcome::Selected(selected) if &*selected.option_id.0 == TRUST);
        if trusted && let Err(e) = rho_coding_agent::config::trust::trust(&self.agent_dir, &self.cwd) {
            tracing::warn!("cannot record that {} is trusted: {e}", self.cwd.display());
        }
    }
}
