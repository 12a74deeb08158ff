//! What a request made with an Anthropic subscription token (`sk-ant-oat…`, from a Claude
//! Pro/Max login) must look like: the API takes such a token only from Claude Code, so the
//! request is the one pi sends for it. Bearer authorization instead of `x-api-key`; the
//! `claude-code-20250219` and `oauth-2025-04-20` betas ahead of any other; Claude Code's
//! `user-agent` and `x-app: cli`; Claude Code's identity as the first system block; and tool
//! names in Claude Code's casing (`read` → `Read`), turned back into ours in the reply.

use serde_json::{Value, json};

use crate::types::ToolSpec;

/// The Claude Code release pi presents itself as.
pub(crate) const CLAUDE_CODE_VERSION: &str = "2.1.75";

/// The system block every subscription request starts with.
pub(crate) const IDENTITY: &str = "You are Claude Code, Anthropic's official CLI for Claude.";

/// The betas a subscription token needs, first in `anthropic-beta`.
pub(crate) const OAUTH_BETAS: &str = "claude-code-20250219,oauth-2025-04-20";

/// Claude Code's tool names: a tool of ours with one of these names, in any case, is sent with
/// this casing.
const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// Whether `key` is a subscription token rather than an API key (pi's test).
pub(crate) fn is_subscription_token(key: &str) -> bool {
    key.contains("sk-ant-oat")
}

/// `name` in Claude Code's casing when it is one of its tools.
fn to_claude_code(name: &str) -> &str {
    CLAUDE_CODE_TOOLS.iter().find(|cc| cc.eq_ignore_ascii_case(name)).copied().unwrap_or(name)
}

/// A tool name in a reply as ours: the request's tool with that name in any case, else as is.
pub(crate) fn to_ours(name: String, tools: &[ToolSpec]) -> String {
    tools.iter().find(|t| t.name.eq_ignore_ascii_case(&name)).map_or(name, |t| t.name.clone())
}

/// `anthropic-beta` for a subscription request that also needs `other`.
pub(crate) fn betas(other: Option<&str>) -> String {
    match other {
        Some(beta) => format!("{OAUTH_BETAS},{beta}"),
        None => OAUTH_BETAS.to_owned(),
    }
}

/// Turns a request body built for an API key into a subscription one: the identity block first
/// in `system` (marked for caching as the prompt's block is) and Claude Code's tool names in
/// `tools` and in the conversation's `tool_use` blocks.
pub(crate) fn adapt_body(body: &mut Value) {
    let identity = json!({"type": "text", "text": IDENTITY, "cache_control": {"type": "ephemeral"}});
    match body.get_mut("system").and_then(Value::as_array_mut) {
        Some(blocks) => blocks.insert(0, identity),
        None => {
            if let Some(object) = body.as_object_mut() {
                // `system` goes after `stream`, where an API key request has it.
                let mut rebuilt = serde_json::Map::new();
                for (key, value) in std::mem::take(object) {
                    let after_stream = key == "stream";
                    rebuilt.insert(key, value);
                    if after_stream {
                        rebuilt.insert("system".into(), Value::Array(vec![identity.clone()]));
                    }
                }
                rebuilt.entry("system").or_insert_with(|| Value::Array(vec![identity]));
                *object = rebuilt;
            }
        }
    }
    for tool in body.get_mut("tools").and_then(Value::as_array_mut).into_iter().flatten() {
        rename(tool);
    }
    for message in body.get_mut("messages").and_then(Value::as_array_mut).into_iter().flatten() {
        for block in message.get_mut("content").and_then(Value::as_array_mut).into_iter().flatten() {
            if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                rename(block);
            }
        }
    }
}

fn rename(named: &mut Value) {
    if let Some(name) = named.get("name").and_then(Value::as_str) {
        let cc = to_claude_code(name);
        if cc != name {
            named["name"] = Value::from(cc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_go_out_in_claude_code_casing_and_come_back_as_ours() {
        let mut body = json!({
            "model": "m", "max_tokens": 1, "stream": true,
            "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "bash", "input": {}}]}],
            "tools": [{"name": "read"}, {"name": "find"}, {"name": "todo_write"}],
        });
        adapt_body(&mut body);
        assert_eq!(body["system"][0]["text"], IDENTITY);
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "max_tokens", "stream", "system", "messages", "tools"]);
        assert_eq!(body["tools"], json!([{"name": "Read"}, {"name": "find"}, {"name": "todo_write"}]));
        assert_eq!(body["messages"][0]["content"][0]["name"], "Bash");
        let tools = vec![ToolSpec { name: "read".into(), description: String::new(), parameters: json!({}) }];
        assert_eq!(to_ours("Read".into(), &tools), "read");
        assert_eq!(to_ours("Other".into(), &tools), "Other");
        assert!(is_subscription_token("sk-ant-oat01-abc") && !is_subscription_token("sk-ant-api03-abc"));
    }
}
