#!/usr/bin/env python3
"""What an extension costs, in rho and in pi 0.73.1.

    python3 bench/extensions/bench.py [--runs N] [--bin-dir DIR]

Measured (medians over --runs; peak RSS from /proc VmHWM):
  - spawn to an extension's tool being callable: `--mode rpc -e hello.ts` (pi's example), a prompt
    sent at once, the model's first reply calls the extension's `hello` tool; time from spawn to
    that call's `tool_execution_end`, for rho and for pi;
  - the memory that costs: rho's own peak RSS and its extension host's (the Node process), pi's;
  - the round trip of a `tool_call` hook: 100 `read` calls with and without an extension that
    listens to `tool_call` (`tool_call_only.ts`); the p50 of each call's `tool_execution_start` to
    `tool_execution_end`, and the difference.

The 5,000-delta stream with that extension: `python3 bench/rpc/bench.py --extension
bench/extensions/tool_call_only.ts`. Needs Python 3, Node >= 20.6 with npm, pi's reference
install (PI_REF_DIR, as bench/compare installs it) and rho's host (RHO_EXTENSION_HOST_DIR,
default target/extension-host).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bench" / "compare"))

from compare import ensure_pi  # noqa: E402
from runner import MockServer  # noqa: E402


def peak_rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(pid: int) -> list[int]:
    out = []
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return out
    for child in map(int, children):
        out.append(child)
        out.extend(descendants(child))
    return out


def world(mock_url: str, agent: str) -> tuple[dict[str, str], Path]:
    home = Path(tempfile.mkdtemp(prefix="rho-ext-bench-"))
    agent_dir, work = home / "agent", home / "work"
    agent_dir.mkdir()
    work.mkdir()
    (work / "small.txt").write_text("hello\n")
    models = {"providers": {"mock": {"baseUrl": mock_url, "api": "anthropic-messages", "apiKey": "k",
                                     "models": [{"id": "mock-model", "name": "Mock", "contextWindow": 200000,
                                                 "maxTokens": 8192}]}}}
    (agent_dir / "models.json").write_text(json.dumps(models))
    env = dict(os.environ, HOME=str(home))
    env["PI_CODING_AGENT_DIR" if agent == "pi" else "RHO_CODING_AGENT_DIR"] = str(agent_dir)
    return env, work


def run_prompt(argv: list[str], agent: str, script: dict, until: str, mock_bin: Path) -> dict:
    """Spawns the agent, prompts at once, reads frames until `until`; times and memory."""
    with tempfile.TemporaryDirectory() as scratch:
        mock = MockServer(mock_bin, script, Path(scratch))
        env, work = world(mock.url, agent)
        start = time.perf_counter()
        proc = subprocess.Popen([*argv, "--mode", "rpc", "--no-session", "--model", "mock/mock-model"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                cwd=work, env=env)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b'{"type":"prompt","id":"p","message":"go"}\n')
        proc.stdin.flush()
        starts: dict[str, float] = {}
        calls: list[float] = []
        reached = None
        peaks = {"self": 0, "children": 0}
        for line in proc.stdout:
            now = time.perf_counter()
            peaks["self"] = max(peaks["self"], peak_rss_kb(proc.pid))
            peaks["children"] = max(peaks["children"], sum(peak_rss_kb(c) for c in descendants(proc.pid)))
            frame = json.loads(line)
            kind = frame.get("type")
            if kind == "tool_execution_start":
                starts[frame["toolCallId"]] = now
            elif kind == "tool_execution_end":
                calls.append(now - starts.get(frame["toolCallId"], now))
            if kind == until and reached is None:
                reached = now - start
                break
        proc.stdin.close()
        proc.wait(10)
        mock.stop()
        return {"seconds": reached, "calls": calls, "self_kb": peaks["self"], "children_kb": peaks["children"]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bin-dir", type=Path, default=ROOT / "target" / "release")
    a = ap.parse_args()
    pi_dir = Path(os.environ.get("PI_REF_DIR", Path.home() / ".cache" / "rho-compare" / "pi"))
    pi = ensure_pi(pi_dir)
    rho, mock_bin = a.bin_dir / "rho", a.bin_dir / "rho-mock-llm"
    os.environ.setdefault("RHO_EXTENSION_HOST_DIR", str(ROOT / "target" / "extension-host"))
    hello = pi_dir / "node_modules/@mariozechner/pi-coding-agent/examples/extensions/hello.ts"
    hook = HERE / "tool_call_only.ts"

    callable_script = {"turns": [{"toolCalls": [{"name": "hello", "arguments": {"name": "x"}}]}, {"text": "ok"}]}
    rows = []
    for name, argv in (("rho", [str(rho), "-e", str(hello)]), ("pi", [str(pi), "-e", str(hello)])):
        runs = [run_prompt(argv, name, callable_script, "tool_execution_end", mock_bin) for _ in range(a.runs)]
        secs = statistics.median(r["seconds"] for r in runs)
        own = statistics.median(r["self_kb"] for r in runs) / 1024
        kids = statistics.median(r["children_kb"] for r in runs) / 1024
        rows.append((f"{name}: spawn to the extension tool's result (`-e hello.ts`)", f"{secs * 1000:.0f} ms"))
        memory = f"{own:.1f} MB" + (f" + extension host {kids:.1f} MB" if name == "rho" else "")
        rows.append((f"{name}: peak RSS meanwhile", memory))

    reads = {"turns": [{"toolCalls": [{"name": "read", "arguments": {"path": "small.txt"}}]}] * 100 + [{"text": "ok"}]}
    p50 = {}
    for label, argv in (("without", [str(rho)]), ("with", [str(rho), "-e", str(hook)])):
        calls = []
        for _ in range(max(1, a.runs // 2)):
            calls += run_prompt(argv, "rho", reads, "agent_end", mock_bin)["calls"]
        p50[label] = statistics.median(calls)
        rows.append((f"rho: `read` call, start to end, p50 ({label} a `tool_call` handler)",
                     f"{p50[label] * 1e6:.0f} µs"))
    rows.append(("rho: `tool_call` hook round trip (p50 difference)", f"{(p50['with'] - p50['without']) * 1e6:.0f} µs"))

    print("| measure | value |\n| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
