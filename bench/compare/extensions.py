#!/usr/bin/env python3
"""pi's example extensions in pi and in rho, side by side.

    python3 bench/compare/extensions.py                    # every case of extension_cases.json
    python3 bench/compare/extensions.py --case hello.ts    # one (repeatable)
    python3 bench/compare/extensions.py --skip-build --bin-dir target/debug
    python3 bench/compare/extensions.py --pi 1.6           # pi 1.6.0's examples, in pi 1.6.0 and rho

Each case of `extension_cases.json` loads one of the examples pi 0.73.1 ships
(`examples/extensions/`) with `-e` into `pi --mode rpc` and `rho --mode rpc`, each against its own
rho-mock-llm serving the case's script, in fresh directories, with the same stdin steps and the
same answers to dialogs. With `--pi 1.6` the reference is pi 1.6.0 (`@earendil-works/pi-coding-agent`,
from $PI16_REF_DIR, default ~/.cache/rho-compare/pi16, installed there with Node 22 when missing:
pi 1.6 needs Node >= 22.19), the examples are the ones it ships, the cases
`extension_cases_pi16.json` and the report EXTENSIONS_PI16.md. Then it compares what a host and a
user would see:

  - the dialogs and notices (`extension_ui_request` frames, ids left out),
  - the tool results (`tool_execution_end`), and extension errors,
  - the extension commands `get_commands` lists,
  - what the model was sent: every request's messages, the tools offered, and what the
    extension changed in the system prompt (its lines added or removed against a run without
    extensions: the two agents' own prompts differ by design),
  - the session file's entries, and the files the case names.

Besides `example`, `note`, `steps`, `script` (the mock's), `ui` (dialog answers), `files`,
`checkFiles`, `git`, `args` and `skip`, a case may give `setup` (a shell script run in the working
directory first), `settings` (both agents' settings.json), `providers` (more models.json providers,
a `baseUrl` path put after the mock's address: for an extension that calls a model itself),
`wholeRequests` (such a request is compared whole, not only by API, path and model) and `model`
(instead of mock/mock-model).

Differences are matched against KNOWN (KNOWN_PI16 for pi 1.6.0; each with its reason, see
DIFFERENCES.md, "Extensions"); the report (EXTENSIONS.md) counts the examples that compare equal,
equal but for explained differences, differ unexplained, and are skipped (with why). Exit status 0
when nothing unexplained remains. Needs Node >= 20.6 with npm, Python 3.11 (standard library),
cargo. rho's extension host runs on pi 1.6.0 and so needs Node >= 22.19: RHO_NODE, when set, is
passed on to rho.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from compare import build_rho, ensure_pi  # noqa: E402
from runner import DEFAULT_MODEL, MockServer, StdoutReader, matches  # noqa: E402

DEFAULT_STEPS = [
    {"send": {"type": "get_commands", "id": "c1"}},
    {"wait": {"type": "response", "id": "c1"}},
    {"send": {"type": "prompt", "id": "p1", "message": "Hello"}},
    {"wait": {"type": "agent_end"}},
    {"sleepMs": 300},
]
DEFAULT_SCRIPT = {"turns": [{"text": "Hi there."}]}
DIALOGS = {"select", "confirm", "input", "editor"}

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
    ("requests", "plan-mode"):
        "after 'Execute the plan' its agent_end handler restores the normal tools and sends a message: pi 1.6.0 goes "
        "on within the same run, whose system prompt was built at its start (plan mode's read-only tools); rho's "
        "run has ended, and the message starts the next one, whose prompt names the tools active now (the tools "
        "sent are the same on both sides; DIFFERENCES.md, Extensions)",
}

# Each agent's own system prompt lines (tool lines, guidelines, the skills preamble), worded
# differently by design (DIFFERENCES.md, "Request differences"), as one tag per meaning: what an
# extension changes is then compared, not the two agents' wording.
OWN_LINES = [
    ("tool:edit", ("- edit: Make precise file edits", "- edit: Make surgical edits")),
    ("guide:bash", ("- Use bash for file operations like ls, rg, find", "- Use bash for file operations such as ls, rg and find.")),
    ("guide:explore", ("- Prefer grep/find/ls tools over bash", "- To explore files, prefer the grep, find and ls tools")),
    ("guide:read", ("- Use read to examine files instead of cat or sed.", "- Use read to look at files, rather than cat or sed.")),
    ("guide:edit", ("- Use edit for precise changes", "- Use edit for targeted changes",
                    "- When changing multiple separate locations in one file",
                    "- Each edits[].oldText is matched", "- Each edits[].oldText must exactly",
                    "- Keep edits[].oldText as small as possible")),
    ("guide:write", ("- Use write only for new files", "- Use write only to create new files")),
    ("skills", ("The following skills provide specialized instructions", "Use the read tool to load a skill's file",
                "When a skill file references a relative path", "Skills are specialized instructions for particular",
                "When a task matches a skill's description", "A relative path in a skill file is relative",
                "Resolve relative paths against the skill's directory", "<skills>", "</skills>")),
]
# rho's own lines with no counterpart in pi (its own tools, one guideline), pi's "(none)" for an
# empty tool list (rho's never is: its own tools stay), and pi 1.6.0's guideline of its own bash
# tool, which rho's bash does not have (an extension that registers pi's bash brings it to rho's
# prompt too).
OWN_ONLY = ("- todo_write:", "- ask:", "- task:", "- When you summarize what you did",
            "- Read a file with the read tool before you edit it.", "(none)",
            "- You can inspect PI_* environment variables")
OWN_TOOLS = {"todo_write", "ask", "task"}
# rho's guideline for find/grep/ls, as pi 0.73.1 worded it; pi 1.6.0 has none (--pi 1.6).
OWN_ONLY_PI16 = ("- To explore files, prefer the grep, find and ls tools",)


def tag_line(line: str, own_only: tuple[str, ...] = ()) -> str | None:
    """A prompt-delta line (`+text` / `-text`) with the agents' own wording made one tag."""
    sign, text = line[:1], line[1:]
    if text.startswith(OWN_ONLY + own_only):
        return None
    for tag, starts in OWN_LINES:
        if text.startswith(starts):
            return f"{sign}<{tag}>"
    return line


