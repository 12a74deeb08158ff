//! An MCP `tools/call` result as rho's tool result.
//!
//! - `text` blocks stay text; `image` blocks become rho image blocks;
//! - an embedded resource with text becomes `[Resource: <uri>]` and its text; a blob, an audio
//!   block or a resource link becomes a one-line note (the model cannot use the bytes);
//! - `structuredContent` goes to `details.structuredContent`; when the server sent no text
//!   block for it (the spec asks servers to, not all do), its JSON is added as text so the
//!   model sees it;
//! - `isError: true` becomes a [`ToolError`] with the text blocks (or a note when there are
//!   none);
//! - an empty result becomes `(no output)`: some providers reject an empty tool result.
//!
//! `details` always names the server and the server's own tool name. Text past the built-in
//! tools' limits is cut, the whole of it saved to a file ([`crate::cap`]).

use rho_agent::ToolError;
use rho_types::AgentToolResult;
use rho_types::types::{ImageContent, UserContent};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Map, Value};

pub(crate) fn to_agent_result(result: CallToolResult, server: &str, tool: &str) -> Result<AgentToolResult, ToolError> {
    let mut content: Vec<UserContent> = result.content.into_iter().filter_map(block).collect();
    if result.is_error == Some(true) {
        let text = content.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n");
        let text = if text.trim().is_empty() {
            match &result.structured_content {
                Some(structured) => structured.to_string(),
                None => format!("MCP tool \"{tool}\" of server \"{server}\" reported an error without a message"),
            }
        } else {
            text
        };
        return Err(ToolError::new(text));
    }
    let mut details = Map::new();
    details.insert("server".to_owned(), Value::String(server.to_owned()));
    details.insert("tool".to_owned(), Value::String(tool.to_owned()));
    if let Some(structured) = result.structured_content {
        if !content.iter().any(|c| c.as_text().is_some()) {
            let text = serde_json::to_string_pretty(&structured).unwrap_or_else(|_| structured.to_string());
            content.push(UserContent::text(text));
        }
        details.insert("structuredContent".to_owned(), structured);
    }
    if content.is_empty() {
        content.push(UserContent::text("(no output)"));
    }
    crate::cap::cap(&mut content, &mut details);
    Ok(AgentToolResult { content, details: Some(Value::Object(details)), ..AgentToolResult::default() })
}

fn block(block: ContentBlock) -> Option<UserContent> {
    Some(match block {
        ContentBlock::Text(text) => UserContent::text(text.text),
        ContentBlock::Image(image) => {
            UserContent::Image(ImageContent { data: image.data.into(), mime_type: image.mime_type })
        }
        ContentBlock::Audio(audio) => {
            UserContent::text(format!("[Audio: {}, {} bytes, not shown]", audio.mime_type, decoded_len(&audio.data)))
        }
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                UserContent::text(format!("[Resource: {uri}]\n{text}"))
            }
            ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => {
                let mime = mime_type.unwrap_or_else(|| "application/octet-stream".to_owned());
                UserContent::text(format!(
                    "[Resource: {uri} ({mime}, {} bytes, binary, not shown)]",
                    decoded_len(&blob)
                ))
            }
            _ => return None,
        },
        ContentBlock::ResourceLink(link) => {
            let mut note = format!("[Resource link: {}", link.uri);
            if !link.name.is_empty() && link.name != link.uri {
                note.push_str(&format!(" ({})", link.name));
            }
            if let Some(description) = &link.description {
                note.push_str(&format!(": {description}"));
            }
            note.push(']');
            UserContent::text(note)
        }
        _ => return None,
    })
}

/// The byte length a base64 string decodes to.
fn decoded_len(base64: &str) -> usize {
    let trimmed = base64.trim_end_matches('=');
    trimmed.len() * 3 / 4
}
