// Providers whose extension streams the replies itself (`registerProvider` with `streamSimple`):
// rho sends the request (`provider_stream`), the stream function registered for the model's
// API runs here, and its events go back as `stream_event`s, without their `partial` message
// (rho builds the message itself from the events).

export function createProviderStreams(channel, modelRegistry) {
  /** By provider name: `{ api, streamSimple }`. */
  const registered = new Map();
  return {
    /** A registration again merges over the earlier one, as pi's registry merges it: a
     *  `streamSimple` or `api` it leaves out stays as it was. */
    register(name, config) {
      const previous = registered.get(name);
      const api = config.api ?? previous?.api;
      const streamSimple = typeof config.streamSimple === "function" ? config.streamSimple : previous?.streamSimple;
      registered.delete(name);
      if (streamSimple && api) registered.set(name, { api, streamSimple });
    },
    unregister(name) {
      registered.delete(name);
    },
    clear() {
      registered.clear();
    },
    /** Streams the reply of `message.model`; resolves when the stream has ended. */
    async stream(message, signal) {
      const api = message.model.api;
      const provider = [...registered.values()].reverse().find((p) => p.api === api);
      if (!provider) throw new Error(`no extension streams the API "${api}"`);
      const known = modelRegistry()?.find(message.model.provider, message.model.id);
      const model = { headers: {}, ...known, ...message.model };
      const stream = provider.streamSimple(model, message.context, { ...message.options, signal });
      for await (const event of stream) {
        const { partial, ...slim } = event;
        if (event.type === "toolcall_start") slim.block = partial?.content?.[event.contentIndex];
        if (event.type === "done") {
          slim.message = { usage: event.message?.usage, stopReason: event.message?.stopReason };
        }
        if (event.type === "error") {
          slim.error = { usage: event.error?.usage, errorMessage: event.error?.errorMessage, stopReason: event.reason };
        }
        channel.send({ type: "stream_event", id: message.id, event: slim });
        if (event.type === "done" || event.type === "error") break;
      }
      return null;
    },
  };
}
