//! Test harness for driving the real `rho` binary over stdio against a real rho-mock-llm server
//! on 127.0.0.1: an isolated agent directory with a models.json pointing at the mock, a scratch
//! working directory, a child process with piped stdio, and redaction of run-dependent values
//! (timestamps, ids, ports, paths) so whole frames can be snapshotted.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

pub mod extensions;
pub mod mcp;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rho_mock_llm::{MockServer, Script, Turn};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// omp's frame bound, which rho keeps under protocol 2 (docs/decisions.md D17).
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;

/// How long to wait for one frame before failing the test.
pub const FRAME_TIMEOUT: Duration = Duration::from_secs(20);

/// A scratch world: agent dir, working dir and a scripted model server.
pub struct Env {
    pub dir: TempDir,
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    pub server: MockServer,
    /// `RHO_EXTENSION_HOST_DIR` for rho (pi's package installed there).
    pub extension_host: Option<PathBuf>,
}

impl Env {
    /// A mock serving `turns` as the provider `mock` (anthropic-messages, model `mock-model`).
    pub async fn new(turns: Vec<Turn>) -> Env {
        Self::with_api(turns, "anthropic-messages", false).await
    }

    /// A mock whose first reply (streamed slowly) writes "TODO", with the project's stream rule
    /// `no-todos` ("No placeholders") on that word, and whose second reply is "Done properly, no
    /// placeholders.": the stream rule fires once.
    pub async fn with_no_todos_rule() -> Env {
        let env = Env::new(vec![
            Turn::text("Sure, I will leave a TODO here and move on with more text")
                .with_chunk_size(4)
                .with_chunk_delay_ms(5),
            Turn::text("Done properly, no placeholders."),
        ])
        .await;
        let rules = env.cwd.join(".rho/rules");
        std::fs::create_dir_all(&rules).unwrap();
        std::fs::write(
            rules.join("no-todos.md"),
            "---\ndescription: No placeholders\ncondition: TODO\n---\nNever leave TODO comments; finish the work.\n",
        )
        .unwrap();
        env
    }

    pub async fn with_api(turns: Vec<Turn>, api: &str, reasoning: bool) -> Env {
        Self::build(turns, api, reasoning, tempfile::tempdir().unwrap()).await
    }

    /// Like [`new`](Self::new), with the home and the project outside `/tmp` (under the build's
    /// own temp folder), for tests where `/tmp` is special (a sandbox lets commands write there).
    pub async fn outside_tmp(turns: Vec<Turn>) -> Env {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        Self::build(turns, "anthropic-messages", false, dir).await
    }

    async fn build(turns: Vec<Turn>, api: &str, reasoning: bool, dir: tempfile::TempDir) -> Env {
        let server = MockServer::start(Script::new(turns)).await.unwrap();
        let agent_dir = dir.path().join("agent");
        let cwd = dir.path().join("work");
        std::fs::create_dir_all(&agent_dir).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        let base_url = match api {
            // pi-messages posts to `{baseUrl}/messages`.
            "anthropic-messages" | "pi-messages" => server.url(),
            "google-generative-ai" => format!("{}/v1beta", server.url()),
            _ => format!("{}/v1", server.url()),
        };
        let models = json!({"providers": {"mock": {
            "baseUrl": base_url,
            "api": api,
            "apiKey": "test-key",
            "models": [
                {"id": "mock-model", "name": "Mock Model", "reasoning": reasoning, "input": ["text", "image"],
                 "contextWindow": 200000, "maxTokens": 8192,
                 "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}},
                {"id": "mock-small", "name": "Mock Small", "reasoning": false,
                 "contextWindow": 1000, "maxTokens": 500}
            ]
        }}});
        std::fs::write(agent_dir.join("models.json"), models.to_string()).unwrap();
        Env { dir, agent_dir, cwd, server, extension_host: None }
    }

    /// Approves the project folder with `rho trust`, as its user would: its MCP servers,
    /// extensions and command settings then run.
    pub fn trust_project(&self) {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_rho"))
            .arg("trust")
            .current_dir(&self.cwd)
            .env("RHO_CODING_AGENT_DIR", &self.agent_dir)
            .env("HOME", self.dir.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "rho trust: {}", String::from_utf8_lossy(&output.stderr));
    }

    /// The session files rho wrote.
    pub fn session_files(&self) -> Vec<PathBuf> {
        let root = self.agent_dir.join("sessions");
        let mut files = Vec::new();
        for dir in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
                if f.path().extension().is_some_and(|e| e == "jsonl") {
                    files.push(f.path());
                }
            }
        }
        files.sort();
        files
    }

    /// The request bodies the mock received.
    pub fn request_bodies(&self) -> Vec<Value> {
        self.server.requests().into_iter().map(|r| r.body).collect()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rho"));
        cmd.args(args);
        self.configure(cmd)
    }

    /// `cmd` set up as [`command`](Self::command) sets up `rho`: this world's agent dir, home,
    /// working dir, no provider keys, no proxy, no session dir of the developer's, piped stdio.
    pub fn configure(&self, mut cmd: Command) -> Command {
        for proxy in
            ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"]
        {
            cmd.env_remove(proxy);
        }
        cmd.env_remove("RHO_CODING_AGENT_SESSION_DIR").env_remove("PI_CODING_AGENT_SESSION_DIR");
        cmd.current_dir(&self.cwd)
            .env("RHO_CODING_AGENT_DIR", &self.agent_dir)
            .env("HOME", self.dir.path())
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_OAUTH_TOKEN")
            .env_remove("OPENAI_API_KEY")
            .env_remove("GEMINI_API_KEY")
            .env_remove("PI_RPC_EMIT_TITLE")
            .env_remove("RHO_EXTENSION_HOST_DIR")
            .env("RHO_NODE", extensions::test_node())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(host) = &self.extension_host {
            cmd.env("RHO_EXTENSION_HOST_DIR", host);
        }
        cmd
    }
}

