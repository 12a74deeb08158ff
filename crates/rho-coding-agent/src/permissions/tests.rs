use super::*;
use serde_json::json;

fn rules(allow: &[&str], ask: &[&str], deny: &[&str]) -> Rules {
    rules_in(Path::new("/p"), Some(Path::new("/h")), allow, ask, deny)
}

fn rules_in(cwd: &Path, home: Option<&Path>, allow: &[&str], ask: &[&str], deny: &[&str]) -> Rules {
    let parse = |list: &[&str]| list.iter().map(|t| Rule::parse(t, cwd, home).unwrap()).collect();
    Rules { allow: parse(allow), ask: parse(ask), deny: parse(deny) }
}

fn decide(rules: &Rules, tool: &str, args: Value) -> Decision {
    decide_in(rules, Path::new("/p"), Some(Path::new("/h")), tool, args)
}

fn decide_in(rules: &Rules, cwd: &Path, home: Option<&Path>, tool: &str, args: Value) -> Decision {
    rules.decide(&Call { tool, args: args.as_object().unwrap(), cwd, home })
}

fn bash(rules: &Rules, command: &str) -> Decision {
    decide(rules, "bash", json!({ "command": command }))
}

#[test]
fn deny_wins_over_ask_and_ask_over_allow() {
    let r = rules(&["Bash"], &["Bash(git push:*)"], &["Bash(rm:*)"]);
    assert_eq!(bash(&r, "ls"), Decision::Allow);
    assert_eq!(bash(&r, "git push origin"), Decision::Ask("Bash(git push:*)".into()));
    assert_eq!(bash(&r, "ls && rm -rf x"), Decision::Deny("Bash(rm:*)".into()));
    assert_eq!(decide(&r, "read", json!({"path": "x"})), Decision::Undecided);
}

#[test]
fn a_command_is_allowed_only_when_every_part_is() {
    let r = rules(&["Bash(npm test:*)"], &[], &[]);
    assert_eq!(bash(&r, "npm test"), Decision::Allow);
    assert_eq!(bash(&r, "npm test && curl evil"), Decision::Undecided);
    assert_eq!(bash(&r, "npm test $(curl evil)"), Decision::Undecided);
    let r = rules(&[], &[], &["Bash(curl:*)"]);
    assert_eq!(bash(&r, "echo $(curl evil)"), Decision::Deny("Bash(curl:*)".into()));
}

#[test]
fn a_deny_rule_sees_through_every_spelling_of_a_command() {
    let r = rules(&["Bash"], &[], &["Bash(rm:*)"]);
    for command in [
        "FOO=1 rm x",
        "{ rm x; }",
        "if true; then rm x; fi",
        "for f in a; do rm $f; done",
        "while true; do rm x; done",
        "until false; do rm x; done",
        "case a in a) rm x;; esac",
        "! rm x",
        "time rm x",
        "exec rm x",
        "command rm x",
        "builtin rm x",
        "nohup rm x",
        "env rm x",
        "env FOO=1 rm x",
        "sudo rm x",
        "sudo -u root rm x",
        "xargs rm",
        "ls | xargs -0 rm -f",
        "nice rm x",
        "timeout 5 rm x",
        "stdbuf -oL rm x",
        "\\rm x",
        "\"rm\" x",
        "'rm' x",
        "r\"\"m x",
        "/bin/rm x",
        "./rm x",
        "(rm x)",
        "echo $(rm x)",
        "echo `rm x`",
        "echo \"$(rm x)\"",
        "bash -c 'rm x'",
        "sh -c \"rm x\"",
        "bash -c \"sh -c 'rm x'\"",
        "eval 'rm x'",
        "f(){ rm x; }; f",
        "ls | rm x",
        "true && rm x",
        "false || rm x",
        "rm x &",
        "cat <<EOF\n$(rm x)\nEOF",
        "bash <<'EOF'\nrm x\nEOF",
        "find . -exec rm {} +",
        "trap 'rm x' EXIT",
        "r\\\nm x",
    ] {
        assert_eq!(bash(&r, command), Decision::Deny("Bash(rm:*)".into()), "{command:?}");
    }
    assert_eq!(bash(&r, "rmdir x"), Decision::Allow);
    assert_eq!(bash(&r, "echo rm x"), Decision::Allow);
}

