#!/usr/bin/env python3
"""Compare what rho and the reference pi 0.73.1 send and report on the OpenAI, Gemini and Bedrock
wires.

`compare.py` diffs whole RPC transcripts on the Anthropic wire. This script is separate and
narrower: each case in `wire_scenarios/` runs both agents in RPC mode against rho-mock-llm with a
models.json of the case's API (`openai-responses`, `openai-completions`, `google-generative-ai`),
then compares chosen values only: JSON pointers into the request bodies the mock recorded, and
into the last assistant message of the transcript.

    python3 bench/compare/wire.py [--case NAME] [--skip-build | --bin-dir DIR] [--pi-dir DIR]

A check is `{"request": N, "pointer": "/reasoning"}` (request N's body; N may be negative) or
`{"message": "/errorMessage"}`, or `{"request": N, "method": true}` / `{"request": N, "header": "name"}`
for what the mock recorded beside the body; `"expect": "differ"` with a `"why"` marks a difference rho makes
on purpose (the script then reports it as expected). A case may give `piModel` / `rhoModel` keys
merged into that agent's model entry (pi's catalog knowledge, e.g. `thinkingLevelMap`, that a
custom model lacks), `args` for both command lines, and `setup` files written outside the working
directory before the run (`{"path": …, "base64": …}`, for images the tools read), `env` for
both agents' environments, and `apiKey` for the models.json entry (a ChatGPT token for Codex).

Exit status: 0 when every check expected to match matches and every run finished, 1 otherwise.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import runner  # noqa: E402
from compare import build_rho, ensure_pi  # noqa: E402
from runner import Agent, RunResult, run_agent  # noqa: E402

BASE_PATH = {
    "anthropic-messages": "",
    "openai-completions": "/v1",
    "openai-responses": "/v1",
    "google-generative-ai": "/v1beta",
    "bedrock-converse-stream": "",
    "azure-openai-responses": "/openai/v1",
    "google-vertex": "",
    "openai-codex-responses": "/backend-api",
}
MISSING = "<absent>"


def log(msg: str) -> None:
    print(f"[wire] {msg}", file=sys.stderr, flush=True)


def write_agent_dir(agent: Agent, agent_dir: Path, base_url: str, case: dict[str, Any]) -> None:
    """models.json with the case's API (runner's own writes the Anthropic one)."""
    model = {**runner.DEFAULT_MODEL, **case.get("model", {}), **case.get(f"{agent.name}Model", {})}
    api = case["api"]
    models = {"providers": {"mock": {
        "baseUrl": base_url + BASE_PATH[api], "api": api, "apiKey": case.get("apiKey", "test-key"),
        "models": [model],
    }}}
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2))
    if agent.name == "pi":
        (agent_dir / "settings.json").write_text(json.dumps(case.get("piSettings", {}), indent=2))


def as_scenario(case: dict[str, Any]) -> dict[str, Any]:
    args = case.get("args", [])
    return {
        **case,
        "rhoArgs": [*args, *case.get("rhoArgs", [])],
        "piArgs": [*args, *case.get("piArgs", [])],
        "steps": case.get("steps") or [
            {"send": {"id": "p1", "type": "prompt", "message": case.get("prompt", "Go.")}},
            {"wait": {"type": "agent_end"}},
        ],
    }


def pointer(value: Any, path: str) -> Any:
    for part in [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]:
        if isinstance(value, list) and part.lstrip("-").isdigit():
            i = int(part)
            if -len(value) <= i < len(value):
                value = value[i]
                continue
            return MISSING
        if isinstance(value, dict) and part in value:
            value = value[part]
            continue
        return MISSING
    return value


def last_assistant(run: RunResult) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for f in run.frames:
        obj = f.obj or {}
        message = obj.get("message") or {}
        if obj.get("type") == "message_end" and message.get("role") == "assistant":
            found = message
    return found


def value_of(run: RunResult, check: dict[str, Any]) -> Any:
    if "message" in check:
        return pointer(last_assistant(run), check["message"])
    requests = run.requests
    n = check["request"]
    if not -len(requests) <= n < len(requests):
        return f"<no request {n}: {len(requests)} sent>"
    if check.get("method"):
        return requests[n].get("method")
    if "header" in check:
        return (requests[n].get("headers") or {}).get(check["header"].lower(), MISSING)
    return pointer(requests[n].get("body"), check["pointer"])


def short(value: Any) -> str:
    text = value if isinstance(value, str) and value == MISSING else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 110 else text[:107] + "..."


def run_case(case: dict[str, Any], pi: Agent, rho: Agent, mock: Path) -> tuple[int, list[str]]:
    """Runs one case with both agents; returns the number of unexpected results and the lines."""
    with tempfile.TemporaryDirectory(prefix="rho-wire-") as tmp:
        for f in case.get("setup", []):
            p = Path(f["path"].replace("$TMP", tmp))
            p.write_bytes(base64.b64decode(f["base64"]))
        scenario = json.loads(json.dumps(as_scenario(case)).replace("$TMP", tmp))
        env = case.get("env", {})
        agents = [Agent(a.name, a.argv, a.dir_env, {**a.extra_env, **env}) for a in (pi, rho)]
        runs = {a.name: run_agent(a, scenario, mock) for a in agents}
    bad = 0
    lines = [f"## {case['name']}: {case['title']}", ""]
    for name, run in runs.items():
        if run.error:
            bad += 1
            lines.append(f"- **{name} run failed**: {run.error}")
    lines += ["| check | pi | rho | verdict |", "| --- | --- | --- | --- |"]
    for check in case["checks"]:
        if "message" in check:
            what = f"message {check['message']}"
        elif check.get("method"):
            what = f"request {check['request']} method"
        elif "header" in check:
            what = f"request {check['request']} header {check['header']}"
        else:
            what = f"request {check['request']} {check['pointer']}"
        pv, rv = value_of(runs["pi"], check), value_of(runs["rho"], check)
        same = pv == rv
        if check.get("expect") == "differ":
            verdict = "differs, as intended: " + check["why"] if not same else "same (expected a difference)"
        elif same:
            verdict = "same"
        else:
            verdict = "**DIFFERS**"
            bad += 1
        lines.append(f"| {what} | `{short(pv)}` | `{short(rv)}` | {verdict} |")
    return bad, lines + [""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", action="append", help="run only this case (repeatable)")
    ap.add_argument("--skip-build", action="store_true", help="use the release binaries as they are")
    ap.add_argument("--bin-dir", type=Path, help="take rho and rho-mock-llm from here (no build)")
    ap.add_argument("--report", type=Path, help="also write the tables to this file")
    ap.add_argument("--pi-dir", type=Path,
                    default=Path(os.environ.get("PI_REF_DIR", Path.home() / ".cache" / "rho-compare" / "pi")))
    args = ap.parse_args()
    runner.write_agent_dir = write_agent_dir
    launcher = ensure_pi(args.pi_dir)
    target = args.bin_dir or build_rho(args.skip_build)
    pi = Agent("pi", [str(launcher)], "PI_CODING_AGENT_DIR", {"PI_OFFLINE": "1"})
    rho = Agent("rho", [str(target / "rho")], "RHO_CODING_AGENT_DIR", {})
    cases = [json.loads(p.read_text()) for p in sorted((HERE / "wire_scenarios").glob("*.json"))]
    if args.case:
        cases = [c for c in cases if c["name"] in args.case]
    bad, out = 0, ["# rho and pi on the OpenAI, Gemini and Bedrock wires", ""]
    for case in cases:
        log(f"{case['name']} ({case['api']})")
        n, lines = run_case(case, pi, rho, target / "rho-mock-llm")
        bad += n
        out += lines
    text = "\n".join(out)
    print(text)
    if args.report:
        args.report.write_text(text + "\n")
    log(f"{len(cases)} cases, {bad} unexpected result(s)")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
