//! One config file's `mcpServers` map into [`ServerConfig`]s, with a diagnostic naming the field
//! for every value of the wrong shape. A bad entry is skipped whole (never half-started); the
//! other entries of the file still load. Unknown fields (Claude Code's `oauth`, editors' own
//! keys) are ignored, so one file serves several tools.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::{Exposure, RemoteServer, ServerConfig, StdioServer, Transport};

/// The fields an entry without a transport may have: it overrides the entry below it.
const OVERRIDE_KEYS: [&str; 4] = ["enabled", "exposure", "toolExposure", "description"];
use crate::diagnostic::Diagnostic;
use crate::expand::{MissingVar, expand};

type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The servers of one file and the problems found in it.
pub(crate) fn parse_file(text: &str, path: &Path, cwd: &Path, env: Env<'_>) -> (Vec<ServerConfig>, Vec<Diagnostic>) {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return (
                Vec::new(),
                vec![Diagnostic::file(path, format!("invalid JSON ({e}); its servers are not loaded"))],
            );
        }
    };
    let Value::Object(root) = value else {
        return (Vec::new(), vec![Diagnostic::file(path, "does not hold a JSON object; its servers are not loaded")]);
    };
    let servers = match root.get("mcpServers") {
        None => return (Vec::new(), Vec::new()),
        Some(Value::Object(servers)) => servers,
        Some(other) => {
            let d = Diagnostic::file(
                path,
                format!("mcpServers must be an object, found {}; no server is loaded", kind(other)),
            );
            return (Vec::new(), vec![d]);
        }
    };
    let mut out = Vec::new();
    let mut diagnostics = Vec::new();
    for (name, entry) in servers {
        let mut ctx = Entry { path, name, cwd, env };
        match ctx.parse(entry) {
            Ok(server) => out.push(server),
            Err(d) => diagnostics.push(d),
        }
    }
    (out, diagnostics)
}

/// One `mcpServers` entry given outside a file (an extension's `registerMcpServer`); `source`
/// names where it came from. It must say how to reach the server.
pub(crate) fn parse_entry(
    name: &str,
    entry: &Value,
    source: &Path,
    cwd: &Path,
    env: Env<'_>,
) -> Result<ServerConfig, Diagnostic> {
    let mut ctx = Entry { path: source, name, cwd, env };
    let server = ctx.parse(entry)?;
    if server.transport.is_none() {
        return Err(ctx.fail("", "needs a \"command\" or a \"url\""));
    }
    Ok(server)
}

/// Parsing one entry: knows where it is, for the diagnostics.
struct Entry<'a> {
    path: &'a Path,
    name: &'a str,
    cwd: &'a Path,
    env: Env<'a>,
}

