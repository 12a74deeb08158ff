#!/usr/bin/env python3
"""Conformance and performance comparison of rho against the reference pi, in one command.

    python3 bench/compare/compare.py            # everything: install pi, build rho, run, report
    python3 bench/compare/compare.py --help     # options (one scenario, fewer runs, no build, ...)

What it does (see bench/compare/README.md):
  1. installs the reference (npm @mariozechner/pi-coding-agent, pinned) into $PI_REF_DIR
     (default ~/.cache/rho-compare/pi) when it is missing or another version;
  2. builds rho and rho-mock-llm in release mode;
  3. runs every scenario in bench/compare/scenarios/ with pi and with rho, each against its own
     rho-mock-llm server, in fresh temporary directories (`--mode rpc --no-session`);
  4. normalizes both transcripts, diffs them structurally, labels each difference with the
     known-difference rule (rules.py, DIFFERENCES.md) that explains it, and writes a readable diff
     per scenario under the output directory (default bench/compare/out/, not committed);
  5. measures --version, spawn to get_state, idle peak RSS and the 5,000-delta flood for both,
     in the same run, and writes bench/compare/REPORT.md.

Python 3.11 standard library only; needs Node >= 20.6 and npm (for the reference), cargo.
Exit status: 0 when every difference is explained by a rule and no run failed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from normalize import Scrubber, normalize, without_declared_prompt  # noqa: E402
from report import write_report  # noqa: E402
from rules import RULES, TITLES, explain  # noqa: E402
from runner import Agent, RunResult, run_agent  # noqa: E402
from structdiff import diff_transcripts, render  # noqa: E402

PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
PINNED = {f"@mariozechner/{p}": PI_VERSION for p in ("pi-coding-agent", "pi-ai", "pi-agent-core", "pi-tui")}
REPO = HERE.parent.parent


def log(msg: str) -> None:
    print(f"[compare] {msg}", file=sys.stderr, flush=True)


def _installed(pi_dir: Path) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for p in PINNED:
        pkg = pi_dir / "node_modules" / p / "package.json"
        out[p] = json.loads(pkg.read_text()).get("version") if pkg.exists() else None
    return out


def ensure_pi(pi_dir: Path) -> Path:
    """Installs the pinned reference into pi_dir when missing; returns its `pi` launcher."""
    launcher = pi_dir / "node_modules" / ".bin" / "pi"
    installed = _installed(pi_dir)
    if installed == PINNED and launcher.exists():
        return launcher
    node = shutil.which("node")
    npm = shutil.which("npm")
    if not node or not npm:
        sys.exit("compare: node and npm are needed for the reference (Node >= 20.6)")
    ver = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip().lstrip("v")
    if tuple(int(x) for x in ver.split(".")[:2]) < (20, 6):
        sys.exit(f"compare: the reference needs Node >= 20.6, found {ver}")
    log(f"installing {PI_PACKAGE}@{PI_VERSION} into {pi_dir} (installed: {installed})")
    pi_dir.mkdir(parents=True, exist_ok=True)
    if not (pi_dir / "package.json").exists():
        (pi_dir / "package.json").write_text('{"name": "rho-compare-pi-ref", "private": true}\n')
    # The agent's own packages are pinned too (pi-coding-agent asks for ^0.73.1 of them), so that
    # a later 0.73.x of pi-ai or pi-agent-core does not change the reference under our feet.
    subprocess.run([npm, "install", "--no-audit", "--no-fund", *(f"{p}@{v}" for p, v in PINNED.items())],
                   cwd=pi_dir, check=True, stdout=sys.stderr)
    if not launcher.exists():
        sys.exit(f"compare: npm install finished but {launcher} is missing")
    return launcher


def build_rho(skip: bool) -> Path:
    meta = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=REPO,
                          capture_output=True, text=True, check=True)
    target = Path(json.loads(meta.stdout)["target_directory"]) / "release"
    if not skip:
        log("building rho and rho-mock-llm (release)")
        subprocess.run(["cargo", "build", "--release", "-p", "rho-cli", "-p", "rho-mock-llm"],
                       cwd=REPO, check=True, stdout=sys.stderr)
    for b in ("rho", "rho-mock-llm"):
        if not (target / b).exists():
            sys.exit(f"compare: {target / b} is missing (drop --skip-build)")
    return target


def load_scenarios(names: list[str] | None) -> list[dict]:
    out = []
    for p in sorted((HERE / "scenarios").glob("*.json")):
        sc = json.loads(p.read_text())
        sc["file"] = p.name
        if not names or sc["name"] in names:
            out.append(sc)
    if names and len(out) != len(names):
        known = [json.loads(p.read_text())["name"] for p in sorted((HERE / "scenarios").glob("*.json"))]
        sys.exit(f"compare: unknown scenario in {names}; known: {known}")
    return out


def dump_run(run: RunResult, outdir: Path) -> None:
    with open(outdir / f"{run.agent}.stdout.jsonl", "w") as fh:
        for f in run.frames:
            rec = {"t": round(f.t, 6), "frame": f.obj} if f.obj is not None else {"t": round(f.t, 6), "raw": f.raw}
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    with open(outdir / f"{run.agent}.requests.jsonl", "w") as fh:
        for r in run.requests:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    (outdir / f"{run.agent}.stderr.txt").write_text(run.stderr)


def norm_run(run: RunResult) -> list[dict]:
    scrub = Scrubber(run.cwd, run.agent_dir, run.base_url)
    frames = [f.obj for f in run.frames]
    raws = [f.raw for f in run.frames]
    if run.agent == "rho":
        frames, raws = without_declared_prompt(frames, raws)
    out = normalize(frames, raws, scrub)
    if run.files:
        out.append({"type": "<files-after-run>", "files": {k: scrub.value(v) for k, v in run.files.items()}})
    # How the process ended after stdin was closed (both agents should exit 0 on EOF).
    out.append({"type": "<exit>", "code": run.exit_code})
    return out


def compare_scenario(sc: dict, pi: Agent, rho: Agent, mock: Path, outroot: Path) -> dict:
    outdir = outroot / sc["name"]
    outdir.mkdir(parents=True, exist_ok=True)
    runs = {}
    for agent in (pi, rho):
        log(f"{sc['name']}: {agent.name}")
        runs[agent.name] = run_agent(agent, sc, mock)
        dump_run(runs[agent.name], outdir)
        if runs[agent.name].error:
            log(f"  {agent.name}: {runs[agent.name].error}")
    norm = {name: norm_run(r) for name, r in runs.items()}
    for name, frames in norm.items():
        with open(outdir / f"{name}.normalized.jsonl", "w") as fh:
            for f in frames:
                fh.write(json.dumps(f, ensure_ascii=False) + "\n")
    diffs = diff_transcripts(norm["pi"], norm["rho"])
    for d in diffs:
        d.rule = explain(d, sc["name"])
    text = render(diffs, f"{sc['name']}: pi (reference) vs rho", TITLES, {r.id: r.status for r in RULES})
    (outdir / "diff.txt").write_text(text)
    return {"scenario": sc, "runs": runs, "norm": norm, "diffs": diffs, "diff_text": text}


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def time_version(agent: Agent, runs: int) -> list[float]:
    out = []
    env = {**os.environ, **agent.extra_env}
    for i in range(runs + 1):
        t0 = time.monotonic()
        subprocess.run([*agent.argv, "--version"], capture_output=True, env=env, check=True)
        if i > 0:  # the first run warms the page cache and is not counted
            out.append(time.monotonic() - t0)
    return out


STARTUP = {
    "name": "startup",
    "script": {"turns": []},
    "steps": [
        {"send": {"id": "s0", "type": "get_state"}},
        {"wait": {"type": "response", "id": "s0"}, "mark": "get_state"},
        {"sleepMs": 1000},
    ],
    "settleS": 0,
}


def perf(pi: Agent, rho: Agent, mock: Path, flood: dict | None, runs: int, flood_runs: int) -> dict:
    res: dict = {"runs": runs, "flood_runs": flood_runs}
    for agent in (pi, rho):
        log(f"perf: {agent.name} --version x{runs}")
        res[f"{agent.name}.version"] = time_version(agent, runs)
    startup: dict[str, list[RunResult]] = {"pi": [], "rho": []}
    for i in range(runs):
        for agent in (pi, rho):
            log(f"perf: {agent.name} startup {i + 1}/{runs}")
            startup[agent.name].append(run_agent(agent, STARTUP, mock))
    res["startup"] = startup
    floods: dict[str, list[RunResult]] = {"pi": [], "rho": []}
    if flood:
        for i in range(flood_runs):
            for agent in (pi, rho):
                log(f"perf: {agent.name} flood {i + 1}/{flood_runs}")
                floods[agent.name].append(run_agent(agent, flood, mock))
    res["flood"] = floods
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", action="append", help="run only this scenario (repeatable)")
    ap.add_argument("--skip-build", action="store_true", help="use the release binaries as they are")
    ap.add_argument("--no-perf", action="store_true", help="skip the timing and memory measurements")
    ap.add_argument("--runs", type=int, default=5, help="runs per startup/--version measurement (median)")
    ap.add_argument("--flood-runs", type=int, default=3, help="runs of the flood measurement (median)")
    ap.add_argument("--out", type=Path, default=HERE / "out", help="where transcripts and diffs go")
    ap.add_argument("--report", type=Path, default=HERE / "REPORT.md", help="the generated report")
    ap.add_argument("--commit", help="the rho commit the report names (default: git HEAD, and whether the tree is dirty)")
    ap.add_argument("--pi-dir", type=Path,
                    default=Path(os.environ.get("PI_REF_DIR", Path.home() / ".cache" / "rho-compare" / "pi")))
    args = ap.parse_args()

    launcher = ensure_pi(args.pi_dir)
    target = build_rho(args.skip_build)
    mock = target / "rho-mock-llm"
    # PI_OFFLINE: no start-up network operations (version check, tool downloads); rho does none.
    pi = Agent("pi", [str(launcher)], "PI_CODING_AGENT_DIR", {"PI_OFFLINE": "1"})
    rho = Agent("rho", [str(target / "rho")], "RHO_CODING_AGENT_DIR", {})
    scenarios = load_scenarios(args.scenario)
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    results = [compare_scenario(sc, pi, rho, mock, args.out) for sc in scenarios]
    perf_res = None
    if not args.no_perf:
        flood = next((sc for sc in load_scenarios(None) if sc["name"] == "flood"), None)
        perf_res = perf(pi, rho, mock, flood, args.runs, args.flood_runs)
    # pi prints its version on stderr when stdout is not a terminal (it reserves stdout).
    pv = subprocess.run([str(launcher), "--version"], capture_output=True, text=True, env={**os.environ, "PI_OFFLINE": "1"})
    versions = {
        "pi": (pv.stdout.strip() or pv.stderr.strip()),
        "pi-packages": ", ".join(f"{p.split('/')[-1]} {v}" for p, v in _installed(args.pi_dir).items()),
        "rho": subprocess.run([str(target / "rho"), "--version"], capture_output=True, text=True).stdout.strip(),
        "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip(),
        "commit": args.commit or "",
    }
    write_report(args.report, results, perf_res, versions, args.out)
    log(f"report: {args.report}")
    log(f"transcripts and diffs: {args.out}")
    status = {r.id: r.status for r in RULES}
    unexplained = sum(1 for r in results for d in r["diffs"] if d.rule is None)
    bugs = sum(1 for r in results for d in r["diffs"] if d.rule and status[d.rule] == "rho-bug")
    failed = [f"{r['scenario']['name']}/{n}" for r in results for n, run in r["runs"].items() if run.error]
    for r in results:
        n = sum(1 for d in r["diffs"] if d.rule is None)
        b = sum(1 for d in r["diffs"] if d.rule and status[d.rule] == "rho-bug")
        log(f"  {r['scenario']['name']:<14} {len(r['diffs']):>4} differences, {n} unexplained, {b} rho bug(s)")
    if failed:
        log(f"runs that failed: {failed}")
    return 0 if unexplained == 0 and bugs == 0 and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
