// ctx.ui over the channel. Dialogs (select, confirm, input, editor) are requests rho routes to
// its user-interface service, which each mode implements (RPC: extension_ui_request frames;
// interactive: dialogs; print and JSON mode have none, so ctx.hasUI is false there). Notices
// (notify, setStatus, setWidget with lines, setTitle, setEditorText) are fire-and-forget. What
// needs a terminal component does what pi's RPC mode does with it: nothing, or the default.

export function createUiContext(channel, currentTheme, components, footerData, editorSupport) {
  /** Widget components by key (a new widget for a key replaces the old one). */
  const widgets = new Map();
  /** The footer and header components, when set. */
  let footer;
  let header;
  /** The extension's editor (`setEditorComponent`): `{ id, editor, render }` and its factory. */
  let customEditor;
  let editorFactory;
  const dialog = (method, fields, defaultValue, opts, parse) => {
    if (opts?.signal?.aborted) return Promise.resolve(defaultValue);
    return new Promise((resolve) => {
      let settled = false;
      const request = channel.request({ type: "ui", method, ...fields, timeout: opts?.timeout });
      const onAbort = () => {
        if (settled) return;
        settled = true;
        channel.send({ type: "ui_cancel", target: request.id });
        resolve(defaultValue);
      };
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
      request.then(
        (answer) => {
          if (settled) return;
          settled = true;
          opts?.signal?.removeEventListener("abort", onAbort);
          resolve(answer?.cancelled ? defaultValue : parse(answer ?? {}));
        },
        () => {
          if (settled) return;
          settled = true;
          resolve(defaultValue);
        },
      );
    });
  };
  const notice = (method, fields) => channel.send({ type: "ui", method, ...fields });

  return {
    select: (title, options, opts) =>
      dialog("select", { title, options }, undefined, opts, (a) => a.value),
    confirm: (title, message, opts) =>
      dialog("confirm", { title, message }, false, opts, (a) => a.confirmed === true),
    input: (title, placeholder, opts) =>
      dialog("input", { title, placeholder }, undefined, opts, (a) => a.value),
    editor: (title, prefill) => dialog("editor", { title, prefill }, undefined, undefined, (a) => a.value),
    notify(message, type) {
      notice("notify", { message, notifyType: type });
    },
    setStatus(key, text) {
      footerData?.setExtensionStatus(key, text);
      components?.refresh();
      notice("setStatus", { statusKey: key, statusText: text });
    },
    setWidget(key, content, options) {
      if (widgets.has(key)) {
        components?.close(widgets.get(key));
        widgets.delete(key);
      }
      if (content === undefined || Array.isArray(content)) {
        notice("setWidget", { widgetKey: key, widgetLines: content, widgetPlacement: options?.placement });
      } else if (typeof content === "function" && components) {
        widgets.set(key, components.widget(key, content, currentTheme(), options?.placement));
      }
      // Elsewhere a component factory does nothing, as in pi's RPC mode: it needs a terminal.
    },
    setTitle(title) {
      notice("setTitle", { title });
    },
    setEditorText(text) {
      if (customEditor?.open()) {
        customEditor.editor.setText?.(text ?? "");
        customEditor.render();
        return;
      }
      notice("set_editor_text", { text: text ?? "" });
    },
    pasteToEditor(text) {
      if (customEditor?.open() && typeof customEditor.editor.insertTextAtCursor === "function") {
        customEditor.editor.insertTextAtCursor(text);
        customEditor.render();
        return;
      }
      this.setEditorText(text);
    },
    getEditorText: () => (customEditor?.open() ? (customEditor.editor.getText?.() ?? "") : ""),
    onTerminalInput: () => () => {},
    setWorkingMessage() {},
    setWorkingVisible() {},
    setWorkingIndicator() {},
    setHiddenThinkingLabel() {},
    setFooter(factory) {
      if (footer !== undefined) components?.close(footer);
      footer = typeof factory === "function" && components ? components.footer(factory, currentTheme(), footerData) : undefined;
    },
    setHeader(factory) {
      if (header !== undefined) components?.close(header);
      header = typeof factory === "function" && components ? components.header(factory, currentTheme()) : undefined;
    },
    custom: components
      ? (factory, options) => components.custom(factory, currentTheme(), options)
      : async () => undefined,
    addAutocompleteProvider() {},
    setEditorComponent(factory) {
      const text = customEditor?.open() ? customEditor.editor.getText?.() : undefined;
      if (customEditor !== undefined) components?.close(customEditor.id);
      customEditor = undefined;
      editorFactory = typeof factory === "function" ? factory : undefined;
      if (editorFactory && components) {
        const mounted = components.customEditor(editorFactory, editorSupport.theme(), editorSupport.autocomplete());
        if (text) mounted.editor.setText?.(text);
        customEditor = { ...mounted, open: () => components.isOpen(mounted.id) };
      }
    },
    getEditorComponent: () => editorFactory,
    get theme() {
      return currentTheme();
    },
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => ({ success: false, error: "Theme switching is not available to extensions in rho" }),
    getToolsExpanded: () => false,
    setToolsExpanded() {},
  };
}
