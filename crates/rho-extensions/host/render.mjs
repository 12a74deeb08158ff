// Extensions' renderers for rho's terminal history: a custom message's
// (`registerMessageRenderer`), a custom entry's (`registerEntryRenderer`) and a tool's call and
// result (the resolvers of `registerToolRenderer` in load order, then the tool's own
// `renderCall` / `renderResult`). Each gives a pi-tui component; its lines at the terminal's
// width go back to rho, or null to use rho's own rendering. A tool's call and result share
// their `state`, as in pi. Markdown rho is about to draw goes through the markdown
// transformers in load order (`registerMarkdownTransformer`); one that throws or answers no
// string leaves the markdown as it was, and the next runs.

export function createRenderer() {
  /** Renderer state by tool call id, from the call's rendering to the result's. */
  const toolState = new Map();
  return {
    render(message, runner, theme, cwd) {
      const { width, expanded } = message;
      if (message.target === "message") {
        const renderer = runner.getMessageRenderer(message.message.customType);
        const component = renderer?.(message.message, { expanded }, theme);
        return component ? { lines: component.render(width) } : null;
      }
      if (message.target === "markdown") {
        const { messageType, isStreaming, availableWidth, messageId, timestamp } = message;
        const context = { messageType, isStreaming, availableWidth, messageId, timestamp };
        let markdown = message.markdown;
        for (const transform of runner.getMarkdownTransformers()) {
          try {
            const transformed = transform(markdown, context);
            if (typeof transformed === "string") markdown = transformed;
          } catch {
            // Kept as it was; the next transformer runs.
          }
        }
        return { markdown };
      }
      if (message.target === "entry") {
        const renderer = runner.getEntryRenderer(message.entry.customType);
        const component = renderer?.(message.entry, { expanded }, theme);
        return component ? { lines: component.render(width) } : null;
      }
      const definition = runner.getToolDefinition(message.toolName);
      const own = () =>
        definition && (definition.renderCall || definition.renderResult)
          ? { renderCall: definition.renderCall, renderResult: definition.renderResult }
          : undefined;
      const renderers = runner.resolveToolRenderers(message.toolName, own);
      const slot = message.target === "tool_call" ? renderers?.renderCall : renderers?.renderResult;
      if (typeof slot !== "function") return null;
      let state = toolState.get(message.toolCallId);
      if (!state) {
        state = {};
        toolState.set(message.toolCallId, state);
      }
      const context = {
        args: message.args ?? {},
        toolCallId: message.toolCallId,
        invalidate() {},
        lastComponent: undefined,
        state,
        cwd,
        executionStarted: true,
        argsComplete: true,
        isPartial: false,
        expanded,
        showImages: false,
        isError: message.isError ?? false,
      };
      let component;
      if (message.target === "tool_call") {
        component = slot(message.args ?? {}, theme, context);
      } else {
        toolState.delete(message.toolCallId);
        component = slot(message.result, { expanded, isPartial: false }, theme, context);
      }
      return component ? { lines: component.render(width) } : null;
    },
  };
}
