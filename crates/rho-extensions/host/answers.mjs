// The events whose handlers' answers rho reads and that take more than one call of pi's runner to
// answer: `before_agent_start` (rho's own prompt as the starting point), `user_bash` (a handler
// may hand over operations to run), and pi 1.6's actionable boundaries `turn_end` and
// `agent_before_settle` (each handler sees the entries proposed so far and the context rebuilt
// with them, in a session kept in memory: rho appends the final proposal itself).

/** `before_agent_start`: pi's event for a run started by a user message (`messageType: "user"`)
 *  or by a custom message with `triggerTurn` (`"custom"`). rho's prompt is the starting point;
 *  the answer says what the handlers changed. */
export async function beforeAgentStart(runner, cwd, event) {
  const trigger =
    event.messageType === "custom"
      ? { messageType: "custom", message: event.message }
      : { messageType: "user", prompt: event.prompt, ...(event.images ? { images: event.images } : {}) };
  const options = { ...(event.systemPromptOptions ?? {}), cwd, forceSystemPrompt: event.systemPrompt };
  const result = await runner.emitBeforeAgentStart(trigger, options);
  let systemPrompt = result.systemPromptOptions.forceSystemPrompt;
  // Sections a handler added (`systemPromptOptions.sections.<name>`) follow the prompt as pi
  // renders its own sections.
  for (const [name, content] of Object.entries(result.systemPromptOptions.sections ?? {})) {
    if (content) systemPrompt = `${systemPrompt}\n\n<${name}>\n${content}\n</${name}>`;
  }
  return {
    messages: result.messages,
    systemPrompt: systemPrompt !== event.systemPrompt ? systemPrompt : undefined,
  };
}

/** `turn_end` and `agent_before_settle`: the final proposal, or nothing when it is invalid. */
export async function boundary(pi, runner, manager, cwd, queued, message) {
  // The messages waiting come with rho's event; they are the context's, not the event's.
  const { pendingMessages = [], ...event } = message;
  const preview = (drafts) => boundaryContext(pi, manager, cwd, queued, drafts, event.type, pendingMessages);
  const result = await runner.emitBoundary(event, preview);
  return result.valid ? { entries: result.entries, continue: result.continue === true } : { entries: [], continue: false };
}

/** pi's boundary context for `drafts` on the branch of `manager` (the session mirror). */
function boundaryContext(pi, manager, cwd, queued, drafts, type, pendingMessages) {
  const preview = pi.SessionManager.inMemory(cwd, undefined, [manager.getHeader(), ...manager.getBranch()]);
  for (const draft of drafts) {
    switch (draft?.type) {
      case "custom":
        preview.appendCustomEntry(draft.customType, draft.data);
        break;
      case "custom_message":
        preview.appendCustomMessageEntry(draft.customType, draft.content, draft.display, draft.details);
        break;
      case "context_edit":
        preview.appendContextEdit(draft.targetId, draft.replacement);
        break;
      case "compaction":
        preview.appendCompaction(draft.summary, draft.firstKeptEntryId, 0, draft.details, true, draft.usage);
        break;
      default:
        throw new Error(`entries of type "${draft?.type}" cannot be appended at a boundary`);
    }
  }
  const projection = preview.buildSessionProjection();
  const llmMessages = pi.convertToLlm(projection.messages);
  const finalRole = llmMessages.at(-1)?.role;
  const contextCanContinue = llmMessages.some((m) => m.role !== "system") && finalRole !== "assistant";
  return {
    contextEntries: projection.entries,
    contextMessages: projection.messages,
    llmMessages,
    // The steering and follow-up messages waiting, as rho sent them with the event.
    pendingMessages,
    canContinue: contextCanContinue || (type === "turn_end" ? queued : finalRole === "assistant" && queued),
  };
}

/** `user_bash`: a handler may answer with a result, or with operations this process runs. */
export async function userBash(runner, event) {
  const result = await runner.emitUserBash(event);
  if (!result) return null;
  if (result.result) return { result: result.result };
  if (result.operations?.exec) {
    let output = "";
    const outcome = await result.operations.exec(event.command, event.cwd, {
      onData: (data) => {
        output += data.toString();
      },
    });
    return { result: { output, exitCode: outcome?.exitCode ?? null, cancelled: false, truncated: false } };
  }
  return null;
}
