#!/usr/bin/env node
// Generates rho's built-in model catalogue (crates/rho-ai/src/catalog/data.rs) from pi's model
// table: `MODELS` of pi-ai (dist/models.generated.js) and the default model of each provider,
// `defaultModelPerProvider` of pi-coding-agent (dist/core/model-resolver.js), published as
// @earendil-works/* since pi 1.0 and as @mariozechner/* before. See README.md beside this script.
//
//   node scripts/catalog/generate.mjs [--pi DIR] [--pi-ai DIR] [--pi-coding-agent DIR]
//                                     [--out FILE] [--date YYYY-MM-DD] [--check]
//
// --pi DIR               a directory whose node_modules holds both packages (an `npm install`
//                        of @earendil-works/pi-coding-agent); also $PI_DIR
// --pi-ai DIR            the pi-ai package itself; also $PI_AI_DIR
// --pi-coding-agent DIR  the pi-coding-agent package; also $PI_CODING_AGENT_DIR
//                        (default: pi-ai's sibling in the same node_modules)
// --out FILE             where to write (default: crates/rho-ai/src/catalog/data.rs)
// --date YYYY-MM-DD      the generation date to record (default: the date already in the file
//                        when nothing else changed, else today in UTC)
// --check                write nothing; exit 1 when the file is not what this run would write
//
// The output depends only on the two packages, rho's own API list (crates/rho-types/src/model.rs)
// and key table (crates/rho-ai/src/auth.rs), and the date: two runs give the same bytes.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const SCRIPT_DIR = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(SCRIPT_DIR, "..", "..");
const DEFAULT_OUT = join(REPO, "crates", "rho-ai", "src", "catalog", "data.rs");
const REGENERATE = "node scripts/catalog/generate.mjs --pi <dir with node_modules/@earendil-works/pi-ai>";

// Providers left out on purpose, though their models use an API rho speaks.
// Providers left out whatever they speak, with why (none now).
const SKIP_PROVIDERS = {};

// pi models whose API rho does not speak but whose server also answers one rho speaks.
const API_REWRITES = {
	// pi drives Mistral through its SDK's `chat.stream`, which is POST {baseUrl}/v1/chat/completions:
	// the OpenAI-compatible endpoint rho's Chat Completions client already speaks to Mistral with
	// (the client recognises mistral.ai: tool-call ids, max_tokens, no developer role, no store).
	// pi sends no reasoning_effort to most Mistral models (prompt_mode instead, which rho lacks), so
	// none is sent.
	"mistral-conversations": {
		note: "spoken to as openai-completions at {baseUrl}/v1, the Chat Completions endpoint pi's SDK calls, with supportsReasoningEffort false",
		api: "openai-completions",
		baseUrl: (url) => `${url.replace(/\/+$/, "")}/v1`,
		compat: { supportsReasoningEffort: false },
	},
};

const MODEL_KEYS = new Set([
	"id",
	"name",
	"api",
	"provider",
	"baseUrl",
	"reasoning",
	"input",
	"cost",
	"contextWindow",
	"maxTokens",
	"headers",
	"compat",
	"thinkingLevelMap",
	// Image and request limits, and prompt-cache lifetimes: generated as shared constants.
	"inputLimits",
	"promptCache",
	// pi 1.6's fields rho does not use: a gateway's own metadata (the lab behind a model, its
	// upstream providers, free models).
	"lab",
	"providers",
	"free",
	// `type` (only "chat" models are taken) and `enabled` (false leaves a model out).
	"type",
	"enabled",
]);
const COST_KEYS = ["input", "output", "cacheRead", "cacheWrite"];
const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

function fail(message) {
	console.error(`generate.mjs: ${message}`);
	process.exit(2);
}

