//! Slash commands backed by files: the `get_commands` list, and the expansion a prompt goes
//! through before it reaches the model (`/skill:name args`, then `/template args`).

use std::path::Path;

use rho_rpc::{AvailableCommand, CommandInput, RpcSlashCommand, SlashCommandSource, SourceInfo};

use super::resource::{Location, PromptError};
use super::skills::{Skill, expand_skill_command};
use super::templates::{PromptTemplate, expand_template};

/// The `get_commands` entries: every template, then every skill as `skill:<name>` (only when
/// skill commands are enabled, since `/skill:` does nothing otherwise).
pub fn slash_commands(
    templates: &[PromptTemplate],
    skills: &[Skill],
    enable_skill_commands: bool,
) -> Vec<RpcSlashCommand> {
    let mut commands: Vec<RpcSlashCommand> = templates
        .iter()
        .map(|t| RpcSlashCommand {
            name: t.name.clone(),
            description: Some(t.description.clone()).filter(|d| !d.is_empty()),
            source: SlashCommandSource::Prompt,
            source_info: Some(source_info(&t.file_path, t.location, "prompts")),
            location: Some(t.location.into()),
            path: Some(t.file_path.to_string_lossy().into_owned()),
        })
        .collect();
    if enable_skill_commands {
        commands.extend(skills.iter().map(|s| RpcSlashCommand {
            name: format!("skill:{}", s.name),
            description: Some(s.description.clone()),
            source: SlashCommandSource::Skill,
            source_info: Some(source_info(&s.file_path, s.location, "skills")),
            location: Some(s.location.into()),
            path: Some(s.file_path.to_string_lossy().into_owned()),
        }));
    }
    commands
}

/// omp's `get_available_commands`: the same commands in omp's shape (skills, then templates
/// as slash-command files).
pub fn available_commands(
    templates: &[PromptTemplate],
    skills: &[Skill],
    enable_skill_commands: bool,
) -> Vec<AvailableCommand> {
    let mut commands = Vec::new();
    if enable_skill_commands {
        commands.extend(skills.iter().map(|s| AvailableCommand {
            name: format!("skill:{}", s.name),
            aliases: None,
            description: Some(if s.description.is_empty() {
                format!("Run {} skill", s.name)
            } else {
                s.description.clone()
            }),
            input: Some(CommandInput { hint: "arguments".into() }),
            subcommands: None,
            source: "skill".into(),
        }));
    }
    for t in templates {
        if commands.iter().any(|c: &AvailableCommand| c.name == t.name) {
            continue;
        }
        commands.push(AvailableCommand {
            name: t.name.clone(),
            aliases: None,
            description: Some(t.description.clone()).filter(|d| !d.is_empty()),
            input: None,
            subcommands: None,
            source: "file".into(),
        });
    }
    commands
}

/// pi 0.73's `sourceInfo` for a file found under a `prompts` or `skills` directory: a
/// discovered file's base is the directory holding that folder (the agent dir, a `.pi` dir);
/// a file named in settings or on the command line is its own base.
fn source_info(file: &Path, location: Location, folder: &str) -> SourceInfo {
    let discovered_base = file.ancestors().find(|a| a.file_name().is_some_and(|n| n == folder)).and_then(Path::parent);
    let (source, scope, base) = match (location, discovered_base) {
        (Location::User, Some(base)) => ("auto", "user", base),
        (Location::Project, Some(base)) => ("auto", "project", base),
        _ => ("local", "temporary", file.parent().unwrap_or(file)),
    };
    SourceInfo {
        path: file.to_string_lossy().into_owned(),
        source: source.into(),
        scope: scope.into(),
        origin: "top-level".into(),
        base_dir: Some(base.to_string_lossy().into_owned()),
    }
}

