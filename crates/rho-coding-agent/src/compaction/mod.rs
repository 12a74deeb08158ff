//! Context compaction: summarizing the older part of a long conversation so the rest fits the
//! model's context window, and summarizing an abandoned branch when the user moves elsewhere in
//! the session tree.
//!
//! This module is the pure core plus the summary requests; deciding *when* to compact, emitting
//! events and writing the entry belong to the session layer. The flow is:
//!
//! 1. [`prepare_compaction`] reads the current branch and decides what to summarize and what to
//!    keep ([`find_cut_point`]), estimating the context size ([`estimate_context_tokens`]) and
//!    collecting the files the summarized part touched ([`FileOperations`]);
//! 2. [`compact`] asks the model for the summary (two requests at once when a turn is split)
//!    and returns a [`CompactionOutput`] ready to be appended as a `compaction` entry;
//! 3. [`generate_branch_summary`] does the same for `/tree` navigation.
//!
//! Token counts are estimates (characters / 4) except where a model reported its usage.

mod branch_summary;
mod cut_point;
mod file_ops;
mod prepare;
mod prompts;
mod serialize;
mod summarize;
#[cfg(test)]
mod test_support;
mod tokens;

pub use branch_summary::{
    BranchPreparation, BranchSummaryOptions, BranchSummaryOutput, NO_CONTENT_TO_SUMMARIZE, entries_to_summarize,
    generate_branch_summary, prepare_branch_entries,
};
pub use cut_point::{CutPoint, find_cut_point, find_turn_start, is_valid_cut_point};
pub use file_ops::{FileOperations, format_file_operations};
pub use prepare::{CompactionPreparation, compaction_entry_message, prepare_compaction};
pub use prompts::{
    BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT, SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT, summary_prompt, turn_prefix_prompt,
};
pub use serialize::{TOOL_RESULT_MAX_CHARS, serialize_conversation};
pub use summarize::{
    CompactionOutput, NO_PRIOR_HISTORY, SummaryRequest, SummaryRetry, SummaryRetryEvent, compact, history_max_tokens,
    turn_prefix_max_tokens,
};
pub use tokens::{
    ContextEstimate, calculate_context_tokens, estimate_context_tokens, estimate_projected_tokens, estimate_tokens,
    should_compact,
};

/// The `compaction.*` settings that shape a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionSettings {
    /// Tokens kept free for the model's reply; compaction triggers when the context passes
    /// `contextWindow - reserveTokens`, and the summary may use 80 % of it.
    pub reserve_tokens: u64,
    /// Roughly how many tokens of the most recent conversation stay verbatim.
    pub keep_recent_tokens: u64,
}

impl CompactionSettings {
    pub const DEFAULT_RESERVE_TOKENS: u64 = 16_384;
    pub const DEFAULT_KEEP_RECENT_TOKENS: u64 = 20_000;
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self { reserve_tokens: Self::DEFAULT_RESERVE_TOKENS, keep_recent_tokens: Self::DEFAULT_KEEP_RECENT_TOKENS }
    }
}

/// Why a compaction or branch summary did not happen. The texts are the reference's, which
/// hosts show to users.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactionError {
    /// The branch is empty, or short enough to keep whole.
    #[error("Nothing to compact (session too small)")]
    NothingToCompact,
    /// The branch already ends with a compaction.
    #[error("Already compacted")]
    AlreadyCompacted,
    /// The cancel token fired before or during the summary request.
    #[error("Compaction cancelled")]
    Cancelled,
    /// The model answered the history summary request with an error.
    #[error("Summarization failed: {0}")]
    Summarization(String),
    /// The model answered the turn-prefix summary request with an error.
    #[error("Turn prefix summarization failed: {0}")]
    TurnPrefix(String),
}
