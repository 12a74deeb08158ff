"""Runs one agent (pi or rho) in RPC mode against a rho-mock-llm server and records what happens.

One `run_agent` call: start rho-mock-llm with the scenario's script and a request record file,
write the agent's models.json (and settings) into a fresh agent dir, start the agent in a fresh
working directory with `--mode rpc --no-session`, play the scenario's steps on stdin, and collect
every stdout frame with its arrival time, the requests the agent sent to the model, the agent's
peak RSS (VmHWM from /proc), stdout byte count, stderr and the exit status.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Key order of the model entry follows pi's models.json documentation.
DEFAULT_MODEL = {
    "id": "mock-model",
    "name": "Mock Model",
    "reasoning": False,
    "input": ["text"],
    "contextWindow": 200000,
    "maxTokens": 8192,
    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
}


@dataclass
class Agent:
    """How to start one agent."""

    name: str  # "pi" or "rho"
    argv: list[str]  # the program (and any fixed leading args)
    dir_env: str  # PI_CODING_AGENT_DIR / RHO_CODING_AGENT_DIR
    extra_env: dict[str, str] = field(default_factory=dict)


@dataclass
class Frame:
    t: float  # seconds since spawn
    obj: dict[str, Any] | None  # parsed frame (None when the line was not JSON)
    raw_len: int
    raw: str | None = None  # the line text when it was not JSON


@dataclass
class RunResult:
    agent: str
    scenario: str
    frames: list[Frame]
    requests: list[dict[str, Any]]
    stdout_bytes: int
    stdout_lines: int
    peak_rss_kb: int | None
    exit_code: int | None
    stderr: str
    wall_s: float
    cwd: str
    agent_dir: str
    base_url: str
    files: dict[str, str | None]
    error: str | None = None
    marks: dict[str, float] = field(default_factory=dict)

    def first_time(self, ftype: str) -> float | None:
        for f in self.frames:
            if f.obj is not None and f.obj.get("type") == ftype:
                return f.t
        return None

    def last_time(self, ftype: str) -> float | None:
        found = None
        for f in self.frames:
            if f.obj is not None and f.obj.get("type") == ftype:
                found = f.t
        return found


def read_vmhwm(pid: int) -> int | None:
    """The process's peak resident set size in kB (VmHWM), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


class MockServer:
    """rho-mock-llm as a child process: the base URL comes from its first stdout line."""

    def __init__(self, binary: Path, script: dict[str, Any], workdir: Path):
        self.script_path = workdir / "script.json"
        self.record_path = workdir / "requests.jsonl"
        self.script_path.write_text(json.dumps(script))
        self.stderr_path = workdir / "mock.stderr"
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            [str(binary), "--script", str(self.script_path), "--record", str(self.record_path)],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "RUST_LOG": "warn"},
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode().strip()
        if not line.startswith("http://"):
            self.stop()
            raise RuntimeError(f"rho-mock-llm did not print its address: {line!r}; "
                               f"stderr: {self.stderr_path.read_text()[-2000:]}")
        self.url = line

    def requests(self) -> list[dict[str, Any]]:
        if not self.record_path.exists():
            return []
        out = []
        for line in self.record_path.read_text().splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()


# A message_update line starts with the event's type, contentIndex and (for deltas) the delta,
# in both agents' key order; rho's (pi 1.6's shape, docs/decisions.md D19) has the reply's
# `usage` object (two levels deep) before the event. Light mode keeps only these (and the usage)
# and drops the partial snapshots and the rest of the frame.
_UPDATE_HEAD = re.compile(
    rb'^\{"type":"message_update",(?:"usage":(\{(?:[^{}]|\{[^{}]*\})*\}),)?"assistantMessageEvent":\{"type":"(\w+)"'
    rb'(?:,"contentIndex":(\d+))?(?:,"delta":("(?:[^"\\]|\\.)*"))?'
)


