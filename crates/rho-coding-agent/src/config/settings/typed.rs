//! Typed views of the settings: one accessor per key the rest of rho reads, each with the
//! built-in default of the schema, and small structs for the groups (`compaction()`,
//! `retry()`, `task()`, …) so callers write `settings.compaction().reserve_tokens`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rho_ai::Transport;
use rho_rpc::{VerifyMode, VerifyOnFailure};
use rho_types::{InterruptMode, QueueMode, ThinkingLevel};
use serde::{Deserialize, Serialize};

use super::Settings;
use crate::config::paths::expand_tilde;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactionSettings {
    pub enabled: bool,
    pub reserve_tokens: u64,
    pub keep_recent_tokens: u64,
    /// xcsh: a fixed threshold in tokens (unset, or ≤ 0: not used).
    pub threshold_tokens: Option<u64>,
    /// xcsh: a threshold in percent of the context window, 1–99 (else not used).
    pub threshold_percent: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchSummarySettings {
    pub reserve_tokens: u64,
    pub skip_prompt: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrySettings {
    pub enabled: bool,
    pub max_retries: u64,
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
}

/// `thinkingBudgets.*`: token budgets that replace the providers' defaults where set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThinkingBudgets {
    pub minimal: Option<u64>,
    pub low: Option<u64>,
    pub medium: Option<u64>,
    pub high: Option<u64>,
    pub xhigh: Option<u64>,
}

impl ThinkingBudgets {
    /// The budget set for `level`, if any.
    pub fn for_level(&self, level: ThinkingLevel) -> Option<u64> {
        match level {
            ThinkingLevel::Off => None,
            ThinkingLevel::Minimal => self.minimal,
            ThinkingLevel::Low => self.low,
            ThinkingLevel::Medium => self.medium,
            ThinkingLevel::High => self.high,
            ThinkingLevel::Xhigh | ThinkingLevel::Max => self.xhigh,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageSettings {
    pub auto_resize: bool,
    pub block_images: bool,
}

/// `todo.*`, `todoCompletion.*` and `tasks.todoClearDelay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TodoSettings {
    pub enabled: bool,
    pub reminders: bool,
    pub reminders_max: u64,
    pub eager: bool,
    /// omp's completion reminder (`todoCompletion.enabled`).
    pub completion_enabled: bool,
    pub completion_max_reminders: u64,
    /// Seconds before finished todos leave the list (0: at once; negative: never).
    pub clear_delay_secs: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IsolationMode {
    #[default]
    None,
    Worktree,
    FuseOverlay,
    FuseProjfs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IsolationMerge {
    #[default]
    Patch,
    Branch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IsolationCommits {
    #[default]
    Generic,
    Ai,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IsolationSettings {
    pub mode: IsolationMode,
    pub merge: IsolationMerge,
    pub commits: IsolationCommits,
}

/// One command of a verification profile (also the task tool's inline `verify` commands).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = rho_tools::params::undescribed)]
pub struct VerificationCommand {
    pub name: String,
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<f64>")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// A verification profile (`task.verification.profiles.<name>`), also the inline `verify`
/// config of the task tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskVerifyConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<VerifyMode>,
    pub commands: Vec<VerificationCommand>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_failure: Option<VerifyOnFailure>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VerificationSettings {
    pub enabled: bool,
    pub default_profile: String,
    pub require_for_isolated: bool,
    pub max_retries: u64,
    pub failure_context_line_limit: u64,
    pub profiles: BTreeMap<String, TaskVerifyConfig>,
}

/// `task.budget.*`: hard limits (unset = no limit) and the warning ratio.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BudgetSettings {
    pub max_wall_time_ms: Option<u64>,
    pub max_input_tokens: Option<u64>,
    pub max_output_tokens: Option<u64>,
    pub max_total_tokens: Option<u64>,
    pub max_cost_usd: Option<f64>,
    pub max_tool_calls: Option<u64>,
    pub max_subagents: Option<u64>,
    pub warn_at_ratio: f64,
}

impl BudgetSettings {
    /// True when at least one limit is set (the budget controller exists only then).
    pub fn any_limit(&self) -> bool {
        self.max_wall_time_ms.is_some()
            || self.max_input_tokens.is_some()
            || self.max_output_tokens.is_some()
            || self.max_total_tokens.is_some()
            || self.max_cost_usd.is_some()
            || self.max_tool_calls.is_some()
            || self.max_subagents.is_some()
    }
}

/// `task.*`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TaskSettings {
    /// rho: whether the `task` tool is offered (in the default tool set).
    pub enabled: bool,
    pub isolation: IsolationSettings,
    pub eager: bool,
    pub max_concurrency: u64,
    pub max_recursion_depth: u64,
    pub disabled_agents: Vec<String>,
    pub agent_model_overrides: BTreeMap<String, String>,
    pub verification: VerificationSettings,
    pub budget: BudgetSettings,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TtsrContextMode {
    #[default]
    Discard,
    Keep,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TtsrRepeatMode {
    #[default]
    Once,
    AfterGap,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TtsrInterruptMode {
    #[default]
    Always,
    ProseOnly,
    ToolOnly,
    Never,
}

/// `ttsr.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TtsrSettings {
    pub enabled: bool,
    pub context_mode: TtsrContextMode,
    pub repeat_mode: TtsrRepeatMode,
    pub repeat_gap: u64,
    pub interrupt_mode: TtsrInterruptMode,
}

/// `async.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsyncSettings {
    pub enabled: bool,
    pub max_jobs: u64,
}

/// `sandbox.*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    pub mode: rho_sandbox::SandboxMode,
    /// Extra roots writable in workspace-write (relative ones against the working directory).
    pub writable_roots: Vec<String>,
    /// Whether confined commands may use the network.
    pub network: bool,
}

/// `bash.autoBackground.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoBackgroundSettings {
    pub enabled: bool,
    pub threshold_ms: u64,
}

impl Settings {
    fn flag(&self, key: &str) -> bool {
        self.get_bool(key).unwrap_or(false)
    }

    fn count(&self, key: &str) -> u64 {
        self.get_u64(key).unwrap_or(0)
    }

    pub fn default_provider(&self) -> Option<String> {
        self.get_string("defaultProvider")
    }

    pub fn default_model(&self) -> Option<String> {
        self.get_string("defaultModel")
    }

    /// `defaultThinkingLevel` when set (the built-in default, `medium`, is
    /// [`ThinkingLevel::default`]).
    pub fn default_thinking_level(&self) -> Option<ThinkingLevel> {
        self.get_as("defaultThinkingLevel")
    }

    /// `modelThinkingLevels["provider/id"]`, pi's per-model default.
    pub fn model_thinking_level(&self, provider: &str, model_id: &str) -> Option<ThinkingLevel> {
        let levels: BTreeMap<String, ThinkingLevel> = self.get_as("modelThinkingLevels")?;
        levels.get(&format!("{provider}/{model_id}")).copied()
    }

    /// `transport`: how a provider reachable two ways (ChatGPT's Codex backend) is reached;
    /// `auto` (a websocket first) when unset, as in pi.
    pub fn transport(&self) -> Transport {
        self.get_as("transport").unwrap_or(Transport::Auto)
    }

    pub fn steering_mode(&self) -> QueueMode {
        self.get_or_default("steeringMode")
    }

    pub fn follow_up_mode(&self) -> QueueMode {
        self.get_or_default("followUpMode")
    }

    /// `interruptMode`, `wait` unless set (docs/decisions.md D1).
    pub fn interrupt_mode(&self) -> InterruptMode {
        self.get_as("interruptMode").unwrap_or(InterruptMode::Wait)
    }

    pub fn compaction(&self) -> CompactionSettings {
        CompactionSettings {
            enabled: self.flag("compaction.enabled"),
            reserve_tokens: self.count("compaction.reserveTokens"),
            keep_recent_tokens: self.count("compaction.keepRecentTokens"),
            threshold_tokens: self.get_f64("compaction.thresholdTokens").filter(|t| *t > 0.0).map(|t| t as u64),
            threshold_percent: self.get_f64("compaction.thresholdPercent").filter(|p| (1.0..=99.0).contains(p)),
        }
    }

    pub fn branch_summary(&self) -> BranchSummarySettings {
        BranchSummarySettings {
            reserve_tokens: self.count("branchSummary.reserveTokens"),
            skip_prompt: self.flag("branchSummary.skipPrompt"),
        }
    }

    pub fn retry(&self) -> RetrySettings {
        RetrySettings {
            enabled: self.flag("retry.enabled"),
            max_retries: self.count("retry.maxRetries"),
            base_delay_ms: self.count("retry.baseDelayMs"),
            max_delay_ms: self.count("retry.maxDelayMs"),
        }
    }

    pub fn thinking_budgets(&self) -> ThinkingBudgets {
        ThinkingBudgets {
            minimal: self.get_u64("thinkingBudgets.minimal"),
            low: self.get_u64("thinkingBudgets.low"),
            medium: self.get_u64("thinkingBudgets.medium"),
            high: self.get_u64("thinkingBudgets.high"),
            xhigh: self.get_u64("thinkingBudgets.xhigh"),
        }
    }

    /// `shellPath`, with a leading `~` expanded.
    pub fn shell_path(&self) -> Option<PathBuf> {
        self.get_string("shellPath").map(|p| expand_tilde(&p, self.home()))
    }

    pub fn shell_command_prefix(&self) -> Option<String> {
        self.get_string("shellCommandPrefix")
    }

    pub fn images(&self) -> ImageSettings {
        ImageSettings { auto_resize: self.flag("images.autoResize"), block_images: self.flag("images.blockImages") }
    }

    /// `enabledModels`, the patterns for model cycling, when set.
    pub fn enabled_models(&self) -> Option<Vec<String>> {
        self.get_string_list("enabledModels")
    }

    /// `skills`: extra skill files or directories.
    pub fn skill_paths(&self) -> Vec<String> {
        self.get_string_list("skills").unwrap_or_default()
    }

    /// `prompts`: extra prompt template files or directories.
    pub fn prompt_paths(&self) -> Vec<String> {
        self.get_string_list("prompts").unwrap_or_default()
    }

    /// pi 1.6's `defaultTools`, as written (resolved in `startup::tools`).
    pub fn default_tools(&self) -> Option<Vec<String>> {
        self.get_string_list("defaultTools")
    }

    pub fn enable_skill_commands(&self) -> bool {
        self.flag("enableSkillCommands")
    }

    pub fn todo(&self) -> TodoSettings {
        TodoSettings {
            enabled: self.flag("todo.enabled"),
            reminders: self.flag("todo.reminders"),
            reminders_max: self.count("todo.reminders.max"),
            eager: self.flag("todo.eager"),
            completion_enabled: self.flag("todoCompletion.enabled"),
            completion_max_reminders: self.count("todoCompletion.maxReminders"),
            clear_delay_secs: self.get_f64("tasks.todoClearDelay").map_or(60, |s| s.floor() as i64),
        }
    }

    pub fn task(&self) -> TaskSettings {
        TaskSettings {
            enabled: self.flag("task.enabled"),
            isolation: IsolationSettings {
                mode: self.get_or_default("task.isolation.mode"),
                merge: self.get_or_default("task.isolation.merge"),
                commits: self.get_or_default("task.isolation.commits"),
            },
            eager: self.flag("task.eager"),
            max_concurrency: self.count("task.maxConcurrency"),
            max_recursion_depth: self.count("task.maxRecursionDepth"),
            disabled_agents: self.get_string_list("task.disabledAgents").unwrap_or_default(),
            agent_model_overrides: self.get_or_default("task.agentModelOverrides"),
            verification: VerificationSettings {
                enabled: self.flag("task.verification.enabled"),
                default_profile: self.get_string("task.verification.defaultProfile").unwrap_or_default(),
                require_for_isolated: self.flag("task.verification.requireForIsolated"),
                max_retries: self.count("task.verification.maxRetries"),
                failure_context_line_limit: self.count("task.verification.failureContextLineLimit"),
                profiles: self.get_or_default("task.verification.profiles"),
            },
            budget: BudgetSettings {
                max_wall_time_ms: self.get_u64("task.budget.maxWallTimeMs"),
                max_input_tokens: self.get_u64("task.budget.maxInputTokens"),
                max_output_tokens: self.get_u64("task.budget.maxOutputTokens"),
                max_total_tokens: self.get_u64("task.budget.maxTotalTokens"),
                max_cost_usd: self.get_f64("task.budget.maxCostUsd"),
                max_tool_calls: self.get_u64("task.budget.maxToolCalls"),
                max_subagents: self.get_u64("task.budget.maxSubagents"),
                warn_at_ratio: self.get_f64("task.budget.warnAtRatio").unwrap_or(0.8),
            },
        }
    }

    pub fn ttsr(&self) -> TtsrSettings {
        TtsrSettings {
            enabled: self.flag("ttsr.enabled"),
            context_mode: self.get_or_default("ttsr.contextMode"),
            repeat_mode: self.get_or_default("ttsr.repeatMode"),
            repeat_gap: self.count("ttsr.repeatGap"),
            interrupt_mode: self.get_or_default("ttsr.interruptMode"),
        }
    }

    /// `async.*` (`async` is a keyword, hence the name).
    pub fn async_jobs(&self) -> AsyncSettings {
        AsyncSettings { enabled: self.flag("async.enabled"), max_jobs: self.count("async.maxJobs") }
    }

    /// `bash.environment`: variables set for every shell command (`bash` tool and RPC `bash`).
    pub fn bash_environment(&self) -> Vec<(String, String)> {
        self.get_as::<BTreeMap<String, String>>("bash.environment").unwrap_or_default().into_iter().collect()
    }

    /// `sandbox.*`: the mode, the extra writable roots and whether the network is open.
    pub fn sandbox(&self) -> SandboxSettings {
        let mode =
            self.get_string("sandbox.mode").and_then(|m| rho_sandbox::SandboxMode::parse(&m)).unwrap_or_default();
        SandboxSettings {
            mode,
            writable_roots: self.get_string_list("sandbox.writableRoots").unwrap_or_default(),
            network: self.flag("sandbox.network"),
        }
    }

    pub fn bash_auto_background(&self) -> AutoBackgroundSettings {
        AutoBackgroundSettings {
            enabled: self.flag("bash.autoBackground.enabled"),
            threshold_ms: self.count("bash.autoBackground.thresholdMs"),
        }
    }
}
