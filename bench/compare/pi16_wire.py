#!/usr/bin/env python3
"""What a host of today's pi receives, side by side: pi 1.6.0 and rho on the same scripted model.

    python3 bench/compare/pi16_wire.py [--runs 3] [--skip-build]

Two figures, each from both agents in one run, in RPC mode against one rho-mock-llm:

  stream   stdout bytes (and lines) from the prompt's response to `agent_settled` for one reply
           of 5,000 text deltas of 20 bytes (median of --runs);
  request  the body of the model request a plain prompt sends (bytes, and the tools it offers).

pi 1.6.0 needs Node >= 22.19: the reference is taken from $PI16_REF_DIR (default
~/.cache/rho-compare/pi16), where `npm install @earendil-works/pi-coding-agent@1.6.0 node@22`
puts both (bench/compare/clients/run.py --only pi16 installs them). Standard library only.
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
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from runner import MockServer  # noqa: E402

FLOOD = {"turns": [{"match": {"bodyContains": "FLOOD"}, "flood": {"count": 5000, "size": 20}},
                   {"text": "Hello.", "repeat": 100}]}
MODEL = {"id": "mock-model", "name": "Mock Model", "reasoning": False, "input": ["text"],
         "contextWindow": 200000, "maxTokens": 8192,
         "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}


def agents(pi_dir: Path) -> dict[str, list[str]]:
    """Each agent's command line, before `--mode rpc`: pi 1.6.0, rho, and rho in the seed
    protocol's cumulative shape (what xcsh's and omp's clients get)."""
    node = pi_dir / "node_modules" / ".bin" / "node"
    cli = pi_dir / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "cli.js"
    for path in (node, cli):
        if not path.exists():
            sys.exit(f"pi16_wire: {path} is missing (install pi 1.6.0 and node@22 into {pi_dir})")
    rho = str(REPO / "target" / "release" / "rho")
    return {"pi 1.6.0": [str(node), str(cli)], "rho": [rho],
            "rho, cumulative updates": [rho, "--rpc-message-update", "cumulative"]}


def run(command: list[str], name: str, mock: MockServer, root: Path, message: str) -> tuple[int, int]:
    """Sends one prompt; returns (bytes, lines) written from its response to agent_settled."""
    agent_dir, home, cwd = root / "agent", root / "home", root / "work"
    for d in (agent_dir, home, cwd):
        d.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"mock": {"baseUrl": mock.url, "api": "anthropic-messages", "apiKey": "k",
                                     "models": [MODEL]}}}
    (agent_dir / "models.json").write_text(json.dumps(models))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "PI_CODING_AGENT_DIR": str(agent_dir), "RHO_CODING_AGENT_DIR": str(agent_dir),
           "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
    proc = subprocess.Popen([*command, "--mode", "rpc", "--no-session", "--model", "mock/mock-model"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            cwd=cwd, env=env)
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps({"id": "p", "type": "prompt", "message": message}).encode() + b"\n")
    proc.stdin.flush()
    counting, size, lines = False, 0, 0
    deadline = time.monotonic() + 120
    for line in proc.stdout:
        frame = json.loads(line)
        if frame.get("type") == "response" and frame.get("id") == "p":
            counting = True
        if counting:
            size += len(line)
            lines += 1
        if frame.get("type") == "agent_settled":
            break
        if time.monotonic() > deadline:
            break
    proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    return size, lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-build", action="store_true")
    a = ap.parse_args()
    pi_dir = Path(os.environ.get("PI16_REF_DIR", Path.home() / ".cache" / "rho-compare" / "pi16"))
    if not a.skip_build:
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "rho-cli", "-p", "rho-mock-llm"],
                       cwd=REPO, check=True, stdout=sys.stderr)
    mock_bin = REPO / "target" / "release" / "rho-mock-llm"
    print("| agent | stream: stdout bytes (5,000 deltas, median) | lines | request: body bytes | tools offered |")
    print("| --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, command in agents(pi_dir).items():
            sizes, line_counts = [], []
            for i in range(a.runs):
                root = Path(tmp) / f"{name}-{i}"
                root.mkdir(parents=True)
                mock = MockServer(mock_bin, FLOOD, root)
                try:
                    size, lines = run(command, name, mock, root, "FLOOD please")
                finally:
                    mock.stop()
                sizes.append(size)
                line_counts.append(lines)
            root = Path(tmp) / f"{name}-request"
            root.mkdir()
            mock = MockServer(mock_bin, FLOOD, root)
            try:
                run(command, name, mock, root, "Say hello.")
                body = mock.requests()[0]["body"]
            finally:
                mock.stop()
            size = len(json.dumps(body, separators=(",", ":")).encode())
            tools = ", ".join(t["name"] for t in body.get("tools", []))
            print(f"| {name} | {int(statistics.median(sizes)):,} | {int(statistics.median(line_counts)):,} "
                  f"| {size:,} | {tools} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
