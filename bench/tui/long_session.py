#!/usr/bin/env python3
"""Opening a long session in the interactive mode: time to the editor, memory, and a reply after.

Writes a session of --messages messages (user / assistant pairs, each answer a few lines of
markdown with a code block, every tenth assistant message with a bash tool call and its result),
opens it with `rho --session <file>` on a 100x30 pseudo-terminal and reports, over --runs runs:
the time from spawn until the footer is drawn under the replayed history, the bytes written to
the terminal, the RSS once idle, and the wall and CPU time of one more streamed reply (so the
long history is shown not to slow the live path). The history goes to the terminal's own
scrollback, so scrolling it is the terminal's work, not rho's.

Usage: python3 bench/tui/long_session.py [--messages 10000] [--runs 3] [--no-build]
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the build, the mock, the pseudo-terminal)

ANSWER = (
    "Here is step {n}. The change keeps **the order** and adds a check:\n\n"
    "```rust\nfn step_{n}(x: u64) -> u64 {{\n    x.wrapping_mul({n})\n}}\n```\n\n"
    "- it runs in `O(1)`\n- it is tested\n"
)


def write_session(path, cwd, messages):
    lines = [{"type": "session", "version": 3, "id": "bench-long", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": str(cwd)}]
    parent = None
    ts = 1_767_225_600_000
    usage = {"input": 10, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 30,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

    def entry(message):
        nonlocal parent, ts
        ts += 1000
        eid = f"{len(lines):08x}"
        lines.append({"type": "message", "id": eid, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z", "message": message})
        parent = eid

    n = 0
    while len(lines) - 1 < messages:
        n += 1
        entry({"role": "user", "content": [{"type": "text", "text": f"Please do step {n} of the plan."}], "timestamp": ts})
        content = [{"type": "text", "text": ANSWER.format(n=n)}]
        tool = n % 10 == 0
        if tool:
            content.append({"type": "toolCall", "id": f"call{n}", "name": "bash", "arguments": {"command": f"echo step {n}"}})
        entry({"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "mock", "model": "mock-model",
               "usage": usage, "stopReason": "toolUse" if tool else "stop", "timestamp": ts})
        if tool:
            entry({"role": "toolResult", "toolCallId": f"call{n}", "toolName": "bash",
                   "content": [{"type": "text", "text": f"step {n}\n"}], "isError": False, "timestamp": ts})
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    return n


def one_run(messages):
    mock, url = bench.start_mock([{"flood": {"count": 2000, "size": 8}}])
    home, agent, work = bench.world(url)
    session = home / "long.jsonl"
    last = write_session(session, work, messages)
    env = bench.terminal_env(home, agent)
    try:
        t0 = time.monotonic()
        term = bench.Pty(["--model", "mock/mock-model", "--session", str(session)], env, work)
        marker = f"step {last} of the plan".encode()
        term.wait_for(lambda: marker in term.out and bench.FOOTER in term.out[term.out.rfind(marker):])
        opened = time.monotonic() - t0
        settle = time.monotonic() + 0.3
        while time.monotonic() < settle:
            term.pump(0.01)
        idle_rss = term.rss_mb()
        out_bytes = len(term.out)
        cpu0 = term.cpu()
        t1 = time.monotonic()
        before = session.stat().st_size
        os.write(term.fd, b"go\r")
        term.wait_for(lambda: '"role":"assistant"' in session.read_text()[before:])
        reply_wall = time.monotonic() - t1
        reply_cpu = term.cpu() - cpu0
        term.finish()
        return {"open_ms": opened * 1000, "history_mb_written": out_bytes / 1e6, "idle_rss_mb": idle_rss,
                "next_reply_wall_ms": reply_wall * 1000, "next_reply_cpu_ms": reply_cpu * 1000}
    finally:
        mock.terminate()
        mock.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        bench.build()
    runs = [one_run(args.messages) for _ in range(args.runs)]
    print(f"rho interactive mode opening a {args.messages:,}-message session, {args.runs} runs, 100x30 pty\n")
    bench.print_medians(runs)


if __name__ == "__main__":
    sys.exit(main())
