"""What `extensions.py` compares of one agent's run of an example: the dialogs and notices, tool
results, errors, commands, what the model was sent (against the agent's own prompt without
extensions, the two agents' own wording made one tag) and the session, with run-dependent values
scrubbed; and the differences between the two agents' views."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any


class Run:
    """One agent on one case: its frames, the model requests, its session entries and files."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.entries: list[dict[str, Any]] = []
        self.files: dict[str, str | None] = {}
        self.stderr = ""
        self.exit_code: int | None = None
        self.error: str | None = None
        self.paths: dict[str, str] = {}


# Each agent's own system prompt lines (tool lines, guidelines, the skills preamble), worded
# differently by design (DIFFERENCES.md, "Request differences"), as one tag per meaning: what an
# extension changes is then compared, not the two agents' wording.
OWN_LINES = [
    ("tool:edit", ("- edit: Make precise file edits", "- edit: Make surgical edits")),
    ("guide:bash", ("- Use bash for file operations like ls, rg, find", "- Use bash for file operations such as ls, rg and find.")),
    ("guide:explore", ("- Prefer grep/find/ls tools over bash", "- To explore files, prefer the grep, find and ls tools")),
    ("guide:read", ("- Use read to examine files instead of cat or sed.", "- Use read to look at files, rather than cat or sed.")),
    ("guide:edit", ("- Use edit for precise changes", "- Use edit for targeted changes",
                    "- When changing multiple separate locations in one file",
                    "- Each edits[].oldText is matched", "- Each edits[].oldText must exactly",
                    "- Keep edits[].oldText as small as possible")),
    ("guide:write", ("- Use write only for new files", "- Use write only to create new files")),
    ("skills", ("The following skills provide specialized instructions", "Use the read tool to load a skill's file",
                "When a skill file references a relative path", "Skills are specialized instructions for particular",
                "When a task matches a skill's description", "A relative path in a skill file is relative",
                "Resolve relative paths against the skill's directory", "<skills>", "</skills>")),
]
# rho's own lines with no counterpart in pi (its own tools, one guideline), pi's "(none)" for an
# empty tool list (rho's never is: its own tools stay), and pi 1.6.0's guideline of its own bash
# tool, which rho's bash does not have (an extension that registers pi's bash brings it to rho's
# prompt too).
OWN_ONLY = ("- todo_write:", "- ask:", "- task:", "- When you summarize what you did",
            "- Read a file with the read tool before you edit it.", "(none)",
            "- You can inspect PI_* environment variables")
OWN_TOOLS = {"todo_write", "ask", "task"}
# rho's guideline for find/grep/ls, as pi 0.73.1 worded it; pi 1.6.0 has none (--pi 1.6).
OWN_ONLY_PI16 = ("- To explore files, prefer the grep, find and ls tools",)


def tag_line(line: str, own_only: tuple[str, ...] = ()) -> str | None:
    """A prompt-delta line (`+text` / `-text`) with the agents' own wording made one tag."""
    sign, text = line[:1], line[1:]
    if text.startswith(OWN_ONLY + own_only):
        return None
    for tag, starts in OWN_LINES:
        if text.startswith(starts):
            return f"{sign}<{tag}>"
    return line


ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z")
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
HEX_ID = re.compile(r"\b[0-9a-f]{8}\b")


class Scrub:
    def __init__(self, run: Run, example_dir: Path):
        self.repl = sorted(
            [(run.paths["cwd"], "<cwd>"), (run.paths["agent"], "<agent>"), (run.paths["home"], "<home>"),
             (run.paths["root"], "<root>"), (str(example_dir), "<examples>")],
            key=lambda kv: -len(kv[0]),
        )

    def text(self, s: str) -> str:
        for a, b in self.repl:
            s = s.replace(a, b)
        return UUID.sub("<uuid>", ISO.sub("<time>", s))

    def value(self, v: Any, drop: set[str] = frozenset()) -> Any:
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if k in drop:
                    continue
                if k in ("timestamp", "id", "parentId", "toolCallId", "targetId", "responseId", "duration", "ttft"):
                    out[k] = "<x>"
                else:
                    out[k] = self.value(x, drop)
            return out
        if isinstance(v, list):
            return [self.value(x, drop) for x in v]
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, float):
            return round(v, 9)
        return v


def system_text(request: dict[str, Any]) -> str:
    system = request.get("body", {}).get("system")
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    return system or ""


def prompt_delta(text: str, baseline: str, own_only: tuple[str, ...] = ()) -> list[str]:
    """The lines an extension added to (+) or removed from (-) the agent's own system prompt,
    the agents' own wording made tags (once each). A tag both removed and added is one of the
    agent's own lines put in other words (an extension that registers pi's own tool brings pi's
    wording of its description and guidelines): no change of meaning, left out."""
    a = [line for line in baseline.splitlines() if not line.startswith("Current date")]
    b = [line for line in text.splitlines() if not line.startswith("Current date")]
    out: list[str] = []
    for d in difflib.ndiff(a, b):
        if d[:1] in "+-" and d[2:].strip():
            tagged = tag_line(d[:1] + d[2:], own_only)
            if tagged is not None and tagged not in out:
                out.append(tagged)
    reworded = {t[1:] for t in out if t.startswith("+<")} & {t[1:] for t in out if t.startswith("-<")}
    out = [t for t in out if t[1:] not in reworded]
    # Where a line sits depends on each agent's own lines around it: compared as a set.
    return sorted(out)


def is_summary_request(request: dict[str, Any]) -> bool:
    """A compaction or branch-summary request: each agent's own summarization prompt."""
    system = system_text(request)
    return "summarization assistant" in system or "context-summarization assistant" in system