def log(msg: str) -> None:
    print(f"[extensions] {msg}", file=sys.stderr, flush=True)


class Run:
    """One agent on one case: its frames, the model requests, its session entries and files."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.entries: list[dict[str, Any]] = []
        self.files: dict[str, str | None] = {}
        self.stderr = ""
        self.exit_code: int | None = None
        self.error: str | None = None
        self.paths: dict[str, str] = {}


def answer_for(frame: dict[str, Any], policy: dict[str, Any]) -> dict[str, Any]:
    method = frame["method"]
    out: dict[str, Any] = {"type": "extension_ui_response", "id": frame["id"]}
    if method == "confirm":
        out["confirmed"] = bool(policy.get("confirm", True))
    elif method == "select":
        choice = policy.get("select", 0)
        options = frame.get("options") or []
        if isinstance(choice, int):
            if choice < len(options):
                out["value"] = options[choice]
            else:
                out["cancelled"] = True
        else:
            out["value"] = choice
    elif method == "input":
        out["value"] = policy.get("input", "ok")
    else:
        out["value"] = policy.get("editor", frame.get("prefill") or "ok")
    return out


def run_case(agent: str, argv: list[str], case: dict[str, Any], example: Path | None, mock_bin: Path,
             env_extra: dict[str, str]) -> Run:
    run = Run()
    root = Path(tempfile.mkdtemp(prefix=f"rho-ext-{agent}-"))
    cwd, agent_dir, home, mockdir = root / "work", root / "agent", root / "home", root / "mock"
    for d in (cwd, agent_dir, home, mockdir):
        d.mkdir()
    for rel, text in case.get("files", {}).items():
        p = cwd / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    if case.get("git"):
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
        subprocess.run([*git, "init", "-q"], cwd=cwd, check=True)
        subprocess.run([*git, "add", "-A"], cwd=cwd, check=True)
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], cwd=cwd, check=True)
    if case.get("setup"):
        # A shell script run in the working directory first (a git history, say).
        subprocess.run(["sh", "-ec", case["setup"]], cwd=cwd, check=True, capture_output=True,
                       env={**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"})
    run.paths = {"cwd": str(cwd), "agent": str(agent_dir), "home": str(home), "root": str(root)}
    mock = MockServer(mock_bin, case.get("script", DEFAULT_SCRIPT), mockdir)
    models = {"providers": {"mock": {"baseUrl": mock.url, "api": "anthropic-messages", "apiKey": "test-key",
                                     "models": [DEFAULT_MODEL, {**DEFAULT_MODEL, "id": "mock-small", "name": "Mock Small"}]}}}
    # Built-in providers pointed at the mock too (a `baseUrl` path is put after the mock's
    # address), for extensions that call a model of their own (ctx.modelRegistry.complete).
    for provider, config in case.get("providers", {}).items():
        config = dict(config)
        if str(config.get("baseUrl", "")).startswith("/"):
            config["baseUrl"] = mock.url + config["baseUrl"]
        models["providers"][provider] = config
    (agent_dir / "models.json").write_text(json.dumps(models))
    if "settings" in case:
        (agent_dir / "settings.json").write_text(json.dumps(case["settings"]))
    args = [*argv, "--mode", "rpc", "--model", case.get("model", "mock/mock-model")]
    if example is not None:
        args += ["-e", str(example)]
    args += case.get("args", [])
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "PI_CODING_AGENT_DIR" if agent == "pi" else "RHO_CODING_AGENT_DIR": str(agent_dir),
        **env_extra,
    }
    stderr_path = root / "stderr.txt"
    stderr_fh = open(stderr_path, "wb")
    t0 = time.monotonic()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=stderr_fh, start_new_session=True)
    reader = StdoutReader(proc.stdout, t0, light=False)
    reader.start()
    write_lock = threading.Lock()

    def write(obj: dict[str, Any]) -> None:
        with write_lock:
            assert proc.stdin is not None
            proc.stdin.write((json.dumps(obj, separators=(",", ":")) + "\n").encode())
            proc.stdin.flush()

    policy = case.get("ui", {})
    stop = threading.Event()

    def answer_dialogs() -> None:
        seen = 0
        while not stop.is_set():
            with reader.cond:
                frames = reader.frames[seen:]
                seen = len(reader.frames)
                if not frames:
                    if reader.eof:
                        return
                    reader.cond.wait(0.2)
                    continue
            for f in frames:
                o = f.obj
                if o and o.get("type") == "extension_ui_request" and o.get("method") in DIALOGS:
                    try:
                        write(answer_for(o, policy))
                    except (BrokenPipeError, OSError):
                        return

    answerer = threading.Thread(target=answer_dialogs, daemon=True)
    answerer.start()
    cursor = 0
    timeout = float(case.get("timeoutS", 30))
    try:
        for step in case.get("steps", DEFAULT_STEPS):
            try:
                cursor = play(step, write, reader, cursor, timeout)
            except (TimeoutError, BrokenPipeError, OSError) as e:
                if not step.get("optional"):
                    raise
                log(f"{agent} {case['example']}: optional step skipped ({e})")
    except (TimeoutError, BrokenPipeError, OSError) as e:
        run.error = f"{type(e).__name__}: {e}"
    time.sleep(float(case.get("settleS", 0.3)))
    try:
        with write_lock:
            assert proc.stdin is not None
            proc.stdin.close()
    except OSError:
        pass
    try:
        run.exit_code = proc.wait(15)
    except subprocess.TimeoutExpired:
        run.error = (run.error or "") + " did not exit within 15 s of stdin EOF; killed"
        os.killpg(proc.pid, signal.SIGKILL)
        run.exit_code = proc.wait()
    stop.set()
    reader.join(10)
    mock.stop()
    stderr_fh.close()
    run.frames = [f.obj for f in reader.frames if f.obj is not None]
    run.requests = mock.requests()
    run.stderr = stderr_path.read_text(errors="replace")[-5000:]
    for session_file in sorted((agent_dir / "sessions").rglob("*.jsonl")):
        entries = [json.loads(line) for line in session_file.read_text().splitlines() if line.strip()]
        # pi writes a session file once it holds a reply; rho from its first entry (DIFFERENCES.md,
        # Extensions): files without a reply are left out on both sides.
        if any(e.get("type") == "message" and e.get("message", {}).get("role") == "assistant" for e in entries):
            run.entries.extend(entries)
    for rel in case.get("checkFiles", []):
        p = cwd / rel
        run.files[rel] = p.read_text(errors="replace") if p.exists() else None
    shutil.rmtree(root, ignore_errors=True)
    return run


def play(step: dict[str, Any], write, reader: StdoutReader, cursor: int, timeout: float) -> int:
    if "send" in step:
        write(step["send"])
    elif "sleepMs" in step:
        time.sleep(step["sleepMs"] / 1000)
    elif "wait" in step:
        pattern = step["wait"]
        deadline = time.monotonic() + float(step.get("timeoutS", timeout))
        with reader.cond:
            while True:
                for i in range(cursor, len(reader.frames)):
                    f = reader.frames[i]
                    if f.obj is not None and matches(pattern, f.obj):
                        return i + 1
                cursor = len(reader.frames)
                if reader.eof:
                    raise TimeoutError(f"stdout closed while waiting for {json.dumps(pattern)}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"timed out waiting for {json.dumps(pattern)}")
                reader.cond.wait(min(left, 0.5))
    else:
        raise ValueError(f"unknown step {step}")
    return cursor


# ------------------------------------------------------------------------------------------------
# What is compared
# ------------------------------------------------------------------------------------------------

ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z")
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
HEX_ID = re.compile(r"\b[0-9a-f]{8}\b")


class Scrub:
    def __init__(self, run: Run, example_dir: Path):
        self.repl = sorted(
            [(run.paths["cwd"], "<cwd>"), (run.paths["agent"], "<agent>"), (run.paths["home"], "<home>"),
             (run.paths["root"], "<root>"), (str(example_dir), "<examples>")],
            key=lambda kv: -len(kv[0]),
        )

    def text(self, s: str) -> str:
        for a, b in self.repl:
            s = s.replace(a, b)
        return UUID.sub("<uuid>", ISO.sub("<time>", s))

    def value(self, v: Any, drop: set[str] = frozenset()) -> Any:
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if k in drop:
                    continue
                if k in ("timestamp", "id", "parentId", "toolCallId", "targetId", "responseId", "duration", "ttft"):
                    out[k] = "<x>"
                else:
                    out[k] = self.value(x, drop)
            return out
        if isinstance(v, list):
            return [self.value(x, drop) for x in v]
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, float):
            return round(v, 9)
        return v


def system_text(request: dict[str, Any]) -> str:
    system = request.get("body", {}).get("system")
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    return system or ""


def prompt_delta(text: str, baseline: str, own_only: tuple[str, ...] = ()) -> list[str]:
    """The lines an extension added to (+) or removed from (-) the agent's own system prompt,
    the agents' own wording made tags (once each). A tag both removed and added is one of the
    agent's own lines put in other words (an extension that registers pi's own tool brings pi's
    wording of its description and guidelines): no change of meaning, left out."""
    a = [line for line in baseline.splitlines() if not line.startswith("Current date")]
    b = [line for line in text.splitlines() if not line.startswith("Current date")]
    out: list[str] = []
    for d in difflib.ndiff(a, b):
        if d[:1] in "+-" and d[2:].strip():
            tagged = tag_line(d[:1] + d[2:], own_only)
            if tagged is not None and tagged not in out:
                out.append(tagged)
    reworded = {t[1:] for t in out if t.startswith("+<")} & {t[1:] for t in out if t.startswith("-<")}
    out = [t for t in out if t[1:] not in reworded]
    # Where a line sits depends on each agent's own lines around it: compared as a set.
    return sorted(out)


def is_summary_request(request: dict[str, Any]) -> bool:
    """A compaction or branch-summary request: each agent's own summarization prompt."""
    system = system_text(request)
    return "summarization assistant" in system or "context-summarization assistant" in system