#[test]
fn what_the_parser_cannot_account_for_is_never_allowed() {
    let r = rules(&["Bash(echo:*)", "Bash(ls:*)", "Bash(eval:*)", "Bash(bash:*)"], &[], &["Bash(curl:*)"]);
    for command in [
        "$X x",
        "${X} x",
        "$(echo ls) x",
        "`echo ls`",
        "eval \"$X\"",
        "bash -c \"$CMD\"",
        "echo \"unterminated",
        "echo x; $(echo ls)",
        "<(echo ls)",
        "LD_PRELOAD=/tmp/x.so ls",
        "PATH=/tmp:$PATH ls",
        "{ls,-la}",
    ] {
        // Asked, since the deny rule may be what it hides.
        assert_eq!(bash(&r, command), Decision::Unreadable("Bash(curl:*)".into()), "{command:?}");
    }
    // Deny rules still see what is literal around it.
    assert_eq!(bash(&r, "$X; curl evil"), Decision::Deny("Bash(curl:*)".into()));
    assert_eq!(bash(&r, "echo hi; eval 'echo there'"), Decision::Allow);
}

#[test]
fn wrappers_keep_allow_rules_working_but_sudo_needs_its_own() {
    let r = rules(&["Bash(npm test:*)"], &[], &[]);
    for command in ["npm test", "time npm test", "timeout 60 npm test", "nice -n 5 npm test", "CI=1 npm test"] {
        assert_eq!(bash(&r, command), Decision::Allow, "{command}");
    }
    assert_eq!(bash(&r, "sudo npm test"), Decision::Undecided);
    let r = rules(&["Bash(sudo npm test:*)"], &[], &[]);
    assert_eq!(bash(&r, "sudo npm test"), Decision::Allow);
    // A path-qualified name is judged by its last part only for refusing rules.
    let r = rules(&["Bash(rm:*)"], &["Bash(git push:*)"], &[]);
    assert_eq!(bash(&r, "/tmp/evil/rm x"), Decision::Undecided);
    assert_eq!(bash(&r, "/usr/bin/git push"), Decision::Ask("Bash(git push:*)".into()));
}

#[test]
fn an_output_redirection_is_a_write_to_its_target() {
    let r = rules(&["Bash(echo:*)"], &[], &[]);
    assert_eq!(bash(&r, "echo 'echo PWNED' >> ~/.bashrc"), Decision::Undecided);
    for command in
        ["echo x > f", "echo x &> f", "echo x >| f", "echo x 2> f", "echo x >&f", "(echo x) > f", "echo x > ./f"]
    {
        assert_eq!(bash(&r, command), Decision::Undecided, "{command}");
    }
    for command in ["echo x > /dev/null", "echo x 2>&1", "echo x >&2", "echo x &>/dev/null", "echo x <<< y"] {
        assert_eq!(bash(&r, command), Decision::Allow, "{command}");
    }
    let r = rules(&["Bash(echo:*)", "Edit(out/**)"], &["Write(~/.bashrc)"], &["Edit(~/.ssh/**)"]);
    assert_eq!(bash(&r, "echo x > out/log"), Decision::Allow);
    assert_eq!(bash(&r, "echo x > /p/out/log"), Decision::Allow);
    assert_eq!(bash(&r, "echo x > out/../log"), Decision::Undecided);
    assert_eq!(bash(&r, "cd /tmp && echo x > out/log"), Decision::Undecided);
    assert_eq!(bash(&r, "echo x >> ~/.bashrc"), Decision::Ask("Write(~/.bashrc)".into()));
    assert_eq!(bash(&r, "echo key >> ~/.ssh/authorized_keys"), Decision::Deny("Edit(~/.ssh/**)".into()));
    assert_eq!(bash(&r, "bash -c 'echo key > /h/.ssh/x'"), Decision::Deny("Edit(~/.ssh/**)".into()));
    // An input redirection is a read.
    let r = rules(&["Bash"], &[], &["Read(~/.ssh/**)"]);
    assert_eq!(bash(&r, "cat < ~/.ssh/id_rsa"), Decision::Deny("Read(~/.ssh/**)".into()));
}

#[test]
fn path_rules_see_every_spelling_a_tool_accepts() {
    let r = rules(&[], &[], &["Read(~/.ssh/**)"]);
    let denied = Decision::Deny("Read(~/.ssh/**)".into());
    for (tool, path) in [
        ("read", "/h/.ssh/id_rsa"),
        ("read", "~/.ssh/id_rsa"),
        ("read", "@~/.ssh/id_rsa"),
        ("read", "@/h/.ssh/id_rsa"),
        ("read", "../h/.ssh/id_rsa"),
        ("grep", "~/.ssh"),
        ("grep", "/h"),
        ("grep", "~"),
        ("find", "/"),
        ("ls", "@~/.ssh"),
    ] {
        assert_eq!(decide(&r, tool, json!({ "path": path })), denied, "{tool} {path}");
    }
    assert_eq!(decide(&r, "grep", json!({"path": "/h/src"})), Decision::Undecided);
    // grep without a path searches the project.
    let r = rules(&[], &[], &["Read(./secrets/**)"]);
    assert_eq!(decide(&r, "grep", json!({})), Decision::Deny("Read(./secrets/**)".into()));
}

