// Providers an extension registers whole (pi 1.6's `pi.registerProvider(provider)` with a pi-ai
// `Provider`, as `createProvider()` makes one): rho takes its models, base URL and headers as a
// provider config and speaks to the models itself when it speaks their API; for another API the
// provider's own `streamSimple` runs here (one such API per provider). Its auth: a key stored for
// it in `auth.json` is rho's to read, as for any provider; without one, the provider's
// `auth.apiKey.resolve()` is asked once, at registration, for an ambient key (its environment
// variable, a keyless local server's placeholder), with the headers and base URL it adds.

import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** Registers providers whole, for rho and the host's own registry; `settled()` resolves once
 *  every registration so far has reached rho (their auth is resolved asynchronously). */
export function createNativeProviders(modelRegistry, providerStreams, action, init) {
  const pending = [];
  return {
    register(provider) {
      const { agentDir, spokenApis } = init();
      const { config, streams } = nativeProvider(provider, spokenApis);
      modelRegistry().registerProvider(provider);
      if (streams) providerStreams.register(provider.id, streams);
      pending.push(
        withNativeAuth(provider, config, agentDir).then((resolved) =>
          action("registerProvider", { provider: provider.id, config: resolved, streamSimple: streams !== undefined }),
        ),
      );
    },
    settled: () => Promise.all(pending.splice(0)),
  };
}

/** What registering `provider` takes: the config rho reads (its auth not resolved yet) and, for
 *  an API rho does not speak, the stream to run here. Throws for what rho cannot take. */
function nativeProvider(provider, spokenApis) {
  if (typeof provider?.id !== "string" || typeof provider.getModels !== "function") {
    throw new Error("registerProvider(provider) needs a pi-ai Provider (id, getModels)");
  }
  const models = [...provider.getModels()].map(({ provider: _owner, ...model }) => model);
  const unspoken = [...new Set(models.map((m) => m.api).filter((api) => !spokenApis.includes(api)))];
  if (unspoken.length > 1) {
    throw new Error(
      `Provider ${provider.id}: rho streams one API of a provider through its extension, not ${unspoken.join(", ")}`,
    );
  }
  const headers = typeof provider.headers === "object" && provider.headers !== null ? provider.headers : undefined;
  const config = {
    name: provider.name ?? provider.id,
    // Without one, each model's own serves (pi-ai models carry theirs).
    ...(provider.baseUrl ? { baseUrl: provider.baseUrl } : {}),
    ...(headers ? { headers } : {}),
    ...(models[0]?.api ? { api: unspoken[0] ?? models[0].api } : {}),
    models,
  };
  const streams =
    unspoken.length === 1
      ? { api: unspoken[0], streamSimple: (model, context, options) => provider.streamSimple(model, context, options) }
      : undefined;
  return { config, streams };
}

/** `config` with the ambient auth `provider` resolves to, when `auth.json` holds no key for it. */
async function withNativeAuth(provider, config, agentDir) {
  const resolve = provider.auth?.apiKey?.resolve;
  if (typeof resolve !== "function" || storedCredential(agentDir, provider.id)) return config;
  let result;
  try {
    const ctx = {
      env: async (name) => process.env[name],
      fileExists: async (path) => existsSync(path.startsWith("~") ? join(homedir(), path.slice(1)) : path),
    };
    result = await resolve.call(provider.auth.apiKey, { ctx, credential: undefined, signal: AbortSignal.timeout(5000) });
  } catch {
    return config;
  }
  const auth = result?.auth;
  if (!auth) return config;
  return {
    ...config,
    ...(auth.apiKey ? { apiKey: literal(auth.apiKey) } : {}),
    ...(auth.baseUrl ? { baseUrl: auth.baseUrl } : {}),
    ...(auth.headers ? { headers: { ...config.headers, ...auth.headers } } : {}),
  };
}

function storedCredential(agentDir, id) {
  try {
    return JSON.parse(readFileSync(join(agentDir, "auth.json"), "utf8"))?.[id] !== undefined;
  } catch {
    return false;
  }
}

/** A resolved key as a config's literal (`$` and `!` start an environment variable or a command
 *  there, so they are escaped). */
function literal(key) {
  return key.startsWith("$") || key.startsWith("!") ? `$${key}` : key;
}
