#!/usr/bin/env python3
"""Runs the reference agents' own RPC client libraries against rho and against the references.

    python3 bench/compare/clients/run.py [--build] [--only pi|omp|pi16] [--report FILE]

Three clients, each over every public method of its RpcClient class:

  pi_client.mjs    pi 0.73.1's RpcClient (@mariozechner/pi-coding-agent, Node)        -> pi, then rho
  omp_client.ts    omp 18.2.3's RpcClient (@oh-my-pi/pi-coding-agent, Bun)            -> omp, then rho
  pi16_client.mjs  pi 1.6.0's RpcClient (@earendil-works/pi-coding-agent, Node 22)    -> pi 1.6, then rho

pi 1.6 needs Node >= 22.19: its reference dir also holds the `node` npm package (Node 22), which
runs pi16_client.mjs and, first on the client's PATH, the `node <cliPath>` its RpcClient spawns.

Each run gets its own rho-mock-llm (SCRIPT below), a fresh agent dir with a models.json (omp:
models.yml) custom provider `mock` pointing at it, a fresh HOME and working directory. The
results (one record per step: resolved/threw, the returned value, the error, the frames the
client's listeners got, the raw responses) are normalized (paths, ids, timestamps, ports) and
compared step by step: outcome, error text, the returned value's shape, selected values, the
response lines (success/error/data presence) and the event types seen. Promise rejections no
one handled (pi 1.6's client can leave one behind) are recorded and reported per run.

Every difference must be listed in KNOWN (with its reason) for the exit status to be 0. The
markdown table goes to stdout (and to --report). Raw results: out/ next to this file (gitignored).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
COMPARE = HERE.parent
REPO = COMPARE.parent.parent
sys.path.insert(0, str(COMPARE))

from runner import MockServer  # noqa: E402

PI_VERSION = "0.73.1"
PI_PINNED = {f"@mariozechner/{p}": PI_VERSION for p in ("pi-coding-agent", "pi-ai", "pi-agent-core", "pi-tui")}
OMP_VERSION = "18.2.3"
BUN_VERSION = "1.4.5"
OMP_PINNED = {"@oh-my-pi/pi-coding-agent": OMP_VERSION, "bun": BUN_VERSION}
PI16_VERSION = "1.6.0"
PI16_NODE = "22"  # the `node` npm package's major version; pi 1.6 needs >= 22.19
PI16_PINNED = {"@earendil-works/pi-coding-agent": PI16_VERSION, "node": PI16_NODE}

MODELS = [
    {"id": "mock-model", "name": "Mock Model", "reasoning": False, "input": ["text"], "contextWindow": 200000,
     "maxTokens": 8192, "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}},
    {"id": "mock-think", "name": "Mock Think", "reasoning": True, "input": ["text"], "contextWindow": 200000,
     "maxTokens": 8192, "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}},
]

# The scripted model. Markers in the prompts pick the special turns (first unconsumed match wins,
# so a marker still in the history later falls through to the plain reply); everything else,
# compaction summaries and the handoff document included, gets "Mock reply.".
SCRIPT = {"turns": [
    {"match": {"bodyContains": "SLOW-STEER"}, "text": "A slow reply that streams for a while. " * 6,
     "chunkSize": 4, "chunkDelayMs": 30},
    {"match": {"bodyContains": "SLOW-ABORT"}, "text": "A long reply that gets aborted. " * 12,
     "chunkSize": 4, "chunkDelayMs": 60},
    {"match": {"bodyContains": "SLOW-AP"}, "text": "A long reply that gets aborted and replaced. " * 12,
     "chunkSize": 4, "chunkDelayMs": 60},
    {"match": {"bodyContains": "SLOW-QUEUE"}, "text": "A slow reply with messages queued behind it. " * 6,
     "chunkSize": 4, "chunkDelayMs": 30},
    {"match": {"bodyContains": "BLANK-REPLY"}, "text": "   "},
    {"match": {"bodyContains": "HOST-TOOL"}, "text": "Calling the host tool.",
     "toolCalls": [{"name": "host_echo", "arguments": {"text": "ping"}}]},
    {"text": "Mock reply.", "repeat": 1000},
]}


# --------------------------------------------------------------------------------------------
# Known, documented differences. A difference is explained when client (one name or a list),
# step label, aspect and detail all match (regular expressions, searched). Keep the reason
# precise: it is the report.
# --------------------------------------------------------------------------------------------

OMP_MODEL_META = r"(isOAuth|identity|requiresGlyphTokenization|compat|supportsComputerUse|thinking)$"
OMP_MESSAGE_META = (r"(responseId|completedAt|contextSnapshot|errorId|steering|isTerminal|shortSummary|tokensAfter"
                    r"|method)$")
OMP_FRAMES = ["ready", "available_commands_update", "model_changed"]

KNOWN: list[dict[str, Any]] = [
    # ---- every client --------------------------------------------------------------------------
    {"id": "ready-frame", "label": r"^\(run\)$", "aspect": "^ready$",
     "rho": r'^\{"type": "ready", "version": "[^"]+", "protocolVersion": 1, "supportedProtocolVersions": \[1, 2\], '
            r'"maxFrameBytes": 1048576, "maxReassembledFrameBytes": 67108864\}$',
     "reason": "rho writes a `ready` frame first (DIFFERENCES.md `ready`, docs/decisions.md D2): omp 18's frame plus `version`; "
               "pi 0.73.1 and pi 1.6.0 write none. Every client accepts it (omp's client checks only "
               "supportedProtocolVersions and the two byte limits, and negotiates protocol 2 with rho; pi's "
               "clients hand it to onEvent listeners)."},

    # ---- pi 1.6's wire, which rho speaks (docs/decisions.md D19, D20; docs/protocol.md) -----------
    {"id": "update-delta", "client": "pi", "label": r"^(promptAndWait|collectEvents)", "aspect": "^shape$",
     "detail": r"^missing \[type=message_update\]\.(message|assistantMessageEvent\.partial)$",
     "reason": "docs/decisions.md D19: message_update is pi 1.6's delta shape {type, usage, assistantMessageEvent} "
               "unless the host asks for the cumulative one (--no-title, omp's negotiate_protocol, "
               "--rpc-message-update cumulative): the step alone, without `message` and "
               "`assistantMessageEvent.partial`. pi 0.73.1's client does neither, so it gets deltas; it hands "
               "events on as they are and its own helpers (promptAndWait, waitForIdle, collectEvents) read only "
               "`type`, so they work unchanged. A pi 0.73.1 host that reads the snapshot has to fold the deltas "
               "(or start rho with --rpc-message-update cumulative)."},
    {"id": "update-usage", "client": ["pi", "omp"], "label": r"^(promptAndWait|collectEvents)", "aspect": "^shape$",
     "detail": r"^extra \[type=message_update\]\.usage$",
     "reason": "docs/decisions.md D19 (docs/protocol.md#run-events): every message_update carries pi 1.6's `usage`, the "
               "reply's usage so far, in the delta shape and in the cumulative shape alike. omp's client "
               "negotiates protocol 2 (step `protocol`) and so gets the cumulative shape, with `message` and "
               "`assistantMessageEvent.partial`: `usage` is its only extra key. pi 0.73.1 and omp 18 have none."},
    {"id": "agent-end-willRetry", "client": ["pi", "omp"], "label": r"^(promptAndWait|collectEvents)",
     "aspect": "^shape$", "detail": r"^extra \[type=agent_end\]\.willRetry$",
     "reason": "docs/decisions.md D20 (docs/protocol.md#run-events): agent_end carries pi 1.6's `willRetry` (true when "
               "an automatic retry of the failed reply follows); an extra key for pi 0.73.1 and omp 18, whose "
               "clients ignore it."},
    {"id": "system-message", "client": "pi", "aspect": "^events$",
     "drop": {"rho": ["agent_settled", "message_start:system", "message_end:system"]},
     "reason": "pi 1.6's transcript (docs/protocol.md, \"The declared prompt\"): a run whose prompt or tools changed "
               "since the transcript last said starts with a role:system message (its message_start/message_end) "
               "declaring them, as pi 1.6 does for every client, pi 0.73.1's included. The client hands it to "
               "listeners like any message; its helpers read only `type`."},
    {"id": "system-message", "client": "pi", "label": r"^(getMessages|getState)",
     "aspect": "^(shape|len|value)$", "detail": r"^(extra \[role=system\]|array length|value\.messageCount|value)$",
     "reason": "pi 1.6's transcript: the declared prompt is a message (role system) of get_messages and of "
               "messageCount, as in pi 1.6, which pi 0.73.1 did not have. The conversation's other messages are "
               "the same, in the same order."},
    {"id": "abort-race", "client": ["pi", "pi16"], "label": r"^getLastAssistantText#after-abort$", "aspect": "^value$",
     "ref": r'^"A long reply that gets aborted\.', "rho": r'^"A long reply that gets aborted\.',
     "reason": "the abort lands while the reply streams: how many of its chunks arrived before it is a race on "
               "either side (the text is the same reply, cut at another chunk)."},
    {"id": "rho-prompt-sections", "client": "pi16", "label": r"^(getMessages|getEntries|getTree)",
     "aspect": "^shape$", "detail": r"(sections\.(tools|rules|docs|date)|toolsAdded\[\*\]\.(parameters|constrainedSampling))",
     "reason": "the declared prompt is rho's own (docs/protocol.md, \"The declared prompt\"): rho's sections are "
               "preamble (its base text, tools and guidelines in it), addendum, project_context, skills, date and "
               "cwd, where pi 1.6 splits its text into preamble, tools, rules and docs and states no date; the "
               "declared tools are rho's own definitions (additionalProperties: false, no constrainedSampling)."},
    {"id": "agent-settled", "client": "pi", "aspect": "^events$", "drop": {"rho": ["agent_settled"]},
     "reason": "docs/decisions.md D20: after a prompt's last agent_end rho writes pi 1.6's {type: \"agent_settled\", "
               "aborted}. pi 0.73.1's client hands it to onEvent listeners as an event of an unknown type; its "
               "waitForIdle, promptAndWait and collectEvents still resolve at the one agent_end before it, so it "
               "only adds a frame to what a step's listener saw. omp's client passes only the event types it "
               "knows to its listeners, so its steps never see the frame."},
    {"id": "disposition", "client": ["pi", "omp"], "aspect": "^response$",
     "ref": r"^(prompt|steer|follow_up|abort_and_prompt): ok$",
     "rho": r"^(prompt|steer|follow_up|abort_and_prompt): ok \+data$",
     "reason": "docs/protocol.md#refused-prompts and #commands: an accepted prompt, steer, follow_up or "
               "abort_and_prompt is answered with pi 1.6's data {disposition: started | queued | handled}; "
               "pi 0.73.1 and omp 18 answer success without data. Neither client reads data from these "
               "responses (their methods resolve to undefined), so nothing changes for them."},
    {"id": "compact-estimate", "client": ["pi", "omp"], "label": r"^compact(#empty)?$", "aspect": "^shape$",
     "detail": r"^extra (estimatedTokensAfter|usage)$",
     "reason": "a compaction's result carries pi 1.6's `estimatedTokensAfter` (the context estimate once the "
               "summary replaces what it covers) and `usage` (what the summary request used); pi 0.73.1 and "
               "omp 18 have neither: extra keys only."},
    {"id": "stats-reasoning", "client": ["pi", "pi16"], "label": r"^getSessionStats", "aspect": "^shape$",
     "detail": r"^extra tokens\.reasoning$",
     "reason": "get_session_stats carries omp 18's `tokens.reasoning` (the reasoning tokens providers reported, "
               "also counted in `output`; 0 here); pi 0.73.1 and 1.6.0 have no such key. omp's client sees the "
               "same keys as from omp."},
    {"id": "bash-stream", "client": "pi", "label": r"^bash", "aspect": "^events$",
     "drop": {"rho": ["bash_execution_update"]},
     "reason": "docs/protocol.md#commands: an RPC bash streams its output first as pi 1.6's "
               "`bash_execution_update {id, delta}` events, then answers as before. pi 0.73.1's client hands "
               "them to onEvent listeners (unknown type); omp's client drops frame types it does not know."},

    # ---- pi's clients (0.73.1; the entries that hold for 1.6.0 as well name pi16 too) -------------
    {"id": "omp-frames-to-pi", "client": ["pi", "pi16"], "aspect": "^events$", "drop": {"rho": OMP_FRAMES},
     "reason": "rho sends omp 18's frames to every host: `ready` and `available_commands_update` at start, "
               "`available_commands_update` after new_session/switch_session, `model_changed` before the "
               "set_model/cycle_model answer. pi 0.73.1 and 1.6.0 send none of them; pi's RpcClient hands them to "
               "onEvent listeners as events of unknown types (its own helpers ignore them)."},
    {"id": "get_state-extras", "client": ["pi", "pi16"], "label": r"^getState", "aspect": "^shape$",
     "detail": r"^extra (interruptMode|queuedMessageCount|todoPhases|systemPrompt|dumpTools|fastModeEnabled"
               r"|fastModeActive|tokensPerSecond|contextUsage)$",
     "reason": "get_state carries the union of the family's fields (DIFFERENCES.md `get_state-extras`, and "
               "omp 18's fastModeEnabled/fastModeActive/tokensPerSecond/contextUsage): extra keys only."},
    {"id": "agent-end-is-terminal", "client": ["pi", "pi16"], "label": r"^(promptAndWait|collectEvents)",
     "aspect": "^shape$", "detail": r"^extra \[type=agent_end\]\.isTerminal$",
     "reason": "agent_end carries omp 18's `isTerminal` (false when a retry or a continuation after compaction "
               "follows; a todo reminder is a turn of the same run, docs/decisions.md D20): an extra key only; "
               "pi's clients ignore it."},
    {"id": "stats-premiumRequests", "client": ["pi", "pi16"], "label": r"^getSessionStats", "aspect": "^shape$",
     "detail": r"^extra premiumRequests$",
     "reason": "get_session_stats adds omp 18's `premiumRequests` (0 in rho): an extra key only."},
    {"id": "bash-omp-counters", "client": ["pi", "pi16"], "label": r"^bash", "aspect": "^shape$",
     "detail": r"^extra (totalLines|totalBytes|outputLines|outputBytes)$",
     "reason": "rho's bash result adds omp 18's totalLines/totalBytes/outputLines/outputBytes to pi's "
               "{output, exitCode, cancelled, truncated}; everything else is equal."},
    {"id": "bash-workingDir", "client": ["pi", "pi16"], "label": r"^bash", "aspect": "^shape$",
     "detail": r"^extra workingDir$",
     "reason": "a bash command that ran to its end reports omp 18's `workingDir` (where it ran); pi 0.73.1 "
               "and 1.6.0 have no such key. A cancelled one carries none, as in omp."},
    {"id": "busy-text", "client": ["pi", "pi16"], "label": r"^(prompt|promptAndWait)#streaming$",
     "aspect": "^(response|error)$",
     "rho": r"Agent is already processing\. Use steer\(\) or followUp\(\) to queue messages, or wait for completion\.",
     "reason": "a prompt while streaming without streamingBehavior fails with the text docs/decisions.md D6"
               " fixes (the family's older wording, which hosts match on); pi 0.73.1 and 1.6.0 word it `Specify "
               "streamingBehavior ('steer' or 'followUp') to queue the message.`. Both are errors (pi 1.6's "
               "client throws them)."},
    {"id": "message-extras", "client": ["pi", "pi16"], "aspect": "^shape$",
     "label": r"^(promptAndWait|collectEvents|getMessages|getEntries|getTree)",
     "detail": r"^(extra .*\.(attribution|duration|ttft)|missing .*\.content\[type=text\]\.index)$",
     "reason": "DIFFERENCES.md `attribution`, `duration-ttft` (extra xcsh fields) and `partial-bookkeeping` "
               "(pi's partial blocks carry `index` until they close; rho never sends it)."},
    {"id": "compact-nothing", "client": "pi", "label": r"^compact#empty$", "aspect": "^(outcome|response)$",
     "ref": r"^(ok \{summary,firstKeptEntryId,tokensBefore,details\}|compact: ok \+data)$",
     "rho": r"Nothing to compact \(session too small\)",
     "reason": "rho compacts as pi 1.6.0 does: a branch short enough to keep whole (here: empty) is "
               "`Nothing to compact (session too small)`, with no summary request; pi 0.73.1 requested a "
               "summary of nothing. pi 1.6.0's client sees the same error from both."},
    {"id": "model-switch-level", "client": "pi", "label": r"^setModel", "aspect": "^events$",
     "drop": {"ref": ["thinking_level_changed"], "rho": OMP_FRAMES},
     "reason": "a model switch keeps the session's thinking level unless defaultThinkingLevel is set, as pi "
               "1.6.0 does (docs/agent-behavior.md#thinking-levels): from a model without reasoning (level "
               "off) to a reasoning one rho stays at off, pi 0.73.1 goes back to the default level and says "
               "so with thinking_level_changed."},
    {"id": "pi16-message-fields", "client": ["pi", "omp"], "aspect": "^shape$",
     "detail": r"^extra .*\.(durationMs|rawStopReason|thinkingLevel|usage\.cacheWrite1h"
               r"|usage\.cost\.totalFromProvider)$",
     "reason": "assistant messages carry pi 1.6.0's `durationMs`, `rawStopReason`, `thinkingLevel`, "
               "`usage.cacheWrite1h` and `usage.cost.totalFromProvider` (docs: message-types.md of pi 1.6); "
               "pi 0.73.1 and omp 18 have none of them: extra keys only."},
    {"id": "pi16-clone-unsaved", "client": "pi16", "label": r"^clone#empty$", "aspect": "^(outcome|response)$",
     "ref": r"This session has not been saved yet", "rho": r"^(ok \{cancelled:bool\}|clone: ok \+data)$",
     "reason": "pi 1.6.0 writes a session file once the first reply ends, so before it there is nothing to "
               "clone; rho writes the file from the start (a killed process loses nothing) and clones the "
               "empty session: {cancelled:false}. DIFFERENCES.md, pi 1.6.0 section."},
    {"id": "pi16-builtin-extensions", "client": "pi16", "label": r"^getCommands$", "aspect": "^(value|shape)$",
     "detail": r"^(value|missing \[\*\])$",
     "ref": r"^(\[\{\"name\": \"llama\".*\"name\": \"mcp\".*|)$",
     "reason": "pi 1.6.0 ships two built-in extensions with commands, `llama` (llama.cpp's model router) and "
               "`mcp`; rho configures MCP by file and needs no command for it, and llama.cpp is one "
               "OpenAI-compatible provider to rho. No command of the session's own resources differs."},
    {"id": "pi16-start-early", "client": "pi16", "label": r"^(promptAndWait|collectEvents)$", "aspect": "^shape$",
     "detail": r"^missing \[type=message_start\]\.message\.(responseId|usage\.cacheWrite1h|usage\.cost\.totalFromProvider)$",
     "reason": "DIFFERENCES.md `start-usage`: rho writes the assistant `message_start` before the request goes "
               "out, so it has no response id and no usage yet; pi 1.6.0 writes it once the provider answered. "
               "`message_end` carries them all in both."},
    {"id": "pi-clone-unsaved", "client": "pi", "label": r"^clone#empty$", "aspect": "^(outcome|response)$",
     "ref": r"Entry [0-9a-f]+ not found", "rho": r"^(ok \{cancelled:bool\}|clone: ok \+data)$",
     "reason": "pi 0.73.1 bug: clone before the first assistant reply re-opens the session file, which pi "
               "has not written yet, and then cannot find the leaf entry (`Entry <id> not found`). rho "
               "clones the in-memory branch and answers {cancelled:false}."},

    # ---- omp's client --------------------------------------------------------------------------
    {"id": "omp-model-metadata", "client": "omp", "aspect": "^shape$",
     "detail": r"^missing (model\.|\[\*\]\.)?" + OMP_MODEL_META,
     "reason": "omp 18's Model objects carry its own catalog metadata (compat, identity, isOAuth, "
               "requiresGlyphTokenization, supportsComputerUse, thinking); rho sends pi's Model object "
               "(id, name, api, provider, baseUrl, reasoning, input, cost, contextWindow, maxTokens)."},
    {"id": "omp-message-metadata", "client": "omp", "aspect": "^shape$",
     "label": r"^(promptAndWait|collectEvents|getMessages|compact$)",
     "detail": r"^missing [^ ]*" + OMP_MESSAGE_META,
     "reason": "omp 18 adds its own bookkeeping to messages and events (responseId already in "
               "message_start, completedAt, contextSnapshot, errorId, user `steering`, agent_end "
               "`isTerminal`, compaction shortSummary/tokensAfter/method); rho's messages are pi's."},
    {"id": "isWarning", "client": "omp", "aspect": "^shape$", "detail": r"^extra .*\[role=toolResult\]\.isWarning$",
     "reason": "DIFFERENCES.md `isWarning`: rho marks tool results with isWarning:false."},
    {"id": "pi-thinking-level", "client": "omp", "aspect": "^shape$",
     "label": r"^(getState#(fresh|modes|before-branch|end)|cycleModel)$",
     "detail": r"^(extra thinkingLevel|type thinkingLevel: undefined vs string)$",
     "reason": "rho reports a non-reasoning model's thinking level as `off`, as pi 0.73.1 does; omp 18 "
               "leaves thinkingLevel out (undefined) for such a model."},
    {"id": "pi-thinking-level-value", "client": "omp", "label": r"^getState#modes$", "aspect": "^value$",
     "detail": r"^value\.thinkingLevel$", "ref": r'^"\$undefined"$', "rho": r'^"off"$',
     "reason": "as `pi-thinking-level`: `off` in rho and pi, absent in omp 18 (non-reasoning model)."},
    {"id": "pi-thinking-cycle", "client": "omp", "label": r"^(cycleThinkingLevel#reasoning|cycleModel)$",
     "aspect": "^(value|events)$",
     "ref": r'^("xhigh"|model_changed thinking_level_changed)$', "rho": r'^("off"|model_changed)$',
     "reason": "rho offers pi 0.73.1's levels for a custom reasoning model, off..high (xhigh needs a "
               "thinkingLevelMap entry), so cycling from high wraps to off; omp 18 also offers xhigh. "
               "Hence omp's later cycle_model to the non-reasoning model changes the level (event) and "
               "rho's does not (already off)."},
    {"id": "pi-thinking-on-set-model", "client": "omp", "label": r"^setModel\(mock/mock-think\)$",
     "aspect": "^events$", "drop": {"rho": ["thinking_level_changed"]},
     "reason": "switching to a reasoning model re-applies the saved level with a thinking_level_changed "
               "event in rho, as in pi 0.73.1 (pi-rpc notes b); omp 18 emits it only when the level "
               "changes."},
    {"id": "pi-state-extras", "client": "omp", "label": r"^getState", "aspect": "^shape$",
     "detail": r"^extra pendingMessageCount$",
     "reason": "get_state carries pi's pendingMessageCount next to omp's queuedMessageCount (docs/decisions.md D14)."},
    {"id": "tool-examples", "client": "omp", "label": r"^getState", "aspect": "^shape$",
     "detail": r"^missing dumpTools\[\*\]\.examples$",
     "reason": "dumpTools lists each agent's own tools; omp's optional `examples` has no rho counterpart."},
    {"id": "no-builtin-slash-commands", "client": "omp", "label": r"^getAvailableCommands$", "aspect": "^shape$",
     "detail": r"^missing \[\*\]$",
     "reason": "get_available_commands lists rho's prompt templates and skills; rho has no built-in slash "
               "commands (omp 18 lists its 41 builtins first) and this run configures none, so []."},
    {"id": "pi-compaction", "client": "omp", "label": r"^compact#empty$", "aspect": "^(outcome|response)$",
     "ref": r"Nothing to compact \(session too small\)",
     "reason": "rho compacts like pi 0.73.1, which summarizes whatever the session holds (an empty one "
               "too); omp 18 refuses when nothing lies before the kept tail: `Nothing to compact (session "
               "too small)`."},
    {"id": "pi-context-usage", "client": "omp", "aspect": "^shape$",
     "detail": r"^type contextUsage\.(tokens|percent): number vs null$",
     "reason": "right after a compaction rho reports contextUsage {tokens:null, percent:null}, as pi 0.73.1 "
               "does (pi-rpc notes a); omp 18 estimates a number."},
    {"id": "no-service-tiers", "client": "omp", "label": r"^setFastMode\((true|false)\)$",
     "aspect": "^(outcome|response|events)$",
     "rho": r"^(threw: Fast mode is unavailable for the current model\.|set_fast_mode: error 'Fast mode is "
            r"unavailable for the current model\.'|notice)$",
     "reason": "rho asks no provider for a priority service tier, so no model has fast mode "
               "(modes/rpc/omp_commands.rs): set_fast_mode emits omp's notice `The current model has no "
               "service-tier control for /fast to toggle.` and answers enabled:true with omp's error `Fast "
               "mode is unavailable for the current model.`. omp 18 gives every anthropic-messages model "
               "the anthropic tier: {enabled:true, active:false}."},
    {"id": "system-prompt-string", "client": "omp", "label": r"^getState", "aspect": "^shape$",
     "detail": r"^type systemPrompt: \[string\] vs string$",
     "reason": "get_state's systemPrompt is one string in rho (the prompt the model gets, as xcsh and "
               "docs/protocol.md give it); omp 18 sends its prompt as a list of sections."},
    {"id": "last-text-blank", "client": "omp", "label": r"^getLastAssistantText#blank$", "aspect": "^shape$",
     "detail": r"^type \.: string vs undefined$",
     "reason": "when the last assistant reply has no text, get_last_assistant_text answers {} (text "
               "undefined), as pi 0.73.1 does; omp 18 looks further back and returns an older reply's text."},
    {"id": "omp-builtin-subset", "client": "omp", "label": r"^getAvailableCommands$", "aspect": "^shape$",
     "detail": r"^missing \[\*\]\.subcommands\[\*\]\.usage$",
     "reason": "rho lists the 7 of omp 18's 41 built-in slash commands it runs (model, export, session, tools, "
               "compact, handoff, rename); the subcommands with a `usage` belong to built-ins rho does not have "
               "(session pin, mcp, ssh, todo, ...)."},
    {"id": "omp-cancel-notice", "client": "omp", "label": r"^bash\+abortBash$", "aspect": "^value$",
     "detail": r"^value\.output$", "ref": r'^"\[Command cancelled\]\\n"$', "rho": r'^""$',
     "reason": "a cancelled bash: omp 18 appends the notice `[Command cancelled]` to the output, rho keeps "
               "the output as it was (empty here), as pi 0.73.1 does."},
    {"id": "omp-xdev-mount", "client": "omp", "label": r"^(setCustomTools\(\[host_echo\]\)|promptAndWait#host-tool)$",
     "aspect": "^events$", "drop": {"ref": ["notice", "message_start:custom", "message_end:custom"]},
     "reason": "omp 18 mounts host tools as xd:// devices: a `notice` (source xdev) on set_host_tools and a "
               "custom `xdev-mount-notice` message before the next prompt. The tool call, its arguments "
               "and result are the same."},
    {"id": "interrupt-mode", "client": "omp", "label": r"^(waitForIdle#queued|getMessages#after-queue)$",
     "aspect": "^(events|value)$", "ref": r'(agent_end agent_start|"assistant:", "user:Steering message\.")',
     "reason": "docs/decisions.md D1: rho's interruptMode is `wait` (get_state says so): a steer waits for the streaming "
               "reply to finish. omp 18's default is `immediate`: the steer cuts the reply (stopReason "
               "error, empty text), ends the run and starts a new one."},
    {"id": "omp-empty-reply-nudge", "client": "omp",
     "label": r"^(promptAndWait#blank-reply|getLastAssistantText#blank)$", "aspect": "^(value|events)$",
     "rho": r'^(\{"extraRuns": 0\}|"\$undefined"|.*agent_end)$', "ref": r'(extraRuns": 1|"Mock reply\.|turn_end agent_start)',
     "reason": "omp 18 answers a reply without output with a developer nudge and runs again, so its last "
               "assistant text is the second reply's; rho (like pi) stops after the blank reply."},
]


def log(msg: str) -> None:
    print(f"[clients] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Installing the references, building rho
# --------------------------------------------------------------------------------------------

def _versions(root: Path, pins: dict[str, str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for p in pins:
        f = root / "node_modules" / p / "package.json"
        out[p] = json.loads(f.read_text()).get("version") if f.exists() else None
    return out


def _pinned(got: dict[str, str | None], pins: dict[str, str]) -> bool:
    """An exact pin (1.6.0) wants that version; a bare major (22) any release of it, and for the
    `node` package one pi 1.6 runs on (>= 22.19)."""
    for p, want in pins.items():
        v = got.get(p)
        if v is None:
            return False
        if "." in want:
            if v != want:
                return False
            continue
        parts = [int(x) if x.isdigit() else -1 for x in v.split(".")[:2]]
        if parts[0] != int(want) or (p == "node" and want == PI16_NODE and parts[1:] < [19]):
            return False
    return True


def ensure_npm(root: Path, pins: dict[str, str], what: str) -> None:
    if _pinned(_versions(root, pins), pins):
        return
    npm = shutil.which("npm")
    if not npm:
        sys.exit(f"clients: npm is needed to install {what}")
    log(f"installing {what} into {root}")
    root.mkdir(parents=True, exist_ok=True)
    if not (root / "package.json").exists():
        (root / "package.json").write_text('{"name": "rho-compare-ref", "private": true}\n')
    subprocess.run([npm, "install", "--no-audit", "--no-fund", *(f"{p}@{v}" for p, v in pins.items())],
                   cwd=root, check=True, stdout=sys.stderr)
    got = _versions(root, pins)
    if not _pinned(got, pins):
        sys.exit(f"clients: {what}: installed {got}, wanted {pins}")


def pi16_node(a: argparse.Namespace) -> Path:
    """The Node 22 binary of the `node` npm package in pi 1.6's reference dir."""
    return (a.pi16_dir / "node_modules" / ".bin" / "node").resolve()


