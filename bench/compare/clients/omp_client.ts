// Drives omp 18.2.3's own RpcClient (@oh-my-pi/pi-coding-agent, src/modes/rpc/rpc-client.ts)
// over every public method of the class, against omp itself or against rho, and writes what each
// call gave to a JSON file. Runs under Bun only (the client uses ptree/Bun.spawn, Bun.JSONL).
//
//   bun omp_client.ts <config.json>
//
// config.json (written by run.py):
//   {"pkg": "<node_modules/@oh-my-pi/pi-coding-agent>", "target": "omp"|"rho",
//    "command": ["bun", "<omp dist/cli.js>"] | ["<path to rho>"],
//    "provider": "mock", "model": "mock-model", "args": [], "cwd": "...", "out": "<result.json>"}
//
// The client builds the argv as [...command, "--mode", "rpc", "--provider", p, "--model", m, ...args]
// (what the `command` option does); the `spawn` option is used only to run that argv through the
// same ptree.spawn the client uses and to tee stdin/stdout, so the raw command and response lines
// are recorded too (the client ignores a failed response for prompt, steer, set_thinking_level...).
// The environment (HOME, PI_CODING_AGENT_DIR / RHO_CODING_AGENT_DIR) is inherited.

import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Recorder, sleep } from "./common.mjs";

const cfg = JSON.parse(readFileSync(process.argv[2], "utf8"));
const pkg: string = cfg.pkg;
const { RpcClient } = (await import(`${pkg}/src/modes/rpc/rpc-client.ts`)) as any;
const { ptree } = (await import(`${pkg}/../pi-utils/src/index.ts`)) as any;
const version = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version;

