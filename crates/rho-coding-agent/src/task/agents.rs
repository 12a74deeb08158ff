//! Agent definitions: markdown files whose front matter names the agent (`name`, `description`,
//! `tools`, `model`, `thinking`) and whose body is the sub-agent's system prompt.
//!
//! Where they come from, highest precedence first (a name defined twice keeps the first):
//! the project's nearest `.rho/agents`, `.omp/agents` and `.pi/agents` (walking up from the
//! working directory), the user's `<agentDir>/agents`, `~/.omp/agent/agents` and
//! `~/.pi/agent/agents`, then the bundled ones (`task`, `explore`, `reviewer`). A file that does
//! not parse is skipped with a warning in the log; it never breaks the tool.

use std::path::{Path, PathBuf};

use rho_types::ThinkingLevel;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::ConfigPaths;
use crate::prompt::frontmatter::parse_front_matter;

/// Where a definition came from (`SingleResult.agentSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentSource {
    Bundled,
    User,
    Project,
}

impl AgentSource {
    /// The name omp's sub-agent frames use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bundled => "bundled",
            Self::User => "user",
            Self::Project => "project",
        }
    }
}

/// One agent type the `task` tool can run.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDefinition {
    pub name: String,
    pub description: String,
    /// Appended to the sub-agent's system prompt.
    pub system_prompt: String,
    /// The tools the sub-agent gets (`None`: rho's default set).
    pub tools: Option<Vec<String>>,
    /// A model pattern for the sub-agent (`None`: the parent's model).
    pub model: Option<String>,
    pub thinking: Option<ThinkingLevel>,
    pub source: AgentSource,
    pub file_path: Option<PathBuf>,
}

/// What discovery found.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    pub agents: Vec<AgentDefinition>,
    /// The nearest project agents directory, when one exists (`details.projectAgentsDir`).
    pub project_agents_dir: Option<PathBuf>,
}

impl Discovery {
    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        self.agents.iter().find(|a| a.name == name)
    }
}

const BUNDLED: [(&str, &str); 3] = [
    ("task", include_str!("bundled/task.md")),
    ("explore", include_str!("bundled/explore.md")),
    ("reviewer", include_str!("bundled/reviewer.md")),
];

/// The project directories searched for agents, in precedence order.
const PROJECT_DIRS: [&str; 3] = [".rho/agents", ".omp/agents", ".pi/agents"];

/// Every agent definition visible from `paths.cwd`; the project's own only when the project is
/// trusted (a definition chooses a sub-agent's prompt and tools, and can replace rho's own).
pub fn discover_agents(paths: &ConfigPaths, project_trusted: bool) -> Discovery {
    let mut dirs: Vec<(PathBuf, AgentSource)> = Vec::new();
    let mut project_agents_dir = None;
    for rel in PROJECT_DIRS.iter().filter(|_| project_trusted) {
        if let Some(dir) = paths.cwd.ancestors().map(|a| a.join(rel)).find(|d| d.is_dir()) {
            project_agents_dir.get_or_insert_with(|| dir.clone());
            dirs.push((dir, AgentSource::Project));
        }
    }
    dirs.push((paths.agent_dir.join("agents"), AgentSource::User));
    for rel in [".omp/agent/agents", ".pi/agent/agents"] {
        if let Some(dir) = paths.in_home(rel) {
            dirs.push((dir, AgentSource::User));
        }
    }

    let mut agents: Vec<AgentDefinition> = Vec::new();
    for (dir, source) in dirs {
        for agent in load_dir(&dir, source) {
            if !agents.iter().any(|a| a.name == agent.name) {
                agents.push(agent);
            }
        }
    }
    for (name, text) in BUNDLED {
        match parse_agent(name, text, AgentSource::Bundled, None) {
            Some(agent) if !agents.iter().any(|a| a.name == agent.name) => agents.push(agent),
            _ => {}
        }
    }
    Discovery { agents, project_agents_dir }
}

/// The `*.md` files of `dir`, in name order.
fn load_dir(dir: &Path, source: AgentSource) -> Vec<AgentDefinition> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) => {
                    tracing::warn!("cannot read agent file {}: {e}", path.display());
                    return None;
                }
            };
            let stem = path.file_stem()?.to_string_lossy().into_owned();
            parse_agent(&stem, &text, source, Some(path))
        })
        .collect()
}