def aspects(run: Run, scrub: Scrub, baseline: str, baseline_tools: set[str],
            own_only: tuple[str, ...] = (), whole_requests: bool = False) -> dict[str, Any]:
    frames = run.frames
    ui = [scrub.value(f, {"id"}) for f in frames if f.get("type") == "extension_ui_request"]
    tools = [
        scrub.value({k: f.get(k) for k in ("toolName", "result", "isError")})
        for f in frames if f.get("type") == "tool_execution_end"
    ]
    errors = [scrub.value({k: f.get(k) for k in ("extensionPath", "event", "error")})
              for f in frames if f.get("type") == "extension_error"]
    commands = []
    for f in frames:
        if f.get("type") == "response" and f.get("command") == "get_commands" and f.get("success"):
            # pi 1.6.0's own built-in extensions (`llama`, `mcp`: sourceInfo.source "builtin") are
            # not the example's (DIFFERENCES.md, pi 1.6.0).
            commands.append(sorted((c["name"], c.get("description")) for c in f["data"]["commands"]
                                   if c.get("source") == "extension"
                                   and (c.get("sourceInfo") or {}).get("source") != "builtin"))
    responses = [scrub.value({k: f.get(k) for k in ("command", "success", "error")})
                 for f in frames if f.get("type") == "response" and f.get("command") != "get_commands"]
    requests: list[Any] = []
    for r in run.requests:
        body = r.get("body", {})
        if is_summary_request(r):
            # Worded by each agent (DIFFERENCES.md): that a summary was asked for is compared.
            requests.append("<summary request>")
            continue
        if r.get("api", "anthropic-messages") != "anthropic-messages":
            # Another provider's API: which one, where, for which model; whole where the case says
            # the request is one an extension makes itself (ctx.modelRegistry.complete: pi-ai's
            # in both agents).
            other = {"api": r.get("api"), "path": r.get("path"), "model": body.get("model")}
            if whole_requests:
                other["body"] = scrub.value(body)
            requests.append(other)
            continue
        requests.append({
            "messages": scrub.value(strip_cache(strip_system(body.get("messages", [])))),
            "tools": tool_delta({t.get("name") for t in body.get("tools", []) or []}, baseline_tools),
            "system": prompt_delta(scrub.text(system_text(r)), baseline, own_only),
        })
    # pi 1.6.0 records the system prompt as a `system` message (DIFFERENCES.md, pi 1.6.0: not yet in
    # rho's sessions); what an extension does to the prompt is compared in the requests.
    # rho's checkpoints of the files `write` and `edit` change (`rho.checkpoint` custom entries,
    # README "Checkpoints and rewind") are rho's own: pi has no rewind to record them for.
    entries = [scrub.value(entry_view(e)) for e in run.entries
               if e.get("type") not in ("session",) and not is_system_entry(e)
               and e.get("customType") != "rho.checkpoint"]
    return {
        "ui": ui,
        "tools": tools,
        "errors": errors,
        "commands": commands,
        "responses": responses,
        "requests": requests,
        "session": entries,
        "files": {k: scrub.text(v) if v is not None else None for k, v in run.files.items()},
    }


def tool_delta(tools: set[str], baseline: set[str]) -> list[str]:
    """The tools an extension added (+) or took away (-): each agent's own set differs by design
    (rho's own tools are left out)."""
    return sorted(f"+{t}" for t in tools - baseline - OWN_TOOLS) + sorted(f"-{t}" for t in baseline - tools - OWN_TOOLS)


def strip_system(messages: list[Any]) -> list[Any]:
    """pi 1.6.0's leading `system` message, where a wire carries one in `messages`: the system
    prompt is compared as a delta."""
    if messages and isinstance(messages[0], dict) and messages[0].get("role") == "system":
        return messages[1:]
    return messages


def is_system_entry(e: dict[str, Any]) -> bool:
    return e.get("type") == "message" and (e.get("message") or {}).get("role") == "system"


def strip_cache(messages: list[Any]) -> list[Any]:
    """Anthropic cache markers are where each agent puts them: not an extension's doing."""
    out = []
    for m in messages:
        m = dict(m)
        if isinstance(m.get("content"), list):
            m["content"] = [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
                            for b in m["content"]]
        out.append(m)
    return out


def entry_view(e: dict[str, Any]) -> dict[str, Any]:
    """A session entry as the extension left it: what it says, not its bookkeeping."""
    kind = e.get("type")
    if kind == "message":
        m = e.get("message", {})
        view = {"type": kind, "role": m.get("role")}
        if m.get("role") in ("user", "toolResult", "custom"):
            view["content"] = m.get("content")
        if m.get("role") == "assistant":
            view["content"] = [c for c in m.get("content", []) if c.get("type") in ("text", "toolCall")]
        if m.get("role") == "toolResult":
            view["details"] = m.get("details")
            view["isError"] = m.get("isError")
        return view
    keep = {"custom": ("customType", "data"), "custom_message": ("customType", "content", "display", "details"),
            "session_info": ("name",), "label": ("label",), "compaction": ("summary",),
            "branch_summary": ("summary",), "model_change": ("provider", "modelId"),
            "thinking_level_change": ("thinkingLevel",)}.get(kind, ())
    return {"type": kind, **{k: e.get(k) for k in keep}}


def differences(pi: dict[str, Any], rho: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for aspect in pi:
        if pi[aspect] != rho[aspect]:
            a = json.dumps(pi[aspect], indent=1, ensure_ascii=False, sort_keys=True).splitlines()
            b = json.dumps(rho[aspect], indent=1, ensure_ascii=False, sort_keys=True).splitlines()
            diff = "\n".join(difflib.unified_diff(a, b, "pi", "rho", lineterm="", n=2))
            out.append((aspect, diff))
    return out


# ------------------------------------------------------------------------------------------------
