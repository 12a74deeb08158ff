"""Writes REPORT.md: performance figures, conformance summary with per-scenario diffs, and the
model requests of both agents diffed."""

from __future__ import annotations

import datetime
import difflib
import json
import platform
import statistics
import subprocess
from pathlib import Path
from typing import Any

from normalize import Scrubber, scrub_request
from rules import RULES
from runner import RunResult

TARGETS = {"startup": 50, "idle_rss": 8, "flood_time": 20, "flood_rss": 20}


def _med(xs: list[float | None]) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _ms(x: float | None) -> str:
    return "n/a" if x is None else (f"{x * 1000:.1f} ms" if x < 10 else f"{x:.2f} s")


def _mib(kb: float | None) -> str:
    return "n/a" if kb is None else f"{kb / 1024:.1f} MiB"


def _bytes(b: float | None) -> str:
    if b is None:
        return "n/a"
    return f"{b / 1e6:.1f} MB" if b >= 1e6 else f"{b / 1e3:.1f} kB"


def _ratio(pi: float | None, rho: float | None) -> float | None:
    if pi is None or rho is None or rho <= 0:
        return None
    return pi / rho


def _fmt_ratio(r: float | None) -> str:
    return "n/a" if r is None else f"{r:.1f}x"


def _verdict(r: float | None, target: float | None) -> str:
    if target is None:
        return ""
    if r is None:
        return "not measured"
    if r >= target:
        return "met"
    return f"**short by {target / r:.1f}x** (needs {target}x)"


def _host() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os
    return f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} CPUs"


def _git_rev(repo: Path) -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                               capture_output=True, text=True).stdout.strip()
        return rev + (" (with uncommitted changes)" if dirty else "")
    except OSError:
        return "unknown"


def perf_rows(perf: dict) -> tuple[list[list[str]], list[str]]:
    rows: list[list[str]] = []
    short: list[str] = []

    def row(name: str, pi: float | None, rho: float | None, fmt, target_key: str | None) -> None:
        r = _ratio(pi, rho)
        target = TARGETS.get(target_key) if target_key else None
        verdict = _verdict(r, target)
        rows.append([name, fmt(pi), fmt(rho), _fmt_ratio(r), f">= {target}x" if target else "", verdict])
        if target and (r is None or r < target):
            short.append(f"{name}: {_fmt_ratio(r)} against a target of {target}x"
                         + (f" (short by {target / r:.1f}x)" if r else ""))

    n, nf = perf["runs"], perf["flood_runs"]
    row(f"`--version` wall time (median of {n})", _med(perf["pi.version"]), _med(perf["rho.version"]), _ms, None)
    st = perf["startup"]
    row(f"spawn to `get_state` response (median of {n})", _med([r.marks.get("get_state") for r in st["pi"]]),
        _med([r.marks.get("get_state") for r in st["rho"]]), _ms, "startup")
    row(f"idle peak RSS, 1 s after `get_state` (median of {n})", _med([r.peak_rss_kb for r in st["pi"]]),
        _med([r.peak_rss_kb for r in st["rho"]]), _mib, "idle_rss")
    fl = perf["flood"]

    def span(r: RunResult) -> float | None:
        a, b = r.marks.get("first_update"), r.marks.get("agent_end")
        return None if a is None or b is None else b - a

    if fl["pi"] and fl["rho"]:
        row(f"flood: first `message_update` to `agent_end` (median of {nf})", _med([span(r) for r in fl["pi"]]),
            _med([span(r) for r in fl["rho"]]), _ms, "flood_time")
        row(f"flood: peak RSS (median of {nf})", _med([r.peak_rss_kb for r in fl["pi"]]),
            _med([r.peak_rss_kb for r in fl["rho"]]), _mib, "flood_rss")
        row("flood: stdout bytes", _med([r.stdout_bytes for r in fl["pi"]]), _med([r.stdout_bytes for r in fl["rho"]]),
            _bytes, None)
        row("flood: stdout lines (frames)", _med([r.stdout_lines for r in fl["pi"]]),
            _med([r.stdout_lines for r in fl["rho"]]), lambda x: "n/a" if x is None else f"{x:.0f}", None)
        row("flood: spawn to `agent_end`, whole run", _med([r.marks.get("agent_end") for r in fl["pi"]]),
            _med([r.marks.get("agent_end") for r in fl["rho"]]), _ms, None)
    return rows, short


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _samples(perf: dict) -> list[str]:
    def fmt(xs):
        return ", ".join("n/a" if x is None else f"{x * 1000:.1f}" for x in xs)

    lines = ["Raw samples (ms unless noted):", ""]
    for a in ("pi", "rho"):
        st = perf["startup"][a]
        lines.append(f"- {a} `--version`: {fmt(perf[a + '.version'])}")
        lines.append(f"- {a} spawn to get_state: {fmt([r.marks.get('get_state') for r in st])}")
        lines.append(f"- {a} idle peak RSS (kB): {', '.join(str(r.peak_rss_kb) for r in st)}")
        fl = perf["flood"][a]
        if fl:
            spans = [(r.marks['agent_end'] - r.marks['first_update']) if 'agent_end' in r.marks and 'first_update' in r.marks
                     else None for r in fl]
            lines.append(f"- {a} flood first update to agent_end: {fmt(spans)}")
            lines.append(f"- {a} flood peak RSS (kB): {', '.join(str(r.peak_rss_kb) for r in fl)}")
    return lines


