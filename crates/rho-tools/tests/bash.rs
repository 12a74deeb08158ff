//! The `bash` tool against a real shell: output, exit codes, timeouts, abort killing the whole
//! process group, truncation with the spill file, streaming updates.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{call, call_recording, call_with, text};
use pretty_assertions::assert_eq;
use rho_tools::ToolOptions;
use rho_types::AgentToolResult;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn spill_path(details: &Value) -> std::path::PathBuf {
    std::path::PathBuf::from(details["fullOutputPath"].as_str().expect("a spill file path"))
}

#[tokio::test]
async fn returns_stdout_and_stderr_merged() {
    let dir = tempfile::tempdir().unwrap();
    let r = call("bash", dir.path(), json!({"command": "echo hello; echo oops >&2; pwd"})).await.unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    assert_eq!(text(&r), format!("hello\noops\n{}\n", cwd.display()));
    assert_eq!(r.details, None);

    let r = call("bash", dir.path(), json!({"command": "true"})).await.unwrap();
    assert_eq!(text(&r), "(no output)");
}

/// pi 1.6's `structuredContent`: the whole output for programs, its exit code and wall time;
/// past 1 MiB the output's two ends with the bytes between them counted, and the spill file.
#[tokio::test]
async fn structured_content_holds_the_whole_output() {
    let dir = tempfile::tempdir().unwrap();
    let r = call("bash", dir.path(), json!({"command": "echo hello"})).await.unwrap();
    let mut structured = r.structured_content.clone().unwrap();
    assert!(structured["wall_time_seconds"].as_f64().unwrap() < 30.0, "{structured}");
    structured["wall_time_seconds"] = json!(0);
    assert_eq!(structured, json!({"output": "hello\n", "truncated": false, "exit_code": 0, "wall_time_seconds": 0}));

    // 3000 lines: more than the model sees (2000), all of it for programs.
    let r = call("bash", dir.path(), json!({"command": "seq 1 3000"})).await.unwrap();
    let structured = r.structured_content.unwrap();
    assert_eq!(structured["output"].as_str().unwrap().lines().count(), 3000);
    assert_eq!(structured["truncated"], false);

    let r = call("bash", dir.path(), json!({"command": "head -c 1200000 /dev/zero | tr '\\0' a"})).await.unwrap();
    let structured = r.structured_content.unwrap();
    let output = structured["output"].as_str().unwrap();
    assert_eq!(structured["truncated"], true);
    assert!(output.contains("\n\n[... 151424 bytes omitted ...]\n\n"), "{}", &output[524_270..524_330]);
    assert_eq!(output.len(), 1024 * 1024 + "\n\n[... 151424 bytes omitted ...]\n\n".len());
    assert_eq!(structured["full_output_path"], r.details.unwrap()["fullOutputPath"]);
}

#[tokio::test]
async fn nonzero_exit_is_an_error_with_the_output() {
    let dir = tempfile::tempdir().unwrap();
    // An error result that keeps its structured content, as pi 1.6 returns it.
    let r = call("bash", dir.path(), json!({"command": "echo out; exit 3"})).await.unwrap();
    assert!(r.is_error);
    assert_eq!(text(&r), "out\n\n\nCommand exited with code 3");
    let structured = r.structured_content.unwrap();
    assert_eq!((&structured["output"], &structured["exit_code"]), (&json!("out\n"), &json!(3)));
    let r = call("bash", dir.path(), json!({"command": "exit 1"})).await.unwrap();
    assert!(r.is_error);
    assert_eq!(text(&r), "(no output)\n\nCommand exited with code 1");
    assert!(!call("bash", dir.path(), json!({"command": "true"})).await.unwrap().is_error);
}

#[tokio::test]
async fn timeout_kills_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let err = call("bash", dir.path(), json!({"command": "echo before; sleep 20; echo after", "timeout": 0.5}))
        .await
        .unwrap_err();
    assert_eq!(err.0, "before\n\n\nCommand timed out after 0.5 seconds");
    let err = call("bash", dir.path(), json!({"command": "sleep 20", "timeout": 1})).await.unwrap_err();
    assert_eq!(err.0, "Command timed out after 1 seconds");
}