def build() -> None:
    log("cargo build --release --locked -p rho-cli -p rho-mock-llm")
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "rho-cli", "-p", "rho-mock-llm"],
                   cwd=REPO, check=True, stdout=sys.stderr)


# --------------------------------------------------------------------------------------------
# One run: a client against a target
# --------------------------------------------------------------------------------------------

def run_client(client: str, target: str, a: argparse.Namespace, tmp: Path, outdir: Path) -> dict[str, Any]:
    root = tmp / f"{client}-{target}"
    cwd, agent, home, mockdir = root / "work", root / "agent", root / "home", root / "mock"
    for d in (cwd, agent, home, mockdir):
        d.mkdir(parents=True)
    mock = MockServer(a.mock, SCRIPT, mockdir)
    models = {"providers": {"mock": {"baseUrl": mock.url, "api": "anthropic-messages", "apiKey": "test-key",
                                     "models": MODELS}}}
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }
    if target == "rho":
        env["RHO_CODING_AGENT_DIR"] = str(agent)
        (agent / "models.json").write_text(json.dumps(models, indent=2))
    elif target == "pi":
        env["PI_CODING_AGENT_DIR"] = str(agent)
        env["PI_OFFLINE"] = "1"
        (agent / "models.json").write_text(json.dumps(models, indent=2))
    elif target == "pi16":
        # docs/environment-variables.md of pi 1.6: PI_OFFLINE stops the model catalogue refresh
        # from pi.dev (and every other automatic network use), PI_SKIP_VERSION_CHECK the latest-
        # version request, PI_TELEMETRY=0 the install/update telemetry.
        env["PI_CODING_AGENT_DIR"] = str(agent)
        env["PI_OFFLINE"] = "1"
        env["PI_SKIP_VERSION_CHECK"] = "1"
        env["PI_TELEMETRY"] = "0"
        (agent / "models.json").write_text(json.dumps(models, indent=2))
    else:  # omp: models.yml (JSON is YAML); no session titles (they would take model turns)
        env["PI_CODING_AGENT_DIR"] = str(agent)
        env["PI_NO_TITLE"] = "1"
        (agent / "models.yml").write_text(json.dumps(models, indent=2))
    # omp 18, pi 1.6 and rho compact (omp: and hand off) only what lies beyond keepRecentTokens
    # (default 20000): keep almost nothing so that compact and handoff have something to
    # summarize. pi 0.73.1 summarizes whatever is there, with the setting or not.
    if target == "omp":
        (agent / "config.yml").write_text("compaction:\n  keepRecentTokens: 1\n")
    else:
        (agent / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}, indent=2))
    result_path = root / "result.json"
    cfg: dict[str, Any] = {"target": target, "cwd": str(cwd), "provider": "mock", "model": "mock-model",
                           "args": [], "out": str(result_path)}
    bun = a.omp_dir / "node_modules" / ".bin" / "bun"
    if client == "pi16":
        # pi 1.6's RpcClient spawns `node <cliPath>`: its Node 22 goes first on the client's PATH
        node22 = pi16_node(a)
        env["PATH"] = f"{node22.parent}{os.pathsep}{env['PATH']}"
        cfg["pkg"] = str(a.pi16_dir / "node_modules" / "@earendil-works" / "pi-coding-agent")
        if target == "pi16":
            cfg["cliPath"] = str(Path(cfg["pkg"]) / "dist" / "cli.js")
        else:
            cfg["executable"] = str(a.rho)
        argv = [str(node22), str(HERE / "pi16_client.mjs"), str(root / "config.json")]
    elif client == "pi":
        cfg["pkg"] = str(a.pi_dir / "node_modules" / "@mariozechner" / "pi-coding-agent")
        if target == "pi":
            cfg["cliPath"] = str(Path(cfg["pkg"]) / "dist" / "cli.js")
        else:
            cfg["executable"] = str(a.rho)
        argv = ["node", str(HERE / "pi_client.mjs"), str(root / "config.json")]
    else:
        cfg["pkg"] = str(a.omp_dir / "node_modules" / "@oh-my-pi" / "pi-coding-agent")
        cfg["command"] = ([str(bun), str(Path(cfg["pkg"]) / "dist" / "cli.js")] if target == "omp" else [str(a.rho)])
        argv = [str(bun), str(HERE / "omp_client.ts"), str(root / "config.json")]
    (root / "config.json").write_text(json.dumps(cfg, indent=2))
    log(f"{client} client -> {target}")
    with open(root / "client.stderr.txt", "wb") as err:
        try:
            proc = subprocess.run(argv, cwd=cwd, env=env, stdout=err, stderr=err, timeout=a.timeout)
            status = proc.returncode
        except subprocess.TimeoutExpired:
            status = "timeout"
    mock.stop()
    requests = mock.requests()
    if result_path.exists():
        res = json.loads(result_path.read_text())
    else:
        res = {"fatal": f"the client wrote no result (exit {status}); see {outdir}/{client}-{target}.stderr.txt",
               "steps": [], "uncovered": [], "methods": []}
    res["exit"] = status
    res["modelRequests"] = len(requests)
    res["paths"] = {"root": str(root), "cwd": str(cwd), "agent": str(agent), "home": str(home), "mock": mock.url}
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / f"{client}-{target}.json").write_text(json.dumps(res, indent=1))
    shutil.copy(root / "client.stderr.txt", outdir / f"{client}-{target}.stderr.txt")
    with open(outdir / f"{client}-{target}.requests.jsonl", "w") as fh:
        for r in requests:
            fh.write(json.dumps(r) + "\n")
    return res


