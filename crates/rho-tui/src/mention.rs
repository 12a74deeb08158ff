//! The `@` file mention: the working directory's files and folders (a folder with a trailing
//! `/`, as pi lists them), listed once off the UI thread with the
//! find tool's ignore rules (`.gitignore`, `.ignore`, `.git` never entered), and their fuzzy
//! ranking against what follows the `@` (the query's characters in order, shorter and earlier
//! matches first, a match inside the file name before one across directories).

use std::path::Path;

/// Files listed at most (the walk stops there).
pub const MAX_FILES: usize = 20_000;

/// The files and folders under `root`, relative with `/` separators (a folder ends in `/`), in
/// walk order (sorted by name).
pub fn list_files(root: &Path) -> Vec<String> {
    // The find tool's walk, with its `.fdignore`, sorted by name.
    let mut builder = rho_tools::walk::walker(root, ".fdignore");
    builder.sort_by_file_name(std::ffi::OsStr::cmp);
    let mut files = Vec::new();
    for entry in builder.build().flatten() {
        let Some(kind) = entry.file_type() else { continue };
        if kind.is_dir() && entry.depth() > 0 {
            files.push(format!("{}/", rho_tools::walk::display_path(root, entry.path())));
        } else if kind.is_file() {
            files.push(rho_tools::walk::display_path(root, entry.path()));
        } else {
            continue;
        }
        if files.len() >= MAX_FILES {
            break;
        }
    }
    files
}

/// How a match ranks, lowest first: across directories, its span, the path's length, its start.
type Rank = (bool, usize, usize, usize);

/// The best `limit` files for `query` (case-insensitive), best first.
pub fn rank<'a>(files: &'a [String], query: &str, limit: usize) -> Vec<&'a str> {
    let typed = query.to_lowercase();
    let query: Vec<char> = typed.chars().collect();
    let mut scored: Vec<(Rank, &str)> = files
        .iter()
        .filter_map(|path| {
            let lower = path.to_lowercase();
            // A folder just picked lists what is in it, not itself again.
            if path.ends_with('/') && lower == typed {
                return None;
            }
            let (start, span) = best_match(&lower, &query)?;
            let name_start = lower.trim_end_matches('/').rfind('/').map_or(0, |i| i + 1);
            Some(((start < name_start, span, path.len(), start), path.as_str()))
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(limit).map(|(_, path)| path).collect()
}

/// The shortest subsequence match of `query` in `text`: its start and span (in bytes).
fn best_match(text: &str, query: &[char]) -> Option<(usize, usize)> {
    let Some(&first) = query.first() else { return Some((0, 0)) };
    let mut best: Option<(usize, usize)> = None;
    for (start, c) in text.char_indices() {
        if c != first {
            continue;
        }
        let mut wanted = query[1..].iter().peekable();
        let mut end = start + c.len_utf8();
        for (i, c) in text[end..].char_indices() {
            if wanted.peek().is_none() {
                break;
            }
            if wanted.peek() == Some(&&c) {
                wanted.next();
                end = start + first.len_utf8() + i + c.len_utf8();
            }
        }
        if wanted.peek().is_some() {
            break;
        }
        let span = end - start;
        if best.is_none_or(|(_, s)| span < s) {
            best = Some((start, span));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|p| (*p).to_owned()).collect()
    }

    #[test]
    fn ranks_subsequence_matches_short_and_early_first() {
        let files = files(&["src/main_loop.rs", "docs/manual.md", "src/mail.rs", "notes.txt", "mxa/x.rs"]);
        assert_eq!(rank(&files, "ma", 10), vec!["src/mail.rs", "docs/manual.md", "src/main_loop.rs", "mxa/x.rs"]);
        assert_eq!(rank(&files, "mlo", 10), vec!["src/main_loop.rs"]);
        assert_eq!(rank(&files, "MAIL", 10), vec!["src/mail.rs", "src/main_loop.rs"]);
        assert_eq!(rank(&files, "", 2).len(), 2);
    }

    #[test]
    fn a_folder_matches_by_its_name_and_not_once_typed_whole() {
        let files = files(&["src/", "src/main.rs", "tests/", "tests/src.rs"]);
        assert_eq!(rank(&files, "src", 10), vec!["src/", "tests/src.rs", "src/main.rs"]);
        assert_eq!(rank(&files, "src/", 10), vec!["src/main.rs"]);
    }

    #[test]
    fn the_shortest_span_wins_over_the_first_one() {
        assert_eq!(best_match("axxxbxab", &['a', 'b']), Some((6, 2)));
        assert_eq!(best_match("abc", &['c', 'a']), None);
    }

    #[test]
    fn lists_files_without_the_ignored_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "").unwrap();
        std::fs::write(dir.path().join("target/b.rs"), "").unwrap();
        assert_eq!(list_files(dir.path()), vec![".gitignore", "src/", "src/a.rs"]);
    }
}
