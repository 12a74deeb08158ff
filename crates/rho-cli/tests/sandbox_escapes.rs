//! The sandbox against the indirect escapes: what a confined command plants for later (git's
//! hooks and config, the project's `.pi` and `.rho`, a script at rho's path), what Landlock does not
//! see (metadata of files outside, resource limits and priorities of other processes, a
//! datagram to an outside socket, rho's own `/proc` entries), and a folder swapped for a link
//! while the write tool writes (0 of 1,000 writes land outside). Git's own commands still read
//! the project.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::sandbox::tool_results;
use common::{Env, Rho};
use rho_mock_llm::Turn;
use serde_json::json;

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.email=a@b", "-c", "user.name=n"])
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[tokio::test]
async fn what_runs_later_outside_the_box_stays_read_only_inside_the_project() {
    let env = Env::outside_tmp(Vec::new()).await;
    let home = env.cwd.parent().unwrap().to_path_buf();
    git(&env.cwd, &["init", "-q"]);
    std::fs::write(env.cwd.join("tracked.txt"), "v1\n").unwrap();
    std::fs::write(env.cwd.join(".gitignore"), "bin/\n").unwrap();
    git(&env.cwd, &["add", "."]);
    git(&env.cwd, &["commit", "-qm", "first"]);
    std::fs::create_dir_all(env.cwd.join(".pi")).unwrap();
    std::fs::create_dir_all(env.cwd.join(".rho")).unwrap();
    std::fs::create_dir_all(env.cwd.join("bin")).unwrap();
    // rho started from a binary inside the project, as a checkout running its own build does.
    let binary = env.cwd.join("bin/rho");
    std::fs::hard_link(env!("CARGO_BIN_EXE_rho"), &binary).unwrap();
    let outside = home.join("outside.txt");
    std::fs::write(&outside, "mine").unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o600)).unwrap();
    let attempts = [
        "(echo 'touch ~/pwned' > .git/hooks/post-checkout) 2>/dev/null && echo hook=written || echo hook=denied",
        "git config core.fsmonitor 'touch ~/pwned' 2>/dev/null && echo fsmonitor=set || echo fsmonitor=denied",
        "mkdir -p .pi/extensions 2>/dev/null && echo pi=made || echo pi=denied",
        "(echo '{}' > .rho/settings.json) 2>/dev/null && echo rho=written || echo rho=denied",
        "(mv bin/rho bin/rho.old && printf '#!/bin/sh\\ntouch ~/pwned\\n' > bin/rho) 2>/dev/null \
         && chmod +x bin/rho && echo binary=replaced || echo binary=denied",
        &format!("chmod 644 '{}' 2>/dev/null && echo chmod=done || echo chmod=denied", outside.display()),
        &format!("touch -d 2001-01-01 '{}' 2>/dev/null && echo utime=done || echo utime=denied", outside.display()),
        "echo v2 > tracked.txt && echo edit=ok",
        "git status --short && git log --oneline | wc -l",
    ];
    env.server.push_turns(vec![
        Turn::tool_call("bash", json!({"command": attempts.join("\n")})),
        Turn::tool_call("write", json!({"path": ".git/hooks/pre-commit", "content": "touch ~/pwned"})),
        Turn::tool_call(
            "edit",
            json!({"path": ".git/config", "edits": [{"oldText": "[core]", "newText": "[core]\n\tfsmonitor = x"}]}),
        ),
        Turn::tool_call("write", json!({"path": ".pi/extensions/x.ts", "content": "planted"})),
        Turn::tool_call(
            "bash",
            json!({"command": "echo still=confined; (echo x > ~/pwned) 2>/dev/null || echo home=denied"}),
        ),
        Turn::text("done"),
    ]);
    let mut command = env.configure(tokio::process::Command::new(&binary));
    command.args(["--mode", "rpc", "--model", "mock/mock-model", "--sandbox", "workspace-write", "--no-session"]);
    let mut rho = Rho::start_command(command).await;
    let results = tool_results(&mut rho, "plant something").await;

    assert_eq!(
        results[0],
        (
            false,
            "hook=denied\nfsmonitor=denied\npi=denied\nrho=denied\nbinary=replaced\nchmod=denied\nutime=denied\nedit=ok\n M tracked.txt\n1\n"
                .to_owned()
        )
    );
    let cwd = env.cwd.canonicalize().unwrap();
    let kept = |what: &str| format!("The workspace-write sandbox keeps {} read-only: ", cwd.join(what).display());
    for (result, what) in results[1..4].iter().zip([".git", ".git", ".pi"]) {
        assert!(result.0 && result.1.starts_with(&kept(what)), "{result:?}");
    }
    assert_eq!(results[4], (false, "still=confined\nhome=denied\n".to_owned()));
    assert!(!home.join("pwned").exists());
    assert!(!env.cwd.join(".git/hooks/post-checkout").exists() && !env.cwd.join(".git/hooks/pre-commit").exists());
    assert!(!std::fs::read_to_string(env.cwd.join(".git/config")).unwrap().contains("fsmonitor"));
    assert!(!env.cwd.join(".pi/extensions").exists() && !env.cwd.join(".rho/settings.json").exists());
    assert_eq!(std::fs::metadata(&outside).unwrap().permissions().mode() & 0o777, 0o600);
    // The file at rho's path was replaced, and what rho started next was still rho, confined.
    assert!(std::fs::read_to_string(&binary).unwrap().contains("pwned"));

    // The user's own commands (a host's `bash`, `!cmd`) may write the repository: it is theirs.
    let user = rho
        .data(json!({"type": "bash", "command": "git -c user.email=a@b -c user.name=n commit -qam from-user && echo committed"}))
        .await;
    assert_eq!(user["output"], "committed\n", "{user}");
}

