// `rho install | remove | update | list | config`: pi's package manager (its
// DefaultPackageManager and SettingsManager, from pi's own package) run for rho's agent dir, so
// packages install where pi installs them and settings.json lists them as pi lists them: a pi
// user's packages are rho's. `config` is pi's own screen for turning a package's resources on
// and off. Usage: node packages.mjs <command> [args]; PI_CODING_AGENT_DIR names rho's agent dir.

const pi = await import("@earendil-works/pi-coding-agent");

const USAGE = {
  install: "rho install <source> [-l]",
  remove: "rho remove <source> [-l]",
  update: "rho update [source] [--extension <source>]",
  list: "rho list",
  config: "rho config",
};

function fail(message, usage) {
  console.error(message);
  if (usage) console.error(`Usage: ${usage}`);
  process.exitCode = 1;
}

async function main(argv) {
  let [command, ...rest] = argv;
  if (command === "uninstall") command = "remove";
  if (!USAGE[command]) return fail(`Unknown package command: ${command}`);
  let local = false;
  let source;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === "-h" || arg === "--help") {
      console.log(`Usage: ${USAGE[command]}`);
      return;
    }
    if ((arg === "-l" || arg === "--local") && (command === "install" || command === "remove")) {
      local = true;
    } else if (arg === "--extensions" && command === "update") {
      // Packages only: what rho updates anyway.
    } else if (arg === "--extension" && command === "update") {
      source = rest[++i];
      if (!source) return fail("Missing value for --extension.", USAGE.update);
    } else if (arg === "--self" && command === "update") {
      return fail("rho does not update itself: install a newer rho the way you installed this one.");
    } else if (arg.startsWith("-")) {
      return fail(`Unknown option ${arg} for "${command}".`, USAGE[command]);
    } else if (!source) {
      source = arg;
    } else {
      return fail(`Unexpected argument ${arg}.`, USAGE[command]);
    }
  }
  if (command === "config" && source) {
    return fail(`Unexpected argument ${source}.`, USAGE.config);
  }
  if ((command === "install" || command === "remove") && !source) {
    return fail(`Missing ${command} source.`, USAGE[command]);
  }
  const cwd = process.cwd();
  const agentDir = process.env.PI_CODING_AGENT_DIR;
  const settingsManager = pi.SettingsManager.create(cwd, agentDir);
  for (const { scope, error } of settingsManager.drainErrors()) {
    console.error(`Warning (${scope} settings): ${error.message}`);
  }
  const manager = new pi.DefaultPackageManager({ cwd, agentDir, settingsManager });
  manager.setProgressCallback((event) => {
    if (event.type === "start") console.log(event.message);
  });
  switch (command) {
    case "install":
      await manager.installAndPersist(source, { local });
      console.log(`Installed ${source}`);
      return;
    case "remove":
      if (!(await manager.removeAndPersist(source, { local }))) {
        return fail(`No matching package found for ${source}`);
      }
      console.log(`Removed ${source}`);
      return;
    case "list": {
      const packages = manager.listConfiguredPackages();
      if (packages.length === 0) {
        console.log("No packages installed.");
        return;
      }
      for (const [scope, title] of [
        ["user", "User packages:"],
        ["project", "Project packages:"],
      ]) {
        const these = packages.filter((p) => p.scope === scope);
        if (these.length === 0) continue;
        console.log(title);
        for (const p of these) {
          console.log(`  ${p.filtered ? `${p.source} (filtered)` : p.source}`);
          if (p.installedPath) console.log(`    ${p.installedPath}`);
        }
      }
      return;
    }
    case "update":
      await manager.update(source);
      console.log(source ? `Updated ${source}` : "Updated packages");
      return;
    case "config": {
      // pi's screen is not among its package's exports: it is imported from beside them.
      const index = import.meta.resolve("@earendil-works/pi-coding-agent");
      const { selectConfig } = await import(new URL("./cli/config-selector.js", index).href);
      // pi's screen shows the user's packages and, for a trusted project, the project's too.
      const globalSettings = pi.SettingsManager.create(cwd, agentDir, { projectTrusted: false });
      const global = await new pi.DefaultPackageManager({ cwd, agentDir, settingsManager: globalSettings }).resolve();
      const trusted = settingsManager.isProjectTrusted?.() === true;
      await selectConfig({
        resolvedPaths: { global, project: trusted ? await manager.resolve() : global },
        settingsManager,
        cwd,
        agentDir,
        writeScope: "global",
        projectModeAvailable: trusted,
      });
      process.exit(0);
    }
  }
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  fail(`Error: ${err instanceof Error ? err.message : String(err)}`);
}
