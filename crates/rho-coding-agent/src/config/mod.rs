//! Where rho's files are and what its settings say: the agent and project directories, and the
//! merged settings (global file, project files, `--setting` overrides) with typed access.

pub mod paths;
pub mod settings;
pub mod trust;
pub mod trust_code;

pub use paths::{ConfigPaths, agent_dir, expand_tilde};
pub use settings::{
    LoadOptions, SettingOverride, Settings, SettingsDiagnostic, SettingsError, SettingsProblem, SettingsSource,
};