#[tokio::test]
async fn read_only_commands_cannot_reach_other_processes_or_outside_sockets() {
    let env = Env::outside_tmp(Vec::new()).await;
    let home = env.cwd.parent().unwrap().to_path_buf();
    let socket_path = home.join("agent.dgram");
    let socket = std::os::unix::net::UnixDatagram::bind(&socket_path).unwrap();
    socket.set_nonblocking(true).unwrap();
    let auth = env.agent_dir.join("auth.json");
    std::fs::write(&auth, "{}").unwrap();
    std::fs::set_permissions(&auth, std::fs::Permissions::from_mode(0o600)).unwrap();
    let send = format!(
        "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); \
         s.sendto(b'x', '{}')\" 2>/dev/null && echo dgram=sent || echo dgram=denied",
        socket_path.display()
    );
    let attempts = [
        "prlimit --pid $PPID --cpu=1:1 2>/dev/null && echo prlimit=set || echo prlimit=denied".to_owned(),
        "renice -n 19 -p $PPID >/dev/null 2>&1 && echo renice=set || echo renice=denied".to_owned(),
        format!("chmod 644 '{}' 2>/dev/null && echo chmod=done || echo chmod=denied", auth.display()),
        format!("chown $(id -u):$(id -g) '{}' 2>/dev/null && echo chown=done || echo chown=denied", auth.display()),
        format!(
            "python3 -c \"import os; os.setxattr('{}', 'user.rho', b'x')\" 2>/dev/null && echo xattr=set || echo xattr=denied",
            auth.display()
        ),
        "head -c 1 /proc/$PPID/environ >/dev/null 2>&1 && echo environ=read || echo environ=denied".to_owned(),
        "(echo '{\"type\":\"bash\",\"command\":\"touch injected\"}' > /proc/$PPID/fd/0) 2>/dev/null \
         && echo stdin=written || echo stdin=denied"
            .to_owned(),
        send,
        "nice -n 5 true && ulimit -v 1000000 && echo own=ok".to_owned(),
    ];
    env.server.push_turns(vec![Turn::tool_call("bash", json!({"command": attempts.join("\n")})), Turn::text("done")]);
    let mut rho = Rho::start(&env, &["--sandbox", "read-only", "--no-session"]).await;
    let results = tool_results(&mut rho, "reach out").await;
    assert_eq!(
        results[0],
        (
            false,
            "prlimit=denied\nrenice=denied\nchmod=denied\nchown=denied\nxattr=denied\nenviron=denied\nstdin=denied\ndgram=denied\nown=ok\n"
                .to_owned()
        )
    );
    assert_eq!(std::fs::metadata(&auth).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(socket.recv(&mut [0u8; 8]).is_err(), "a datagram reached the outside socket");
    assert!(!env.cwd.join("injected").exists());
    // rho is as it was: it answers, with no CPU limit set on it.
    assert_eq!(rho.data(json!({"type": "get_state"})).await["sandbox"]["mode"], "read-only");
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", rho.child.id().unwrap())).unwrap();
    assert!(limits.lines().any(|l| l.starts_with("Max cpu time") && l.contains("unlimited")), "{limits}");
}

#[tokio::test]
async fn a_folder_swapped_for_a_link_during_writes_and_edits_lets_none_outside() {
    const ROUNDS: usize = 10;
    const CALLS: usize = 100;
    let env = Env::outside_tmp(Vec::new()).await;
    let home = env.cwd.parent().unwrap().to_path_buf();
    let outside = home.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(env.cwd.join("d")).unwrap();
    // The files the edits aim at, inside and (the same names) outside.
    for k in 0..ROUNDS * CALLS {
        std::fs::write(env.cwd.join(format!("d/e{k}.txt")), "a").unwrap();
        std::fs::write(outside.join(format!("e{k}.txt")), "a").unwrap();
    }
    // A confined background process swaps `d` with a link out (renameat2's RENAME_EXCHANGE, so
    // `d` is always one or the other), as fast as it can.
    let swapper = format!(
        "setsid python3 -c \"import ctypes, os; libc = ctypes.CDLL(None); os.symlink('{}', 'link'); \
         open('started', 'w').write(str(os.getpid()))\n\
         while True: libc.renameat2(-100, b'd', -100, b'link', 2)\" >/dev/null 2>&1 < /dev/null &\n\
         for i in $(seq 200); do test -e started && break; sleep 0.05; done; test -e started && echo swapping",
        outside.display()
    );
    let mut turns = vec![Turn::tool_call("bash", json!({"command": swapper}))];
    for round in 0..ROUNDS {
        let mut turn = Turn::text("");
        for i in 0..CALLS {
            turn = turn.with_tool_call("write", json!({"path": format!("d/f{round}-{i}.txt"), "content": "x"}));
        }
        turns.push(turn);
    }
    for round in 0..ROUNDS {
        let mut turn = Turn::text("");
        for i in 0..CALLS {
            let path = format!("d/e{}.txt", round * CALLS + i);
            turn = turn.with_tool_call("edit", json!({"path": path, "edits": [{"oldText": "a", "newText": "b"}]}));
        }
        turns.push(turn);
    }
    turns.push(Turn::text("done"));
    env.server.push_turns(turns);
    let mut rho = Rho::start(&env, &["--sandbox", "workspace-write", "--no-session"]).await;
    let results = tool_results(&mut rho, "race").await;
    // The swapper stops here, whatever the assertions say.
    let swapper: i32 = std::fs::read_to_string(env.cwd.join("started")).unwrap().trim().parse().unwrap();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(swapper), nix::sys::signal::Signal::SIGKILL);
    assert_eq!(results[0], (false, "swapping\n".to_owned()));
    let (writes, edits) = results[1..].split_at(ROUNDS * CALLS);
    assert_eq!(edits.len(), ROUNDS * CALLS);
    let written_outside = std::fs::read_dir(&outside)
        .unwrap()
        .filter(|e| !e.as_ref().unwrap().file_name().to_string_lossy().starts_with('e'))
        .count();
    let edited_outside = (0..ROUNDS * CALLS)
        .filter(|k| std::fs::read_to_string(outside.join(format!("e{k}.txt"))).unwrap() != "a")
        .count();
    let refused = |calls: &[(bool, String)]| calls.iter().filter(|(error, _)| *error).count();
    eprintln!(
        "writes: {} of {} refused, {written_outside} outside; edits: {} of {} refused, {edited_outside} outside",
        refused(writes),
        writes.len(),
        refused(edits),
        edits.len()
    );
    assert_eq!((written_outside, edited_outside), (0, 0), "writes and edits that landed outside the project");
    for (_, text) in writes.iter().chain(edits).filter(|(error, _)| *error) {
        assert!(text.contains("changed while it was being written") || text.contains("is outside"), "{text}");
    }
}

