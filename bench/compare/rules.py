"""Known differences between pi 0.73 and rho, each traced to its reason.

Every difference the structural diff finds is labelled with the first rule that matches it; one
that no rule matches is reported as UNEXPLAINED (and makes compare.py exit 1). Each rule names
its reason: a decision of docs/decisions.md (`D<n>`), a section of the documentation
(`docs/protocol.md#x`, `docs/agent-behavior.md#x`, `docs/tools.md#x`), or a named pi bug rho does
not copy. DIFFERENCES.md lists the same rules in prose, with the evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from structdiff import Diff


@dataclass
class Rule:
    id: str
    ref: str  # the reason, short: "D2", "docs/protocol.md#user-messages", "pi bug: ..."
    summary: str
    match: Callable[[Diff, str], bool]
    # "reason": a deliberate or traced difference; "rho-bug": rho should change (see DIFFERENCES.md);
    # rho-bug differences still make compare.py exit 1.
    status: str = "reason"


def when(kinds: str | None = None, ftype: str | None = None, sig: str | None = None, path: str | None = None,
         pi: Callable | None = None, rho: Callable | None = None, scenario: str | None = None) -> Callable[[Diff, str], bool]:
    """A matcher: kinds (space-separated), frame type or signature regex, generic-path regex,
    predicates on either side's value, scenario name; all given conditions must hold."""
    kset = set(kinds.split()) if kinds else None

    def m(d: Diff, sc: str) -> bool:
        if kset is not None and d.kind not in kset:
            return False
        if ftype is not None and not re.fullmatch(ftype, d.frame_type()):
            return False
        if sig is not None and not re.fullmatch(sig, d.sig):
            return False
        if path is not None and not re.fullmatch(path, d.gpath):
            return False
        if pi is not None and not pi(d.pi):
            return False
        if rho is not None and not rho(d.rho):
            return False
        if scenario is not None and sc != scenario:
            return False
        return True

    return m


def any_of(*ms: Callable[[Diff, str], bool]) -> Callable[[Diff, str], bool]:
    return lambda d, sc: any(m(d, sc) for m in ms)


def _type_is(t: str) -> Callable:
    return lambda v: isinstance(v, dict) and v.get("type") == t


def _startswith(prefix: str) -> Callable:
    return lambda v: isinstance(v, str) and v.startswith(prefix)


# Messages appear in many frames: message_start/end.message, turn_end.message/.toolResults[*],
# agent_end.messages[*], get_messages data.messages[*].
_MSG = r"(message|messages\[\*\]|toolResults\[\*\]|data\.messages\[\*\])"

