#!/usr/bin/env node
// Drives pi 1.6.0's own RpcClient (@earendil-works/pi-coding-agent, dist/modes/rpc/rpc-client.js)
// over every public method of the class, against pi 1.6 itself or against any executable that
// speaks pi's RPC protocol (rho), and writes what each call gave to a JSON file.
//
//   node pi16_client.mjs <config.json>        (Node >= 22.19, the version pi 1.6 needs)
//
// config.json (written by run.py):
//   {"pkg": "<node_modules/@earendil-works/pi-coding-agent>", "target": "pi16"|"rho",
//    "cliPath": "<pi dist/cli.js>"            -- pi 1.6: the client's own start() (spawn node cliPath)
//    "executable": "<path to rho>"            -- or: a subclass whose start() spawns the binary
//    "provider": "mock", "model": "mock-model", "args": [], "cwd": "...", "out": "<result.json>"}
//
// The environment (HOME, PATH with Node 22 first, PI_CODING_AGENT_DIR / RHO_CODING_AGENT_DIR) is
// inherited: the client spawns the agent with {...process.env, ...options.env}.
//
// What pi 1.6's client changed since 0.73.1 (pi_client.mjs): prompt/steer/followUp return the
// response's `data.disposition` (so a success response without data makes them throw); prompt
// throws on a failed response; waitForIdle, collectEvents and promptAndWait resolve on
// `agent_settled` (not `agent_end`); new methods clearQueue, getAvailableThinkingLevels,
// getEntries(since?), getTree (clone was already there).
//
// promptAndWait subscribes (collectEvents) before it sends the prompt; when prompt() throws, that
// subscription is left behind and rejects once its timeout passes, with nobody listening. Such
// unhandled rejections are recorded (with the step that made the promise, when it came from
// collectEvents or waitForIdle, and the step running when it surfaced) instead of crashing the
// run; every promise this script creates itself gets a handler, so each one recorded comes from
// the client library.
//
// As in pi_client.mjs: start() always runs `node <cliPath>`, so for a native binary start() is
// overridden (pi 1.6's own code, another spawn); handleLine/send are wrapped only to record the
// raw lines.

import { spawn } from "node:child_process";
import { readFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Recorder, loadRpcClient, recordingClient, sleep } from "./common.mjs";

const cfg = JSON.parse(readFileSync(process.argv[2], "utf8"));
const pkg = cfg.pkg;
// The methods to cover: the class's prototype, cross-checked with rpc-client.d.ts.
const { RpcClient, attachJsonlLineReader, version, methods, dtsMismatch } = await loadRpcClient(pkg);

const rec = new Recorder({ client: "pi16", clientPackage: "@earendil-works/pi-coding-agent", clientVersion: version,
  target: cfg.target, node: process.version, methods, dtsMismatch });

// ---- unhandled rejections: recorded, never fatal -----------------------------------------------
let current = "(start-up)";
const unhandled = [];
const pending = new Map();
const origins = new WeakMap(); // promise -> the step that called collectEvents / waitForIdle
process.on("unhandledRejection", (reason, promise) => {
  const r = { createdIn: origins.get(promise) ?? "?", step: current, message: String(reason?.message ?? reason),
    name: reason?.name ?? typeof reason };
  unhandled.push(r);
  pending.set(promise, r);
  console.error(`[pi16->${cfg.target}] unhandled rejection during ${current}: ${r.message.slice(0, 160)}`);
});
process.on("rejectionHandled", (promise) => {
  const r = pending.get(promise);
  if (r) r.handledLater = current;
});
/** A promise this script holds: its rejection is handled here (it is awaited or inspected later). */
const held = (p) => {
  p.catch(() => {});
  return p;
};
// The last moment a wait the client library started may still reject (see the end of the run).
let waitsUntil = 0;
const waitMs = (ms) => {
  waitsUntil = Math.max(waitsUntil, Date.now() + ms);
  return ms;
};

class RecordingClient extends recordingClient(RpcClient, rec) {
  // unchanged; only the step that made each promise is noted (promptAndWait calls this.collectEvents)
  collectEvents(timeout) {
    const p = super.collectEvents(timeout);
    origins.set(p, current);
    return p;
  }
  waitForIdle(timeout) {
    const p = super.waitForIdle(timeout);
    origins.set(p, current);
    return p;
  }
}