/// One definition; `fallback_name` is used when the front matter has no `name`.
pub(crate) fn parse_agent(
    fallback_name: &str,
    text: &str,
    source: AgentSource,
    file_path: Option<PathBuf>,
) -> Option<AgentDefinition> {
    let parsed = match parse_front_matter(text) {
        Ok(p) => p,
        Err(e) => {
            let at = file_path.as_ref().map_or_else(|| fallback_name.to_owned(), |p| p.display().to_string());
            tracing::warn!("skipping agent {at}: {e}");
            return None;
        }
    };
    let name = parsed.str_field("name").unwrap_or(fallback_name).to_owned();
    let thinking = parsed
        .str_field("thinking")
        .or_else(|| parsed.str_field("thinkingLevel"))
        .and_then(|l| serde_json::from_value(Value::String(l.to_owned())).ok());
    Some(AgentDefinition {
        description: parsed.str_field("description").unwrap_or_default().to_owned(),
        system_prompt: parsed.body.trim().to_owned(),
        tools: string_list(parsed.fields.get("tools")),
        model: string_list(parsed.fields.get("model")).and_then(|m| m.into_iter().next()),
        thinking,
        source,
        file_path,
        name,
    })
}

/// `a, b` or a YAML list, as names; `None` when absent or empty.
fn string_list(value: Option<&Value>) -> Option<Vec<String>> {
    let items: Vec<String> = match value? {
        Value::String(s) => s.split(',').map(|t| t.trim().to_owned()).collect(),
        Value::Array(items) => items.iter().filter_map(Value::as_str).map(|t| t.trim().to_owned()).collect(),
        _ => return None,
    };
    let items: Vec<String> = items.into_iter().filter(|t| !t.is_empty()).collect();
    (!items.is_empty()).then_some(items)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn paths(root: &Path) -> ConfigPaths {
        ConfigPaths::new(Some(root.join("home")), root.join("agent"), root.join("work/sub"))
    }

    #[test]
    fn bundled_agents_parse() {
        let dir = tempfile::tempdir().unwrap();
        let found = discover_agents(&paths(dir.path()), true);
        let names: Vec<&str> = found.agents.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["task", "explore", "reviewer"]);
        let explore = found.get("explore").unwrap();
        assert_eq!(explore.tools.as_deref().unwrap(), ["read", "grep", "find", "ls"]);
        assert!(explore.system_prompt.starts_with("You are a read-only sub-agent"));
        assert_eq!(found.project_agents_dir, None);
    }

    #[test]
    fn project_beats_user_beats_bundled() {
        let dir = tempfile::tempdir().unwrap();
        let p = paths(dir.path());
        std::fs::create_dir_all(p.agent_dir.join("agents")).unwrap();
        std::fs::create_dir_all(dir.path().join("work/.omp/agents")).unwrap();
        std::fs::create_dir_all(&p.cwd).unwrap();
        std::fs::write(
            p.agent_dir.join("agents/explore.md"),
            "---\ndescription: mine\nmodel: [a/b, c/d]\nthinking: high\n---\nUser prompt.\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("work/.omp/agents/x.md"), "---\nname: task\ntools: [read]\n---\nProject.\n")
            .unwrap();
        std::fs::write(dir.path().join("work/.omp/agents/bad.md"), "---\n- not a map\n---\n").unwrap();
        let found = discover_agents(&p, true);
        let task = found.get("task").unwrap();
        assert_eq!((task.source, task.system_prompt.as_str()), (AgentSource::Project, "Project."));
        let explore = found.get("explore").unwrap();
        assert_eq!(explore.source, AgentSource::User);
        assert_eq!(explore.model.as_deref(), Some("a/b"));
        assert_eq!(explore.thinking, Some(ThinkingLevel::High));
        assert_eq!(found.get("reviewer").unwrap().source, AgentSource::Bundled);
        assert_eq!(found.project_agents_dir, Some(dir.path().join("work/.omp/agents")));

        // A project not trusted keeps rho's own task agent.
        let untrusted = discover_agents(&p, false);
        assert_eq!(untrusted.get("task").unwrap().source, AgentSource::Bundled);
        assert_eq!(untrusted.project_agents_dir, None);
    }
}
