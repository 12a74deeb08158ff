#!/usr/bin/env python3
"""The abort race, many times over: a `prompt` and an `abort` written in one write.

Each round writes both lines at once and reads until the abort's answer. A round passes when
the run ended aborted (its `agent_end` carries an aborted reply) and the abort was answered
right after that `agent_end`. The model's replies are slow (about 20 s), so a run the abort
missed cannot end in time and the round fails by timeout. Then the same with
`abort_and_prompt`: the first run must end aborted and the second one must answer.

Usage: python3 bench/rpc/abort_race.py [--rounds 1000] [--no-build]
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402


def slow_turns(n):
    return [{"text": "word " * 200, "chunkSize": 1, "chunkDelayMs": 20} for _ in range(n)]


class Rho:
    def __init__(self, mock_url):
        env, work = bench.agent_env(mock_url)
        self.proc = bench.subprocess.Popen(
            [str(bench.RHO), "--mode", "rpc", "--no-session", "--model", "mock/mock-model"],
            stdin=bench.subprocess.PIPE,
            stdout=bench.subprocess.PIPE,
            stderr=bench.subprocess.DEVNULL,
            cwd=work,
            env=env,
        )

    def write(self, *frames):
        self.proc.stdin.write(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
        self.proc.stdin.flush()

    def until(self, stop, timeout=10):
        frames = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            frame = json.loads(line)
            frames.append(frame)
            if stop(frame):
                return frames
        return None

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def abort_rounds(rounds):
    mock = bench.Mock({"turns": slow_turns(rounds)})
    rho = Rho(mock.url)
    rho.until(lambda f: f.get("type") == "available_commands_update")
    passed = 0
    for i in range(rounds):
        rho.write({"id": f"p{i}", "type": "prompt", "message": "go"}, {"id": f"a{i}", "type": "abort"})
        frames = rho.until(lambda f, i=i: f.get("id") == f"a{i}")
        if frames is None:
            break
        ends = [f for f in frames if f.get("type") == "agent_end"]
        if ends and ends[-1]["messages"][-1].get("stopReason") == "aborted" and frames[-2].get("type") == "agent_end":
            passed += 1
    rho.close()
    mock.close()
    return passed


def abort_and_prompt_rounds(rounds):
    turns = []
    for i in range(rounds):
        turns.append({"text": "Answer.", "match": {"bodyContains": f"new-{i}."}})
        turns.append({**slow_turns(1)[0], "match": {"bodyContains": f"old-{i}."}})
    mock = bench.Mock({"turns": turns})
    rho = Rho(mock.url)
    rho.until(lambda f: f.get("type") == "available_commands_update")
    passed = 0
    for i in range(rounds):
        rho.write({"id": f"n{i}", "type": "new_session"})
        if rho.until(lambda f, i=i: f.get("id") == f"n{i}") is None:
            break
        rho.write(
            {"id": f"p{i}", "type": "prompt", "message": f"old-{i}."},
            {"id": f"ap{i}", "type": "abort_and_prompt", "message": f"new-{i}."},
        )
        first = rho.until(lambda f: f.get("type") == "agent_end")
        second = first and rho.until(lambda f: f.get("type") == "agent_end")
        if not second:
            break
        if first[-1]["messages"][-1].get("stopReason") == "aborted" and second[-1]["messages"][-1].get("stopReason") == "stop":
            passed += 1
    rho.close()
    mock.close()
    return passed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        bench.build()
    started = time.perf_counter()
    aborts = abort_rounds(args.rounds)
    replaced = abort_and_prompt_rounds(args.rounds)
    print(f"prompt + abort in one write: {aborts} of {args.rounds} aborted and answered after agent_end")
    print(f"prompt + abort_and_prompt in one write: {replaced} of {args.rounds} replaced")
    print(f"({time.perf_counter() - started:.1f} s)")
    sys.exit(0 if aborts == replaced == args.rounds else 1)


if __name__ == "__main__":
    main()
