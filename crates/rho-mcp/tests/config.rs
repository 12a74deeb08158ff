//! Loading `mcpServers` from the three files: precedence, `${VAR}` expansion, `enabled: false`,
//! transports, and a diagnostic naming file and field for each bad file or entry.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use rho_mcp::{McpConfig, RemoteServer, StdioServer, Transport};

struct Dirs {
    _guard: tempfile::TempDir,
    cwd: PathBuf,
    agent: PathBuf,
}

fn dirs() -> Dirs {
    let guard = tempfile::tempdir().unwrap();
    let cwd = guard.path().join("project");
    let agent = guard.path().join("agent");
    std::fs::create_dir_all(cwd.join(".rho")).unwrap();
    std::fs::create_dir_all(cwd.join(".pi")).unwrap();
    std::fs::create_dir_all(&agent).unwrap();
    Dirs { _guard: guard, cwd, agent }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn env(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("s3cret".into()),
        "BIN" => Some("/opt/bin".into()),
        _ => None,
    }
}

fn load(d: &Dirs) -> (McpConfig, Vec<String>) {
    let (config, diagnostics) = McpConfig::load_with_env(&d.cwd, &d.agent, &env);
    (config, diagnostics.iter().map(ToString::to_string).collect())
}

fn stdio(config: &McpConfig, name: &str) -> StdioServer {
    match &config.server(name).unwrap().transport {
        Some(Transport::Stdio(s)) => s.clone(),
        other => panic!("{name}: expected stdio, got {other:?}"),
    }
}

#[test]
fn no_files_no_servers_no_diagnostics() {
    let d = dirs();
    let (config, diagnostics) = load(&d);
    assert!(config.is_empty());
    assert!(diagnostics.is_empty());
}

#[test]
fn project_files_override_the_user_file_entry_by_entry() {
    let d = dirs();
    write(
        &d.agent.join("mcp.json"),
        r#"{"mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b"}, "gh": {"command": "gh-mcp"}}}"#,
    );
    write(
        &d.cwd.join(".mcp.json"),
        r#"{"mcpServers": {"b": {"command": "project-b", "args": ["--x"]}, "c": {"command": "project-c"}}}"#,
    );
    write(&d.cwd.join(".rho/mcp.json"), r#"{"mcpServers": {"c": {"command": "rho-c"}, "gh": {"enabled": false}}}"#);
    let (config, diagnostics) = load(&d);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let names: Vec<&str> = config.servers().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "gh"]);
    assert_eq!(stdio(&config, "a").command, "user-a");
    assert_eq!(config.server("a").unwrap().source, d.agent.join("mcp.json"));
    // The whole entry is replaced: no field of the user's `b` survives.
    assert_eq!(
        stdio(&config, "b"),
        StdioServer { command: "project-b".into(), args: vec!["--x".into()], env: Default::default(), cwd: None }
    );
    assert_eq!(config.server("b").unwrap().source, d.cwd.join(".mcp.json"));
    assert_eq!(stdio(&config, "c").command, "rho-c");
    // An entry of `enabled` alone turns the user's server off there, and keeps the rest of it.
    let gh = config.server("gh").unwrap();
    assert!(!gh.enabled);
    assert_eq!(stdio(&config, "gh").command, "gh-mcp");
    assert_eq!(gh.source, d.cwd.join(".rho/mcp.json"));
}

#[test]
fn pi_project_files_exposures_and_overrides_with_nothing_below() {
    let d = dirs();
    write(
        &d.agent.join("mcp.json"),
        r#"{"mcpServers": {"docs": {"url": "https://docs.example/mcp", "timeout": 90, "toolExposure": {"a": "direct"}}}}"#,
    );
    write(
        &d.cwd.join(".pi/mcp.json"),
        r#"{"mcpServers": {"docs": {"exposure": "hidden", "toolExposure": {"search": "direct"}},
            "lone": {"exposure": "direct"}, "off": {"enabled": false},
            "odd": {"command": "x", "exposure": "sideways"}}}"#,
    );
    let (config, diagnostics) = load(&d);
    let docs = config.server("docs").unwrap();
    assert!(matches!(&docs.transport, Some(Transport::Http(r)) if r.url == "https://docs.example/mcp"));
    assert_eq!(docs.timeout, Some(Duration::from_secs(90)), "seconds, as pi 1.6 reads them");
    assert_eq!(docs.source, d.cwd.join(".pi/mcp.json"));
    assert!(docs.offers("search") && docs.offers("a"), "single tools keep their own exposure");
    assert!(!docs.offers("fetch"), "the server's other tools are hidden");
    let names: Vec<&str> = config.servers().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["docs", "off"]);
    assert_eq!(diagnostics.len(), 2, "{diagnostics:#?}");
    assert!(diagnostics[0].contains("mcpServers.odd.exposure: must be one of codemode, deferred, direct, hidden"));
    assert!(diagnostics[1].contains("mcpServers.lone: needs command"), "{}", diagnostics[1]);
}

