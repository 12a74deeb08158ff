// rho's extension host: loads pi extensions with pi's own loader and runs them with pi's own
// ExtensionRunner, so handlers chain, block and fail exactly as they do in pi. rho stays the
// agent: this process only runs extension code. What the runner asks of "the session" (send a
// message, append an entry, set the model, open a dialog) becomes a message to rho; what rho
// knows (the session's entries, the model, the tools) arrives before each event. See
// crates/rho-coding-agent/src/extensions/ for the other side.


import { AsyncLocalStorage } from "node:async_hooks";
import { Channel } from "./channel.mjs";
import { createComponents } from "./components.mjs";
import { beforeAgentStart, boundary, userBash } from "./answers.mjs";
import { applyFlagValues, registered, withoutExit } from "./loading.mjs";
import { capContent, removeSpillFiles } from "./output-cap.mjs";
import { askProjectTrust } from "./project-trust.mjs";
import { createNativeProviders } from "./native-providers.mjs";
import { createProviderStreams } from "./provider-streams.mjs";
import { createRenderer } from "./render.mjs";
import { resolveExtensions as resolveWith } from "./resolve.mjs";
import { createSessionMirror } from "./session-mirror.mjs";
import { createUiContext } from "./ui.mjs";
import { createVirtualModels } from "./virtual-models.mjs";

// pi's loader resolves both scopes an extension may import: today's `@earendil-works/*` and
// pi 0.73's `@mariozechner/*`.
const indexUrl = import.meta.resolve("@earendil-works/pi-coding-agent");
const pi = await import(indexUrl);
const piAi = await import("@earendil-works/pi-ai");
const piTui = await import("@earendil-works/pi-tui");
// Not re-exported by the package index; the version is pinned, so the paths are stable.
const loader = await import(new URL("./core/extensions/loader.js", indexUrl).href);
const themes = await import(new URL("./modes/interactive/theme/theme.js", indexUrl).href);
const keybindingsModule = await import(new URL("./core/keybindings.js", indexUrl).href);
const footerDataModule = await import(new URL("./core/footer-data-provider.js", indexUrl).href);
const runnerModule = await import(new URL("./core/extensions/runner.js", indexUrl).href);

/** What rho last said about itself (model, level, tools, idle, …). */
const state = {
  model: undefined,
  thinkingLevel: "off",
  idle: true,
  pendingMessages: 0,
  sessionName: undefined,
  activeTools: [],
  allTools: [],
  systemPrompt: "",
  contextUsage: undefined,
  commands: [],
  scopedModels: [],
};

let init;
let mirror;
let settingsManager;
let modelRegistry;
let ui;
/** Terminal components, where the mode draws them (the interactive mode), and what pi gives a
 *  footer component to read (the git branch, the statuses). */
let components;
let footerData;
/** The loaded extensions and their runner; replaced on reload and session replacement. */
let current;
/** The abort signal of the run in progress (ctx.signal). */
let runAbort;
/** Aborts for the tool calls, commands and handlers in progress, by rho's request id. */
const aborts = new Map();
/** The event whose handlers are running (through their awaits): what an action was asked in. */
const handling = new AsyncLocalStorage();
/** Events are handled one at a time, in the order rho sent them, as pi's session queues them. */
let queue = Promise.resolve();

const channel = new Channel(process.env.RHO_EXTENSION_SOCKET, (message) => {
  try {
    handle(message);
  } catch (err) {
    reportError("<host>", message.type ?? "message", err);
  }
});

/** The `streamSimple`s extensions registered. */
const providerStreams = createProviderStreams(channel, () => modelRegistry);
const nativeProviders = createNativeProviders(() => modelRegistry, providerStreams, action, () => init);
/** The routers of the virtual models extensions registered. */
const virtualModels = createVirtualModels(() => modelRegistry);
/** Renderers' state per tool call (shared by its call and its result). */
const renderer = createRenderer();

process.on("uncaughtException", (err) => reportError("<host>", "uncaughtException", err));
process.on("unhandledRejection", (err) => reportError("<host>", "unhandledRejection", err));

function reportError(extensionPath, event, err) {
  channel.send({
    type: "error",
    extensionPath,
    event,
    error: err instanceof Error ? err.message : String(err),
    stack: err instanceof Error ? err.stack : undefined,
  });
}

