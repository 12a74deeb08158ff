//! Where extensions come from, in pi's order: `-e` (relative to the working directory), the
//! project settings' `extensions` (relative to `.pi/`), the global settings' (relative to the
//! agent dir), then the folders searched: the project's `.pi/extensions/` and
//! `.rho/extensions/`, and the agent dir's `extensions/`. In a searched folder, `*.ts` and `*.js`
//! files load, and each subfolder loads what its `package.json` lists under `pi.extensions`,
//! else its `index.ts` or `index.js`. A named folder loads its manifest's entries or its index,
//! else the files in it. Each file loads once, in the first place it was found.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// What to look through.
#[derive(Debug, Clone)]
pub struct Sources<'a> {
    pub cwd: &'a Path,
    pub agent_dir: &'a Path,
    /// `-e`, relative to `cwd`.
    pub cli: Vec<String>,
    /// The project settings' `extensions`, relative to `cwd/.pi`.
    pub project_settings: Vec<String>,
    /// The global settings' `extensions`, relative to the agent dir.
    pub global_settings: Vec<String>,
    /// The settings and the searched folders count (`--no-extensions`: only `-e` does).
    pub discover: bool,
    /// The project's own folders and settings are skipped (the project is not trusted).
    pub skip_project: bool,
}

/// Whether an `-e` value or a `packages` entry names a package rather than a file: `npm:…`,
/// `git:…`, or a git URL (pi's source kinds; anything else is a path).
pub fn is_package_source(source: &str) -> bool {
    ["npm:", "git:", "https://", "http://", "ssh://", "git://"].iter().any(|p| source.starts_with(p))
}

/// The entry files to load, in load order.
pub fn extension_paths(sources: &Sources<'_>) -> Vec<PathBuf> {
    discover(sources).0
}

/// [`extension_paths`], and how many of them `-e` named (they come first).
pub fn discover(sources: &Sources<'_>) -> (Vec<PathBuf>, usize) {
    let mut found = Found::default();
    for named in sources.cli.iter().filter(|s| !is_package_source(s)) {
        found.add_named(&resolve(named, sources.cwd));
    }
    let from_cli = found.paths.len();
    if !sources.discover {
        return (found.paths, from_cli);
    }
    if !sources.skip_project {
        let base = sources.cwd.join(".pi");
        for named in &sources.project_settings {
            found.add_named(&resolve(named, &base));
        }
    }
    for named in &sources.global_settings {
        found.add_named(&resolve(named, sources.agent_dir));
    }
    if !sources.skip_project {
        found.add_all(discover_dir(&sources.cwd.join(".pi/extensions")));
        found.add_all(discover_dir(&sources.cwd.join(".rho/extensions")));
    }
    found.add_all(discover_dir(&sources.agent_dir.join("extensions")));
    (found.paths, from_cli)
}

#[derive(Default)]
struct Found {
    paths: Vec<PathBuf>,
    seen: HashSet<PathBuf>,
}

impl Found {
    fn add(&mut self, path: PathBuf) {
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if self.seen.insert(key) {
            self.paths.push(path);
        }
    }

    fn add_all(&mut self, paths: Vec<PathBuf>) {
        for path in paths {
            self.add(path);
        }
    }

    /// A path named explicitly: a file (even one that does not exist: loading it reports the
    /// problem), or a folder's entries, else the files in it.
    fn add_named(&mut self, path: &Path) {
        if path.is_dir() {
            match entries_of(path) {
                Some(entries) => self.add_all(entries),
                None => self.add_all(discover_dir(path)),
            }
        } else {
            self.add(path.to_path_buf());
        }
    }
}

/// The extensions only rho looks for (the project's `.rho/extensions/`); pi's package manager
/// finds all the others.
pub fn rho_only_paths(sources: &Sources<'_>) -> Vec<PathBuf> {
    if !sources.discover || sources.skip_project {
        return Vec::new();
    }
    discover_dir(&sources.cwd.join(".rho/extensions"))
}

/// `~`, `~/…` and relative paths made absolute.
fn resolve(raw: &str, cwd: &Path) -> PathBuf {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    if raw == "~" {
        return home().unwrap_or_else(|| PathBuf::from(raw));
    }
    if let Some(rest) = raw.strip_prefix("~/")
        && let Some(home) = home()
    {
        return home.join(rest);
    }
    let path = Path::new(raw);
    if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) }
}

