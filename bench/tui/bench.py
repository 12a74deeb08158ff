#!/usr/bin/env python3
"""Interactive mode's cost on the release binary, in a pseudo-terminal of 100x30.

For each of --runs fresh processes against rho-mock-llm:
- idle memory: resident set size once the first frame is drawn and start-up is over;
- idle wakeups: context switches a second of rho's threads over --idle-s seconds, from 2.5 s
  after the first frame (past the input reader's quick polls that follow a key);
- time to first frame: spawn to the first footer drawn (the line starting with the token
  counts), measured outside; rho's own count from the mode's start is reported too;
- a reply of --deltas text deltas of --size bytes (rho-mock-llm's `flood`, one long paragraph,
  the worst case for re-wrapping the live line): wall time from Enter to the reply being in the
  session file, CPU time of rho over that span (user+sys), the frames drawn, the work of the
  longest frame and the frames over 16 ms (rho's RHO_TUI_FRAME_STATS).
The terminal side answers the viewport's cursor-position queries (always row 1) and reads
everything rho writes; it does not emulate the screen.

Usage: python3 bench/tui/bench.py [--runs N] [--deltas N] [--size N] [--delay-ms N] [--idle-s S]
       [--no-build]
Needs Python 3 and cargo. Prints a markdown table (medians, with min-max).
"""

import argparse
import fcntl
import json
import os
import pty
import select
import signal
import statistics
import struct
import subprocess
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / os.environ.get("RHO_BENCH_PROFILE", "release")
RHO = TARGET / "rho"
MOCK = TARGET / "rho-mock-llm"
CURSOR_QUERY = b"\x1b[6n"
FOOTER = "↑".encode()
TIMEOUT = 60.0


def build():
    # The whole workspace, as README's set-up command builds it (the link order of start-up
    # functions matches that build's symbol names: see bench/rpc/bench.py).
    subprocess.run(["cargo", "build", "--release", "--locked"], cwd=ROOT, check=True)


