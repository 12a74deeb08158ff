// Virtual models (pi 1.6's `registerVirtualModel`): rho lists them and keeps the selection; their
// routers run here. For each request made with one, rho sends `route` (the reason, the level,
// the conversation, the stored state and, on a retry, the failed reply); the router's answer goes
// back as the physical model's provider and id, the level, and `state` only when the router
// returned new state (not `undefined`, not the state it was given), as pi stores it.

const VIRTUAL_API = "pi-virtual";

export function createVirtualModels(modelRegistry) {
  /** By `provider/id`: the definition, whose `route` pi's loader bound to a context. */
  const registered = new Map();
  const key = (provider, id) => `${provider}/${id}`;
  /** A catalogue model that is not virtual. */
  const physical = (provider, id) => {
    const model = modelRegistry()?.find(provider, id);
    return model && model.api !== VIRTUAL_API ? model : undefined;
  };
  return {
    register(definition) {
      registered.set(key(definition.provider, definition.id), definition);
    },
    unregister(provider, id) {
      registered.delete(key(provider, id));
    },
    /** The extensions are loaded again: they register their models again. */
    clear() {
      for (const definition of registered.values()) {
        modelRegistry()?.unregisterVirtualModel(definition.provider, definition.id);
      }
      registered.clear();
    },
    /** What rho lists: the definition without its router. */
    describe(definition) {
      const { provider, id, name, thinkingLevels, contextWindow, maxTokens, input } = definition;
      return { provider, id, name, thinkingLevels, contextWindow, maxTokens, input };
    },
    /** Asks the router where one request goes. */
    async route(message, signal) {
      const definition = registered.get(key(message.provider, message.modelId));
      if (!definition) throw new Error(`Virtual model ${message.provider}/${message.modelId} is not registered.`);
      const latest = message.messages.findLast(
        (m) => m.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted",
      );
      const previousModel = latest && physical(latest.provider, latest.model);
      const failed = message.failed;
      const failedModel = failed && physical(failed.provider, failed.model);
      const route = await definition.route({
        model: modelRegistry()?.find(message.provider, message.modelId),
        thinkingLevel: message.thinkingLevel,
        reason: message.reason,
        signal,
        state: message.state,
        previous: previousModel && { model: previousModel, thinkingLevel: latest.thinkingLevel },
        failed: failedModel && { model: failedModel, thinkingLevel: failed.thinkingLevel, message: failed },
        messages: message.messages,
      });
      if (!route?.model) throw new Error(`Virtual model ${message.provider}/${message.modelId} returned no model.`);
      const answer = { provider: route.model.provider, id: route.model.id, thinkingLevel: route.thinkingLevel };
      if (route.state !== undefined && route.state !== message.state) answer.state = route.state;
      return answer;
    },
  };
}