#[tokio::test]
async fn code_planted_in_a_trusted_project_waits_until_it_is_trusted_again() {
    let env = Env::outside_tmp(Vec::new()).await;
    env.trust_project();
    let planted = json!({"mcpServers": {"planted": {"command": "sh", "args": ["-c", "touch planted-ran"]}}});
    env.server.push_turns(vec![
        Turn::tool_call("bash", json!({"command": format!("echo '{planted}' > .mcp.json && echo planted")})),
        Turn::text("done"),
    ]);
    let mut rho = Rho::start(&env, &["--sandbox", "workspace-write", "--no-session"]).await;
    assert_eq!(tool_results(&mut rho, "plant a server").await, [(false, "planted\n".to_owned())]);
    rho.close_stdin();
    rho.wait().await;

    // The next start, unconfined: the planted server is named, not started.
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    rho.data(json!({"type": "get_state"})).await;
    let mut stderr_pipe = rho.child.stderr.take().unwrap();
    rho.close_stdin();
    assert!(rho.wait().await.success());
    let mut stderr = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr_pipe, &mut stderr).await.unwrap();
    assert!(
        stderr.contains(
            "Warning: this project's own code was not started, as its code changed since it was trusted: .mcp.json \
             (MCP servers: planted)"
        ),
        "{stderr}"
    );
    assert!(!env.cwd.join("planted-ran").exists());

    // Trusted again, as the user decides: it runs.
    env.trust_project();
    let mut rho = Rho::start(&env, &["--no-session"]).await;
    assert!(common::eventually(|| env.cwd.join("planted-ran").exists()).await);
    rho.close_stdin();
    rho.wait().await;
}

