//! omp's built-in slash commands over RPC: a `prompt` whose text starts with one of them
//! (`/model gpt-5`, `/compact keep the API notes`) runs it instead of reaching the model. What it
//! says comes as `{type: "command_output", text}` frames, and the prompt is answered with
//! `{agentInvoked: false, disposition: "handled"}`; omp's `{type: "prompt_result", id,
//! agentInvoked: false}` says when the command is over; a changed title or model is also
//! reported as omp reports it (`session_info_update`, `config_update`). They are listed first by
//! `get_available_commands` (and shadow any other command of the same name or alias, except an
//! extension's: as in pi, an extension's `/tools` runs instead of the built-in).
//!
//! These are the ones of omp's text-mode built-ins that rho has the feature for: `model`,
//! `export`, `session`, `tools`, `compact`, `handoff` and `rename`, with omp's wording.
//! `compact` and `handoff` run in the background, as in omp: the answer comes first, their
//! output and `prompt_result` when they end, and the command queue stays free for `abort`.

use rho_rpc::{AgentInvokedData, AvailableCommand, CommandInput, Disposition, SessionEvent, Subcommand};
use serde_json::Value;

use super::dispatch::{Dispatcher, Reply, data};
use crate::agent_session::{AgentSession, SessionCommandError};
use crate::compaction::CompactionError;

/// A built-in as listed: name, aliases, description, input hint, subcommands (name, what).
struct Builtin {
    name: &'static str,
    aliases: &'static [&'static str],
    description: &'static str,
    hint: Option<&'static str>,
    subcommands: &'static [(&'static str, &'static str)],
}

/// In omp's order.
const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "model",
        aliases: &["models"],
        description: "Show current model selection",
        hint: None,
        subcommands: &[],
    },
    Builtin {
        name: "export",
        aliases: &[],
        description: "Export session to HTML file",
        hint: Some("[path]"),
        subcommands: &[],
    },
    Builtin {
        name: "session",
        aliases: &[],
        description: "Show the current session",
        hint: Some("[info]"),
        subcommands: &[("info", "Show session info and stats")],
    },
    Builtin { name: "tools", aliases: &[], description: "Show available tools", hint: None, subcommands: &[] },
    Builtin {
        name: "compact",
        aliases: &[],
        description: "Compact the conversation",
        hint: Some("[focus]"),
        subcommands: &[],
    },
    Builtin {
        name: "handoff",
        aliases: &[],
        description: "Summarize the session into a handoff document and compact in place",
        hint: Some("[focus instructions]"),
        subcommands: &[],
    },
    Builtin {
        name: "rename",
        aliases: &[],
        description: "Rename the current session",
        hint: Some("<title>"),
        subcommands: &[],
    },
];

/// The built-ins as `get_available_commands` lists them.
pub fn listed() -> Vec<AvailableCommand> {
    BUILTINS
        .iter()
        .map(|b| AvailableCommand {
            name: b.name.to_owned(),
            aliases: (!b.aliases.is_empty()).then(|| b.aliases.iter().map(|a| (*a).to_owned()).collect()),
            description: Some(b.description.to_owned()),
            input: b.hint.map(|hint| CommandInput { hint: hint.to_owned() }),
            subcommands: (!b.subcommands.is_empty()).then(|| {
                b.subcommands
                    .iter()
                    .map(|(name, what)| Subcommand {
                        name: (*name).to_owned(),
                        description: Some((*what).to_owned()),
                        usage: None,
                    })
                    .collect()
            }),
            source: "builtin".into(),
        })
        .collect()
}

/// The built-in `text` starts with and its arguments: the name ends at the first whitespace or
/// `:`, as omp reads it.
fn parse(text: &str) -> Option<(&'static str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let end = rest.find(|c: char| c.is_whitespace() || c == ':').unwrap_or(rest.len());
    let (name, args) = rest.split_at(end);
    let args = args.strip_prefix(':').unwrap_or(args).trim();
    let builtin = BUILTINS.iter().find(|b| b.name == name || b.aliases.contains(&name))?;
    Some((builtin.name, args))
}

