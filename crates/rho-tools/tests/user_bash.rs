//! The user shell executor behind the RPC `bash` command: cleaned output and BashResult fields.
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

use pretty_assertions::assert_eq;
use rho_tools::{ToolOptions, run_user_bash};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn cleans_output_and_reports_fields() {
    let dir = tempfile::tempdir().unwrap();
    let options = ToolOptions::new(dir.path());
    let r = run_user_bash(
        r"printf '\033[31mred\033[0m\r\nline2\a\n'; exit 4",
        dir.path(),
        &options,
        CancellationToken::new(),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!(r.output, "red\nline2\n");
    assert_eq!(r.exit_code, Some(4));
    assert!(!r.cancelled);
    assert!(!r.truncated);
    // omp's counters: the pieces of split('\n'), the final newline starting an empty third.
    assert_eq!((r.total_lines, r.total_bytes), (3, 10));
    assert_eq!((r.output_lines, r.output_bytes), (3, 10));
    assert_eq!(r.full_output_path, None);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"output": "red\nline2\n", "exitCode": 4, "cancelled": false,
            "truncated": false, "totalLines": 3, "totalBytes": 10, "outputLines": 3, "outputBytes": 10})
    );
}

#[tokio::test]
async fn truncated_output_has_a_spill_file() {
    let dir = tempfile::tempdir().unwrap();
    let options = ToolOptions::new(dir.path());
    let mut streamed = String::new();
    let r = run_user_bash("seq 1 5000", dir.path(), &options, CancellationToken::new(), &mut |piece| {
        streamed.push_str(piece)
    })
    .await
    .unwrap();
    assert!(r.truncated);
    assert_eq!(r.exit_code, Some(0));
    assert_eq!(r.total_lines, 5001);
    assert_eq!(r.output_lines, 2000);
    assert!(r.output.starts_with("3001\n") && r.output.ends_with("\n5000"), "{}", &r.output[..10]);
    let path = r.full_output_path.expect("a spill file");
    let expected: String = (1..=5000).map(|i| format!("{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
    // What streams as it comes is the whole output, not the result's tail.
    assert_eq!(streamed, expected);
    assert_eq!(r.total_bytes, expected.len());
    std::fs::remove_file(path).unwrap();
}

#[tokio::test]
async fn cancel_kills_and_marks_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let options = ToolOptions::new(dir.path());
    let cancel = CancellationToken::new();
    // Cancelled once the command is seen running.
    let trigger = cancel.clone();
    let mut on_output = |_: &str| trigger.cancel();
    let r = run_user_bash("echo started; sleep 30", dir.path(), &options, cancel, &mut on_output).await.unwrap();
    assert!(r.cancelled);
    assert_eq!(r.exit_code, None);
    assert_eq!(r.output, "started\n");
    let json = serde_json::to_value(&r).unwrap();
    assert!(json.get("exitCode").is_none());
}

#[tokio::test]
async fn a_missing_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let err = run_user_bash("true", &gone, &ToolOptions::new(dir.path()), CancellationToken::new(), &mut |_| {})
        .await
        .unwrap_err();
    assert!(err.to_string().starts_with(&format!("Working directory does not exist: {}", gone.display())));
}