#[tokio::test]
async fn a_project_whose_path_is_not_utf8_is_confined_like_any_other() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::outside_tmp(vec![
        Turn::tool_call(
            "bash",
            json!({"command": "echo in > inside.txt && echo ok; (echo x > ../up.txt) 2>/dev/null || echo up=denied"}),
        ),
        Turn::text("done"),
    ])
    .await;
    let project = env.cwd.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir_all(&project).unwrap();
    let mut command =
        env.command(&["--mode", "rpc", "--model", "mock/mock-model", "--sandbox", "workspace-write", "--no-session"]);
    command.current_dir(&project);
    let mut rho = Rho::start_command(command).await;
    assert_eq!(tool_results(&mut rho, "write here").await, [(false, "ok\nup=denied\n".to_owned())]);
    assert!(project.join("inside.txt").exists() && !env.cwd.join("up.txt").exists());
}

/// rho's `/proc` entries in any mode: a command started for the model (as the same user as rho,
/// not root, which could read any process) cannot read rho's environment or write frames into
/// its stdin, which would run a command without the approval it needs.
#[tokio::test]
async fn a_command_cannot_read_rho_s_environment_or_write_to_its_stdin() {
    let env = Env::new(Vec::new()).await;
    let attempts = [
        "head -c 1 /proc/$PPID/environ >/dev/null 2>&1 && echo environ=read || echo environ=denied",
        "(echo '{\"type\":\"bash\",\"command\":\"touch injected\"}' > /proc/$PPID/fd/0) 2>/dev/null \
         && echo stdin=written || echo stdin=denied",
    ];
    env.server.push_turns(vec![Turn::tool_call("bash", json!({"command": attempts.join("\n")})), Turn::text("done")]);
    let rho_args = "--mode rpc --model mock/mock-model --no-session";
    // As root the test runs rho as `nobody`, through a pipe of that user's own, as a host would.
    let mut command = if nix::unistd::geteuid().is_root() {
        for dir in [env.dir.path(), &env.agent_dir, &env.cwd] {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        let mut command = env.configure(tokio::process::Command::new("setpriv"));
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c"]);
        command.arg(format!("cat | '{}' {rho_args}", env!("CARGO_BIN_EXE_rho")));
        command
    } else {
        let mut command = env.configure(tokio::process::Command::new("sh"));
        command.arg("-c").arg(format!("cat | '{}' {rho_args}", env!("CARGO_BIN_EXE_rho")));
        command
    };
    command.env("ANTHROPIC_API_KEY", "sk-ant-secret");
    let mut rho = Rho::start_command(command).await;
    let results = tool_results(&mut rho, "reach into rho").await;
    assert_eq!(results, [(false, "environ=denied\nstdin=denied\n".to_owned())]);
    rho.data(json!({"type": "get_state"})).await;
    assert!(!env.cwd.join("injected").exists());
}