#[test]
fn variables_are_expanded_in_every_string_field() {
    let d = dirs();
    write(
        &d.cwd.join(".mcp.json"),
        r#"{"mcpServers": {
            "local": {"command": "${BIN}/server", "args": ["--token", "${TOKEN}", "${MODE:-fast}"],
                      "env": {"API_KEY": "${TOKEN}", "PORT": 8080}, "cwd": "sub/${MODE:-dir}", "timeout": 5},
            "remote": {"type": "http", "url": "https://mcp.example.com/${MODE:-v1}", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            "inferred": {"url": "http://127.0.0.1:9/mcp"}
        }}"#,
    );
    let (config, diagnostics) = load(&d);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let local = stdio(&config, "local");
    assert_eq!(local.command, "/opt/bin/server");
    assert_eq!(local.args, ["--token", "s3cret", "fast"]);
    assert_eq!(local.env.get("API_KEY").map(String::as_str), Some("s3cret"));
    assert_eq!(local.env.get("PORT").map(String::as_str), Some("8080"));
    assert_eq!(local.cwd, Some(d.cwd.join("sub/dir")), "a relative cwd is the project's");
    assert_eq!(config.server("local").unwrap().timeout, Some(Duration::from_secs(5)));
    let remote = RemoteServer {
        url: "https://mcp.example.com/v1".into(),
        headers: [("Authorization".to_owned(), "Bearer s3cret".to_owned())].into(),
    };
    assert_eq!(config.server("remote").unwrap().transport, Some(Transport::Http(remote)));
    assert!(matches!(config.server("legacy").unwrap().transport, Some(Transport::Sse(_))));
    assert!(matches!(config.server("inferred").unwrap().transport, Some(Transport::Http(_))));
}

#[test]
fn an_unset_variable_skips_that_server_with_a_diagnostic() {
    let d = dirs();
    let path = d.cwd.join(".mcp.json");
    write(&path, r#"{"mcpServers": {"a": {"command": "x", "args": ["ok", "${NOT_SET}"]}, "b": {"command": "y"}}}"#);
    let (config, diagnostics) = load(&d);
    assert_eq!(
        diagnostics,
        [format!(
            "MCP config {}: mcpServers.a.args[1]: environment variable NOT_SET is not set (write ${{NOT_SET:-default}} for a default); server \"a\" is not loaded",
            path.display()
        )]
    );
    let names: Vec<&str> = config.servers().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["b"]);
}

#[test]
fn bad_files_and_entries_are_named_and_the_rest_loads() {
    let d = dirs();
    let user = d.agent.join("mcp.json");
    let project = d.cwd.join(".mcp.json");
    let rho = d.cwd.join(".rho/mcp.json");
    write(&user, r#"{"mcpServers": {"kept": {"command": "user-kept"}, "ok": {"command": "fine"}}}"#);
    write(&project, "{ not json");
    write(
        &rho,
        r#"{"mcpServers": {
            "kept": {"command": 42},
            "args": {"command": "x", "args": "--flag"},
            "both": {"command": "x", "url": "http://a"},
            "neither": {"args": []},
            "kind": {"type": "websocket", "url": "ws://a"},
            "scheme": {"type": "http", "url": "ftp://a?token=SECRET"},
            "flag": {"command": "x", "enabled": "no"},
            "slow": {"command": "x", "timeout": -1},
            "env": {"command": "x", "env": {"A": ["b"]}},
            "scalar": "npx server",
            "good": {"command": "good"}
        }}"#,
    );
    let (config, diagnostics) = load(&d);
    let names: Vec<&str> = config.servers().iter().map(|s| s.name.as_str()).collect();
    // `kept` is the user's: a broken override does not replace a working entry.
    assert_eq!(names, ["good", "kept", "ok"]);
    assert_eq!(stdio(&config, "kept").command, "user-kept");

    assert_eq!(diagnostics.len(), 11, "{diagnostics:#?}");
    assert!(
        diagnostics[0].starts_with(&format!("MCP config {}: invalid JSON (", project.display())),
        "{}",
        diagnostics[0]
    );
    assert!(diagnostics[0].ends_with("its servers are not loaded"));
    let rho_prefix = format!("MCP config {}: ", rho.display());
    let expected = [
        "mcpServers.kept.command: must be a string, found a number; server \"kept\" is not loaded",
        "mcpServers.args.args: must be an array of strings, found a string; server \"args\" is not loaded",
        "mcpServers.both: has both command and url; give one (and type for sse); server \"both\" is not loaded",
        "mcpServers.neither: needs command (a stdio server) or url (an http or sse server); server \"neither\" is not loaded",
        "mcpServers.kind.type: must be \"stdio\", \"http\" or \"sse\", found \"websocket\"; server \"kind\" is not loaded",
        "mcpServers.scheme.url: must be an http:// or https:// URL, found \"ftp://a/?***\"; server \"scheme\" is not loaded",
        "mcpServers.flag.enabled: must be true or false, found a string; server \"flag\" is not loaded",
        "mcpServers.slow.timeout: must be a positive number of seconds, found -1; server \"slow\" is not loaded",
        "mcpServers.env.env.A: must be a string, found an array; server \"env\" is not loaded",
        "mcpServers.scalar: must be an object, found a string; server \"scalar\" is not loaded",
    ];
    let rest: Vec<String> = diagnostics[1..].to_vec();
    let expected: Vec<String> = expected.iter().map(|e| format!("{rho_prefix}{e}")).collect();
    assert_eq!(rest, expected);
}

#[test]
fn files_without_an_object_are_named() {
    let d = dirs();
    write(&d.agent.join("mcp.json"), "[1, 2]");
    write(&d.cwd.join(".mcp.json"), r#"{"mcpServers": ["a"]}"#);
    write(&d.cwd.join(".rho/mcp.json"), r#"{"other": "keys only"}"#);
    let (config, diagnostics) = load(&d);
    assert!(config.is_empty());
    assert_eq!(
        diagnostics,
        [
            format!(
                "MCP config {}: does not hold a JSON object; its servers are not loaded",
                d.agent.join("mcp.json").display()
            ),
            format!(
                "MCP config {}: mcpServers must be an object, found an array; no server is loaded",
                d.cwd.join(".mcp.json").display()
            ),
        ]
    );
}