# --------------------------------------------------------------------------------------------
# Normalization
# --------------------------------------------------------------------------------------------

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d[:-]\d\d[:-]\d\d(?:[.-]\d+)?Z?")
PORT = re.compile(r"127\.0\.0\.1:\d+")
TIME_KEYS = {"timestamp", "lastUpdate", "duration", "ttft", "durationMs", "elapsedMs", "createdAt", "updatedAt",
             "startedAt", "endedAt", "tokensPerSecond"}
ID_VALUE = re.compile(r"^(?:[0-9a-f]{6,}|[0-9A-Za-z_-]*[0-9][0-9A-Za-z_-]{10,}|toolu_\w+|call_\w+|req_\d+)$")


class Scrub:
    def __init__(self, paths: dict[str, str]):
        subs = []
        for key, ph in (("cwd", "<CWD>"), ("agent", "<AGENT>"), ("home", "<HOME>"), ("root", "<ROOT>")):
            p = paths.get(key)
            if p:
                subs.append((p, ph))
                rp = os.path.realpath(p)
                if rp != p:
                    subs.append((rp, ph))
        subs.sort(key=lambda s: -len(s[0]))
        self.subs = subs
        self.mock = paths.get("mock", "")

    def text(self, s: str) -> str:
        if self.mock:
            s = s.replace(self.mock, "<MOCK>")
        for p, ph in self.subs:
            s = s.replace(p, ph)
        s = UUID.sub("<UUID>", s)
        s = ISO.sub("<TS>", s)
        s = PORT.sub("127.0.0.1:<PORT>", s)
        return s

    def value(self, v: Any, key: str = "") -> Any:
        if isinstance(v, dict):
            return {k: self.value(x, k) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(x, key) for x in v]
        if key in TIME_KEYS and isinstance(v, (int, float)) and not isinstance(v, bool):
            return "<TIME>"
        if isinstance(v, float):
            return float(f"{v:.12g}")
        if isinstance(v, str):
            if (key == "id" or key.endswith("Id") or key == "cursor" or key == "nextCursor") and ID_VALUE.match(v):
                return "<ID>"
            return self.text(v)
        return v


