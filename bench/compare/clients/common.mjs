// Shared by pi_client.mjs, pi16_client.mjs (Node) and omp_client.ts (Bun): the step recorder;
// for pi's two clients also the method list and the recording client class.
//
// A step calls one client method (or a few, when a method only makes sense after another, e.g.
// steer while a prompt streams) and records what the caller of the client library sees:
// resolved (with the returned value) or threw (with the error's name, message, code), plus the
// frames the client's listeners delivered meanwhile and the raw command/response lines on the
// wire. Nothing is normalized here: run.py normalizes and compares both sides the same way.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** pi's RpcClient from its package folder `pkg`, with the package's JSONL reader, its version and
 * the methods to cover (see publicMethods). */
export async function loadRpcClient(pkg) {
  const rpc = (file) => import(pathToFileURL(join(pkg, "dist/modes/rpc", file)).href);
  const { RpcClient } = await rpc("rpc-client.js");
  const { attachJsonlLineReader } = await rpc("jsonl.js");
  const version = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version;
  const dts = readFileSync(join(pkg, "dist/modes/rpc/rpc-client.d.ts"), "utf8");
  return { RpcClient, attachJsonlLineReader, version, ...publicMethods(RpcClient, dts) };
}

/** The public methods of pi's RpcClient class: its prototype's, cross-checked with the class in
 * `dts` (rpc-client.d.ts); `dtsMismatch` names those only one of the two has. */