def aspects(run: Run, scrub: Scrub, baseline: str, baseline_tools: set[str],
            own_only: tuple[str, ...] = (), whole_requests: bool = False) -> dict[str, Any]:
    frames = run.frames
    ui = [scrub.value(f, {"id"}) for f in frames if f.get("type") == "extension_ui_request"]
    tools = [
        scrub.value({k: f.get(k) for k in ("toolName", "result", "isError")})
        for f in frames if f.get("type") == "tool_execution_end"
    ]
    errors = [scrub.value({k: f.get(k) for k in ("extensionPath", "event", "error")})
              for f in frames if f.get("type") == "extension_error"]
    commands = []
    for f in frames:
        if f.get("type") == "response" and f.get("command") == "get_commands" and f.get("success"):
            # pi 1.6.0's own built-in extensions (`llama`, `mcp`: sourceInfo.source "builtin") are
            # not the example's (DIFFERENCES.md, pi 1.6.0).
            commands.append(sorted((c["name"], c.get("description")) for c in f["data"]["commands"]
                                   if c.get("source") == "extension"
                                   and (c.get("sourceInfo") or {}).get("source") != "builtin"))
    responses = [scrub.value({k: f.get(k) for k in ("command", "success", "error")})
                 for f in frames if f.get("type") == "response" and f.get("command") != "get_commands"]
    requests: list[Any] = []
    for r in run.requests:
        body = r.get("body", {})
        if is_summary_request(r):
            # Worded by each agent (DIFFERENCES.md): that a summary was asked for is compared.
            requests.append("<summary request>")
            continue
        if r.get("api", "anthropic-messages") != "anthropic-messages":
            # Another provider's API: which one, where, for which model; whole where the case says
            # the request is one an extension makes itself (ctx.modelRegistry.complete: pi-ai's
            # in both agents).
            other = {"api": r.get("api"), "path": r.get("path"), "model": body.get("model")}
            if whole_requests:
                other["body"] = scrub.value(body)
            requests.append(other)
            continue
        requests.append({
            "messages": scrub.value(strip_cache(strip_system(body.get("messages", [])))),
            "tools": tool_delta({t.get("name") for t in body.get("tools", []) or []}, baseline_tools),
            "system": prompt_delta(scrub.text(system_text(r)), baseline, own_only),
        })
    # pi 1.6.0 records the system prompt as a `system` message (DIFFERENCES.md, pi 1.6.0: not yet in
    # rho's sessions); what an extension does to the prompt is compared in the requests.
    entries = [scrub.value(entry_view(e)) for e in run.entries
               if e.get("type") not in ("session",) and not is_system_entry(e)]
    return {
        "ui": ui,
        "tools": tools,
        "errors": errors,
        "commands": commands,
        "responses": responses,
        "requests": requests,
        "session": entries,
        "files": {k: scrub.text(v) if v is not None else None for k, v in run.files.items()},
    }


