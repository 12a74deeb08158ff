"""Turns a recorded transcript into a comparable one.

- Run-dependent values are replaced by placeholders (the key stays, so its presence is still
  compared): timestamps, durations, session ids and files, UI request ids, the mock's port, the
  temporary working/agent/home directories.
- Floats are rounded to 12 significant digits (docs/decisions.md D7: byte-exact JavaScript float formatting
  is not required, so `0.00030000000000000003` and `0.0003` are the same number here).
- Each run of `message_update` frames of one content block becomes one frame: the event types in
  order (consecutive deltas counted as one), the concatenated deltas, the block's end payload, and
  of the last partial snapshot only its keys and the block being streamed (the rest of a snapshot
  is run-dependent: pi serializes the shared partial object after later SSE events changed it).
  rho may merge deltas under back-pressure (docs/decisions.md D15), so the number of delta frames is not
  compared; their concatenation is.
- Each run of `tool_execution_update` frames of one tool call becomes one frame with the keys the
  partial results carried: how many there are and how much output each holds depends on how the
  child's output was chunked, which differs from run to run.
"""

from __future__ import annotations

import re
from typing import Any

PLACEHOLDER_KEYS = {
    "timestamp": "<timestamp>",
    "duration": "<duration>",
    "ttft": "<ttft>",
    "sessionId": "<sessionId>",
    "sessionFile": "<sessionFile>",
    # Session entry ids are random in both agents.
    "firstKeptEntryId": "<entryId>",
    "entryId": "<entryId>",
    "fromId": "<entryId>",
}

_PORT = re.compile(r"127\.0\.0\.1:\d+")
_TMP = re.compile(r"/tmp/rho-compare-(?:pi|rho)-[A-Za-z0-9_]+")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


class Scrubber:
    def __init__(self, cwd: str, agent_dir: str, base_url: str):
        root = cwd.rsplit("/", 1)[0]
        self.pairs = [
            (cwd, "<CWD>"),
            (agent_dir, "<AGENT_DIR>"),
            (root + "/home", "<HOME>"),
            (root, "<TMP>"),
            (base_url, "<BASE_URL>"),
        ]

    def text(self, s: str) -> str:
        for old, new in self.pairs:
            if old:
                s = s.replace(old, new)
        s = _TMP.sub("<TMP>", s)
        return _PORT.sub("127.0.0.1:<PORT>", s)

    def value(self, v: Any, key: str | None = None, parent_type: str | None = None) -> Any:
        if key in PLACEHOLDER_KEYS and isinstance(v, (int, float, str)):
            return PLACEHOLDER_KEYS[key]
        if key == "id" and parent_type == "extension_ui_request":
            return "<id>"
        if isinstance(v, dict):
            ptype = v.get("type") if isinstance(v.get("type"), str) else None
            return {k: self.value(x, k, ptype) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(x, None, None) for x in v]
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, float):
            if v.is_integer():
                return int(v)
            return float(f"{v:.12g}")
        return v


_BLOCK_OF = {
    "text_start": "text", "text_delta": "text", "text_end": "text",
    "thinking_start": "thinking", "thinking_delta": "thinking", "thinking_end": "thinking",
    "toolcall_start": "toolcall", "toolcall_delta": "toolcall", "toolcall_end": "toolcall",
}


def _merge_updates(run: list[dict[str, Any]]) -> dict[str, Any]:
    first = run[0]["assistantMessageEvent"]
    kinds: list[str] = []
    deltas = []
    end: dict[str, Any] = {}
    last_partial = None
    for fr in run:
        ev = fr["assistantMessageEvent"]
        t = ev.get("type")
        label = t.split("_", 1)[1] if isinstance(t, str) and "_" in t else str(t)
        if not kinds or kinds[-1] != label:
            kinds.append(label)
        if "delta" in ev:
            deltas.append(ev["delta"] if isinstance(ev["delta"], str) else str(ev["delta"]))
        for k in ("content", "toolCall"):
            if k in ev:
                end[k] = ev[k]
        if "partial" in ev:
            last_partial = ev["partial"]
        elif "message" in fr:
            last_partial = fr["message"]
    merged: dict[str, Any] = {
        "type": "message_update*",
        "block": _BLOCK_OF.get(first.get("type"), str(first.get("type"))),
        "contentIndex": first.get("contentIndex"),
        "events": kinds,
        "deltas": "".join(deltas),
    }
    merged.update(end)
    if isinstance(last_partial, dict):
        merged["partialKeys"] = list(last_partial.keys())
        content = last_partial.get("content")
        idx = first.get("contentIndex")
        if isinstance(content, list) and isinstance(idx, int) and 0 <= idx < len(content):
            merged["partialBlock"] = content[idx]
    merged["_frames"] = len(run)
    # Keys the frames themselves carried, outside the event (e.g. "message"), for shape checks.
    merged["_frameKeys"] = [k for k in run[-1].keys() if k != "_light"]
    merged["_eventKeys"] = sorted({k for fr in run for k in fr["assistantMessageEvent"].keys()})
    return merged


