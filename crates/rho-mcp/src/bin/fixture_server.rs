//! rho-mcp's fixture: a real MCP server over stdio (rmcp's server side) with one tool per
//! behaviour the client must handle. The tests and the start-up benchmark run it as a child,
//! exactly as rho runs any stdio server. Not shipped: rho never starts it on its own.
//!
//! Arguments: `--startup-ms N` waits before serving (a slow server), `--fail-start` writes to
//! stderr and exits at once (a broken one). `FIXTURE_DIR` (env) is where `slow` leaves its
//! `slow-started` / `slow-cancelled` markers, every start appends its pid to `starts` and every
//! `tools/list` a line to `lists`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, InitializeResult, JsonObject, ListPromptsResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ResourceContents, Role, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// A 3000×20 red PNG, wider than models take (the `image` tool's, with `wide: true`).
const WIDE_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAC7gAAAAUCAIAAACSrudBAAAA6UlEQVR42u3aQQ0AAAyEMPyb3nxcmlQBb7oCAAAAAAAAAIB5EgAAAAAAAAAAYJQBAAAAAAAAAACjDAAAAAAAAAAAGGUAAAAAAAAAAMAoAwAAAAAAAAAARhkAAAAAAAAAADDKAAAAAAAAAACAUQYAAAAAAAAAAIwyAAAAAAAAAAAYZQAAAAAAAAAAwCgDAAAAAAAAAABGGQAAAAAAAAAAMMoAAAAAAAAAAIBRBgAAAAAAAAAAjDIAAAAAAAAAAGCUAQAAAAAAAAAAowwAAAAAAAAAABhlAAAAAAAAAAAwygAAAAAAAAAAwLgHJYaDSI0JrwsAAAAASUVORK5CYII=";