function parseArgs(argv) {
	const args = { check: false };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const value = () => argv[++i] ?? fail(`${arg} needs a value`);
		if (arg === "--pi") args.pi = value();
		else if (arg === "--pi-ai") args.piAi = value();
		else if (arg === "--pi-coding-agent") args.piCodingAgent = value();
		else if (arg === "--out") args.out = value();
		else if (arg === "--date") args.date = value();
		else if (arg === "--check") args.check = true;
		else fail(`unknown argument ${arg}`);
	}
	if (args.date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(args.date)) fail("--date wants YYYY-MM-DD");
	return args;
}

function packageDirs(args) {
	const pi = args.pi ?? process.env.PI_DIR;
	// pi 1.x is published as @earendil-works/*, pi 0.73 as @mariozechner/*.
	const scope = pi && existsSync(join(pi, "node_modules", "@earendil-works", "pi-ai")) ? "@earendil-works" : "@mariozechner";
	const inPi = (name) => (pi ? join(pi, "node_modules", scope, name) : undefined);
	const piAi = args.piAi ?? process.env.PI_AI_DIR ?? inPi("pi-ai");
	if (!piAi)
		fail(
			"where is pi-ai? Pass --pi DIR (e.g. after `npm install --prefix DIR " +
				"@earendil-works/pi-coding-agent@1.6.0`) or --pi-ai DIR",
		);
	const piCodingAgent =
		args.piCodingAgent ?? process.env.PI_CODING_AGENT_DIR ?? inPi("pi-coding-agent") ?? join(piAi, "..", "pi-coding-agent");
	for (const dir of [piAi, piCodingAgent])
		if (!existsSync(join(dir, "package.json"))) fail(`no package at ${dir}`);
	return { piAi: resolve(piAi), piCodingAgent: resolve(piCodingAgent) };
}

function packageVersion(dir) {
	const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
	return { name: pkg.name, version: pkg.version };
}

/** The base URL placeholders rho fills per request: Cloudflare's from the environment
 * (crates/rho-ai/src/cloudflare.rs), Vertex's `{location}` (crates/rho-ai/src/providers/vertex). */
const FILLED_PLACEHOLDERS = new Set(["CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID", "location"]);

/** The `{NAME}` placeholders of a base URL (a stray brace counts as an unknown one). */
function placeholders(url) {
	const names = [...url.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]);
	const stray = url.replace(/\{[A-Za-z_][A-Za-z0-9_]*\}/g, "").match(/[{}]/) ? ["{"] : [];
	return [...names, ...stray];
}

/** The wire APIs rho speaks: the constants of `pub mod api` in crates/rho-types/src/model.rs. */
function rhoApis() {
	const source = readFileSync(join(REPO, "crates", "rho-types", "src", "model.rs"), "utf8");
	const block = source.match(/pub mod api \{([\s\S]*?)\n\}/)?.[1] ?? fail("no `pub mod api` in model.rs");
	const apis = new Map();
	for (const [, constant, value] of block.matchAll(/pub const (\w+): &str = "([^"]+)";/g)) apis.set(value, constant);
	if (apis.size === 0) fail("no API constants in model.rs");
	return apis;
}