// ---- the methods to cover: the class's prototype, cross-checked with the source ----------------
const src = readFileSync(join(pkg, "src/modes/rpc/rpc-client.ts"), "utf8");
const classBody = src.slice(src.indexOf("export class RpcClient"));
const srcPublic = [...classBody.matchAll(/^\t(?:async )?([A-Za-z]\w*)\(/gm)].map(m => m[1]).filter(n => n !== "constructor");
if (/^\t\[Symbol\.dispose\]\(/m.test(classBody)) srcPublic.push("[Symbol.dispose]");
const protoPublic = Object.getOwnPropertyNames(RpcClient.prototype).filter(
	n => n !== "constructor" && typeof RpcClient.prototype[n] === "function",
);
if (typeof RpcClient.prototype[Symbol.dispose] === "function") protoPublic.push("[Symbol.dispose]");
const methods = [...new Set([...srcPublic, ...protoPublic])];
const srcMismatch = methods.filter(m => !srcPublic.includes(m) || !protoPublic.includes(m));

const rec = new Recorder({
	client: "omp",
	clientPackage: "@oh-my-pi/pi-coding-agent",
	clientVersion: version,
	target: cfg.target,
	methods,
	dtsMismatch: srcMismatch,
});

// ptree.spawn as the client would call it, with stdin/stdout teed into the recorder.
function recordingSpawn(agentArgs: string[]) {
	const child = ptree.spawn([...cfg.command, ...agentArgs], { cwd: cfg.cwd, env: { ...Bun.env }, stdin: "pipe" });
	const [forClient, forRecorder] = (child.stdout as ReadableStream<Uint8Array>).tee();
	void (async () => {
		const decoder = new TextDecoder();
		let buf = "";
		for await (const chunk of forRecorder) {
			buf += decoder.decode(chunk, { stream: true });
			let i: number;
			while ((i = buf.indexOf("\n")) !== -1) {
				const line = buf.slice(0, i);
				buf = buf.slice(i + 1);
				try {
					rec.received(JSON.parse(line));
				} catch {
					rec.received({ type: "response", command: "$unparsable-line", raw: line.slice(0, 300) });
				}
			}
		}
	})().catch(() => {});
	const stdin = child.stdin as any;
	return {
		stdin: {
			write(data: string | Uint8Array) {
				const text = typeof data === "string" ? data : new TextDecoder().decode(data);
				for (const line of text.split("\n")) {
					if (line.trim()) {
						try {
							rec.sent(JSON.parse(line));
						} catch {
							rec.sent({ raw: line });
						}
					}
				}
				return stdin.write(data);
			},
			flush() {
				return stdin.flush();
			},
		},
		stdout: forClient,
		peekStderr: () => child.peekStderr(),
		kill: (signal?: any, graceMs?: number) => child.kill(signal, graceMs),
		exited: child.exited,
	};
}

// A host tool (setCustomTools): the scripted model calls it once.
const hostCalls: unknown[] = [];
const hostEcho = {
	name: "host_echo",
	label: "Host echo",
	description: "Echoes the given text back (a tool run by the RPC host).",
	parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
	execute(params: Record<string, unknown>, ctx: { toolCallId: string }) {
		hostCalls.push({ params, hasToolCallId: typeof ctx.toolCallId === "string" });
		return `echo: ${params.text}`;
	},
};

const client = new RpcClient({
	cwd: cfg.cwd,
	provider: cfg.provider,
	model: cfg.model,
	args: cfg.args ?? [],
	terminationGraceMs: 1000,
	spawn: recordingSpawn,
});

const S = rec.step.bind(rec);
const isTextDelta = (e: any) => e.type === "message_update" && e.assistantMessageEvent?.type === "text_delta";
let fatal: string | null = null;
let agentEvents = 0;

try {
	await S("onSessionEvent", "onSessionEvent", () => typeof client.onSessionEvent((e: any) => rec.event(e)));
	await S("onEvent", "onEvent", () => typeof client.onEvent(() => void agentEvents++));
	await S("onAvailableCommandsUpdate", "onAvailableCommandsUpdate", () =>
		typeof client.onAvailableCommandsUpdate((cmds: unknown[]) =>
			rec.event({ type: "available_commands_update", count: Array.isArray(cmds) ? cmds.length : -1 }),
		),
	);
	await S("onSubagentLifecycle", "onSubagentLifecycle", () =>
		typeof client.onSubagentLifecycle((p: any) => rec.event({ type: "subagent_lifecycle", payload: p })),
	);
	await S("onSubagentProgress", "onSubagentProgress", () =>
		typeof client.onSubagentProgress((p: any) => rec.event({ type: "subagent_progress", payload: p })),
	);
	await S("onSubagentEvent", "onSubagentEvent", () =>
		typeof client.onSubagentEvent((p: any) => rec.event({ type: "subagent_event", payload: p })),
	);
	await S("start", "start", () => client.start(), { settleMs: 800 });
	await S("protocol", "start", () => {
		const neg = rec.wire.find(w => w.dir === "in" && w.frame.command === "negotiate_protocol");
		return neg ? { negotiated: neg.frame.success, data: neg.frame.data } : { negotiated: "not attempted" };
	}, { cmp: ["value"] });
	await S("getStderr", "getStderr", () => typeof client.getStderr());

	// ---- a fresh session ------------------------------------------------------------------------
	await S("getState#fresh", "getState", () => client.getState());
	await S("getAvailableCommands", "getAvailableCommands", () => client.getAvailableCommands());
	await S("getMessagesPage#empty", "getMessagesPage", () => client.getMessagesPage(), { cmp: ["value"] });
	await S("getMessages#empty", "getMessages", () => client.getMessages(), { cmp: ["len"] });
	await S("getLastAssistantText#empty", "getLastAssistantText", () => client.getLastAssistantText(), { cmp: ["value"] });
	await S("getBranchMessages#empty", "getBranchMessages", () => client.getBranchMessages(), { cmp: ["value"] });
	await S("getSessionStats#fresh", "getSessionStats", () => client.getSessionStats());
	await S("getAvailableModels", "getAvailableModels", () => client.getAvailableModels());
	await S("getLoginProviders", "getLoginProviders", () => client.getLoginProviders());
	await S("login(unknown provider)", "login", () => client.login("no-such-provider"), { timeoutMs: 20000 });
	await S("handoff#empty", "handoff", () => client.handoff());
	await S("compact#empty", "compact", () => client.compact());
	// a fresh session again, so that what compact#empty did (or not) does not carry over
	await S("newSession#reset", "newSession", () => client.newSession(), { cmp: ["value"] });

	// ---- fast mode, subagents ---------------------------------------------------------------------
	await S("setFastMode(true)", "setFastMode", () => client.setFastMode(true), { cmp: ["value"] });
	await S("setFastMode(false)", "setFastMode", () => client.setFastMode(false), { cmp: ["value"] });
	await S("setSubagentSubscription(progress)", "setSubagentSubscription", () => client.setSubagentSubscription("progress"), { cmp: ["value"] });
	await S("setSubagentSubscription(bogus)", "setSubagentSubscription", () => client.setSubagentSubscription("bogus"));
	await S("getSubagents", "getSubagents", () => client.getSubagents(), { cmp: ["value"] });
	await S("getSubagentMessages({})", "getSubagentMessages", () => client.getSubagentMessages({}));
	await S("getSubagentMessages(unknown id)", "getSubagentMessages", () => client.getSubagentMessages({ subagentId: "nope" }));
	await S("getSubagentMessages(fromByte NaN)", "getSubagentMessages", () =>
		client.getSubagentMessages({ subagentId: "nope", fromByte: Number.NaN }),
	);
	await S("getSubagentMessages(unknown file)", "getSubagentMessages", () =>
		client.getSubagentMessages({ sessionFile: join(cfg.cwd, "not-a-subagent.jsonl") }),
	);

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
	await S("wait#streaming", "onSessionEvent", () => firstUpdate.then((e: any) => e.type), { settleMs: 0, group: "queue" });
	await S("steer#streaming", "steer", () => client.steer("Steering message."), { settleMs: 0, group: "queue" });
	await S("followUp#streaming", "followUp", () => client.followUp("Follow-up message."), { settleMs: 0, group: "queue" });
	await S("prompt#streaming", "prompt", () => client.prompt("A prompt while streaming."), { settleMs: 0, group: "queue" });
	await S("waitForIdle#queued", "waitForIdle", () => idle, { group: "queue" });
	await S("getMessages#after-queue", "getMessages", async () => {
		const ms = await client.getMessages();
		return ms.map((m: any) =>
			`${m.role}:${typeof m.content === "string" ? m.content : (m.content ?? []).map((c: any) => c.text ?? c.type).join("")}`.slice(0, 60),
		);
	}, { cmp: ["value"] });

	// abort while streaming
	idle = client.waitForIdle(30000);
	firstUpdate = rec.waitEvent(isTextDelta);
	await S("prompt#slow-abort", "prompt", () => client.prompt("SLOW-ABORT: a long answer."), { settleMs: 0, group: "abort" });
	await S("wait#streaming-abort", "onSessionEvent", () => firstUpdate.then((e: any) => e.type), { settleMs: 0, group: "abort" });
	await S("abort#streaming", "abort", () => client.abort(), { settleMs: 0, group: "abort" });
	await S("waitForIdle#aborted", "waitForIdle", () => idle, { group: "abort" });
	await S("getLastAssistantText#after-abort", "getLastAssistantText", () => client.getLastAssistantText(), { cmp: ["value"] });

	// abortAndPrompt while streaming: the aborted run ends, the new prompt runs to its own agent_end
	firstUpdate = rec.waitEvent(isTextDelta);
	let ends = 0;
	const twoEnds = new Promise<void>((resolve, reject) => {
		const off = client.onEvent((e: any) => {
			if (e.type === "agent_end" && ++ends === 2) {
				off();
				resolve();
			}
		});
		setTimeout(() => reject(new Error(`only ${ends} agent_end within 30 s`)), 30000).unref();
	});
	await S("prompt#slow-abort-and-prompt", "prompt", () => client.prompt("SLOW-AP: a long answer."), { settleMs: 0, group: "ap" });
	await S("wait#streaming-ap", "onSessionEvent", () => firstUpdate.then((e: any) => e.type), { settleMs: 0, group: "ap" });
	await S("abortAndPrompt#streaming", "abortAndPrompt", () => client.abortAndPrompt("After the abort: say hi."), { settleMs: 0, group: "ap" });
	await S("wait#two-agent-ends", "onEvent", () => twoEnds.then(() => ends), { group: "ap" });
	await S("getLastAssistantText#after-abortAndPrompt", "getLastAssistantText", () => client.getLastAssistantText(), { cmp: ["value"] });

	// ---- bash -------------------------------------------------------------------------------------
	await S("bash(echo)", "bash", () => client.bash("echo bash-output; echo err >&2; exit 3"), { cmp: ["value"] });
	await S("bash(no output)", "bash", () => client.bash("true"), { cmp: ["value"] });
	await S("bash+abortBash", ["bash", "abortBash"], async () => {
		const running = client.bash("sleep 5; echo late");
		await sleep(400);
		await client.abortBash();
		return running;
	}, { cmp: ["value"] });

	// ---- paged messages ---------------------------------------------------------------------------
	const page1 = (await S("getMessagesPage(limit 1)", "getMessagesPage", () => client.getMessagesPage({ limit: 1 }))).value as any;
	await S("getMessagesPage(cursor)", "getMessagesPage", async () => {
		const p = await client.getMessagesPage({ cursor: page1?.nextCursor, limit: 2 });
		return { n: p.messages.length, hasNext: typeof p.nextCursor === "string", totalMessages: p.totalMessages };
	}, { cmp: ["value"] });
	await S("getMessagesPage(bad cursor)", "getMessagesPage", () => client.getMessagesPage({ cursor: "!!!" }));
	await S("getMessagesPage(limit 0)", "getMessagesPage", () => client.getMessagesPage({ limit: 0 }));
	await S("getMessagesPage(limit 257)", "getMessagesPage", () => client.getMessagesPage({ limit: 257 }));
	await S("getMessages", "getMessages", () => client.getMessages(), { cmp: ["len"] });
	await S("promptAndWait#before-stale", "promptAndWait", async () => (await client.promptAndWait("Fourth prompt.")).length);
	await S("getMessagesPage(stale cursor)", "getMessagesPage", () => client.getMessagesPage({ cursor: page1?.nextCursor }));

	// ---- session data -----------------------------------------------------------------------------
	const branchMessages = (await S("getBranchMessages", "getBranchMessages", () => client.getBranchMessages())).value as any;
	await S("getSessionStats", "getSessionStats", () => client.getSessionStats());
	await S("compact", "compact", () => client.compact("Keep it short."), { timeoutMs: 60000 });
	await S("getSessionStats#after-compact", "getSessionStats", () => client.getSessionStats());
	await S("getMessages#after-compact", "getMessages", () => client.getMessages(), { cmp: ["len"] });
	await S("promptAndWait#before-handoff", "promptAndWait", async () => (await client.promptAndWait("Fifth prompt.")).length);
	await S("handoff", "handoff", () => client.handoff("Hand off briefly."), { timeoutMs: 60000, cmp: ["value"] });
	await S("getMessages#after-handoff", "getMessages", () => client.getMessages(), { cmp: ["len"] });
	await S("exportHtml(default)", "exportHtml", () => client.exportHtml());
	mkdirSync(join(cfg.cwd, "exports"), { recursive: true });
	await S("exportHtml(path)", "exportHtml", () => client.exportHtml(join(cfg.cwd, "exports", "session.html")), { cmp: ["value"] });

	// ---- branch, new and switched sessions ---------------------------------------------------------
	const before = ((await S("getState#before-branch", "getState", () => client.getState())).value ?? {}) as any;
	const original = before.sessionFile;
	const second = Array.isArray(branchMessages)
		? (branchMessages.find((m: any) => m.text?.startsWith("Second prompt")) ?? branchMessages[0])
		: undefined;
	await S("branch(second user message)", "branch", () => client.branch(second?.entryId ?? "missing"), { cmp: ["value"] });
	await S("getState#after-branch", "getState", async () => {
		const s = await client.getState();
		return { messageCount: s.messageCount, newFile: s.sessionFile !== original };
	}, { cmp: ["value"] });
	await S("getBranchMessages#after-branch", "getBranchMessages", async () => (await client.getBranchMessages()).map((m: any) => m.text), { cmp: ["value"] });
	await S("branch(bogus)", "branch", () => client.branch("ffffffff"));
	await S("newSession()", "newSession", () => client.newSession(), { cmp: ["value"] });
	await S("getState#after-new", "getState", async () => (await client.getState()).messageCount, { cmp: ["value"] });
	await S("newSession(parent)", "newSession", () => client.newSession(original ?? "/nonexistent/parent.jsonl"), { cmp: ["value"] });
	await S("switchSession(original)", "switchSession", () => client.switchSession(original ?? "/nonexistent/original.jsonl"), { cmp: ["value"] });
	await S("getState#after-switch", "getState", async () => {
		const s = await client.getState();
		return { messageCount: s.messageCount, sameFile: s.sessionFile === original };
	}, { cmp: ["value"] });
	await S("switchSession(new path)", "switchSession", () => client.switchSession(join(cfg.cwd, "more-sessions", "new.jsonl")), { cmp: ["value"] });
	await S("getState#end", "getState", () => client.getState());
	// host tools (late: omp adds a message of its own to the session when a host tool is mounted)
	await S("setCustomTools([host_echo])", "setCustomTools", () => client.setCustomTools([hostEcho]), { cmp: ["value"] });
	await S("promptAndWait#host-tool", "promptAndWait", async () => {
		const events = await client.promptAndWait("HOST-TOOL: call the host tool.");
		return { hostCalls, toolEvents: events.filter((e: any) => e.type.startsWith("tool_execution")).map((e: any) => `${e.type}:${e.toolName}:${e.isError ?? ""}`) };
	}, { cmp: ["value"] });

	// last, in the fresh session switched to: a reply of blanks (omp answers it with a nudge and a new run)
	await S("promptAndWait#blank-reply", "promptAndWait", async () => {
		await client.promptAndWait("BLANK-REPLY: answer with spaces only.");
		// another run may follow on its own (omp nudges a model that stopped without output)
		const again = await rec.waitEvent((e: any) => e.type === "agent_end", 3000).then(() => 1, () => 0);
		return { extraRuns: again };
	}, { cmp: ["value"] });
	await S("getLastAssistantText#blank", "getLastAssistantText", () => client.getLastAssistantText(), { cmp: ["value"] });
	await S("onEvent#count", "onEvent", () => agentEvents > 0);
} catch (e: any) {
	fatal = String(e?.stack ?? e);
	console.error("FATAL", fatal);
} finally {
	const stderrTail = client.getStderr().slice(-4000);
	await rec.step("stop", "stop", () => client.stop(), { settleMs: 0 });
	await rec.step("[Symbol.dispose]", "[Symbol.dispose]", () => client[Symbol.dispose](), { settleMs: 0 });
	rec.write(cfg.out, { fatal, stderrTail });
}
process.exit(0);
