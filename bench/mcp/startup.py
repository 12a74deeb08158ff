#!/usr/bin/env python3
"""What MCP servers cost `rho --mode rpc` at start-up, on the release binary.

For each case (no MCP config, and 3 of rho-mcp's fixture servers in the project's .mcp.json),
over --runs fresh processes: spawn to the `ready` frame, spawn to the answer of a `get_state`
written at spawn, and (with servers) spawn to the `available_commands_update` that lists the
last server's prompt, i.e. every server ready and its tools offered. Medians, plus min and max.

Usage: python3 bench/mcp/startup.py [--runs N] [--no-build]
Needs Python 3 and cargo. Prints a markdown table.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release"
RHO = TARGET / "rho"
FIXTURE = TARGET / "rho-mcp-fixture-server"
SERVERS = ["s0", "s1", "s2"]


def build():
    # The whole workspace, as README's set-up command builds it (the link order of start-up
    # functions matches that build's symbol names: see bench/rpc/bench.py).
    subprocess.run(["cargo", "build", "--release", "--locked"], cwd=ROOT, check=True)


def world(servers):
    home = Path(tempfile.mkdtemp(prefix="rho-mcp-bench-"))
    agent = home / "agent"
    agent.mkdir()
    models = {
        "providers": {
            "mock": {
                "baseUrl": "http://127.0.0.1:9",
                "api": "anthropic-messages",
                "apiKey": "bench-key",
                "models": [{"id": "mock-model", "name": "Mock", "contextWindow": 200000, "maxTokens": 8192}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))
    work = home / "work"
    work.mkdir()
    if servers:
        config = {"mcpServers": {name: {"command": str(FIXTURE)} for name in servers}}
        (work / ".mcp.json").write_text(json.dumps(config))
    return dict(os.environ, RHO_CODING_AGENT_DIR=str(agent), HOME=str(home)), work, home


def one_run(servers):
    env, work, home = world(servers)
    start = time.perf_counter()
    proc = subprocess.Popen(
        # The project's .mcp.json runs only in a trusted project.
        [str(RHO), "--mode", "rpc", "--no-session", "--model", "mock/mock-model", "--trust-project"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=work,
        env=env,
    )
    proc.stdin.write(b'{"id":"s","type":"get_state"}\n')
    proc.stdin.flush()
    ready = state = all_ready = None
    waiting = {f"mcp__{name}__greet" for name in servers}
    for line in proc.stdout:
        now = time.perf_counter() - start
        frame = json.loads(line)
        if frame.get("type") == "ready":
            ready = now
        elif frame.get("id") == "s":
            state = now
        elif frame.get("type") == "available_commands_update":
            names = {c["name"] for c in frame["commands"]}
            if waiting and waiting <= names:
                all_ready = now
        if ready is not None and state is not None and (not servers or all_ready is not None):
            break
    proc.stdin.close()
    proc.wait(timeout=10)
    shutil.rmtree(home, ignore_errors=True)
    return ready, state, all_ready


def summary(values):
    values = [v * 1000 for v in values]
    return f"{statistics.median(values):.1f} ({min(values):.1f}–{max(values):.1f})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        build()
    print("| case | spawn → ready (ms) | spawn → get_state (ms) | spawn → all servers ready (ms) |")
    print("|---|---|---|---|")
    cases = [("no MCP config", []), ("3 fixture servers", SERVERS)]
    # Interleaved, so that load from elsewhere weighs on both cases alike.
    results = {name: [] for name, _ in cases}
    for _ in range(args.runs):
        for name, servers in cases:
            results[name].append(one_run(servers))
    for name, servers in cases:
        runs = results[name]
        ready = summary([r[0] for r in runs])
        state = summary([r[1] for r in runs])
        all_ready = summary([r[2] for r in runs]) if servers else "–"
        print(f"| {name} | {ready} | {state} | {all_ready} |")


if __name__ == "__main__":
    main()
