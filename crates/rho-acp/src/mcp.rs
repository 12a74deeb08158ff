//! The MCP servers a client passes in `session/new` and `session/load` (`mcpServers`): each
//! becomes a rho-mcp server entry, merged over the entries of rho's config files (`mcp.json`,
//! `.mcp.json`, `.rho/mcp.json`). For a name both define the client's entry wins, whole, as the
//! more specific source (as a project file's entry wins over the user's). rho-mcp runs stdio,
//! streamable HTTP and SSE servers, so `initialize` advertises `mcpCapabilities.http` and `.sse`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{HttpHeader, McpCapabilities, McpServer};
use rho_mcp::{McpConfig, RemoteServer, ServerConfig, StdioServer, Transport};

/// What a client entry names as its source, where a file's entry names its file.
const SOURCE: &str = "ACP mcpServers";

/// The transports rho takes besides stdio (which every agent must).
pub(super) fn capabilities() -> McpCapabilities {
    McpCapabilities::new().http(true).sse(true)
}

/// `files` with the client's `servers` over them; the error names the entry that cannot be
/// run (no name, no command or url, a transport rho does not know).
pub(super) fn merge(files: McpConfig, servers: &[McpServer]) -> Result<McpConfig, String> {
    let mut merged = files.servers().to_vec();
    for (index, server) in servers.iter().enumerate() {
        merged.push(server_config(server).map_err(|problem| format!("mcpServers[{index}]: {problem}"))?);
    }
    Ok(McpConfig::from_servers(merged))
}

fn server_config(server: &McpServer) -> Result<ServerConfig, String> {
    let (name, transport) = match server {
        McpServer::Stdio(stdio) => {
            let command = stdio.command.to_string_lossy().into_owned();
            if command.is_empty() {
                return Err("command is empty".to_owned());
            }
            let env = stdio.env.iter().map(|v| (v.name.clone(), v.value.clone())).collect();
            (&stdio.name, Transport::Stdio(StdioServer { command, args: stdio.args.clone(), env, cwd: None }))
        }
        McpServer::Http(http) => (&http.name, Transport::Http(remote(&http.url, &http.headers)?)),
        McpServer::Sse(sse) => (&sse.name, Transport::Sse(remote(&sse.url, &sse.headers)?)),
        _ => return Err("this transport is not supported by rho (stdio, http and sse are)".to_owned()),
    };
    if name.trim().is_empty() {
        return Err("name is empty".to_owned());
    }
    Ok(ServerConfig {
        name: name.clone(),
        transport: Some(transport),
        enabled: true,
        timeout: None,
        exposure: None,
        tool_exposure: Default::default(),
        source: PathBuf::from(SOURCE),
    })
}

fn remote(url: &str, headers: &[HttpHeader]) -> Result<RemoteServer, String> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!("url must be http:// or https://: {url:?}"));
    }
    let headers: BTreeMap<String, String> = headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect();
    Ok(RemoteServer { url: url.to_owned(), headers })
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{EnvVariable, McpServerHttp, McpServerSse, McpServerStdio};

    use super::*;

    fn file_entry(name: &str, command: &str) -> ServerConfig {
        ServerConfig {
            name: name.to_owned(),
            transport: Some(Transport::Stdio(StdioServer {
                command: command.to_owned(),
                args: Vec::new(),
                env: BTreeMap::new(),
                cwd: None,
            })),
            enabled: true,
            timeout: None,
            exposure: None,
            tool_exposure: Default::default(),
            source: PathBuf::from("/p/.mcp.json"),
        }
    }

    #[test]
    fn the_clients_entries_override_the_files_by_name_and_add_the_rest() {
        let files = McpConfig::from_servers(vec![file_entry("a", "from-file"), file_entry("b", "kept")]);
        let client = [
            McpServer::Stdio(
                McpServerStdio::new("a", "/bin/srv").args(vec!["-v".into()]).env(vec![EnvVariable::new("K", "V")]),
            ),
            McpServer::Http(McpServerHttp::new("h", "https://x/mcp").headers(vec![HttpHeader::new("A", "B")])),
            McpServer::Sse(McpServerSse::new("s", "http://y/sse")),
        ];
        let merged = merge(files, &client).unwrap();
        let names: Vec<&str> = merged.servers().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "h", "s"]);
        let Some(Transport::Stdio(a)) = &merged.server("a").unwrap().transport else { panic!() };
        assert_eq!((a.command.as_str(), a.args.as_slice()), ("/bin/srv", ["-v".to_owned()].as_slice()));
        assert_eq!(a.env.get("K").map(String::as_str), Some("V"));
        assert_eq!(merged.server("a").unwrap().source, PathBuf::from(SOURCE));
        let Some(Transport::Stdio(b)) = &merged.server("b").unwrap().transport else { panic!() };
        assert_eq!(b.command, "kept");
        let Some(Transport::Http(h)) = &merged.server("h").unwrap().transport else { panic!() };
        assert_eq!(h.headers.get("A").map(String::as_str), Some("B"));
        assert!(matches!(&merged.server("s").unwrap().transport, Some(Transport::Sse(s)) if s.url == "http://y/sse"));
    }

    #[test]
    fn an_entry_that_cannot_run_is_a_precise_error() {
        let nameless = [McpServer::Stdio(McpServerStdio::new(" ", "/bin/srv"))];
        assert_eq!(merge(McpConfig::default(), &nameless).unwrap_err(), "mcpServers[0]: name is empty");
        let bad_url = [
            McpServer::Stdio(McpServerStdio::new("ok", "/bin/srv")),
            McpServer::Http(McpServerHttp::new("h", "ftp://x")),
        ];
        assert_eq!(
            merge(McpConfig::default(), &bad_url).unwrap_err(),
            "mcpServers[1]: url must be http:// or https://: \"ftp://x\""
        );
    }
}
