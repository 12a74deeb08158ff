#!/usr/bin/env python3
"""rho's peak memory on large inputs, each against rho-mock-llm in RPC mode:

- a session file of --session-mb MB (messages of 50 KB) opened, then one prompt answered;
- a prompt of --prompt-mb MB answered;
- a reply of --line-mb MB that arrives as one SSE event (one delta);
- a prompt of --prompt-mb MB in ACP mode (`session/prompt`);
- a reply of --blocked-mb MB (1 MB deltas) to an RPC host that reads nothing until the reply
  has had time to arrive;
- an `edit` of one word in a file of --edit-mb MB that is one line, and in one of many lines.

Each row gives rho's peak RSS (/proc/<pid>/status VmHWM) and that peak over the input's size.

Usage: python3 bench/rpc/large_inputs.py [--session-mb 100] [--prompt-mb 50] [--line-mb 50]
       [--blocked-mb 100] [--edit-mb 20] [--only edit] [--no-build]
"""

import argparse
import json
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the release build, the mock and the agent directory)

MESSAGE_BYTES = 50_000


def write_session(path: Path, cwd: Path, size_mb: int) -> None:
    """A session of user/assistant pairs of 50 KB messages, `size_mb` MB in all."""
    count = size_mb * 1_000_000 // MESSAGE_BYTES
    text = "x" * (MESSAGE_BYTES - 200)
    stamp = "2026-01-01T00:00:00.000Z"
    with path.open("w") as f:
        header = {"type": "session", "version": 3, "id": str(uuid.uuid4()), "timestamp": stamp, "cwd": str(cwd)}
        f.write(json.dumps(header) + "\n")
        parent = None
        for i in range(count):
            entry_id = f"{i:08x}"
            if i % 2 == 0:
                message = {"role": "user", "content": text, "timestamp": 1}
            else:
                message = {
                    "role": "assistant", "content": [{"type": "text", "text": text}], "api": "anthropic-messages",
                    "provider": "mock", "model": "mock-model", "stopReason": "stop", "timestamp": 1,
                    "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                              "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                }
            entry = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": message}
            f.write(json.dumps(entry) + "\n")
            parent = entry_id


def finish(proc, mock):
    """Reads rho's frames to `agent_settled` (a small frame: a large `agent_end` may come in
    chunks); rho's peak RSS in MB, once it and the mock ended."""
    buf = b""
    while b'"type":"agent_settled"' not in buf:
        chunk = proc.stdout.read(1 << 20)
        if not chunk:
            raise SystemExit("rho ended without agent_settled")
        buf = buf[-64:] + chunk
    peak = bench.peak_rss_kb(proc.pid) / 1024
    proc.stdin.close()
    proc.wait()
    mock.close()
    return peak


def run(turns, args, prompt, cwd_setup=None):
    """Peak RSS in MB of rho answering `prompt` with `turns`, started with `args`."""
    mock = bench.Mock({"turns": turns})
    env, work = bench.agent_env(mock.url)
    extra = cwd_setup(work) if cwd_setup else []
    proc = bench.subprocess.Popen(
        [str(bench.RHO), "--mode", "rpc", "--model", "mock/mock-model", *args, *extra],
        stdin=bench.subprocess.PIPE, stdout=bench.subprocess.PIPE, stderr=bench.subprocess.DEVNULL,
        cwd=work, env=env, bufsize=0,
    )
    line = json.dumps({"type": "prompt", "message": prompt}).encode() + b"\n"
    proc.stdin.write(line)
    proc.stdin.flush()
    return finish(proc, mock)


