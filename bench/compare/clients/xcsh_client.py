#!/usr/bin/env python3
"""Drives rho through xcsh's Python RPC client (`xcsh-rpc`, package `xcsh_rpc`) with its default options.

    XCSH_RPC_VENV=~/.cache/xcsh/venv python3 bench/compare/clients/xcsh_client.py [--venv DIR] [--rho PATH]
        [--mock PATH] [--timeout S] [--frames FILE] [--keep]

xcsh-rpc is not vendored here. Install it into a virtualenv of its own, outside this repository
(it needs nothing beyond the standard library), for example:

    mkdir -p ~/.cache/xcsh && cd ~/.cache/xcsh
    git clone --depth 1 https://github.com/f5-sales-demo/xcsh
    python3 -m venv venv && venv/bin/pip install ./xcsh/python/xcsh-rpc

The venv is `--venv`, else `$XCSH_RPC_VENV`; this script runs itself again under that venv's
Python. Without either it uses the running interpreter, which must then import `xcsh_rpc`.

What it does: starts a rho-mock-llm (runner.py's MockServer) with SCRIPT below, writes a
models.json with a custom provider `mock` pointing at it into a fresh agent dir
(RHO_CODING_AGENT_DIR; its settings.json sets `compaction.keepRecentTokens: 1`, so that compact
has something to summarize), with a fresh HOME and working directory, and drives
`target/release/rho` through xcsh's `RpcClient(executable=<rho>, provider="mock",
model="mock-model")`. Every other option keeps its default, so the client starts
`rho --mode rpc --provider mock --model mock-model --no-title` (its `rpc_defaults` add
`--no-title`): rho then writes the cumulative `message_update` shape (docs/decisions.md D19),
the only one xcsh's parser accepts.

Steps: start (waits for rho's `ready`), get_state, prompt_and_wait (a plain reply),
prompt_and_wait (a reply that calls `read`), set_todos, prompt_and_wait with the todos open (rho's
reminders are turns of the same run, D20), clear_todos, prompt + steer + follow_up +
wait_for_idle, get_last_assistant_text, bash, get_messages, get_session_stats, compact,
get_messages after it, new_session, stop. Each step prints one line, `ok` or `threw`, with what
it saw; XCSH_CLIENT_TRACE=1 adds the traceback of a step that threw.

Beyond what each call returns it checks the frames themselves, observed without changing what
the client does: every frame rho writes goes through xcsh's `parse_notification` (responses
through the client's own correlation), and a frame that makes it raise is printed with the
error (the client's reader thread ends on such a frame, so every later call fails). It also
checks that every `message_update` carried `message` and `assistantMessageEvent.partial`, that
each prompt got exactly one `agent_end` and then `agent_settled` (D20), and that no unmatched
error response or listener error was recorded. `--frames FILE` writes every frame as JSONL.

The exit status is 0 only when every step and check passed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
COMPARE = HERE.parent
REPO = COMPARE.parent.parent

MODELS = [
    {"id": "mock-model", "name": "Mock Model", "reasoning": False, "input": ["text"], "contextWindow": 200000,
     "maxTokens": 8192, "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}},
]

# Markers in the prompts pick the special turns; a turn without `repeat` is used once, so a
# marker still in the history later falls through to the plain reply.
SCRIPT = {"turns": [
    {"match": {"bodyContains": "READ-TOOL"}, "text": "Reading the notes.",
     "toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}]},
    {"match": {"bodyContains": "SLOW-STEER"}, "text": "A slow reply that streams for a while. " * 6,
     "chunkSize": 4, "chunkDelayMs": 30},
    {"text": "Mock reply.", "repeat": 1000},
]}

NOTES = "alpha\nbeta\n"


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--venv", type=Path, default=Path(os.environ["XCSH_RPC_VENV"]).expanduser()
                    if os.environ.get("XCSH_RPC_VENV") else None,
                    help="virtualenv with xcsh-rpc installed (default: $XCSH_RPC_VENV)")
    ap.add_argument("--rho", type=Path, default=REPO / "target" / "release" / "rho")
    ap.add_argument("--mock", type=Path, default=REPO / "target" / "release" / "rho-mock-llm")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per prompt wait")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (agent dir, session files)")
    ap.add_argument("--frames", type=Path, help="write every frame rho sent (responses too) to this JSONL file")
    return ap.parse_args()


def reexec_in_venv(venv: Path | None) -> None:
    """Run this script under the venv's Python unless it already runs there."""
    if venv is None or os.environ.get("_XCSH_CLIENT_IN_VENV") == "1":
        return
    py = venv / "bin" / "python"
    if not py.exists():
        sys.exit(f"xcsh_client: {py} does not exist (is {venv} a virtualenv with xcsh-rpc?)")
    os.environ["_XCSH_CLIENT_IN_VENV"] = "1"
    os.execv(str(py), [str(py), str(Path(__file__).resolve()), *sys.argv[1:]])


