//! The user's own shell commands (`!cmd` in a terminal, the RPC `bash` command): not a tool, but
//! the same shell, prefix and process-group handling as the `bash` tool, with output cleaned for
//! display (ANSI escapes, control characters, U+FFF9–U+FFFB and carriage returns removed) and
//! no timeout. The result is the protocol's `BashResult`; the full output goes to a spill file
//! whenever the returned output is truncated.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::ToolOptions;
use crate::output::OutputBuffer;
use crate::process::{Ending, OutputSink, ShellCommand, run_shell};
use crate::shell::{resolve_shell, shell_path_env, with_prefix};

/// The `bash` command's result (`BashResult`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserBashResult {
    /// Combined stdout and stderr, cleaned, tail-truncated when long.
    pub output: String,
    /// Absent when the command was killed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub truncated: bool,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}

/// Why a user command could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum UserBashError {
    /// The configured shell is missing.
    #[error("{0}")]
    Shell(String),
    #[error("Working directory does not exist: {0}\nShell commands cannot run until it is created again.")]
    MissingCwd(String),
    #[error("{0}")]
    Spawn(#[from] std::io::Error),
}

/// ANSI escape sequences (CSI, OSC and the short forms), as terminals emit them.
static ANSI: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"[\x1b\x{9b}][\[\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?(?:\x07|\x1b\\))|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-nq-uy=><~]))",
    )
    .ok()
});

/// Removes escapes, control characters (but tab and newline), U+FFF9–U+FFFB and `\r`.
pub fn sanitize(text: &str) -> String {
    let stripped = match ANSI.as_ref() {
        Some(re) => re.replace_all(text, ""),
        None => std::borrow::Cow::Borrowed(text),
    };
    stripped
        .chars()
        .filter(|&c| {
            let code = c as u32;
            if c == '\t' || c == '\n' {
                return true;
            }
            !(code <= 0x1f || (0xFFF9..=0xFFFB).contains(&code))
        })
        .collect()
}

/// Decodes a byte stream as UTF-8 across chunk boundaries and cleans it.
#[derive(Default)]
struct Decoder {
    pending: Vec<u8>,
    held: String,
}

impl Decoder {
    fn decode(&mut self, chunk: &[u8], last: bool) -> String {
        self.pending.extend_from_slice(chunk);
        let mut text = std::mem::take(&mut self.held);
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    text.push_str(valid);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    text.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        Some(len) => {
                            text.push('\u{FFFD}');
                            rest = &after[len..];
                        }
                        None if last => {
                            text.push('\u{FFFD}');
                            rest = &[];
                            break;
                        }
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        if !last {
            self.hold_unfinished_escape(&mut text);
        }
        sanitize(&text)
    }

    /// Keeps an escape sequence cut by the chunk boundary for the next chunk.
    fn hold_unfinished_escape(&mut self, text: &mut String) {
        let Some(at) = text.rfind('\x1b') else {
            return;
        };
        let tail = &text[at..];
        let complete = if let Some(csi) = tail.strip_prefix("\x1b[") {
            csi.chars().any(|c| ('@'..='~').contains(&c))
        } else if let Some(osc) = tail.strip_prefix("\x1b]") {
            osc.contains('\x07') || osc.contains("\x1b\\")
        } else {
            tail.len() > 1
        };
        if !complete && tail.len() < 64 && !tail.contains('\n') {
            self.held = text.split_off(at);
        }
    }
}

/// Where a command's cleaned output goes as it comes (the RPC `bash_execution_update`s).
pub type OnOutput<'a> = &'a mut (dyn FnMut(&str) + Send);

struct SanitizingSink<'a> {
    decoder: Decoder,
    output: OutputBuffer,
    on_output: OnOutput<'a>,
}

impl SanitizingSink<'_> {
    fn push(&mut self, clean: &str) {
        if !clean.is_empty() {
            (self.on_output)(clean);
        }
        self.output.push(clean.as_bytes());
    }
}