/// A 1×1 PNG.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[derive(Clone)]
struct Fixture {
    dir: Option<PathBuf>,
    late_tool: Arc<AtomicBool>,
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn string_arg(name: &str) -> Arc<JsonObject> {
    schema(json!({"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}))
}

impl Fixture {
    fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            Tool::new("echo", "Echoes its text.", string_arg("text")),
            Tool::new(
                "add",
                "Adds two numbers; the sum as text and as structured content.",
                schema(
                    json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
                ),
            ),
            Tool::new("structured_only", "Structured content and no text block.", schema(json!({"type": "object"}))),
            Tool::new("fail", "Reports an error (isError).", string_arg("message")),
            Tool::new("image", "A 1x1 PNG and a caption.", schema(json!({"type": "object", "properties": {}}))),
            Tool::new(
                "resources",
                "An embedded text resource and a blob.",
                schema(json!({"type": "object", "properties": {}})),
            ),
            Tool::new("empty", "Returns no content at all.", schema(json!({"type": "object", "properties": {}}))),
            Tool::new(
                "slow",
                "Waits `ms` milliseconds, noting whether it was cancelled.",
                schema(json!({"type": "object", "properties": {"ms": {"type": "number"}}, "required": ["ms"]})),
            ),
            Tool::new(
                "add_tool",
                "Adds the tool `late` and notifies tools/list_changed.",
                schema(json!({"type": "object", "properties": {}})),
            ),
            Tool::new(
                "big",
                "Returns `lines` lines of text (`row 1` …).",
                schema(json!({"type": "object", "properties": {"lines": {"type": "number"}}, "required": ["lines"]})),
            ),
            Tool::new(
                "notify_many",
                "Sends tools/list_changed `count` times in a row.",
                schema(json!({"type": "object", "properties": {"count": {"type": "number"}}, "required": ["count"]})),
            ),
            Tool::new(
                "exit",
                "Exits the server process without answering.",
                schema(json!({"type": "object", "properties": {}})),
            ),
            Tool::new("env", "The value of an environment variable.", string_arg("name")),
            Tool::new("cwd", "The working directory.", schema(json!({"type": "object", "properties": {}}))),
            Tool::new("stderr", "Writes its text to stderr.", string_arg("text")),
            Tool::new_with_raw("no.description/odd name", None, schema(json!({"properties": {}}))),
        ];
        if self.late_tool.load(Ordering::SeqCst) {
            tools.push(Tool::new("late", "Added by add_tool.", schema(json!({"type": "object", "properties": {}}))));
        }
        tools
    }

    fn mark(&self, name: &str) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::write(dir.join(name), b"");
        }
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let number = |key: &str| args.get(key).and_then(Value::as_f64).unwrap_or_default();
        Ok(match request.name.as_ref() {
            "echo" => CallToolResult::success(vec![ContentBlock::text(text("text"))]),
            "add" => {
                let sum = number("a") + number("b");
                let mut result = CallToolResult::success(vec![ContentBlock::text(format!("{sum}"))]);
                result.structured_content = Some(json!({"sum": sum}));
                result
            }
            "structured_only" => {
                let mut result = CallToolResult::success(Vec::new());
                result.structured_content = Some(json!({"ok": true, "items": [1, 2]}));
                result
            }
            "fail" => CallToolResult::error(vec![ContentBlock::text(text("message"))]),
            "image" if args.get("wide").and_then(Value::as_bool) == Some(true) => CallToolResult::success(vec![
                ContentBlock::text("a wide line"),
                ContentBlock::image(WIDE_PNG, "image/png"),
            ]),
            "image" => CallToolResult::success(vec![
                ContentBlock::text("a pixel"),
                ContentBlock::image(PIXEL_PNG, "image/png"),
            ]),
            "resources" => CallToolResult::success(vec![
                ContentBlock::resource(ResourceContents::text("file contents", "file:///notes.txt")),
                ContentBlock::resource(ResourceContents::blob("AAECAwQF", "file:///data.bin")),
            ]),
            "empty" => CallToolResult::success(Vec::new()),
            "slow" => {
                self.mark("slow-started");
                tokio::select! {
                    _ = context.ct.cancelled() => {
                        self.mark("slow-cancelled");
                        CallToolResult::error(vec![ContentBlock::text("cancelled")])
                    }
                    _ = tokio::time::sleep(Duration::from_secs_f64(number("ms") / 1000.0)) => {
                        CallToolResult::success(vec![ContentBlock::text("done")])
                    }
                }
            }
            "add_tool" => {
                self.late_tool.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                CallToolResult::success(vec![ContentBlock::text("added")])
            }
            "big" => {
                let text: String = (1..=number("lines") as u64).map(|i| format!("row {i}\n")).collect();
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            "notify_many" => {
                for _ in 0..number("count") as u64 {
                    let _ = context.peer.notify_tool_list_changed().await;
                }
                CallToolResult::success(vec![ContentBlock::text("notified")])
            }
            "exit" => std::process::exit(3),
            "env" => CallToolResult::success(vec![ContentBlock::text(std::env::var(text("name")).unwrap_or_default())]),
            "cwd" => CallToolResult::success(vec![ContentBlock::text(
                std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default(),
            )]),
            "stderr" => {
                let _ = writeln!(std::io::stderr(), "{}", text("text"));
                CallToolResult::success(vec![ContentBlock::text("written")])
            }
            "late" | "no.description/odd name" => {
                CallToolResult::success(vec![ContentBlock::text(request.name.to_string())])
            }
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        })
    }
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        let capabilities =
            ServerCapabilities::builder().enable_tools().enable_tool_list_changed().enable_prompts().build();
        InitializeResult::new(capabilities).with_server_info(Implementation::new("rho-mcp-fixture", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Some(dir) = &self.dir
            && let Ok(mut lists) = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("lists"))
        {
            let _ = lists.write_all(b"list\n");
        }
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await.map(CallToolResponse::from)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let argument = PromptArgument::new("name").with_description("Who to greet").with_required(true);
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new("greet", Some("Greets someone."), Some(vec![argument]))]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = request.arguments.as_ref().and_then(|a| a.get("name")).and_then(Value::as_str).unwrap_or("nobody");
        let messages = vec![
            PromptMessage::new_text(Role::User, format!("Say hello to {name}.")),
            PromptMessage::new_text(Role::Assistant, format!("Hello, {name}!")),
        ];
        Ok(GetPromptResult::new(messages).into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::env::var_os("FIXTURE_DIR").map(PathBuf::from);
    if let Some(dir) = &dir {
        let mut starts = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("starts"))?;
        // One write: servers started together append to the same file, and `writeln!` may
        // write the number and the newline separately, interleaving them.
        starts.write_all(format!("{}\n", std::process::id()).as_bytes())?;
    }
    if args.iter().any(|a| a == "--fail-start") {
        writeln!(std::io::stderr(), "fixture: failing on purpose")?;
        std::process::exit(2);
    }
    if let Some(ms) = args.iter().position(|a| a == "--startup-ms").and_then(|i| args.get(i + 1)) {
        tokio::time::sleep(Duration::from_millis(ms.parse()?)).await;
    }
    let fixture = Fixture { dir, late_tool: Arc::new(AtomicBool::new(false)) };
    let service = fixture.serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}
