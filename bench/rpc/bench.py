#!/usr/bin/env python3
"""rho's own speed and memory figures, measured on the release binary.

What it measures (medians over --runs runs, peak RSS from /proc/<pid>/status VmHWM):
  - `rho --version` and `rho --help`: wall time from spawn to exit;
  - RPC start-up: spawn to the `get_state` response (the first command a host sends);
  - idle peak RSS after that response;
  - SIGTERM to an idle process: time until it has exited;
  - a 5,000-delta streamed reply (5,000 x 20-char deltas from rho-mock-llm): first
    `message_update` to `agent_end`, peak RSS, stdout bytes, and deltas per second through the
    RPC writer (with a reader that keeps up, and with a slow reader, where deltas merge).

Usage: python3 bench/rpc/bench.py [--runs N] [--no-build] [--extension FILE]
Needs only Python 3 and cargo. Prints a markdown table. With --extension, every rho is started
with `-e FILE` (its host from RHO_EXTENSION_HOST_DIR, or installed into a scratch agent dir on
first use): the same figures with an extension loaded.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release"
RHO = TARGET / "rho"
MOCK = TARGET / "rho-mock-llm"


def build():
    # The whole workspace, as README's set-up command builds it: the release link orders
    # start-up functions by name (crates/rho-cli/symbol-order.txt), and names depend on
    # the features the build unifies.
    subprocess.run(["cargo", "build", "--release", "--locked"], cwd=ROOT, check=True)


def symbol_order_found():
    """How many of symbol-order.txt's functions the binary has: a stale list shows here."""
    wanted = (ROOT / "crates" / "rho-cli" / "symbol-order.txt").read_text().split()
    try:
        out = subprocess.run(["nm", "--defined-only", str(RHO)], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no nm)"
    have = {line.rsplit(" ", 1)[-1] for line in out.splitlines()}
    return f"{sum(name in have for name in wanted)} of {len(wanted)}"


