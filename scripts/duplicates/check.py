#!/usr/bin/env python3
"""Fails when Cargo.lock holds a crate in more versions than `allowed.txt` accepts.

Each line of `allowed.txt` is `name count  # why`: the crate may appear in at most that many
versions, because crates rho depends on have not moved to one version yet. A new duplicate (a
dependency added or bumped that pulls a second version of something) fails the check; a line
whose crate now appears in fewer versions is reported, so the list only shrinks.

    python3 scripts/duplicates/check.py
"""

from __future__ import annotations

import collections
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    lock = tomllib.loads((ROOT / "Cargo.lock").read_text())
    versions: dict[str, set[str]] = collections.defaultdict(set)
    for package in lock["package"]:
        versions[package["name"]].add(package["version"])
    allowed: dict[str, int] = {}
    for line in (Path(__file__).parent / "allowed.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, count = line.split()
            allowed[name] = int(count)
    failed = False
    for name, found in sorted(versions.items()):
        limit = allowed.get(name, 1)
        if len(found) > limit:
            print(f"duplicate: {name} in {len(found)} versions ({', '.join(sorted(found))}); allowed {limit}")
            failed = True
    for name, limit in sorted(allowed.items()):
        count = len(versions.get(name, ()))
        if count < limit:
            print(f"note: {name} is now in {count} version(s); lower its line in allowed.txt to {max(count, 1)}"
                  " (or remove it)")
    if failed:
        print("Cargo.lock has a new duplicate: align the versions, or add it to "
              "scripts/duplicates/allowed.txt with the reason.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
