//! The system prompt, composed from its parts by a pure function so the caller can rebuild it
//! whenever the tool set, the skills or the context files change.
//!
//! Layout (docs/agent-behavior.md, "System prompt"): rho's base text — identity, the active tools,
//! guidelines derived from which tools are active — or a custom prompt in its place; then the
//! appended prompt, the project context files, the skills block (only with `read` active), the date
//! and the working directory. Each part is a named section (what the transcript's `system`
//! messages record); the text is the sections separated by blank lines.

use std::path::Path;

use rho_types::SystemPrompt;
use time::Date;

use super::context_files::ContextFile;
use super::skills::{Skill, skills_prompt_block};

/// An active tool as the prompt lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTool {
    pub name: String,
    /// One line saying what the tool does (docs/tools.md, "Prompt blurbs", for the built-ins).
    pub blurb: String,
    /// Extra guideline bullets the tool brings (an extension's `promptGuidelines`).
    pub guidelines: Vec<String>,
    /// rho's own tool of that name (its guidelines apply), not an extension's replacement.
    pub builtin: bool,
}

impl PromptTool {
    pub fn new(name: impl Into<String>, blurb: impl Into<String>) -> Self {
        Self { name: name.into(), blurb: blurb.into(), guidelines: Vec::new(), builtin: true }
    }
}

/// Everything the system prompt is made of.
#[derive(Debug, Clone, Copy)]
pub struct SystemPromptInput<'a> {
    pub cwd: &'a Path,
    /// The active tools, in the order they are offered to the model.
    pub tools: &'a [PromptTool],
    /// Replaces rho's base text (tools list and guidelines included) when set and not empty.
    pub custom_prompt: Option<&'a str>,
    /// Added after the base (or custom) text.
    pub append_prompt: Option<&'a str>,
    pub context_files: &'a [ContextFile],
    pub skills: &'a [Skill],
    /// The date the prompt states (today, in UTC, outside tests).
    pub date: Date,
    /// rho's README, named so the model can read it when asked about rho itself.
    pub readme_path: Option<&'a Path>,
}

/// Today's date in UTC.
pub fn today_utc() -> Date {
    time::OffsetDateTime::now_utc().date()
}

/// Composes the system prompt as text.
pub fn build_system_prompt(input: &SystemPromptInput<'_>) -> String {
    system_prompt_sections(input).render()
}

/// Composes the system prompt as the named sections the transcript declares (pi 1.6's names
/// where pi has the same part): `preamble` (rho's base text or the custom prompt), `addendum`,
/// `project_context`, `skills`, `date` and `cwd`.
pub fn system_prompt_sections(input: &SystemPromptInput<'_>) -> SystemPrompt {
    let mut sections: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, text: String| sections.push((name.to_owned(), text));
    add(
        "preamble",
        match input.custom_prompt.filter(|p| !p.is_empty()) {
            Some(custom) => custom.to_owned(),
            None => base_prompt(input.tools, input.readme_path),
        },
    );
    if let Some(append) = input.append_prompt.filter(|p| !p.is_empty()) {
        add("addendum", append.to_owned());
    }
    if !input.context_files.is_empty() {
        let mut context = "# Project Context\n\nProject-specific instructions and guidelines:".to_owned();
        for file in input.context_files {
            context.push_str(&format!("\n\n## {}\n\n{}", file.path.display(), file.content.trim_end()));
        }
        add("project_context", context);
    }
    if has_tool(input.tools, "read") {
        let skills = skills_prompt_block(input.skills);
        if !skills.trim().is_empty() {
            add("skills", skills.trim().to_owned());
        }
    }
    let date = input.date;
    add("date", format!("Current date: {:04}-{:02}-{:02}", date.year(), u8::from(date.month()), date.day()));
    add("cwd", format!("Current working directory: {}", input.cwd.to_string_lossy().replace('\\', "/")));
    SystemPrompt { sections }
}

fn has_tool(tools: &[PromptTool], name: &str) -> bool {
    tools.iter().any(|t| t.name == name)
}

