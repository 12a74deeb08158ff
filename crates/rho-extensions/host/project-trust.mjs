// pi 1.6's `project_trust`, asked of the extensions a host loaded without the project's own (rho
// starts that host for the question alone, before the session): pi's own dispatch (the first yes
// or no wins, a throwing handler is reported and the next one asked), with pi's limited trust
// context. There are no dialogs then: they answer their defaults.

/** The first `{trusted: "yes" | "no", remember}`, or null when every handler left it undecided. */
export async function askProjectTrust(runnerModule, runner, mode, cwd, channel) {
  const ui = {
    select: async () => undefined,
    confirm: async () => false,
    input: async () => undefined,
    notify: () => {},
  };
  const ctx = { cwd, mode, hasUI: false, ui };
  const event = { type: "project_trust", cwd };
  const { result, errors } = await runnerModule.emitProjectTrustEvent({ extensions: runner.extensions }, event, ctx);
  for (const error of errors) channel.send({ type: "error", ...error });
  if (result?.trusted !== "yes" && result?.trusted !== "no") return null;
  return { trusted: result.trusted, remember: result.remember === true };
}
