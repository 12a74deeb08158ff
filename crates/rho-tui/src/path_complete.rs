//! Tab completion of a path typed in the editor (a word with a `/`, or starting with `.` or
//! `~`) against the file system: one match completes (a directory gets its `/`), several extend
//! the word to their common prefix and are listed.

use std::path::{Path, PathBuf};

/// Entries listed at most.
const MAX_CHOICES: usize = 50;

/// What Tab does to a path word.
#[derive(Debug, PartialEq, Eq)]
pub struct PathCompletion {
    /// The word completed (as far as the matches agree).
    pub word: String,
    /// The matching entries when there are several (directories with a trailing `/`).
    pub choices: Vec<String>,
}

/// Whether Tab should complete `word` as a path.
pub fn looks_like_path(word: &str) -> bool {
    word.contains('/') || word.starts_with('.') || word.starts_with('~')
}

/// Completes `word` in `cwd` (`~` is `home`); `None` when nothing matches.
pub fn complete(word: &str, cwd: &Path, home: Option<&Path>) -> Option<PathCompletion> {
    if word == "~" {
        return Some(PathCompletion { word: "~/".to_owned(), choices: Vec::new() });
    }
    let (dir_part, prefix) = word.rfind('/').map_or(("", word), |i| (&word[..=i], &word[i + 1..]));
    let dir = resolve(dir_part, cwd, home)?;
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            // A link to a directory counts as one.
            let is_dir = entry.path().is_dir();
            Some(if is_dir { format!("{name}/") } else { name })
        })
        .collect();
    names.sort();
    match names.as_slice() {
        [] => None,
        [only] => Some(PathCompletion { word: format!("{dir_part}{only}"), choices: Vec::new() }),
        [first, rest @ ..] => {
            let word = format!("{dir_part}{}", rest.iter().fold(first.as_str(), |c, name| common_prefix(c, name)));
            names.truncate(MAX_CHOICES);
            Some(PathCompletion { word, choices: names })
        }
    }
}

fn resolve(dir_part: &str, cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if dir_part.is_empty() {
        return Some(cwd.to_path_buf());
    }
    if let Some(rest) = dir_part.strip_prefix("~/") {
        return Some(home?.join(rest));
    }
    Some(cwd.join(dir_part))
}

fn common_prefix<'a>(a: &'a str, b: &str) -> &'a str {
    let len =
        a.char_indices().zip(b.chars()).take_while(|((_, x), y)| x == y).map(|((i, x), _)| i + x.len_utf8()).last();
    &a[..len.unwrap_or(0)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_one_match_and_lists_several() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        std::fs::create_dir_all(cwd.join("src")).unwrap();
        std::fs::write(cwd.join("src/alpha_one.rs"), "").unwrap();
        std::fs::write(cwd.join("src/alpha_two.rs"), "").unwrap();
        std::fs::write(cwd.join("src/.hidden"), "").unwrap();
        let done = |word: &str| complete(word, cwd, Some(cwd));
        assert_eq!(done("./sr").unwrap().word, "./src/");
        assert_eq!(done("~/sr").unwrap().word, "~/src/");
        let several = done("src/").unwrap();
        assert_eq!(several.word, "src/alpha_");
        assert_eq!(several.choices, vec!["alpha_one.rs", "alpha_two.rs"]);
        assert_eq!(done("src/alpha_t").unwrap(), PathCompletion { word: "src/alpha_two.rs".into(), choices: vec![] });
        assert_eq!(done("src/.h").unwrap().word, "src/.hidden");
        assert_eq!(done("src/zzz"), None);
        assert_eq!(done("nowhere/x"), None);
    }

    #[test]
    fn path_words_are_told_apart() {
        assert!(looks_like_path("src/ma"));
        assert!(looks_like_path("./x"));
        assert!(looks_like_path("~"));
        assert!(!looks_like_path("hello"));
    }
}