RULES: list[Rule] = [
    Rule("ready", "D2 (docs/protocol.md#the-ready-frame); omp 18.2.3",
         "rho writes {type:ready, version, protocolVersion, supportedProtocolVersions, maxFrameBytes, "
         "maxReassembledFrameBytes} as its first line (xcsh's frame with omp's protocol fields); pi writes "
         "no start-up frame.",
         when("frame-extra", sig="ready")),
    Rule("attribution", "docs/protocol.md#user-messages, #optional-fields",
         "rho marks user messages with attribution:\"user\" (xcsh's field); pi 0.73 has no attribution.",
         when("extra", path=_MSG + r"\.attribution")),
    Rule("duration-ttft", "docs/protocol.md#assistant-messages, #optional-fields",
         "rho adds duration and ttft (ms) to finished assistant messages (xcsh's fields).",
         when("extra", path=_MSG + r"\.(duration|ttft)")),
    Rule("isWarning", "docs/protocol.md#tool-execution-events, #tool-result-messages",
         "rho adds isWarning to tool_execution_end and toolResult messages (xcsh's field).",
         any_of(when("extra", ftype="tool_execution_end", path="isWarning"),
                when("extra", path=_MSG + r"\.isWarning"))),
    Rule("get_state-extras", "D1, D14, docs/protocol.md#get_state; omp 18.2.3",
         "get_state carries interruptMode (D1), queuedMessageCount beside pi's pendingMessageCount (D14), "
         "todoPhases, systemPrompt and dumpTools (xcsh's payload), and omp 18's contextUsage, "
         "fastModeEnabled, fastModeActive and tokensPerSecond.",
         when("extra", sig=r"response:get_state:ok(:.*)?",
              path=r"data\.(interruptMode|queuedMessageCount|todoPhases|systemPrompt|dumpTools"
                   r"|contextUsage|fastModeEnabled|fastModeActive|tokensPerSecond)")),
    Rule("pi16-tool-results", "DIFFERENCES.md, pi 1.6.0 through its own RpcClient (built-in tools' results)",
         "rho's built-in tools return pi 1.6's results: `structuredContent` (bash's output, exit code and time; "
         "read's text) and edit's `details.patch`; pi 0.73 has neither.",
         any_of(when("extra", ftype="tool_execution_end", path=r"result\.structuredContent"),
                when("extra", path=r"(result\.)?details\.patch"),
                when("extra", path=_MSG + r"\.details\.patch"))),
    Rule("agent-end-is-terminal", "docs/protocol.md#run-events; omp 18.2.3",
         "agent_end carries omp 18's isTerminal: false when a retry, a continuation after compaction or "
         "injected rules follow (a todo reminder is a turn of the same run, D20), true on the prompt's last "
         "run; pi 0.73 has no such field.",
         when("extra", ftype="agent_end", path="isTerminal")),
    Rule("available-commands", "omp 18.2.3 (DIFFERENCES.md: where rho follows pi 0.73 and omp 18)",
         "rho sends omp's available_commands_update once after ready (and after a session change); "
         "pi 0.73 has no such event and passes unknown events to its listeners.",
         when("frame-extra", sig="available_commands_update")),
    Rule("start-usage", "docs/protocol.md#event-order; pi bug: late-serialized snapshots",
         "The assistant message_start precedes the HTTP request, so rho's usage there is zero (docs/protocol.md#event-order). "
         "pi pushes the same mutable message object through an async queue and serializes it after "
         "later SSE events changed it, so its message_start already shows the reply's usage.",
         when("value", sig="message_start:assistant", path=r"message\.usage\..*")),
    Rule("start-error-alias", "docs/protocol.md#assistant-messages; pi bug: late-serialized snapshots",
         "For a request that fails with an HTTP error, pi's message_start already shows the final "
         "stopReason:error and errorMessage (same aliasing bug); a partial message starts as stopReason "
         "stop (docs/protocol.md#assistant-messages), which is what rho writes.",
         any_of(when("value", sig="message_start:assistant", path=r"message\.stopReason", pi=lambda v: v == "error"),
                when("missing", sig="message_start:assistant", path=r"message\.errorMessage"))),
    Rule("partial-bookkeeping", "docs/protocol.md#streaming-updates (reference quirk)",
         "pi leaves its Anthropic parser's bookkeeping keys (index, partialJson) on partial content "
         "blocks in message_update snapshots; rho never writes them.",
         when("missing", sig=r"update:.*", path=r"partialBlock\.(index|partialJson)")),
    Rule("partial-alias", "pi bug: late-serialized snapshots",
         "pi's message_update snapshots are serialized after later events mutated them (a block's last "
         "snapshot can already hold the final stopReason or the next block); rho's snapshot is the "
         "message as it was when the event happened.",
         when("value", sig=r"update:.*", path=r"partialBlock\.(text|thinking)")),
    Rule("parse-text", "docs/protocol.md#malformed-lines",
         "The text after `Failed to parse command: ` is the JSON parser's own message (Node's vs "
         "serde_json's); hosts may rely only on the prefix.",
         when("value", sig="response:parse:err", path="error",
              pi=_startswith("Failed to parse command: "), rho=_startswith("Failed to parse command: "))),
    Rule("blank-line", "D3 (docs/protocol.md#framing)",
         "A blank input line: pi feeds \"\" to JSON.parse and answers a parse error; rho ignores it.",
         when("frame-missing", sig="response:parse:err",
              pi=lambda v: isinstance(v, dict) and "Unexpected end of JSON input" in str(v.get("error")))),
    Rule("null-line", "docs/protocol.md#unknown-commands; pi bug: dies on a `null` line",
         "A `null` line: rho answers a parse error and goes on; pi 0.73.1's error handler reads "
         "`command.id` of null, throws an unhandled rejection and the process exits with status 1, so "
         "nothing after it is answered.",
         any_of(when("frame-extra", sig="response:parse:err",
                     rho=lambda v: isinstance(v, dict) and "null" in str(v.get("error"))),
                when("frame-extra", scenario="null_line", rho=lambda v: isinstance(v, dict) and v.get("id") == "g1"),
                when("value", sig="<exit>", scenario="null_line", pi=lambda v: v == 1, rho=lambda v: v == 0))),
    Rule("unknown-id", "D3 (docs/protocol.md#unknown-commands)",
         "An unknown command (or one without type) that carried an id is answered with that id.",
         when("extra", ftype="response", path="id", pi=lambda v: v is None,
              rho=lambda v: v is not None)),
    Rule("handler-text", "docs/protocol.md#handler-failures",
         "A command missing a required field fails with the runtime's own text (pi: JavaScript's "
         "TypeError message; rho: serde's `Missing field`); both correlated by id and command.",
         when("value", sig=r"response:set_session_name:err(:.*)?", path="error", pi=_startswith("Cannot read properties of undefined"))),
    Rule("http-error-text", "docs/agent-behavior.md#auto-retry; pi quirk: Anthropic SDK error text",
         "errorMessage of an HTTP error: pi shows the Anthropic SDK's text, `<status> <whole JSON body>` "
         "(the SDK stringifies the body because Anthropic nests the message under error.message); rho "
         "writes `<status> <provider message>` for every provider, the form pi itself produces for "
         "OpenAI. Both lead with the status, which is what the retry and overflow classifiers match.",
         when("value", path=r"(" + _MSG + r"\.errorMessage|errorMessage)",
              pi=lambda v: isinstance(v, str) and bool(re.match(r"^\d{3} \{", v)),
              rho=lambda v: isinstance(v, str) and bool(re.match(r"^\d{3} ", v)))),
    Rule("retry-after", "docs/protocol.md#session-events, docs/agent-behavior.md#auto-retry",
         "auto_retry_start.delayMs: rho raises the back-off to the server's retry-after(-ms) "
         "(xcsh; docs/protocol.md#session-events); pi 0.73 ignores it at the agent level and waits baseDelayMs.",
         when("value", ftype="auto_retry_start", path="delayMs")),
    Rule("abort-text", "docs/protocol.md#exact-strings (`Request was aborted`)",
         "errorMessage of an aborted reply: rho writes the protocol's `Request was aborted`; pi 0.73 passes "
         "Node's AbortError text `This operation was aborted`.",
         when("value", path=r"(" + _MSG + r")\.errorMessage", pi=lambda v: v == "This operation was aborted",
              rho=lambda v: v == "Request was aborted")),
    Rule("update-delta", "D19 (docs/protocol.md#streaming-updates)",
         "message_update is pi 1.6's delta shape {type, usage, assistantMessageEvent}: the step alone, without "
         "pi 0.73's `assistantMessageEvent.partial` and `message` snapshots (a pi host passes neither --no-title "
         "nor negotiate_protocol, so it gets deltas). The deltas, block ends and their order are still compared.",
         when("missing", sig=r"update:.*",
              path=r"partialKeys\.\w+|partialBlock|_frameKeys\.message|_eventKeys\.partial")),
    Rule("update-usage", "D19 (docs/protocol.md#run-events)",
         "Every message_update carries pi 1.6's `usage`, the reply's usage so far; pi 0.73 has none.",
         when("extra", sig=r"update:.*", path=r"_frameKeys\.usage")),
    Rule("toolcall-start-ids", "D19 (docs/protocol.md#streaming-updates)",
         "toolcall_start carries the call's `id` and `toolName` (pi 1.6's step), which pi 0.73 leaves to the "
         "partial snapshot.",
         when("extra", sig=r"update:toolcall:.*", path=r"_eventKeys\.(id|toolName)")),
    Rule("agent-end-will-retry", "D20 (docs/protocol.md#run-events)",
         "agent_end carries pi 1.6's willRetry: true when an automatic retry of the run's failed reply follows "
         "(retry_429's first run), false otherwise; pi 0.73 has no such field.",
         when("extra", ftype="agent_end", path="willRetry")),
    Rule("agent-settled", "D20 (docs/protocol.md#run-events)",
         "After a prompt's last agent_end rho writes pi 1.6's {type: agent_settled, aborted}: nothing more "
         "follows on its own (aborted: true when an abort ended the prompt, as in `abort`). pi 0.73 has no such "
         "frame and passes unknown events to its listeners.",
         when("frame-extra", sig="agent_settled")),
    Rule("prompt-disposition", "docs/protocol.md#refused-prompts, #commands",
         "An accepted prompt, steer, follow_up or abort_and_prompt is answered with pi 1.6's data "
         "{disposition: started | queued | handled}; pi 0.73 answers success without data.",
         when("extra", sig=r"response:(prompt|steer|follow_up|abort_and_prompt):ok(:.*)?", path="data",
              rho=lambda v: isinstance(v, dict) and v.get("disposition") in ("started", "queued", "handled"))),
    Rule("tool-duration", "docs/protocol.md#tool-execution-events",
         "tool_execution_end carries pi 1.6's durationMs (how long the tool ran); pi 0.73 has none.",
         when("extra", ftype="tool_execution_end", path="durationMs")),
    Rule("compaction-estimate", "pi 1.6.0 (CompactionResult)",
         "A compaction's result (compact's answer and compaction_end.result) carries pi 1.6's "
         "estimatedTokensAfter and usage (what the summary request used); pi 0.73 has neither.",
         any_of(when("extra", sig=r"response:compact:ok(:.*)?", path=r"data\.(estimatedTokensAfter|usage)"),
                when("extra", ftype="compaction_end", path=r"result\.(estimatedTokensAfter|usage)"))),
    Rule("message-fields-1-6", "pi 1.6.0 (docs/message-types.md)",
         "Assistant messages carry pi 1.6's durationMs, rawStopReason (the provider's own stop reason), "
         "thinkingLevel, usage.cacheWrite1h and usage.cost.totalFromProvider; pi 0.73 has none of them.",
         when("extra", path=r"(.*\.)?(durationMs|rawStopReason|thinkingLevel|(usage\.)?cacheWrite1h"
                            r"|(usage\.)?(cost\.)?totalFromProvider)")),
    Rule("auto-compaction-events", "D16",
         "Automatic compactions: rho emits the older protocol's auto_compaction_start/auto_compaction_end as well "
         "as pi 0.73's compaction_start/compaction_end; pi 0.73 emits only the latter.",
         when("frame-extra", sig="auto_compaction_(start|end)")),
]

