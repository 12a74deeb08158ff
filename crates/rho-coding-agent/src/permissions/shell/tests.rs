use super::*;

/// Each simple command's words as written, `?` for a word that expands.
fn commands(command: &str) -> Vec<String> {
    parse(command)
        .commands
        .iter()
        .map(|c| c.views[0].words.iter().map(|w| w.as_deref().unwrap_or("?")).collect::<Vec<_>>().join(" "))
        .collect()
}

/// The innermost view of each command, wrappers peeled.
fn innermost(command: &str) -> Vec<String> {
    parse(command)
        .commands
        .iter()
        .map(|c| {
            c.views.last().unwrap().words.iter().map(|w| w.as_deref().unwrap_or("?")).collect::<Vec<_>>().join(" ")
        })
        .collect()
}

#[test]
fn finds_every_simple_command() {
    let cases: &[(&str, &[&str])] = &[
        ("a && b | c; d\ne", &["a", "b", "c", "d", "e"]),
        ("a || b & c |& d", &["a", "b", "c", "d"]),
        ("npm test $(rm -rf /)", &["npm test ?", "rm -rf /"]),
        ("echo `rm x` \"a$(rm y)b\" ${X:-$(rm z)}", &["echo ? ? ?", "rm x", "rm y", "rm z"]),
        ("{ rm x; }", &["rm x"]),
        ("(rm x)", &["rm x"]),
        ("if true; then rm x; fi", &["true", "rm x"]),
        ("for f in a; do rm $f; done", &["rm ?"]),
        ("while true; do rm x; done", &["true", "rm x"]),
        ("case a in a) rm x;; esac", &["rm x"]),
        ("! rm x", &["rm x"]),
        ("f(){ rm x; }; f", &["rm x", "f"]),
        ("diff <(rm a) b", &["diff ? b", "rm a"]),
        ("[[ -f $(rm x) ]]", &["rm x"]),
        ("cat <<EOF > out\n$(rm x)\nEOF", &["cat", "rm x"]),
    ];
    for (command, expected) in cases {
        assert_eq!(commands(command), *expected, "{command}");
    }
}

#[test]
fn removes_quotes_and_backslashes_from_words() {
    for command in ["rm x", "\\rm x", "\"rm\" x", "'rm' x", "r\"\"m x", "r''m x", "\"r\"m x"] {
        assert_eq!(commands(command), ["rm x"], "{command:?}");
    }
    // bash joins `r\⏎m` into `rm`; the grammar does not, so both readings are judged.
    let joined = parse("r\\\nm x");
    assert!(joined.unaccounted);
    assert!(commands("r\\\nm x").contains(&"rm x".to_owned()));
    assert_eq!(commands("echo \"a \\\" b\" 'c d'"), ["echo a \" b c d"]);
    for command in ["$X x", "${X} x", "$(echo rm) x", "r* x", "{rm,x}", "$'rm' x", "r?m x"] {
        assert!(!commands(command).iter().any(|c| c.starts_with("rm ")), "{command}");
        assert!(parse(command).unaccounted, "{command}");
    }
}

#[test]
fn peels_wrappers_and_follows_nested_scripts() {
    let cases: &[(&str, &str)] = &[
        ("FOO=1 rm x", "rm x"),
        ("time rm x", "rm x"),
        ("exec rm x", "rm x"),
        ("exec -a name rm x", "rm x"),
        ("command rm x", "rm x"),
        ("builtin rm x", "rm x"),
        ("nohup rm x", "rm x"),
        ("env rm x", "rm x"),
        ("env -i FOO=1 rm x", "rm x"),
        ("env -u HOME rm x", "rm x"),
        ("sudo rm x", "rm x"),
        ("sudo -u root -E rm x", "rm x"),
        ("xargs rm", "rm"),
        ("xargs -0 -n 1 rm", "rm"),
        ("nice rm x", "rm x"),
        ("nice -n 5 rm x", "rm x"),
        ("timeout 5 rm x", "rm x"),
        ("timeout -s KILL 5 rm x", "rm x"),
        ("stdbuf -oL rm x", "rm x"),
        ("stdbuf -o L rm x", "rm x"),
        ("nohup nice timeout 5 rm x", "rm x"),
        ("/bin/rm x", "/bin/rm x"),
    ];
    for (command, expected) in cases {
        assert_eq!(innermost(command).first().map(String::as_str), Some(*expected), "{command}");
    }
    let nested: &[(&str, &[&str])] = &[
        ("bash -c 'rm x'", &["rm x"]),
        ("sh -c \"rm x; ls\"", &["rm x", "ls"]),
        ("bash -lc 'rm x'", &["rm x"]),
        ("eval 'rm x'", &["rm x"]),
        ("eval rm x", &["rm x"]),
        ("bash -c \"bash -c 'rm x'\"", &["rm x"]),
        ("trap 'rm x' EXIT", &["rm x"]),
        ("find . -name '*.o' -exec rm {} ';'", &["rm {}"]),
        ("bash <<'EOF'\nrm x\nEOF", &["rm x"]),
        ("sh <<< 'rm x'", &["rm x"]),
        ("watch rm x", &["rm x"]),
    ];
    for (command, expected) in nested {
        let found = innermost(command);
        for e in *expected {
            assert!(found.iter().any(|f| f == e), "{command}: {found:?}");
        }
    }
}

