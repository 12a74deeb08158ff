#!/usr/bin/env python3
"""What confining a command costs: `rho __sandbox <policy> /bin/true` (the wrapper bash calls go
through under --sandbox) against `/bin/true` alone, each started N times from Python, for the
read-only and workspace-write policies. Prints the median and p90 wall time per start and the
difference, which is the sandbox's set-up cost per command (the mount layer's namespace and
remounts, the Landlock ruleset, the seccomp filter, one more exec of rho). Needs a Linux kernel
with Landlock (and user namespaces for the mount layer).

    python3 bench/sandbox/bench.py [--runs 300] [--no-build]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RHO = os.path.join(ROOT, "target", "release", "rho")


def timed(argv, runs):
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdin=subprocess.DEVNULL)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-p", "rho-cli"], cwd=ROOT, check=True)
    project = tempfile.mkdtemp(prefix="rho-sandbox-bench-")
    # A project as rho protects it: its .git and .pi stay read-only inside the writable root.
    for kept in (".git", ".pi"):
        os.mkdir(os.path.join(project, kept))
    read_only = [os.path.join(project, ".git"), os.path.join(project, ".pi")]
    policies = {
        "read-only": {"mode": "read-only", "writableRoots": [], "readOnly": [], "network": False},
        "workspace-write": {
            "mode": "workspace-write",
            "writableRoots": [project, "/tmp"],
            "readOnly": read_only,
            "network": False,
        },
    }
    probe = subprocess.run(
        [RHO, "__sandbox", json.dumps(policies["workspace-write"]), "--probe"], capture_output=True, text=True
    )
    print(f"layers this machine leaves off: {probe.stdout.strip() or 'none'}")
    base_median, base_p90 = timed(["/bin/true"], args.runs)
    print(f"/bin/true alone:            median {base_median:.2f} ms  p90 {base_p90:.2f} ms")
    for name, policy in policies.items():
        argv = [RHO, "__sandbox", json.dumps(policy), "/bin/true"]
        median, p90 = timed(argv, args.runs)
        print(
            f"{name + ':':27} median {median:.2f} ms  p90 {p90:.2f} ms"
            f"  (set-up {median - base_median:+.2f} ms)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