/// A running `rho --mode rpc`.
pub struct Rho {
    pub child: Child,
    stdin: Option<ChildStdin>,
    frames: mpsc::UnboundedReceiver<String>,
    next_id: u64,
    /// Lines longer than this fail the test.
    max_line: usize,
}

impl Rho {
    /// `rho --mode rpc --model mock/mock-model` plus `args`, past its start-up frames: `ready`,
    /// then omp's first `available_commands_update`.
    pub async fn start(env: &Env, args: &[&str]) -> Rho {
        let mut rho = Self::spawn(env, args).await;
        rho.read_startup().await;
        rho
    }

    async fn read_startup(&mut self) {
        let ready = self.next().await;
        assert_eq!(ready["type"], "ready", "first frame: {ready}");
        let commands = self.next().await;
        assert_eq!(commands["type"], "available_commands_update", "second frame: {commands}");
    }

    /// Like [`start`](Self::start) but leaves the `ready` frame unread.
    pub async fn spawn(env: &Env, args: &[&str]) -> Rho {
        let mut all = vec!["--mode", "rpc"];
        if !args.contains(&"--model") {
            all.extend(["--model", "mock/mock-model"]);
        }
        all.extend_from_slice(args);
        Self::spawn_command(env.command(&all))
    }

    /// Starts `command` (a configured rho, possibly wrapped) and reads past its `ready` frame.
    pub async fn start_command(command: Command) -> Rho {
        let mut rho = Self::spawn_command(command);
        rho.read_startup().await;
        rho
    }

    /// Starts `command` (a configured rho) and leaves every frame unread.
    pub fn spawn_command(mut command: Command) -> Rho {
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let stdin = child.stdin.take();
        let (tx, frames) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Rho { child, stdin, frames, next_id: 0, max_line: usize::MAX }
    }

    /// Fails the test on any line longer than `max` bytes from now on.
    pub fn bound_lines(&mut self, max: usize) {
        self.max_line = max;
    }

    pub async fn send(&mut self, frame: Value) {
        let mut line = frame.to_string();
        line.push('\n');
        self.send_raw(line.as_bytes()).await;
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Closes stdin (EOF for rho).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next stdout line, parsed, and checked against the protocol's checked-in schema.
    pub async fn next(&mut self) -> Value {
        let line = self.next_line().await;
        let frame = serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        check_outbound(&frame);
        frame
    }

    /// The next raw stdout line, never longer than the bound the test set with
    /// [`bound_lines`](Self::bound_lines) (docs/decisions.md D17).
    pub async fn next_line(&mut self) -> String {
        match tokio::time::timeout(FRAME_TIMEOUT, self.frames.recv()).await {
            Ok(Some(line)) => {
                assert!(line.len() <= self.max_line, "a {} byte line from rho: {:.200}", line.len(), line);
                line
            }
            Ok(None) => panic!("rho closed stdout"),
            Err(_) => panic!("no frame from rho within {FRAME_TIMEOUT:?}"),
        }
    }

    /// Frames up to and including the first one `stop` accepts.
    pub async fn until(&mut self, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut frames = Vec::new();
        loop {
            let frame = self.next().await;
            let done = stop(&frame);
            frames.push(frame);
            if done {
                return frames;
            }
        }
    }

    /// Frames up to and including the next `agent_end`.
    pub async fn until_agent_end(&mut self) -> Vec<Value> {
        self.until(|f| f["type"] == "agent_end").await
    }

    /// Sends `command` with a fresh id and returns its response (frames before it are dropped).
    pub async fn request(&mut self, mut command: Value) -> Value {
        self.next_id += 1;
        let id = format!("req_{}", self.next_id);
        command["id"] = json!(id);
        self.send(command).await;
        let frames = self.until(|f| f["type"] == "response" && f["id"] == json!(id)).await;
        frames.into_iter().last().unwrap()
    }

    /// The `data` of a successful response to `command`.
    pub async fn data(&mut self, command: Value) -> Value {
        let response = self.request(command).await;
        assert_eq!(response["success"], true, "{response}");
        response["data"].clone()
    }

    /// Waits for the process to end (after stdin was closed).
    pub async fn wait(&mut self) -> std::process::ExitStatus {
        tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await.expect("rho exits").unwrap()
    }

    /// Everything left on stdout after exit.
    pub async fn rest(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        while let Ok(Some(line)) = tokio::time::timeout(Duration::from_secs(5), self.frames.recv()).await {
            lines.push(line);
        }
        lines
    }
}

/// Fails the test when `frame` is not an outbound frame of `rho-rpc/schema/rpc-protocol.schema.json`,
/// or not one rho-rpc's own types read.
pub fn check_outbound(frame: &Value) {
    static OUTBOUND: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = OUTBOUND.get_or_init(|| {
        let mut schema: Value =
            serde_json::from_str(include_str!("../../../rho-rpc/schema/rpc-protocol.schema.json")).unwrap();
        // Validate against the outbound half only.
        schema["anyOf"] = json!([{"$ref": "#/$defs/Outbound"}]);
        jsonschema::validator_for(&schema).unwrap()
    });
    if let Err(error) = validator.validate(frame) {
        panic!("a frame outside the protocol schema ({error} at {}): {frame:.300}", error.instance_path());
    }
    // The schema leaves messages open; the typed reading a Rust host does checks them too.
    if let Err(error) = rho_rpc::OutFrame::from_value(frame.clone()) {
        panic!("a frame rho-rpc's types cannot read ({error}): {frame:.300}");
    }
}

/// Each message of a request body (Anthropic's wire form) as its role and its text (the text
/// blocks joined).
pub fn message_texts(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                blocks => blocks.as_array().unwrap().iter().filter_map(|b| b["text"].as_str()).collect(),
            };
            (m["role"].as_str().unwrap().to_owned(), text)
        })
        .collect()
}

