"""Structural diff of two normalized transcripts (pi = reference, rho = candidate).

Frames are aligned by signature (type + command/role/block, see normalize.signature) with a
longest-matching-subsequence alignment; aligned frames are compared field by field. Every
difference is one `Diff`: a whole frame only one side wrote, a key only one side has, a value or
type that differs, or a different order of the keys both sides have.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

from normalize import signature

# Bookkeeping keys added by the normalizer: informative, never compared.
_INTERNAL = {"_frames", "_light"}
_INFO_KEYS = {"_frameKeys", "_eventKeys", "partialKeys", "partialResultKeys"}


@dataclass
class Diff:
    kind: str  # frame-extra | frame-missing | extra | missing | value | type | order
    sig: str  # signature of the frame (pi's when both)
    path: str  # concrete path inside the frame, e.g. message.usage.cost.total
    gpath: str  # generic path: array indexes replaced by [*]
    pi: Any = None
    rho: Any = None
    pi_index: int | None = None
    rho_index: int | None = None
    rule: str | None = None  # id of the known-difference rule that explains it, if any

    def frame_type(self) -> str:
        return self.sig.split(":", 1)[0]


def _gpath(path: str) -> str:
    return re.sub(r"\[\d+\]", "[*]", path)


def short(v: Any, limit: int = 160) -> str:
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    s = s.replace("\n", "\\n")
    return s if len(s) <= limit else s[: limit - 12] + f"…(+{len(s) - limit + 12})"


def _deep(pi: Any, rho: Any, path: str, out: list[Diff], sig: str, ip: int, ir: int) -> None:
    def add(kind: str, p: str, a: Any = None, b: Any = None) -> None:
        out.append(Diff(kind, sig, p, _gpath(p), a, b, ip, ir))

    if isinstance(pi, dict) and isinstance(rho, dict):
        pk = [k for k in pi if k not in _INTERNAL]
        rk = [k for k in rho if k not in _INTERNAL]
        for k in pk:
            sub = f"{path}.{k}" if path else k
            if k in _INFO_KEYS:
                if pi[k] != rho.get(k):
                    # keys the update frames carried: compare as sets
                    for x in sorted(set(pi[k]) - set(rho.get(k) or [])):
                        add("missing", f"{sub}.{x}", True, None)
                    for x in sorted(set(rho.get(k) or []) - set(pi[k])):
                        add("extra", f"{sub}.{x}", None, True)
                continue
            if k not in rho:
                add("missing", sub, pi[k], None)
            else:
                _deep(pi[k], rho[k], sub, out, sig, ip, ir)
        for k in rk:
            if k not in pi and k not in _INFO_KEYS:
                add("extra", f"{path}.{k}" if path else k, None, rho[k])
        common_p = [k for k in pk if k in rho and k not in _INFO_KEYS]
        common_r = [k for k in rk if k in pi and k not in _INFO_KEYS]
        if common_p != common_r:
            add("order", path or "(frame)", ",".join(common_p), ",".join(common_r))
        return
    if isinstance(pi, list) and isinstance(rho, list):
        for i in range(min(len(pi), len(rho))):
            _deep(pi[i], rho[i], f"{path}[{i}]", out, sig, ip, ir)
        for i in range(len(rho), len(pi)):
            add("missing", f"{path}[{i}]", pi[i], None)
        for i in range(len(pi), len(rho)):
            add("extra", f"{path}[{i}]", None, rho[i])
        return
    if type(pi) is not type(rho) and not (isinstance(pi, (int, float)) and isinstance(rho, (int, float))
                                          and not isinstance(pi, bool) and not isinstance(rho, bool)):
        add("type", path, pi, rho)
        return
    if pi != rho:
        add("value", path, pi, rho)


def diff_transcripts(pi: list[dict[str, Any]], rho: list[dict[str, Any]]) -> list[Diff]:
    sp = [signature(f) for f in pi]
    sr = [signature(f) for f in rho]
    out: list[Diff] = []
    sm = difflib.SequenceMatcher(a=sp, b=sr, autojunk=False)
    for op, a0, a1, b0, b1 in sm.get_opcodes():
        if op == "equal":
            for i, j in zip(range(a0, a1), range(b0, b1)):
                _deep(pi[i], rho[j], "", out, sp[i], i, j)
            continue
        # Inside a changed block, pair frames that are the same thing apart from a response id one
        # side lacks (e.g. an unknown command answered with and without its id), best matches
        # first; compare those, and report the rest as frames only one side wrote.
        def base(sig: str) -> str:
            return sig.rsplit(":", 1)[0] if sig.startswith("response:") and sig.count(":") >= 3 else sig

        pairs = []
        for i in range(a0, a1):
            for j in range(b0, b1):
                if base(sp[i]) == base(sr[j]):
                    same_items = sum(1 for k, v in pi[i].items() if rho[j].get(k) == v)
                    pairs.append((-same_items, abs((i - a0) - (j - b0)), i, j))
        used_a: set[int] = set()
        used_b: set[int] = set()
        matched: dict[int, int] = {}
        for _, _, i, j in sorted(pairs):
            if i not in used_a and j not in used_b:
                used_a.add(i)
                used_b.add(j)
                matched[i] = j
        for i in range(a0, a1):
            if i in matched:
                _deep(pi[i], rho[matched[i]], "", out, sp[i], i, matched[i])
            else:
                out.append(Diff("frame-missing", sp[i], "", "", pi[i], None, i, None))
        for j in range(b0, b1):
            if j not in used_b:
                out.append(Diff("frame-extra", sr[j], "", "", None, rho[j], None, j))
    return out


def render(diffs: list[Diff], title: str, explained_by: dict[str, str], status: dict[str, str] | None = None) -> str:
    """A readable text diff, grouped: unexplained first, then rho bugs, then explained ones."""
    status = status or {}
    groups: dict[tuple, list[Diff]] = {}

    def section(d: Diff) -> int:
        if d.rule is None:
            return 0
        return 1 if status.get(d.rule) == "rho-bug" else 2

    for d in diffs:
        key = (section(d), d.rule or "", d.kind, d.sig, d.gpath)
        groups.setdefault(key, []).append(d)
    counts = [sum(1 for k in groups if k[0] == i) for i in range(3)]
    lines = [f"# {title}", "",
             f"{counts[0]} unexplained difference group(s), {counts[1]} rho-bug group(s), {counts[2]} explained group(s)"]
    for sec, header in ((0, "UNEXPLAINED"), (1, "RHO BUG (to fix in rho, see DIFFERENCES.md)"), (2, "explained")):
        keys = [k for k in groups if k[0] == sec]
        if not keys:
            continue
        lines += ["", f"## {header}", ""]
        for key in sorted(keys, key=lambda k: (k[1], min(d.pi_index if d.pi_index is not None else 10**9 for d in groups[k]))):
            ds = groups[key]
            d = ds[0]
            tag = f"[{d.rule}: {explained_by.get(d.rule, '')}]" if d.rule else "[??]"
            where = f"pi#{d.pi_index}" if d.pi_index is not None else ""
            where += ("/" if where and d.rho_index is not None else "") + (f"rho#{d.rho_index}" if d.rho_index is not None else "")
            count = f" x{len(ds)}" if len(ds) > 1 else ""
            lines.append(f"- {tag} {d.kind} {d.sig} {d.gpath or ''} ({where}){count}")
            if d.kind in ("value", "type", "order"):
                lines.append(f"    pi:  {short(d.pi)}")
                lines.append(f"    rho: {short(d.rho)}")
            elif d.kind in ("missing", "frame-missing"):
                lines.append(f"    pi:  {short(d.pi)}")
            else:
                lines.append(f"    rho: {short(d.rho)}")
    return "\n".join(lines) + "\n"