def start_mock(turns):
    """rho-mock-llm serving `turns`; the process and its base URL."""
    script = Path(tempfile.mkstemp(suffix=".json")[1])
    script.write_text(json.dumps({"turns": turns}))
    mock = subprocess.Popen([str(MOCK), "--script", str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = mock.stdout.readline().strip()
    return mock, url


def terminal_env(home, agent, **extra):
    """The environment of an agent on the pseudo-terminal: nothing of the outer one but PATH."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TERM": "xterm-256color",
        "RHO_CODING_AGENT_DIR": str(agent),
    }
    env.update(extra)
    return env


def print_medians(runs):
    """A markdown table of each measure's median, least and greatest over `runs`."""
    print("| measure | median | min | max |")
    print("| --- | --- | --- | --- |")
    for key in runs[0]:
        values = [r[key] for r in runs]
        print(f"| {key} | {statistics.median(values):.1f} | {min(values):.1f} | {max(values):.1f} |")


def world(url):
    home = Path(tempfile.mkdtemp(prefix="rho-tui-bench-"))
    agent = home / "agent"
    work = home / "work"
    agent.mkdir()
    work.mkdir()
    models = {
        "providers": {
            "mock": {
                "baseUrl": url,
                "api": "anthropic-messages",
                "apiKey": "bench-key",
                "models": [{"id": "mock-model", "name": "Mock", "contextWindow": 200000, "maxTokens": 8192}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))
    return home, agent, work


class Pty:
    """rho (or `program`) on a pseudo-terminal; reads its output, answers cursor queries."""

    def __init__(self, args, env, cwd, program=None):
        program = str(program or RHO)
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(cwd)
            os.execve(program, [program, *args], env)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.pid, self.fd = pid, fd
        self.out = bytearray()
        self.status = None

    def pump(self, timeout):
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return
        try:
            chunk = os.read(self.fd, 1 << 16)
        except OSError:
            return
        # A query split across reads is rare enough here; the viewport would time out on it.
        for _ in range(chunk.count(CURSOR_QUERY)):
            os.write(self.fd, b"\x1b[1;1R")
        self.out += chunk

    def wait_for(self, check):
        deadline = time.monotonic() + TIMEOUT
        while not check():
            if time.monotonic() > deadline:
                raise TimeoutError("rho did not get there; last output: %r" % bytes(self.out[-400:]))
            self.pump(0.01)

    def rss_mb(self):
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def context_switches(self):
        total = 0
        for status in Path(f"/proc/{self.pid}/task").glob("*/status"):
            for line in status.read_text().splitlines():
                if "ctxt_switches" in line:
                    total += int(line.split()[1])
        return total

    def idle(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.pump(0.05)

    def cpu(self):
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def finish(self):
        os.write(self.fd, b"\x04")
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            self.pump(0.01)
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.status = status
                return
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise TimeoutError("rho did not quit")


def one_run(deltas, size, delay_ms, idle_s):
    turn = {"flood": {"count": deltas, "size": size}}
    if delay_ms > 0:
        turn["chunkDelayMs"] = delay_ms
    mock, url = start_mock([turn])
    home, agent, work = world(url)
    stats_file = home / "frames.json"
    env = terminal_env(home, agent, RHO_TUI_FRAME_STATS=str(stats_file))
    try:
        t0 = time.monotonic()
        term = Pty(["--model", "mock/mock-model"], env, work)
        term.wait_for(lambda: FOOTER in term.out)
        first_frame = time.monotonic() - t0
        # Idle a moment so start-up work is over before the reply is measured.
        settle = time.monotonic() + 0.3
        while time.monotonic() < settle:
            term.pump(0.01)
        idle_rss = term.rss_mb()
        wakeups = None
        if idle_s > 0:
            term.idle(2.5)
            switches = term.context_switches()
            term.idle(idle_s)
            wakeups = (term.context_switches() - switches) / idle_s
        cpu0 = term.cpu()
        t1 = time.monotonic()
        os.write(term.fd, b"go\r")
        sessions = agent / "sessions"

        def replied():
            for f in sessions.rglob("*.jsonl"):
                if '"role":"assistant"' in f.read_text():
                    return True
            return False

        term.wait_for(replied)
        # The last frames (the reply committed to the history) follow the message's end.
        settle = time.monotonic() + 0.2
        while time.monotonic() < settle:
            term.pump(0.01)
        reply_wall = time.monotonic() - t1 - 0.2
        reply_cpu = term.cpu() - cpu0
        term.finish()
        frames = json.loads(stats_file.read_text())
        return {
            "first_frame_ms": first_frame * 1000,
            "first_frame_internal_ms": frames["firstFrameMs"],
            "idle_rss_mb": idle_rss,
            **({"idle_wakeups_per_s": wakeups} if wakeups is not None else {}),
            "reply_wall_ms": reply_wall * 1000,
            "reply_cpu_ms": reply_cpu * 1000,
            "frames": frames["frames"],
            "max_frame_ms": frames["maxFrameMs"],
            "frames_over_16ms": frames["framesOver16ms"],
            "bytes_out": len(term.out),
        }
    finally:
        mock.terminate()
        mock.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--deltas", type=int, default=5000)
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--delay-ms", type=int, default=0, help="pause between two deltas (0: as fast as possible)")
    parser.add_argument("--idle-s", type=float, default=3, help="seconds of idle wakeups measured (0: none)")
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        build()
    runs = [one_run(args.deltas, args.size, args.delay_ms, args.idle_s) for _ in range(args.runs)]
    pacing = f", {args.delay_ms} ms apart" if args.delay_ms else ", unpaced"
    print(f"rho interactive mode, {args.runs} runs, a reply of {args.deltas} deltas x {args.size} bytes{pacing}, 100x30 pty\n")
    print_medians(runs)


if __name__ == "__main__":
    main()
