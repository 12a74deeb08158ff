//! What can go wrong with settings: problems found while loading (returned as values, printed
//! once by the binary) and errors of the explicit operations (`--setting` parsing, writes).

use std::fmt;
use std::path::PathBuf;

/// Where a settings value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsSource {
    File(PathBuf),
    CommandLine,
    /// Settings given as a value ([`super::Settings::from_json`]).
    Inline,
}

/// What was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsProblem {
    /// The file exists but could not be read; its settings are not applied.
    Unreadable(String),
    /// The file is not valid JSON; its settings are not applied.
    InvalidJson(String),
    /// The file's top-level value is not an object; its settings are not applied.
    NotAnObject,
    /// One key has a value of the wrong type; that value is ignored.
    InvalidValue { key: String, expected: String, found: String },
    /// A key only the global file and the command line may set was found in a project file.
    GlobalOnly { key: String },
    /// Keys of a file that rho does not read (pi 1.6's settings for features rho does not
    /// have, or misspellings): said once per file, so no setting is ignored silently.
    NotSupported { keys: Vec<String> },
}

/// One problem found while loading settings. `Display` gives the line to print on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsDiagnostic {
    pub source: SettingsSource,
    pub problem: SettingsProblem,
}

impl fmt::Display for SettingsDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.source, &self.problem) {
            (SettingsSource::File(path), SettingsProblem::Unreadable(err)) => {
                write!(f, "Warning: cannot read settings file {}: {err}; its settings are not applied", path.display())
            }
            (SettingsSource::File(path), SettingsProblem::InvalidJson(err)) => write!(
                f,
                "Warning: invalid JSON in settings file {}: {err}; its settings are not applied",
                path.display()
            ),
            (SettingsSource::File(path), SettingsProblem::NotAnObject) => write!(
                f,
                "Warning: settings file {} does not hold a JSON object; its settings are not applied",
                path.display()
            ),
            (SettingsSource::File(path), SettingsProblem::InvalidValue { key, expected, found }) => write!(
                f,
                "Warning: settings file {}: \"{key}\" must be {expected}, found {found}; the value is ignored",
                path.display()
            ),
            (SettingsSource::File(path), SettingsProblem::GlobalOnly { key }) => write!(
                f,
                "Warning: settings file {}: \"{key}\" is ignored in a project's settings (set it in the global \
                 settings file or on the command line)",
                path.display()
            ),
            (SettingsSource::File(path), SettingsProblem::NotSupported { keys }) => write!(
                f,
                "Warning: settings file {}: rho does not support {}, which {} no effect: {}",
                path.display(),
                if keys.len() == 1 { "this setting" } else { "these settings" },
                if keys.len() == 1 { "has" } else { "have" },
                keys.join(", ")
            ),
            (SettingsSource::CommandLine, SettingsProblem::InvalidValue { key, expected, found }) => {
                write!(f, "Warning: --setting {key}: must be {expected}, found {found}; the value is ignored")
            }
            (SettingsSource::Inline, SettingsProblem::InvalidValue { key, expected, found }) => {
                write!(f, "Warning: setting \"{key}\" must be {expected}, found {found}; the value is ignored")
            }
            (SettingsSource::CommandLine | SettingsSource::Inline, SettingsProblem::NotAnObject) => {
                write!(f, "Warning: settings must be a JSON object; they are not applied")
            }
            (SettingsSource::CommandLine | SettingsSource::Inline, other) => {
                write!(f, "Warning: settings: {other:?}")
            }
        }
    }
}

/// Errors of explicit settings operations.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("invalid --setting {0:?}: expected key=value (for example compaction.enabled=false)")]
    BadOverride(String),
    #[error("setting \"{key}\" must be {expected}, found {found}")]
    InvalidValue { key: String, expected: String, found: String },
    #[error("cannot read settings file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("settings file {path} is not valid JSON ({source}); it was left unchanged")]
    Unparsable { path: PathBuf, source: serde_json::Error },
    #[error("settings file {path} does not hold a JSON object; it was left unchanged")]
    NotAnObject { path: PathBuf },
    #[error("cannot write settings file {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

/// A value shown in a message: compact JSON, cut at 80 characters.
pub(crate) fn show_value(value: &serde_json::Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 80 {
        return text;
    }
    let cut: String = text.chars().take(77).collect();
    format!("{cut}...")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_file_and_the_problem() {
        let d = SettingsDiagnostic {
            source: SettingsSource::File(PathBuf::from("/a/settings.json")),
            problem: SettingsProblem::InvalidJson("expected `,` at line 2 column 3".into()),
        };
        assert_eq!(
            d.to_string(),
            "Warning: invalid JSON in settings file /a/settings.json: expected `,` at line 2 column 3; its settings are not applied"
        );
        let d = SettingsDiagnostic {
            source: SettingsSource::CommandLine,
            problem: SettingsProblem::InvalidValue {
                key: "retry.maxRetries".into(),
                expected: "a non-negative integer".into(),
                found: "\"x\"".into(),
            },
        };
        assert_eq!(
            d.to_string(),
            "Warning: --setting retry.maxRetries: must be a non-negative integer, found \"x\"; the value is ignored"
        );
    }

    #[test]
    fn long_values_are_cut() {
        let v = serde_json::Value::String("x".repeat(200));
        let shown = show_value(&v);
        assert_eq!(shown.chars().count(), 80);
        assert!(shown.ends_with("..."));
    }
}