def _json_lines(v: Any) -> list[str]:
    return json.dumps(v, indent=1, sort_keys=True, ensure_ascii=False).splitlines()


def _udiff(a: Any, b: Any, name_a: str = "pi", name_b: str = "rho", ctx: int = 3) -> str:
    al = a.splitlines() if isinstance(a, str) else _json_lines(a)
    bl = b.splitlines() if isinstance(b, str) else _json_lines(b)
    d = list(difflib.unified_diff(al, bl, name_a, name_b, lineterm="", n=ctx))
    return "\n".join(d) if d else "(identical)"


def _fence(text: str, lang: str = "") -> list[str]:
    fence = "````" if "```" in text else "```"
    return [fence + lang, text, fence]


def _details(summary: str, body: list[str]) -> list[str]:
    return ["<details><summary>" + summary + "</summary>", "", *body, "", "</details>", ""]


def _system_text(body: dict) -> str:
    s = body.get("system")
    if isinstance(s, list):
        return "\n\n".join(b.get("text", "") for b in s if isinstance(b, dict))
    return s if isinstance(s, str) else ""


def request_section(name: str, runs: dict[str, RunResult], full: bool) -> list[str]:
    reqs = {}
    for a, r in runs.items():
        sc = Scrubber(r.cwd, r.agent_dir, r.base_url)
        reqs[a] = [scrub_request(q, sc) for q in r.requests]
    lines = [f"### {name}", "",
             f"Requests sent: pi {len(reqs['pi'])}, rho {len(reqs['rho'])}.", ""]
    n = min(len(reqs["pi"]), len(reqs["rho"]))
    for i in range(n):
        p, q = reqs["pi"][i], reqs["rho"][i]
        pb, qb = p.get("body") or {}, q.get("body") or {}
        if not isinstance(pb, dict) or not isinstance(qb, dict):
            continue
        params_p = {k: v for k, v in pb.items() if k not in ("system", "tools", "messages")}
        params_q = {k: v for k, v in qb.items() if k not in ("system", "tools", "messages")}
        lines.append(f"Request {i + 1} ({p.get('path')} / {q.get('path')}):")
        lines.append("")
        if params_p != params_q:
            lines += ["- parameters besides system/tools/messages differ:", "", *_fence(_udiff(params_p, params_q), "diff"), ""]
        else:
            lines.append("- parameters besides system/tools/messages: identical")
        tp = [t.get("name") for t in pb.get("tools", []) if isinstance(t, dict)]
        tq = [t.get("name") for t in qb.get("tools", []) if isinstance(t, dict)]
        lines.append(f"- tools: pi `{', '.join(tp)}`; rho `{', '.join(tq)}`")
        same_msgs = pb.get("messages") == qb.get("messages")
        lines.append(f"- messages: {'identical' if same_msgs else 'differ (diff below)'}")
        lines.append(f"- system prompt: {'identical' if _system_text(pb) == _system_text(qb) else 'differs'}")
        lines.append("")
        if not same_msgs:
            lines += _details(f"messages of request {i + 1}, pi vs rho", _fence(_udiff(pb.get("messages"), qb.get("messages")), "diff"))
        if full:
            hp = {k: v for k, v in (p.get("headers") or {}).items()}
            hq = {k: v for k, v in (q.get("headers") or {}).items()}
            keys = sorted(set(hp) | set(hq))
            rows = [[f"`{k}`", f"`{hp.get(k, '—')}`", f"`{hq.get(k, '—')}`"] for k in keys if hp.get(k) != hq.get(k)]
            lines += _details(f"HTTP headers that differ (request {i + 1})", _table(["header", "pi", "rho"], rows))
            tools_p = {t.get("name"): t for t in pb.get("tools", []) if isinstance(t, dict)}
            tools_q = {t.get("name"): t for t in qb.get("tools", []) if isinstance(t, dict)}
            body = []
            for t in list(dict.fromkeys([*tools_p, *tools_q])):
                body.append(f"#### tool `{t}`")
                body.append("")
                if t not in tools_p:
                    body += ["only rho sends it:", "", *_fence(json.dumps(tools_q[t], indent=1, ensure_ascii=False), "json"), ""]
                elif t not in tools_q:
                    body += ["only pi sends it:", "", *_fence(json.dumps(tools_p[t], indent=1, ensure_ascii=False), "json"), ""]
                else:
                    body += _fence(_udiff(tools_p[t], tools_q[t]), "diff") + [""]
            lines += _details(f"tool definitions, pi vs rho (request {i + 1})", body)
            lines += _details(f"system prompt, pi (request {i + 1})", _fence(_system_text(pb)))
            lines += _details(f"system prompt, rho (request {i + 1})", _fence(_system_text(qb)))
            lines += _details(f"system prompt diff (request {i + 1})", _fence(_udiff(_system_text(pb), _system_text(qb)), "diff"))
            full = False  # headers, tools and prompts once per scenario
    return lines


