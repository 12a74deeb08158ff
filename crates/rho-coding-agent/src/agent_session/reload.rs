//! `/reload`: the user's files read again without restarting, as pi's reload does — the
//! settings files (the command line's `--setting` values stay on top), the context files
//! (AGENTS.md, CLAUDE.md), skills, prompt templates and the system prompt files — and the
//! system prompt rebuilt from them. The queue modes, auto-compaction and auto-retry follow the
//! reloaded settings. Models, tools, MCP servers and stream rules stay as they were built.

use std::sync::Arc;

use super::{AgentSession, Resources, SessionCommandError};
use crate::config::{ConfigPaths, Settings};
use crate::prompt::{
    ResourceDiagnostic, ResourcePaths, load_context_files, load_prompt_templates, load_skills,
    resolve_prompt_texts_appending,
};
use crate::ttsr::load_ttsr_rules;

/// Where the resources come from besides the conventional places: the command line's choices.
#[derive(Debug, Clone, Default)]
pub struct ResourceSources {
    pub no_context_files: bool,
    pub no_skills: bool,
    /// `--skill` paths.
    pub skills: Vec<String>,
    pub no_prompt_templates: bool,
    /// `--prompt-template` paths.
    pub prompt_templates: Vec<String>,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Vec<String>,
    pub no_rules: bool,
}

/// Context files, skills, templates, the prompt texts and the stream rules, with the problems
/// found on the way.
pub fn load_resources(
    paths: &ConfigPaths,
    settings: &Settings,
    sources: &ResourceSources,
) -> (Resources, Vec<ResourceDiagnostic>) {
    let (context_files, mut diagnostics) =
        if sources.no_context_files { (Vec::new(), Vec::new()) } else { load_context_files(paths) };
    let (skills, d) = load_skills(
        paths,
        &ResourcePaths {
            skip_defaults: sources.no_skills,
            settings: settings.skill_paths(),
            cli: sources.skills.clone(),
        },
    );
    diagnostics.extend(d);
    let (templates, d) = load_prompt_templates(
        paths,
        &ResourcePaths {
            skip_defaults: sources.no_prompt_templates,
            settings: settings.prompt_paths(),
            cli: sources.prompt_templates.clone(),
        },
    );
    diagnostics.extend(d);
    let (prompt_texts, d) =
        resolve_prompt_texts_appending(paths, sources.system_prompt.as_deref(), &sources.append_system_prompt);
    diagnostics.extend(d);
    let ttsr_rules = if sources.no_rules {
        Vec::new()
    } else {
        let (rules, d) = load_ttsr_rules(paths);
        diagnostics.extend(d);
        rules
    };
    (Resources { context_files, skills, templates, prompt_texts, ttsr_rules }, diagnostics)
}

/// What a reload found.
#[derive(Debug, Clone, Default)]
pub struct Reloaded {
    pub context_files: usize,
    pub skills: usize,
    pub templates: usize,
    /// Problems with the files, one line each.
    pub problems: Vec<String>,
}

impl AgentSession {
    /// Reads the settings and resources again (refused while a run or a compaction is going).
    pub fn reload(&self) -> Result<Reloaded, SessionCommandError> {
        if self.is_streaming() || self.is_compacting() {
            return Err(SessionCommandError::Invalid(
                "Wait for the current response to finish before reloading".into(),
            ));
        }
        let paths = &self.inner.paths;
        let mut problems: Vec<String> = self.settings().reload(paths).iter().map(ToString::to_string).collect();
        let sources = self.inner.resource_sources.lock().clone();
        let (mut resources, diagnostics) = load_resources(paths, &self.settings(), &sources);
        problems.extend(diagnostics.iter().map(ToString::to_string));
        // The stream rules were handed to the session's matcher when it was built.
        resources.ttsr_rules.clear();
        let reloaded = Reloaded {
            context_files: resources.context_files.len(),
            skills: resources.skills.len(),
            templates: resources.templates.len(),
            problems,
        };
        *self.inner.resources.lock() = Arc::new(resources);
        {
            let settings = self.settings();
            let agent = &self.inner.agent;
            agent.set_steering_mode(settings.steering_mode());
            agent.set_follow_up_mode(settings.follow_up_mode());
            agent.set_interrupt_mode(settings.interrupt_mode());
            self.inner.compaction.set_auto(settings.compaction().enabled);
            self.inner.retry.set_enabled(settings.retry().enabled);
        }
        self.refresh_tools();
        Ok(reloaded)
    }
}