fn is_extension_file(name: &str) -> bool {
    name.ends_with(".ts") || name.ends_with(".js")
}

/// One level of a folder: its extension files and its subfolders' entries.
fn discover_dir(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut entries: Vec<_> = read.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    let mut found = Vec::new();
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_file() && is_extension_file(&name) {
            found.push(path);
        } else if path.is_dir()
            && let Some(entries) = entries_of(&path)
        {
            found.extend(entries);
        }
    }
    found
}

/// A folder's entries: its `package.json`'s `pi.extensions` (those that exist), else its
/// `index.ts` or `index.js`.
fn entries_of(dir: &Path) -> Option<Vec<PathBuf>> {
    let listed: Vec<PathBuf> =
        manifest_extensions(dir).into_iter().map(|e| dir.join(e)).filter(|p| p.exists()).collect();
    if !listed.is_empty() {
        return Some(listed);
    }
    ["index.ts", "index.js"].iter().map(|name| dir.join(name)).find(|p| p.is_file()).map(|p| vec![p])
}

/// `pi.extensions` of a folder's `package.json`.
fn manifest_extensions(dir: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(dir.join("package.json")) else {
        return Vec::new();
    };
    let Ok(manifest) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    manifest
        .pointer("/pi/extensions")
        .and_then(serde_json::Value::as_array)
        .map(|list| list.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "export default function () {}").unwrap();
    }

    fn sources<'a>(cwd: &'a Path, agent_dir: &'a Path) -> Sources<'a> {
        Sources {
            cwd,
            agent_dir,
            cli: vec![],
            project_settings: vec![],
            global_settings: vec![],
            discover: true,
            skip_project: false,
        }
    }

    #[test]
    fn discovery_follows_pis_rules_in_pis_order() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("project");
        let agent = root.path().join("agent");
        touch(&cwd.join(".pi/extensions/a.ts"));
        touch(&cwd.join(".pi/extensions/notes.md"));
        touch(&cwd.join(".rho/extensions/b/index.ts"));
        touch(&agent.join("extensions/c.js"));
        touch(&agent.join("extensions/pkg/src/main.ts"));
        std::fs::write(
            agent.join("extensions/pkg/package.json"),
            r#"{"pi":{"extensions":["./src/main.ts","./gone.ts"]}}"#,
        )
        .unwrap();
        touch(&root.path().join("extra/one.ts"));
        touch(&root.path().join("extra/two.ts"));
        touch(&cwd.join(".pi/local.ts"));
        touch(&agent.join("mine.ts"));
        let sources = Sources {
            cli: vec!["../extra".into(), ".pi/extensions/a.ts".into(), "missing.ts".into()],
            project_settings: vec!["local.ts".into()],
            global_settings: vec!["mine.ts".into()],
            ..sources(&cwd, &agent)
        };
        let relative = |paths: Vec<PathBuf>| -> Vec<String> {
            paths.iter().map(|p| p.strip_prefix(root.path()).unwrap().display().to_string()).collect()
        };
        assert_eq!(
            relative(extension_paths(&sources)),
            [
                "project/../extra/one.ts",
                "project/../extra/two.ts",
                "project/.pi/extensions/a.ts",
                "project/missing.ts",
                "project/.pi/local.ts",
                "agent/mine.ts",
                "project/.rho/extensions/b/index.ts",
                "agent/extensions/c.js",
                "agent/extensions/pkg/./src/main.ts",
            ]
        );

        // Without the project's folders and settings, nothing comes from the project unasked.
        let untrusted = Sources { skip_project: true, cli: vec![], ..sources.clone() };
        assert_eq!(
            relative(extension_paths(&untrusted)),
            ["agent/mine.ts", "agent/extensions/c.js", "agent/extensions/pkg/./src/main.ts"]
        );
        // --no-extensions: only what -e names.
        let only_named = Sources { discover: false, cli: vec!["../extra/one.ts".into()], ..sources };
        assert_eq!(relative(extension_paths(&only_named)), ["project/../extra/one.ts"]);
    }
}
