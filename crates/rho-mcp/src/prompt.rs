//! MCP prompts, for a host to offer as slash commands: each is named `mcp__<server>__<prompt>`
//! (Claude Code's `/mcp__<server>__<prompt>`), and getting one yields messages of rho content.

use std::collections::BTreeMap;

use rho_types::types::{ImageContent, UserContent};
use rmcp::model::{ContentBlock, GetPromptResult, Prompt, PromptMessage, ResourceContents, Role};

/// A prompt a server offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPrompt {
    /// The command name (`mcp__<server>__<prompt>`, sanitized like tool names).
    pub command: String,
    pub server: String,
    /// The server's own name for it.
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<McpPromptArgument>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPromptArgument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

/// Who a prompt message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRole {
    User,
    Assistant,
}

/// One message of a prompt, as rho content.
#[derive(Debug, Clone, PartialEq)]
pub struct McpPromptMessage {
    pub role: PromptRole,
    pub content: Vec<UserContent>,
}

impl McpPrompt {
    pub(crate) fn new(command: String, server: &str, prompt: &Prompt) -> Self {
        let arguments = prompt
            .arguments
            .iter()
            .flatten()
            .map(|a| McpPromptArgument {
                name: a.name.clone(),
                description: a.description.clone(),
                required: a.required == Some(true),
            })
            .collect();
        Self {
            command,
            server: server.to_owned(),
            name: prompt.name.clone(),
            title: prompt.title.clone(),
            description: prompt.description.clone(),
            arguments,
        }
    }

    /// Binds a slash command's words to the arguments in declared order, the last argument
    /// taking the rest of the line (`/mcp__git__commit fix the parser` with one argument
    /// `message` gives `message = "fix the parser"`). Missing required arguments are returned
    /// as the error.
    pub fn bind_arguments(&self, line: &str) -> Result<BTreeMap<String, String>, Vec<String>> {
        let mut bound = BTreeMap::new();
        let mut rest = line.trim();
        for (i, argument) in self.arguments.iter().enumerate() {
            if rest.is_empty() {
                break;
            }
            let value = if i + 1 == self.arguments.len() {
                std::mem::take(&mut rest)
            } else {
                let (word, tail) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                rest = tail.trim_start();
                word
            };
            bound.insert(argument.name.clone(), value.to_owned());
        }
        let missing: Vec<String> = self
            .arguments
            .iter()
            .filter(|a| a.required && !bound.contains_key(&a.name))
            .map(|a| a.name.clone())
            .collect();
        if missing.is_empty() { Ok(bound) } else { Err(missing) }
    }
}

pub(crate) fn messages(result: GetPromptResult) -> Vec<McpPromptMessage> {
    result.messages.into_iter().map(message).collect()
}

fn message(message: PromptMessage) -> McpPromptMessage {
    let role = match message.role {
        Role::Assistant => PromptRole::Assistant,
        _ => PromptRole::User,
    };
    let content = match message.content {
        ContentBlock::Text(text) => UserContent::text(text.text),
        ContentBlock::Image(image) => {
            UserContent::Image(ImageContent { data: image.data.into(), mime_type: image.mime_type })
        }
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                UserContent::text(format!("[Resource: {uri}]\n{text}"))
            }
            ResourceContents::BlobResourceContents { uri, .. } => {
                UserContent::text(format!("[Resource: {uri}, binary, not shown]"))
            }
            _ => UserContent::text("[Resource, not shown]"),
        },
        ContentBlock::ResourceLink(link) => UserContent::text(format!("[Resource link: {}]", link.uri)),
        _ => UserContent::text("[Content of a kind rho does not show]"),
    };
    McpPromptMessage { role, content: vec![content] }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(args: &[(&str, bool)]) -> McpPrompt {
        McpPrompt {
            command: "mcp__s__p".into(),
            server: "s".into(),
            name: "p".into(),
            title: None,
            description: None,
            arguments: args
                .iter()
                .map(|(n, r)| McpPromptArgument { name: (*n).into(), description: None, required: *r })
                .collect(),
        }
    }

    #[test]
    fn words_bind_in_order_and_the_last_takes_the_rest() {
        let p = prompt(&[("lang", true), ("message", false)]);
        let bound = p.bind_arguments("rust  fix the parser ").unwrap();
        assert_eq!(bound.get("lang").map(String::as_str), Some("rust"));
        assert_eq!(bound.get("message").map(String::as_str), Some("fix the parser"));
        assert_eq!(p.bind_arguments("rust").unwrap().len(), 1);
        assert_eq!(p.bind_arguments("  "), Err(vec!["lang".to_owned()]));
        assert_eq!(prompt(&[]).bind_arguments("ignored").unwrap().len(), 0);
    }
}
