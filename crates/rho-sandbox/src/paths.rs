//! Paths in a policy as they travel to the helper: a UTF-8 path as a string, any other as its
//! bytes, so a project whose path is not UTF-8 is confined like any other.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Wire {
    Text(String),
    Bytes(Vec<u8>),
}

pub(crate) fn serialize<S: Serializer>(paths: &[PathBuf], serializer: S) -> Result<S::Ok, S::Error> {
    let wire: Vec<Wire> = paths
        .iter()
        .map(|path| match path.to_str() {
            Some(text) => Wire::Text(text.to_owned()),
            None => Wire::Bytes(path.as_os_str().as_bytes().to_vec()),
        })
        .collect();
    wire.serialize(serializer)
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<PathBuf>, D::Error> {
    let wire = Vec::<Wire>::deserialize(deserializer)?;
    Ok(wire
        .into_iter()
        .map(|path| match path {
            Wire::Text(text) => PathBuf::from(text),
            Wire::Bytes(bytes) => PathBuf::from(OsString::from_vec(bytes)),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};

    use crate::{SandboxMode, SandboxPolicy};

    #[test]
    fn a_path_that_is_not_utf8_goes_to_the_helper_and_back_unchanged() {
        let mut policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, Path::new("/nonexistent"), &[], false);
        let odd = PathBuf::from(std::ffi::OsStr::from_bytes(b"/work/caf\xe9"));
        policy.writable_roots = vec![odd.clone(), PathBuf::from("/tmp")];
        let wire = serde_json::to_string(&policy).unwrap();
        assert!(wire.contains(r#""writableRoots":[[47,119,111,114,107,47,99,97,102,233],"/tmp"]"#), "{wire}");
        let back: SandboxPolicy = serde_json::from_str(&wire).unwrap();
        assert_eq!(back, policy);
    }
}