export function publicMethods(RpcClient, dts) {
  const classBody = dts.slice(dts.indexOf("export declare class RpcClient"));
  const privateNames = new Set([...classBody.matchAll(/^ {4}private (\w+)/gm)].map((m) => m[1]));
  const dtsPublic = [...classBody.matchAll(/^ {4}(\w+)\(/gm)].map((m) => m[1]).filter((n) => n !== "constructor");
  const protoPublic = Object.getOwnPropertyNames(RpcClient.prototype).filter(
    (n) => n !== "constructor" && !privateNames.has(n) && typeof RpcClient.prototype[n] === "function",
  );
  const methods = [...new Set([...dtsPublic, ...protoPublic])];
  const dtsMismatch = methods.filter((m) => !dtsPublic.includes(m) || !protoPublic.includes(m));
  return { methods, dtsMismatch };
}

/** pi's RpcClient with the raw lines recorded into `rec`: handleLine and send (TS-private, plain
 * methods at run time) are wrapped; the client's own code handles the lines unchanged. */
export function recordingClient(RpcClient, rec) {
  return class extends RpcClient {
    handleLine(line) {
      try {
        rec.received(JSON.parse(line));
      } catch {
        // not JSON: the client ignores it too
      }
      return super.handleLine(line);
    }
    send(command) {
      rec.sent({ ...command, id: `req_${this.requestId + 1}` });
      return super.send(command);
    }
  };
}

const TIMEOUT = Symbol("step timeout");

/** JSON-safe copy that keeps `undefined` (as "$undefined") and marks functions. */
export function safe(v, depth = 0) {
  if (v === undefined) return "$undefined";
  if (v === null) return null;
  if (typeof v === "function") return "$function";
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number" && !Number.isFinite(v)) return `$number:${v}`;
  if (typeof v !== "object") return v;
  if (depth > 40) return "$deep";
  if (Array.isArray(v)) return v.map((x) => safe(x, depth + 1));
  const out = {};
  for (const k of Object.keys(v)) out[k] = safe(v[k], depth + 1);
  return out;
}

/** A frame as recorded in a step's event list: message_update keeps only its event type. */
export function reduceFrame(f) {
  if (f && typeof f === "object" && f.type === "message_update") {
    const ev = f.assistantMessageEvent ?? {};
    return { type: "message_update", assistantMessageEvent: { type: ev.type } };
  }
  return f;
}

export class Recorder {
  constructor(meta) {
    this.meta = meta;
    this.steps = [];
    this.events = []; // frames delivered to the client's listeners, in order
    this.wire = []; // {dir: "out"|"in", frame} for commands sent and responses received
    this.waiters = [];
  }

  /** Called by the listeners the client scripts register. */
  event(frame, via) {
    const f = reduceFrame(safe(frame));
    this.events.push(via ? { via, frame: f } : { frame: f });
    for (const w of [...this.waiters]) {
      if (w.pred(frame)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(frame);
      }
    }
  }

  sent(frame) {
    this.wire.push({ dir: "out", frame: safe(frame) });
  }

  received(frame) {
    if (frame && typeof frame === "object" && (frame.type === "response" || frame.type === "ready")) {
      this.wire.push({ dir: "in", frame: safe(frame) });
    }
  }

  /** Resolves with the first later event matching pred (rejects after timeoutMs). */
  waitEvent(pred, timeoutMs = 15000) {
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      this.waiters.push(w);
      setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i !== -1) {
          this.waiters.splice(i, 1);
          reject(new Error(`no matching event within ${timeoutMs} ms`));
        }
      }, timeoutMs).unref?.();
    });
  }

  /**
   * Runs one step. `method` names the client method the step covers (several steps may cover one
   * method); `cmp` lists what run.py compares beyond outcome, error text and shape: "value" (the
   * normalized value), "len" (array length), "types" (the event types of a returned event list).
   * Steps sharing a `group` (a prompt and the waits that follow it) have their events compared
   * as one sequence, since where one step ends and the next begins depends on timing.
   */
  async step(label, method, fn, { timeoutMs = 45000, cmp = [], settleMs = 150, note, group } = {}) {
    const ev0 = this.events.length;
    const w0 = this.wire.length;
    const t0 = Date.now();
    const rec = { label, method: Array.isArray(method) ? method : [method], cmp };
    if (note) rec.note = note;
    if (group) rec.group = group;
    let timer;
    try {
      const v = await Promise.race([
        Promise.resolve().then(fn),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(TIMEOUT), timeoutMs);
        }),
      ]);
      rec.outcome = "resolved";
      rec.value = safe(v);
    } catch (e) {
      if (e === TIMEOUT) {
        rec.outcome = "timeout";
        rec.error = { message: `no answer within ${timeoutMs} ms (the client call never settled)` };
      } else {
        rec.outcome = "threw";
        rec.error = {
          name: e?.name,
          message: String(e?.message ?? e),
          ...(e?.code !== undefined ? { code: e.code } : {}),
          ...(e?.command !== undefined ? { command: e.command } : {}),
        };
      }
    } finally {
      clearTimeout(timer);
    }
    await sleep(settleMs);
    rec.ms = Date.now() - t0;
    rec.events = this.events.slice(ev0);
    rec.sent = this.wire.slice(w0).filter((w) => w.dir === "out").map((w) => w.frame);
    this.steps.push(rec);
    const brief = rec.outcome === "resolved" ? JSON.stringify(rec.value)?.slice(0, 100) : rec.error.message.slice(0, 160);
    console.error(`[${this.meta.client}->${this.meta.target}] ${label}: ${rec.outcome} ${brief ?? ""}`);
    return rec;
  }

  value(label) {
    const s = this.steps.find((x) => x.label === label);
    return s?.outcome === "resolved" ? s.value : undefined;
  }

  write(path, extra = {}) {
    const covered = new Set(this.steps.flatMap((s) => s.method));
    const uncovered = (this.meta.methods ?? []).filter((m) => !covered.has(m));
    // Each command a step sent, with the response line that carried its id (whenever it came).
    const byId = new Map();
    for (const w of this.wire) if (w.dir === "in" && typeof w.frame.id === "string") byId.set(w.frame.id, w.frame);
    const idless = this.wire.filter((w) => w.dir === "in" && w.frame.type === "response" && w.frame.id === undefined);
    for (const s of this.steps) {
      s.responses = (s.sent ?? []).map((c) => ({ command: c, response: byId.get(c.id) ?? null }));
      delete s.sent;
    }
    extra = { ...extra, idlessResponses: idless.map((w) => w.frame), ready: this.wire.find((w) => w.frame.type === "ready")?.frame ?? null };
    writeFileSync(path, JSON.stringify({ ...this.meta, ...extra, uncovered, steps: this.steps }, null, 1));
  }
}