/// rho's own text: identity, tools, guidelines and, when known, where its README is.
fn base_prompt(tools: &[PromptTool], readme_path: Option<&Path>) -> String {
    // A tool without a blurb is offered but not listed (an extension tool without a
    // `promptSnippet`, as pi leaves it out); its guidelines still apply.
    let listed: Vec<&PromptTool> = tools.iter().filter(|t| !t.blurb.trim().is_empty()).collect();
    let tools_list = if listed.is_empty() {
        "(none)".to_owned()
    } else {
        listed
            .iter()
            .map(|t| {
                let blurb = t.blurb.split_whitespace().collect::<Vec<_>>().join(" ");
                format!("- {}: {blurb}", t.name)
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let guidelines = guidelines(tools).iter().map(|g| format!("- {g}")).collect::<Vec<_>>().join("\n");
    let mut text = format!(
        "You are rho, an expert coding agent working in the user's project directory. You help \
         the user by reading files, running commands, editing code and writing new files.\n\n\
         Available tools:\n{tools_list}\n\n\
         Depending on the project, other custom tools may be available as well.\n\n\
         Guidelines:\n{guidelines}"
    );
    if let Some(readme) = readme_path {
        text.push_str(&format!(
            "\n\nrho's documentation (read it only when the user asks about rho itself: its \
             settings, skills, prompt templates, context files or RPC mode):\n- README: {}",
            readme.display()
        ));
    }
    text
}

/// The guideline bullets for the active tools, without duplicates, in the order of
/// docs/agent-behavior.md, "System prompt".
pub fn guidelines(tools: &[PromptTool]) -> Vec<String> {
    let has = |name: &str| has_tool(tools, name);
    // A tool's own guidelines go with rho's tool: an extension's replacement brings its own (as
    // pi's built-in tools carry theirs in their definitions).
    let own = |name: &str| tools.iter().any(|t| t.name == name && t.builtin);
    let explorers = has("grep") || has("find") || has("ls");
    let mut out: Vec<String> = Vec::new();
    let mut add = |g: &str| {
        let g = g.trim();
        if !g.is_empty() && !out.iter().any(|o| o == g) {
            out.push(g.to_owned());
        }
    };
    if has("bash") && !explorers {
        add("Use bash for file operations such as ls, rg and find.");
    } else if has("bash") {
        add("To explore files, prefer the grep, find and ls tools over bash: they are faster \
             and respect .gitignore.");
    }
    if own("read") {
        add("Use read to look at files, rather than cat or sed.");
    }
    if own("read") && own("edit") {
        add("Read a file with the read tool before you edit it.");
    }
    if own("edit") {
        add("Use edit for precise changes: the old text must match the file exactly.");
    }
    if own("write") {
        add("Use write only to create new files or to rewrite a file completely.");
    }
    if own("edit") || own("write") {
        add("When you summarize what you did, write plain text in your reply; do not use cat or \
             bash to display your changes.");
    }
    for tool in tools {
        for g in &tool.guidelines {
            add(g);
        }
    }
    add("Be concise in your responses.");
    add("Show file paths clearly when you work with files.");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn tools(names: &[&str]) -> Vec<PromptTool> {
        names.iter().map(|n| PromptTool::new(*n, format!("{n} blurb"))).collect()
    }

    fn date() -> Date {
        Date::from_calendar_date(2026, time::Month::March, 5).unwrap()
    }

    fn input<'a>(tools: &'a [PromptTool]) -> SystemPromptInput<'a> {
        SystemPromptInput {
            cwd: Path::new("/work/proj"),
            tools,
            custom_prompt: None,
            append_prompt: None,
            context_files: &[],
            skills: &[],
            date: date(),
            readme_path: None,
        }
    }

    #[test]
    fn guideline_conditions() {
        let only_bash = guidelines(&tools(&["bash"]));
        assert!(only_bash[0].starts_with("Use bash for file operations"));
        let bash_grep = guidelines(&tools(&["bash", "grep"]));
        assert!(bash_grep[0].starts_with("To explore files, prefer the grep"));
        let no_bash = guidelines(&tools(&["grep", "read"]));
        assert_eq!(
            no_bash,
            [
                "Use read to look at files, rather than cat or sed.",
                "Be concise in your responses.",
                "Show file paths clearly when you work with files."
            ]
        );
        let editing = guidelines(&tools(&["read", "edit", "write"]));
        assert_eq!(editing.len(), 7);
        assert!(editing[0].starts_with("Use read to look at files"));
        assert!(editing[1].starts_with("Read a file with the read tool before"));
        assert!(editing[2].starts_with("Use edit for precise changes"));
        assert!(editing[3].starts_with("Use write only"));
        assert!(editing[4].starts_with("When you summarize"));
        let write_only = guidelines(&tools(&["write"]));
        assert_eq!(write_only.len(), 4);
    }

    #[test]
    fn tool_guidelines_are_trimmed_and_deduplicated() {
        let mut t = tools(&["deploy", "other"]);
        t[0].guidelines = vec!["  Deploy only when asked. ".into(), "".into()];
        t[1].guidelines = vec!["Deploy only when asked.".into(), "Be concise in your responses.".into()];
        let g = guidelines(&t);
        assert_eq!(
            g,
            [
                "Deploy only when asked.",
                "Be concise in your responses.",
                "Show file paths clearly when you work with files."
            ]
        );
    }

    #[test]
    fn no_tools() {
        let p = build_system_prompt(&input(&[]));
        assert!(p.contains("Available tools:\n(none)\n"), "{p}");
    }

    #[test]
    fn tail_is_date_and_cwd() {
        let t = tools(&["read"]);
        let p = build_system_prompt(&input(&t));
        assert!(p.ends_with("\n\nCurrent date: 2026-03-05\n\nCurrent working directory: /work/proj"), "{p}");
    }

    #[test]
    fn custom_prompt_replaces_the_base_only() {
        let t = tools(&["read", "bash"]);
        let files = [ContextFile { path: "/work/proj/AGENTS.md".into(), content: "Use tabs.".into() }];
        let i = SystemPromptInput {
            custom_prompt: Some("You are a pirate."),
            append_prompt: Some("Arr."),
            context_files: &files,
            ..input(&t)
        };
        let p = build_system_prompt(&i);
        assert_eq!(
            p,
            "You are a pirate.\n\nArr.\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n## /work/proj/AGENTS.md\n\nUse tabs.\n\nCurrent date: 2026-03-05\n\nCurrent working directory: /work/proj"
        );
    }

    #[test]
    fn empty_custom_prompt_keeps_the_base() {
        let t = tools(&["read"]);
        let i = SystemPromptInput { custom_prompt: Some(""), ..input(&t) };
        assert!(build_system_prompt(&i).starts_with("You are rho"));
    }

    #[test]
    fn skills_need_the_read_tool() {
        let skill = Skill {
            name: "s".into(),
            description: "d".into(),
            file_path: "/s/SKILL.md".into(),
            base_dir: "/s".into(),
            location: crate::prompt::Location::User,
            disable_model_invocation: false,
        };
        let skills = [skill];
        let with_read = tools(&["read"]);
        let without = tools(&["bash"]);
        let p = build_system_prompt(&SystemPromptInput { skills: &skills, ..input(&with_read) });
        assert!(p.contains("<available_skills>"));
        let p = build_system_prompt(&SystemPromptInput { skills: &skills, ..input(&without) });
        assert!(!p.contains("<available_skills>"));
    }

    #[test]
    fn blurbs_are_one_line_and_windows_paths_use_slashes() {
        let t = [PromptTool::new("x", "does\n  several\tthings")];
        let i = SystemPromptInput { cwd: Path::new(r"C:\work\proj"), ..input(&t) };
        let p = build_system_prompt(&i);
        assert!(p.contains("- x: does several things\n"), "{p}");
        assert!(p.ends_with("Current working directory: C:/work/proj"));
    }

    #[test]
    fn readme_block_only_when_given() {
        let t = tools(&["read"]);
        let p = build_system_prompt(&input(&t));
        assert!(!p.contains("README"));
        let p =
            build_system_prompt(&SystemPromptInput { readme_path: Some(Path::new("/opt/rho/README.md")), ..input(&t) });
        assert!(p.contains("- README: /opt/rho/README.md"), "{p}");
    }
}