def error_text(msg: str | None) -> str | None:
    """The client's own error text, without the stderr tail some client errors append."""
    if msg is None:
        return None
    return msg.split(". Stderr:")[0]


# --------------------------------------------------------------------------------------------
# Shapes
# --------------------------------------------------------------------------------------------

def shape(v: Any) -> Any:
    if v == "$undefined":
        return "undefined"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "function" if v == "$function" else "string"
    if isinstance(v, dict):
        return {k: (tools_shape(x) if k == "dumpTools" else shape(x)) for k, x in v.items()}
    # arrays: element shapes grouped by their discriminator (role, else type), merged per group
    groups: dict[str, Any] = {}
    for x in v:
        tag = "*"
        if isinstance(x, dict):
            if isinstance(x.get("role"), str):
                tag = f"role={x['role']}"
            elif isinstance(x.get("type"), str):
                tag = f"type={x['type']}"
        s = shape(x)
        groups[tag] = merge(groups[tag], s) if tag in groups else s
    return {"[]": groups}


def tools_shape(v: Any) -> Any:
    """get_state's dumpTools: each agent has its own tools, so their schemas are not compared."""
    if not isinstance(v, list):
        return shape(v)
    return shape([{k: ("<schema>" if k == "parameters" else x) for k, x in t.items()} if isinstance(t, dict) else t
                  for t in v])