class ExecRpcClient extends RecordingClient {
  constructor(executable, options) {
    super(options);
    this.executable = executable;
  }
  // pi 1.6's RpcClient.start() with spawn(executable, args) in place of spawn("node", [cliPath, ...args]).
  async start() {
    if (this.process) throw new Error("Client already started");
    this.exitError = null;
    const args = ["--mode", "rpc"];
    if (this.options.provider) args.push("--provider", this.options.provider);
    if (this.options.model) args.push("--model", this.options.model);
    if (this.options.args) args.push(...this.options.args);
    const childProcess = spawn(this.executable, args, {
      cwd: this.options.cwd,
      env: { ...process.env, ...this.options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.process = childProcess;
    childProcess.stderr?.on("data", (data) => {
      this.stderr += data.toString();
      process.stderr.write(data);
    });
    childProcess.once("exit", (code, signal) => {
      if (this.process !== childProcess) return;
      const error = this.createProcessExitError(code, signal);
      this.exitError = error;
      this.rejectPendingRequests(error);
    });
    childProcess.once("error", (error) => {
      if (this.process !== childProcess) return;
      const processError = new Error(`Agent process error: ${error.message}. Stderr: ${this.stderr}`);
      this.exitError = processError;
      this.rejectPendingRequests(processError);
    });
    childProcess.stdin?.on("error", (error) => {
      if (this.process !== childProcess) return;
      const stdinError = this.exitError ?? new Error(`Agent process stdin error: ${error.message}. Stderr: ${this.stderr}`);
      this.exitError = stdinError;
      this.rejectPendingRequests(stdinError);
    });
    this.stopReadingStdout = attachJsonlLineReader(childProcess.stdout, (line) => this.handleLine(line));
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (this.process.exitCode !== null) {
      const error = this.exitError ?? this.createProcessExitError(this.process.exitCode, this.process.signalCode);
      this.exitError = error;
      throw error;
    }
  }
}

const options = { cwd: cfg.cwd, provider: cfg.provider, model: cfg.model, args: cfg.args ?? [] };
const client = cfg.executable
  ? new ExecRpcClient(cfg.executable, options)
  : new RecordingClient({ ...options, cliPath: cfg.cliPath });

// Every step records which step was running when an unhandled rejection surfaced.
const S = (label, ...rest) => {
  current = label;
  return rec.step(label, ...rest);
};
const isTextDelta = (e) => e.type === "message_update" && e.assistantMessageEvent?.type === "text_delta";
const WAIT = 20000; // waitForIdle / collectEvents / promptAndWait timeouts (pi's replies settle within 6 s)
const text = (m) => `${m.role}:${typeof m.content === "string" ? m.content : (m.content ?? []).map((c) => c.text ?? c.type).join("")}`.slice(0, 60);
const entryTag = (e) => (e.type === "message" ? `message:${e.message?.role}` : e.type);
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
  await S("getAvailableThinkingLevels#no-reasoning", "getAvailableThinkingLevels",
    () => client.getAvailableThinkingLevels(), { cmp: ["value"] });
  await S("getEntries#fresh", "getEntries", async () => {
    const r = await client.getEntries();
    return { entries: r.entries.map(entryTag), leafIsLast: r.leafId === (r.entries.at(-1)?.id ?? null) };
  }, { cmp: ["value"] });
  await S("getTree#fresh", "getTree", () => client.getTree());
  await S("clearQueue#idle", "clearQueue", () => client.clearQueue(), { cmp: ["value"] });
  await S("clone#empty", "clone", () => client.clone());
  await S("compact#empty", "compact", () => client.compact());
  // a fresh session again, so that what compact#empty did (or not) does not carry over
  await S("newSession#reset", "newSession", () => client.newSession(), { cmp: ["value"] });

  // ---- models and thinking ----------------------------------------------------------------------
  await S("setModel(mock/mock-think)", "setModel", () => client.setModel("mock", "mock-think"));
  await S("getAvailableThinkingLevels#reasoning", "getAvailableThinkingLevels",
    () => client.getAvailableThinkingLevels(), { cmp: ["value"] });
  await S("setThinkingLevel(high)", "setThinkingLevel", () => client.setThinkingLevel("high"));
  await S("cycleThinkingLevel#reasoning", "cycleThinkingLevel", () => client.cycleThinkingLevel(), { cmp: ["value"] });
  await S("cycleModel", "cycleModel", () => client.cycleModel());
  await S("cycleThinkingLevel#no-reasoning", "cycleThinkingLevel", () => client.cycleThinkingLevel(), { cmp: ["value"] });
  await S("setModel(mock/nope)", "setModel", () => client.setModel("mock", "nope"));
  await S("setModel(mock/mock-model)", "setModel", () => client.setModel("mock", "mock-model"));
  await S("getAvailableThinkingLevels#back", "getAvailableThinkingLevels",
    () => client.getAvailableThinkingLevels(), { cmp: ["value"] });

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
  let idle = held(client.waitForIdle(waitMs(WAIT)));
  await S("prompt", "prompt", () => client.prompt("First prompt: say hello."), { settleMs: 0, group: "first", cmp: ["value"] });
  await S("waitForIdle", "waitForIdle", () => idle, { group: "first" });
  await S("promptAndWait", "promptAndWait",
    () => client.promptAndWait("Second prompt: say hello again.", undefined, waitMs(WAIT)), { cmp: ["types"] });
  const collected = held(client.collectEvents(waitMs(WAIT)));
  await S("collectEvents", ["collectEvents", "prompt"], async () => {
    await client.prompt("Third prompt.");
    return collected;
  }, { cmp: ["types"] });
  // rho answers the prompt without data.disposition, so the step above throws before it waits:
  // let that run finish before the next step starts one
  await S("collectEvents#settle", "collectEvents", () => collected.then((es) => es.length > 0, () => "no agent_settled"),
    { cmp: ["value"] });
  await S("getLastAssistantText", "getLastAssistantText", () => client.getLastAssistantText(), { cmp: ["value"] });

  // steer and followUp while a slow reply streams, then prompts with and without streamingBehavior
  idle = held(client.waitForIdle(waitMs(WAIT)));
  let firstUpdate = held(rec.waitEvent(isTextDelta));
  await S("prompt#slow", "prompt", () => client.prompt("SLOW-STEER: take your time."), { settleMs: 0, group: "queue", cmp: ["value"] });
  await S("wait#streaming", "onEvent", () => firstUpdate.then((e) => e.type), { settleMs: 0, group: "queue" });
  await S("steer#streaming", "steer", () => client.steer("Steering message."), { settleMs: 0, group: "queue", cmp: ["value"] });
  await S("followUp#streaming", "followUp", () => client.followUp("Follow-up message."), { settleMs: 0, group: "queue", cmp: ["value"] });
  await S("prompt#streaming", "prompt", () => client.prompt("A prompt while streaming."), { settleMs: 0, group: "queue" });
  await S("prompt(steer)#streaming", "prompt", () => client.prompt("A steering prompt.", undefined, "steer"),
    { settleMs: 0, group: "queue", cmp: ["value"] });
  await S("prompt(followUp)#streaming", "prompt", () => client.prompt("A follow-up prompt.", undefined, "followUp"),
    { settleMs: 0, group: "queue", cmp: ["value"] });
  await S("waitForIdle#queued", "waitForIdle", () => idle, { group: "queue" });
  await S("getMessages#after-queue", "getMessages", async () => (await client.getMessages()).map(text), { cmp: ["value"] });

  // clearQueue while messages wait behind a slow reply
  idle = held(client.waitForIdle(waitMs(WAIT)));
  firstUpdate = held(rec.waitEvent(isTextDelta));
  await S("prompt#slow-queue", "prompt", () => client.prompt("SLOW-QUEUE: a slow answer to queue behind."),
    { settleMs: 0, group: "clear", cmp: ["value"] });
  await S("wait#streaming-queue", "onEvent", () => firstUpdate.then((e) => e.type), { settleMs: 0, group: "clear" });
  await S("steer#to-clear", "steer", () => client.steer("Steer to clear."), { settleMs: 0, group: "clear", cmp: ["value"] });
  await S("followUp#to-clear", "followUp", () => client.followUp("Follow-up to clear."), { settleMs: 0, group: "clear", cmp: ["value"] });
  await S("clearQueue#queued", "clearQueue", () => client.clearQueue(), { settleMs: 0, group: "clear", cmp: ["value"] });
  await S("clearQueue#again", "clearQueue", () => client.clearQueue(), { settleMs: 0, group: "clear", cmp: ["value"] });
  await S("waitForIdle#cleared", "waitForIdle", () => idle, { group: "clear" });
  await S("getMessages#after-clear", "getMessages", async () => (await client.getMessages()).slice(-2).map(text), { cmp: ["value"] });

  // abort while streaming; before it, promptAndWait without streamingBehavior while busy: its
  // prompt() throws and the events subscription it made first rejects after its (short) timeout
  idle = held(client.waitForIdle(waitMs(WAIT)));
  firstUpdate = held(rec.waitEvent(isTextDelta));
  await S("prompt#slow-abort", "prompt", () => client.prompt("SLOW-ABORT: a long answer."), { settleMs: 0, group: "abort", cmp: ["value"] });
  await S("wait#streaming-abort", "onEvent", () => firstUpdate.then((e) => e.type), { settleMs: 0, group: "abort" });
  await S("promptAndWait#streaming", "promptAndWait", async () => {
    try {
      return await client.promptAndWait("A prompt and wait while streaming.", undefined, waitMs(800));
    } finally {
      await sleep(1100); // the abandoned subscription times out within this step
    }
  }, { settleMs: 0, group: "abort" });
  await S("abort#streaming", "abort", () => client.abort(), { settleMs: 0, group: "abort" });
  await S("waitForIdle#aborted", "waitForIdle", () => idle, { group: "abort" });
  await S("getLastAssistantText#after-abort", "getLastAssistantText", () => client.getLastAssistantText(), { cmp: ["value"] });

  // ---- bash -------------------------------------------------------------------------------------
  await S("bash(echo)", "bash", () => client.bash("echo bash-output; echo err >&2; exit 3"), { cmp: ["value"] });
  await S("bash(no output)", "bash", () => client.bash("true"), { cmp: ["value"] });
  await S("bash+abortBash", ["bash", "abortBash"], async () => {
    const running = held(client.bash("sleep 5; echo late"));
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

  // entries and the tree: the whole list, the entries after a real id (the second user message),
  // after a bogus one, and the tree
  const all = await S("getEntries()", "getEntries", () => client.getEntries());
  const entries = all.value?.entries ?? [];
  const cursor = entries.find((e) => e.type === "message" && e.message?.role === "user"
    && JSON.stringify(e.message.content).includes("Second prompt"));
  await S("getEntries#summary", "getEntries", async () => {
    const r = await client.getEntries();
    return { entries: r.entries.map(entryTag), leafIsLast: r.leafId === (r.entries.at(-1)?.id ?? null),
      ids: new Set(r.entries.map((e) => e.id)).size === r.entries.length };
  }, { cmp: ["value"] });
  await S("getEntries(since)", "getEntries", async () => {
    const r = await client.getEntries(cursor?.id ?? "missing");
    const i = entries.findIndex((e) => e.id === cursor?.id);
    return { entries: r.entries.map(entryTag), matchesTail: i >= 0 && JSON.stringify(r.entries.map((e) => e.id))
      === JSON.stringify(entries.slice(i + 1).map((e) => e.id)), leafIsLast: r.leafId === (r.entries.at(-1)?.id ?? null) };
  }, { cmp: ["value"] });
  await S("getEntries(last)", "getEntries", async () => {
    const r = await client.getEntries(all.value?.leafId ?? "missing");
    return { entries: r.entries.length, leafId: r.leafId === all.value?.leafId };
  }, { cmp: ["value"] });
  await S("getEntries(bogus)", "getEntries", () => client.getEntries("ffffffff"));
  await S("getTree()", "getTree", () => client.getTree());
  await S("getTree#summary", "getTree", async () => {
    const r = await client.getTree();
    let nodes = 0;
    let depth = 0;
    let leafFound = false;
    const walk = (ns, d) => {
      for (const n of ns) {
        nodes++;
        depth = Math.max(depth, d);
        if (n.entry?.id === r.leafId) leafFound = true;
        walk(n.children ?? [], d + 1);
      }
    };
    walk(r.tree, 1);
    return { roots: r.tree.length, nodes, sameAsEntries: nodes === entries.length, leafFound };
  }, { cmp: ["value"] });

  await S("getSessionStats", "getSessionStats", () => client.getSessionStats());
  await S("compact", "compact", () => client.compact("Keep it short."), { timeoutMs: 60000 });
  await S("getSessionStats#after-compact", "getSessionStats", () => client.getSessionStats());
  await S("getMessages#after-compact", "getMessages", () => client.getMessages(), { cmp: ["len"] });
  await S("getEntries#after-compact", "getEntries", async () => {
    const r = await client.getEntries(all.value?.leafId ?? "missing");
    return { entries: r.entries.map(entryTag) };
  }, { cmp: ["value"] });
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
  await S("getTree#after-clone", "getTree", async () => {
    const r = await client.getTree();
    return { roots: r.tree.length, leafSet: typeof r.leafId === "string" };
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
  // last, in the fresh session switched to: a reply of blanks
  await S("promptAndWait#blank-reply", "promptAndWait", async () => {
    await client.promptAndWait("BLANK-REPLY: answer with spaces only.", undefined, waitMs(WAIT));
    // another run may follow on its own
    const again = await rec.waitEvent((e) => e.type === "agent_end", 3000).then(() => 1, () => 0);
    return { extraRuns: again };
  }, { cmp: ["value"] });
  await S("getLastAssistantText#blank", "getLastAssistantText", () => client.getLastAssistantText(), { cmp: ["value"] });
} catch (e) {
  fatal = String(e?.stack ?? e);
  console.error("FATAL", fatal);
} finally {
  // a subscription the client library left behind rejects when its timeout passes: wait for the
  // last one, so that what it does is recorded (bounded by the longest wait this script asked for)
  current = "(after the last step)";
  const left = waitsUntil - Date.now();
  if (left > 0) await sleep(Math.min(left, WAIT) + 300);
  await rec.step("stop", "stop", () => client.stop(), { settleMs: 0 });
  current = "(after stop)";
  await sleep(100);
  rec.write(cfg.out, { fatal, stderrTail: client.getStderr?.().slice(-4000) ?? "", unhandledRejections: unhandled });
}
process.exit(0);