def run_acp(turns, prompt):
    """Peak RSS in MB of rho answering `prompt` in ACP mode."""
    mock = bench.Mock({"turns": turns})
    env, work = bench.agent_env(mock.url)
    proc = bench.subprocess.Popen(
        [str(bench.RHO), "--mode", "acp", "--model", "mock/mock-model"],
        stdin=bench.subprocess.PIPE, stdout=bench.subprocess.PIPE, stderr=bench.subprocess.DEVNULL,
        cwd=work, env=env, bufsize=0,
    )

    def call(id, method, params):
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).encode() + b"\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(f"rho ended before answering {method}")
            message = json.loads(line)
            if message.get("id") == id and "method" not in message:
                if "error" in message:
                    raise SystemExit(f"{method}: {message['error']}")
                return message["result"]

    call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    session = call(2, "session/new", {"cwd": str(work), "mcpServers": []})["sessionId"]
    call(3, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": prompt}]})
    peak = bench.peak_rss_kb(proc.pid) / 1024
    proc.stdin.close()
    proc.wait()
    mock.close()
    return peak


def run_blocked(size_mb):
    """Peak RSS in MB of rho streaming `size_mb` 1 MB deltas to a host that reads nothing for a
    while, then everything."""
    mock = bench.Mock({"turns": [{"flood": {"count": size_mb, "size": 1_000_000}}]})
    env, work = bench.agent_env(mock.url)
    proc = bench.subprocess.Popen(
        [str(bench.RHO), "--mode", "rpc", "--model", "mock/mock-model", "--no-session"],
        stdin=bench.subprocess.PIPE, stdout=bench.subprocess.PIPE, stderr=bench.subprocess.DEVNULL,
        cwd=work, env=env, bufsize=0,
    )
    proc.stdin.write(json.dumps({"type": "prompt", "message": "flood"}).encode() + b"\n")
    proc.stdin.flush()
    time.sleep(5)
    return finish(proc, mock)


def run_edit(size_mb, one_line):
    """Peak RSS in MB of rho replacing one word in the middle of a `size_mb` MB file."""
    def file(work):
        half = size_mb * 1_000_000 // 2
        filler = "x" * half if one_line else ("x" * 59 + "\n") * (half // 60)
        (work / "big.txt").write_text(filler + "MARK" + filler)
        return ["--no-session"]

    turns = [
        {"toolCalls": [{"name": "edit", "arguments": {"path": "big.txt", "edits": [
            {"oldText": "MARK", "newText": "DONE"}]}}]},
        {"text": "edited"},
    ]
    return run(turns, [], "edit it", file)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--session-mb", type=int, default=100)
    parser.add_argument("--prompt-mb", type=int, default=50)
    parser.add_argument("--line-mb", type=int, default=50)
    parser.add_argument("--blocked-mb", type=int, default=100)
    parser.add_argument("--edit-mb", type=int, default=20)
    parser.add_argument("--only", choices=["edit"], help="only the edit rows")
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        bench.build()
    rows = []
    for one_line in (True, False):
        peak = run_edit(args.edit_mb, one_line)
        shape = "one line" if one_line else "lines of 60 bytes"
        rows.append((f"an edit in a {args.edit_mb} MB file of {shape}", args.edit_mb, peak))
    if args.only == "edit":
        report(rows)
        return

    def session(work):
        path = work / "big.jsonl"
        write_session(path, work, args.session_mb)
        return ["--session", str(path)]

    peak = run([{"text": "ok"}], [], "one more", session)
    rows.append((f"a {args.session_mb} MB session, then one prompt", args.session_mb, peak))
    peak = run([{"text": "ok"}], ["--no-session"], "y" * (args.prompt_mb * 1_000_000))
    rows.append((f"a {args.prompt_mb} MB prompt", args.prompt_mb, peak))
    line = [{"flood": {"count": 1, "size": args.line_mb * 1_000_000}}]
    peak = run(line, ["--no-session"], "one line")
    rows.append((f"a {args.line_mb} MB reply in one SSE event", args.line_mb, peak))
    peak = run_acp([{"text": "ok"}], "y" * (args.prompt_mb * 1_000_000))
    rows.append((f"a {args.prompt_mb} MB prompt in ACP mode", args.prompt_mb, peak))
    peak = run_blocked(args.blocked_mb)
    rows.append((f"a {args.blocked_mb} MB reply to a host that reads late", args.blocked_mb, peak))

    report(rows)


def report(rows):
    print("| input | peak RSS | peak / input |")
    print("| --- | --- | --- |")
    for what, size, peak in rows:
        print(f"| {what} | {peak:.0f} MB | {peak / size:.1f}x |")


if __name__ == "__main__":
    main()
