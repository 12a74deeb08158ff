//! Commands that run other commands: wrappers (`command`, `exec`, `time`, `nohup`, `env`, `sudo`,
//! `nice`, `timeout`, `xargs`, `stdbuf`, …) are peeled so the command they run is judged too;
//! shells given a script (`bash -c`, `sh -c`, `eval`, `trap`, `watch`) hand the script back to be
//! parsed in turn; `find -exec` hands back the command it runs. What cannot be followed (a
//! non-literal word where a command name or an option must be) makes the command uncertain.

use super::Word;

/// One way to read a command: its words from some wrapper on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub words: Vec<Word>,
    /// Whether an allow rule for these words allows the command: false once a wrapper that
    /// changes what the command may do (`sudo`, `doas`) has been peeled.
    pub allowable: bool,
}

/// A command with its wrappers peeled.
#[derive(Debug, Default)]
pub struct Unwrapped {
    /// The command as written, then after each wrapper.
    pub views: Vec<View>,
    /// Scripts it runs, to be parsed in turn (`None`: a script that is not literal).
    pub scripts: Vec<Option<String>>,
    /// Commands it runs besides itself (`find -exec`).
    pub commands: Vec<Vec<Word>>,
    /// False when the command only runs a literal script (`bash -c '…'`, `eval '…'`): its
    /// script's commands are judged instead.
    pub needs_allow: bool,
    /// Something could not be followed.
    pub uncertain: bool,
    /// A shell with no script: it runs what its standard input says.
    pub reads_script_from_stdin: bool,
    /// It changes the working directory of what follows (`cd`, `env -C`).
    pub changes_directory: bool,
}

/// How a wrapper's options are read: which take a value as the next word (`-u root`), and
/// which long ones do when not written `--name=value`.
struct Options {
    short_with_value: &'static str,
    long_with_value: &'static [&'static str],
}

const NO_OPTIONS: Options = Options { short_with_value: "", long_with_value: &[] };

/// Shells that take a script with `-c`.
const SHELLS: [&str; 7] = ["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"];

/// Peels `words` (a simple command's words, the name first).
pub fn unwrap(words: &[Word]) -> Unwrapped {
    let mut out = Unwrapped { needs_allow: true, ..Unwrapped::default() };
    let mut current = words;
    let mut allowable = true;
    loop {
        out.views.push(View { words: current.to_vec(), allowable });
        let Some(first) = current.first() else { break };
        let Some(name) = first else {
            out.uncertain = true;
            break;
        };
        let inner = match basename(name) {
            "command" | "builtin" | "nohup" | "time" | "busybox" | "unbuffer" => options_end(current, &NO_OPTIONS),
            "exec" => options_end(current, &Options { short_with_value: "a", long_with_value: &[] }),
            "setsid" => options_end(current, &NO_OPTIONS),
            "nice" => options_end(current, &Options { short_with_value: "n", long_with_value: &["--adjustment"] }),
            "ionice" => options_end(current, &Options { short_with_value: "cnp", long_with_value: &["--class"] }),
            "stdbuf" => options_end(
                current,
                &Options { short_with_value: "ioe", long_with_value: &["--input", "--output", "--error"] },
            ),
            "timeout" => options_end(
                current,
                &Options { short_with_value: "sk", long_with_value: &["--signal", "--kill-after"] },
            )
            .map(|duration| duration + 1),
            "xargs" => options_end(
                current,
                &Options {
                    short_with_value: "IdnPLsEa",
                    long_with_value: &["--delimiter", "--max-args", "--max-procs", "--max-lines", "--arg-file"],
                },
            ),
            "env" => env_command(current, &mut out),
            "sudo" | "doas" => {
                allowable = false;
                let options = Options {
                    short_with_value: "ugCDhprtTUR",
                    long_with_value: &["--user", "--group", "--close-from", "--chdir", "--prompt", "--host"],
                };
                options_end(current, &options).and_then(|at| assignments_end(current, at, &mut out))
            }
            "eval" => {
                out.scripts.push(joined(&current[1..]));
                out.needs_allow = current.len() == 1;
                break;
            }
            "trap" => {
                if current.len() > 2 && current[1].as_deref().is_none_or(|a| !a.starts_with('-')) {
                    out.scripts.push(current[1].clone());
                }
                break;
            }
            "watch" => {
                let options = Options { short_with_value: "nq", long_with_value: &["--interval"] };
                match options_end(current, &options) {
                    Some(at) if at < current.len() => out.scripts.push(joined(&current[at..])),
                    Some(_) => {}
                    None => out.uncertain = true,
                }
                break;
            }
            "find" => {
                find_exec(current, &mut out);
                break;
            }
            "cd" | "pushd" | "popd" => {
                out.changes_directory = true;
                break;
            }
            shell if SHELLS.contains(&shell) => {
                shell_script(current, &mut out);
                break;
            }
            _ => break,
        };
        match inner {
            Some(at) if at < current.len() => current = &current[at..],
            Some(_) => break,
            None => {
                out.uncertain = true;
                break;
            }
        }
    }
    out
}

