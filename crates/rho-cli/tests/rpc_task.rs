//! The `task` tool through the real binary: sub-agents are real `rho --mode json` children
//! talking to the same mock server as the parent (each picks its own turns with `bodyContains`),
//! isolation in real git worktrees of a scratch repository, verification commands run by the
//! shell, and the `task.budget.*` limits. After every task: no worktree, no task branch and no
//! child process is left.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{Env, Rho};
use rho_mock_llm::{Turn, Usage};
use serde_json::{Value, json};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `env.cwd` as a repository: `lib.txt` committed, `notes.txt` untracked.
fn init_repo(env: &Env) {
    let cwd = &env.cwd;
    git(cwd, &["init", "-q", "-b", "main"]);
    git(cwd, &["config", "user.name", "Test"]);
    git(cwd, &["config", "user.email", "test@example.com"]);
    std::fs::write(cwd.join("lib.txt"), "broken\n").unwrap();
    git(cwd, &["add", "lib.txt"]);
    git(cwd, &["commit", "-q", "-m", "init"]);
    std::fs::write(cwd.join("notes.txt"), "draft\n").unwrap();
}

/// No worktree besides the main one and no task branch.
fn assert_repo_clean(env: &Env) {
    let worktrees = git(&env.cwd, &["worktree", "list"]);
    assert_eq!(worktrees.lines().count(), 1, "{worktrees}");
    assert_eq!(git(&env.cwd, &["branch", "--list"]).trim(), "* main");
}

/// The processes whose parent is `pid`, transitively.
fn descendants(pid: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else { continue };
        let ppid: u32 = after.split(' ').nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        parents.push((child, ppid));
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    found.remove(0);
    found
}

/// Processes whose command line contains `needle` (orphans included).
fn processes_running(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(needle) {
                found.push(text);
            }
        }
    }
    found
}

fn assert_no_children(rho: &Rho) {
    let pid = rho.child.id().unwrap();
    // rho's process guardian (which ends what rho leaves once rho is gone) is rho's own.
    let is_guardian = |child: &u32| {
        std::fs::read(format!("/proc/{child}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("__guardian"))
    };
    let left: Vec<u32> = descendants(pid).into_iter().filter(|c| !is_guardian(c)).collect();
    assert!(left.is_empty(), "rho still has children: {left:?}");
}

fn of_type<'a>(frames: &'a [Value], kind: &str) -> Vec<&'a Value> {
    frames.iter().filter(|f| f["type"] == kind).collect()
}

/// The task tool's final result in `frames`.
fn task_result(frames: &[Value]) -> Value {
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end" && f["toolName"] == "task").unwrap();
    end["result"].clone()
}

/// The `subagent_*` events, each as `type[:detail]`.
fn subagent_events(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .filter(|f| f["type"].as_str().unwrap_or_default().starts_with("subagent_"))
        .map(|f| {
            let t = f["type"].as_str().unwrap();
            match t {
                "subagent_verification_start" => format!("{t}:{}", f["attempt"]),
                "subagent_verification_command_start" => format!("{t}:{}", f["commandName"].as_str().unwrap()),
                "subagent_verification_command_end" => format!("{t}:{}", f["exitCode"]),
                "subagent_verification_end" => format!("{t}:{}", f["status"].as_str().unwrap()),
                "subagent_end" => format!("{t}:{}", f["exitCode"]),
                _ => t.to_owned(),
            }
        })
        .collect()
}

fn usage(input: u64, output: u64) -> Usage {
    Usage { input, output, ..Usage::default() }
}

