// Loading extensions: pi's loader run with `process.exit` turned into an error, the command
// line's values for the flags extensions register, and what the loaded extensions registered, as
// rho needs it.

/** Runs `load` with `process.exit` turned into an error: an extension that exits while it loads
 *  fails to load (and says why) instead of taking every other extension down with it. */
export async function withoutExit(load) {
  const exit = process.exit;
  process.exit = (code) => {
    throw new Error(`process.exit(${code ?? ""}) was called while the extension loaded`);
  };
  try {
    return await load();
  } finally {
    process.exit = exit;
  }
}

/** pi's rules for `--flag value` on the command line: booleans are set, others take the value. */
export function applyFlagValues(extensions, runtime, flagValues) {
  const registered = new Map();
  for (const extension of extensions) {
    for (const [name, flag] of extension.flags) registered.set(name, flag);
  }
  const diagnostics = [];
  const unknown = [];
  for (const [name, value] of flagValues) {
    const flag = registered.get(name);
    if (!flag) {
      unknown.push(name);
    } else if (flag.type === "boolean") {
      runtime.flagValues.set(name, true);
    } else if (typeof value === "string") {
      runtime.flagValues.set(name, value);
    } else {
      diagnostics.push({ type: "error", message: `Extension flag "--${name}" requires a value` });
    }
  }
  if (unknown.length > 0) {
    const names = unknown.map((name) => `--${name}`).join(", ");
    diagnostics.push({ type: "error", message: `Unknown option${unknown.length === 1 ? "" : "s"}: ${names}` });
  }
  return diagnostics;
}

/** What the extensions `runner` runs registered, as rho needs it. */
export function registered(runner) {
  const tools = runner.getAllRegisteredTools().map(({ definition, sourceInfo }) => ({
    name: definition.name,
    label: definition.label,
    description: definition.description ?? "",
    parameters: definition.parameters ?? { type: "object", properties: {} },
    promptSnippet: definition.promptSnippet,
    promptGuidelines: definition.promptGuidelines,
    executionMode: definition.executionMode,
    renderCall: typeof definition.renderCall === "function",
    renderResult: typeof definition.renderResult === "function",
    // Arguments then go through prepareArguments and are validated here, as pi does.
    prepareArguments: typeof definition.prepareArguments === "function",
    sourceInfo,
  }));
  const commands = runner.getRegisteredCommands().map((command) => ({
    name: command.invocationName,
    description: command.description,
    sourceInfo: command.sourceInfo,
  }));
  const shortcuts = [];
  const flags = [];
  const renderers = [];
  const entryRenderers = [];
  for (const extension of runner.extensions) {
    for (const [shortcut, entry] of extension.shortcuts) {
      shortcuts.push({ shortcut, description: entry.description, extensionPath: extension.path });
    }
    for (const [name, flag] of extension.flags) {
      flags.push({ name, type: flag.type, description: flag.description, default: flag.default });
    }
    renderers.push(...extension.messageRenderers.keys());
    entryRenderers.push(...(extension.entryRenderers?.keys() ?? []));
  }
  const markdownTransformers = new Set();
  for (const extension of runner.extensions) {
    for (const surface of extension.markdownTransformer?.messageTypes ?? []) markdownTransformers.add(surface);
  }
  const handlers = new Set();
  for (const extension of runner.extensions) {
    for (const [event, list] of extension.handlers) {
      if (list.length > 0) handlers.add(event);
    }
  }
  return {
    extensions: runner.extensions.map((e) => ({ path: e.path, resolvedPath: e.resolvedPath })),
    tools,
    commands,
    shortcuts,
    flags,
    renderers,
    entryRenderers,
    toolRenderers: runner.extensions.some((e) => (e.toolRenderers ?? []).length > 0),
    markdownTransformers: [...markdownTransformers],
    handlers: [...handlers],
  };
}
