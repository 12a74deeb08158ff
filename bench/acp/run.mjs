// End-to-end check of `rho --mode acp` with the official TypeScript SDK's client
// (@agentclientprotocol/sdk, stable ACP v1), against rho-mock-llm on 127.0.0.1.
//
// The client offers fs/read_text_file and fs/write_text_file from buffers of its own, as an
// editor does, and checks: initialize, session/new (with its config options and the available
// commands), a prompt whose run reads and edits a file through the client's buffers (tool calls
// with kind, location, status and the edit's diff; agent message chunks; end_turn),
// session/cancel of a slow run (cancelled), and session/load of the session in a second rho
// process (the history replayed before the answer).
//
// Run with bench/acp/run.sh (builds rho and rho-mock-llm, installs the SDK under bench/out/acp).
// Prints "N passed, N failed" and exits non-zero when a check failed.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const outDir = process.env.ACP_OUT ?? join(repo, "bench/out/acp");
const target = process.env.CARGO_TARGET_DIR ?? join(repo, "target");
const rhoBin = process.env.RHO_BIN ?? join(target, "debug/rho");
const mockBin = process.env.MOCK_BIN ?? join(target, "debug/rho-mock-llm");
const sdkEntry = createRequire(join(outDir, "package.json")).resolve("@agentclientprotocol/sdk");
const acp = await import(pathToFileURL(sdkEntry).href);
const { client, methods, ndJsonStream, PROTOCOL_VERSION } = acp;

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

// A scratch world: agent dir with a models.json pointing at the mock, a working directory.
const world = mkdtempSync(join(tmpdir(), "rho-acp-"));
const agentDir = join(world, "agent");
const cwd = join(world, "work");
mkdirSync(agentDir, { recursive: true });
mkdirSync(cwd, { recursive: true });
writeFileSync(join(cwd, "a.txt"), "on disk\n");

const turns = [
  { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
  { toolCalls: [{ name: "edit", arguments: { path: "a.txt", edits: [{ oldText: "unsaved", newText: "edited" }] } }] },
  { text: "All done." },
  { text: "A slow answer that the client cancels before it ends.", chunkSize: 4, chunkDelayMs: 300 },
  { text: "After loading." },
];
const scriptPath = join(world, "script.json");
writeFileSync(scriptPath, JSON.stringify({ turns }));
const mock = spawn(mockBin, ["--script", scriptPath], { stdio: ["ignore", "pipe", "inherit"] });
const mockUrl = await new Promise((ok, fail) => {
  createInterface({ input: mock.stdout }).once("line", ok);
  mock.once("exit", (code) => fail(new Error(`rho-mock-llm exited with ${code}`)));
});
writeFileSync(
  join(agentDir, "models.json"),
  JSON.stringify({
    providers: {
      mock: {
        baseUrl: mockUrl,
        api: "anthropic-messages",
        apiKey: "test-key",
        models: [{ id: "mock-model", name: "Mock Model", reasoning: false, input: ["text", "image"], contextWindow: 200000, maxTokens: 8192 }],
      },
    },
  }),
);

/** Starts `rho --mode acp`, connects the SDK client and runs `body(ctx, editor)`. */
async function withRho(body) {
  const rho = spawn(rhoBin, ["--mode", "acp", "--model", "mock/mock-model"], {
    cwd,
    env: { ...process.env, RHO_CODING_AGENT_DIR: agentDir, HOME: world, ANTHROPIC_API_KEY: "" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const editor = { buffers: new Map(), requests: [], updates: [] };
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
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
  });

let sessionId;
const code = await withRho(async (ctx, editor) => {
  await check("initialize", async () => {
    const init = await initialize(ctx);
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.agentCapabilities.loadSession, true);
    assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
    assert.deepEqual(init.authMethods, []);
  });
  await check("session/new", async () => {
    const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
    sessionId = session.sessionId;
    assert.equal(session.configOptions[0].id, "model");
    assert.equal(session.configOptions[0].currentValue, "mock/mock-model");
  });
  await check("session/prompt: tools through the editor's buffers", async () => {
    const file = join(cwd, "a.txt");
    editor.buffers.set(file, "unsaved buffer\n");
    const response = await ctx.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "Edit a.txt" }],
    });
    assert.equal(response.stopReason, "end_turn");
    assert.deepEqual(editor.requests, [`read ${file}`, `read ${file}`, `write ${file}`]);
    assert.equal(editor.buffers.get(file), "edited buffer\n");
    assert.equal(readFileSync(file, "utf8"), "on disk\n");
    const kinds = editor.updates.map((u) => u.sessionUpdate);
    assert.ok(kinds.includes("available_commands_update"), kinds.join());
    const calls = editor.updates.filter((u) => u.sessionUpdate === "tool_call");
    assert.deepEqual(calls.map((c) => [c.kind, c.title]), [["read", "Read a.txt"], ["edit", "Edit a.txt"]]);
    assert.equal(calls[1].locations[0].path, file);
    const done = editor.updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    assert.equal(done.length, 2);
    const diff = done[1].content.find((c) => c.type === "diff");
    assert.deepEqual([diff.path, diff.oldText, diff.newText], [file, "unsaved", "edited"]);
    const text = editor.updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
    assert.equal(text, "All done.");
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
    const users = editor.updates.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text);
    assert.deepEqual(users, ["Edit a.txt", "Go slowly"]);
    const agent = editor.updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text);
    assert.equal(agent[0], "All done.");
    const response = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Again" }] });
    assert.equal(response.stopReason, "end_turn");
  });
});

mock.kill("SIGTERM");
console.log(`${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed === 0 ? 0 : 1);
