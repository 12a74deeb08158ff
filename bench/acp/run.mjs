// End-to-end check of `rho --mode acp` with the official TypeScript SDK's client
// (@agentclientprotocol/sdk, stable ACP v1), against rho-mock-llm serving bench/acp/script.json.
//
// The client is an editor: it offers fs/read_text_file and fs/write_text_file from buffers of
// its own, and checks: initialize; session/new (config options, modes); a prompt of text, a
// resource link, an embedded resource and an image (what the model got, from the mock's record),
// whose run writes the plan and reads and edits a file through the editor's buffers (tool calls
// with kind, location, status and the edit's diff; message chunks; end_turn); the `ask` mode
// (session/set_mode), where a bash call is rejected and a write allowed through
// session/request_permission; a bash call run in the editor's terminal (terminal/create,
// wait_for_exit, output, release; the tool call shows the terminal); session/cancel of a
// slow run (cancelled); and session/load of the saved session in a second rho process (the
// history replayed before the answer, then the session goes on).
//
// Inputs (environment): RHO_BIN (the rho binary), MOCK_URL (a running rho-mock-llm with the
// script), MOCK_RECORD (its --record file), ACP_SDK (a directory whose node_modules holds the
// SDK). bench/acp/run.sh sets them; so does the Rust test crates/rho-cli/tests/acp_sdk.rs.
// Prints one line per check and "N passed, N failed"; exits non-zero when a check failed.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`run.mjs: ${name} is not set (run bench/acp/run.sh)`);
    process.exit(2);
  }
  return value;
}
const rhoBin = resolve(required("RHO_BIN"));
const mockUrl = required("MOCK_URL");
const mockRecord = resolve(required("MOCK_RECORD"));
const sdkDir = resolve(required("ACP_SDK"));
const sdkEntry = createRequire(join(sdkDir, "package.json")).resolve("@agentclientprotocol/sdk");
const { client, methods, ndJsonStream, PROTOCOL_VERSION } = await import(pathToFileURL(sdkEntry).href);

const results = { passed: 0, failed: 0 };
async function check(name, fn) {
  try {
    await fn();
    results.passed += 1;
    console.log(`ok   ${name}`);
  } catch (e) {
    results.failed += 1;
    console.log(`FAIL ${name}\n     ${String(e?.stack ?? e).split("\n").join("\n     ")}`);
  }
}

/** The request bodies the model server received, in order. */
const modelRequests = () =>
  readFileSync(mockRecord, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line).body);

// A scratch world: an agent dir whose models.json points at the mock, a working directory.
const world = mkdtempSync(join(tmpdir(), "rho-acp-"));
const agentDir = join(world, "agent");
const cwd = join(world, "work");
mkdirSync(agentDir, { recursive: true });
mkdirSync(cwd, { recursive: true });
writeFileSync(join(cwd, "a.txt"), "on disk\n");
writeFileSync(join(cwd, "linked.md"), "# Linked notes\n");
writeFileSync(
  join(agentDir, "models.json"),
  JSON.stringify({
    providers: {
      mock: {
        baseUrl: mockUrl,
        api: "anthropic-messages",
        apiKey: "test-key",
        models: [
          { id: "mock-model", name: "Mock Model", reasoning: false, input: ["text", "image"], contextWindow: 200000, maxTokens: 8192 },
        ],
      },
    },
  }),
);