class StdoutReader(threading.Thread):
    """Reads the agent's stdout in large chunks, splits lines, timestamps them and wakes waiters."""

    def __init__(self, stream, t0: float, light: bool):
        super().__init__(daemon=True)
        self.stream = stream
        self.t0 = t0
        self.light = light
        self.frames: list[Frame] = []
        self.bytes = 0
        self.lines = 0
        self.cond = threading.Condition()
        self.eof = False

    def run(self) -> None:
        fd = self.stream.fileno()
        buf = b""
        while True:
            chunk = os.read(fd, 1 << 20)
            now = time.monotonic() - self.t0
            if not chunk:
                break
            self.bytes += len(chunk)
            buf += chunk
            if b"\n" not in chunk:
                continue
            parts = buf.split(b"\n")
            buf = parts.pop()
            new = [self._frame(p, now) for p in parts]
            with self.cond:
                self.lines += len(parts)
                self.frames.extend(new)
                self.cond.notify_all()
        with self.cond:
            if buf:
                self.lines += 1
                self.frames.append(self._frame(buf, time.monotonic() - self.t0))
            self.eof = True
            self.cond.notify_all()

    def _frame(self, line: bytes, now: float) -> Frame:
        if self.light and line.startswith(b'{"type":"message_update"'):
            m = _UPDATE_HEAD.match(line)
            if m:
                ev: dict[str, Any] = {"type": m.group(2).decode()}
                if m.group(3) is not None:
                    ev["contentIndex"] = int(m.group(3))
                if m.group(4) is not None:
                    ev["delta"] = json.loads(m.group(4))
                frame: dict[str, Any] = {"type": "message_update"}
                if m.group(1) is not None:
                    frame["usage"] = json.loads(m.group(1))
                frame.update({"assistantMessageEvent": ev, "_light": True})
                return Frame(now, frame, len(line))
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                return Frame(now, None, len(line), line.decode(errors="replace")[:2000])
            return Frame(now, obj, len(line))
        except ValueError:
            return Frame(now, None, len(line), line.decode(errors="replace")[:2000])


def matches(pattern: Any, value: Any) -> bool:
    """A partial match: every key of a pattern object must match; other values compare equal."""
    if isinstance(pattern, dict):
        if not isinstance(value, dict):
            return False
        return all(k in value and matches(v, value[k]) for k, v in pattern.items())
    return pattern == value


class StepError(Exception):
    pass


def write_agent_dir(agent: Agent, agent_dir: Path, base_url: str, scenario: dict[str, Any]) -> None:
    model = {**DEFAULT_MODEL, **scenario.get("model", {})}
    models = {
        "providers": {
            "mock": {
                "baseUrl": base_url,
                "api": "anthropic-messages",
                "apiKey": "test-key",
                "models": [model],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2))
    # pi reads its settings from <agent dir>/settings.json; rho gets --setting flags instead.
    if agent.name == "pi":
        settings = scenario.get("piSettings", {})
        (agent_dir / "settings.json").write_text(json.dumps(settings, indent=2))


def agent_args(agent: Agent, scenario: dict[str, Any]) -> list[str]:
    model_id = scenario.get("model", {}).get("id", DEFAULT_MODEL["id"])
    args = [*agent.argv, "--mode", "rpc", "--no-session", "--model", f"mock/{model_id}"]
    if agent.name == "rho":
        for s in scenario.get("rhoSettings", []):
            args += ["--setting", s]
    args += scenario.get(f"{agent.name}Args", [])
    return args


def run_agent(agent: Agent, scenario: dict[str, Any], mock_bin: Path, keep_dir: Path | None = None,
              light: bool | None = None) -> RunResult:
    """Runs one scenario with one agent and returns everything recorded."""
    light = scenario.get("light", False) if light is None else light
    root = Path(tempfile.mkdtemp(prefix=f"rho-compare-{agent.name}-"))
    cwd, agent_dir, home, mockdir = root / "work", root / "agent", root / "home", root / "mock"
    for d in (cwd, agent_dir, home, mockdir):
        d.mkdir()
    for rel, text in scenario.get("files", {}).items():
        p = cwd / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    mock = MockServer(mock_bin, scenario["script"], mockdir)
    write_agent_dir(agent, agent_dir, mock.url, scenario)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        agent.dir_env: str(agent_dir),
        **agent.extra_env,
    }
    stderr_path = root / "stderr.txt"
    stderr_fh = open(stderr_path, "wb")
    t0 = time.monotonic()
    proc = subprocess.Popen(agent_args(agent, scenario), cwd=cwd, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=stderr_fh, start_new_session=True)
    reader = StdoutReader(proc.stdout, t0, light)
    reader.start()
    peak = [0]
    stop_poll = threading.Event()

    def poll_rss() -> None:
        while not stop_poll.is_set():
            v = read_vmhwm(proc.pid)
            if v is not None:
                peak[0] = max(peak[0], v)
            stop_poll.wait(0.05)

    poller = threading.Thread(target=poll_rss, daemon=True)
    poller.start()
    marks: dict[str, float] = {}
    error = None
    cursor = 0
    timeout = float(scenario.get("timeoutS", 60))
    try:
        for step in scenario["steps"]:
            try:
                cursor = play_step(step, proc, reader, cursor, t0, timeout, marks)
            except (StepError, BrokenPipeError):
                # An optional wait that times out is not a failure: what it waited for is then
                # simply missing from the transcript, and the diff shows it.
                if not step.get("optional"):
                    raise
    except (StepError, BrokenPipeError) as e:
        error = f"{type(e).__name__}: {e}"
    # Settle: let trailing frames arrive, then read the peak and close stdin (both agents exit 0 on EOF).
    time.sleep(float(scenario.get("settleS", 0.2)))
    v = read_vmhwm(proc.pid)
    if v is not None:
        peak[0] = max(peak[0], v)
    try:
        assert proc.stdin is not None
        proc.stdin.close()
    except OSError:
        pass
    try:
        exit_code = proc.wait(10)
    except subprocess.TimeoutExpired:
        error = (error or "") + " did not exit within 10 s of stdin EOF; killed"
        os.killpg(proc.pid, signal.SIGKILL)
        exit_code = proc.wait()
    wall = time.monotonic() - t0
    stop_poll.set()
    reader.join(10)
    mock.stop()
    stderr_fh.close()
    files = {}
    for rel in scenario.get("checkFiles", []):
        p = cwd / rel
        files[rel] = p.read_text(errors="replace") if p.exists() else None
    result = RunResult(
        agent=agent.name,
        scenario=scenario["name"],
        frames=reader.frames,
        requests=mock.requests(),
        stdout_bytes=reader.bytes,
        stdout_lines=reader.lines,
        peak_rss_kb=peak[0] or None,
        exit_code=exit_code,
        stderr=stderr_path.read_text(errors="replace")[-20000:],
        wall_s=wall,
        cwd=str(cwd),
        agent_dir=str(agent_dir),
        base_url=mock.url,
        files=files,
        error=error,
        marks=marks,
    )
    if keep_dir is None:
        shutil.rmtree(root, ignore_errors=True)
    return result


