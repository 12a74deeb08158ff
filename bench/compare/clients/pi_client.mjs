#!/usr/bin/env node
// Drives pi 0.73.1's own RpcClient (@mariozechner/pi-coding-agent, dist/modes/rpc/rpc-client.js)
// over every public method of the class, against pi itself or against any executable that speaks
// pi's RPC protocol (rho), and writes what each call gave to a JSON file.
//
//   node pi_client.mjs <config.json>
//
// config.json (written by run.py):
//   {"pkg": "<node_modules/@mariozechner/pi-coding-agent>", "target": "pi"|"rho",
//    "cliPath": "<pi dist/cli.js>"            -- pi: the client's own start() (spawn node cliPath)
//    "executable": "<path to rho>"            -- or: a subclass whose start() spawns the binary
//    "provider": "mock", "model": "mock-model", "args": [], "cwd": "...", "out": "<result.json>"}
//
// The environment (HOME, PI_CODING_AGENT_DIR / RHO_CODING_AGENT_DIR) is inherited: the client
// spawns the agent with {...process.env, ...options.env}.
//
// pi's RpcClient.start() always runs `node <cliPath>`, so for a native binary start() is
// overridden (same code, another spawn). handleLine/send are wrapped (TS-private, plain methods
// at run time) only to record the raw lines; the client's own code handles them unchanged.

import { spawn } from "node:child_process";
import { readFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Recorder, loadRpcClient, recordingClient, sleep } from "./common.mjs";

const cfg = JSON.parse(readFileSync(process.argv[2], "utf8"));
const pkg = cfg.pkg;
// The methods to cover: the class's prototype, cross-checked with rpc-client.d.ts.
const { RpcClient, attachJsonlLineReader, version, methods, dtsMismatch } = await loadRpcClient(pkg);

const rec = new Recorder({ client: "pi", clientPackage: "@mariozechner/pi-coding-agent", clientVersion: version,
  target: cfg.target, methods, dtsMismatch });

const RecordingClient = recordingClient(RpcClient, rec);

