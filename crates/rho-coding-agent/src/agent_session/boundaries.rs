//! pi 1.6's actionable boundaries (docs/extensions.md, "turn_end", "agent_before_settle"):
//! where extension handlers may add session entries and ask for one more request. `turn_end`
//! runs once a turn's reply and tool results are recorded, before the turn's `turn_end` event;
//! `agent_before_settle` once nothing else would follow the prompt's last run (no retry, no
//! compaction, nothing queued), before `agent_settled`. The handlers run in the host, chained
//! as pi chains them (each sees the proposal so far, and the context rebuilt with it); rho
//! appends the final proposal's entries (`custom`, `custom_message`, `context_edit`,
//! `compaction`) in order and honours `continue` when the context can go on.

use rho_rpc::SessionEvent;
use rho_session::{EntryId, NewCompaction, SessionEntry};
use rho_types::AgentMessage;
use rho_types::message::CustomMessage;
use rho_types::types::{AssistantMessage, StopReason, ToolResultMessage, UserMessageContent};
use serde_json::{Value, json};

use super::AgentSession;

/// The boundary that could not go on, as pi words it.
fn cannot_continue(boundary: &str) -> String {
    format!("{boundary} requested continuation without runnable model context")
}

/// The content a `context_edit` draft puts in its target's place (`replacement: {content}`);
/// `None` for `replacement: null`, which leaves the target out.
pub(crate) fn edit_content(draft: &Value) -> Result<Option<Value>, String> {
    match draft.get("replacement") {
        None | Some(Value::Null) => Ok(None),
        Some(replacement) => match replacement.get("content") {
            Some(content @ (Value::String(_) | Value::Array(_))) => Ok(Some(content.clone())),
            _ => Err("a context edit's replacement must be null or contain string/array content".into()),
        },
    }
}

/// How the last turn ended, as a boundary's `outcome` says.
fn outcome(reply: &AssistantMessage) -> &'static str {
    match reply.stop_reason {
        StopReason::Aborted => "aborted",
        StopReason::Error => "error",
        _ => "completed",
    }
}

impl AgentSession {
    /// `turn_end` for the turn whose reply is `message`: true when a handler asked for one more
    /// request and the context can take one.
    pub(crate) async fn turn_end_boundary(
        &self,
        message: &AssistantMessage,
        tool_results: &[ToolResultMessage],
    ) -> bool {
        let Some(extensions) = self.extensions().cloned() else { return false };
        let Some((message_entry_id, tool_result_entry_ids)) = self.turn_entry_ids() else {
            self.report_extension_error(
                "<boundary>",
                "turn_end",
                "turn_end could not resolve the persisted assistant entry ID",
            );
            return false;
        };
        let results: Vec<AgentMessage> = tool_results.iter().cloned().map(AgentMessage::ToolResult).collect();
        let event = json!({
            "type": "turn_end",
            "turnIndex": extensions.turn_index(),
            "message": AgentMessage::Assistant(message.clone()),
            "toolResults": results,
            "messageEntryId": message_entry_id,
            "toolResultEntryIds": tool_result_entry_ids,
            "outcome": outcome(message),
            "pendingMessages": self.inner.agent.peek_queued_messages(),
        });
        let Some(answer) = extensions.hook("boundary", event).await else { return false };
        self.commit_boundary(&answer, "turn_end")
    }

    /// `agent_before_settle`, when a handler listens and the prompt was not aborted: true when
    /// one asked for another run and the context can take one.
    pub(crate) async fn before_settle_boundary(&self) -> bool {
        let Some(extensions) = self.extensions().cloned().filter(|e| e.listens("agent_before_settle")) else {
            return false;
        };
        let outcome = self.last_assistant().map_or("completed", |reply| outcome(&reply));
        if self.lifecycle_token().is_cancelled() || outcome == "aborted" {
            return false;
        }
        let event = json!({
            "type": "agent_before_settle",
            "outcome": outcome,
            "pendingMessages": self.inner.agent.peek_queued_messages(),
        });
        let Some(answer) = extensions.hook("boundary", event).await else { return false };
        // Entries are kept when an abort came meanwhile; the continuation is not.
        self.commit_boundary(&answer, "agent_before_settle") && !self.lifecycle_token().is_cancelled()
    }

    /// Whether extensions may still continue the prompt once its runs are done: the agent's last
    /// `agent_end` is then not the lifecycle's end.
    pub(crate) fn settles_through_extensions(&self) -> bool {
        self.extensions().is_some_and(|e| e.listens("agent_before_settle"))
    }