/** Starts `rho --mode acp`, connects the SDK client and runs `body(ctx, editor)`. */
async function withRho(body) {
  const rho = spawn(rhoBin, ["--mode", "acp", "--model", "mock/mock-model", "--setting", "todo.reminders=false"], {
    cwd,
    env: { ...process.env, RHO_CODING_AGENT_DIR: agentDir, HOME: world, ANTHROPIC_API_KEY: "" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const editor = {
    buffers: new Map(),
    requests: [],
    updates: [],
    permissionAnswers: [],
    permissionRequests: [],
    terminals: new Map(),
  };
  const terminal = (id) => {
    const found = editor.terminals.get(id);
    if (!found) throw new Error(`no terminal ${id}`);
    return found;
  };
  const app = client({ name: "rho-acp-e2e" })
    .onNotification(methods.client.session.update, ({ params }) => {
      editor.updates.push(params.update);
    })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      editor.requests.push(`read ${params.path}`);
      const content = editor.buffers.get(params.path);
      if (content === undefined) throw new Error(`no buffer for ${params.path}`);
      return { content };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      editor.requests.push(`write ${params.path}`);
      editor.buffers.set(params.path, params.content);
      return {};
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      editor.permissionRequests.push(params);
      const optionId = editor.permissionAnswers.shift();
      return { outcome: optionId ? { outcome: "selected", optionId } : { outcome: "cancelled" } };
    })
    .onRequest(methods.client.terminal.create, ({ params }) => {
      editor.requests.push(`terminal/create ${params.command} ${(params.args ?? []).join(" ")}`);
      const env = { ...process.env, ...Object.fromEntries((params.env ?? []).map((v) => [v.name, v.value])) };
      const child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? cwd, env, stdio: ["ignore", "pipe", "pipe"] });
      const term = { child, output: "", exit: undefined };
      child.stdout.on("data", (d) => (term.output += d));
      child.stderr.on("data", (d) => (term.output += d));
      term.exited = new Promise((ok) =>
        child.on("close", (code, signal) => ok((term.exit = { exitCode: code ?? undefined, signal: signal ?? undefined }))),
      );
      const terminalId = `term-${editor.terminals.size}`;
      editor.terminals.set(terminalId, term);
      return { terminalId };
    })
    .onRequest(methods.client.terminal.output, ({ params }) => {
      editor.requests.push("terminal/output");
      const term = terminal(params.terminalId);
      return { output: term.output, truncated: false, exitStatus: term.exit };
    })
    .onRequest(methods.client.terminal.waitForExit, async ({ params }) => {
      editor.requests.push("terminal/wait_for_exit");
      return await terminal(params.terminalId).exited;
    })
    .onRequest(methods.client.terminal.kill, ({ params }) => {
      editor.requests.push("terminal/kill");
      terminal(params.terminalId).child.kill("SIGKILL");
      return {};
    })
    .onRequest(methods.client.terminal.release, ({ params }) => {
      editor.requests.push("terminal/release");
      terminal(params.terminalId).child.kill("SIGKILL");
      editor.terminals.delete(params.terminalId);
      return {};
    });
  const stream = ndJsonStream(Writable.toWeb(rho.stdin), Readable.toWeb(rho.stdout));
  const exited = new Promise((ok) => rho.once("exit", (code) => ok(code)));
  try {
    await app.connectWith(stream, (ctx) => body(ctx, editor));
  } finally {
    rho.stdin.end();
  }
  return exited;
}

const initialize = (ctx) =>
  ctx.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
  });

const ofKind = (updates, kind) => updates.filter((u) => u.sessionUpdate === kind);
const chunkText = (updates, kind) =>
  ofKind(updates, kind)
    .map((u) => u.content.text)
    .join("");