class Steps:
    def __init__(self) -> None:
        self.failed: list[str] = []

    def run(self, name: str, fn: Callable[[], str]) -> Any:
        t0 = time.monotonic()
        try:
            note = fn()
        except Exception as exc:  # noqa: BLE001 - every failure is a result here
            ms = (time.monotonic() - t0) * 1000
            print(f"{name:<34} threw  {type(exc).__name__}: {str(exc)[:600]}  ({ms:.0f} ms)", flush=True)
            if os.environ.get("XCSH_CLIENT_TRACE"):
                traceback.print_exc()
            self.failed.append(name)
            return None
        ms = (time.monotonic() - t0) * 1000
        print(f"{name:<34} ok     {note}  ({ms:.0f} ms)", flush=True)
        return note

    def check(self, name: str, ok: bool, note: str) -> None:
        print(f"{name:<34} {'ok    ' if ok else 'FAILED'} {note}", flush=True)
        if not ok:
            self.failed.append(name)


def expect(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def main() -> int:
    a = parse_args()
    reexec_in_venv(a.venv)
    try:
        import xcsh_rpc
        from xcsh_rpc import RpcClient
        import xcsh_rpc.client as xcsh_client_module
    except ImportError as exc:
        sys.exit(f"xcsh_client: cannot import xcsh_rpc ({exc}); set XCSH_RPC_VENV or --venv (see the docstring)")
    sys.path.insert(0, str(COMPARE))
    from runner import MockServer  # noqa: E402

    for b in (a.rho, a.mock):
        if not b.exists():
            sys.exit(f"xcsh_client: {b} is missing")

    # Every frame goes through the client module's parse_notification: record each one, and the
    # frame that makes it raise (the client's reader thread then ends with that error).
    frames: list[dict[str, Any]] = []
    parse_failures: list[tuple[dict[str, Any], str]] = []
    original_parse = xcsh_client_module.parse_notification
    lock = threading.Lock()

    def record_frame(payload: dict[str, Any]) -> None:
        # Only what the reader thread got from rho: the client parses each frame twice there (for
        # itself and for its listeners), and parses the stored events again when a wait returns.
        if threading.current_thread().name != "xcsh-rpc-stdout":
            return
        with lock:
            if not frames or frames[-1] is not payload:
                frames.append(payload)

    def recording_parse(payload):  # type: ignore[no-untyped-def]
        record_frame(payload)
        try:
            return original_parse(payload)
        except Exception as exc:
            with lock:
                if not parse_failures or parse_failures[-1][0] is not payload:
                    parse_failures.append((payload, f"{type(exc).__name__}: {exc}"))
            raise

    xcsh_client_module.parse_notification = recording_parse

    tmp = Path(tempfile.mkdtemp(prefix="rho-xcsh-"))
    cwd, agent, home, mockdir = tmp / "work", tmp / "agent", tmp / "home", tmp / "mock"
    for d in (cwd, agent, home, mockdir):
        d.mkdir(parents=True)
    (cwd / "notes.txt").write_text(NOTES)
    mock = MockServer(a.mock, SCRIPT, mockdir)
    models = {"providers": {"mock": {"baseUrl": mock.url, "api": "anthropic-messages", "apiKey": "test-key",
                                     "models": MODELS}}}
    (agent / "models.json").write_text(json.dumps(models, indent=2))
    # keep almost nothing of the recent conversation, so that compact has something to summarize
    (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}, indent=2))
    env = {"HOME": str(home), "RHO_CODING_AGENT_DIR": str(agent), "LANG": "C.UTF-8", "TERM": "dumb"}

    client = RpcClient(executable=str(a.rho), provider="mock", model="mock-model", cwd=cwd, env=env)
    # responses do not go through parse_notification: record them on their way in
    original_response = client._handle_response  # noqa: SLF001

    def recording_response(payload):  # type: ignore[no-untyped-def]
        record_frame(payload)
        return original_response(payload)

    client._handle_response = recording_response  # type: ignore[method-assign]  # noqa: SLF001
    print(f"xcsh-rpc {getattr(xcsh_rpc, '__version__', '(no __version__)')} from {Path(xcsh_rpc.__file__).parent}")
    print(f"command: {' '.join(client.command)}")
    s = Steps()

    def frame_index() -> int:
        with lock:
            return len(frames)

    def settle(start: int) -> str:
        """Waits for the prompt's agent_settled (docs/decisions.md D20) after frame `start`; checks
        that exactly one agent_end came before it."""
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            with lock:
                seen = frames[start:]
            types = [f.get("type") for f in seen]
            if "agent_settled" in types:
                ends = types[: types.index("agent_settled")].count("agent_end")
                expect(ends == 1, f"{ends} agent_end before agent_settled")
                return "1 agent_end, then agent_settled"
            time.sleep(0.02)
        raise AssertionError("no agent_settled within 5 s of agent_end")

    def step_start() -> str:
        client.start()
        return "ready received"

    def step_get_state() -> str:
        st = client.get_state()
        expect(st.model is not None and st.model.id == "mock-model", f"model {st.model}")
        expect(not st.is_streaming, "isStreaming")
        return (f"model={st.model.provider}/{st.model.id} thinking={st.thinking_level} "
                f"interrupt={st.interrupt_mode} tools={[t.name for t in st.dump_tools]}")

    def step_prompt_plain() -> str:
        i0 = frame_index()
        t = client.prompt_and_wait("Say something.", timeout=a.timeout)
        expect(t.assistant_text == "Mock reply.", f"assistant text {t.assistant_text!r}")
        return f"text={t.assistant_text!r} events={len(t.events)} messages={len(t.messages)}; {settle(i0)}"

    def step_prompt_tool() -> str:
        i0 = frame_index()
        t = client.prompt_and_wait("READ-TOOL: read notes.txt", timeout=a.timeout)
        kinds = [e.type for e in t.events]
        expect("tool_execution_start" in kinds and "tool_execution_end" in kinds, f"tool events {kinds}")
        end = next(e for e in t.events if e.type == "tool_execution_end")
        expect(end.tool_name == "read" and not end.is_error, f"tool_execution_end {end}")
        text = json.dumps(end.result)
        expect("alpha" in text, f"read result {text[:200]}")
        expect(t.assistant_text == "Mock reply.", f"assistant text {t.assistant_text!r}")
        roles = [m.get("role") for m in t.messages]
        return f"tool=read isError={end.is_error} roles={roles} text={t.assistant_text!r}; {settle(i0)}"

    def step_set_todos() -> str:
        phases = client.set_todos(["Check the notes", "Write the summary"])
        tasks = [(x.content, x.status) for p in phases for x in p.tasks]
        expect(len(tasks) == 2, f"tasks {tasks}")
        st = client.get_state()
        expect(len([x for p in st.todo_phases for x in p.tasks]) == 2, f"get_state todoPhases {st.todo_phases}")
        return f"phases={len(phases)} tasks={tasks}"

    def step_prompt_with_todos() -> str:
        # with tasks open, rho reminds the model within the same run (docs/decisions.md D20)
        i0 = frame_index()
        t = client.prompt_and_wait("Go on.", timeout=a.timeout)
        reminders = sum(1 for e in t.events if e.type == "todo_reminder")
        note = settle(i0)
        st = client.get_state()
        expect(not st.is_streaming, "still streaming after agent_settled")
        return f"todo_reminder={reminders} text={t.assistant_text!r}; {note}; idle"

    def step_clear_todos() -> str:
        phases = client.clear_todos()
        return f"phases={len(phases)}"

    def step_steer_follow_up() -> str:
        i0 = frame_index()
        client.prompt("SLOW-STEER: take your time")
        time.sleep(0.3)
        client.steer("Steering message.")
        client.follow_up("Follow-up message.")
        client.wait_for_idle(timeout=a.timeout)
        # wait_for_idle returns at the first agent_end; the steer and the follow-up belong to that run
        note = settle(i0)
        st = client.get_state()
        msgs = client.get_messages()
        users = [m.get("content") for m in msgs if m.get("role") == "user"]
        texts = json.dumps(users)
        expect("Steering message." in texts and "Follow-up message." in texts, f"user messages {texts[-300:]}")
        expect(not st.is_streaming, "still streaming after wait_for_idle")
        return f"steer and follow_up delivered in the run; {note}; queued={st.queued_message_count}"

    def step_last_text() -> str:
        text = client.get_last_assistant_text()
        expect(text == "Mock reply.", f"text {text!r}")
        return f"text={text!r}"

    def step_bash() -> str:
        r = client.bash("echo from-bash")
        expect(r.output == "from-bash\n" and r.exit_code == 0 and not r.cancelled, f"bash {r}")
        return f"output={r.output!r} exitCode={r.exit_code} totalLines={r.total_lines}"

    counts: dict[str, int] = {}

    def step_get_messages() -> str:
        msgs = client.get_messages()
        counts["before-compact"] = len(msgs)
        roles = [m.get("role") for m in msgs]
        expect("bashExecution" in roles and "toolResult" in roles, f"roles {roles}")
        return f"{len(msgs)} messages, roles={sorted(set(roles))}"

    def step_stats() -> str:
        st = client.get_session_stats()
        expect(st.user_messages >= 5 and st.tool_calls == 1 and st.tool_results == 1, f"stats {st}")
        return (f"user={st.user_messages} assistant={st.assistant_messages} toolCalls={st.tool_calls} "
                f"tokens.total={st.tokens.total} cost={st.cost:.6f}")

    def step_compact() -> str:
        r = client.compact()
        expect(r.summary != "" and r.tokens_before > 0 and r.first_kept_entry_id, f"compaction {r}")
        return f"summary={r.summary[:40]!r} tokensBefore={r.tokens_before}"

    def step_after_compact() -> str:
        msgs = client.get_messages()
        roles = [m.get("role") for m in msgs]
        expect(roles[:1] == ["compactionSummary"], f"roles {roles}")
        expect(len(msgs) < counts.get("before-compact", 0), f"{len(msgs)} messages, {counts} before")
        return f"{counts.get('before-compact')} messages before, now {roles}"

    def step_new_session() -> str:
        r = client.new_session()
        expect(not r.cancelled, "cancelled")
        msgs = client.get_messages()
        expect(len(msgs) == 0, f"{len(msgs)} messages after new_session")
        return f"cancelled={r.cancelled}, 0 messages"

    def step_stop() -> str:
        client.stop()
        return "stopped"

    try:
        s.run("start", step_start)
        s.run("get_state", step_get_state)
        s.run("prompt_and_wait (plain)", step_prompt_plain)
        s.run("prompt_and_wait (read tool)", step_prompt_tool)
        s.run("set_todos", step_set_todos)
        s.run("prompt_and_wait (todos open)", step_prompt_with_todos)
        s.run("clear_todos", step_clear_todos)
        s.run("prompt + steer + follow_up", step_steer_follow_up)
        s.run("get_last_assistant_text", step_last_text)
        s.run("bash", step_bash)
        s.run("get_messages", step_get_messages)
        s.run("get_session_stats", step_stats)
        s.run("compact", step_compact)
        s.run("get_messages (after compact)", step_after_compact)
        s.run("new_session", step_new_session)
    finally:
        s.run("stop", step_stop)
        mock.stop()

    # Frame-level checks
    for payload, err in parse_failures:
        print(f"parse error on frame: {json.dumps(payload)[:2000]}\n    {err}")
    s.check("frames parsed", not parse_failures, f"{len(frames)} frames, {len(parse_failures)} parse error(s)")
    updates = [f for f in frames if f.get("type") == "message_update"]
    kinds_seen: dict[str, int] = {}
    for f in frames:
        kinds_seen[f.get("type", "?")] = kinds_seen.get(f.get("type", "?"), 0) + 1
    delta_shaped = [f for f in updates
                    if "message" not in f or "partial" not in (f.get("assistantMessageEvent") or {})]
    s.check("message_update shape", bool(updates) and not delta_shaped,
            f"{len(updates)} message_update frames, {len(delta_shaped)} without message or "
            f"assistantMessageEvent.partial" + (f"; first: {json.dumps(delta_shaped[0])[:400]}" if delta_shaped else ""))
    settled = kinds_seen.get("agent_settled", 0)
    ends = kinds_seen.get("agent_end", 0)
    s.check("agent_end / agent_settled", ends == settled == 4,
            f"{ends} agent_end, {settled} agent_settled for 4 prompts")
    unknown = sorted({f["type"] for f in frames if f.get("type") not in {
        "response", "ready", "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update",
        "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end", "todo_reminder",
        "todo_auto_clear", "auto_compaction_start", "auto_compaction_end", "extension_ui_request",
        "extension_error"}})
    print(f"{'frames by type':<34} {json.dumps(kinds_seen)}")
    print(f"{'frames xcsh passes as unknown':<34} {unknown}")
    perr = [str(e) for e in client.protocol_errors]
    lerr = [f"{e.listener_kind}/{e.source_type}: {e.error}" for e in client.listener_errors]
    s.check("no unmatched error responses", not perr, json.dumps(perr)[:600])
    s.check("no listener errors", not lerr, json.dumps(lerr)[:600])

    if a.frames:
        with open(a.frames, "w") as fh:
            for f in frames:
                fh.write(json.dumps(f) + "\n")
    if a.keep:
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    if s.failed:
        print(f"FAILED: {', '.join(s.failed)}")
        return 1
    print("all steps passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