/// The last path component of a command name (`/bin/rm` → `rm`).
pub fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Where the operands after `words[0]`'s options start; `None` when an option is not literal.
fn options_end(words: &[Word], options: &Options) -> Option<usize> {
    let mut at = 1;
    while let Some(word) = words.get(at) {
        let word = word.as_deref()?;
        if word == "--" {
            return Some(at + 1);
        }
        if !word.starts_with('-') || word == "-" {
            return Some(at);
        }
        let takes_value = match word.strip_prefix("--") {
            Some(long) => !long.contains('=') && options.long_with_value.contains(&word),
            None => word.len() == 2 && word[1..].chars().all(|c| options.short_with_value.contains(c)),
        };
        at += if takes_value { 2 } else { 1 };
    }
    Some(at)
}

/// Skips `NAME=value` words from `at` (`env`'s and `sudo`'s); a variable that changes what
/// programs load or run makes the command uncertain.
fn assignments_end(words: &[Word], mut at: usize, out: &mut Unwrapped) -> Option<usize> {
    while let Some(Some(word)) = words.get(at) {
        let Some((name, _)) = word.split_once('=') else { break };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            break;
        }
        if !harmless_variable(name) {
            out.uncertain = true;
        }
        at += 1;
    }
    Some(at)
}

/// `env [options] [NAME=value…] command`: `-S` splits a string into the command (parsed as a
/// script), `-C` changes directory.
fn env_command(words: &[Word], out: &mut Unwrapped) -> Option<usize> {
    let options = Options { short_with_value: "uCS", long_with_value: &["--unset", "--chdir", "--split-string"] };
    let end = options_end(words, &options)?;
    for (at, word) in words[..end].iter().enumerate() {
        let word = word.as_deref().unwrap_or_default();
        if matches!(word, "-C" | "--chdir") || word.starts_with("--chdir=") || (word.starts_with("-C") && at > 0) {
            out.changes_directory = true;
        }
        if matches!(word, "-S" | "--split-string") {
            let mut script = words[at + 1..].to_vec();
            script.retain(|w| w.as_deref() != Some("--"));
            out.scripts.push(joined(&script));
            out.uncertain = true;
            return Some(words.len());
        }
        if word.starts_with("-S") || word.starts_with("--split-string=") {
            out.uncertain = true;
        }
    }
    assignments_end(words, end, out)
}

/// `bash -c 'script' [arg0 args…]`: the script is parsed; with only options that do not change
/// what it does, the shell itself needs no allow rule. Without `-c` or a script file the shell
/// runs its standard input.
fn shell_script(words: &[Word], out: &mut Unwrapped) {
    let mut at = 1;
    let mut has_c = false;
    let mut plain = true;
    while let Some(word) = words.get(at) {
        let Some(word) = word.as_deref() else {
            out.uncertain = true;
            return;
        };
        if word == "--" || word == "-" {
            at += 1;
            break;
        }
        if !(word.starts_with('-') || word.starts_with('+')) {
            break;
        }
        if matches!(word, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            let value = words.get(at + 1).cloned().flatten();
            plain &= word == "-o" && matches!(value.as_deref(), Some("pipefail" | "errexit" | "nounset" | "xtrace"));
            at += 2;
            continue;
        }
        let letters = word.trim_start_matches(['-', '+']);
        has_c |= word.starts_with('-') && !word.starts_with("--") && letters.contains('c');
        plain &= !word.starts_with("--") && letters.chars().all(|c| "celuxv".contains(c));
        at += 1;
    }
    match words.get(at) {
        Some(script) if has_c => {
            out.scripts.push(script.clone());
            out.needs_allow = !plain;
        }
        None if !has_c => out.reads_script_from_stdin = true,
        None => out.uncertain = true,
        Some(_) => {}
    }
}

/// `find … -exec command … ;` (and `-execdir`, `-ok`, `-okdir`): the commands find runs.
fn find_exec(words: &[Word], out: &mut Unwrapped) {
    let mut at = 1;
    while at < words.len() {
        let is_exec = matches!(words[at].as_deref(), Some("-exec" | "-execdir" | "-ok" | "-okdir"));
        at += 1;
        if is_exec {
            let start = at;
            while at < words.len() && !matches!(words[at].as_deref(), Some(";" | "+")) {
                at += 1;
            }
            out.commands.push(words[start..at].to_vec());
        }
    }
}

/// Words joined by spaces, as `eval` joins them; `None` if one is not literal.
fn joined(words: &[Word]) -> Option<String> {
    words.iter().map(|w| w.as_deref()).collect::<Option<Vec<_>>>().map(|w| w.join(" "))
}

/// Whether assigning `name` cannot change what a command loads or runs: a lower-case shell
/// variable (proxies aside) or one of a few well-known settings.
pub fn harmless_variable(name: &str) -> bool {
    const KNOWN: [&str; 16] = [
        "CI",
        "NODE_ENV",
        "RUST_BACKTRACE",
        "RUST_LOG",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "TERM",
        "COLUMNS",
        "LINES",
        "TZ",
        "LANG",
        "LANGUAGE",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "CARGO_TERM_COLOR",
    ];
    let lower = name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    (lower && !name.ends_with("_proxy")) || KNOWN.contains(&name) || name.starts_with("LC_")
}