/// What `AgentSession.prompt` sends for `text`: a `/skill:name args` prompt expanded to the
/// skill (when skill commands are enabled), then a `/template args` prompt expanded to the
/// template; anything else unchanged. An error means a named skill's file could not be read;
/// the caller reports it and may send `text` as it is.
pub fn expand_prompt(
    text: &str,
    templates: &[PromptTemplate],
    skills: &[Skill],
    enable_skill_commands: bool,
) -> Result<String, PromptError> {
    let text = if enable_skill_commands {
        expand_skill_command(text, skills)?.unwrap_or_else(|| text.to_owned())
    } else {
        text.to_owned()
    };
    Ok(expand_template(&text, templates).unwrap_or(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::resource::Location;
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    fn template(name: &str, description: &str, content: &str) -> PromptTemplate {
        PromptTemplate {
            name: name.into(),
            description: description.into(),
            content: content.into(),
            file_path: PathBuf::from(format!("/proj/.rho/prompts/{name}.md")),
            location: Location::Project,
        }
    }

    fn skill_at(dir: &std::path::Path, name: &str) -> Skill {
        let file = dir.join(name).join("SKILL.md");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, format!("---\ndescription: d\n---\nDo {name}.")).unwrap();
        Skill {
            name: name.into(),
            description: format!("About {name}"),
            base_dir: file.parent().unwrap().to_path_buf(),
            file_path: file,
            location: Location::User,
            disable_model_invocation: false,
        }
    }

    #[test]
    fn get_commands_shape() {
        let skills = [Skill {
            name: "pdf".into(),
            description: "PDF tools".into(),
            file_path: "/home/u/.rho/agent/skills/pdf/SKILL.md".into(),
            base_dir: "/home/u/.rho/agent/skills/pdf".into(),
            location: Location::User,
            disable_model_invocation: true,
        }];
        let templates = [template("review", "Review code", "x"), template("bare", "", "y")];
        let commands = slash_commands(&templates, &skills, true);
        let json = serde_json::to_string(&commands).unwrap();
        assert_eq!(
            json,
            concat!(
                r#"[{"name":"review","description":"Review code","source":"prompt","#,
                r#""sourceInfo":{"path":"/proj/.rho/prompts/review.md","source":"auto","scope":"project","origin":"top-level","baseDir":"/proj/.rho"},"#,
                r#""location":"project","path":"/proj/.rho/prompts/review.md"},"#,
                r#"{"name":"bare","source":"prompt","#,
                r#""sourceInfo":{"path":"/proj/.rho/prompts/bare.md","source":"auto","scope":"project","origin":"top-level","baseDir":"/proj/.rho"},"#,
                r#""location":"project","path":"/proj/.rho/prompts/bare.md"},"#,
                r#"{"name":"skill:pdf","description":"PDF tools","source":"skill","#,
                r#""sourceInfo":{"path":"/home/u/.rho/agent/skills/pdf/SKILL.md","source":"auto","scope":"user","origin":"top-level","baseDir":"/home/u/.rho/agent"},"#,
                r#""location":"user","path":"/home/u/.rho/agent/skills/pdf/SKILL.md"}]"#
            )
        );
        assert_eq!(slash_commands(&templates, &skills, false).len(), 2);
    }

    #[test]
    fn expand_prompt_applies_skills_then_templates() {
        let tmp = tempfile::tempdir().unwrap();
        let skills = [skill_at(tmp.path(), "lint")];
        let templates = [template("greet", "", "Hello $1!"), template("lint", "", "template")];
        assert_eq!(expand_prompt("/greet \"big world\"", &templates, &skills, true).unwrap(), "Hello big world!");
        let expanded = expand_prompt("/skill:lint now", &templates, &skills, true).unwrap();
        assert!(expanded.starts_with("<skill name=\"lint\""), "{expanded}");
        assert!(expanded.ends_with("Do lint.\n</skill>\n\nnow"), "{expanded}");
        // Disabled skill commands pass through (and "/skill:lint" is no template name).
        assert_eq!(expand_prompt("/skill:lint now", &templates, &skills, false).unwrap(), "/skill:lint now");
        assert_eq!(expand_prompt("/nothing here", &templates, &skills, true).unwrap(), "/nothing here");
        assert_eq!(expand_prompt("plain", &templates, &skills, true).unwrap(), "plain");
    }
}