def play_step(step: dict[str, Any], proc: subprocess.Popen, reader: StdoutReader, cursor: int,
              t0: float, timeout: float, marks: dict[str, float]) -> int:
    """Plays one step; returns the new wait cursor (index of the next frame a wait may match)."""
    assert proc.stdin is not None
    if "send" in step:
        proc.stdin.write((json.dumps(step["send"], separators=(",", ":")) + "\n").encode())
        proc.stdin.flush()
    elif "sendRaw" in step:
        proc.stdin.write(step["sendRaw"].encode())
        proc.stdin.flush()
    elif "sleepMs" in step:
        time.sleep(step["sleepMs"] / 1000)
    elif "wait" in step:
        pattern = step["wait"]
        deadline = time.monotonic() + float(step.get("timeoutS", timeout))
        with reader.cond:
            while True:
                for i in range(cursor, len(reader.frames)):
                    f = reader.frames[i]
                    if f.obj is not None and matches(pattern, f.obj):
                        if "mark" in step:
                            marks[step["mark"]] = f.t
                        return i + 1
                cursor = len(reader.frames)
                if reader.eof:
                    raise StepError(f"stdout closed while waiting for {json.dumps(pattern)}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StepError(f"timed out waiting for {json.dumps(pattern)}")
                reader.cond.wait(min(left, 0.5))
    elif "waitAll" in step:
        # Every pattern must appear after the cursor, in any order; the cursor moves past the last.
        patterns = step["waitAll"]
        deadline = time.monotonic() + float(step.get("timeoutS", timeout))
        with reader.cond:
            while True:
                found: list[int] = []
                for pattern in patterns:
                    idx = next((i for i in range(cursor, len(reader.frames))
                                if reader.frames[i].obj is not None and matches(pattern, reader.frames[i].obj)), None)
                    if idx is None:
                        break
                    found.append(idx)
                if len(found) == len(patterns):
                    return max(found) + 1
                if reader.eof:
                    raise StepError(f"stdout closed while waiting for all of {json.dumps(patterns)}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StepError(f"timed out waiting for all of {json.dumps(patterns)}")
                reader.cond.wait(min(left, 0.5))
    else:
        raise StepError(f"unknown step {step}")
    return cursor