def write_report(path: Path, results: list[dict], perf: dict | None, versions: dict[str, str], out: Path) -> None:
    repo = Path(__file__).resolve().parent.parent.parent
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    L: list[str] = [
        "# rho vs pi: conformance and performance",
        "",
        "Generated by `python3 bench/compare/compare.py` — do not edit by hand; rerun it.",
        "",
        f"- when: {now}",
        f"- host: {_host()}",
        f"- pi: {versions.get('pi')} (npm: {versions.get('pi-packages')}; Node {versions.get('node')}; `PI_OFFLINE=1`)",
        f"- rho: {versions.get('rho')} (release build, commit {versions.get('commit') or _git_rev(repo)})",
        "- both: `--mode rpc --no-session --model mock/<id>`, a fresh working, agent and HOME directory per run, "
        "each against its own `rho-mock-llm` on 127.0.0.1 serving the same script",
        "",
    ]
    if perf:
        rows, short = perf_rows(perf)
        L += ["## Performance (pi and rho measured in the same run)", "",
              "Ratios are pi / rho: how many times faster or smaller rho is.", ""]
        L += _table(["measurement", "pi", "rho", "ratio", "target", "verdict"], rows)
        L += [""]
        if short:
            L += ["Where rho falls short of the targets:", ""] + [f"- {s}" for s in short] + [""]
        else:
            L += ["rho meets every target.", ""]
        L += _samples(perf) + [""]
        L += ["How: wall times from `time.monotonic()` around the child; spawn to `get_state` is from "
              "`Popen` to the response line arriving (the command is written right after spawn); peak RSS is "
              "`VmHWM` from `/proc/<pid>/status` (polled every 50 ms and read once more before stdin is "
              "closed); the flood is one reply of 5,000 text deltas of 20 bytes, read by the harness in 1 MiB "
              "chunks so that the reader is never the bottleneck. rho merges consecutive deltas of one block "
              "when stdout is slower than the model (docs/decisions.md D15), which is why it writes fewer frames.", ""]
    L += ["## Conformance", "",
          "Each scenario is run with both agents; both transcripts are normalized (ids, timestamps, ports, "
          "paths and run-dependent snapshots replaced; runs of `message_update` deltas of one content block "
          "compared as one) and diffed structurally. Every difference is either explained by a rule in "
          "`rules.py` (listed with its reason in `DIFFERENCES.md`) or reported as unexplained.", ""]
    rows = []
    status = {x.id: x.status for x in RULES}
    for r in results:
        sc, runs, diffs = r["scenario"], r["runs"], r["diffs"]
        groups = {(d.rule, d.kind, d.sig, d.gpath) for d in diffs}
        unexplained = {g for g in groups if g[0] is None}
        bugs = {g for g in groups if g[0] is not None and status.get(g[0]) == "rho-bug"}
        errs = "; ".join(f"{a}: {x.error}" for a, x in runs.items() if x.error) or ""
        rows.append([f"`{sc['name']}`", sc.get("title", ""), f"{len(runs['pi'].frames)} / {len(runs['rho'].frames)}",
                     f"{len(runs['pi'].requests)} / {len(runs['rho'].requests)}",
                     f"{len(groups) - len(unexplained) - len(bugs)}", f"**{len(bugs)}**" if bugs else "0",
                     f"**{len(unexplained)}**" if unexplained else "0",
                     f"{runs['pi'].exit_code} / {runs['rho'].exit_code}", errs])
    L += _table(["scenario", "what", "frames pi / rho", "model requests pi / rho", "explained groups",
                 "rho-bug groups", "unexplained groups", "exit pi / rho", "run errors"], rows)
    L += [""]
    fired: dict[str, list[str]] = {}
    for r in results:
        for d in r["diffs"]:
            if d.rule:
                lst = fired.setdefault(d.rule, [])
                if r["scenario"]["name"] not in lst:
                    lst.append(r["scenario"]["name"])
    L += ["### Known differences that showed up in this run", ""]
    L += _table(["rule", "status", "reason", "what", "scenarios"],
                [[f"`{x.id}`", "**rho bug**" if x.status == "rho-bug" else "explained", x.ref, x.summary,
                  ", ".join(fired.get(x.id, [])) or "—"] for x in RULES])
    L += [""]
    L += ["### Per-scenario diffs", "",
          f"Also written as `diff.txt` beside the raw and normalized transcripts under `{out.name}/<scenario>/`.", ""]
    for r in results:
        sc = r["scenario"]
        L += [f"#### `{sc['name']}` — {sc.get('title', '')}", "", sc.get("description", ""), ""]
        L += _details("structural diff", _fence(r["diff_text"].rstrip()))
    L += ["## Model requests", "",
          "What each agent sent to the model for the same scenario (headers, parameters, tools, system "
          "prompt, messages), normalized like the transcripts. The system prompts are expected to differ: "
          "both are shown in full for `bash_tool`.", ""]
    for r in results:
        L += request_section(f"`{r['scenario']['name']}`", r["runs"], full=r["scenario"]["name"] == "bash_tool")
    path.write_text("\n".join(L).rstrip() + "\n")
