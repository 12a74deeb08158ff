//! MCP servers extensions register (pi 1.6's `pi.registerMcpServer`, docs/extensions.md "MCP
//! Servers"): each entry has the shape of an `mcpServers` entry of `mcp.json`. They run beside
//! the config files' servers, started as soon as they are registered (those registered while the
//! extensions load, with the session's own); a server a config file names wins over an
//! extension's of the same name; unregistered, a server is closed and its tools go. With
//! `--no-mcp` none runs.

use std::collections::BTreeMap;
use std::path::Path;

use rho_mcp::McpConfig;
use serde_json::Value;

use super::AgentSession;

/// One server an extension registered: its name, its entry, and the extension's path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RegisteredMcpServer {
    pub name: String,
    pub config: Value,
    pub extension_path: String,
}

impl AgentSession {
    /// The servers extensions have registered now (the whole list): those no longer in it are
    /// closed, new and changed ones started, in the background. Lists reported in quick
    /// succession end with the last one applied.
    pub(crate) fn set_extension_mcp_servers(&self, servers: Vec<RegisteredMcpServer>) {
        if self.inner.mcp_off {
            return;
        }
        if self.inner.mcp.get().is_none() && !servers.is_empty() {
            self.set_up_mcp(McpConfig::default());
        }
        let Some(mcp) = self.inner.mcp.get() else { return };
        *mcp.reported.lock() = Some(servers);
        let session = self.clone();
        tokio::spawn(async move { session.apply_extension_mcp_servers().await });
    }

    async fn apply_extension_mcp_servers(&self) {
        self.start_mcp_now();
        let (Some(mcp), Some(manager)) = (self.inner.mcp.get(), self.mcp_manager().cloned()) else { return };
        let _one_at_a_time = mcp.changing.lock().await;
        // Applied already by the change after it, which took the last list.
        let Some(servers) = mcp.reported.lock().take() else { return };
        let wanted: BTreeMap<String, RegisteredMcpServer> =
            servers.into_iter().filter(|s| !mcp.file_names.contains(&s.name)).map(|s| (s.name.clone(), s)).collect();
        let (added, removed) = {
            let mut current = mcp.from_extensions.lock();
            let removed: Vec<String> = current.keys().filter(|name| !wanted.contains_key(*name)).cloned().collect();
            let added: Vec<RegisteredMcpServer> =
                wanted.values().filter(|s| current.get(&s.name) != Some(&s.config)).cloned().collect();
            *current = wanted.into_values().map(|s| (s.name, s.config)).collect();
            (added, removed)
        };
        for name in removed {
            manager.remove(&name).await;
        }
        let env = |name: &str| std::env::var(name).ok();
        for server in added {
            let source = Path::new(&server.extension_path);
            match McpConfig::parse_entry(&server.name, &server.config, source, self.cwd(), &env) {
                Ok(config) => manager.add(config).await,
                Err(problem) => {
                    self.report_extension_error(&server.extension_path, "register_mcp_server", &problem.to_string());
                }
            }
        }
    }
}