impl OutputSink for SanitizingSink<'_> {
    fn output(&mut self, chunk: &[u8]) {
        let clean = self.decoder.decode(chunk, false);
        self.push(&clean);
    }
}

/// Runs a user command in `cwd` until it ends or `cancel` fires. Every piece of cleaned output is
/// handed to `on_output` as it comes (all of it, however long; the result keeps the tail).
pub async fn run_user_bash(
    command: &str,
    cwd: &Path,
    options: &ToolOptions,
    cancel: CancellationToken,
    on_output: OnOutput<'_>,
) -> Result<UserBashResult, UserBashError> {
    let shell = resolve_shell(options).map_err(UserBashError::Shell)?;
    if !cwd.exists() {
        return Err(UserBashError::MissingCwd(cwd.display().to_string()));
    }
    let mut sink = SanitizingSink { decoder: Decoder::default(), output: OutputBuffer::new(), on_output };
    if cancel.is_cancelled() {
        return Ok(result_of(&mut sink, Ending::Cancelled));
    }
    let full_command = with_prefix(options, command);
    // The user's own command: confined like the model's, but `.git`, `.rho` and `.pi` are theirs.
    let sandbox = options.sandbox.as_deref().map(rho_sandbox::Sandbox::for_user);
    let ending = run_shell(
        ShellCommand {
            shell: &shell,
            command: &full_command,
            cwd,
            path_env: shell_path_env(options),
            env: &options.environment,
            sandbox: sandbox.as_ref(),
            hide_provider_keys: !options.inherit_provider_keys,
            session_env: Vec::new(),
        },
        &mut sink,
        &cancel,
        None,
    )
    .await?;
    let tail = sink.decoder.decode(&[], true);
    sink.push(&tail);
    Ok(result_of(&mut sink, ending))
}

fn result_of(sink: &mut SanitizingSink, ending: Ending) -> UserBashResult {
    let snapshot = sink.output.finish();
    let t = snapshot.truncation;
    let exit_code = match ending {
        Ending::Exited(code) => code,
        Ending::Cancelled | Ending::TimedOut => None,
    };
    // The counters are omp's (its `bash` answer), which counts the pieces of `split('\n')`: a
    // final newline starts one more, empty, line (pi 1.6's truncation does not count it).
    let final_newline = usize::from(sink.output.ends_with_newline());
    UserBashResult {
        output: t.content,
        exit_code,
        cancelled: exit_code.is_none(),
        truncated: t.truncated,
        total_lines: sink.output.total_lines() + final_newline,
        total_bytes: sink.output.total_bytes(),
        output_lines: t.output_lines + if t.truncated { 0 } else { final_newline },
        output_bytes: t.output_bytes,
        full_output_path: snapshot.full_output_path.map(|p| p.display().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_strips_escapes_controls_and_carriage_returns() {
        assert_eq!(sanitize("\x1b[31mred\x1b[0m plain"), "red plain");
        assert_eq!(sanitize("a\r\nb\rc"), "a\nbc");
        assert_eq!(sanitize("bell\x07 nul\x00 tab\t"), "bell nul tab\t");
        assert_eq!(sanitize("x\u{FFF9}y\u{FFFB}z"), "xyz");
        assert_eq!(sanitize("\x1b]0;title\x07after"), "after");
        assert_eq!(sanitize("ünïcödé ✓"), "ünïcödé ✓");
    }

    #[test]
    fn decoder_joins_split_characters_and_escapes() {
        let mut d = Decoder::default();
        let bytes = "é\x1b[32mok".as_bytes();
        let mut out = d.decode(&bytes[..1], false);
        out.push_str(&d.decode(&bytes[1..5], false));
        out.push_str(&d.decode(&bytes[5..], false));
        out.push_str(&d.decode(&[], true));
        assert_eq!(out, "éok");
    }

    #[test]
    fn decoder_replaces_invalid_bytes() {
        let mut d = Decoder::default();
        let mut out = d.decode(b"a\xffb\xe2", false);
        out.push_str(&d.decode(&[], true));
        assert_eq!(out, "a\u{FFFD}b\u{FFFD}");
    }
}