def opt(s: Any) -> Any:
    return s if not isinstance(s, str) or s.endswith("?") else f"{s}?"


def merge(a: Any, b: Any) -> Any:
    if isinstance(a, dict) and isinstance(b, dict) and ("[]" in a) == ("[]" in b):
        if "[]" in a:
            g = dict(a["[]"])
            for k, s in b["[]"].items():
                g[k] = merge(g[k], s) if k in g else s
            return {"[]": g}
        out = {}
        for k in list(a) + [k for k in b if k not in a]:
            if k in a and k in b:
                out[k] = merge(a[k], b[k])
            else:
                out[k] = opt(a.get(k, b.get(k)))
        return out
    if a == b:
        return a
    sa = a if isinstance(a, str) else "object"
    sb = b if isinstance(b, str) else "object"
    optional = sa.endswith("?") or sb.endswith("?")
    kinds = set(sa.rstrip("?").split("|")) | set(sb.rstrip("?").split("|"))
    out = "|".join(sorted(kinds))
    return f"{out}?" if optional else out


def shape_diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Differences between two shapes: `missing`/`extra` keys in the second, `type` changes."""
    out: list[str] = []
    if isinstance(a, dict) and isinstance(b, dict):
        if ("[]" in a) != ("[]" in b):
            return [f"type {path or '.'}: {brief_shape(a)} vs {brief_shape(b)}"]
        if "[]" in a:
            ga, gb = a["[]"], b["[]"]
            for k in ga:
                if k in gb:
                    out += shape_diff(ga[k], gb[k], f"{path}[{k}]")
                else:
                    out.append(f"missing {path}[{k}]")
            for k in gb:
                if k not in ga:
                    out.append(f"extra {path}[{k}]")
            return out
        for k in a:
            p = f"{path}.{k}" if path else k
            if k in b:
                out += shape_diff(a[k], b[k], p)
            else:
                out.append(f"missing {p}")
        for k in b:
            if k not in a:
                out.append(f"extra {(path + '.') if path else ''}{k}")
        return out
    # Whether a key is present in every element of an array (optional "?") depends on the run's
    # content, not on the protocol: optionality is not compared.
    if not (isinstance(a, str) and isinstance(b, str) and a.rstrip("?") == b.rstrip("?")) and a != b:
        out.append(f"type {path or '.'}: {brief_shape(a)} vs {brief_shape(b)}")
    return out


def brief_shape(s: Any, depth: int = 0, width: int = 70) -> str:
    if isinstance(s, str):
        return s
    if "[]" in s:
        g = s["[]"]
        if not g:
            return "[]"
        inner = " | ".join(f"{k}:{brief_shape(v, depth + 1)}" if k != "*" else brief_shape(v, depth + 1) for k, v in g.items())
        return f"[{inner}]" if len(inner) < width else f"[{len(g)} kinds]"
    if depth >= 1 and len(s) > 4:
        return "{" + ",".join(list(s)[:4]) + ",…}"
    inner = ",".join(f"{k}:{brief_shape(v, depth + 1)}" for k, v in s.items())
    if len(inner) > width:
        keys = list(s)
        inner = ",".join(keys[:8]) + (f",…+{len(keys) - 8}" if len(keys) > 8 else "")
    return "{" + inner + "}"


# --------------------------------------------------------------------------------------------
# Comparing two results of one client
# --------------------------------------------------------------------------------------------

def event_types(events: list[dict]) -> list[str]:
    """Event types a step saw, message_update dropped, repeats collapsed (timing-independent)."""
    out: list[str] = []
    for e in events:
        f = e.get("frame", {})
        t = f.get("type", "?") if isinstance(f, dict) else "?"
        if t == "response":
            t = f"response({f.get('command')}{',id' if 'id' in f else ''})"
        if t == "message_update":
            continue
        if t in ("message_start", "message_end") and isinstance(f.get("message"), dict):
            t = f"{t}:{f['message'].get('role')}"
        if not out or out[-1] != t:
            out.append(t)
    return out


def collapse(seq: list[str]) -> list[str]:
    out: list[str] = []
    for t in seq:
        if not out or out[-1] != t:
            out.append(t)
    return out


def grouped_events(steps: list[dict]) -> dict[str, list[dict]]:
    """Events to compare per step label: a group's events all go to its last step."""
    out: dict[str, list[dict]] = {}
    acc: list[dict] = []
    for i, s in enumerate(steps):
        g = s.get("group")
        acc = acc + s.get("events", [])
        nxt = steps[i + 1].get("group") if i + 1 < len(steps) else None
        if g is None or nxt != g:
            out[s["label"]] = acc
            acc = []
    return out


