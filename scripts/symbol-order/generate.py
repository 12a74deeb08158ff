#!/usr/bin/env python3
"""Writes crates/rho-cli/symbol-order.txt: the functions rho runs to start and answer.

The release link places these functions side by side (build.rs passes the file to the linker).
The kernel maps a binary's code 64 KB at a time around each page touched, so start-up code
scattered over a 19 MB text section made 6 MB of it resident; packed together it is about 1 MB.

Needs valgrind (callgrind lists every function run, with its symbol name as the linker sees it)
and a release build of the whole workspace (rho-mock-llm serves the streamed reply; symbol names
depend on the features the build unifies, so build it as README does):

    cargo build --release --locked
    python3 scripts/symbol-order/generate.py [target/release/rho]

Rerun it when start-up changes a lot; names that no longer exist are ignored by the linker, so a
stale file costs memory, never a failed build.
"""

import json
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "crates", "rho-cli", "symbol-order.txt")

# What an embedding host does first: start rho, wait for ready, ask for the state and the
# models, close stdin; the same with a model configured (models.json, as hosts and
# bench/rpc/bench.py have it) and one streamed reply; then a person opening the interactive UI
# and quitting it (stdin None).
SCENARIOS = [
    (["--mode", "rpc", "--no-session"], b'{"id":"1","type":"get_state"}\n', False),
    (["--mode", "rpc", "--no-session"], b'{"id":"1","type":"get_available_models"}\n{"id":"2","type":"get_commands"}\n', False),
    (["--mode", "rpc", "--model", "mock/mock-model"], b'{"id":"1","type":"get_state"}\n{"id":"2","type":"prompt","message":"hi"}\n', True),
    (["--no-session"], None, False),
]
MOCK_SCRIPT = {"turns": [{"flood": {"count": 200, "size": 20}}]}
CURSOR_QUERY = b"\x1b[6n"


def on_terminal(argv, env, cwd):
    """Runs `argv` on a pseudo-terminal until its output has been quiet for 3 s, then Ctrl+D."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execvpe(argv[0], argv, env)
    quiet_since, quit_sent = time.monotonic(), False
    while True:
        ready, _, _ = select.select([fd], [], [], 0.1)
        chunk = b""
        if ready:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
        for _ in range(chunk.count(CURSOR_QUERY)):
            os.write(fd, b"\x1b[1;1R")
        if chunk:
            quiet_since = time.monotonic()
        elif not quit_sent and time.monotonic() - quiet_since > 3:
            os.write(fd, b"\x04")
            quit_sent = True
    os.waitpid(pid, 0)


def with_mock(home, rho):
    """Starts rho-mock-llm (beside `rho`) and writes a models.json naming it; returns the mock."""
    script = os.path.join(home, "mock.json")
    with open(script, "w") as f:
        json.dump(MOCK_SCRIPT, f)
    mock = subprocess.Popen(
        [os.path.join(os.path.dirname(rho), "rho-mock-llm"), "--script", script],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    url = mock.stdout.readline().strip()
    model = {"id": "mock-model", "name": "Mock", "contextWindow": 200000, "maxTokens": 8192}
    models = {"providers": {"mock": {"baseUrl": url, "api": "anthropic-messages", "apiKey": "k", "models": [model]}}}
    with open(os.path.join(home, "models.json"), "w") as f:
        json.dump(models, f)
    return mock


def run_rpc(argv, stdin, env, cwd, until_agent_end):
    """Feeds `stdin` to rho in RPC mode; with a prompt, waits for its agent_end before closing it."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    proc.stdin.write(stdin)
    proc.stdin.flush()
    if until_agent_end:
        for line in proc.stdout:
            if b'"type":"agent_end"' in line:
                break
    proc.stdin.close()
    proc.stdout.read()
    proc.wait()


def functions_run(rho, args, stdin, mock):
    """The symbols callgrind saw run, in the order it first names them."""
    with tempfile.TemporaryDirectory() as home:
        out = os.path.join(home, "callgrind.out")
        env = dict(os.environ, HOME=home, RHO_CODING_AGENT_DIR=home, TERM="xterm-256color")
        argv = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", rho, *args]
        server = with_mock(home, rho) if mock else None
        try:
            if stdin is None:
                on_terminal(argv, env, home)
            else:
                run_rpc(argv, stdin, env, home, until_agent_end=mock)
        finally:
            if server:
                server.terminate()
                server.wait()
        seen, names = set(), []
        with open(out, errors="replace") as f:
            for line in f:
                m = re.match(r"^c?fn=\((\d+)\) (.+)$", line.rstrip("\n"))
                if m and m.group(1) not in seen:
                    seen.add(m.group(1))
                    names.append(m.group(2))
        return names


def text_symbols(rho):
    out = subprocess.run(["nm", "--defined-only", rho], capture_output=True, text=True, check=True).stdout
    return {p[2] for p in (l.split(" ") for l in out.splitlines()) if len(p) == 3 and p[1] in "tT"}


def main():
    rho = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "release", "rho")
    text = text_symbols(rho)
    order, placed = [], set()
    for args, stdin, mock in SCENARIOS:
        for name in functions_run(rho, args, stdin, mock):
            if name in text and name not in placed:
                placed.add(name)
                order.append(name)
    with open(OUT, "w") as f:
        f.write("".join(n + "\n" for n in order))
    print(f"{len(order)} functions -> {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
