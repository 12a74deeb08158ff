//! `/rewind` typed in the editor (ACP has no method of its own for it): back to before the
//! session's last prompt, restoring the files rho changed since and the conversation (`/rewind
//! code` keeps the conversation, `/rewind conversation` the files). Files changed outside rho
//! since are left alone and named. The answer is an agent message saying what was done.

use agent_client_protocol::v1::schema::{ContentChunk, SessionUpdate};
use rho_coding_agent::agent_session::RewindOptions;
use rho_rpc::{AvailableCommand, CommandInput};

use super::sessions::AcpSession;

/// The command as the editor lists it.
pub(super) fn listed() -> AvailableCommand {
    AvailableCommand {
        name: "rewind".into(),
        aliases: None,
        description: Some("Restore the files and conversation to before the last prompt".into()),
        input: Some(CommandInput { hint: "[code|conversation]".into() }),
        subcommands: None,
        source: "builtin".into(),
    }
}

/// The options of a prompt that is `/rewind`, `/rewind code` or `/rewind conversation`.
pub(super) fn parse(text: &str) -> Option<Result<RewindOptions, String>> {
    let rest = text.trim().strip_prefix("/rewind")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let (code, conversation) = match rest.trim() {
        "" => (true, true),
        "code" => (true, false),
        "conversation" => (false, true),
        other => return Some(Err(format!("Unknown /rewind argument: {other} (code or conversation)"))),
    };
    Some(Ok(RewindOptions { code, conversation, force: false, dry_run: false }))
}

/// Runs it and says what was done.
pub(super) async fn run(acp: &AcpSession, options: Result<RewindOptions, String>) {
    let text = match options {
        Ok(options) => match acp.session.branch_messages().last() {
            Some(last) => match acp.session.rewind(last.entry_id.as_ref(), options).await {
                Ok(rewound) => describe(&rewound.files, options),
                Err(e) => format!("Rewind failed: {e}"),
            },
            None => "Nothing to rewind: no prompt yet.".to_owned(),
        },
        Err(message) => message,
    };
    acp.updates.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(text.into())));
}

fn describe(files: &rho_coding_agent::checkpoints::RewindFiles, options: RewindOptions) -> String {
    let mut lines = Vec::new();
    if options.conversation {
        lines.push("Rewound the conversation to before the last prompt.".to_owned());
    }
    if options.code {
        lines.push(match files.restored.len() {
            0 => "No files to restore.".to_owned(),
            _ => format!("Restored: {}", files.restored.join(", ")),
        });
        if !files.changed_outside.is_empty() {
            lines.push(format!("Left as they are (changed outside rho since): {}", files.changed_outside.join(", ")));
        }
        if !files.not_kept.is_empty() {
            lines.push(format!("Not restored (not kept): {}", files.not_kept.join(", ")));
        }
        for failed in &files.failed {
            lines.push(format!("Could not restore {}: {}", failed.path, failed.error));
        }
    }
    lines.join("\n")
}
