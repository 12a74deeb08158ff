//! The figures at the top of the page, counted over every entry of the file (all branches, as
//! pi's export does, unlike `get_session_stats` which counts the current context): messages by
//! role, tool calls, compactions and branch summaries, token and cost totals, the models used.

use std::collections::HashSet;

use rho_session::{Session, SessionEntry};
use rho_types::AgentMessage;
use rho_types::types::Usage;

use super::escape::push_escaped;
use super::fragments::{format_cost, format_tokens, push_time};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionFigures {
    pub user_messages: u64,
    pub assistant_messages: u64,
    pub tool_results: u64,
    /// Custom messages (entries and legacy message roles) and developer instructions.
    pub custom_messages: u64,
    pub bash_executions: u64,
    pub tool_calls: u64,
    pub compactions: u64,
    pub branch_summaries: u64,
    /// Entries nothing else continues from: one per branch.
    pub branch_tips: u64,
    pub usage: Usage,
    /// `provider/model` of the assistant messages, in order of first use.
    pub models: Vec<String>,
}

impl SessionFigures {
    pub fn collect(entries: &[SessionEntry]) -> Self {
        let mut figures = Self::default();
        let mut seen_models = HashSet::new();
        let parents: HashSet<&str> = entries.iter().filter_map(|e| e.parent_id()).map(|p| p.as_str()).collect();
        for entry in entries {
            if !entry.is_leaf_marker() && !parents.contains(entry.id().as_str()) {
                figures.branch_tips += 1;
            }
            match entry {
                SessionEntry::Message(m) => match &m.message {
                    AgentMessage::User(_) => figures.user_messages += 1,
                    AgentMessage::Assistant(a) => {
                        figures.assistant_messages += 1;
                        figures.tool_calls += a.tool_calls().count() as u64;
                        figures.usage.add(&a.usage);
                        let model = format!("{}/{}", a.provider, a.model);
                        if seen_models.insert(model.clone()) {
                            figures.models.push(model);
                        }
                    }
                    AgentMessage::ToolResult(_) => figures.tool_results += 1,
                    AgentMessage::BashExecution(_) => figures.bash_executions += 1,
                    AgentMessage::Custom(_) | AgentMessage::HookMessage(_) | AgentMessage::Developer(_) => {
                        figures.custom_messages += 1;
                    }
                    AgentMessage::BranchSummary(_) => figures.branch_summaries += 1,
                    AgentMessage::CompactionSummary(_) => figures.compactions += 1,
                    AgentMessage::System(_) => {}
                },
                SessionEntry::CustomMessage(_) => figures.custom_messages += 1,
                SessionEntry::Compaction(_) => figures.compactions += 1,
                SessionEntry::BranchSummary(_) => figures.branch_summaries += 1,
                _ => {}
            }
        }
        figures
    }
}

fn push_row(out: &mut String, name: &str, value: &str) {
    out.push_str("<dt>");
    out.push_str(name);
    out.push_str("</dt><dd>");
    push_escaped(out, value);
    out.push_str("</dd>");
}

/// Appends the header block: the title, ids, places, times, counts, tokens, cost, models.
pub fn push_header(out: &mut String, session: &Session, title: &str, figures: &SessionFigures) {
    let header = session.header();
    out.push_str("<header class=\"session-header\"><h1>");
    push_escaped(out, title);
    out.push_str("</h1><dl class=\"stats\">");
    push_row(out, "Session", &header.id);
    if !header.cwd.is_empty() {
        push_row(out, "Directory", &header.cwd);
    }
    if let Some(parent) = &header.parent_session {
        push_row(out, "Forked from", parent);
    }
    out.push_str("<dt>Created</dt><dd>");
    push_time(out, &header.timestamp);
    out.push_str("</dd>");
    if let Some(last) = session.entries().last() {
        out.push_str("<dt>Last entry</dt><dd>");
        push_time(out, last.timestamp());
        out.push_str("</dd>");
    }
    if !figures.models.is_empty() {
        push_row(out, if figures.models.len() == 1 { "Model" } else { "Models" }, &figures.models.join(", "));
    }
    let f = figures;
    let mut messages = format!(
        "{} user, {} assistant, {} tool results, {} tool calls",
        f.user_messages, f.assistant_messages, f.tool_results, f.tool_calls
    );
    for (n, what) in [(f.custom_messages, "custom"), (f.bash_executions, "bash")] {
        if n > 0 {
            messages.push_str(&format!(", {n} {what}"));
        }
    }
    push_row(out, "Messages", &messages);
    push_row(
        out,
        "Entries",
        &format!(
            "{} in {} branch{}, {} compaction{}, {} branch summar{}",
            session.entries().iter().filter(|e| !e.is_leaf_marker()).count(),
            f.branch_tips,
            if f.branch_tips == 1 { "" } else { "es" },
            f.compactions,
            if f.compactions == 1 { "" } else { "s" },
            f.branch_summaries,
            if f.branch_summaries == 1 { "y" } else { "ies" },
        ),
    );
    let u = &f.usage;
    push_row(
        out,
        "Tokens",
        &format!(
            "↑{} ↓{} R{} W{}",
            format_tokens(u.input),
            format_tokens(u.output),
            format_tokens(u.cache_read),
            format_tokens(u.cache_write)
        ),
    );
    push_row(out, "Cost", &format_cost(u.cost.total));
    out.push_str("</dl></header>\n");
}
