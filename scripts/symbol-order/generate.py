#!/usr/bin/env python3
"""Writes crates/rho-coding-agent/symbol-order.txt: the functions rho runs at start-up.

The release link places these functions side by side (build.rs passes the file to the linker).
The kernel maps a binary's code 64 KB at a time around each page touched, so start-up code
scattered over a 19 MB text section made 6 MB of it resident; packed together it is about 1 MB.

Needs valgrind (callgrind lists every function run, with its symbol name as the linker sees it)
and a release build of the current tree:

    cargo build --release -p rho-coding-agent
    python3 scripts/symbol-order/generate.py [target/release/rho]

Rerun it when start-up changes a lot; names that no longer exist are ignored by the linker, so a
stale file costs memory, never a failed build.
"""

import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "crates", "rho-coding-agent", "symbol-order.txt")

# What an embedding host does first (start rho, wait for ready, ask for the state and the
# models, close stdin), then a person opening the interactive UI and quitting it (stdin None).
SCENARIOS = [
    (["--mode", "rpc", "--no-session"], b'{"id":"1","type":"get_state"}\n'),
    (["--mode", "rpc", "--no-session"], b'{"id":"1","type":"get_available_models"}\n{"id":"2","type":"get_commands"}\n'),
    (["--no-session"], None),
]
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


def functions_run(rho, args, stdin):
    """The symbols callgrind saw run, in the order it first names them."""
    with tempfile.TemporaryDirectory() as home:
        out = os.path.join(home, "callgrind.out")
        env = dict(os.environ, HOME=home, RHO_CODING_AGENT_DIR=home, TERM="xterm-256color")
        argv = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", rho, *args]
        if stdin is None:
            on_terminal(argv, env, home)
        else:
            subprocess.run(
                argv, input=stdin, env=env, cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
            )
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
    for args, stdin in SCENARIOS:
        for name in functions_run(rho, args, stdin):
            if name in text and name not in placed:
                placed.add(name)
                order.append(name)
    with open(OUT, "w") as f:
        f.write("".join(n + "\n" for n in order))
    print(f"{len(order)} functions -> {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