def types_of(value: Any) -> list[str]:
    out: list[str] = []
    for e in value if isinstance(value, list) else []:
        t = e.get("type") if isinstance(e, dict) else "?"
        if t == "message_update":
            continue
        if not out or out[-1] != t:
            out.append(t)
    return out


def response_sig(scrub: Scrub, r: dict) -> str:
    cmd = r["command"].get("type", "?")
    resp = r["response"]
    if resp is None:
        return f"{cmd}: no response with its id"
    if resp.get("success"):
        return f"{cmd}: ok" + (" +data" if "data" in resp else "")
    code = f" [code {resp['code']}]" if "code" in resp else ""
    return f"{cmd}: error {scrub.text(str(resp.get('error')))!r}{code}"


def summarize(step: dict | None, scrub: Scrub) -> str:
    if step is None:
        return "(not run)"
    if step["outcome"] == "resolved":
        v = scrub.value(step.get("value"))
        if step.get("cmp") and "value" in step["cmp"]:
            t = json.dumps(v, ensure_ascii=False)
            if len(t) <= 60:
                return f"ok `{t}`"
        return f"ok {brief_shape(shape(v), width=50)}"
    e = step.get("error") or {}
    code = f" [{e['code']}]" if e.get("code") else ""
    return f"{step['outcome']}: {scrub.text(error_text(e.get('message')) or '')[:110]}{code}"