def tool_delta(tools: set[str], baseline: set[str]) -> list[str]:
    """The tools an extension added (+) or took away (-): each agent's own set differs by design
    (rho's own tools are left out)."""
    return sorted(f"+{t}" for t in tools - baseline - OWN_TOOLS) + sorted(f"-{t}" for t in baseline - tools - OWN_TOOLS)


def strip_system(messages: list[Any]) -> list[Any]:
    """pi 1.6.0's leading `system` message, where a wire carries one in `messages`: the system
    prompt is compared as a delta."""
    if messages and isinstance(messages[0], dict) and messages[0].get("role") == "system":
        return messages[1:]
    return messages


def is_system_entry(e: dict[str, Any]) -> bool:
    return e.get("type") == "message" and (e.get("message") or {}).get("role") == "system"


def strip_cache(messages: list[Any]) -> list[Any]:
    """Anthropic cache markers are where each agent puts them: not an extension's doing."""
    out = []
    for m in messages:
        m = dict(m)
        if isinstance(m.get("content"), list):
            m["content"] = [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
                            for b in m["content"]]
        out.append(m)
    return out


def entry_view(e: dict[str, Any]) -> dict[str, Any]:
    """A session entry as the extension left it: what it says, not its bookkeeping."""
    kind = e.get("type")
    if kind == "message":
        m = e.get("message", {})
        view = {"type": kind, "role": m.get("role")}
        if m.get("role") in ("user", "toolResult", "custom"):
            view["content"] = m.get("content")
        if m.get("role") == "assistant":
            view["content"] = [c for c in m.get("content", []) if c.get("type") in ("text", "toolCall")]
        if m.get("role") == "toolResult":
            view["details"] = m.get("details")
            view["isError"] = m.get("isError")
        return view
    keep = {"custom": ("customType", "data"), "custom_message": ("customType", "content", "display", "details"),
            "session_info": ("name",), "label": ("label",), "compaction": ("summary",),
            "branch_summary": ("summary",), "model_change": ("provider", "modelId"),
            "thinking_level_change": ("thinkingLevel",)}.get(kind, ())
    return {"type": kind, **{k: e.get(k) for k in keep}}


