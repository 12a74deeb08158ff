//! rho's settings: the global file, the project files and `--setting` overrides, merged into one
//! flat map of dotted keys with typed access and built-in defaults.
//!
//! Precedence, lowest first: `<agentDir>/settings.json`, `<cwd>/.pi/settings.json`,
//! `<cwd>/.rho/settings.json`, then each `--setting key=value`. Merging is per dotted key, so a
//! project file that sets `compaction.reserveTokens` keeps the global `compaction.enabled`
//! (pi's one-level deep merge, extended to omp's deeper dotted keys); arrays and map-valued keys
//! (`task.verification.profiles`, …) are replaced whole.
//!
//! Loading never fails: a file that cannot be read or parsed, and a value of the wrong type,
//! become [`SettingsDiagnostic`]s that the caller prints once, and rho goes on with the rest.

mod diagnostic;
mod flatten;
mod schema;
mod typed;
mod without_effect;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;

pub use diagnostic::{SettingsDiagnostic, SettingsError, SettingsProblem, SettingsSource};
pub use flatten::SettingOverride;
pub use typed::*;

use super::paths::ConfigPaths;
use flatten::Layer;

/// How to load.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `--setting key=value` overrides, in command-line order.
    pub overrides: Vec<SettingOverride>,
    /// RPC mode: `todo.*`, `task.*`, `async.*` and `bash.autoBackground.*` values from the
    /// settings files are ignored (their built-in defaults apply); overrides still apply.
    pub rpc_mode: bool,
    /// The user trusts this project: its settings may choose what runs (`shellPath`, `packages`,
    /// …, see [`crate::config::trust::CODE_SETTINGS`]); otherwise those keys are left out.
    pub trusted_project: bool,
}

/// The key prefixes RPC mode resets to built-in defaults (docs/decisions.md D9; docs/protocol.md,
/// "Settings RPC mode resets").
pub const RPC_RESET_PREFIXES: &[&str] = &["todo", "task", "async", "bash.autoBackground"];

/// True for a key RPC mode takes only from the command line.
pub fn is_rpc_reset_key(key: &str) -> bool {
    is_key_under(key, RPC_RESET_PREFIXES)
}

/// True when `key` is one of `prefixes` or a key inside one (`bash.environment.X` is inside
/// `bash.environment`; `bashful` is not inside `bash`).
pub fn is_key_under(key: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|p| key == *p || key.strip_prefix(p).is_some_and(|rest| rest.starts_with('.')))
}

/// The keys a project's settings may not set: those that loosen what the model's commands may
/// do, where the session's transcript is written, and where its telemetry is sent.
pub const GLOBAL_ONLY_PREFIXES: &[&str] =
    &["sandbox", "bash.inheritProviderKeys", "approval", "sessionDir", "telemetry"];

/// True for a key only the global file and the command line may set.
pub fn is_global_only_key(key: &str) -> bool {
    is_key_under(key, GLOBAL_ONLY_PREFIXES)
}

/// The effective settings.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    global: Layer,
    project: Layer,
    overrides: Layer,
    effective: Layer,
    global_file: Option<PathBuf>,
    home: Option<PathBuf>,
    /// Loaded for RPC mode (see [`LoadOptions::rpc_mode`]); a reload keeps to it.
    rpc_mode: bool,
    /// See [`LoadOptions::trusted_project`]; a reload keeps to it.
    trusted_project: bool,
}

impl Settings {
    /// Reads the global and project files of `paths` and applies `options`. Problems are
    /// returned, not printed.
    pub fn load(paths: &ConfigPaths, options: &LoadOptions) -> (Settings, Vec<SettingsDiagnostic>) {
        let mut settings =
            Settings { rpc_mode: options.rpc_mode, trusted_project: options.trusted_project, ..Settings::default() };
        let mut diagnostics = settings.reload(paths);
        let mut overrides = flatten::layer_from_overrides(&options.overrides);
        validate(&mut overrides, &SettingsSource::CommandLine, &mut diagnostics);
        settings.overrides = overrides;
        settings.recompute();
        (settings, diagnostics)
    }

    /// Reads the global and project files of `paths` again; the `--setting` overrides stay.
    /// Problems are returned, not printed.
    pub fn reload(&mut self, paths: &ConfigPaths) -> Vec<SettingsDiagnostic> {
        let mut diagnostics = Vec::new();
        let global_file = paths.global_settings_file();
        let mut global = read_layer(&global_file, &mut diagnostics);
        let mut project = Layer::new();
        for file in paths.project_settings_files() {
            let mut layer = read_layer(&file, &mut diagnostics);
            layer.retain(|key, _| {
                if !self.trusted_project && crate::config::trust::is_code_setting(key) {
                    return false;
                }
                let global_only = is_global_only_key(key);
                if global_only {
                    let problem = SettingsProblem::GlobalOnly { key: key.clone() };
                    diagnostics.push(SettingsDiagnostic { source: SettingsSource::File(file.clone()), problem });
                }
                !global_only
            });
            project.extend(layer);
        }
        if self.rpc_mode {
            global.retain(|k, _| !is_rpc_reset_key(k));
            project.retain(|k, _| !is_rpc_reset_key(k));
        }
        self.global = global;
        self.project = project;
        self.global_file = Some(global_file);
        self.home = paths.home.clone();
        self.recompute();
        diagnostics
    }

    /// Settings from one in-memory JSON object (no files; writes stay in memory). Tests and
    /// embedders use it.
    pub fn from_json(value: Value) -> (Settings, Vec<SettingsDiagnostic>) {
        let mut diagnostics = Vec::new();
        let source = SettingsSource::Inline;
        let mut global = match value {
            Value::Object(map) => flatten::layer_from_object(map),
            _ => {
                diagnostics.push(SettingsDiagnostic { source: source.clone(), problem: SettingsProblem::NotAnObject });
                Layer::new()
            }
        };
        validate(&mut global, &source, &mut diagnostics);
        let mut settings = Settings { global, ..Settings::default() };
        settings.recompute();
        (settings, diagnostics)
    }

