//! What rho tells the model before the conversation: the system prompt and the files it draws
//! on (context files, skills, `SYSTEM.md`), plus the file-backed slash commands (skills and
//! prompt templates) that expand a prompt before it is sent.

pub mod commands;
pub mod context_files;
pub mod frontmatter;
pub mod prompt_files;
pub mod resource;
pub mod skills;
pub mod system_prompt;
pub mod template_args;
pub mod templates;

pub use commands::{available_commands, expand_prompt, slash_commands};
pub use context_files::{ContextFile, load_context_files};
pub use prompt_files::{PromptTexts, resolve_prompt_texts, resolve_prompt_texts_appending};
pub use resource::{Location, PromptError, ResourceDiagnostic, ResourcePaths};
pub use skills::{Skill, expand_skill_command, load_skills, skills_prompt_block};
pub use system_prompt::{PromptTool, SystemPromptInput, build_system_prompt, system_prompt_sections, today_utc};
pub use templates::{PromptTemplate, expand_template, load_prompt_templates};