    /// The entry ids of the last reply on the branch and of the tool results recorded after it.
    fn turn_entry_ids(&self) -> Option<(String, Vec<String>)> {
        let session = self.session();
        let mut results = Vec::new();
        for entry in session.branch_entries().into_iter().rev() {
            let SessionEntry::Message(m) = entry else { continue };
            match &m.message {
                AgentMessage::ToolResult(_) => results.push(m.id.as_str().to_owned()),
                AgentMessage::Assistant(_) => {
                    results.reverse();
                    return Some((m.id.as_str().to_owned(), results));
                }
                _ => {}
            }
        }
        None
    }

    /// Appends what the handlers proposed, in order (a draft that cannot be appended is reported
    /// and the others still are), and says whether their `continue` stands.
    fn commit_boundary(&self, answer: &Value, boundary: &str) -> bool {
        let drafts = answer.get("entries").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let mut context_changed = false;
        for draft in drafts {
            match self.commit_draft(draft) {
                Ok(changed) => context_changed |= changed,
                Err(e) => {
                    self.report_extension_error("<boundary>", boundary, &format!("Invalid boundary entries: {e}"))
                }
            }
        }
        if context_changed {
            self.inner.transcript.rebuild();
        }
        if answer.get("continue").and_then(Value::as_bool) != Some(true) {
            return false;
        }
        if !self.can_continue(boundary) {
            self.report_extension_error("<boundary>", boundary, &cannot_continue(boundary));
            return false;
        }
        true
    }

    /// Appends one draft entry; true when the context must be rebuilt from the session for it.
    fn commit_draft(&self, draft: &Value) -> Result<bool, String> {
        let text = |key: &str| draft.get(key).and_then(Value::as_str).map(str::to_owned);
        let required = |key: &str| text(key).ok_or_else(|| format!("\"{key}\" is required"));
        let kind = text("type").unwrap_or_default();
        let rebuild = match kind.as_str() {
            "custom" => {
                self.append_custom_entry(&required("customType")?, draft.get("data").cloned())
                    .map_err(|e| e.to_string())?;
                return Ok(false);
            }
            "custom_message" => {
                let content: UserMessageContent =
                    serde_json::from_value(draft.get("content").cloned().unwrap_or_default())
                        .map_err(|e| format!("unusable content: {e}"))?;
                let message = AgentMessage::Custom(CustomMessage {
                    custom_type: required("customType")?,
                    content,
                    display: draft.get("display").and_then(Value::as_bool).unwrap_or(false),
                    details: draft.get("details").filter(|d| !d.is_null()).cloned(),
                    attribution: None,
                    timestamp: rho_types::types::now_ms(),
                });
                self.inner.transcript.append(message).map_err(|e| e.to_string())?;
                false
            }
            "context_edit" => {
                let content = edit_content(draft)?;
                self.session().append_context_edit(&required("targetId")?, content).map_err(|e| e.to_string())?;
                true
            }
            "compaction" => {
                let compaction = NewCompaction {
                    summary: required("summary")?,
                    first_kept_entry_id: required("firstKeptEntryId")?,
                    tokens_before: self.context_usage().and_then(|u| u.tokens).unwrap_or(0),
                    details: draft.get("details").filter(|d| !d.is_null()).cloned(),
                    from_hook: Some(true),
                    short_summary: None,
                };
                self.session().append_compaction(compaction).map_err(|e| e.to_string())?;
                true
            }
            other => return Err(format!("entries of type \"{other}\" cannot be appended at a boundary")),
        };
        let last = self.session().leaf_id().cloned();
        if let Some(id) = last {
            self.announce_entry(&id);
        }
        Ok(rebuild)
    }

    /// `entry_appended` for an entry appended outside a run's messages.
    pub(crate) fn announce_entry(&self, id: &EntryId) {
        let entry = self.session().get_entry(id.as_str()).and_then(|e| serde_json::to_value(e).ok());
        if let Some(entry) = entry {
            self.emit(SessionEvent::EntryAppended { entry });
        }
    }

    /// Whether a request can follow now (pi's `canContinue`): the context holds more than the
    /// declared prompt and does not end with a reply, or messages are queued (after `turn_end`
    /// they always go next; at settling only after a reply).
    fn can_continue(&self, boundary: &str) -> bool {
        let (has_context, ends_with_reply) = self.inner.agent.read_messages(|messages| {
            let mut conversation = messages.iter().filter(|m| !matches!(m, AgentMessage::System(_)));
            let last = conversation.next_back();
            (last.is_some(), matches!(last, Some(AgentMessage::Assistant(_))))
        });
        let queued = self.queued_count() > 0;
        (has_context && !ends_with_reply) || if boundary == "turn_end" { queued } else { ends_with_reply && queued }
    }
}