def peak_rss_kb(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class Mock:
    """rho-mock-llm serving one script; its base URL from its first stdout line."""

    def __init__(self, script):
        self.dir = tempfile.TemporaryDirectory()
        path = Path(self.dir.name) / "script.json"
        path.write_text(json.dumps(script))
        self.proc = subprocess.Popen(
            [str(MOCK), "--script", str(path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        first = self.proc.stdout.readline()
        self.url = first.strip().split()[-1]

    def close(self):
        self.proc.kill()
        self.proc.wait()
        self.dir.cleanup()


def agent_env(mock_url):
    home = tempfile.mkdtemp(prefix="rho-bench-")
    agent = Path(home) / "agent"
    agent.mkdir()
    models = {
        "providers": {
            "mock": {
                "baseUrl": mock_url,
                "api": "anthropic-messages",
                "apiKey": "bench-key",
                "models": [{"id": "mock-model", "name": "Mock", "contextWindow": 200000, "maxTokens": 8192}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))
    work = Path(home) / "work"
    work.mkdir()
    env = dict(os.environ, RHO_CODING_AGENT_DIR=str(agent), HOME=home)
    return env, work


def time_command(args, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([str(RHO), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


EXTENSION_ARGS = []


def rho_rpc(*extra):
    return [str(RHO), "--mode", "rpc", "--no-session", "--model", "mock/mock-model", *EXTENSION_ARGS, *extra]


def rpc_startup(runs, mock_url):
    times, rss = [], []
    for _ in range(runs):
        env, work = agent_env(mock_url)
        start = time.perf_counter()
        proc = subprocess.Popen(
            rho_rpc(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=work,
            env=env,
        )
        proc.stdin.write(b'{"id":"s","type":"get_state"}\n')
        proc.stdin.flush()
        for line in proc.stdout:
            if b'"id":"s"' in line:
                break
        times.append(time.perf_counter() - start)
        time.sleep(0.2)
        rss.append(peak_rss_kb(proc.pid))
        proc.stdin.close()
        proc.wait()
    return statistics.median(times), statistics.median(rss)


def sigterm_exit(runs, mock_url):
    """Spawn, wait for the `get_state` answer, SIGTERM the idle process: time until it exited."""
    import signal

    times = []
    for _ in range(runs):
        env, work = agent_env(mock_url)
        proc = subprocess.Popen(
            rho_rpc(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=work,
            env=env,
        )
        proc.stdin.write(b'{"id":"s","type":"get_state"}\n')
        proc.stdin.flush()
        for line in proc.stdout:
            if b'"id":"s"' in line:
                break
        start = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        proc.wait()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def stream(mock_url, slow_reader):
    env, work = agent_env(mock_url)
    proc = subprocess.Popen(
        rho_rpc(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=work,
        env=env,
        bufsize=0,
    )
    peak = [0]
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], peak_rss_kb(proc.pid))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    # The reply is measured once rho has started (its extensions loaded and settled, with
    # --extension): start-up is measured on its own above.
    proc.stdin.write(b'{"id":"s","type":"get_state"}\n')
    proc.stdin.flush()
    while b'"id":"s"' not in proc.stdout.readline():
        pass
    time.sleep(0.5)
    proc.stdin.write(b'{"type":"prompt","message":"flood"}\n')
    proc.stdin.flush()
    first = None
    updates = 0
    delta_chars = 0
    out_bytes = 0
    reader = proc.stdout
    buf = b""
    while True:
        chunk = reader.read(65536)
        if not chunk:
            break
        out_bytes += len(chunk)
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            if line.startswith(b'{"type":"message_update"'):
                if first is None:
                    first = time.perf_counter()
                updates += 1
                frame = json.loads(line)
                delta_chars += len(frame["assistantMessageEvent"].get("delta", ""))
            elif line.startswith(b'{"type":"agent_end"'):
                end = time.perf_counter()
                done.set()
                proc.stdin.close()
                proc.wait()
                watcher.join()
                return {
                    "seconds": end - first,
                    "peak_kb": max(peak[0], peak_rss_kb(proc.pid)),
                    "stdout_bytes": out_bytes + len(buf),
                    "frames": updates,
                    "delta_chars": delta_chars,
                }
        if slow_reader:
            time.sleep(0.002)
    raise SystemExit("rho ended without agent_end")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--extension", help="start every rho with -e FILE")
    args = parser.parse_args()
    if args.extension:
        EXTENSION_ARGS.extend(["-e", str(Path(args.extension).resolve())])
    if not args.no_build:
        build()

    version = time_command(["--version"], args.runs)
    help_ = time_command(["--help"], args.runs)
    idle_mock = Mock({"turns": []})
    startup, idle_rss = rpc_startup(args.runs, idle_mock.url)
    sigterm = sigterm_exit(args.runs, idle_mock.url)
    idle_mock.close()

    flood = {"turns": [{"flood": {"count": 5000, "size": 20}, "repeat": 1000}]}
    mock = Mock(flood)
    fast = stream(mock.url, slow_reader=False)
    slow = stream(mock.url, slow_reader=True)
    mock.close()

    rows = [
        ("`rho --version`", f"{version * 1000:.1f} ms"),
        ("`rho --help`", f"{help_ * 1000:.1f} ms"),
        ("RPC spawn to `get_state` response", f"{startup * 1000:.1f} ms"),
        ("idle peak RSS", f"{idle_rss / 1024:.1f} MB"),
        ("start-up functions found for the link order (symbol-order.txt)", symbol_order_found()),
        ("SIGTERM when idle to exit", f"{sigterm * 1000:.1f} ms"),
    ]
    for name, run in (("reader keeps up", fast), ("slow reader", slow)):
        rate = 5000 / run["seconds"]
        rows += [
            (f"5,000-delta reply ({name}): first update to agent_end", f"{run['seconds'] * 1000:.0f} ms"),
            (f"5,000-delta reply ({name}): peak RSS", f"{run['peak_kb'] / 1024:.1f} MB"),
            (f"5,000-delta reply ({name}): stdout", f"{run['stdout_bytes'] / 1e6:.1f} MB in {run['frames']} message_update frames"),
            (f"5,000-delta reply ({name}): deltas/s end to end", f"{rate:,.0f}"),
        ]
        if run["delta_chars"] != 5000 * 20:
            raise SystemExit(f"lost text: {run['delta_chars']} of {5000 * 20} characters arrived")
    print(f"| measure (median of {args.runs} runs where repeated) | rho |")
    print("| --- | --- |")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    sys.exit(main())
