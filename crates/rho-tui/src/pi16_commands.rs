//! Commands pi 1.6 added to the editor: `/thinking [level]` (a list of the levels the model
//! takes without one), `/trust` (this project's trust decision, saved for the next start),
//! `/mcp` (the MCP servers and where each stands; signing in and changing exposure are not in
//! rho) and `/name` without a name (the current one said).

use rho_coding_agent::config::trust;
use rho_types::ThinkingLevel;

use super::app::{App, Picking};
use super::blocks;
use super::select::{Select, SelectItem};

/// The `/trust` list's values.
const TRUST: &str = "trust";
const DECLINE: &str = "decline";

impl App {
    /// `/thinking [level]`.
    pub fn thinking_command(&mut self, args: &str) {
        let levels = self.session.available_thinking_levels();
        if args.is_empty() {
            let current = self.session.thinking_level();
            let items: Vec<SelectItem> = levels
                .iter()
                .map(|level| SelectItem {
                    label: level.as_str().to_owned(),
                    detail: if *level == current { "current".to_owned() } else { String::new() },
                    value: level.as_str().to_owned(),
                })
                .collect();
            let selected = levels.iter().position(|l| *l == current).unwrap_or(0);
            self.select = Some((Picking::Thinking, Select::new("Thinking level", items, selected)));
            return;
        }
        let line = match ThinkingLevel::parse(args) {
            Some(level) if levels.contains(&level) => match self.session.set_thinking_level(level) {
                Ok(()) => blocks::notice(&format!("Thinking: {}", self.session.thinking_level().as_str())),
                Err(e) => blocks::error(&format!("Error: {e}")),
            },
            Some(level) => blocks::error(&format!(
                "The model does not take the level {}: {}",
                level.as_str(),
                levels.iter().map(|l| l.as_str()).collect::<Vec<_>>().join(", ")
            )),
            None => blocks::error(&format!(
                "Unknown thinking level \"{args}\": off, minimal, low, medium, high, xhigh or max"
            )),
        };
        self.push([line]);
    }

    /// `/trust`: whether this project's own code runs from the next start on.
    pub fn trust_command(&mut self) {
        let paths = self.session.paths();
        let trusted = trust::is_trusted(&paths.agent_dir, &paths.cwd);
        let items = vec![
            SelectItem {
                label: "Trust this project".to_owned(),
                detail: if trusted { "current".to_owned() } else { String::new() },
                value: TRUST.to_owned(),
            },
            SelectItem {
                label: "Do not trust this project".to_owned(),
                detail: if trusted { String::new() } else { "current".to_owned() },
                value: DECLINE.to_owned(),
            },
        ];
        let title = format!("Trust {}", paths.cwd.display());
        self.select = Some((Picking::Trust, Select::new(&title, items, usize::from(!trusted))));
    }

    /// A `/trust` choice, saved in `trust.json`.
    pub fn trust_picked(&mut self, value: &str) {
        let paths = self.session.paths();
        let (agent_dir, cwd) = (paths.agent_dir.clone(), paths.cwd.clone());
        let saved = if value == TRUST { trust::trust(&agent_dir, &cwd) } else { trust::untrust(&agent_dir, &cwd) };
        let line = match saved {
            Ok(_) if value == TRUST => {
                blocks::notice("Trusted: this project's MCP servers, extensions and settings run from the next start")
            }
            Ok(_) => blocks::notice("Not trusted: this project's own code does not run from the next start on"),
            Err(e) => blocks::error(&format!("The decision was not saved: {e}")),
        };
        self.push([line]);
    }

    /// `/mcp`: every configured MCP server, its state and what it adds.
    pub fn mcp_command(&mut self, args: &str) {
        if let Some(name) = args.strip_prefix("reconnect").map(str::trim) {
            self.reconnect_mcp(name);
            return;
        }
        let Some(servers) = self.session.mcp_servers().filter(|s| !s.is_empty()) else {
            self.push([blocks::notice("No MCP servers are configured (mcp.json, .mcp.json, rho mcp add)")]);
            return;
        };
        let mut lines = vec![ratatui::text::Line::default(), blocks::notice("MCP servers:")];
        for server in servers {
            let state = match (&server.status, &server.error) {
                (rho_rpc::McpServerStatus::Failed, Some(error)) => format!("failed: {error}"),
                (status, _) => {
                    serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
                }
            };
            let adds = match (server.tool_count, server.prompt_count) {
                (0, 0) => String::new(),
                (tools, 0) => format!(" · {tools} tools"),
                (tools, prompts) => format!(" · {tools} tools, {prompts} prompts"),
            };
            lines.push(blocks::notice(&format!("  {}  {state}{adds}", server.name)));
        }
        self.push(lines);
    }

    /// `/mcp reconnect <name>`: the server closed and started again.
    fn reconnect_mcp(&mut self, name: &str) {
        if name.is_empty() {
            self.push([blocks::warning("Usage: /mcp reconnect <server>")]);
            return;
        }
        let (session, report, name) = (self.session.clone(), self.reporter(), name.to_owned());
        self.status = Some(format!("Reconnecting {name}…"));
        tokio::spawn(async move {
            let line = if session.reconnect_mcp_server(&name).await {
                blocks::notice(&format!("Reconnecting MCP server {name} (/mcp shows where it stands)"))
            } else {
                blocks::error(&format!("No MCP server named {name}"))
            };
            report(vec![line]);
        });
    }

    /// `/name` without a name: the current one.
    pub fn show_name(&mut self) {
        let line = match self.session.session_name() {
            Some(name) => blocks::notice(&format!("Session name: {name}")),
            None => blocks::notice("The session has no name: /name <name> gives it one"),
        };
        self.push([line]);
    }
}