/** The providers rho reads a key variable for: the names in `ENV_VARS` of crates/rho-ai/src/auth.rs. */
function rhoKeyedProviders() {
	const source = readFileSync(join(REPO, "crates", "rho-ai", "src", "auth.rs"), "utf8");
	const block = source.match(/const ENV_VARS[^=]*= &\[([\s\S]*?)\n\];/)?.[1] ?? fail("no ENV_VARS in auth.rs");
	const names = new Set([...block.matchAll(/\("([^"]+)",\s*&\[/g)].map((m) => m[1]));
	if (names.size === 0) fail("no providers in auth.rs ENV_VARS");
	return names;
}

/** The providers whose key is a login rho can use: the `OAuthProvider`s of
 * crates/rho-ai/src/oauth/providers.rs with `unusable: None`. */
function rhoLoginProviders() {
	const source = readFileSync(join(REPO, "crates", "rho-ai", "src", "oauth", "providers.rs"), "utf8");
	const names = new Set();
	for (const [, body] of source.matchAll(/: OAuthProvider = OAuthProvider \{([\s\S]*?)\n\};/g)) {
		const id = body.match(/id: "([^"]+)"/)?.[1];
		if (id && /unusable: None,/.test(body)) names.add(id);
	}
	if (names.size === 0) fail("no usable logins in oauth/providers.rs");
	return names;
}

function rustString(s) {
	let out = '"';
	for (const ch of s) {
		const code = ch.codePointAt(0);
		if (ch === '"' || ch === "\\") out += `\\${ch}`;
		else if (code < 0x20 || code === 0x7f) out += `\\u{${code.toString(16)}}`;
		else out += ch;
	}
	return `${out}"`;
}

function rustFloat(n) {
	if (typeof n !== "number" || !Number.isFinite(n)) throw new Error(`not a finite number: ${n}`);
	const text = String(n);
	return /[.e]/.test(text) ? text : `${text}.0`;
}

function rustInt(n, what) {
	if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${what}: not a positive integer: ${n}`);
	return String(n);
}

/** The Rust names of the API constants data.rs imports (`use crate::model::api::*`). */
let apiConstants = new Set();

function staticName(provider) {
	let name = provider.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
	if (!/^[A-Z][A-Z0-9_]*$/.test(name)) fail(`provider ${provider} gives no Rust name`);
	// A provider named as its API (azure-openai-responses) must not shadow the API's constant.
	if (apiConstants.has(name)) name += "_PROVIDER";
	return name;
}

/** One model, checked and brought to rho's shape; `notes` collects what was changed. */
function convert(model, provider, apis, notes) {
	const where = `${provider}/${model.id}`;
	for (const key of Object.keys(model))
		if (!MODEL_KEYS.has(key)) throw new Error(`${where}: unknown field "${key}" (teach the generator about it)`);
	if (model.provider !== provider) throw new Error(`${where}: provider field says ${model.provider}`);
	let { api, baseUrl } = model;
	let extraCompat = {};
	if (!apis.has(api) && API_REWRITES[api]) {
		const rewrite = API_REWRITES[api];
		api = rewrite.api;
		baseUrl = rewrite.baseUrl(baseUrl);
		extraCompat = rewrite.compat;
	}
	const input = model.input;
	for (const kind of input) if (kind !== "text" && kind !== "image") throw new Error(`${where}: input kind ${kind}`);
	if (!input.includes("text")) throw new Error(`${where}: no text input`);
	const negative = [];
	const cost = COST_KEYS.map((key) => {
		const price = model.cost?.[key];
		if (typeof price !== "number" || !Number.isFinite(price)) throw new Error(`${where}: cost.${key} is ${price}`);
		if (price < 0) negative.push(`cost.${key} ${price}`);
		return Math.max(price, 0);
	});
	if (negative.length > 0)
		notes.push(`${where}: ${negative.join(", ")} (placeholders: the price varies) recorded as 0, not as a negative cost`);
	for (const key of Object.keys(model.cost))
		if (!COST_KEYS.includes(key) && key !== "tiers") throw new Error(`${where}: cost.${key}`);
	// Higher rates above an input size (pi 1.6's `cost.tiers`).
	const tiers = (model.cost.tiers ?? []).map((tier) => {
		for (const key of Object.keys(tier))
			if (!COST_KEYS.includes(key) && key !== "inputTokensAbove") throw new Error(`${where}: cost.tiers[].${key}`);
		const rates = COST_KEYS.map((key) => {
			const price = tier[key] ?? 0;
			if (typeof price !== "number" || !Number.isFinite(price) || price < 0)
				throw new Error(`${where}: cost.tiers[].${key} is ${price}`);
			return price;
		});
		return [rustInt(tier.inputTokensAbove, `${where} cost.tiers[].inputTokensAbove`), rates];
	});
	const headers = Object.entries(model.headers ?? {});
	for (const [name, value] of headers)
		if (typeof value !== "string") throw new Error(`${where}: header ${name} is not a string`);
	// Structured compat values (a model's allowed fallbacks, a chat template's arguments) are
	// kept as their JSON text.
	const compat = Object.entries({ ...(model.compat ?? {}), ...extraCompat });
	for (const [key, value] of compat)
		if (typeof value !== "boolean" && typeof value !== "string" && (value === null || typeof value !== "object"))
			throw new Error(`${where}: compat.${key} is ${JSON.stringify(value)} (only booleans, strings, objects and arrays are generated)`);
	const thinking = Object.entries(model.thinkingLevelMap ?? {});
	for (const [level, value] of thinking) {
		if (!THINKING_LEVELS.includes(level)) throw new Error(`${where}: thinking level ${level}`);
		if (value !== null && typeof value !== "string") throw new Error(`${where}: thinkingLevelMap.${level} is ${value}`);
	}
	thinking.sort((a, b) => THINKING_LEVELS.indexOf(a[0]) - THINKING_LEVELS.indexOf(b[0]));
	if (typeof model.reasoning !== "boolean") throw new Error(`${where}: reasoning is ${model.reasoning}`);
	if (typeof model.name !== "string" || model.name === "") throw new Error(`${where}: no name`);
	return {
		id: model.id,
		name: model.name,
		api,
		baseUrl,
		reasoning: model.reasoning,
		images: input.includes("image"),
		cost,
		tiers,
		contextWindow: rustInt(model.contextWindow, `${where} contextWindow`),
		maxTokens: rustInt(model.maxTokens, `${where} maxTokens`),
		headers,
		compat,
		thinking,
		inputLimits: model.inputLimits === undefined ? undefined : inputLimits(model.inputLimits, where),
		promptCache: model.promptCache === undefined ? undefined : promptCache(model.promptCache, where),
	};
}

/** Checks `keys` of `object` against the allowed ones. */
function onlyKeys(object, keys, where) {
	if (object === null || typeof object !== "object" || Array.isArray(object)) throw new Error(`${where} is not an object`);
	for (const key of Object.keys(object)) if (!keys.includes(key)) throw new Error(`${where}.${key} (teach the generator about it)`);
}

/** `Some(n)` / `None` for an optional positive integer. */
function rustOptionalInt(n, what) {
	return n === undefined ? "None" : `Some(${rustInt(n, what)})`;
}

/** pi 1.6's `inputLimits` as a Rust `InputLimits` expression. */
function inputLimits(limits, where) {
	const at = `${where}: inputLimits`;
	onlyKeys(limits, ["maxRequestBytes", "images"], at);
	let images = "None";
	if (limits.images !== undefined) {
		onlyKeys(limits.images, ["resize", "maxPerMessage", "maxPerRequest"], `${at}.images`);
		const r = limits.images.resize;
		let resize = "None";
		if (r !== undefined) {
			onlyKeys(r, ["maxWidth", "maxHeight", "maxBytes", "jpegQuality"], `${at}.images.resize`);
			if (r.jpegQuality !== undefined && r.jpegQuality > 100) throw new Error(`${at}.images.resize.jpegQuality ${r.jpegQuality}`);
			const field = (key) => rustOptionalInt(r[key], `${at}.images.resize.${key}`);
			resize = `Some(ImageResize { max_width: ${field("maxWidth")}, max_height: ${field("maxHeight")}, max_bytes: ${field("maxBytes")}, jpeg_quality: ${field("jpegQuality")} })`;
		}
		const count = (key) => rustOptionalInt(limits.images[key], `${at}.images.${key}`);
		images = `Some(ImageInputLimits { resize: ${resize}, max_per_message: ${count("maxPerMessage")}, max_per_request: ${count("maxPerRequest")} })`;
	}
	return `InputLimits { max_request_bytes: ${rustOptionalInt(limits.maxRequestBytes, `${at}.maxRequestBytes`)}, images: ${images} }`;
}

/** pi 1.6's `promptCache` as a Rust `PromptCache` expression. */
function promptCache(cache, where) {
	onlyKeys(cache, ["short", "long"], `${where}: promptCache`);
	const tier = (key) => {
		const seconds = cache[key];
		if (seconds === undefined) return "None";
		if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0)
			throw new Error(`${where}: promptCache.${key} is ${seconds}`);
		return `Some(${rustFloat(seconds)})`;
	};
	return `PromptCache { short: ${tier("short")}, long: ${tier("long")} }`;
}

/** Shared constants for repeated values: the Rust expression's constant name, in first-seen order. */
class Constants {
	constructor(prefix, type) {
		this.prefix = prefix;
		this.type = type;
		this.names = new Map();
	}
	name(expression) {
		if (!this.names.has(expression)) this.names.set(expression, `${this.prefix}_${this.names.size + 1}`);
		return this.names.get(expression);
	}
	lines() {
		return [...this.names].map(([expression, name]) => `const ${name}: ${this.type} = ${expression};`);
	}
}

function modelLine(m, apis, limits, caches) {
	let line = `m(${rustString(m.id)}, ${rustString(m.name)}, ${apis.get(m.api)}, ${rustString(m.baseUrl)}, ${m.reasoning}, ${m.images}, [${m.cost.map(rustFloat).join(", ")}], ${m.contextWindow}, ${m.maxTokens})`;
	if (m.tiers.length > 0)
		line += `.tiers(&[${m.tiers.map(([above, rates]) => `(${above}, [${rates.map(rustFloat).join(", ")}])`).join(", ")}])`;
	if (m.headers.length > 0)
		line += `.headers(&[${m.headers.map(([k, v]) => `(${rustString(k)}, ${rustString(v)})`).join(", ")}])`;
	if (m.compat.length > 0)
		line += `.compat(&[${m.compat
			.map(([k, v]) => `(${rustString(k)}, ${compatValue(v)})`)
			.join(", ")}])`;
	if (m.thinking.length > 0) {
		const level = (l) => l[0].toUpperCase() + l.slice(1);
		line += `.thinking(&[${m.thinking.map(([l, v]) => `(${level(l)}, ${v === null ? "None" : `Some(${rustString(v)})`})`).join(", ")}])`;
	}
	if (m.inputLimits !== undefined) line += `.limits(${limits.name(m.inputLimits)})`;
	if (m.promptCache !== undefined) line += `.cache(${caches.name(m.promptCache)})`;
	return `    ${line},`;
}

function compatValue(v) {
	if (typeof v === "boolean") return `Bool(${v})`;
	if (typeof v === "string") return `Str(${rustString(v)})`;
	return `Json(${rustString(JSON.stringify(v))})`;
}

/** `text` in lines of at most `width` columns after `indent`, broken at `separator`s. */
function wrap(text, width, indent, separator = " ") {
	const lines = [];
	let line = "";
	for (const word of text.split(separator)) {
		const joined = line ? `${line}${separator}${word}` : word;
		if (line && indent + joined.trimEnd().length > width) {
			lines.push(`${line}${separator}`.trimEnd());
			line = word;
		} else line = joined;
	}
	if (line) lines.push(line);
	return lines;
}

async function generate(args) {
	const dirs = packageDirs(args);
	const piAi = packageVersion(dirs.piAi);
	const piCodingAgent = packageVersion(dirs.piCodingAgent);
	const { MODELS } = await import(pathToFileURL(join(dirs.piAi, "dist", "models.generated.js")).href);
	const { defaultModelPerProvider } = await import(
		pathToFileURL(join(dirs.piCodingAgent, "dist", "core", "model-resolver.js")).href
	);
	if (!MODELS || !defaultModelPerProvider) fail("the packages do not export MODELS / defaultModelPerProvider");
	const apis = rhoApis();
	apiConstants = new Set(apis.values());
	const keyed = rhoKeyedProviders();
	const logins = rhoLoginProviders();

	const included = new Map(); // provider -> converted models, in pi's order
	const skipped = []; // [provider, reason]
	const notes = [];
	for (const [provider, table] of Object.entries(MODELS)) {
		const all = Object.values(table);
		// Chat models that are on: pi's table may also hold classifiers, image models and models
		// its gateway has turned off.
		const models = all.filter((m) => (m.type ?? "chat") === "chat" && m.enabled !== false);
		if (models.length < all.length)
			notes.push(`${provider}: ${all.length - models.length} models that are not chat models or are turned off left out`);
		const reason = (() => {
			if (SKIP_PROVIDERS[provider]) return SKIP_PROVIDERS[provider];
			if (models.length === 0) return "pi's table has no chat model for it";
			const spoken = models.filter((m) => apis.has(m.api) || API_REWRITES[m.api]);
			if (spoken.length === 0)
				return `speaks ${[...new Set(models.map((m) => m.api))].join(", ")}, which rho does not`;
			const templated = models.find((m) => placeholders(m.baseUrl).some((name) => !FILLED_PLACEHOLDERS.has(name)));
			if (templated) return `its base URL (${templated.baseUrl}) has placeholders rho does not fill in`;
			if (!keyed.has(provider) && !logins.has(provider))
				return "crates/rho-ai/src/auth.rs has no key variable for it and rho has no login for it";
			if (!(provider in defaultModelPerProvider)) return "pi names no default model for it";
			return undefined;
		})();
		if (reason) {
			skipped.push([provider, `${models.length} models: ${reason}`]);
			continue;
		}
		const rewritten = [...new Set(models.map((m) => m.api).filter((a) => !apis.has(a) && API_REWRITES[a]))];
		for (const api of rewritten)
			notes.push(`${provider}: pi's ${api} models are ${API_REWRITES[api].note} (API_REWRITES in the generator)`);
		const kept = [];
		for (const m of models) {
			if (apis.has(m.api) || API_REWRITES[m.api]) kept.push(convert(m, provider, apis, notes));
			else notes.push(`${provider}/${m.id} left out: it speaks ${m.api}, which rho does not`);
		}
		included.set(provider, kept);
	}
	for (const [provider, models] of included) {
		const ids = new Set();
		for (const m of models) if (ids.has(m.id) || !ids.add(m.id)) fail(`${provider}/${m.id} twice`);
		if (!ids.has(defaultModelPerProvider[provider]))
			fail(`${provider}: default model ${defaultModelPerProvider[provider]} is not in its table`);
	}
	// The initial-model search walks providers in the order pi declares their defaults.
	const searchOrder = Object.keys(defaultModelPerProvider).filter((p) => included.has(p));

	const total = [...included.values()].reduce((n, ms) => n + ms.length, 0);
	const limits = new Constants("LIMITS", "InputLimits");
	const caches = new Constants("CACHE", "PromptCache");
	const tables = [];
	for (const [provider, models] of included) {
		const first = models[0];
		tables.push("");
		tables.push(`static ${staticName(provider)}: CatalogProvider = CatalogProvider {`);
		tables.push(`    name: ${rustString(provider)},`);
		tables.push(`    api: ${apis.get(first.api)},`);
		tables.push(`    base_url: ${rustString(first.baseUrl)},`);
		tables.push(`    default_model: ${rustString(defaultModelPerProvider[provider])},`);
		tables.push(`    models: ${staticName(provider)}_MODELS,`);
		tables.push("};");
		tables.push("");
		tables.push(`static ${staticName(provider)}_MODELS: &[CatalogModel] = &[`);
		for (const m of models) tables.push(modelLine(m, apis, limits, caches));
		tables.push("];");
	}
	const body = [];
	body.push("use super::CompatValue::{Bool, Json, Str};");
	body.push("use super::{CatalogModel, CatalogProvider, m};");
	body.push("use crate::model::ThinkingLevel::*;");
	body.push("use crate::model::api::*;");
	body.push("use crate::model::{ImageInputLimits, ImageResize, InputLimits, PromptCache};");
	body.push("");
	body.push("/// The input limits and prompt-cache lifetimes models share (pi's `inputLimits`, `promptCache`).");
	body.push(...limits.lines(), ...caches.lines());
	body.push("");
	body.push("/// Every provider, in pi's registry order (`getProviders()`): the order models are listed in.");
	body.push(`pub(super) static REGISTRY_ORDER: &[&CatalogProvider] = &[${[...included.keys()].map((p) => `&${staticName(p)}`).join(", ")}];`);
	body.push("");
	body.push("/// Every provider, in the order pi's initial-model search walks them (`defaultModelPerProvider`).");
	body.push(`pub(super) static SEARCH_ORDER: &[&CatalogProvider] = &[${searchOrder.map((p) => `&${staticName(p)}`).join(", ")}];`);
	body.push(...tables);

	const counts = [...included]
		.map(([p, ms]) => {
			const all = Object.keys(MODELS[p]).length;
			return ms.length === all ? `${p} ${all}` : `${p} ${ms.length} of ${all}`;
		})
		.join(", ");
	const header = [
		"// @generated by scripts/catalog/generate.mjs: do not edit by hand, regenerate.",
		"//",
		`// Source: ${piAi.name} ${piAi.version} (dist/models.generated.js, MODELS); default models from`,
		`// ${piCodingAgent.name} ${piCodingAgent.version} (dist/core/model-resolver.js, defaultModelPerProvider).`,
		"// Generated: DATE",
		`// Regenerate: ${REGENERATE}`,
		"//",
		`// ${included.size} providers, ${total} models (per provider, and of how many pi has when not all):`,
		...wrap(`${counts}.`, 100, 5, ", ").map((l) => `//   ${l}`),
		"//",
		skipped.length > 0 ? "// Skipped providers (see scripts/catalog/README.md):" : "// Skipped providers: none.",
		...skipped.flatMap(([p, reason]) => wrap(`${p} (${reason})`, 100, 5).map((l, i) => `//${i === 0 ? " - " : "     "}${l}`)),
		...(notes.length > 0
			? ["//", "// Changed from pi's data:", ...notes.flatMap((n) => wrap(n, 100, 5).map((l, i) => `//${i === 0 ? " - " : "     "}${l}`))]
			: []),
	];
	return { header, body: body.join("\n") + "\n" };
}

function render(header, body, date) {
	return header.map((l) => l.replace("DATE", date)).join("\n") + "\n\n" + body;
}

const args = parseArgs(process.argv.slice(2));
const out = resolve(args.out ?? DEFAULT_OUT);
const { header, body } = await generate(args);
const existing = existsSync(out) ? readFileSync(out, "utf8") : undefined;
let date = args.date;
if (date === undefined) {
	const previous = existing?.match(/^\/\/ Generated: (\d{4}-\d{2}-\d{2})$/m)?.[1];
	date = previous && existing === render(header, body, previous) ? previous : new Date().toISOString().slice(0, 10);
}
const text = render(header, body, date);
if (args.check) {
	if (existing !== text) {
		console.error(`${relative(process.cwd(), out)} is not what the generator writes; run: ${REGENERATE}`);
		process.exit(1);
	}
} else if (existing !== text) {
	writeFileSync(out, text);
	console.error(`wrote ${relative(process.cwd(), out)}`);
} else {
	console.error(`${relative(process.cwd(), out)} is up to date`);
}
