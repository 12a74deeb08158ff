//! Where the custom and appended system prompt texts come from: `--system-prompt` /
//! `--append-system-prompt` (a path to an existing file means its contents, anything else is
//! the text itself), else `SYSTEM.md` / `APPEND_SYSTEM.md` from `<cwd>/.rho/`, else from the
//! agent dir.

use std::path::{Path, PathBuf};

use super::resource::ResourceDiagnostic;
use crate::config::ConfigPaths;

/// The file that replaces rho's base prompt when `--system-prompt` is absent.
pub const SYSTEM_FILE: &str = "SYSTEM.md";
/// The file appended to the prompt when `--append-system-prompt` is absent.
pub const APPEND_SYSTEM_FILE: &str = "APPEND_SYSTEM.md";

/// The resolved texts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptTexts {
    pub custom: Option<String>,
    pub append: Option<String>,
}

/// Resolves both texts from the two flags (`None` when not given).
pub fn resolve_prompt_texts(
    paths: &ConfigPaths,
    system_prompt: Option<&str>,
    append_system_prompt: Option<&str>,
) -> (PromptTexts, Vec<ResourceDiagnostic>) {
    let mut diagnostics = Vec::new();
    let custom = resolve_one(paths, system_prompt, SYSTEM_FILE, &mut diagnostics);
    let append = resolve_one(paths, append_system_prompt, APPEND_SYSTEM_FILE, &mut diagnostics);
    (PromptTexts { custom, append }, diagnostics)
}

/// [`resolve_prompt_texts`] with `--append-system-prompt` given any number of times (pi 1.6):
/// each one's text (or its file's), in order, separated by a blank line.
pub fn resolve_prompt_texts_appending(
    paths: &ConfigPaths,
    system_prompt: Option<&str>,
    append_system_prompts: &[String],
) -> (PromptTexts, Vec<ResourceDiagnostic>) {
    let (mut texts, mut diagnostics) = match append_system_prompts {
        [] => return resolve_prompt_texts(paths, system_prompt, None),
        [first, ..] => resolve_prompt_texts(paths, system_prompt, Some(first)),
    };
    let mut parts: Vec<String> = texts.append.take().into_iter().collect();
    for value in &append_system_prompts[1..] {
        parts.extend(resolve_one(paths, Some(value), APPEND_SYSTEM_FILE, &mut diagnostics));
    }
    texts.append = Some(parts.join("\n\n"));
    (texts, diagnostics)
}

fn resolve_one(
    paths: &ConfigPaths,
    flag: Option<&str>,
    file_name: &str,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) -> Option<String> {
    if let Some(value) = flag {
        let candidate = paths.resolve(value);
        if !value.is_empty() && candidate.is_file() {
            return read(&candidate, diagnostics);
        }
        return Some(value.to_owned());
    }
    let candidates: [PathBuf; 2] = [paths.project_dir().join(file_name), paths.agent_dir.join(file_name)];
    for path in candidates {
        if path.is_file()
            && let Some(text) = read(&path, diagnostics)
        {
            return Some(text);
        }
    }
    None
}

fn read(path: &Path, diagnostics: &mut Vec<ResourceDiagnostic>) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) => {
            diagnostics.push(ResourceDiagnostic::new(path, format!("cannot read system prompt file: {e}")));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn setup() -> (tempfile::TempDir, ConfigPaths) {
        let tmp = tempfile::tempdir().unwrap();
        let agent = tmp.path().join("agent");
        let cwd = tmp.path().join("proj");
        fs::create_dir_all(&agent).unwrap();
        fs::create_dir_all(cwd.join(".rho")).unwrap();
        let paths = ConfigPaths::new(None, agent, cwd);
        (tmp, paths)
    }

    #[test]
    fn flags_are_file_contents_or_literals() {
        let (_tmp, paths) = setup();
        fs::write(paths.cwd.join("prompt.txt"), "from file").unwrap();
        let (texts, diags) = resolve_prompt_texts(&paths, Some("prompt.txt"), Some("Be brief."));
        assert!(diags.is_empty());
        assert_eq!(texts.custom.as_deref(), Some("from file"));
        assert_eq!(texts.append.as_deref(), Some("Be brief."));
    }

    #[test]
    fn append_flags_add_up_in_order() {
        let (_tmp, paths) = setup();
        fs::write(paths.cwd.join("rules.md"), "From a file.").unwrap();
        let appended = ["Be brief.".to_owned(), "rules.md".to_owned(), "Be kind.".to_owned()];
        let (texts, diags) = resolve_prompt_texts_appending(&paths, None, &appended);
        assert!(diags.is_empty());
        assert_eq!(texts.append.as_deref(), Some("Be brief.\n\nFrom a file.\n\nBe kind."));
        let (none, _) = resolve_prompt_texts_appending(&paths, None, &[]);
        assert_eq!(none, resolve_prompt_texts(&paths, None, None).0);
    }

    #[test]
    fn project_file_then_agent_dir_when_flags_are_absent() {
        let (_tmp, paths) = setup();
        assert_eq!(resolve_prompt_texts(&paths, None, None).0, PromptTexts::default());
        fs::write(paths.agent_dir.join(SYSTEM_FILE), "global system").unwrap();
        fs::write(paths.agent_dir.join(APPEND_SYSTEM_FILE), "global append").unwrap();
        let (texts, _) = resolve_prompt_texts(&paths, None, None);
        assert_eq!(texts.custom.as_deref(), Some("global system"));
        assert_eq!(texts.append.as_deref(), Some("global append"));
        fs::write(paths.project_dir().join(SYSTEM_FILE), "project system").unwrap();
        let (texts, _) = resolve_prompt_texts(&paths, None, None);
        assert_eq!(texts.custom.as_deref(), Some("project system"));
        assert_eq!(texts.append.as_deref(), Some("global append"));
        // A flag wins over the files.
        let (texts, _) = resolve_prompt_texts(&paths, Some("literal"), None);
        assert_eq!(texts.custom.as_deref(), Some("literal"));
    }

    #[test]
    fn unreadable_file_is_reported_and_the_next_one_used() {
        let (_tmp, paths) = setup();
        let bad = paths.project_dir().join(SYSTEM_FILE);
        fs::write(&bad, [0xff, 0xfe]).unwrap();
        fs::write(paths.agent_dir.join(SYSTEM_FILE), "global").unwrap();
        let (texts, diags) = resolve_prompt_texts(&paths, None, None);
        assert_eq!(texts.custom.as_deref(), Some("global"));
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].path, bad);
    }
}
