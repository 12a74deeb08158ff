//! A scripted stand-in for `rho --mode rpc`, used by the client's integration tests (it is a
//! test fixture, not a product). It reads stdin with rho-rpc's own `parse_line` and answers
//! with canned frames; the `prompt` message picks a scenario:
//!
//! | message      | what happens after the acknowledgement                                        |
//! |--------------|-------------------------------------------------------------------------------|
//! | `hello`      | `agent_start`, `message_start`, `agent_end`                                   |
//! | `tool`       | `host_tool_call` for `echo`; updates are echoed as `tool_execution_update`,  |
//! |              | the result as `tool_execution_end`                                            |
//! | `unknown tool` / `bad args` | a call the host cannot run (unregistered tool / array arguments) |
//! | `cancel`     | a call for `slow`; after its first update, `host_tool_cancel`                 |
//! | `ui`         | a `confirm` dialog, a `notify`, an `editor` dialog that is then withdrawn     |
//! | `late`       | a late `prompt` error with the same id, and no run                            |
//! | `garbage`    | a line that is not JSON, a frame of unknown type, then a normal run          |
//!
//! Other commands: `get_state` answers a small state; `compact` fails like a handler exception
//! (id-less `parse` frame); `clone` is unknown the way reference servers answer it (no id);
//! `set_host_tools` echoes the names; `get_messages` answers `{"received":[…]}`, every line
//! read so far; `bash` with `hang` is never answered, with `exit` writes to stderr and exits 3.
//!
//! Flags: `--no-ready` (never write `ready`), `--exit-before-ready` (stderr message, exit 1),
//! `--ignore-eof` (keep running after stdin closes, with a child in the same process group),
//! `--sleep` (just sleep: that child).

use std::io::{self, BufRead, Write};
use std::process::{Command, ExitCode};
use std::time::Duration;

use rho_rpc::{HostToolCall, HostToolCancel, Inbound, Ready, RpcCommand, RpcResponse, UiMethod, UiRequest, parse_line};
use serde::Serialize;
use serde_json::{Map, Value, json};

struct Server {
    input: io::StdinLock<'static>,
    received: Vec<Value>,
    exit_on_eof: bool,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    if flag("--sleep") {
        std::thread::sleep(Duration::from_secs(600));
        return ExitCode::SUCCESS;
    }
    if flag("--exit-before-ready") {
        eprintln!("Unknown provider: nowhere");
        return ExitCode::from(1);
    }
    let mut server = Server { input: io::stdin().lock(), received: Vec::new(), exit_on_eof: !flag("--ignore-eof") };
    if !server.exit_on_eof {
        // A child in our process group, for the test that the client kills the whole group.
        if let Ok(exe) = std::env::current_exe()
            && let Ok(child) = Command::new(exe).arg("--sleep").spawn()
        {
            eprintln!("sleeper pid {}", child.id());
        }
    }
    let result = (|| {
        if !flag("--no-ready") {
            write(&Ready::version("fake-1"))?;
        }
        server.serve()
    })();
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fake server: {e}");
            ExitCode::from(2)
        }
    }
}

fn write<T: Serialize>(frame: &T) -> io::Result<()> {
    let mut line = serde_json::to_vec(frame)?;
    line.push(b'\n');
    let mut out = io::stdout().lock();
    out.write_all(&line)?;
    out.flush()
}

fn write_raw(line: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}

impl Server {
    fn serve(&mut self) -> io::Result<ExitCode> {
        while let Some(inbound) = self.next()? {
            if let Inbound::Command { id, command } = inbound {
                if let Some(code) = self.command(id, command)? {
                    return Ok(code);
                }
            } else if let Inbound::Invalid(response) = inbound {
                write(&response)?;
            }
        }
        if !self.exit_on_eof {
            std::thread::sleep(Duration::from_secs(600));
        }
        Ok(ExitCode::SUCCESS)
    }

    /// The next non-blank inbound line, logged; `None` at end of input.
    fn next(&mut self) -> io::Result<Option<Inbound>> {
        loop {
            let mut line = Vec::new();
            if self.input.read_until(b'\n', &mut line)? == 0 {
                return Ok(None);
            }
            let line = line.strip_suffix(b"\n").unwrap_or(&line);
            let inbound = parse_line(line);
            if inbound == Inbound::Blank {
                continue;
            }
            let logged = serde_json::from_slice(line).unwrap_or_else(|_| json!(String::from_utf8_lossy(line)));
            self.received.push(logged);
            return Ok(Some(inbound));
        }
    }

    /// Reads until `done` says the awaited frame came, answering `get_messages` meanwhile.
    fn wait(&mut self, mut done: impl FnMut(&Inbound) -> io::Result<bool>) -> io::Result<()> {
        while let Some(inbound) = self.next()? {
            if done(&inbound)? {
                return Ok(());
            }
        }
        Err(io::Error::new(io::ErrorKind::UnexpectedEof, "stdin closed while waiting"))
    }