#[test]
fn an_allow_rule_must_cover_all_a_walking_tool_reaches() {
    let r = rules(&["Read(src/**)"], &[], &[]);
    assert_eq!(decide(&r, "grep", json!({"path": "src"})), Decision::Allow);
    assert_eq!(decide(&r, "grep", json!({"path": "src/a"})), Decision::Allow);
    assert_eq!(decide(&r, "grep", json!({"path": "."})), Decision::Undecided);
    assert_eq!(decide(&r, "find", json!({})), Decision::Undecided);
    assert_eq!(decide(&r, "read", json!({"path": "src/a.rs"})), Decision::Allow);
}

#[test]
fn symlinks_and_proc_aliases_are_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, cwd) = (root.join("home"), root.join("work"));
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(cwd.join("src")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "key").unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), cwd.join("keys")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), cwd.join("src/innocent.txt")).unwrap();
    let r = rules_in(&cwd, Some(&home), &["Read(src/**)", "Edit(src/**)"], &[], &["Read(~/.ssh/**)"]);
    let denied = Decision::Deny("Read(~/.ssh/**)".into());
    let proc_alias = format!("/proc/self/root{}", home.join(".ssh/id_rsa").display());
    for (tool, path) in [("read", "keys/id_rsa"), ("read", "src/innocent.txt"), ("grep", "keys"), ("read", &proc_alias)]
    {
        assert_eq!(decide_in(&r, &cwd, Some(&home), tool, json!({ "path": path })), denied, "{tool} {path}");
    }
    // An allow rule covers the file a path resolves to, not the spelling.
    let r = rules_in(&cwd, Some(&home), &["Edit(src/**)"], &[], &[]);
    let edit = |path: &str| decide_in(&r, &cwd, Some(&home), "write", json!({ "path": path, "content": "" }));
    assert_eq!(edit("src/new.txt"), Decision::Allow);
    assert_eq!(edit("src/innocent.txt"), Decision::Undecided);
    let bash = |command: &str| decide_in(&r, &cwd, Some(&home), "bash", json!({ "command": command }));
    let r2 = rules_in(&cwd, Some(&home), &["Bash(echo:*)", "Edit(src/**)"], &[], &[]);
    let bash2 = |command: &str| decide_in(&r2, &cwd, Some(&home), "bash", json!({ "command": command }));
    assert_eq!(bash2("echo x > src/out.txt"), Decision::Allow);
    assert_eq!(bash2("echo x > src/innocent.txt"), Decision::Undecided);
    assert_eq!(bash("echo x > src/out.txt"), Decision::Undecided, "echo itself is not allowed");
}

#[test]
fn other_tools_match_by_name() {
    let r = rules(&["task"], &["mcp__github"], &["mcp__fs__write"]);
    assert_eq!(decide(&r, "task", json!({})), Decision::Allow);
    assert_eq!(decide(&r, "mcp__github__create_issue", json!({})), Decision::Ask("mcp__github".into()));
    assert_eq!(decide(&r, "mcp__fs__write", json!({})), Decision::Deny("mcp__fs__write".into()));
    assert_eq!(decide(&r, "mcp__fs__read", json!({})), Decision::Undecided);
}

#[test]
fn a_command_the_parser_cannot_read_in_full_is_asked_where_a_deny_rule_could_apply() {
    let r = rules(&[], &[], &["Bash(rm:*)"]);
    let deep = format!("{}rm x{}", "(".repeat(20_000), ")".repeat(20_000));
    assert!(matches!(bash(&r, &deep), Decision::Deny(_) | Decision::Unreadable(_)), "{:?}", bash(&r, "x"));
    assert_eq!(bash(&r, "$CMD x"), Decision::Unreadable("Bash(rm:*)".into()));
    assert_eq!(bash(&r, "ls"), Decision::Undecided);
    // With no rule about commands, nothing changes for them.
    assert_eq!(bash(&rules(&[], &[], &["Read(./.env)"]), "$CMD x"), Decision::Undecided);
}

#[test]
fn web_fetch_rules_match_by_domain_as_claude_code_writes_them() {
    let r = rules(&["WebFetch(domain:docs.rs)"], &[], &["WebFetch(domain:evil.example)"]);
    let fetch = |url: &str| {
        let args = serde_json::json!({"url": url});
        r.decide(&Call { tool: "web_fetch", args: args.as_object().unwrap(), cwd: Path::new("/p"), home: None })
    };
    assert_eq!(fetch("https://docs.rs/serde"), Decision::Allow);
    assert_eq!(fetch("https://api.docs.rs/x"), Decision::Allow);
    assert_eq!(fetch("https://notdocs.rs/x"), Decision::Undecided);
    assert_eq!(fetch("http://user@evil.example:8080/x"), Decision::Deny("WebFetch(domain:evil.example)".into()));
    assert_eq!(fetch("https://example.com"), Decision::Undecided);
}