let sessionId;
const code = await withRho(async (ctx, editor) => {
  await check("initialize", async () => {
    const init = await initialize(ctx);
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.agentInfo.name, "rho");
    assert.equal(init.agentCapabilities.loadSession, true);
    assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
    assert.equal(init.agentCapabilities.promptCapabilities.image, true);
    // The subscription logins, each run by the editor in a terminal as `rho login <provider>`.
    assert.deepEqual(
      init.authMethods.map((m) => [m.type, m.id, m.args.join(" ")]),
      [
        ["terminal", "login-anthropic", "login anthropic"],
        ["terminal", "login-github-copilot", "login github-copilot"],
        ["terminal", "login-kimi-coding", "login kimi-coding"],
        ["terminal", "login-meta", "login meta"],
        ["terminal", "login-openai", "login openai"],
        ["terminal", "login-openai-codex", "login openai-codex"],
        ["terminal", "login-openrouter", "login openrouter"],
        ["terminal", "login-radius", "login radius"],
        ["terminal", "login-xai", "login xai"],
      ],
    );
  });
  await check("session/new", async () => {
    const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
    sessionId = session.sessionId;
    assert.equal(session.configOptions[0].id, "model");
    assert.equal(session.configOptions[0].currentValue, "mock/mock-model");
    assert.equal(session.modes.currentModeId, "auto");
    assert.deepEqual(session.modes.availableModes.map((m) => m.id), ["auto", "ask"]);
  });
  await check("session/prompt: text, a resource link, an embedded resource and an image", async () => {
    const file = join(cwd, "a.txt");
    editor.buffers.set(file, "unsaved buffer\n");
    const response = await ctx.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: "text", text: "Edit a.txt, see" },
        { type: "resource_link", name: "linked.md", uri: pathToFileURL(join(cwd, "linked.md")).href },
        { type: "resource", resource: { uri: pathToFileURL(join(cwd, "open.rs")).href, text: "fn open() {}", mimeType: "text/x-rust" } },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      ],
    });
    assert.equal(response.stopReason, "end_turn");
    const first = JSON.stringify(modelRequests()[0].messages.at(-1));
    assert.ok(first.includes("Edit a.txt, see"), first);
    assert.ok(first.includes("# Linked notes"), first);
    assert.ok(first.includes(`<file name=\\"${join(cwd, "open.rs")}\\">\\nfn open() {}`), first);
    assert.ok(first.includes("iVBORw0KGgo="), first);
  });
  await check("the run's updates: plan, tool calls through the editor's buffers with a diff, text", async () => {
    const file = join(cwd, "a.txt");
    assert.deepEqual(editor.requests, [`read ${file}`, `read ${file}`, `write ${file}`]);
    assert.equal(editor.buffers.get(file), "edited buffer\n");
    assert.equal(readFileSync(file, "utf8"), "on disk\n");
    const kinds = editor.updates.map((u) => u.sessionUpdate);
    assert.ok(kinds.includes("available_commands_update"), kinds.join());
    const plan = ofKind(editor.updates, "plan").at(-1);
    assert.deepEqual(
      plan.entries.map((e) => [e.content, e.status]),
      [["Read the files", "completed"], ["Edit a.txt", "in_progress"]],
    );
    const calls = ofKind(editor.updates, "tool_call");
    assert.deepEqual(
      calls.map((c) => [c.kind, c.title, c.status ?? "pending"]),
      [["think", "Update the todo list", "pending"], ["read", "Read a.txt", "pending"], ["edit", "Edit a.txt", "pending"]],
    );
    assert.equal(calls[2].locations[0].path, file);
    const statuses = (id) => ofKind(editor.updates, "tool_call_update").filter((u) => u.toolCallId === id && u.status).map((u) => u.status);
    for (const call of calls) assert.deepEqual(statuses(call.toolCallId), ["in_progress", "completed"], call.title);
    const done = ofKind(editor.updates, "tool_call_update").filter((u) => u.toolCallId === calls[2].toolCallId && u.status === "completed")[0];
    const diff = done.content.find((c) => c.type === "diff");
    assert.deepEqual([diff.path, diff.oldText, diff.newText], [file, "unsaved", "edited"]);
    assert.equal(chunkText(editor.updates, "agent_message_chunk"), "All done.");
  });
  await check("session/set_mode ask: session/request_permission before bash and write", async () => {
    editor.updates.length = 0;
    await ctx.request(methods.agent.session.setMode, { sessionId, modeId: "ask" });
    editor.permissionAnswers.push("reject", "allow");
    const response = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Try" }] });
    assert.equal(response.stopReason, "end_turn");
    const asked = editor.permissionRequests.map((r) => [r.toolCall.title, r.options.map((o) => o.kind).join()]);
    assert.deepEqual(asked, [
      ["`touch rejected.txt`", "allow_once,allow_always,reject_once"],
      ["Write allowed.txt", "allow_once,allow_always,reject_once"],
    ]);
    assert.equal(editor.buffers.get(join(cwd, "allowed.txt")), "allowed");
    assert.equal(existsSync(join(cwd, "rejected.txt")), false);
    const failed = ofKind(editor.updates, "tool_call_update").filter((u) => u.status === "failed");
    assert.equal(failed.length, 1);
    assert.ok(failed[0].content[0].content.text.includes("The user rejected this bash call"), JSON.stringify(failed[0]));
    const next = JSON.stringify(modelRequests().at(-2).messages.at(-1));
    assert.ok(next.includes("The user rejected this bash call"), next);
    await ctx.request(methods.agent.session.setMode, { sessionId, modeId: "auto" });
  });
  await check("bash runs in the editor's terminal (terminal/*), which the tool call shows", async () => {
    editor.updates.length = 0;
    editor.requests.length = 0;
    const response = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Run it" }] });
    assert.equal(response.stopReason, "end_turn");
    assert.deepEqual(editor.requests, [
      "terminal/create /bin/bash -c echo from the terminal",
      "terminal/wait_for_exit",
      "terminal/output",
      "terminal/release",
    ]);
    const call = ofKind(editor.updates, "tool_call")[0];
    const shown = ofKind(editor.updates, "tool_call_update")
      .filter((u) => u.toolCallId === call.toolCallId && u.content)
      .map((u) => u.content.map((c) => (c.type === "terminal" ? c.terminalId : c.type)).join());
    assert.deepEqual(shown, ["term-0", "term-0"]);
    const result = JSON.stringify(modelRequests().at(-1).messages.at(-1));
    assert.ok(result.includes("from the terminal\\n"), result);
  });
  await check("session/cancel", async () => {
    editor.updates.length = 0;
    const pending = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Go slowly" }] });
    while (!editor.updates.some((u) => u.sessionUpdate === "agent_message_chunk")) {
      await new Promise((ok) => setTimeout(ok, 20));
    }
    await ctx.notify(methods.agent.session.cancel, { sessionId });
    assert.equal((await pending).stopReason, "cancelled");
  });
});
await check("rho exits 0 when the client closes stdin", () => assert.equal(code, 0));

