#!/usr/bin/env python3
"""What a 30-turn Anthropic session uploads, with and without message threads.

One scripted session against rho-mock-llm (which keeps threads as the API does): 30 prompts,
each answered with about 1,500 characters, and every fifth answered first with a `read` of a
4 KB file. It runs twice: with the model's `compat.supportsMessageThreads` false (every request
carries the whole conversation) and true (after a reply, only what followed it). From the
mock's record of every request it reports the requests made, the bytes uploaded, and the input
tokens they carried (the system prompt, tools and messages of each body, at 4 characters a
token: what the server had to be sent, whatever it bills for what it already holds).

Usage: python3 bench/rpc/anthropic_threads.py [--bin-dir target/release]
Needs Python 3 and built `rho` and `rho-mock-llm` binaries.
"""

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TURNS = 30
REPLY = ("The change is in place and the tests pass. " * 35).strip()


def script():
    turns = []
    for n in range(TURNS):
        if n % 5 == 4:
            turns.append({"toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}]})
        turns.append({"text": f"Answer {n + 1}. {REPLY}"})
    return {"turns": turns}


def run(bin_dir, threads):
    with tempfile.TemporaryDirectory(prefix="rho-threads-") as home:
        home = Path(home)
        (home / "script.json").write_text(json.dumps(script()))
        record = home / "requests.jsonl"
        mock = subprocess.Popen(
            [str(bin_dir / "rho-mock-llm"), "--script", str(home / "script.json"), "--record", str(record)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        url = mock.stdout.readline().strip().split()[-1]
        agent = home / "agent"
        agent.mkdir()
        model = {"id": "mock-model", "name": "Mock", "contextWindow": 200000, "maxTokens": 8192}
        model["compat"] = {"supportsMessageThreads": threads}
        models = {"providers": {"mock": {"baseUrl": url, "api": "anthropic-messages", "apiKey": "k", "models": [model]}}}
        (agent / "models.json").write_text(json.dumps(models))
        work = home / "work"
        work.mkdir()
        (work / "notes.txt").write_text("A line of notes about the project.\n" * 120)
        env = dict(os.environ, RHO_CODING_AGENT_DIR=str(agent), HOME=str(home))
        rho = subprocess.Popen(
            [str(bin_dir / "rho"), "--mode", "rpc", "--model", "mock/mock-model"],
            cwd=work,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for n in range(TURNS):
            rho.stdin.write(json.dumps({"type": "prompt", "message": f"Step {n + 1}: carry on."}) + "\n")
            rho.stdin.flush()
            for line in rho.stdout:
                if json.loads(line).get("type") == "agent_end":
                    break
        rho.stdin.close()
        rho.wait()
        mock.kill()
        mock.wait()
        bodies = [json.loads(line)["body"] for line in record.read_text().splitlines()]
    uploaded = sum(len(json.dumps(b)) for b in bodies)
    carried = sum(len(json.dumps([b.get("system"), b.get("tools"), b.get("messages")])) for b in bodies) // 4
    continued = sum(1 for b in bodies if (b.get("thread") or {}).get("type") == "continue")
    return len(bodies), continued, uploaded, carried


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-dir", type=Path, default=ROOT / "target" / "release")
    args = parser.parse_args()
    args.bin_dir = args.bin_dir.resolve()
    print("| threads | requests | continued | bytes uploaded | input tokens carried |")
    print("|---|---|---|---|---|")
    for threads in (False, True):
        requests, continued, uploaded, carried = run(args.bin_dir, threads)
        print(f"| {'on' if threads else 'off'} | {requests} | {continued} | {uploaded:,} | {carried:,} |")


if __name__ == "__main__":
    main()
