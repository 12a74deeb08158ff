//! Paths for path rules (`Read(…)`, `Edit(…)`, `Write(…)`): the paths a call touches, resolved as
//! the tools resolve them (a leading `@`, `~`, relative to the working directory) and again with
//! symlinks followed (an alias such as a symlink or `/proc/self/root/…` names the same file), and
//! how far a rule's pattern reaches. A refusing rule (deny, ask) matches when any spelling of a
//! path touches what it names, a folder it names covering what is in it; an allowing rule only
//! when the resolved path, and for a tool that walks a folder everything beneath it, is covered.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use rho_tools::path::{resolve_read_path, resolve_to_cwd, write_identity};

/// How much of the file system a path stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The file itself (`read`, `edit`, `write`, a redirection).
    File,
    /// The folder and everything beneath it (`grep`, `find`, `ls`).
    Tree,
}

/// A path rule's pattern, absolute, in the spelling written and with its literal folder's
/// symlinks resolved.
#[derive(Debug, Clone)]
pub struct PathPattern {
    spellings: Vec<Spelling>,
}

#[derive(Debug, Clone)]
struct Spelling {
    glob: GlobMatcher,
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
enum Part {
    /// `**`: any number of folders.
    AnyDepth,
    One(GlobMatcher),
}

impl PathPattern {
    /// `absolute` is the rule's pattern made absolute; `spec` is the rule as written (for errors).
    pub fn new(absolute: &Path, spec: &str) -> Result<Self, String> {
        let text = absolute.to_string_lossy().into_owned();
        let mut spellings = vec![Spelling::new(&text, spec)?];
        let parts: Vec<&str> = text.split('/').collect();
        let literal = parts.iter().take_while(|p| !p.contains(['*', '?', '[', '{'])).count();
        let prefix = PathBuf::from(parts[..literal].join("/"));
        if !prefix.as_os_str().is_empty() {
            let real = write_identity(&prefix);
            if real != prefix {
                let mut alias = globset::escape(&real.to_string_lossy());
                for part in &parts[literal..] {
                    alias.push('/');
                    alias.push_str(part);
                }
                spellings.push(Spelling::new(&alias, spec)?);
            }
        }
        Ok(Self { spellings })
    }

    /// Whether the pattern reaches `path`: for a file, it or a folder it is in; for a tree,
    /// also anything beneath it.
    pub fn touches(&self, path: &Path, scope: Scope) -> bool {
        self.spellings.iter().any(|s| match scope {
            Scope::File => path.ancestors().any(|p| s.glob.is_match(p)),
            Scope::Tree => s.may_match_within(path),
        })
    }

    /// Whether the pattern covers `path`: the file itself, or everything beneath the folder.
    pub fn covers(&self, path: &Path, scope: Scope) -> bool {
        self.spellings.iter().any(|s| match scope {
            Scope::File => s.glob.is_match(path),
            Scope::Tree => s.covers_tree(path),
        })
    }
}

impl Spelling {
    fn new(text: &str, spec: &str) -> Result<Self, String> {
        let build = |pattern: &str| {
            GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .map(|glob| glob.compile_matcher())
                .map_err(|e| format!("\"{spec}\" is not a path pattern: {e}"))
        };
        let parts = components(text)
            .map(|part| if part == "**" { Ok(Part::AnyDepth) } else { build(part).map(Part::One) })
            .collect::<Result<_, _>>()?;
        Ok(Self { glob: build(text)?, parts })
    }

    /// Whether something at or beneath `root` (or a folder `root` is in) can match.
    fn may_match_within(&self, root: &Path) -> bool {
        let names: Vec<String> = names(root);
        for (at, part) in self.parts.iter().enumerate() {
            let Some(name) = names.get(at) else { return true };
            match part {
                Part::AnyDepth => return true,
                Part::One(glob) if glob.is_match(name) => {}
                Part::One(_) => return false,
            }
        }
        true
    }

    /// Whether everything beneath `root` matches: the pattern is a folder of `root`'s (or
    /// `root`) followed by `**`.
    fn covers_tree(&self, root: &Path) -> bool {
        let Some((Part::AnyDepth, folder)) = self.parts.split_last() else { return false };
        let names = names(root);
        folder.len() <= names.len()
            && folder.iter().zip(&names).all(|(part, name)| match part {
                Part::AnyDepth => true,
                Part::One(glob) => glob.is_match(name),
            })
            && !folder.iter().any(|p| matches!(p, Part::AnyDepth))
    }
}

fn components(text: &str) -> impl Iterator<Item = &str> {
    text.split('/').filter(|p| !p.is_empty())
}

fn names(path: &Path) -> Vec<String> {
    components(&path.to_string_lossy()).map(str::to_owned).collect()
}

/// The absolute paths a path tool's argument names: as the tool resolves it, and with `home`
/// for `~` (the rules' home), when the two differ.
pub fn tool_paths(tool: &str, raw: &str, cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let tools_own = if tool == "read" { resolve_read_path(raw, cwd) } else { resolve_to_cwd(raw, cwd) };
    let unprefixed = raw.strip_prefix('@').unwrap_or(raw);
    let with_home = match (home, unprefixed.strip_prefix('~')) {
        (Some(home), Some(rest)) if rest.is_empty() || rest.starts_with('/') => {
            let joined = format!("{}{rest}", home.to_string_lossy());
            resolve_to_cwd(&joined, cwd)
        }
        _ => tools_own.clone(),
    };
    let mut paths = vec![with_home];
    if !paths.contains(&tools_own) {
        paths.push(tools_own);
    }
    paths
}

/// The absolute path a shell redirection names (`~` and `~/` from `home`), if it can be told.
pub fn shell_path(raw: &str, cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let expanded = match raw.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            PathBuf::from(format!("{}{rest}", home?.to_string_lossy()))
        }
        Some(_) => return None,
        None => PathBuf::from(raw),
    };
    Some(normalize(&cwd.join(expanded)))
}

/// `path` with symlinks resolved in the part that exists.
pub fn resolved(path: &Path) -> PathBuf {
    write_identity(path)
}

/// `path` with `.` and `..` taken by name.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}