#[tokio::test]
async fn two_subagents_run_in_parallel_and_their_progress_and_usage_reach_the_parent() {
    let task = json!({"agent": "explore", "context": "Shared context for both.", "tasks": [
        {"id": "Alpha", "description": "first", "assignment": "Look for ALPHA-MARK"},
        {"id": "Beta", "description": "second", "assignment": "Look for BETA-MARK"}]});
    let env = Env::new(vec![
        Turn::tool_call("task", task),
        Turn::tool_call("ls", json!({"path": "."})).when_body_contains("ALPHA-MARK").with_usage(usage(1000, 10)),
        Turn::text("alpha found it").when_body_contains("ALPHA-MARK").with_usage(usage(1200, 20)).with_delay_ms(200),
        Turn::text("beta found it").when_body_contains("BETA-MARK").with_usage(usage(500, 5)).with_delay_ms(200),
        Turn::text("Both are done."),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--tools", "+task"]).await;
    rho.send(json!({"id": "p", "type": "prompt", "message": "explore"})).await;
    let frames = rho.until_agent_end().await;

    let events = subagent_events(&frames);
    assert_eq!(events.iter().filter(|e| *e == "subagent_start").count(), 2);
    let first_end = events.iter().position(|e| e.starts_with("subagent_end")).unwrap();
    assert_eq!(first_end, 2, "both started before either ended: {events:?}");
    let starts = of_type(&frames, "subagent_start");
    assert_eq!(
        starts[0],
        &json!({"type": "subagent_start", "id": starts[0]["id"], "agent": "explore", "isolated": false})
    );

    // Progress: the child's ls call and its usage show up in tool_execution_update.
    let updates: Vec<&Value> =
        of_type(&frames, "tool_execution_update").into_iter().filter(|f| f["toolName"] == "task").collect();
    assert!(updates.iter().any(|u| {
        u["partialResult"]["details"]["progress"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["recentTools"][0]["tool"] == "ls")
    }));
    let last = updates.last().unwrap()["partialResult"]["details"].clone();
    assert_eq!(last["usage"]["input"], 2700, "{last}");

    let result = task_result(&frames);
    let details = &result["details"];
    let results = details["results"].as_array().unwrap();
    assert_eq!((results[0]["id"].as_str(), results[0]["output"].as_str()), (Some("Alpha"), Some("alpha found it")));
    assert_eq!((results[1]["id"].as_str(), results[1]["output"].as_str()), (Some("Beta"), Some("beta found it")));
    assert_eq!(results[0]["exitCode"], 0);
    assert_eq!(results[0]["agentSource"], "bundled");
    assert_eq!(results[0]["usage"]["input"], 2200);
    assert_eq!(details["usage"]["input"], 2700);
    assert_eq!(details["usage"]["output"], 35);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("<task-summary>\n<header>2/2 succeeded"), "{text}");
    assert!(text.contains("<result>\nalpha found it\n</result>"), "{text}");
    assert!(std::fs::read_to_string(results[0]["outputPath"].as_str().unwrap()).unwrap() == "alpha found it");

    // The child got the explore agent's prompt and tools, the context and only its assignment.
    let bodies = env.request_bodies();
    let child = bodies.iter().find(|b| b.to_string().contains("ALPHA-MARK")).unwrap();
    let text = child.to_string();
    assert!(text.contains("You are a read-only sub-agent") && text.contains("Shared context for both."));
    assert!(!text.contains("BETA-MARK"));
    let tools: Vec<&str> = child["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["read", "grep", "find", "ls"]);

    // The session's stats count the sub-agents' usage.
    let stats = rho.data(json!({"type": "get_session_stats"})).await;
    assert_eq!(stats["tokens"]["input"], 2700 + 100 + 100);
    assert_no_children(&rho);
}

/// `rho` with worktree isolation and verification on.
async fn isolated_rho(env: &Env, profiles: Value) -> Rho {
    init_repo(env);
    let profiles = format!("task.verification.profiles={profiles}");
    Rho::start(
        env,
        &[
            "--tools",
            "+task",
            "--setting",
            "task.isolation.mode=worktree",
            "--setting",
            "task.verification.enabled=true",
            "--setting",
            &profiles,
        ],
    )
    .await
}

fn fix_task(verify: Value) -> Turn {
    Turn::tool_call(
        "task",
        json!({"agent": "task", "isolated": true, "verify": verify,
               "tasks": [{"id": "Fix", "description": "fix lib", "assignment": "FIX-MARK: make lib.txt say fixed"}]}),
    )
}

fn write_lib(content: &str) -> Turn {
    Turn::tool_call("write", json!({"path": "lib.txt", "content": content}))
}

#[tokio::test]
async fn an_isolated_task_that_passes_verification_returns_and_applies_its_patch() {
    let env = Env::new(vec![
        fix_task(json!("check")),
        write_lib("fixed\n").when_body_contains("FIX-MARK"),
        Turn::text("Fixed it.").when_body_contains("FIX-MARK"),
        Turn::text("Done."),
    ])
    .await;
    let profiles = json!({"check": {"commands": [
        {"name": "has-fix", "command": "echo checking; grep -q fixed lib.txt && test -f notes.txt"}]}});
    let mut rho = isolated_rho(&env, profiles).await;
    rho.send(json!({"id": "p", "type": "prompt", "message": "fix it"})).await;
    let frames = rho.until_agent_end().await;

    assert_eq!(
        subagent_events(&frames),
        [
            "subagent_start",
            "subagent_verification_start:1",
            "subagent_verification_command_start:has-fix",
            "subagent_verification_command_end:0",
            "subagent_verification_end:passed",
            "subagent_end:0",
        ]
    );
    let v_start = of_type(&frames, "subagent_verification_start")[0];
    assert_eq!(v_start, &json!({"type": "subagent_verification_start", "id": "Fix", "attempt": 1, "profile": "check"}));
    let cmd_end = of_type(&frames, "subagent_verification_command_end")[0];
    let artifact = cmd_end["artifactId"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(artifact).unwrap(), "checking\n");
    assert!(of_type(&frames, "subagent_start")[0]["isolated"] == true);

    let result = task_result(&frames);
    let single = &result["details"]["results"][0];
    assert_eq!(single["exitCode"], 0);
    let verification = &single["verification"];
    assert_eq!(verification, &of_type(&frames, "subagent_end")[0]["verification"]);
    assert_eq!(
        (verification["requested"].clone(), verification["status"].clone(), verification["retriesUsed"].clone()),
        (json!(true), json!("passed"), json!(0))
    );
    let command = &verification["attempts"][0]["commandResults"][0];
    assert_eq!((command["name"].as_str(), command["outputPreview"].as_str()), (Some("has-fix"), Some("checking")));
    assert_eq!(command["artifactPath"].as_str(), Some(artifact));
    let patch = std::fs::read_to_string(single["patchPath"].as_str().unwrap()).unwrap();
    assert!(patch.contains("-broken") && patch.contains("+fixed"), "{patch}");
    assert!(!patch.contains("notes.txt"), "the baseline is not part of the patch: {patch}");

    // Every task succeeded: the patch is applied to the working tree.
    assert!(result["content"][0]["text"].as_str().unwrap().contains("Applied patches: yes"));
    assert_eq!(std::fs::read_to_string(env.cwd.join("lib.txt")).unwrap(), "fixed\n");
    assert_eq!(std::fs::read_to_string(env.cwd.join("notes.txt")).unwrap(), "draft\n");
    assert_repo_clean(&env);
    assert_no_children(&rho);
}

#[tokio::test]
async fn a_failed_verification_with_discard_patch_returns_no_patch() {
    let verify = json!({"commands": [{"name": "lint", "command": "echo lint failed >&2; exit 3"},
                                     {"name": "optional", "command": "exit 1", "optional": true}],
                        "onFailure": "discard_patch"});
    let env = Env::new(vec![
        fix_task(verify),
        write_lib("fixed\n").when_body_contains("FIX-MARK"),
        Turn::text("Fixed it.").when_body_contains("FIX-MARK"),
        Turn::text("It failed."),
    ])
    .await;
    let mut rho = isolated_rho(&env, json!({})).await;
    rho.send(json!({"id": "p", "type": "prompt", "message": "fix it"})).await;
    let frames = rho.until_agent_end().await;

    assert_eq!(
        subagent_events(&frames),
        [
            "subagent_start",
            "subagent_verification_start:1",
            "subagent_verification_command_start:lint",
            "subagent_verification_command_end:3",
            "subagent_verification_command_start:optional",
            "subagent_verification_command_end:1",
            "subagent_verification_end:failed",
            "subagent_end:1",
        ]
    );
    let single = task_result(&frames)["details"]["results"][0].clone();
    assert_eq!(single["exitCode"], 1);
    assert!(single.get("patchPath").is_none(), "{single}");
    let verification = &single["verification"];
    assert_eq!(
        (verification["status"].as_str(), verification["onFailure"].as_str()),
        (Some("failed"), Some("discard_patch"))
    );
    assert_eq!(verification["attempts"][0]["commandResults"][0]["outputPreview"], "lint failed");
    assert_eq!(verification["attempts"][0]["commandResults"][1]["optional"], true);
    assert_eq!(std::fs::read_to_string(env.cwd.join("lib.txt")).unwrap(), "broken\n", "nothing applied");
    assert_repo_clean(&env);
    assert_no_children(&rho);
}

#[tokio::test]
async fn retry_once_sends_the_failure_to_a_repair_run_whose_changes_pass() {
    let verify = json!({"commands": [{"name": "has-fix", "command": "cat lib.txt; grep -q fixed lib.txt"}],
                        "onFailure": "retry_once"});
    let repair = "Verification of your changes failed";
    let env = Env::new(vec![
        fix_task(verify),
        write_lib("still wrong\n").when_body_contains("FIX-MARK"),
        Turn::text("Done, I think.").when_body_contains("FIX-MARK"),
        write_lib("fixed\n").when_body_contains(repair),
        Turn::text("Repaired.").when_body_contains(repair),
        Turn::text("All good."),
    ])
    .await;
    let mut rho = isolated_rho(&env, json!({})).await;
    rho.send(json!({"id": "p", "type": "prompt", "message": "fix it"})).await;
    let frames = rho.until_agent_end().await;

    assert_eq!(
        subagent_events(&frames),
        [
            "subagent_start",
            "subagent_verification_start:1",
            "subagent_verification_command_start:has-fix",
            "subagent_verification_command_end:1",
            "subagent_verification_end:failed",
            "subagent_start",
            "subagent_verification_start:2",
            "subagent_verification_command_start:has-fix",
            "subagent_verification_command_end:0",
            "subagent_verification_end:passed",
            "subagent_end:0",
        ]
    );
    // The repair run continued the sub-agent's conversation with the failure's context.
    let bodies = env.request_bodies();
    let repair_request = bodies.iter().find(|b| b.to_string().contains(repair)).unwrap().to_string();
    assert!(repair_request.contains("(attempt 1)"), "{repair_request}");
    assert!(repair_request.contains("### has-fix (exit code 1)"), "{repair_request}");
    assert!(repair_request.contains("still wrong"), "the command's output: {repair_request}");
    assert!(repair_request.contains("FIX-MARK"), "the first run's conversation: {repair_request}");

    let single = task_result(&frames)["details"]["results"][0].clone();
    assert_eq!(single["exitCode"], 0);
    assert_eq!(single["output"], "Repaired.");
    let verification = &single["verification"];
    assert_eq!((verification["status"].as_str(), verification["retriesUsed"].as_u64()), (Some("passed"), Some(1)));
    let attempts: Vec<&str> =
        verification["attempts"].as_array().unwrap().iter().map(|a| a["status"].as_str().unwrap()).collect();
    assert_eq!(attempts, ["failed", "passed"]);
    assert!(std::fs::read_to_string(single["patchPath"].as_str().unwrap()).unwrap().contains("+fixed"));
    assert_eq!(std::fs::read_to_string(env.cwd.join("lib.txt")).unwrap(), "fixed\n");
    assert_repo_clean(&env);
    assert_no_children(&rho);
}

#[tokio::test]
async fn abort_kills_the_subagents_and_removes_their_worktrees() {
    let env = Env::new(vec![
        fix_task(json!(false)),
        Turn::tool_call("bash", json!({"command": "sleep 37.25"})).when_body_contains("FIX-MARK"),
        Turn::text("never").when_body_contains("FIX-MARK"),
        Turn::text("never either"),
    ])
    .await;
    let mut rho = isolated_rho(&env, json!({})).await;
    rho.send(json!({"id": "p", "type": "prompt", "message": "fix it"})).await;
    rho.until(|f| {
        f["type"] == "tool_execution_update" && f["partialResult"]["details"]["progress"][0]["currentTool"] == "bash"
    })
    .await;
    // The sub-agent's command is running.
    for _ in 0..100 {
        if !processes_running("sleep 37.25").is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(!processes_running("sleep 37.25").is_empty());
    rho.send(json!({"id": "a", "type": "abort"})).await;
    let frames = rho.until_agent_end().await;

    let single = task_result(&frames)["details"]["results"][0].clone();
    assert_eq!((single["aborted"].clone(), single["exitCode"].clone()), (json!(true), json!(1)));
    assert_eq!(of_type(&frames, "subagent_end")[0]["exitCode"], 1);
    assert!(processes_running("sleep 37.25").is_empty(), "the sub-agent's command was killed");
    assert_repo_clean(&env);
    assert_no_children(&rho);
    assert_eq!(std::fs::read_to_string(env.cwd.join("lib.txt")).unwrap(), "broken\n");
}

#[tokio::test]
async fn a_cost_budget_warns_then_is_exceeded_and_refuses_the_next_prompt() {
    let env = Env::new(vec![
        Turn::tool_call(
            "task",
            json!({"agent": "explore", "tasks": [{"id": "Scout", "description": "", "assignment": "SCOUT-MARK"}]}),
        )
        .with_usage(usage(200_000, 50)),
        Turn::text("scouted").when_body_contains("SCOUT-MARK").with_usage(usage(70_000, 50)),
        Turn::text("Summary.").with_usage(usage(100_000, 50)),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--tools", "+task", "--setting", "task.budget.maxCostUsd=1"]).await;
    rho.send(json!({"id": "p", "type": "prompt", "message": "scout"})).await;
    let frames = rho.until_agent_end().await;
    assert_eq!(rho.next().await, json!({"type": "agent_settled", "aborted": false}));

    let kinds: Vec<&str> = frames
        .iter()
        .map(|f| f["type"].as_str().unwrap())
        .filter(|t| t.starts_with("budget_") || t.starts_with("subagent_") || *t == "message_end")
        .collect();
    assert_eq!(
        kinds,
        [
            "message_end",
            "message_end",
            "message_end",
            "subagent_start",
            "budget_warning",
            "subagent_end",
            "message_end",
            "message_end",
            "budget_exceeded"
        ]
    );
    let warning = of_type(&frames, "budget_warning")[0];
    assert_eq!((warning["scope"].as_str(), warning["snapshot"]["status"].as_str()), (Some("session"), Some("warning")));
    assert_eq!(warning["snapshot"]["reason"], "cost");
    assert_eq!(
        (warning["snapshot"]["subagents"].as_u64(), warning["snapshot"]["toolCalls"].as_u64()),
        (Some(1), Some(1))
    );
    let cost = warning["snapshot"]["costUsd"].as_f64().unwrap();
    assert!((cost - 0.8115).abs() < 1e-9, "{cost}");
    let exceeded = of_type(&frames, "budget_exceeded")[0];
    assert_eq!(
        (exceeded["snapshot"]["status"].as_str(), exceeded["snapshot"]["reason"].as_str()),
        (Some("exceeded"), Some("cost"))
    );
    assert_eq!(exceeded["snapshot"]["inputTokens"], 370_000);
    let keys: Vec<&str> = exceeded["snapshot"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "status",
            "wallTimeMs",
            "inputTokens",
            "outputTokens",
            "totalTokens",
            "costUsd",
            "toolCalls",
            "subagents",
            "reason"
        ]
    );

    rho.send(json!({"id": "p2", "type": "prompt", "message": "more"})).await;
    assert_eq!(
        rho.next().await,
        json!({"id": "p2", "type": "response", "command": "prompt", "success": false, "error": "Budget exceeded: cost"})
    );
    assert_no_children(&rho);
}

#[tokio::test]
async fn isolation_off_answers_with_the_reference_text() {
    let env = Env::new(vec![
        Turn::tool_call(
            "task",
            json!({"agent": "task", "isolated": true, "tasks": [{"id": "X", "description": "", "assignment": "x"}]}),
        ),
        Turn::text("ok"),
    ])
    .await;
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+task"]).await;
    rho.send(json!({"id": "p", "type": "prompt", "message": "go"})).await;
    let frames = rho.until_agent_end().await;
    let end = frames.iter().find(|f| f["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["isError"], false);
    assert_eq!(
        end["result"],
        json!({"content": [{"type": "text", "text": "Task isolation is disabled. Remove the isolated argument or set \
               task.isolation.mode to 'worktree', 'fuse-overlay', or 'fuse-projfs'."}],
               "details": {"projectAgentsDir": null, "results": [], "totalDurationMs": 0}})
    );
    assert!(of_type(&frames, "subagent_start").is_empty());
}

#[tokio::test]
async fn parallel_isolated_tasks_get_their_own_worktrees_and_both_patches_apply() {
    let task = json!({"agent": "task", "isolated": true, "tasks": [
        {"id": "One", "description": "", "assignment": "ONE-MARK: create one.txt"},
        {"id": "Two", "description": "", "assignment": "TWO-MARK: create two.txt"}]});
    let env = Env::new(vec![
        Turn::tool_call("task", task),
        Turn::tool_call("write", json!({"path": "one.txt", "content": "1\n"})).when_body_contains("ONE-MARK"),
        Turn::text("one done").when_body_contains("ONE-MARK").with_delay_ms(100),
        Turn::tool_call("write", json!({"path": "two.txt", "content": "2\n"})).when_body_contains("TWO-MARK"),
        Turn::text("two done").when_body_contains("TWO-MARK").with_delay_ms(100),
        Turn::text("Both applied."),
    ])
    .await;
    let mut rho = isolated_rho(&env, json!({})).await;
    rho.send(json!({"id": "p", "type": "prompt", "message": "go"})).await;
    let frames = rho.until_agent_end().await;

    let results = task_result(&frames)["details"]["results"].clone();
    for (i, file) in ["one.txt", "two.txt"].iter().enumerate() {
        let path = results[i]["patchPath"].as_str().unwrap_or_else(|| panic!("no patch: {:#}", task_result(&frames)));
        let patch = std::fs::read_to_string(path).unwrap();
        assert!(patch.contains(&format!("b/{file}")), "{patch}");
        assert!(!patch.contains(["two.txt", "one.txt"][i]), "each task sees only its own worktree: {patch}");
    }
    assert_eq!(std::fs::read_to_string(env.cwd.join("one.txt")).unwrap(), "1\n");
    assert_eq!(std::fs::read_to_string(env.cwd.join("two.txt")).unwrap(), "2\n");
    assert!(of_type(&frames, "subagent_end").iter().all(|e| e["exitCode"] == 0 && e.get("verification").is_none()));
    assert_repo_clean(&env);
    assert_no_children(&rho);
}

#[tokio::test]
async fn past_max_subagents_no_more_subagents_start_and_prompts_are_refused() {
    let task = json!({"agent": "explore", "tasks": [
        {"id": "First", "description": "", "assignment": "FIRST-MARK"},
        {"id": "Second", "description": "", "assignment": "SECOND-MARK"}]});
    let env = Env::new(vec![
        Turn::tool_call("task", task),
        Turn::text("first done").when_body_contains("FIRST-MARK"),
        Turn::text("Only one ran."),
    ])
    .await;
    let args = ["--tools", "+task", "--setting", "task.budget.maxSubagents=1", "--setting", "task.maxConcurrency=1"];
    let mut rho = Rho::start(&env, &args).await;
    rho.send(json!({"id": "p", "type": "prompt", "message": "go"})).await;
    let frames = rho.until_agent_end().await;

    let kinds: Vec<&str> = frames
        .iter()
        .map(|f| f["type"].as_str().unwrap())
        .filter(|t| t.starts_with("budget_") || t.starts_with("subagent_"))
        .collect();
    assert_eq!(kinds, ["budget_warning", "subagent_start", "subagent_end", "budget_exceeded"]);
    let exceeded = of_type(&frames, "budget_exceeded")[0];
    assert_eq!(
        (exceeded["snapshot"]["reason"].as_str(), exceeded["snapshot"]["subagents"].as_u64()),
        (Some("subagents"), Some(1))
    );
    let results = task_result(&frames)["details"]["results"].clone();
    assert_eq!(results[0]["output"], "first done");
    assert_eq!(
        (results[1]["aborted"].clone(), results[1]["error"].clone()),
        (json!(true), json!("Budget exceeded: subagents"))
    );
    assert!(
        !env.request_bodies()
            .iter()
            .any(|b| b.to_string().contains("SECOND-MARK") && !b.to_string().contains("FIRST-MARK"))
    );

    rho.send(json!({"id": "p2", "type": "prompt", "message": "more"})).await;
    let late = rho.until(|f| f["type"] == "response" && f["success"] == false).await.pop().unwrap();
    assert_eq!(late["error"], "Budget exceeded: subagents");
    assert_no_children(&rho);
}

/// omp's subscription: `progress` brings each sub-agent's lifecycle and progress, `events` also
/// every event of its run; with none (the default) the host hears neither.
#[tokio::test]
async fn a_subscribed_host_reads_the_subagents_progress_and_events() {
    let task =
        json!({"agent": "explore", "tasks": [{"id": "Scout", "description": "look", "assignment": "SCOUT-MARK"}]});
    let turns = || {
        vec![
            Turn::tool_call("task", task.clone()),
            Turn::tool_call("ls", json!({"path": "."})).when_body_contains("SCOUT-MARK"),
            Turn::text("scouted").when_body_contains("SCOUT-MARK"),
            Turn::text("Done."),
        ]
    };
    let env = Env::new(turns()).await;
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+task"]).await;
    rho.data(json!({"type": "set_subagent_subscription", "level": "events"})).await;
    rho.send(json!({"type": "prompt", "message": "scout"})).await;
    let frames = rho.until_agent_end().await;
    let of = |kind: &str| frames.iter().filter(|f| f["type"] == kind).collect::<Vec<_>>();
    let lifecycle: Vec<&Value> = of("subagent_lifecycle").iter().map(|f| &f["payload"]["status"]).collect();
    assert_eq!(lifecycle, [&json!("started"), &json!("completed")]);
    let progress = of("subagent_progress");
    assert!(!progress.is_empty());
    let last = &progress.last().unwrap()["payload"];
    assert_eq!(
        (&last["agent"], &last["task"], &last["assignment"]),
        (&json!("explore"), &json!("look"), &json!("SCOUT-MARK"))
    );
    assert_eq!(last["progress"]["id"], "Scout");
    assert!(progress.iter().any(|p| p["payload"]["progress"]["currentTool"] == "ls"), "{progress:?}");
    let events: Vec<&str> =
        of("subagent_event").iter().map(|f| f["payload"]["event"]["type"].as_str().unwrap()).collect();
    assert_eq!((events.first(), events.last()), (Some(&"agent_start"), Some(&"agent_end")), "{events:?}");
    assert!(events.contains(&"tool_execution_end"));
    assert!(of("subagent_event").iter().all(|f| f["payload"]["id"] == "Scout"));

    let env = Env::new(turns()).await;
    let mut rho = Rho::start(&env, &["--no-session", "--tools", "+task"]).await;
    rho.send(json!({"type": "prompt", "message": "scout"})).await;
    let frames = rho.until_agent_end().await;
    assert!(!frames.iter().any(|f| {
        let kind = f["type"].as_str().unwrap();
        kind == "subagent_lifecycle" || kind == "subagent_progress" || kind == "subagent_event"
    }));
}
