//! The commands omp 18 adds to the protocol, answered as omp answers them: its slash-command
//! list, paged messages, fast mode, sub-agent subscription and transcripts, login providers
//! and handoff.

use rho_ai::oauth::{OAuthCredentials, providers, store};
use rho_rpc::{
    AvailableCommandsData, FastModeData, LoginProvider, LoginProvidersData, NotifyType, RpcCommand,
    SubagentSubscriptionData, SubagentsData,
};

use super::dispatch::{Dispatcher, Reply, data, js_text};
use super::messages_page::{Snapshot, page};
use super::subagents::Subscription;
use crate::modes::frames::wire_messages;

impl Dispatcher {
    pub(super) async fn omp_command(&self, command: RpcCommand) -> Reply {
        let s = &self.session;
        match command {
            RpcCommand::GetAvailableCommands => data(&AvailableCommandsData { commands: s.available_commands() }),
            RpcCommand::GetMessagesPage { cursor, limit } => {
                let messages = wire_messages(self.out.limits().updates, s.messages());
                let session_id = s.session_id();
                let leaf_id = s.leaf_id();
                let snapshot = Snapshot {
                    messages: &messages,
                    session_id: &session_id,
                    leaf_id: leaf_id.as_deref(),
                    busy: s.is_streaming() || s.is_compacting(),
                };
                match page(&snapshot, cursor.as_deref(), limit.as_ref()) {
                    Ok(page) => data(&page),
                    Err(e) => match e.code {
                        Some(code) => Reply::ErrWithCode(e.message.into(), code),
                        None => Reply::Err(e.message.into()),
                    },
                }
            }
            RpcCommand::SetFastMode { enabled } => {
                // rho asks no provider for a priority service tier: no model has one to toggle.
                s.emit_notice(
                    NotifyType::Info,
                    "The current model has no service-tier control for /fast to toggle.",
                    Some("priority"),
                );
                if enabled {
                    Reply::Err("Fast mode is unavailable for the current model.".into())
                } else {
                    data(&FastModeData { enabled: false, active: false })
                }
            }
            RpcCommand::SetSubagentSubscription { level } => match level.as_str().and_then(Subscription::parse) {
                Some(subscription) => {
                    self.subagents.set_subscription(subscription);
                    data(&SubagentSubscriptionData { level: subscription.as_str().to_owned() })
                }
                None => Reply::Err(format!("Invalid subagent subscription level: {}", js_text(&level))),
            },
            RpcCommand::GetSubagents => data(&SubagentsData { subagents: self.subagents.snapshots() }),
            RpcCommand::GetSubagentMessages { subagent_id, session_file, from_byte } => {
                match self.subagents.messages(subagent_id.as_deref(), session_file.as_deref(), from_byte.as_ref()) {
                    Ok(found) => data(&found),
                    Err(e) => Reply::Err(e),
                }
            }
            RpcCommand::GetLoginProviders => data(&LoginProvidersData { providers: login_providers(s) }),
            RpcCommand::Handoff { custom_instructions } => match s.handoff(custom_instructions.as_deref()).await {
                Ok(()) => Reply::Data(serde_json::json!({})),
                Err(e) => Reply::Err(e.to_string()),
            },
            other => Reply::Err(format!("Unknown command: {}", other.name())),
        }
    }
}

/// pi's subscription logins as omp lists them: `available` when rho can use the login (`rho
/// login` makes it), `authenticated` when `auth.json` holds one.
fn login_providers(session: &crate::AgentSession) -> Vec<LoginProvider> {
    let stored = store::read(&session.paths().auth_file()).unwrap_or_default();
    providers::PROVIDERS
        .iter()
        .map(|p| LoginProvider {
            id: p.id.to_owned(),
            name: p.name.to_owned(),
            available: p.unusable.is_none(),
            authenticated: stored.get(p.id).and_then(OAuthCredentials::from_entry).is_some(),
        })
        .collect()
}
