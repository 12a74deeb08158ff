//! rho's session files: the persisted JSONL tree of a conversation, in pi's format so sessions
//! move between rho and the pi family.
//!
//! A session file is a header line followed by one entry per line; entries form a tree through
//! `parentId`, and the *leaf* is where the conversation continues. [`Session`] reads, appends
//! and branches such a file; [`SessionContext`] is what the agent resumes with; the listing
//! functions find sessions on disk; [`SessionStats`] answers `get_session_stats`.
//!
//! Where rho is stricter than pi: every entry (the header and the first user message included)
//! is on disk as soon as it is produced; the leaf survives a reload (a `rho.leaf` marker entry
//! that pi also understands); a torn last line is skipped with a warning and never a reason to
//! rewrite the file; a file without a valid header is refused rather than overwritten; and an
//! old-version file is migrated on disk only when written to, atomically and with a backup.
#![deny(clippy::print_stdout)]

mod append;
pub mod context;
mod entry;
mod error;
mod fork;
mod header;
mod id;
mod listing;
mod load;
mod migrate;
mod parse;
mod paths;
mod session;
mod stats;
mod tree;
mod writer;

pub use append::{NewBranchSummary, NewCompaction, NewCustomMessage};
pub use context::{ModelRef, SessionContext, build_context, entry_message};
pub use entry::{
    BranchSummaryEntry, CompactionEntry, ContextEditEntry, CustomEntry, CustomMessageEntry, LEAF_MARKER_TYPE,
    LabelEntry, MessageEntry, ModelChangeEntry, OtherEntry, SessionEntry, SessionInfoEntry, ThinkingLevelChangeEntry,
    UsageEntry,
};
pub use error::{Result, SessionError};
pub use header::{CURRENT_VERSION, SessionHeader};
pub use id::{EntryId, iso_timestamp, iso_to_ms, new_session_id, now_iso};
pub use listing::{
    FoundSession, ListOptions, SessionInfo, find_session_by_id_prefix, list_all_sessions, list_sessions,
    list_sessions_with, most_recent_session, read_session_info,
};
pub use load::{LoadWarning, LoadWarningKind, MAX_WARNINGS};
pub use paths::{
    AGENT_DIR_ENV, agent_dir, agent_dir_from, encode_cwd, session_dir_for_cwd, session_file_name, sessions_root,
};
pub use session::{Session, UserMessageEntry};
pub use stats::{SessionStats, TokenStats, UsageTotals};
pub use tree::TreeNode;
pub use writer::Durability;