    fn recompute(&mut self) {
        let mut effective = self.global.clone();
        effective.extend(self.project.clone());
        effective.extend(self.overrides.clone());
        self.effective = effective;
    }

    /// Whether the project's own code may run (see [`LoadOptions::trusted_project`]).
    pub fn project_trusted(&self) -> bool {
        self.trusted_project
    }

    /// The global settings file this instance writes to (`None` for in-memory settings).
    pub fn global_file(&self) -> Option<&Path> {
        self.global_file.as_deref()
    }

    /// The values given with `--setting`, by dotted key.
    pub fn command_line_overrides(&self) -> &BTreeMap<String, Value> {
        &self.overrides
    }

    /// The values the global file and the project files give `key` (not merged), for lists whose
    /// entries are relative to the file that names them (pi's `extensions`).
    pub fn by_file(&self, key: &str) -> (Option<&Value>, Option<&Value>) {
        (self.global.get(key), self.project.get(key))
    }

    /// The value explicitly set for `key` (no default).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.effective.get(key)
    }

    /// The value for `key`: explicitly set, else its built-in default.
    pub fn value(&self, key: &str) -> Option<Value> {
        self.effective.get(key).cloned().or_else(|| schema::lookup(key).and_then(|d| d.default.to_value()))
    }

    /// Every explicitly set key under `prefix` (without the prefix and its dot).
    pub fn section(&self, prefix: &str) -> BTreeMap<String, Value> {
        let dotted = format!("{prefix}.");
        self.effective
            .iter()
            .filter_map(|(k, v)| k.strip_prefix(&dotted).map(|rest| (rest.to_owned(), v.clone())))
            .collect()
    }

    pub fn get_bool(&self, key: &str) -> Option<bool> {
        self.value(key).and_then(|v| v.as_bool())
    }

    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.value(key).as_ref().and_then(schema::as_u64)
    }

    pub fn get_f64(&self, key: &str) -> Option<f64> {
        self.value(key).and_then(|v| v.as_f64())
    }

    pub fn get_string(&self, key: &str) -> Option<String> {
        match self.value(key)? {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn get_string_list(&self, key: &str) -> Option<Vec<String>> {
        match self.value(key)? {
            Value::Array(items) => Some(
                items
                    .into_iter()
                    .filter_map(|v| match v {
                        Value::String(s) => Some(s),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The value for `key` deserialized into `T` (enums, records); `None` when unset without a
    /// default or when it does not fit `T`.
    pub fn get_as<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.value(key).and_then(|v| serde_json::from_value(v).ok())
    }

    /// Like [`Settings::get_as`], falling back to `T::default()`.
    fn get_or_default<T: DeserializeOwned + std::default::Default>(&self, key: &str) -> T {
        self.get_as(key).unwrap_or_default()
    }

    pub(crate) fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }
}

/// Reads one settings file into a validated layer; a missing or empty file is an empty layer.
/// The keys a settings file sets, dotted as the settings name them (problems ignored).
pub(crate) fn file_keys(path: &Path) -> Vec<String> {
    read_layer(path, &mut Vec::new()).into_keys().collect()
}

fn read_layer(path: &Path, diagnostics: &mut Vec<SettingsDiagnostic>) -> Layer {
    let source = SettingsSource::File(path.to_path_buf());
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Layer::new(),
        Err(e) => {
            diagnostics.push(SettingsDiagnostic { source, problem: SettingsProblem::Unreadable(e.to_string()) });
            return Layer::new();
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Layer::new();
    }
    let mut layer = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => flatten::layer_from_object(map),
        Ok(_) => {
            diagnostics.push(SettingsDiagnostic { source, problem: SettingsProblem::NotAnObject });
            return Layer::new();
        }
        Err(e) => {
            diagnostics.push(SettingsDiagnostic { source, problem: SettingsProblem::InvalidJson(e.to_string()) });
            return Layer::new();
        }
    };
    validate(&mut layer, &source, diagnostics);
    let unknown: Vec<String> =
        layer.keys().filter(|k| schema::lookup(k).is_none() && !is_bookkeeping(k)).cloned().collect();
    if !unknown.is_empty() {
        diagnostics.push(SettingsDiagnostic { source, problem: SettingsProblem::NotSupported { keys: unknown } });
    }
    layer
}

/// Drops (and reports) values of known keys that do not have the key's type.
/// Keys pi keeps in its settings file for itself (what it last showed, telemetry ids), which
/// are no setting of the user's.
fn is_bookkeeping(key: &str) -> bool {
    const KEYS: [&str; 7] = [
        "$schema",
        "lastChangelogVersion",
        "extensionChangelogVersions",
        "trackingId",
        "enableInstallTelemetry",
        "enableAnalytics",
        "collapseChangelog",
    ];
    is_key_under(key, &KEYS)
}

fn validate(layer: &mut Layer, source: &SettingsSource, diagnostics: &mut Vec<SettingsDiagnostic>) {
    layer.retain(|key, value| {
        let Some(def) = schema::lookup(key) else {
            return true;
        };
        match def.kind.check(value) {
            Ok(()) => true,
            Err(expected) => {
                diagnostics.push(SettingsDiagnostic {
                    source: source.clone(),
                    problem: SettingsProblem::InvalidValue {
                        key: key.clone(),
                        expected,
                        found: diagnostic::show_value(value),
                    },
                });
                false
            }
        }
    });
}

#[cfg(test)]
mod tests;