function handle(message) {
  switch (message.type) {
    case "init":
      respond(message.id, start(message));
      break;
    case "sync":
      mirror.apply(message);
      components?.refresh();
      break;
    case "state":
      Object.assign(state, message.state);
      components?.refresh();
      break;
    case "run_start":
      runAbort = new AbortController();
      break;
    case "run_abort":
      runAbort?.abort();
      break;
    case "run_end":
      runAbort = undefined;
      break;
    case "event":
      enqueue(message.id, () => emit(message.kind, message.event));
      break;
    case "flush":
      enqueue(message.id, () => null);
      break;
    case "ping":
      // Outside the queue: rho asks whether this process still runs its event loop.
      respond(message.id, null);
      break;
    case "replace":
      // Not given up on: the events after it need the extensions it loads (a reload may install
      // packages first).
      enqueue(message.id, () => replace(message), { deadline: false });
      break;
    case "tool":
      respond(message.id, withAbort(message.id, (signal) => runTool(message, signal)));
      break;
    case "render":
      respond(
        message.id,
        Promise.resolve().then(() => renderer.render(message, current.runner, themes.theme, init.cwd)),
      );
      break;
    case "route":
      respond(message.id, withAbort(message.id, (signal) => virtualModels.route(message, signal)));
      break;
    case "provider_stream":
      respond(message.id, withAbort(message.id, (signal) => providerStreams.stream(message, signal)));
      break;
    case "command":
      respond(message.id, withAbort(message.id, () => runCommand(message.name, message.args)));
      break;
    case "project_trust":
      respond(message.id, askProjectTrust(runnerModule, current.runner, init.mode, message.cwd, channel));
      break;
    case "shortcut":
      respond(message.id, runShortcut(message.shortcut));
      break;
    case "cancel":
      aborts.get(message.target)?.abort();
      break;
    case "editor_text":
      ui?.setEditorText(message.text);
      break;
    case "component_input":
      components?.input(message.target, message.data);
      break;
    case "resize":
      components?.resize(message.columns, message.rows);
      break;
    case "shutdown":
      enqueue(message.id, async () => {
        if (current?.runner.hasHandlers("session_shutdown")) {
          await current.runner.emit({ type: "session_shutdown", reason: "quit" });
        }
        removeSpillFiles();
      });
      break;
    default:
      reportError("<host>", "message", new Error(`unknown message type ${message.type}`));
  }
}

function enqueue(id, work, { deadline = true } = {}) {
  const done = queue.then(() => (deadline ? withDeadline(work) : work()));
  queue = done.catch(() => {});
  respond(id, done);
}

/**
 * `work`, given up on after rho's hook timeout as rho gives up on it: a handler that never
 * settles fails with the same words rho uses, and the events after it run (the handler itself
 * goes on in the background, as nothing can stop it). While this process waits on rho (a dialog,
 * a session action), the time does not count.
 */