def normalize(frames: list[dict[str, Any] | None], raws: list[str | None], scrub: Scrubber) -> list[dict[str, Any]]:
    """Normalized frames, in order; non-JSON lines become `{"type": "<not-json>", "raw": ...}`."""
    out: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []

    def flush() -> None:
        if run:
            out.append(_merge_updates(run))
            run.clear()

    for obj, raw in zip(frames, raws):
        if obj is None:
            flush()
            out.append({"type": "<not-json>", "raw": scrub.text(raw or "")})
            continue
        obj = scrub.value(obj)
        if obj.get("type") == "message_update" and isinstance(obj.get("assistantMessageEvent"), dict):
            ev = obj["assistantMessageEvent"]
            block = _BLOCK_OF.get(ev.get("type"))
            if run:
                prev = run[-1]["assistantMessageEvent"]
                same = (_BLOCK_OF.get(prev.get("type")) == block and prev.get("contentIndex") == ev.get("contentIndex")
                        and not str(prev.get("type")).endswith("_end"))
                if not same:
                    flush()
            run.append(obj)
            if str(ev.get("type")).endswith("_end"):
                flush()
            continue
        flush()
        if obj.get("type") == "tool_execution_update" and out and out[-1].get("type") == "tool_execution_update*" \
                and out[-1].get("toolCallId") == obj.get("toolCallId"):
            prev = out[-1]
            pr = obj.get("partialResult")
            for k in (pr.keys() if isinstance(pr, dict) else []):
                if k not in prev["partialResultKeys"]:
                    prev["partialResultKeys"].append(k)
            prev["_frames"] += 1
            continue
        if obj.get("type") == "tool_execution_update":
            pr = obj.get("partialResult")
            obj = {"type": "tool_execution_update*", "toolCallId": obj.get("toolCallId"), "toolName": obj.get("toolName"),
                   "args": obj.get("args"), "partialResultKeys": list(pr.keys()) if isinstance(pr, dict) else [],
                   "_frames": 1}
        out.append(obj)
    flush()
    return out


def without_declared_prompt(frames: list[dict[str, Any] | None], raws: list[str | None]
                            ) -> tuple[list[dict[str, Any] | None], list[str | None]]:
    """rho's frames without the `role: "system"` messages that declare its prompt and tools, as
    pi 1.6 writes them (docs/session-format.md; pi 0.73 has no such message): their
    message_start/message_end frames go, they leave every `messages` list, and get_state's
    messageCount no longer counts them. DIFFERENCES.md, "declared-prompt"."""
    out: list[dict[str, Any] | None] = []
    out_raws: list[str | None] = []
    declared = 0

    def is_system(m: Any) -> bool:
        return isinstance(m, dict) and m.get("role") == "system"

    def strip(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: ([strip(x) for x in val if not is_system(x)] if k == "messages" and isinstance(val, list)
                        else strip(val)) for k, val in v.items()}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v

    for obj, raw in zip(frames, raws):
        if obj is None:
            out.append(obj)
            out_raws.append(raw)
            continue
        if obj.get("type") in ("message_start", "message_end") and is_system(obj.get("message")):
            if obj.get("type") == "message_end":
                declared += 1
            continue
        obj = strip(obj)
        data = obj.get("data")
        if obj.get("type") == "response" and obj.get("command") == "get_state" and isinstance(data, dict) \
                and isinstance(data.get("messageCount"), int):
            data["messageCount"] -= declared
        out.append(obj)
        out_raws.append(raw)
    return out, out_raws


def signature(frame: dict[str, Any]) -> str:
    """What aligns two frames: the type plus what tells frames of one type apart."""
    t = frame.get("type")
    if t == "response":
        # The id is the host's own correlation key, the same for both agents.
        rid = f":{frame['id']}" if "id" in frame else ""
        return f"response:{frame.get('command')}:{'ok' if frame.get('success') else 'err'}{rid}"
    if t in ("message_start", "message_end"):
        msg = frame.get("message") if isinstance(frame.get("message"), dict) else {}
        return f"{t}:{msg.get('role')}"
    if t == "message_update*":
        return f"update:{frame.get('block')}:{frame.get('contentIndex')}"
    if t in ("tool_execution_start", "tool_execution_update*", "tool_execution_end"):
        return f"{t}:{frame.get('toolName')}"
    return str(t)


def scrub_request(req: dict[str, Any], scrub: Scrubber) -> dict[str, Any]:
    """A recorded model request with run-dependent parts replaced (dates in prompts too)."""
    r = scrub.value(req)
    headers = r.get("headers", {})
    for h in ("content-length", "host"):
        if h in headers:
            headers[h] = f"<{h}>"
    body = r.get("body")
    if isinstance(body, dict):
        r["body"] = _scrub_dates(body)
    return r


def _scrub_dates(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _scrub_dates(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_scrub_dates(x) for x in v]
    if isinstance(v, str):
        return _DATE.sub("<DATE>", v)
    return v