/// Replaces run-dependent values: timestamps and durations by 0, ids by `[id]`, paths, URLs and
/// the prompt's date by placeholders.
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        (
                            "timestamp" | "duration" | "ttft" | "durationMs" | "startedAt" | "endedAt",
                            Value::Number(_),
                        ) => {
                            json!(0)
                        }
                        ("timestamp", Value::String(_)) => json!("[time]"),
                        (
                            "id" | "toolCallId" | "responseId" | "sessionId" | "entryId" | "parentId"
                            | "firstKeptEntryId" | "targetId" | "leafId" | "version",
                            Value::String(_),
                        ) => json!("[id]"),
                        (
                            "sessionFile" | "baseUrl" | "path" | "cwd" | "fullOutputPath" | "baseDir",
                            Value::String(_),
                        ) => {
                            json!("[path]")
                        }
                        ("systemPrompt", Value::String(_)) => json!("[system prompt]"),
                        // The date section of a declared system prompt.
                        ("date", Value::String(_)) => json!("[date]"),
                        _ => redact(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        other => other.clone(),
    }
}

/// The frame types, in order.
pub fn types(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .map(|f| match f["type"].as_str() {
            Some("message_update") => {
                format!("message_update:{}", f["assistantMessageEvent"]["type"].as_str().unwrap())
            }
            Some("response") => format!("response:{}", f["command"].as_str().unwrap_or("?")),
            Some(t) => t.to_owned(),
            None => "?".into(),
        })
        .collect()
}

/// Reads a session file as JSON lines.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Whether `pid` is a live process (a zombie is not).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

/// Whether `check` holds within 10 s (polled every 20 ms).
pub async fn eventually(check: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !check() {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// An access token as ChatGPT's login issues one: a JWT whose claims name the account.
pub fn chatgpt_token(account: &str) -> String {
    use base64::Engine;
    let encode = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let claims = json!({"https://api.openai.com/auth": {"chatgpt_account_id": account}});
    format!("{}.{}.sig", encode(json!({"alg": "RS256"})), encode(claims))
}

/// The text of each `tool_execution_end` in `frames` (its first content block), with whether it
/// is an error.
pub fn tool_results(frames: &[Value]) -> Vec<(String, bool)> {
    frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .map(|f| (f["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned(), f["isError"] == true))
        .collect()
}

/// A loopback port that refuses connections for as long as the returned socket lives: bound and
/// never listening, so no other test's server can take the port meanwhile (as one freed right
/// away could be).
pub fn refusing_port() -> (std::os::fd::OwnedFd, u16) {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, SockaddrIn, bind, getsockname, socket};
    let fd = socket(AddressFamily::Inet, SockType::Stream, SockFlag::SOCK_CLOEXEC, None).unwrap();
    bind(std::os::fd::AsRawFd::as_raw_fd(&fd), &SockaddrIn::new(127, 0, 0, 1, 0)).unwrap();
    let bound: SockaddrIn = getsockname(std::os::fd::AsRawFd::as_raw_fd(&fd)).unwrap();
    (fd, bound.port())
}