/// Whether `pid` no longer runs (a zombie waiting to be reaped counts as dead).
fn is_gone(pid: i32) -> bool {
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    if kill(Pid::from_raw(pid), None).is_err() {
        return true;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')))
        .unwrap_or(true)
}

#[tokio::test]
async fn abort_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let options = ToolOptions::new(dir.path());
    let updates: Arc<Mutex<Vec<AgentToolResult>>> = Arc::default();
    let cancel = CancellationToken::new();
    let task = {
        let (updates, cancel) = (updates.clone(), cancel.clone());
        tokio::spawn(async move {
            call_recording("bash", &options, json!({"command": "sleep 30 & echo $!; wait"}), cancel, updates).await
        })
    };

    let mut grandchild = None;
    for _ in 0..200 {
        let seen = updates.lock().unwrap().last().map(|u| u.text_content());
        if let Some(pid) = seen.and_then(|t| t.trim().parse::<i32>().ok()) {
            grandchild = Some(pid);
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let grandchild = grandchild.expect("the command printed its background pid");
    assert!(!is_gone(grandchild), "the background sleep runs before the abort");

    cancel.cancel();
    let err = task.await.unwrap().unwrap_err();
    assert_eq!(err.0, format!("{grandchild}\n\n\nCommand aborted"));

    let mut gone = false;
    for _ in 0..20 {
        if is_gone(grandchild) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "grandchild {grandchild} survived the abort");
}

#[tokio::test]
async fn abort_before_start_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err =
        call_with("bash", &ToolOptions::new(dir.path()), json!({"command": "touch ran"}), cancel).await.unwrap_err();
    assert_eq!(err.0, "Command aborted");
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn truncation_by_lines_names_a_spill_file_with_everything() {
    let dir = tempfile::tempdir().unwrap();
    let r = call("bash", dir.path(), json!({"command": "seq 1 3000"})).await.unwrap();
    let details = r.details.clone().unwrap();
    let path = spill_path(&details);
    let t = text(&r);
    // Lines are counted as pi 1.6 counts them: the final newline ends line 3000.
    assert!(t.starts_with("1001\n1002\n"));
    assert!(t.ends_with(&format!("3000\n\n[Showing lines 1001-3000 of 3000. Full output: {}]", path.display())));
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    assert_eq!(details["truncation"]["outputLines"], 2000);
    let expected: String = (1..=3000).map(|i| format!("{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn a_long_outputs_notice_numbers_lines_as_the_full_output_has_them() {
    let dir = tempfile::tempdir().unwrap();
    // Far more than the rolling buffer keeps: the notice still counts every line.
    let r = call("bash", dir.path(), json!({"command": "seq 1 100000"})).await.unwrap();
    let details = r.details.clone().unwrap();
    let path = spill_path(&details);
    let t = text(&r);
    assert!(t.starts_with("98001\n"), "{}", &t[..20]);
    assert!(t.ends_with(&format!("100000\n\n[Showing lines 98001-100000 of 100000. Full output: {}]", path.display())));
    assert_eq!(details["truncation"]["totalLines"], 100_000);
    // Line 98001 of the full output is where the notice says it is.
    let full = std::fs::read_to_string(&path).unwrap();
    assert_eq!(full.lines().nth(98_000), Some("98001"));
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn truncation_by_bytes_names_a_spill_file_with_everything() {
    let dir = tempfile::tempdir().unwrap();
    let r = call("bash", dir.path(), json!({"command": "seq -f '%0100g' 1 1000"})).await.unwrap();
    let details = r.details.clone().unwrap();
    let path = spill_path(&details);
    let shown = text(&r);
    let notice = shown.rsplit("\n\n").next().unwrap_or_default().to_owned();
    assert!(
        text(&r).ends_with(&format!(
            "\n\n[Showing lines 495-1000 of 1000 (50.0KB limit). Full output: {}]",
            path.display()
        )),
        "{notice}"
    );
    assert_eq!(details["truncation"]["truncatedBy"], "bytes");
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("rho-bash-") && name.ends_with(".log"));
    let expected: String = (1..=1000).map(|i| format!("{i:0100}\n")).collect();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn an_overlong_last_line_keeps_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let r = call("bash", dir.path(), json!({"command": "head -c 60000 /dev/zero | tr '\\0' x"})).await.unwrap();
    let details = r.details.clone().unwrap();
    let path = spill_path(&details);
    let t = text(&r);
    assert!(
        t.ends_with(&format!("\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {}]", path.display()))
    );
    assert_eq!(details["truncation"]["lastLinePartial"], true);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn streams_partial_output() {
    let dir = tempfile::tempdir().unwrap();
    let updates: Arc<Mutex<Vec<AgentToolResult>>> = Arc::default();
    let r = call_recording(
        "bash",
        &ToolOptions::new(dir.path()),
        json!({"command": "echo first; sleep 0.3; echo second; seq 1 50000 >/dev/stdout"}),
        CancellationToken::new(),
        updates.clone(),
    )
    .await
    .unwrap();
    let updates = updates.lock().unwrap();
    assert!(updates.iter().any(|u| u.text_content() == "first\n"));
    assert!(updates.iter().all(|u| u.text_content().len() <= 51200));
    let details = r.details.unwrap();
    std::fs::remove_file(spill_path(&details)).unwrap();
}

#[tokio::test]
async fn shell_settings_apply() {
    let dir = tempfile::tempdir().unwrap();
    let options =
        ToolOptions { shell_command_prefix: Some("export GREETING=hi".to_owned()), ..ToolOptions::new(dir.path()) };
    let r = call_with("bash", &options, json!({"command": "echo $GREETING"}), CancellationToken::new()).await.unwrap();
    assert_eq!(text(&r), "hi\n");

    let options = ToolOptions { shell_path: Some("/no/such/shell".into()), ..ToolOptions::new(dir.path()) };
    let err = call_with("bash", &options, json!({"command": "true"}), CancellationToken::new()).await.unwrap_err();
    assert_eq!(err.0.lines().next(), Some("Custom shell path not found: /no/such/shell"));

    let gone = dir.path().join("gone");
    let err = call_with("bash", &ToolOptions::new(&gone), json!({"command": "true"}), CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.0.lines().next().map(str::to_owned),
        Some(format!("Working directory does not exist: {}", gone.display()))
    );
}
