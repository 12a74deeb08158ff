"""The differences between pi and rho in pi's example extensions that are understood, each with
its reason (see DIFFERENCES.md, "Extensions"): KNOWN for pi 0.73.1's examples, KNOWN_PI16 for pi
1.6.0's (`extensions.py --pi 1.6`). Keyed by (aspect, example or "*")."""

from __future__ import annotations

# Differences that are understood, by (aspect, example or "*"): why each one is not a defect.
KNOWN: dict[tuple[str, str], str] = {
    ("responses", "shutdown-command.ts"):
        "after ctx.shutdown() rho exits once idle; pi answers one more command first (DIFFERENCES.md, Extensions)",
    ("ui", "system-prompt-header.ts"):
        "the extension shows the system prompt's length, and rho's own prompt is shorter than pi's by design",
    ("ui", "qna.ts"):
        "setEditorText(undefined): pi writes set_editor_text without `text`, rho with `text: \"\"` (the field is a string)",
    ("ui", "rpc-demo.ts"):
        "pi's RPC mode runs session_start twice after new_session (once for the new session, again when it rebinds "
        "the UI); rho once (DIFFERENCES.md, Extensions)",
}

# rho follows pi 1.6.0 where it and pi 0.73.1 differ, and its extension host runs pi 1.6.0's code
# (DIFFERENCES.md, pi 1.6.0): what that changes in pi 0.73.1's examples.
PI16_TOOLS = ("rho's built-in tools give pi 1.6.0's results: `structuredContent` (bash, read), write's "
              "'Successfully wrote to <path>', edit's `patch`")
PI16_THEME = "the host draws with pi 1.6.0's theme, whose colours differ from pi 0.73.1's"
PI16_LIBRARY = ("the extension builds its tools with pi's createBashTool & co., which in rho's host are pi "
                "1.6.0's (their prompt lines and results are pi 1.6.0's)")
PI16_NOTHING_TO_COMPACT = ("rho refuses a compaction with nothing to summarize, as pi 1.6.0 does ('Nothing to "
                           "compact (session too small)'); pi 0.73.1 summarizes the empty history")
for example in ("auto-commit-on-exit.ts", "dirty-repo-guard.ts", "git-checkpoint.ts", "protected-paths.ts",
                "built-in-tool-renderer.ts", "claude-rules.ts", "minimal-mode.ts", "rpc-demo.ts",
                "status-line.ts", "plan-mode", "bash-spawn-hook.ts"):
    for aspect in ("tools", "requests", "session"):
        KNOWN.setdefault((aspect, example), PI16_TOOLS)
for example in ("preset.ts", "ssh.ts", "status-line.ts", "working-indicator.ts", "plan-mode"):
    KNOWN[("ui", example)] = PI16_THEME
for example in ("bash-spawn-hook.ts", "built-in-tool-renderer.ts", "ssh.ts"):
    KNOWN[("requests", example)] = PI16_LIBRARY
for aspect in ("ui", "responses", "requests", "session"):
    KNOWN[(aspect, "custom-compaction.ts")] = PI16_NOTHING_TO_COMPACT
    KNOWN[(aspect, "trigger-compact.ts")] = PI16_NOTHING_TO_COMPACT
KNOWN[("responses", "handoff.ts")] = ("a prompt naming an extension command is answered once the command has "
                                      "finished, as pi 1.6.0 answers it; pi 0.73.1 answered it first")
KNOWN[("requests", "interactive-shell.ts")] = ("its user_bash handler runs `git add -p` through pi's exec, which in "
                                               "rho's host is pi 1.6.0's")

# The same for pi 1.6.0 and its examples (--pi 1.6).
KNOWN_PI16: dict[tuple[str, str], str] = {
    ("ui", "commands.ts"):
        "pi.getCommands() in pi 1.6.0 also lists its built-in `llama` and `mcp` extension commands, which rho does "
        "not have (DIFFERENCES.md, pi 1.6.0: get_commands)",
    ("ui", "system-prompt-header.ts"):
        "the extension shows the system prompt's length, and rho's own prompt is shorter than pi's by design",
    ("requests", "ssh.ts"):
        "the extension rewrites the prompt line `Current working directory: <cwd>`: rho's own prompt has that line "
        "(as pi 0.73.1's had), pi 1.6.0's puts the directory in a <cwd> block, so only rho's prompt is rewritten",
    ("responses", "handoff.ts"):
        "a prompt naming an extension command is answered once the command has finished, but rho does not hold up "
        "the commands sent after it (docs/decisions.md D4): a get_state sent as soon as the command's notice is out "
        "may be answered before the prompt, where pi reads no command until the prompt is answered",
    ("requests", "plan-mode"):
        "after 'Execute the plan' its agent_end handler restores the normal tools and sends a message: pi 1.6.0 goes "
        "on within the same run, whose system prompt was built at its start (plan mode's read-only tools); rho's "
        "run has ended, and the message starts the next one, whose prompt names the tools active now (the tools "
        "sent are the same on both sides; DIFFERENCES.md, Extensions)",
}
