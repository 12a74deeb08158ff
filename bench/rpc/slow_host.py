#!/usr/bin/env python3
"""A host that stops reading, then reads slowly: rho's memory and line lengths.

For each reply size (default 3 MB and 100 MB of text, streamed by rho-mock-llm in 1,000-byte
deltas), the host sends one prompt, reads nothing for --block seconds, then reads 64 KB at a
time with a pause between reads until `agent_end`. It reports the peak RSS of rho
(/proc/<pid>/status VmHWM), the longest stdout line, and whether the streamed deltas add up to
the reply.

Usage: python3 bench/rpc/slow_host.py [--sizes 3,100] [--block 8] [--no-build]
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the release build, the mock and the agent directory)


def run(size_mb, block_s, pause_s):
    size = size_mb * 1_000_000
    mock = bench.Mock({"turns": [{"flood": {"count": size // 1000, "size": 1000}}]})
    env, work = bench.agent_env(mock.url)
    proc = bench.subprocess.Popen(
        [str(bench.RHO), "--mode", "rpc", "--no-session", "--model", "mock/mock-model"],
        stdin=bench.subprocess.PIPE,
        stdout=bench.subprocess.PIPE,
        stderr=bench.subprocess.DEVNULL,
        cwd=work,
        env=env,
        bufsize=0,
    )
    proc.stdin.write(b'{"type":"prompt","message":"flood"}\n')
    proc.stdin.flush()
    time.sleep(block_s)
    longest = 0
    delta_bytes = 0
    buf = b""
    started = time.perf_counter()
    while True:
        chunk = proc.stdout.read(65536)
        if not chunk:
            raise SystemExit("rho ended without agent_end")
        buf += chunk
        *lines, buf = buf.split(b"\n")
        done = False
        for line in lines:
            longest = max(longest, len(line))
            if line.startswith(b'{"type":"message_update"') and b'"text_delta"' in line:
                delta_bytes += len(json.loads(line)["assistantMessageEvent"]["delta"])
            elif line.startswith(b'{"type":"agent_end"'):
                done = True
        if done:
            break
        time.sleep(pause_s)
    seconds = time.perf_counter() - started
    peak = bench.peak_rss_kb(proc.pid)
    proc.stdin.close()
    proc.wait()
    mock.close()
    return {
        "size_mb": size_mb,
        "peak_rss_mb": peak / 1024,
        "longest_line": longest,
        "complete": delta_bytes == size,
        "read_seconds": seconds,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="3,100", help="reply sizes in MB, comma-separated")
    parser.add_argument("--block", type=float, default=8.0, help="seconds the host reads nothing")
    parser.add_argument("--pause", type=float, default=0.001, help="seconds between 64 KB reads")
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        bench.build()
    print("| reply | peak RSS | longest line | deltas complete | read time after the block |")
    print("| --- | --- | --- | --- | --- |")
    for size in (int(s) for s in args.sizes.split(",")):
        r = run(size, args.block, args.pause)
        print(
            f"| {r['size_mb']} MB | {r['peak_rss_mb']:.1f} MB | {r['longest_line']:,} bytes | "
            f"{'yes' if r['complete'] else 'NO'} | {r['read_seconds']:.1f} s |"
        )


if __name__ == "__main__":
    main()