impl Dispatcher {
    /// Runs the built-in `text` starts with; `None` when it starts with none. Otherwise the
    /// prompt's answer, and whether the command is over (omp's `prompt_result` follows the
    /// answer then; a command still running in the background writes it when it ends).
    pub(super) async fn builtin(&self, id: &Option<Value>, text: &str) -> Option<(Reply, bool)> {
        let (name, args) = parse(text)?;
        let s = &self.session;
        let say = |text: String| s.emit(SessionEvent::CommandOutput { text });
        let done = |session: &AgentSession, id: Option<Value>| {
            session.emit(SessionEvent::PromptResult { id, agent_invoked: false });
        };
        let mut finished = true;
        match name {
            "model" => {
                if let Some(text) = model(s, args) {
                    say(text);
                }
            }
            "export" => {
                let path = args.split_whitespace().find(|a| !a.starts_with("--"));
                say(match s.export_html(path.map(std::path::Path::new)) {
                    Ok(file) => format!("Session exported to: {}", file.display()),
                    Err(e) => format!("Failed to export session: {e}"),
                });
            }
            "session" if args.is_empty() || args == "info" => {
                let title = s.session_name().unwrap_or_default();
                say(format!("Session: {}\nTitle: {title}\nCWD: {}", s.session_id(), s.cwd().display()));
            }
            "session" => say("Usage: /session [info]".into()),
            "tools" => say(tools(s)),
            "compact" => {
                let (session, focus, id) = (s.clone(), args.to_owned(), id.clone());
                finished = false;
                tokio::spawn(async move {
                    compact(&session, &focus).await;
                    done(&session, id);
                });
            }
            "handoff" if s.is_streaming() => {
                say("Wait for the current response to finish or abort it before handing off.".into());
            }
            "handoff" => {
                let (session, focus, id) = (s.clone(), args.to_owned(), id.clone());
                finished = false;
                tokio::spawn(async move {
                    let text = match session.handoff(Some(&focus).filter(|f| !f.is_empty()).map(String::as_str)).await {
                        Ok(()) => "Context handed off and compacted in place.".to_owned(),
                        Err(SessionCommandError::Invalid(m)) if m == "Handoff cancelled" => "Handoff cancelled.".into(),
                        Err(e) => format!("Handoff failed: {e}"),
                    };
                    session.emit(SessionEvent::CommandOutput { text });
                    done(&session, id);
                });
            }
            "rename" if args.is_empty() => say("Usage: /rename <title>".into()),
            "rename" => say(match s.set_session_name(args) {
                Ok(()) => {
                    title_changed(s);
                    format!("Session renamed to {args}.")
                }
                Err(e) => format!("Rename failed: {e}"),
            }),
            _ => return None,
        }
        Some((data(&AgentInvokedData { agent_invoked: false, disposition: Disposition::Handled }), finished))
    }
}

/// `/model`: the current model, or `/model <provider/id | id>` to change it. The text to say,
/// or `None` when the change said it already (followed by omp's update frames).
fn model(s: &AgentSession, selector: &str) -> Option<String> {
    if selector.is_empty() {
        return Some(match s.model() {
            Some(m) => format!("Current model: {}/{}", m.provider, m.id),
            None => "No model is currently selected.".into(),
        });
    }
    let models = s.available_models();
    let found = match selector.split_once('/') {
        Some((provider, id)) => models.iter().find(|m| m.provider == provider && m.id == id),
        None => models.iter().find(|m| m.id == selector),
    };
    let Some(found) = found else {
        return Some(format!("Unknown model: {selector}. List available models with get_available_models."));
    };
    match s.set_model(&found.provider, &found.id) {
        Ok(m) => {
            s.emit(SessionEvent::CommandOutput { text: format!("Model set to {}/{}.", m.provider, m.id) });
            // omp reports a model change as a change of the session's info and config.
            title_changed(s);
            s.emit(SessionEvent::ConfigUpdate {
                model: s.model().map(Box::new),
                thinking_level: Some(s.thinking_level()),
            });
            None
        }
        Err(e) => Some(format!("Failed to set model: {e}")),
    }
}

/// omp's `session_info_update`: the session's title and id as they are now.
fn title_changed(s: &AgentSession) {
    s.emit(SessionEvent::SessionInfoUpdate { title: s.session_name(), session_id: s.session_id() });
}

/// `/tools`: every tool, `*` before the ones offered to the model now.
fn tools(s: &AgentSession) -> String {
    let active = s.active_tool_names();
    let all = s.all_tool_names();
    if all.is_empty() {
        return "No tools are available.".into();
    }
    let lines: Vec<String> =
        all.iter().map(|name| format!("{} {name}", if active.contains(name) { "*" } else { "-" })).collect();
    lines.join("\n")
}

/// `/compact [focus]`, reporting the context's size before and after.
async fn compact(s: &AgentSession, focus: &str) {
    let before = s.context_usage().and_then(|u| u.tokens);
    let text = match s.compact(Some(focus).filter(|f| !f.is_empty())).await {
        // An abort already told the host; nothing more to say.
        Err(SessionCommandError::Compaction(CompactionError::Cancelled)) => return,
        Err(e) => format!("Compaction failed: {e}"),
        Ok(_) => match (before, s.context_usage().and_then(|u| u.tokens)) {
            (Some(before), Some(after)) => format!(
                "Compaction complete. Tokens: {before} -> {after} (saved {}).",
                i128::from(before) - i128::from(after)
            ),
            _ => "Compaction complete.".into(),
        },
    };
    s.emit(SessionEvent::CommandOutput { text });
}
