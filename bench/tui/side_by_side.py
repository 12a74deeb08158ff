#!/usr/bin/env python3
"""rho and pi 0.73.1 in tmux, the same scripted session, the screens captured to compare by eye.

For each size (120x40 and 60x20) both agents run in a detached tmux session against rho-mock-llm
(anthropic-messages) and go through the same steps: a long markdown reply (heading, table, code,
a long paragraph), a `bash` tool call with blank lines in its output, then a resize to the other
width. After each step the whole pane, scrollback included, is written to
bench/tui/captures/<agent>-<cols>x<rows>-<step>.txt, where a person can set the two side by side
(`diff -y`, or two editor panes).

pi is taken from $PI_REF_DIR (an `npm install @mariozechner/pi-coding-agent@0.73.1` folder); without
it only rho's captures are written. Needs tmux.

Usage: [PI_REF_DIR=/path/to/pi] python3 bench/tui/side_by_side.py [--no-build]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the build and the mock)

CAPTURES = Path(__file__).resolve().parent / "captures"

REPLY = (
    "## What changed\n\n"
    "The parser now keeps **the order** of the keys and checks `depth` before it recurses.\n\n"
    "| File | Change |\n|---|---|\n"
    "| src/parse.rs | keeps the order of keys in objects and arrays |\n"
    "| src/limits.rs | a depth limit of 128 |\n\n"
    "```rust\nfn parse(input: &str, depth: usize) -> Result<Value> {\n    if depth > 128 {\n"
    "        return Err(Error::TooDeep);\n    }\n    todo!()\n}\n```\n\n"
    + " ".join(f"This sentence number {i} makes the paragraph long enough to wrap many times." for i in range(12))
)


def turns():
    usage = {"input": 100, "output": 50}
    return [
        {"text": REPLY, "chunkSize": 24, "chunkDelayMs": 4, "usage": usage},
        {"toolCalls": [{"name": "bash", "arguments": {"command": "printf 'top\\n\\n\\nbottom\\n'"}}], "usage": usage},
        {"text": "The output has two blank lines in it.", "usage": usage},
    ]


def tmux(*args, check=True):
    return subprocess.run(["tmux", *args], check=check, capture_output=True, text=True).stdout


def capture(name, agent, size, step):
    text = tmux("capture-pane", "-p", "-J", "-S", "-", "-t", name)
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    (CAPTURES / f"{agent}-{size}-{step}.txt").write_text("\n".join(lines) + "\n")
    return "\n".join(lines)


def wait_for(name, needle, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        screen = tmux("capture-pane", "-p", "-t", name)
        if needle in screen:
            time.sleep(0.5)
            return
        time.sleep(0.1)
    raise SystemExit(f"{name}: {needle!r} never appeared")


def run(agent, program, cols, rows, other_cols):
    mock, url = bench.start_mock(turns())
    home, agent_dir, work = bench.world(url)
    env = bench.terminal_env(home, agent_dir, PI_CODING_AGENT_DIR=str(agent_dir), PI_SKIP_VERSION_CHECK="1")
    name = f"sbs-{agent}-{cols}x{rows}-{os.getpid()}"
    size = f"{cols}x{rows}"
    command = " ".join([*(f"{k}={json.dumps(v)}" for k, v in env.items()), "exec", *program, "--model", "mock/mock-model"])
    try:
        tmux("new-session", "-d", "-s", name, "-x", str(cols), "-y", str(rows), "-c", str(work), command)
        wait_for(name, "mock-model")
        tmux("send-keys", "-t", name, "show me the change", "Enter")
        wait_for(name, "makes the paragraph long enough to wrap many times.")
        wait_for(name, "number 11 makes")
        capture(name, agent, size, "1-reply")
        tmux("send-keys", "-t", name, "run it", "Enter")
        wait_for(name, "two blank lines in it")
        capture(name, agent, size, "2-tool")
        tmux("resize-window", "-t", name, "-x", str(other_cols), "-y", str(rows))
        time.sleep(1.5)
        capture(name, agent, size, f"3-resized-to-{other_cols}")
    finally:
        tmux("kill-session", "-t", name, check=False)
        mock.terminate()
        mock.wait()
        shutil.rmtree(home, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is needed")
    if not args.no_build:
        bench.build()
    CAPTURES.mkdir(exist_ok=True)
    agents = [("rho", [str(bench.RHO)])]
    pi_dir = os.environ.get("PI_REF_DIR")
    if pi_dir:
        cli = Path(pi_dir) / "node_modules/@mariozechner/pi-coding-agent/dist/cli.js"
        agents.append(("pi", ["node", str(cli)]))
    for cols, rows, other in [(120, 40, 60), (60, 20, 120)]:
        for agent, program in agents:
            run(agent, program, cols, rows, other)
            print(f"{agent} {cols}x{rows}: captured")
    print(f"captures in {CAPTURES}")


if __name__ == "__main__":
    main()