def compare(ref: dict, rho: dict, client: str, refname: str) -> dict:
    rs, hs = Scrub(ref.get("paths", {})), Scrub(rho.get("paths", {}))
    rsteps = {s["label"]: s for s in ref.get("steps", [])}
    hsteps = {s["label"]: s for s in rho.get("steps", [])}
    rev, hev = grouped_events(ref.get("steps", [])), grouped_events(rho.get("steps", []))
    labels = list(rsteps) + [k for k in hsteps if k not in rsteps]
    rows, diffs = [], []

    def add(label: str, aspect: str, detail: str, a: str, b: str, raw: tuple[Any, Any] | None = None) -> None:
        d = {"client": client, "label": label, "aspect": aspect, "detail": detail, "ref": a, "rho": b}
        d["known"] = explain(d, raw)
        diffs.append(d)

    # run-level checks
    for name, res in ((refname, ref), ("rho", rho)):
        if res.get("fatal"):
            add("(run)", "fatal", f"{name} run aborted", res["fatal"][:300] if name == refname else "",
                res["fatal"][:300] if name == "rho" else "")
        if res.get("uncovered"):
            add("(run)", "coverage", f"{name}: methods not called: {', '.join(res['uncovered'])}", "", "")
        if res.get("dtsMismatch"):
            add("(run)", "coverage", f"{name}: declared vs prototype methods differ: {res['dtsMismatch']}", "", "")
    ri = [response_sig(rs, {"command": {"type": f.get("command")}, "response": f}) for f in ref.get("idlessResponses", [])]
    hi = [response_sig(hs, {"command": {"type": f.get("command")}, "response": f}) for f in rho.get("idlessResponses", [])]
    if ri != hi:
        add("(run)", "idless", "responses without an id (no client call can match them)", json.dumps(ri), json.dumps(hi))
    ru = [f"{u.get('createdIn')}: {u.get('name')}: {rs.text(error_text(u.get('message')) or '')}"
          for u in ref.get("unhandledRejections", [])]
    hu = [f"{u.get('createdIn')}: {u.get('name')}: {hs.text(error_text(u.get('message')) or '')}"
          for u in rho.get("unhandledRejections", [])]
    if ru != hu:
        add("(run)", "unhandled", "promise rejections no one handled (see the list below the table)",
            json.dumps(ru), json.dumps(hu))
    rr, hr = ref.get("ready"), rho.get("ready")
    if (rr is None) != (hr is None) or (rr and hr and shape(rr) != shape(hr)):
        add("(run)", "ready", "ready frame", json.dumps(rr), json.dumps(hr))
    elif rr and hr and rs.value(rr) != hs.value(hr):
        add("(run)", "ready", "ready frame values", json.dumps(rr), json.dumps(hr))

    for label in labels:
        a, b = rsteps.get(label), hsteps.get(label)
        n0 = len(diffs)
        if a is None or b is None:
            add(label, "outcome", "step ran on one side only", summarize(a, rs), summarize(b, hs))
        else:
            if a["outcome"] != b["outcome"]:
                add(label, "outcome", f"{a['outcome']} vs {b['outcome']}", summarize(a, rs), summarize(b, hs))
            elif a["outcome"] != "resolved":
                ea = rs.text(error_text((a.get("error") or {}).get("message")) or "")
                eb = hs.text(error_text((b.get("error") or {}).get("message")) or "")
                if ea != eb:
                    add(label, "error", "error text", ea, eb)
                ca, cb = (a.get("error") or {}).get("code"), (b.get("error") or {}).get("code")
                if ca != cb:
                    add(label, "error", "error code", str(ca), str(cb))
            else:
                va, vb = rs.value(a.get("value")), hs.value(b.get("value"))
                for d in shape_diff(shape(va), shape(vb)):
                    add(label, "shape", d, "", "")
                cmp = set(a.get("cmp") or []) | set(b.get("cmp") or [])
                if "value" in cmp and va != vb:
                    if isinstance(va, dict) and isinstance(vb, dict):
                        # key by key; a key on one side only is a shape difference, reported above
                        for key in va:
                            if key in vb and va[key] != vb[key]:
                                add(label, "value", f"value.{key}", json.dumps(va[key], ensure_ascii=False)[:600],
                                    json.dumps(vb[key], ensure_ascii=False)[:600], (va[key], vb[key]))
                    else:
                        add(label, "value", "value", json.dumps(va, ensure_ascii=False)[:600],
                            json.dumps(vb, ensure_ascii=False)[:600], (va, vb))
                if "len" in cmp and isinstance(va, list) and isinstance(vb, list) and len(va) != len(vb):
                    add(label, "len", "array length", str(len(va)), str(len(vb)))
                if "types" in cmp and types_of(va) != types_of(vb):
                    add(label, "types", "event types returned", " ".join(types_of(va)), " ".join(types_of(vb)))
            sa = [response_sig(rs, r) for r in a.get("responses", [])]
            sb = [response_sig(hs, r) for r in b.get("responses", [])]
            if sa != sb:
                for i in range(max(len(sa), len(sb))):
                    x = sa[i] if i < len(sa) else "(none)"
                    y = sb[i] if i < len(sb) else "(none)"
                    if x != y:
                        add(label, "response", "response line", x, y)
            if label in rev and label in hev:
                ta, tb = event_types(rev[label]), event_types(hev[label])
                if ta != tb:
                    what = f"events seen during the steps of group {a['group']!r}" if a.get("group") else \
                        "events seen during the step"
                    add(label, "events", what, " ".join(ta), " ".join(tb), (ta, tb))
        mine = diffs[n0:]
        if not mine:
            verdict = "same"
        elif all(d["known"] for d in mine):
            verdict = "known: " + "; ".join(sorted({d["known"]["id"] for d in mine}))
        else:
            verdict = "**DIFFERENT**"
        methods = ", ".join((a or b)["method"])
        rows.append({"label": label, "methods": methods, "ref": summarize(a, rs), "rho": summarize(b, hs),
                     "verdict": verdict})
    return {"rows": rows, "diffs": diffs}


def explain(d: dict, raw: tuple[Any, Any] | None = None) -> dict | None:
    """The KNOWN entry that explains a difference, if any.

    Beyond the regular expressions (label, aspect, detail, ref, rho), an entry may say exactly
    what it explains: `drop` (event types to remove from one side's sequence) and `sub`
    (substitutions on one side's joined sequence) must make the two event sequences equal.
    """
    for k in KNOWN:
        clients = k.get("client", d["client"])
        if d["client"] not in ([clients] if isinstance(clients, str) else clients):
            continue
        if not re.search(k.get("label", ""), d["label"]):
            continue
        if not re.search(k.get("aspect", ""), d["aspect"]):
            continue
        if not re.search(k.get("detail", ""), d["detail"]):
            continue
        if "ref" in k and not re.search(k["ref"], d["ref"]):
            continue
        if "rho" in k and not re.search(k["rho"], d["rho"]):
            continue
        if ("drop" in k or "sub" in k) and d["aspect"] == "events":
            if raw is None:
                continue
            seqs = []
            for side, seq in zip(("ref", "rho"), raw):
                seq = collapse([t for t in seq if t not in k.get("drop", {}).get(side, [])])
                text = " ".join(seq)
                for pat, repl in k.get("sub", {}).get(side, []):
                    text = re.sub(pat, repl, text)
                seqs.append(text)
            if seqs[0] != seqs[1]:
                continue
        return k
    return None


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

REF_NAMES = {"pi": "pi", "omp": "omp", "pi16": "pi 1.6"}


def cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def render(results: dict[str, dict], meta: dict) -> str:
    out = [f"# rho against the reference RPC clients", "",
           f"Run {meta['date']}, {meta['rho_version']} (`rho --version`) at commit `{meta['commit']}`; "
           f"{meta['clients']}. Generated by `python3 bench/compare/clients/run.py`.", ""]
    total_unexplained = 0
    for client, r in results.items():
        ref = REF_NAMES[client]
        cmp = r["cmp"]
        unexplained = [d for d in cmp["diffs"] if not d["known"]]
        total_unexplained += len(unexplained)
        same = sum(1 for row in cmp["rows"] if row["verdict"] == "same")
        known = sum(1 for row in cmp["rows"] if row["verdict"].startswith("known"))
        out += [f"## {r['title']}", "",
                f"{len(cmp['rows'])} steps over {len(r['ref'].get('methods', []))} client methods: {same} same, "
                f"{known} with known differences only, {len(cmp['rows']) - same - known} different "
                f"({len(unexplained)} unexplained differences). Model requests: {ref} "
                f"{r['ref'].get('modelRequests')}, rho {r['rho'].get('modelRequests')}.", "",
                f"| step | method | {ref} | rho | verdict |", "| --- | --- | --- | --- | --- |"]
        for row in cmp["rows"]:
            out.append(f"| {cell(row['label'])} | {cell(row['methods'])} | {cell(row['ref'])} | {cell(row['rho'])} "
                       f"| {cell(row['verdict'])} |")
        out.append("")
        if unexplained:
            out += [f"### Unexplained differences ({client} client)", "",
                    f"| step | aspect | detail | {ref} | rho |", "| --- | --- | --- | --- | --- |"]
            for d in unexplained:
                out.append(f"| {cell(d['label'])} | {d['aspect']} | {cell(d['detail'])} | {cell(d['ref'][:400])} "
                           f"| {cell(d['rho'][:400])} |")
            out.append("")
        rejections = [(side, u) for side in ("ref", "rho") for u in r[side].get("unhandledRejections", [])]
        if rejections:
            out += [f"### Unhandled promise rejections ({client} client)", "",
                    "Rejections of promises the client library created and no one handled (recorded with "
                    "`process.on('unhandledRejection')`; the run goes on).", "",
                    "| agent | promise made in step | surfaced during step | error | handled later |",
                    "| --- | --- | --- | --- | --- |"]
            for side, u in rejections:
                scrub = Scrub(r[side].get("paths", {}))
                out.append(f"| {ref if side == 'ref' else 'rho'} | {cell(u.get('createdIn', '?'))} | "
                           f"{cell(u.get('step', '?'))} | "
                           f"{cell(u.get('name', '?'))}: {cell(scrub.text(error_text(u.get('message')) or '')[:200])} | "
                           f"{cell(u.get('handledLater') or 'no')} |")
            out.append("")
        known_diffs = [d for d in cmp["diffs"] if d["known"]]
        if known_diffs:
            out += [f"### Known differences ({client} client)", "",
                    "| explained by | step | what |", "| --- | --- | --- |"]
            grouped: dict[tuple[str, str], list[dict]] = {}
            for d in known_diffs:
                grouped.setdefault((d["known"]["id"], d["label"]), []).append(d)
            for (kid, label), ds in grouped.items():
                what = "; ".join(d["detail"] if d["aspect"] == "shape" else
                                 f"{d['aspect']}: {d['ref'][:120]} → {d['rho'][:120]}" for d in ds)
                out.append(f"| `{kid}` | {cell(label)} | {cell(what[:700])} |")
            out.append("")
    used = sorted({d["known"]["id"] for r in results.values() for d in r["cmp"]["diffs"] if d["known"]})
    if used:
        out += ["## The known differences (KNOWN in run.py)", "", "| id | reason |", "| --- | --- |"]
        for k in KNOWN:
            if k["id"] in used:
                out.append(f"| `{k['id']}` | {cell(k['reason'])} |")
        out.append("")
    out.append(f"Unexplained differences: {total_unexplained}.")
    return "\n".join(out) + "\n"


def git_commit() -> str:
    try:
        h = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "crates", "Cargo.toml", "Cargo.lock"], cwd=REPO,
                               capture_output=True, text=True).stdout.strip()
        return h + ("+uncommitted changes in crates/" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="store_true", help="cargo build --release --locked rho and rho-mock-llm first")
    ap.add_argument("--only", choices=["pi", "omp", "pi16"], action="append", help="run one client (repeatable)")
    ap.add_argument("--rho", type=Path, default=REPO / "target" / "release" / "rho")
    ap.add_argument("--mock", type=Path, default=REPO / "target" / "release" / "rho-mock-llm")
    ap.add_argument("--commit", default=None, help="the rho commit named in the report (default: git HEAD)")
    ap.add_argument("--pi-dir", type=Path,
                    default=Path(os.environ.get("PI_REF_DIR", Path.home() / ".cache" / "rho-compare" / "pi")))
    ap.add_argument("--omp-dir", type=Path,
                    default=Path(os.environ.get("OMP_REF_DIR", Path.home() / ".cache" / "rho-compare" / "omp")))
    ap.add_argument("--pi16-dir", type=Path,
                    default=Path(os.environ.get("PI16_REF_DIR", Path.home() / ".cache" / "rho-compare" / "pi16")))
    ap.add_argument("--out", type=Path, default=HERE / "out", help="raw results (default: out/ here, gitignored)")
    ap.add_argument("--report", type=Path, help="also write the markdown report here")
    ap.add_argument("--keep", action="store_true", help="keep the temporary run directories")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per client run")
    ap.add_argument("--rejudge", action="store_true",
                    help="run nothing: compare the results already in --out again (after editing KNOWN)")
    a = ap.parse_args()

    clients = a.only or ["pi", "omp", "pi16"]
    if a.rejudge:
        return judge(a, clients, {c: (json.loads((a.out / f"{c}-{c}.json").read_text()),
                                      json.loads((a.out / f"{c}-rho.json").read_text())) for c in clients})
    if a.build:
        build()
    for b in (a.rho, a.mock):
        if not b.exists():
            sys.exit(f"clients: {b} is missing (run with --build)")
    if "pi" in clients:
        if not shutil.which("node"):
            sys.exit("clients: node (>= 20.6) is needed for pi's client")
        ensure_npm(a.pi_dir, PI_PINNED, f"pi {PI_VERSION}")
    if "omp" in clients:
        ensure_npm(a.omp_dir, OMP_PINNED, f"omp {OMP_VERSION} and bun {BUN_VERSION}")
    if "pi16" in clients:
        ensure_npm(a.pi16_dir, PI16_PINNED, f"pi {PI16_VERSION} and node {PI16_NODE}")

    tmp = Path(tempfile.mkdtemp(prefix="rho-clients-"))
    runs: dict[str, tuple[dict, dict]] = {}
    try:
        for client in clients:
            runs[client] = (run_client(client, client, a, tmp, a.out), run_client(client, "rho", a, tmp, a.out))
    finally:
        if a.keep:
            log(f"run directories kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    rho_version = subprocess.run([str(a.rho), "--version"], capture_output=True, text=True).stdout.strip()
    (a.out / "meta.json").write_text(json.dumps({
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": a.commit or git_commit(), "rho_version": rho_version or "?"}))
    return judge(a, clients, runs)


def judge(a: argparse.Namespace, clients: list[str], runs: dict[str, tuple[dict, dict]]) -> int:
    results: dict[str, dict] = {}
    for client in clients:
        ref, rho = runs[client]
        title = {"pi": f"pi {PI_VERSION}'s RpcClient: pi vs rho",
                 "omp": f"omp {OMP_VERSION}'s RpcClient (Bun {BUN_VERSION}): omp vs rho",
                 "pi16": f"pi {PI16_VERSION}'s RpcClient: pi 1.6 vs rho"}[client]
        results[client] = {"title": title, "ref": ref, "rho": rho, "cmp": compare(ref, rho, client, client)}
    saved = json.loads((a.out / "meta.json").read_text()) if (a.out / "meta.json").exists() else {}
    meta = {
        "date": saved.get("date", "?"),
        "commit": saved.get("commit", "?"),
        "rho_version": saved.get("rho_version", "?"),
        "clients": ", ".join(f"{c}: {results[c]['ref'].get('clientPackage')} {results[c]['ref'].get('clientVersion')}"
                             for c in results),
    }
    report = render(results, meta)
    print(report)
    if a.report:
        a.report.write_text(report)
        log(f"report written to {a.report}")
    unexplained = sum(1 for r in results.values() for d in r["cmp"]["diffs"] if not d["known"])
    log(f"{unexplained} unexplained difference(s); raw results in {a.out}")
    return 0 if unexplained == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
