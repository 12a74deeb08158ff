//! The extensions' commands: `/name args` prompts that run an extension's handler instead of
//! reaching the model (in `get_commands` first, as pi lists them), and the messages an
//! extension keeps for the next prompt.

use std::sync::Arc;

use rho_extensions::ToHost;
use rho_rpc::{AvailableCommand, RpcSlashCommand, SlashCommandSource, SourceInfo};
use rho_types::AgentMessage;

use super::Extensions;

impl Extensions {
    /// The command a prompt names, with its arguments, when an extension registered it.
    pub(crate) fn command_in(&self, text: &str) -> Option<(String, String)> {
        let rest = text.strip_prefix('/')?;
        let (name, args) = match rest.find(' ') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        self.registrations().commands.iter().any(|c| c.name == name).then(|| (name.to_owned(), args.to_owned()))
    }

    /// Runs a command's handler to its end (failures are reported by the host).
    pub(crate) async fn run_command(self: &Arc<Self>, name: &str, args: &str) {
        let message = ToHost::Command { name: name.to_owned(), args: args.to_owned() };
        if let Err(e) = self.call(message, false).await {
            self.report(&format!("command:{name}"), "command", &e.to_string());
        }
    }

    /// Runs a shortcut's handler to its end.
    pub(crate) async fn run_shortcut(self: &Arc<Self>, shortcut: &str) {
        let message = ToHost::Shortcut { shortcut: shortcut.to_owned() };
        if let Err(e) = self.call(message, false).await {
            self.report(&format!("shortcut:{shortcut}"), "shortcut", &e.to_string());
        }
    }

    /// The commands as `get_commands` lists them.
    pub(crate) fn slash_commands(&self) -> Vec<RpcSlashCommand> {
        self.registrations()
            .commands
            .iter()
            .map(|c| RpcSlashCommand {
                name: c.name.clone(),
                description: c.description.clone(),
                source: SlashCommandSource::Extension,
                source_info: c.source_info.clone().and_then(|v| serde_json::from_value::<SourceInfo>(v).ok()),
                location: None,
                path: None,
            })
            .collect()
    }

    /// The commands as omp's `available_commands_update` lists them.
    pub(crate) fn available_commands(&self) -> Vec<AvailableCommand> {
        self.registrations()
            .commands
            .iter()
            .map(|c| AvailableCommand {
                name: c.name.clone(),
                aliases: None,
                description: c.description.clone(),
                input: None,
                subcommands: None,
                source: "extension".into(),
            })
            .collect()
    }

    /// `sendMessage(…, {deliverAs: "nextTurn"})`.
    pub(crate) fn keep_for_next_turn(&self, message: AgentMessage) {
        self.next_turn.lock().push(message);
    }
}