class ExecRpcClient extends RecordingClient {
  constructor(executable, options) {
    super(options);
    this.executable = executable;
  }
  // RpcClient.start() with spawn(executable, args) in place of spawn("node", [cliPath, ...args]).
  async start() {
    if (this.process) throw new Error("Client already started");
    const args = ["--mode", "rpc"];
    if (this.options.provider) args.push("--provider", this.options.provider);
    if (this.options.model) args.push("--model", this.options.model);
    if (this.options.args) args.push(...this.options.args);
    this.process = spawn(this.executable, args, {
      cwd: this.options.cwd,
      env: { ...process.env, ...this.options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.process.stderr?.on("data", (data) => {
      this.stderr += data.toString();
      process.stderr.write(data);
    });
    this.stopReadingStdout = attachJsonlLineReader(this.process.stdout, (line) => this.handleLine(line));
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (this.process.exitCode !== null) {
      throw new Error(`Agent process exited immediately with code ${this.process.exitCode}. Stderr: ${this.stderr}`);
    }
  }
}

const options = { cwd: cfg.cwd, provider: cfg.provider, model: cfg.model, args: cfg.args ?? [] };
const client = cfg.executable
  ? new ExecRpcClient(cfg.executable, options)
  : new RecordingClient({ ...options, cliPath: cfg.cliPath });

const S = rec.step.bind(rec);
const isTextDelta = (e) => e.type === "message_update" && e.assistantMessageEvent?.type === "text_delta";
let fatal = null;

try {
  await S("onEvent", "onEvent", () => typeof client.onEvent((e) => rec.event(e)));
  await S("start", "start", () => client.start(), { settleMs: 500 });
  await S("getStderr", "getStderr", () => typeof client.getStderr());

  // ---- a fresh session ------------------------------------------------------------------------
  await S("getState#fresh", "getState", () => client.getState());
  await S("getCommands", "getCommands", () => client.getCommands(), { cmp: ["value"] });
  await S("getMessages#empty", "getMessages", () => client.getMessages(), { cmp: ["len"] });
  await S("getLastAssistantText#empty", "getLastAssistantText", () => client.getLastAssistantText(), { cmp: ["value"] });
  await S("getForkMessages#empty", "getForkMessages", () => client.getForkMessages(), { cmp: ["value"] });
  await S("getSessionStats#fresh", "getSessionStats", () => client.getSessionStats());
  await S("getAvailableModels", "getAvailableModels", () => client.getAvailableModels(), { cmp: ["value"] });
  await S("clone#empty", "clone", () => client.clone());
  await S("compact#empty", "compact", () => client.compact());
  // a fresh session again, so that what compact#empty did (or not) does not carry over
  await S("newSession#reset", "newSession", () => client.newSession(), { cmp: ["value"] });

  // ---- models and thinking ----------------------------------------------------------------------
  await S("setModel(mock/mock-think)", "setModel", () => client.setModel("mock", "mock-think"));
  await S("setThinkingLevel(high)", "setThinkingLevel", () => client.setThinkingLevel("high"));
  await S("cycleThinkingLevel#reasoning", "cycleThinkingLevel", () => client.cycleThinkingLevel(), { cmp: ["value"] });
  await S("cycleModel", "cycleModel", () => client.cycleModel());
  await S("cycleThinkingLevel#no-reasoning", "cycleThinkingLevel", () => client.cycleThinkingLevel(), { cmp: ["value"] });
  await S("setModel(mock/nope)", "setModel", () => client.setModel("mock", "nope"));
  await S("setModel(mock/mock-model)", "setModel", () => client.setModel("mock", "mock-model"));

  // ---- queue modes, auto compaction/retry -------------------------------------------------------
  await S("setSteeringMode(all)", "setSteeringMode", () => client.setSteeringMode("all"));
  await S("setFollowUpMode(all)", "setFollowUpMode", () => client.setFollowUpMode("all"));
  await S("getState#modes", "getState", async () => {
    const s = await client.getState();
    return { steeringMode: s.steeringMode, followUpMode: s.followUpMode, thinkingLevel: s.thinkingLevel, model: s.model?.id };
  }, { cmp: ["value"] });
  await S("setSteeringMode(one-at-a-time)", "setSteeringMode", () => client.setSteeringMode("one-at-a-time"));
  await S("setFollowUpMode(one-at-a-time)", "setFollowUpMode", () => client.setFollowUpMode("one-at-a-time"));
  await S("setAutoCompaction(false)", "setAutoCompaction", () => client.setAutoCompaction(false));
  await S("setAutoRetry(false)", "setAutoRetry", () => client.setAutoRetry(false));
  await S("abortRetry#idle", "abortRetry", () => client.abortRetry());
  await S("abort#idle", "abort", () => client.abort());
  await S("abortBash#idle", "abortBash", () => client.abortBash());

  // ---- prompts ----------------------------------------------------------------------------------
  let idle = client.waitForIdle(30000);
  await S("prompt", "prompt", () => client.prompt("First prompt: say hello."), { settleMs: 0, group: "first" });
  await S("waitForIdle", "waitForIdle", () => idle, { group: "first" });
  await S("promptAndWait", "promptAndWait", () => client.promptAndWait("Second prompt: say hello again."), { cmp: ["types"] });
  const collected = client.collectEvents(30000);
  await S("collectEvents", ["collectEvents", "prompt"], async () => {
    await client.prompt("Third prompt.");
    return collected;
  }, { cmp: ["types"] });
  await S("getLastAssistantText", "getLastAssistantText", () => client.getLastAssistantText(), { cmp: ["value"] });

  // steer and followUp while a slow reply streams; then a prompt with no streamingBehavior
  idle = client.waitForIdle(60000);
  let firstUpdate = rec.waitEvent(isTextDelta);
  await S("prompt#slow", "prompt", () => client.prompt("SLOW-STEER: take your time."), { settleMs: 0, group: "queue" });
  await S("wait#streaming", "onEvent", () => firstUpdate.then((e) => e.type), { settleMs: 0, group: "queue" });
  await S("steer#streaming", "steer", () => client.steer("Steering message."), { settleMs: 0, group: "queue" });
  await S("followUp#streaming", "followUp", () => client.followUp("Follow-up message."), { settleMs: 0, group: "queue" });
  await S("prompt#streaming", "prompt", () => client.prompt("A prompt while streaming."), { settleMs: 0, group: "queue" });
  await S("waitForIdle#queued", "waitForIdle", () => idle, { group: "queue" });
  await S("getMessages#after-queue", "getMessages", async () => {
    const ms = await client.getMessages();
    return ms.map((m) => `${m.role}:${typeof m.content === "string" ? m.content : (m.content ?? []).map((c) => c.text ?? c.type).join("")}`.slice(0, 60));
  }, { cmp: ["value"] });

  // abort while streaming
  idle = client.waitForIdle(30000);
  firstUpdate = rec.waitEvent(isTextDelta);
  await S("prompt#slow-abort", "prompt", () => client.prompt("SLOW-ABORT: a long answer."), { settleMs: 0, group: "abort" });
  await S("wait#streaming-abort", "onEvent", () => firstUpdate.then((e) => e.type), { settleMs: 0, group: "abort" });
  await S("abort#streaming", "abort", () => client.abort(), { settleMs: 0, group: "abort" });
  await S("waitForIdle#aborted", "waitForIdle", () => idle, { group: "abort" });
  await S("getLastAssistantText#after-abort", "getLastAssistantText", () => client.getLastAssistantText(), { cmp: ["value"] });

  // ---- bash -------------------------------------------------------------------------------------
  await S("bash(echo)", "bash", () => client.bash("echo bash-output; echo err >&2; exit 3"), { cmp: ["value"] });
  await S("bash(no output)", "bash", () => client.bash("true"), { cmp: ["value"] });
  await S("bash+abortBash", ["bash", "abortBash"], async () => {
    const running = client.bash("sleep 5; echo late");
    await sleep(400);
    await client.abortBash();
    return running;
  }, { cmp: ["value"] });

  // ---- session data -----------------------------------------------------------------------------
  await S("getMessages", "getMessages", () => client.getMessages(), { cmp: ["len"] });
  const forkMessages = (await S("getForkMessages", "getForkMessages", () => client.getForkMessages())).value;
  await S("setSessionName(padded)", "setSessionName", () => client.setSessionName("  My session  "));
  await S("setSessionName(blank)", "setSessionName", () => client.setSessionName("   "));
  await S("getState#named", "getState", async () => (await client.getState()).sessionName, { cmp: ["value"] });
  await S("getSessionStats", "getSessionStats", () => client.getSessionStats());
  await S("compact", "compact", () => client.compact("Keep it short."), { timeoutMs: 60000 });
  await S("getSessionStats#after-compact", "getSessionStats", () => client.getSessionStats());
  await S("getMessages#after-compact", "getMessages", () => client.getMessages(), { cmp: ["len"] });
  await S("exportHtml(default)", "exportHtml", () => client.exportHtml());
  mkdirSync(join(cfg.cwd, "exports"), { recursive: true });
  await S("exportHtml(path)", "exportHtml", () => client.exportHtml(join(cfg.cwd, "exports", "session.html")), { cmp: ["value"] });

  // ---- fork, clone, new and switched sessions ---------------------------------------------------
  const before = (await S("getState#before-fork", "getState", () => client.getState())).value ?? {};
  const original = before.sessionFile;
  const second = Array.isArray(forkMessages) ? (forkMessages.find((m) => m.text?.startsWith("Second prompt")) ?? forkMessages[0]) : undefined;
  await S("fork(second user message)", "fork", () => client.fork(second?.entryId ?? "missing"), { cmp: ["value"] });
  await S("getState#after-fork", "getState", async () => {
    const s = await client.getState();
    return { messageCount: s.messageCount, newFile: s.sessionFile !== original };
  }, { cmp: ["value"] });
  await S("getForkMessages#after-fork", "getForkMessages", async () => (await client.getForkMessages()).map((m) => m.text), { cmp: ["value"] });
  await S("fork(bogus)", "fork", () => client.fork("ffffffff"));
  await S("clone", "clone", () => client.clone(), { cmp: ["value"] });
  await S("getState#after-clone", "getState", async () => {
    const s = await client.getState();
    return { messageCount: s.messageCount, newFile: s.sessionFile !== original };
  }, { cmp: ["value"] });
  await S("newSession()", "newSession", () => client.newSession(), { cmp: ["value"] });
  await S("getState#after-new", "getState", async () => (await client.getState()).messageCount, { cmp: ["value"] });
  await S("newSession(parent)", "newSession", () => client.newSession(original ?? "/nonexistent/parent.jsonl"), { cmp: ["value"] });
  await S("switchSession(original)", "switchSession", () => client.switchSession(original ?? "/nonexistent/original.jsonl"), { cmp: ["value"] });
  await S("getState#after-switch", "getState", async () => {
    const s = await client.getState();
    return { messageCount: s.messageCount, sameFile: s.sessionFile === original, sessionName: s.sessionName };
  }, { cmp: ["value"] });
  await S("switchSession(new path)", "switchSession", () => client.switchSession(join(cfg.cwd, "more-sessions", "new.jsonl")), { cmp: ["value"] });
  await S("getState#end", "getState", () => client.getState());
  // last, in the fresh session switched to: a reply of blanks (omp answers it with a nudge and a new run)
  await S("promptAndWait#blank-reply", "promptAndWait", async () => {
    await client.promptAndWait("BLANK-REPLY: answer with spaces only.");
    // another run may follow on its own (omp nudges a model that stopped without output)
    const again = await rec.waitEvent((e) => e.type === "agent_end", 3000).then(() => 1, () => 0);
    return { extraRuns: again };
  }, { cmp: ["value"] });
  await S("getLastAssistantText#blank", "getLastAssistantText", () => client.getLastAssistantText(), { cmp: ["value"] });
} catch (e) {
  fatal = String(e?.stack ?? e);
  console.error("FATAL", fatal);
} finally {
  await rec.step("stop", "stop", () => client.stop(), { settleMs: 0 });
  rec.write(cfg.out, { fatal, stderrTail: client.getStderr?.().slice(-4000) ?? "" });
}
process.exit(0);
