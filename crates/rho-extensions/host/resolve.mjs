// Which extensions a session loads, and the resources their packages bring, as pi resolves
// them: with pi's own package manager.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** pi's package manager for `cwd`, reporting installs on stderr. */
function packageManager(pi, cwd, agentDir) {
  const settingsManager = pi.SettingsManager.create(cwd, agentDir);
  const manager = new pi.DefaultPackageManager({ cwd, agentDir, settingsManager });
  manager.setProgressCallback((event) => {
    if (event.type === "start") process.stderr.write(`${event.message}\n`);
  });
  return manager;
}

/**
 * Which extensions load, decided by pi's own package manager as pi decides it: the `-e` values
 * (files, folders by package rules, `npm:` / `git:` sources installed for the run), then the
 * settings' packages (installed when missing), `extensions` entries and the extension folders —
 * all with pi's filters. rho adds what only rho knows (`.rho/extensions/`), from its own list.
 * The packages' skills, prompt templates and themes go back to rho.
 */
export async function resolveExtensions(pi, message) {
  const manager = packageManager(pi, message.cwd, message.agentDir);
  const none = { extensions: [], skills: [], prompts: [], themes: [] };
  const cli = message.cli.length > 0 ? await manager.resolveExtensionSources(message.cli, { temporary: true }) : none;
  // A project not trusted has no say: its settings and extension folders are not read (nor its
  // packages installed), as if the session ran in an empty folder.
  const scratch = message.trustedProject ? null : fs.mkdtempSync(path.join(os.tmpdir(), "rho-untrusted-"));
  let configured = none;
  try {
    if (!message.noExtensions) {
      configured = await (scratch ? packageManager(pi, scratch, message.agentDir) : manager).resolve();
    }
  } finally {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  }
  const enabled = (list) => list.filter((r) => r.enabled).map((r) => r.path);
  const fromPackages = (list) => list.filter((r) => r.enabled && r.metadata?.origin === "package").map((r) => r.path);
  const seen = new Set();
  const extensions = [];
  for (const path of [...enabled(cli.extensions), ...enabled(configured.extensions), ...message.extensions]) {
    let key = path;
    try {
      key = fs.realpathSync(path);
    } catch {
      // Not there: the loader reports it.
    }
    if (!seen.has(key)) {
      seen.add(key);
      extensions.push(path);
    }
  }
  return {
    extensions,
    resources: {
      skills: [...enabled(cli.skills), ...fromPackages(configured.skills)],
      prompts: [...enabled(cli.prompts), ...fromPackages(configured.prompts)],
      themes: [...enabled(cli.themes), ...fromPackages(configured.themes)],
    },
  };
}
