//! Problems found in the user's model configuration files (`models.json`, `auth.json`).
//!
//! These are reported, never fatal: a file with a problem is skipped as a whole and everything
//! else (the built-in catalogue, the other file, environment keys) still loads. Every message
//! names the file and says what is wrong with it; none quotes a secret.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("Failed to read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid JSON, or a field has the wrong type. `problem` says where.
    #[error("Failed to parse {}: {problem}", path.display())]
    Parse { path: PathBuf, problem: String },
    /// The JSON is well formed but breaks one of the file's rules.
    #[error("Invalid {}: {problem}", path.display())]
    Invalid { path: PathBuf, problem: String },
}

impl ConfigError {
    /// The file the problem is in.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Self::Read { path, .. } | Self::Parse { path, .. } | Self::Invalid { path, .. } => path,
        }
    }
}

/// Reads `path` as text; `Ok(None)` when there is no such file.
pub(crate) fn read_optional(path: &std::path::Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read { path: path.to_owned(), source }),
    }
}

/// Deserializes `text`, reporting the JSON path of a field with the wrong shape
/// (`providers.ollama.models[0].contextWindow: invalid type: ...`). String values that serde
/// would quote back are left out, because some of them are keys.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(path: &std::path::Path, text: &str) -> Result<T, ConfigError> {
    let parse_error = |problem: String| ConfigError::Parse { path: path.to_owned(), problem: redact_strings(&problem) };
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let location = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() || location == "." {
            parse_error(inner.to_string())
        } else {
            parse_error(format!("{location}: {inner}"))
        }
    })?;
    de.end().map_err(|e| parse_error(e.to_string()))?;
    Ok(value)
}

/// `invalid type: string "sk-…", expected a boolean` → `invalid type: a string, expected …`.
pub(crate) fn redact_strings(message: &str) -> String {
    static QUOTED: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r#"string "(?:[^"\\]|\\.)*""#).ok());
    match QUOTED.as_ref() {
        Some(re) => re.replace_all(message, "a string").into_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Shape {
        #[allow(dead_code)]
        flag: bool,
    }

    #[test]
    fn errors_name_the_field_and_never_echo_strings() {
        let path = std::path::Path::new("/x/models.json");
        let err = parse_json::<Shape>(path, r#"{"flag": "sk-secret"}"#).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("Failed to parse /x/models.json: flag: invalid type"), "{text}");
        assert!(!text.contains("sk-secret"), "{text}");
        let err = parse_json::<Shape>(path, "{\"flag\": true,}").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
        let err = parse_json::<Shape>(path, "{\"flag\": true} x").unwrap_err();
        assert!(err.to_string().contains("trailing characters"), "{err}");
        assert_eq!(err.path(), path);
    }
}