function withDeadline(work) {
  const running = Promise.resolve().then(work);
  const limit = init?.hookTimeoutMs;
  if (!limit) return running;
  return new Promise((resolve, reject) => {
    let timer;
    const arm = () => {
      timer = setTimeout(() => {
        if (channel.pending.size > 0) arm();
        else reject(new Error(`no answer within ${limit / 1000} s`));
      }, limit);
    };
    arm();
    running.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** Sends the outcome of `work` back as the answer to rho's request `id` (when it has one). */
function respond(id, work) {
  Promise.resolve(work).then(
    (value) => {
      if (id !== undefined) channel.send({ type: "result", id, value: value ?? null });
    },
    (err) => {
      if (id !== undefined) {
        channel.send({ type: "result", id, error: err instanceof Error ? err.message : String(err) });
      }
    },
  );
}

function withAbort(id, work) {
  const controller = new AbortController();
  aborts.set(id, controller);
  return Promise.resolve()
    .then(() => work(controller.signal))
    .finally(() => aborts.delete(id));
}

// ---------------------------------------------------------------------------------------------
// Start-up, reload and session replacement
// ---------------------------------------------------------------------------------------------

async function start(message) {
  init = message;
  Object.assign(state, message.state ?? {});
  try {
    pi.initTheme(message.theme, false);
  } catch {
    // A theme that cannot be read leaves pi's default; extensions only style text with it.
  }
  const modelRuntime = await pi.ModelRuntime.create({
    authPath: `${message.agentDir}/auth.json`,
    modelsPath: `${message.agentDir}/models.json`,
    allowModelNetwork: false,
  });
  modelRegistry = new pi.ModelRegistry(modelRuntime);
  mirror = createSessionMirror(pi.SessionManager, message.cwd);
  mirror.apply(message.session);
  if (message.terminal) {
    components = createComponents(channel, keybindingsModule.KeybindingsManager.create(message.agentDir));
    components.resize(message.terminal.columns, message.terminal.rows);
    footerData = new footerDataModule.FooterDataProvider(message.cwd);
  }
  const editorSupport = { theme: () => themes.getEditorTheme(), autocomplete: editorAutocomplete };
  ui = message.hasUI ? createUiContext(channel, () => themes.theme, components, footerData, editorSupport) : undefined;
  init.original = { ...message };
  const resolved = await resolveWith(pi, message);
  init.extensions = resolved.extensions;
  const diagnostics = await load(message.flagValues ?? []);
  return { ...registered(current.runner), diagnostics, errors: current.errors, packageResources: resolved.resources };
}

/** Loads the extensions afresh (their factories run again) and binds a new runner. */
async function load(flagValues) {
  const previousFlags = current ? current.runner.getFlagValues() : undefined;
  const { extensions, errors, runtime } = await withoutExit(() => loader.loadExtensions(init.extensions, init.cwd));
  if (previousFlags) {
    for (const [name, value] of previousFlags) runtime.flagValues.set(name, value);
  }
  const diagnostics = applyFlagValues(extensions, runtime, flagValues);
  const runner = new pi.ExtensionRunner(extensions, runtime, init.cwd, mirror.manager, modelRegistry);
  current = { runner, errors: errors.map((e) => ({ path: e.path, error: e.error })) };
  bind(runner);
  followMcpServers(runner, runtime);
  // Providers registered whole reach rho before the registrations do (`--model` may name one).
  await nativeProviders.settled();
  return diagnostics;
}

/** MCP servers extensions register: rho runs them (pi leaves them to an extension that
 *  listens to `mcp_servers_change`, and reports them unhandled without one), so the whole list
 *  goes to rho after every change; `mcp_servers_change` still reaches the handlers. */
function followMcpServers(runner, runtime) {
  const report = () =>
    action("setMcpServers", {
      servers: runtime.mcpServers.list().map(({ name, config, extensionPath }) => ({ name, config, extensionPath })),
    });
  runtime.mcpServers.setChangeListener(() => {
    report();
    if (runner.hasHandlers("mcp_servers_change")) {
      void runner.emit({ type: "mcp_servers_change", servers: runtime.mcpServers.list() });
    }
  });
  report();
}

/** Completion for an extension's editor, as pi gives its editor: the slash commands (rho's and
 *  the extensions') and paths under the working directory. */
function editorAutocomplete() {
  const commands = [
    ...state.commands.map((c) => ({ name: c.name, description: c.description })),
    ...(current?.runner.getRegisteredCommands() ?? []).map((c) => ({ name: c.invocationName, description: c.description })),
  ];
  return new piTui.CombinedAutocompleteProvider(commands, init.cwd);
}

/** Session replaced (new, resume, fork) or reloaded: pi tears the extensions down and loads them again. */
async function replace(message) {
  const { reason, previousSessionFile, targetSessionFile } = message;
  const old = current.runner;
  if (old.hasHandlers("session_shutdown")) {
    await old.emit({ type: "session_shutdown", reason, targetSessionFile });
  }
  old.invalidate();
  providerStreams.clear();
  virtualModels.clear();
  components?.closeAll();
  footerData?.clearExtensionStatuses();
  if (message.sync) mirror.apply(message.sync);
  if (reason === "reload") {
    // pi's /reload reads the settings and resolves the packages again.
    init.extensions = (await resolveWith(pi, init.original)).extensions;
  }
  await load([]);
  const event = { type: "session_start", reason };
  if (reason !== "reload" && previousSessionFile !== undefined) event.previousSessionFile = previousSessionFile;
  await current.runner.emit(event);
  return { ...registered(current.runner), errors: current.errors };
}

function bind(runner) {
  runner.onError((err) => channel.send({ type: "error", ...err }));
  runner.bindCore(
    {
      sendMessage: (message, options) => action("sendMessage", { message, options, during: handling.getStore() }),
      sendUserMessage: (content, options) => action("sendUserMessage", { content, options }),
      appendEntry: (customType, data) => action("appendEntry", { customType, data }),
      setSessionName: (name) => {
        state.sessionName = name;
        action("setSessionName", { name });
      },
      getSessionName: () => mirror.manager.getSessionName() ?? state.sessionName,
      setLabel: (entryId, label) => action("setLabel", { entryId, label }),
      getActiveTools: () => [...state.activeTools],
      getAllTools: () => state.allTools.map((tool) => ({ ...tool })),
      getSettings: () => settings().getSettings(),
      setActiveTools: (names) => {
        state.activeTools = [...names];
        action("setActiveTools", { names });
      },
      refreshTools: () => channel.send({ type: "registrations", ...registered(current.runner) }),
      getCommands: () => [
        ...runner.getRegisteredCommands().map((command) => ({
          name: command.invocationName,
          description: command.description,
          source: "extension",
          sourceInfo: command.sourceInfo,
        })),
        ...state.commands,
      ],
      setModel: (model) => channel.request({ type: "action", action: "setModel", provider: model.provider, modelId: model.id }),
      getThinkingLevel: () => state.thinkingLevel,
      setThinkingLevel: (level) => {
        state.thinkingLevel = level;
        action("setThinkingLevel", { level });
      },
    },
    {
      getModel: () => currentModel(),
      getScopedModels: () =>
        state.scopedModels.map(({ model, thinkingLevel }) => ({
          model: modelRegistry.find(model.provider, model.id) ?? model,
          ...(thinkingLevel ? { thinkingLevel } : {}),
        })),
      isIdle: () => state.idle,
      isProjectTrusted: () => init.trustedProject,
      getSignal: () => runAbort?.signal,
      abort: () => action("abort", {}),
      hasPendingMessages: () => state.pendingMessages > 0,
      shutdown: () => action("shutdown", {}),
      getContextUsage: () => state.contextUsage,
      compact: (options) => {
        channel
          .request({ type: "action", action: "compact", customInstructions: options?.customInstructions })
          .then(
            (result) => options?.onComplete?.(result),
            (err) => options?.onError?.(err instanceof Error ? err : new Error(String(err))),
          );
      },
      getSystemPrompt: () => state.systemPrompt,
      getSystemPromptOptions: () => systemPromptOptions(),
    },
    {
      registerProvider: (name, config) => {
        modelRegistry.registerProvider(name, config);
        const streams = typeof config.streamSimple === "function";
        providerStreams.register(name, config);
        action("registerProvider", { provider: name, config, streamSimple: streams });
      },
      registerNativeProvider: (provider) => nativeProviders.register(provider),
      unregisterProvider: (name) => {
        modelRegistry.unregisterProvider(name);
        providerStreams.unregister(name);
        action("unregisterProvider", { provider: name });
      },
      registerVirtualModel: (definition) => {
        modelRegistry.registerVirtualModel(definition);
        virtualModels.register(definition);
        action("registerVirtualModel", { definition: virtualModels.describe(definition) });
      },
      unregisterVirtualModel: (provider, id) => {
        modelRegistry.unregisterVirtualModel(provider, id);
        virtualModels.unregister(provider, id);
        action("unregisterVirtualModel", { provider, id });
      },
    },
  );
  runner.bindCommandContext({
    waitForIdle: () => channel.request({ type: "action", action: "waitForIdle" }),
    newSession: async (options) => {
      let entries;
      if (options?.setup) {
        const scratch = pi.SessionManager.inMemory(init.cwd);
        await options.setup(scratch);
        entries = scratch.getEntries();
      }
      const result = await channel.request({
        type: "action",
        action: "newSession",
        parentSession: options?.parentSession,
        entries,
      });
      return afterReplacement(result, options);
    },
    fork: async (entryId, options) => {
      const result = await channel.request({ type: "action", action: "fork", entryId, position: options?.position });
      return afterReplacement(result, options);
    },
    navigateTree: (targetId, options) =>
      channel.request({
        type: "action",
        action: "navigateTree",
        targetId,
        summarize: options?.summarize,
        customInstructions: options?.customInstructions,
        replaceInstructions: options?.replaceInstructions,
        label: options?.label,
      }),
    switchSession: async (sessionPath, options) => {
      const result = await channel.request({ type: "action", action: "switchSession", sessionPath });
      return afterReplacement(result, options);
    },
    reload: () => channel.request({ type: "action", action: "reload" }),
  });
  runner.setUIContext(ui, init.mode);
}

/** pi's settings as the extensions read them (`pi.getSettings()`): the same files rho reads. */
function settings() {
  settingsManager ??= pi.SettingsManager.create(init.cwd, init.agentDir);
  return settingsManager;
}

/** The options pi builds its system prompt from; rho builds its own, so the prompt it made is
 *  passed as pi's `forceSystemPrompt` (what a handler that replaces the prompt sets too). */
function systemPromptOptions() {
  return { cwd: init.cwd, forceSystemPrompt: state.systemPrompt };
}

/** Runs a `withSession` callback against the replacement session, as pi does. */
async function afterReplacement(result, options) {
  const cancelled = result?.cancelled === true;
  if (!cancelled && options?.withSession) {
    const runner = current.runner;
    const ctx = Object.defineProperties({}, Object.getOwnPropertyDescriptors(runner.createCommandContext()));
    ctx.sendMessage = async (message, sendOptions) => action("sendMessage", { message, options: sendOptions });
    ctx.sendUserMessage = async (content, sendOptions) =>
      action("sendUserMessage", { content, options: sendOptions });
    await options.withSession(ctx);
  }
  return { cancelled };
}

function action(name, fields) {
  channel.send({ type: "action", action: name, ...fields });
}

function currentModel() {
  const model = state.model;
  if (!model) return undefined;
  return modelRegistry.find(model.provider, model.id) ?? model;
}

// ---------------------------------------------------------------------------------------------
// Events, tools, commands, shortcuts
// ---------------------------------------------------------------------------------------------

async function emit(kind, event) {
  const runner = current.runner;
  switch (kind) {
    case "tool_call": {
      try {
        const result = await runner.emitToolCall(event);
        return { block: result?.block === true, reason: result?.reason, input: event.input };
      } catch (err) {
        // pi blocks a call whose tool_call handler throws, with the error as the result.
        return { block: true, reason: err instanceof Error ? err.message : String(err), input: event.input };
      }
    }
    case "tool_result":
      return runner.emitToolResult(event);
    case "message_end":
      return runner.emitMessageEnd(event);
    case "context":
      return runner.emitContext(event.messages);
    case "before_provider_request":
      return runner.emitBeforeProviderRequest(event.payload);
    case "before_provider_headers":
      return runner.emitBeforeProviderHeaders(event.headers);
    case "before_agent_start":
      return beforeAgentStart(runner, init.cwd, event);
    case "input":
      return runner.emitInput(event.text, event.images, event.source, event.streamingBehavior ?? undefined);
    case "resources_discover":
      return runner.emitResourcesDiscover(event.cwd, event.reason);
    case "user_bash":
      return userBash(runner, event);
    case "boundary":
      return boundary(pi, runner, mirror.manager, init.cwd, state.pendingMessages > 0, event);
    default:
      return handling.run(event.type, () => runner.emit(event));
  }
}

async function runTool(message, signal) {
  const definition = current.runner.getToolDefinition(message.name);
  if (!definition) throw new Error(`Tool ${message.name} not found`);
  const ctx = current.runner.createToolContext(message.toolCallId, signal);
  const onUpdate = (partial) =>
    channel.send({ type: "tool_update", id: message.id, partial: { ...partial, content: capContent(partial?.content, false) } });
  let params = message.params;
  if (typeof definition.prepareArguments === "function") {
    const prepared = definition.prepareArguments(params);
    params = piAi.validateToolArguments(
      { name: definition.name, parameters: definition.parameters },
      { name: definition.name, arguments: prepared },
    );
  }
  const result = await definition.execute(message.toolCallId, params, signal, onUpdate, ctx);
  return {
    content: capContent(result?.content ?? []),
    details: result?.details,
    structuredContent: result?.structuredContent,
    terminate: result?.terminate === true ? true : undefined,
  };
}

async function runCommand(name, args) {
  const runner = current.runner;
  const command = runner.getCommand(name);
  if (!command) throw new Error(`Unknown extension command: /${name}`);
  try {
    await command.handler(args, runner.createCommandContext());
  } catch (err) {
    runner.emitError({
      extensionPath: `command:${name}`,
      event: "command",
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

async function runShortcut(shortcut) {
  const runner = current.runner;
  for (const extension of runner.extensions) {
    const entry = extension.shortcuts.get(shortcut);
    if (!entry) continue;
    try {
      await entry.handler(runner.createContext());
    } catch (err) {
      runner.emitError({ extensionPath: extension.path, event: "shortcut", error: String(err?.message ?? err) });
    }
    return true;
  }
  return false;
}

channel.send({ type: "hello", pid: process.pid });
