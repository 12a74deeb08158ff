//! How skills reach the model: the `<available_skills>` block of the system prompt, and the
//! expansion of a `/skill:name args` prompt into the skill's text.

use super::super::frontmatter::strip_front_matter;
use super::super::resource::PromptError;
use super::Skill;

/// The system prompt's skills block, starting with a blank line; empty when no skill is
/// visible to the model.
pub fn skills_prompt_block(skills: &[Skill]) -> String {
    let visible: Vec<&Skill> = skills.iter().filter(|s| !s.disable_model_invocation).collect();
    if visible.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n\n");
    out.push_str("Skills are specialized instructions for particular kinds of tasks, listed below.\n");
    out.push_str(
        "When a task matches a skill's description, load that skill's file with the read tool before you start.\n",
    );
    out.push_str(
        "A relative path in a skill file is relative to the skill's directory (the folder that holds the file): resolve it there and use the absolute path in tool commands.\n",
    );
    out.push('\n');
    out.push_str("<available_skills>");
    for skill in visible {
        out.push_str("\n  <skill>");
        out.push_str(&format!("\n    <name>{}</name>", escape_xml(&skill.name)));
        out.push_str(&format!("\n    <description>{}</description>", escape_xml(&skill.description)));
        out.push_str(&format!("\n    <location>{}</location>", escape_xml(&skill.file_path.to_string_lossy())));
        out.push_str("\n  </skill>");
    }
    out.push_str("\n</available_skills>");
    out
}

fn escape_xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Expands `/skill:name [args]` into the skill's body wrapped in a `<skill>` element (args
/// follow after a blank line). `Ok(None)` when `text` is not such a command or names no loaded
/// skill; an error when the skill's file cannot be read now.
pub fn expand_skill_command(text: &str, skills: &[Skill]) -> Result<Option<String>, PromptError> {
    let Some(rest) = text.strip_prefix("/skill:") else {
        return Ok(None);
    };
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    let Some(skill) = skills.iter().find(|s| s.name == name) else {
        return Ok(None);
    };
    let raw = std::fs::read_to_string(&skill.file_path).map_err(|source| PromptError::SkillRead {
        name: skill.name.clone(),
        path: skill.file_path.clone(),
        source,
    })?;
    let body = strip_front_matter(&raw);
    let mut out = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.file_path.display(),
        skill.base_dir.display(),
        body.trim()
    );
    if !args.is_empty() {
        out.push_str("\n\n");
        out.push_str(args);
    }
    Ok(Some(out))
}