#[test]
fn a_shell_running_a_literal_script_needs_no_allow_of_its_own() {
    let script = parse("bash -c 'ls'");
    assert!(!script.unaccounted);
    assert!(script.commands.iter().any(|c| !c.needs_allow && c.views[0].words[0].as_deref() == Some("bash")));
    assert!(parse("bash --rcfile x -c 'ls'").commands.iter().all(|c| c.needs_allow));
    // Peeling sudo keeps the command as written the only one an allow rule can vouch for.
    let sudo = parse("sudo rm x");
    assert_eq!(sudo.commands[0].views.iter().map(|v| v.allowable).collect::<Vec<_>>(), [true, false]);
}

#[test]
fn what_cannot_be_accounted_for_is_flagged() {
    for command in [
        "$X",
        "eval \"$X\"",
        "bash -c \"$X\"",
        "sudo $X",
        "env $X rm",
        "echo \"unterminated",
        "echo x > $F",
        "echo x > >(tee f)",
        "PATH=/tmp ls",
        "LD_PRELOAD=/tmp/x.so ls",
        "export PATH=/tmp",
        "declare -n ref=PATH",
        "for PATH in /tmp; do ls; done",
        "cd /tmp && echo x > f",
        "bash",
        "curl x | sh -s",
    ] {
        assert!(parse(command).unaccounted, "{command}");
    }
    for command in ["ls -la", "git status && npm test", "x=1; echo $x", "RUST_LOG=debug cargo test", "echo hi 2>&1"] {
        assert!(!parse(command).unaccounted, "{command}");
    }
}

#[test]
fn output_redirections_are_writes() {
    let cases: &[(&str, &[&str])] = &[
        ("echo 'echo PWNED' >> ~/.bashrc", &["~/.bashrc"]),
        ("echo x > a", &["a"]),
        ("echo x &> a", &["a"]),
        ("echo x &>> a", &["a"]),
        ("echo x >| a", &["a"]),
        ("cat <> a", &["a"]),
        ("echo x 2> a", &["a"]),
        ("echo x >&a", &["a"]),
        ("echo x > \"a b\"", &["a b"]),
        ("exec 3> a", &["a"]),
        ("(echo x > a)", &["a"]),
        ("bash -c 'echo x > a'", &["a"]),
        ("echo x > /dev/null 2>&1", &[]),
        ("echo x 2>/dev/stderr >&2 1>&-", &[]),
        ("cat < a <<< hi", &[]),
    ];
    for (command, expected) in cases {
        assert_eq!(parse(command).writes, *expected, "{command}");
    }
    assert_eq!(parse("cat < ~/.ssh/id_rsa").reads, ["~/.ssh/id_rsa"]);
}

#[test]
fn nesting_is_followed_only_so_deep() {
    let mut command = "rm x".to_owned();
    for _ in 0..12 {
        command = format!("eval {}", shell_quote(&command));
    }
    assert!(parse(&command).unaccounted);
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[test]
fn rule_words_read_a_rule_as_the_shell_would() {
    assert_eq!(
        rule_words("git commit -m \"a b\""),
        Some(vec!["git".into(), "commit".into(), "-m".into(), "a b".into()])
    );
    assert_eq!(rule_words("a && b"), None);
}

#[test]
fn a_command_nested_very_deep_is_read_without_exhausting_the_stack() {
    let deep = format!("{}rm x{}", "(".repeat(100_000), ")".repeat(100_000));
    // On a thread with a small stack, as a runtime's worker may have.
    let script =
        std::thread::Builder::new().stack_size(256 * 1024).spawn(move || parse(&deep)).unwrap().join().unwrap();
    let found = script.commands.iter().any(|c| c.views.iter().any(|v| v.words.first() == Some(&Some("rm".to_owned()))));
    assert!(found || script.unaccounted, "{script:?}");
}