await withRho(async (ctx, editor) => {
  await check("session/load replays the history, then the session goes on", async () => {
    await initialize(ctx);
    await ctx.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
    const userChunks = ofKind(editor.updates, "user_message_chunk");
    assert.ok(userChunks.some((u) => u.content.type === "image"), "the prompt's image is replayed");
    const users = userChunks.filter((u) => u.content.type === "text").map((u) => u.content.text);
    assert.ok(users[0].startsWith("Edit a.txt, see"), users[0]);
    assert.deepEqual(users.slice(1), ["Try", "Run it", "Go slowly"]);
    assert.ok(ofKind(editor.updates, "plan").length > 0, "the plan is replayed");
    const replayedCalls = ofKind(editor.updates, "tool_call").map((c) => c.title);
    assert.deepEqual(replayedCalls, [
      "Update the todo list",
      "Read a.txt",
      "Edit a.txt",
      "`touch rejected.txt`",
      "Write allowed.txt",
      "`echo from the terminal`",
    ]);
    assert.equal(ofKind(editor.updates, "agent_message_chunk")[0].content.text, "All done.");
    editor.updates.length = 0;
    const response = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Again" }] });
    assert.equal(response.stopReason, "end_turn");
    assert.equal(chunkText(editor.updates, "agent_message_chunk"), "After loading.");
    const last = JSON.stringify(modelRequests().at(-1).messages);
    assert.ok(last.includes("Go slowly") && last.includes("Again"), last);
  });
});

console.log(`${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed === 0 ? 0 : 1);
