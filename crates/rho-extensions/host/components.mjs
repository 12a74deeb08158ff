// Terminal components (pi-tui: `render(width)` gives lines, `handleInput(data)` takes keys) run
// here and are drawn by rho: `ctx.ui.custom()` in the editor's place (or over the screen, as an
// overlay), widget factories above or below the editor, and a footer factory in the place of
// rho's footer. Each render's lines go to rho as a
// `component` message; the keys rho's terminal reads come back as `component_input`, in the
// terminal's own byte sequences, which is what pi-tui's key matching reads.

/** The app actions an extension's editor hands back to rho (pi's interactive mode binds the
 *  same ones on its editor). */
const APP_ACTIONS = [
  "app.clear",
  "app.suspend",
  "app.thinking.cycle",
  "app.model.cycleForward",
  "app.model.cycleBackward",
  "app.model.select",
  "app.tools.expand",
  "app.thinking.toggle",
  "app.message.followUp",
  "app.message.dequeue",
  "app.session.new",
  "app.session.tree",
  "app.session.fork",
  "app.session.resume",
];

export function createComponents(channel, keybindings) {
  const size = { columns: 80, rows: 24 };
  const open = new Map();
  let next = 1;

  /** A stand-in for pi-tui's TUI: what components call on it (`idOf` names the component once
   *  it is mounted: factories get their TUI before that). */
  function tuiFor(idOf) {
    return {
      requestRender: () => open.get(idOf())?.schedule(),
      terminal: {
        get columns() {
          return size.columns;
        },
        get rows() {
          return size.rows;
        },
      },
      setFocus() {},
      hideOverlay() {},
      invalidate() {},
    };
  }

  /** Mounts a component; returns its id. */
  function mount(component, kind, extra) {
    const id = `c${next++}`;
    let scheduled = false;
    const entry = {
      component,
      kind,
      render() {
        scheduled = false;
        if (!open.has(id)) return;
        let lines;
        try {
          lines = component.render(size.columns) ?? [];
        } catch (err) {
          lines = [`(the component failed to render: ${err instanceof Error ? err.message : String(err)})`];
        }
        channel.send({ type: "component", id, kind, lines, ...extra });
      },
      schedule() {
        if (!scheduled) {
          scheduled = true;
          setImmediate(() => entry.render());
        }
      },
    };
    open.set(id, entry);
    return { id, entry };
  }

  function unmount(id) {
    const entry = open.get(id);
    if (!entry) return;
    open.delete(id);
    channel.send({ type: "component_close", id });
    try {
      entry.component?.dispose?.();
    } catch {
      // A component that fails to clean up is gone either way.
    }
  }

  return {
    /** `ctx.ui.custom(factory, options)`: resolves with what the component passes to `done`. */
    custom(factory, theme, options) {
      return new Promise((resolve, reject) => {
        let id;
        let closed = false;
        const done = (value) => {
          if (closed) return;
          closed = true;
          if (id !== undefined) unmount(id);
          resolve(value);
        };
        Promise.resolve()
          .then(() => factory(tuiFor(() => id), theme, keybindings, done))
          .then((component) => {
            if (closed) {
              component?.dispose?.();
              return;
            }
            const mounted = mount(component, options?.overlay ? "overlay" : "editor", {});
            id = mounted.id;
            mounted.entry.dismiss = () => done(undefined);
            options?.onHandle?.({ setHidden() {}, isHidden: () => false, close: () => done(undefined) });
            mounted.entry.render();
          })
          .catch((err) => {
            if (!closed) {
              closed = true;
              reject(err);
            }
          });
      });
    },

    /** A widget factory (`setWidget(key, (tui, theme) => component)`): drawn until replaced. */
    widget(key, factory, theme, placement) {
      const holder = {};
      const component = factory(tuiFor(() => holder.id), theme);
      const { id, entry } = mount(component, "widget", { widgetKey: key, widgetPlacement: placement });
      holder.id = id;
      entry.render();
      return id;
    },

    /** A footer factory (`setFooter((tui, theme, footerData) => component)`): drawn in the
     *  place of rho's footer until replaced. */
    footer(factory, theme, footerData) {
      const holder = {};
      const component = factory(tuiFor(() => holder.id), theme, footerData);
      const { id, entry } = mount(component, "footer", {});
      holder.id = id;
      entry.render();
      return id;
    },

    /** `setEditorComponent(factory)`: the extension's editor (pi's `CustomEditor`, or any
     *  component with `getText`/`setText`) in the place of rho's, with the keys the screen does
     *  not take itself. What is submitted comes to rho as a prompt, and the app actions the
     *  editor hands over (Escape, Ctrl+C, Ctrl+D, model and thinking keys, …) as rho's. */
    customEditor(factory, theme, autocomplete) {
      const holder = {};
      const editor = factory(tuiFor(() => holder.id), theme, keybindings);
      editor.onSubmit = (text) => channel.send({ type: "editor_submit", text });
      if (typeof editor.setAutocompleteProvider === "function" && autocomplete) {
        editor.setAutocompleteProvider(autocomplete);
      }
      if ("actionHandlers" in editor && editor.actionHandlers instanceof Map) {
        const action = (name) => () =>
          channel.send({ type: "editor_action", action: name, text: editor.getText?.() ?? "" });
        editor.onEscape ??= action("app.interrupt");
        editor.onCtrlD ??= action("app.exit");
        for (const name of APP_ACTIONS) {
          if (!editor.actionHandlers.has(name)) editor.actionHandlers.set(name, action(name));
        }
      }
      const { id, entry } = mount(editor, "customEditor", {});
      holder.id = id;
      entry.render();
      return { id, editor, render: () => entry.schedule() };
    },

    /** A header factory (`setHeader((tui, theme) => component)`): shown at start, above the
     *  conversation, in the place of rho's header. */
    header(factory, theme) {
      const holder = {};
      const component = factory(tuiFor(() => holder.id), theme);
      const { id, entry } = mount(component, "header", {});
      holder.id = id;
      entry.render();
      return id;
    },

    /** Footers and widgets render again (they show the session's state, which just changed;
     *  pi's TUI renders them on every frame). */
    refresh() {
      for (const entry of open.values()) {
        if (entry.kind === "footer" || entry.kind === "widget") entry.schedule();
      }
    },

    close: unmount,

    isOpen: (id) => open.has(id),

    /** The extensions are unloaded (reload, session replaced): every component goes, and each
     *  `custom()` still waiting resolves with `undefined`. */
    closeAll() {
      for (const [id, entry] of [...open]) {
        if (entry.dismiss) entry.dismiss();
        else unmount(id);
      }
    },

    /** Keys for the component `id`, then its new lines. */
    input(id, data) {
      const entry = open.get(id);
      if (!entry) return;
      try {
        entry.component.handleInput?.(data);
      } catch (err) {
        process.stderr.write(`rho extension host: a component failed on input: ${err}\n`);
      }
      entry.schedule();
    },

    /** The terminal's new size: every component renders again. */
    resize(columns, rows) {
      size.columns = columns;
      size.rows = rows;
      for (const entry of open.values()) {
        entry.component.invalidate?.();
        entry.schedule();
      }
    },
  };
}