    fn command(&mut self, id: Option<Value>, command: RpcCommand) -> io::Result<Option<ExitCode>> {
        let name = command.name();
        match command {
            RpcCommand::Prompt { message, .. } => {
                write(&RpcResponse::ok(id.clone(), name))?;
                self.scenario(id, &message)?;
            }
            RpcCommand::GetState => write(&RpcResponse::with_data(id, name, json!({"sessionId": "fake-session"})))?,
            RpcCommand::Compact { .. } => {
                write(&RpcResponse::parse_error("Nothing to compact (session too small)".into()))?;
            }
            RpcCommand::Clone => write(&RpcResponse::unknown(None, Some(name.into())))?,
            RpcCommand::SetHostTools { tools } => {
                let names: Vec<Value> =
                    tools.as_array().into_iter().flatten().filter_map(|t| t.get("name")).cloned().collect();
                write(&RpcResponse::with_data(id, name, json!({ "toolNames": names })))?;
            }
            RpcCommand::GetMessages => {
                write(&RpcResponse::with_data(id, name, json!({ "received": self.received })))?;
            }
            RpcCommand::Bash { command, .. } if command == "hang" => {}
            RpcCommand::Bash { command, .. } if command == "exit" => {
                eprintln!("fatal: out of cheese");
                return Ok(Some(ExitCode::from(3)));
            }
            _ => write(&RpcResponse::ok(id, name))?,
        }
        Ok(None)
    }

    fn scenario(&mut self, id: Option<Value>, message: &str) -> io::Result<()> {
        match message {
            "hello" => {
                event(json!({"type": "agent_start"}))?;
                let user = json!({"role": "user", "content": "hello", "timestamp": 1});
                event(json!({"type": "message_start", "message": user}))?;
                agent_end()
            }
            "tool" => self.tool_call("host_1", "echo", json!({"message": "hi"})),
            "unknown tool" => self.tool_call("host_2", "missing", json!({})),
            "bad args" => self.tool_call("host_3", "echo", json!([1, 2])),
            "cancel" => self.cancelled_call(),
            "ui" => self.dialogs(),
            "late" => {
                let error =
                    "Agent is already processing. Use steer() or followUp() to queue messages, or wait for completion.";
                write(&RpcResponse::error(id, "prompt", error))
            }
            "garbage" => {
                write_raw("this is not json")?;
                write_raw(r#"{"type":"mystery","x":1}"#)?;
                event(json!({"type": "agent_start"}))?;
                agent_end()
            }
            _ => agent_end(),
        }
    }

    fn tool_call(&mut self, call_id: &str, tool: &str, arguments: Value) -> io::Result<()> {
        event(json!({"type": "agent_start"}))?;
        write_raw(&json!({"type": "host_tool_call", "id": call_id, "toolCallId": "toolu_1", "toolName": tool, "arguments": arguments}).to_string())?;
        let tool_event = |ty: &str, extra: Map<String, Value>| {
            let mut frame = json!({"type": ty, "toolCallId": "toolu_1", "toolName": tool});
            if let Value::Object(map) = &mut frame {
                map.extend(extra);
            }
            event(frame)
        };
        self.wait(|inbound| match inbound {
            Inbound::HostToolUpdate(u) if u.id == call_id => {
                let mut extra = Map::new();
                extra.insert("args".into(), json!({}));
                extra.insert("partialResult".into(), Value::Object(u.partial_result.clone()));
                tool_event("tool_execution_update", extra).map(|()| false)
            }
            Inbound::HostToolResult(r) if r.id == call_id => {
                let mut extra = Map::new();
                extra.insert("result".into(), Value::Object(r.result.clone()));
                extra.insert("isError".into(), json!(r.is_error.unwrap_or(false)));
                tool_event("tool_execution_end", extra).map(|()| true)
            }
            _ => Ok(false),
        })?;
        agent_end()
    }

    fn cancelled_call(&mut self) -> io::Result<()> {
        event(json!({"type": "agent_start"}))?;
        let call = HostToolCall {
            id: "host_9".into(),
            tool_call_id: "toolu_9".into(),
            tool_name: "slow".into(),
            arguments: Map::new(),
        };
        write(&call)?;
        self.wait(|inbound| Ok(matches!(inbound, Inbound::HostToolUpdate(u) if u.id == "host_9")))?;
        write(&HostToolCancel { id: "host_cancel_1".into(), target_id: "host_9".into() })?;
        agent_end()
    }

    fn dialogs(&mut self) -> io::Result<()> {
        let confirm = UiMethod::Confirm { title: "Deploy".into(), message: "Continue?".into(), timeout: None };
        write(&UiRequest { id: "ui_1".into(), method: confirm })?;
        let notify = UiMethod::Notify { message: "Working".into(), notify_type: None };
        write(&UiRequest { id: "ui_2".into(), method: notify })?;
        let editor = UiMethod::Editor { title: "Edit".into(), prefill: None, prompt_style: None };
        write(&UiRequest { id: "ui_3".into(), method: editor })?;
        self.wait(|inbound| Ok(matches!(inbound, Inbound::UiResponse(r) if r.id == "ui_1")))?;
        write(&UiRequest { id: "ui_4".into(), method: UiMethod::Cancel { target_id: "ui_3".into() } })?;
        agent_end()
    }
}

fn event(frame: Value) -> io::Result<()> {
    write(&frame)
}

fn agent_end() -> io::Result<()> {
    event(json!({"type": "agent_end", "messages": []}))
}
