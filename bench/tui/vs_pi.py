#!/usr/bin/env python3
"""rho's interactive mode against pi 0.73.1's, side by side, on the same streamed reply.

Both run on a 100x30 pseudo-terminal against rho-mock-llm (anthropic-messages), one after the
other, --runs times each. Per run: the time from spawn until the footer shows the model, the
RSS once idle, and the wall and CPU time (user + system, the agent's own process) from sending
"go" until the reply is in the session file. The reply is --deltas deltas of --size bytes.

pi is taken from $PI_REF_DIR (an `npm install @mariozechner/pi-coding-agent@0.73.1` folder;
bench/compare installs one), never from the repo.

Usage: PI_REF_DIR=/path/to/pi python3 bench/tui/vs_pi.py [--runs 5] [--deltas 5000] [--no-build]
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the build, the mock, the pseudo-terminal)


def one_run(program, deltas, size):
    mock, url = bench.start_mock([{"flood": {"count": deltas, "size": size}}])
    home, agent, work = bench.world(url)
    env = bench.terminal_env(home, agent, PI_CODING_AGENT_DIR=str(agent), PI_SKIP_VERSION_CHECK="1")
    try:
        t0 = time.monotonic()
        term = bench.Pty(["--model", "mock/mock-model"], env, work, program)
        term.wait_for(lambda: b"mock-model" in term.out)
        first_frame = time.monotonic() - t0
        settle = time.monotonic() + 1.0
        while time.monotonic() < settle:
            term.pump(0.01)
        idle_rss = term.rss_mb()
        cpu0 = term.cpu()
        t1 = time.monotonic()
        os.write(term.fd, b"go\r")

        def replied():
            return any('"role":"assistant"' in f.read_text() for f in (agent / "sessions").rglob("*.jsonl"))

        term.wait_for(replied)
        reply_wall = time.monotonic() - t1
        reply_cpu = term.cpu() - cpu0
        os.kill(term.pid, bench.signal.SIGKILL)
        os.waitpid(term.pid, 0)
        return {
            "first_frame_ms": first_frame * 1000,
            "idle_rss_mb": idle_rss,
            "reply_wall_ms": reply_wall * 1000,
            "reply_cpu_ms": reply_cpu * 1000,
        }
    finally:
        mock.terminate()
        mock.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--deltas", type=int, default=5000)
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    pi_dir = os.environ.get("PI_REF_DIR")
    if not pi_dir:
        raise SystemExit("set PI_REF_DIR to a folder where @mariozechner/pi-coding-agent@0.73.1 is installed")
    pi = Path(pi_dir) / "node_modules" / ".bin" / "pi"
    if not args.no_build:
        bench.build()
    results = {}
    for name, program in (("rho", bench.RHO), ("pi 0.73.1", pi)):
        results[name] = [one_run(program, args.deltas, args.size) for _ in range(args.runs)]
    print(f"interactive mode, a reply of {args.deltas} deltas x {args.size} bytes, 100x30 pty, median of {args.runs} runs\n")
    print("| measure | rho | pi 0.73.1 |")
    print("| --- | --- | --- |")
    for key in results["rho"][0]:
        cells = [f"{statistics.median(r[key] for r in results[name]):.1f}" for name in results]
        print(f"| {key} | {' | '.join(cells)} |")


if __name__ == "__main__":
    sys.exit(main())
