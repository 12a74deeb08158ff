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

What is compared is `extension_aspects.py`'s. Differences are matched against KNOWN (KNOWN_PI16
for pi 1.6.0; `extension_known.py`, each with its reason, see DIFFERENCES.md, "Extensions"); the
report (EXTENSIONS.md) counts the examples that compare equal,
equal but for explained differences, differ unexplained, and are skipped (with why). Exit status 0
when nothing unexplained remains. Needs Node >= 20.6 with npm, Python 3.11 (standard library),
cargo. rho's extension host runs on pi 1.6.0 and so needs Node >= 22.19: RHO_NODE, when set, is
passed on to rho.
"""

from __future__ import annotations

import argparse
import json
import os
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
from extension_aspects import OWN_ONLY_PI16, Run, Scrub, aspects, differences, system_text  # noqa: E402
from extension_known import KNOWN, KNOWN_PI16  # noqa: E402
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

def log(msg: str) -> None:
    print(f"[extensions] {msg}", file=sys.stderr, flush=True)


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