RULES += [
    Rule("thinking-signature-partial", "rho bug (pi behaviour is right)",
         "Partial snapshots from thinking_end on lack the thinking block's thinkingSignature: the "
         "Anthropic stream sends signature_delta before content_block_stop, pi's snapshots carry it, "
         "rho's only get it with message_end (the signature never travels in an event, and the "
         "host-side partial is rebuilt from events).",
         when("missing", sig=r"update:.*", path=r"partialBlock\.thinkingSignature"), status="rho-bug"),
    Rule("overflow-no-body", "rho bug (docs/agent-behavior.md#when-compaction-runs overflow patterns)",
         "A 413 (or 400) with an empty body is a context overflow by the overflow pattern "
         r"`^4(00|13)\s*(status code)?\s*\(no body\)`; pi's text is `413 status code (no body)`, it "
         "compacts (reason overflow) and retries. rho writes `413 Payload Too Large` (the status's "
         "canonical reason), classifies it as a plain error and stops: no compaction, no retry.",
         any_of(when("value", path=r"(" + _MSG + r")\.errorMessage", pi=lambda v: v == "413 status code (no body)",
                     rho=lambda v: v == "413 Payload Too Large"),
                when("frame-missing", scenario="overflow_413"),
                when(sig=r"response:get_messages:ok(:.*)?", scenario="overflow_413")),
         status="rho-bug"),
]

TITLES = {r.id: r.ref for r in RULES}


def explain(d: Diff, scenario: str) -> str | None:
    for r in RULES:
        if r.match(d, scenario):
            return r.id
    return None