def differences(pi: dict[str, Any], rho: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for aspect in pi:
        if pi[aspect] != rho[aspect]:
            a = json.dumps(pi[aspect], indent=1, ensure_ascii=False, sort_keys=True).splitlines()
            b = json.dumps(rho[aspect], indent=1, ensure_ascii=False, sort_keys=True).splitlines()
            diff = "\n".join(difflib.unified_diff(a, b, "pi", "rho", lineterm="", n=2))
            out.append((aspect, diff))
    return out


# ------------------------------------------------------------------------------------------------


class Reference:
    """The pi release the examples come from and run in."""

    def __init__(self, version: str, ref_dir: Path, scope: str, cases: Path, report: Path, out: Path,
                 known: dict[tuple[str, str], str]):
        self.version, self.dir, self.scope = version, ref_dir, scope
        self.cases, self.report, self.out, self.known = cases, report, out, known
        self.argv: list[str] = []
        self.env: dict[str, str] = {}
        self.own_only: tuple[str, ...] = ()

    @property
    def examples(self) -> Path:
        return self.dir / "node_modules" / self.scope / "pi-coding-agent" / "examples" / "extensions"


def reference(which: str) -> Reference:
    if which == "1.6":
        ref = Reference("1.6.0", Path(os.environ.get("PI16_REF_DIR", Path.home() / ".cache" / "rho-compare" / "pi16")),
                        "@earendil-works", HERE / "extension_cases_pi16.json", HERE / "EXTENSIONS_PI16.md",
                        HERE / "out" / "extensions-pi16", KNOWN_PI16)
        from clients.run import PI16_PINNED, ensure_npm  # noqa: PLC0415
        ensure_npm(ref.dir, PI16_PINNED, "pi 1.6.0 and node 22")
        # pi 1.6 needs Node >= 22.19: the `node` package installed beside it. Its launcher is a
        # `#!/usr/bin/env node` script, and what the extensions spawn (`node`) is the same Node.
        node22 = (ref.dir / "node_modules" / ".bin" / "node").resolve()
        ref.argv = [str(node22), str(ref.examples.parent.parent / "dist" / "cli.js")]
        # docs/environment-variables.md of pi 1.6: no model catalogue refresh, version check or
        # telemetry (as clients/run.py).
        ref.env = {"PATH": f"{node22.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
                   "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
        ref.own_only = OWN_ONLY_PI16
        return ref
    ref = Reference("0.73.1", Path(os.environ.get("PI_REF_DIR", Path.home() / ".cache" / "rho-compare" / "pi")),
                    "@mariozechner", HERE / "extension_cases.json", HERE / "EXTENSIONS.md",
                    HERE / "out" / "extensions", KNOWN)
    ref.argv = [str(ensure_pi(ref.dir))]
    return ref


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pi", choices=["0.73", "1.6"], default="0.73",
                    help="the reference: pi 0.73.1 (default) or pi 1.6.0, with the examples each ships")
    ap.add_argument("--case", action="append", help="only this example (repeatable)")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--bin-dir", type=Path, help="where rho and rho-mock-llm are (default: target/release)")
    ap.add_argument("--report", type=Path, help="default: EXTENSIONS.md (--pi 1.6: EXTENSIONS_PI16.md)")
    ap.add_argument("--out", type=Path, help="default: out/extensions (--pi 1.6: out/extensions-pi16)")
    ap.add_argument("--cases", type=Path, help="default: extension_cases.json (--pi 1.6: extension_cases_pi16.json)")
    a = ap.parse_args()

    ref = reference(a.pi)
    report, out, cases_path = a.report or ref.report, a.out or ref.out, a.cases or ref.cases
    bins = a.bin_dir.resolve() if a.bin_dir else build_rho(a.skip_build)
    rho_bin, mock_bin = bins / "rho", bins / "rho-mock-llm"
    examples = ref.examples
    host_dir = Path(os.environ.get("RHO_EXTENSION_HOST_DIR", REPO / "target" / "extension-host"))
    # pi's RPC mode writes setTitle frames; rho's only with PI_RPC_EMIT_TITLE (docs/protocol.md#window-title).
    rho_env = {"RHO_EXTENSION_HOST_DIR": str(host_dir), "PI_RPC_EMIT_TITLE": "1"}
    if os.environ.get("RHO_NODE"):
        rho_env["RHO_NODE"] = os.environ["RHO_NODE"]
    agents = (("pi", ref.argv, ref.env), ("rho", [str(rho_bin)], rho_env))

    cases = json.loads(cases_path.read_text())
    if a.case:
        cases = [c for c in cases if c["example"] in a.case]
    out.mkdir(parents=True, exist_ok=True)

    # The agents' own system prompts, without extensions: what an extension changes is measured
    # against these.
    baseline_case = {"example": "<none>", "steps": [
        {"send": {"type": "prompt", "id": "p1", "message": "Hello"}}, {"wait": {"type": "agent_end"}}]}
    baselines, baseline_tools = {}, {}
    for name, argv, env in agents:
        base = run_case(name, argv, baseline_case, None, mock_bin, env)
        first = base.requests[0] if base.requests else {}
        baselines[name] = Scrub(base, examples).text(system_text(first))
        baseline_tools[name] = {t.get("name") for t in first.get("body", {}).get("tools", []) or []}

    results = []
    for case in cases:
        name = case["example"]
        if case.get("skip"):
            results.append({"example": name, "status": "skipped", "why": case["skip"], "note": case.get("note", "")})
            shutil.rmtree(out / name.replace("/", "_"), ignore_errors=True)
            continue
        path = examples / name
        log(f"{name}")
        runs = {}
        for agent, argv, env in agents:
            runs[agent] = run_case(agent, argv, case, path, mock_bin, env)
        seen = {agent: aspects(run, Scrub(run, examples), baselines[agent], baseline_tools[agent], ref.own_only,
                               bool(case.get("wholeRequests")))
                for agent, run in runs.items()}
        diffs = differences(seen["pi"], seen["rho"])
        explained, unexplained = [], []
        for aspect, diff in diffs:
            why = ref.known.get((aspect, name)) or ref.known.get((aspect, "*"))
            (explained if why else unexplained).append((aspect, diff, why))
        failures = [f"{agent}: {run.error}" for agent, run in runs.items() if run.error]
        status = "equal" if not diffs and not failures else ("differs" if unexplained or failures else "explained")
        case_dir = out / name.replace("/", "_")
        case_dir.mkdir(parents=True, exist_ok=True)
        for agent, run in runs.items():
            (case_dir / f"{agent}.aspects.json").write_text(json.dumps(seen[agent], indent=1, ensure_ascii=False))
            (case_dir / f"{agent}.stderr.txt").write_text(run.stderr)
            with open(case_dir / f"{agent}.requests.jsonl", "w") as fh:
                for r in run.requests:
                    fh.write(json.dumps(r.get("body", {}), ensure_ascii=False) + "\n")
            with open(case_dir / f"{agent}.frames.jsonl", "w") as fh:
                for f in run.frames:
                    fh.write(json.dumps(f, ensure_ascii=False) + "\n")
        (case_dir / "diff.txt").write_text("\n\n".join(f"## {aspect}\n{diff}" for aspect, diff in diffs))
        results.append({"example": name, "status": status, "note": case.get("note", ""),
                        "explained": [(x, w) for x, _, w in explained], "unexplained": [x for x, _, _ in unexplained],
                        "failures": failures})
        log(f"  {status}" + (f": {', '.join(x for x, _, _ in unexplained)}" if unexplained else ""))

    write_report(report, results, ref, a.pi)
    bad = [r for r in results if r["status"] == "differs"]
    return 1 if bad else 0


def write_report(path: Path, results: list[dict[str, Any]], ref: Reference, which: str) -> None:
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    command = "python3 bench/compare/extensions.py" + ("" if which == "0.73" else f" --pi {which}")
    lines = [
        f"# pi's example extensions in pi {ref.version} and in rho",
        "",
        f"Written by `{command}` (see its docstring and README.md): each example",
        "loaded with `-e` into both agents' RPC mode against the same scripted model, with the same",
        "answers to dialogs. Compared: dialogs and notices, tool results, extension errors, extension",
        "commands, what the model was sent (messages, tools, the extension's change to the system",
        "prompt), session entries and files.",
        "",
        f"**{len(results)} examples: {counts.get('equal', 0)} equal, {counts.get('explained', 0)} equal but for "
        f"explained differences, {counts.get('differs', 0)} with unexplained differences, "
        f"{counts.get('skipped', 0)} not runnable in RPC mode against a scripted model.**",
        "",
        "| example | result | what it exercises |",
        "| --- | --- | --- |",
    ]
    for r in results:
        if r["status"] == "skipped":
            result = f"skipped: {r['why']}"
        elif r["status"] == "explained":
            result = "equal but for: " + "; ".join(f"{a} ({w})" for a, w in r["explained"])
        elif r["status"] == "differs":
            result = "**differs**: " + ", ".join(r["unexplained"] + r["failures"])
        else:
            result = "equal"
        lines.append(f"| `{r['example']}` | {result} | {r['note']} |")
    path.write_text("\n".join(lines) + "\n")
    log(f"report: {path}")


if __name__ == "__main__":
    sys.exit(main())
