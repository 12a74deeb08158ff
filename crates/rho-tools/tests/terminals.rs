//! `bash` through [`Terminals`] (an editor's terminals in ACP mode): the terminal gets the shell,
//! the command line (with the prefix), the working directory and the environment; the call's
//! first partial result names the terminal; the result reads as a local run's does, with the
//! terminal's id in its details; an abort reaches the terminal and reads as a local abort.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{call_recording, text};
use futures::future::BoxFuture;
use pretty_assertions::assert_eq;
use rho_tools::process::Ending;
use rho_tools::{TerminalCommand, TerminalRun, Terminals, ToolOptions};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Answers every command with `output` and `ending`; waits for the abort when `ending` is
/// [`Ending::Cancelled`].
#[derive(Debug)]
struct Scripted {
    output: &'static str,
    ending: Ending,
    commands: Mutex<Vec<TerminalCommand>>,
}

impl Terminals for Scripted {
    fn run<'a>(
        &'a self,
        command: TerminalCommand,
        started: &'a (dyn Fn(&str) + Send + Sync),
        cancel: &'a CancellationToken,
        _timeout: Option<Duration>,
    ) -> BoxFuture<'a, io::Result<TerminalRun>> {
        self.commands.lock().unwrap().push(command);
        Box::pin(async move {
            started("term-7");
            if self.ending == Ending::Cancelled {
                cancel.cancelled().await;
            }
            Ok(TerminalRun { output: self.output.to_owned(), ending: self.ending })
        })
    }
}

fn options(dir: &std::path::Path, terminals: &Arc<Scripted>) -> ToolOptions {
    let hook: Arc<dyn Terminals> = terminals.clone();
    ToolOptions {
        terminals: Some(hook),
        shell_path: Some(PathBuf::from("/bin/sh")),
        shell_command_prefix: Some("set -e".into()),
        agent_dir: Some(dir.join("agent")),
        environment: vec![("GREETING".into(), "hi".into())],
        ..ToolOptions::new(dir)
    }
}

#[tokio::test]
async fn a_command_runs_in_the_hosts_terminal_and_reads_as_a_local_run() {
    let dir = tempfile::tempdir().unwrap();
    let terminals = Arc::new(Scripted { output: "out\n", ending: Ending::Exited(Some(0)), commands: Mutex::default() });
    let updates = Arc::new(Mutex::new(Vec::new()));
    let options = options(dir.path(), &terminals);
    let result =
        call_recording("bash", &options, json!({"command": "echo out"}), CancellationToken::new(), updates.clone())
            .await
            .unwrap();
    assert_eq!(text(&result), "out\n");
    assert_eq!(result.details, Some(json!({"terminalId": "term-7"})));
    let partials: Vec<_> = updates.lock().unwrap().iter().map(|u| u.details.clone()).collect();
    assert_eq!(partials, [Some(json!({"terminalId": "term-7"}))]);

    let command = terminals.commands.lock().unwrap()[0].clone();
    assert_eq!(command.program, PathBuf::from("/bin/sh"));
    assert_eq!(command.args, ["-c", "set -e\necho out"]);
    assert_eq!(command.cwd, dir.path());
    let path = &command.env[0];
    assert_eq!(path.0, "PATH");
    assert!(path.1.starts_with(&format!("{}:", dir.path().join("agent/bin").display())), "{path:?}");
    // The provider keys are set empty (the host's environment can only be added to), then the
    // process markers, then the configured environment.
    let (keys, rest) = command.env[1..].split_at(command.env.len() - 4);
    assert!(keys.contains(&("ANTHROPIC_API_KEY".to_owned(), String::new())), "{keys:?}");
    assert!(keys.iter().all(|(_, value)| value.is_empty()), "{keys:?}");
    let owned = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    };
    assert_eq!(rest, owned(&[("AI_AGENT", "rho"), ("PI_CODING_AGENT", "true"), ("GREETING", "hi")]));

    let failing = Arc::new(Scripted { output: "", ending: Ending::Exited(Some(2)), commands: Mutex::default() });
    let options = self::options(dir.path(), &failing);
    let failed =
        call_recording("bash", &options, json!({"command": "false"}), CancellationToken::new(), updates).await.unwrap();
    assert!(failed.is_error);
    assert_eq!(common::text(&failed), "(no output)\n\nCommand exited with code 2");

    // `bash.inheritProviderKeys` lets the keys through: none is set empty.
    let inheriting = Arc::new(Scripted { output: "", ending: Ending::Exited(Some(0)), commands: Mutex::default() });
    let options = ToolOptions { inherit_provider_keys: true, ..self::options(dir.path(), &inheriting) };
    call_recording("bash", &options, json!({"command": "true"}), CancellationToken::new(), Default::default())
        .await
        .unwrap();
    let env = inheriting.commands.lock().unwrap()[0].env.clone();
    assert_eq!(env[1..], owned(&[("AI_AGENT", "rho"), ("PI_CODING_AGENT", "true"), ("GREETING", "hi")]));
}

#[tokio::test]
async fn an_abort_reaches_the_terminal_and_reads_as_a_local_abort() {
    let dir = tempfile::tempdir().unwrap();
    let terminals = Arc::new(Scripted { output: "partial\n", ending: Ending::Cancelled, commands: Mutex::default() });
    let updates = Arc::new(Mutex::new(Vec::new()));
    let options = options(dir.path(), &terminals);
    let cancel = CancellationToken::new();
    let run = call_recording("bash", &options, json!({"command": "sleep 9"}), cancel.clone(), updates.clone());
    let abort = async {
        while updates.lock().unwrap().is_empty() {
            tokio::task::yield_now().await;
        }
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(run, abort);
    assert_eq!(result.unwrap_err().0, "partial\n\n\nCommand aborted");
}

/// In a sandbox the terminal starts rho's confining helper with the policy, which becomes the
/// shell: a command in the editor's terminal is confined as a local one is.
#[tokio::test]
async fn in_a_sandbox_the_terminal_runs_the_confining_helper() {
    let dir = tempfile::tempdir().unwrap();
    let terminals = Arc::new(Scripted { output: "", ending: Ending::Exited(Some(0)), commands: Mutex::default() });
    let policy = rho_sandbox::SandboxPolicy::new(rho_sandbox::SandboxMode::WorkspaceWrite, dir.path(), &[], false);
    let sandbox = rho_sandbox::Sandbox::new(policy, PathBuf::from("/opt/rho/bin/rho"));
    let options = ToolOptions { sandbox: Some(Arc::new(sandbox)), ..options(dir.path(), &terminals) };
    call_recording("bash", &options, json!({"command": "touch x"}), CancellationToken::new(), Arc::default())
        .await
        .unwrap();
    let command = terminals.commands.lock().unwrap()[0].clone();
    assert_eq!(command.program, PathBuf::from("/opt/rho/bin/rho"));
    assert_eq!(command.args[0], "__sandbox");
    let policy: serde_json::Value = serde_json::from_str(&command.args[1]).unwrap();
    assert_eq!(policy["mode"], "workspace-write", "{policy}");
    assert_eq!(command.args[2..], ["/bin/sh", "-c", "set -e\ntouch x"]);
}