impl Entry<'_> {
    fn fail(&self, field: &str, message: impl std::fmt::Display) -> Diagnostic {
        let field = if field.is_empty() {
            format!("mcpServers.{}", self.name)
        } else {
            format!("mcpServers.{}.{field}", self.name)
        };
        Diagnostic::field(self.path, self.name, field, format!("{message}; server \"{}\" is not loaded", self.name))
    }

    fn parse(&mut self, entry: &Value) -> Result<ServerConfig, Diagnostic> {
        if self.name.trim().is_empty() {
            return Err(self.fail("", "a server name must not be empty"));
        }
        let Value::Object(entry) = entry else {
            return Err(self.fail("", format!("must be an object, found {}", kind(entry))));
        };
        let enabled = match entry.get("enabled") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(other) => return Err(self.fail("enabled", format!("must be true or false, found {}", kind(other)))),
        };
        let timeout = match entry.get("timeout") {
            None => None,
            Some(Value::Number(n)) => match n.as_f64() {
                Some(s) if s > 0.0 && s.is_finite() && s < 1e9 => Some(Duration::from_secs_f64(s)),
                _ => return Err(self.fail("timeout", format!("must be a positive number of seconds, found {n}"))),
            },
            Some(other) => {
                return Err(self.fail("timeout", format!("must be a number of seconds, found {}", kind(other))));
            }
        };
        let exposure = match entry.get("exposure") {
            None | Some(Value::Null) => None,
            Some(value) => Some(self.exposure("exposure", value)?),
        };
        let tool_exposure = match entry.get("toolExposure") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(tool, value)| Ok((tool.clone(), self.exposure(&format!("toolExposure.{tool}"), value)?)))
                .collect::<Result<_, Diagnostic>>()?,
            Some(other) => {
                return Err(self.fail("toolExposure", format!("must be an object of exposures, found {}", kind(other))));
            }
        };
        let has_transport = entry.contains_key("command") || entry.contains_key("url") || entry.contains_key("type");
        // Without a transport the entry only overrides the one below it (checked when the files
        // are merged; alone, an enabled one is a server with nothing to start).
        let overrides_only = !has_transport && entry.keys().all(|k| OVERRIDE_KEYS.contains(&k.as_str()));
        let transport = if overrides_only { None } else { Some(self.transport(entry)?) };
        Ok(ServerConfig {
            name: self.name.to_owned(),
            transport,
            enabled,
            timeout,
            exposure,
            tool_exposure,
            source: self.path.to_path_buf(),
        })
    }

    fn exposure(&self, field: &str, value: &Value) -> Result<Exposure, Diagnostic> {
        value
            .as_str()
            .and_then(Exposure::parse)
            .ok_or_else(|| self.fail(field, format!("must be one of {}, found {value}", Exposure::NAMES.join(", "))))
    }

    fn transport(&self, entry: &Map<String, Value>) -> Result<Transport, Diagnostic> {
        let kind_field = match entry.get("type") {
            None => None,
            Some(Value::String(t)) => Some(t.as_str()),
            Some(other) => {
                return Err(self.fail("type", format!("must be \"stdio\", \"http\" or \"sse\", found {}", kind(other))));
            }
        };
        let has_command = entry.contains_key("command");
        let has_url = entry.contains_key("url");
        let kind_field = match (kind_field, has_command, has_url) {
            (Some(t), _, _) => t,
            (None, true, false) => "stdio",
            (None, false, true) => "http",
            (None, true, true) => return Err(self.fail("", "has both command and url; give one (and type for sse)")),
            (None, false, false) => {
                return Err(self.fail("", "needs command (a stdio server) or url (an http or sse server)"));
            }
        };
        match kind_field {
            "stdio" => {
                let command = self.required_string(entry, "command")?;
                let args = self.string_list(entry, "args")?;
                let env = self.string_map(entry, "env")?;
                let cwd = self.optional_string(entry, "cwd")?.map(|dir| resolve(self.cwd, &dir));
                Ok(Transport::Stdio(StdioServer { command, args, env, cwd }))
            }
            "http" | "sse" => {
                let url = self.required_string(entry, "url")?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    // Shown without the credentials it may carry (`?token=…`, `user:password@`).
                    let shown = rho_ai::redact::url(&url);
                    return Err(self.fail("url", format!("must be an http:// or https:// URL, found \"{shown}\"")));
                }
                let headers = self.string_map(entry, "headers")?;
                let remote = RemoteServer { url, headers };
                Ok(if kind_field == "http" { Transport::Http(remote) } else { Transport::Sse(remote) })
            }
            other => Err(self.fail("type", format!("must be \"stdio\", \"http\" or \"sse\", found \"{other}\""))),
        }
    }

    fn expand(&self, field: &str, text: &str) -> Result<String, Diagnostic> {
        expand(text, self.env).map_err(|MissingVar(var)| {
            self.fail(field, format!("environment variable {var} is not set (write ${{{var}:-default}} for a default)"))
        })
    }

    fn optional_string(&self, entry: &Map<String, Value>, field: &str) -> Result<Option<String>, Diagnostic> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => self.expand(field, s).map(Some),
            Some(other) => Err(self.fail(field, format!("must be a string, found {}", kind(other)))),
        }
    }

    fn required_string(&self, entry: &Map<String, Value>, field: &str) -> Result<String, Diagnostic> {
        match self.optional_string(entry, field)? {
            Some(s) if !s.trim().is_empty() => Ok(s),
            Some(_) => Err(self.fail(field, "must not be empty")),
            None => Err(self.fail(field, "is required")),
        }
    }

    fn string_list(&self, entry: &Map<String, Value>, field: &str) -> Result<Vec<String>, Diagnostic> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => self.expand(&format!("{field}[{i}]"), s),
                    other => {
                        Err(self.fail(&format!("{field}[{i}]"), format!("must be a string, found {}", kind(other))))
                    }
                })
                .collect(),
            Some(other) => Err(self.fail(field, format!("must be an array of strings, found {}", kind(other)))),
        }
    }

    fn string_map(&self, entry: &Map<String, Value>, field: &str) -> Result<BTreeMap<String, String>, Diagnostic> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(key, value)| match value {
                    Value::String(s) => Ok((key.clone(), self.expand(&format!("{field}.{key}"), s)?)),
                    // Numbers and booleans are what was meant ("PORT": 8080).
                    Value::Number(_) | Value::Bool(_) => Ok((key.clone(), value.to_string())),
                    other => {
                        Err(self.fail(&format!("{field}.{key}"), format!("must be a string, found {}", kind(other))))
                    }
                })
                .collect(),
            Some(other) => Err(self.fail(field, format!("must be an object of strings, found {}", kind(other)))),
        }
    }
}

fn resolve(cwd: &Path, dir: &str) -> PathBuf {
    let dir = Path::new(dir);
    if dir.is_absolute() { dir.to_path_buf() } else { cwd.join(dir) }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
