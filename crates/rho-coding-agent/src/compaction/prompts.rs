//! The texts of the summary requests: the system prompt every summary request carries, the
//! instructions for a first summary, for updating an earlier one, for the beginning of a split
//! turn and for an abandoned branch, and how the user prompt is put together.
//!
//! The section headings are fixed (hosts and later compactions read them); the bracketed lines
//! of each template tell the model what belongs under a heading.

/// The system prompt of every summary request.
pub const SUMMARIZATION_SYSTEM_PROMPT: &str = "\
You act as a context-summarization assistant. You receive a conversation between a user and an \
AI coding assistant, and you condense it into a structured summary laid out precisely as the \
request prescribes.

Never carry the conversation forward, and never answer questions that appear inside it. Reply \
with the structured summary alone.";

/// Instructions for a first summary (no earlier summary exists).
pub const SUMMARIZATION_PROMPT: &str = "\
Everything above is the conversation to be summarized. From it, write a structured context \
checkpoint: a summary another LLM will rely on to pick up the work where it stopped.

Follow this format exactly. Keep the headings as written; each bracketed line describes what \
belongs there:

## Goal
[The user's objective. List several if the session dealt with more than one task.]

## Constraints & Preferences
- [A constraint, preference or requirement the user stated]
- [Or \"(none)\" if the user stated none]

## Progress
### Done
- [x] [A finished task or change]

### In Progress
- [ ] [Work under way]

### Blocked
- [Anything that stops progress, if there is such a thing]

## Key Decisions
- **[Decision]**: [The short reason for it]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, examples or references needed to carry on]
- [Or \"(none)\" if nothing applies]

Be brief in every section, and keep exact file paths, function names and error messages as they \
appear.";

/// Instructions for updating the summary given in `<previous-summary>`.
pub const UPDATE_SUMMARIZATION_PROMPT: &str = "\
The messages above are NEW parts of the conversation. Fold them into the existing summary found \
in the <previous-summary> tags.

Revise that structured summary with what is new, by these rules:
- KEEP every piece of information from the previous summary
- ADD the progress, decisions and context the new messages bring
- In Progress: MOVE items from \"In Progress\" to \"Done\" once they are completed
- REWRITE \"Next Steps\" to reflect what has been accomplished
- KEEP exact file paths, function names and error messages
- You may drop what no longer matters

Follow this format exactly. Keep the headings as written; each bracketed line describes what \
belongs there:

## Goal
[The goals already listed, plus new ones if the task grew]

## Constraints & Preferences
- [Those already listed, plus any found since]

## Progress
### Done
- [x] [Items done before AND items completed since]

### In Progress
- [ ] [Current work, brought up to date]

### Blocked
- [Blockers that still apply; leave out the resolved ones]

## Key Decisions
- **[Decision]**: [The short reason for it] (keep every earlier decision, add the new ones)

## Next Steps
1. [What should happen next, given the current state]

## Critical Context
- [What still matters, plus what is new]

Be brief in every section, and keep exact file paths, function names and error messages as they \
appear.";

/// Instructions for summarizing the beginning of a split turn.
pub const TURN_PREFIX_SUMMARIZATION_PROMPT: &str = "\
The conversation above is the PREFIX of a single turn that grew too large to keep whole; its \
SUFFIX, the most recent work, stays in the context as it is. Summarize this prefix so that the \
retained suffix can be understood.

Use this format:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Key decisions made and work done in the prefix]

## Context for Suffix
- [What one needs to know to follow the retained recent work]

Stay concise, and concentrate on what is needed to make sense of the kept suffix.";

/// Instructions for summarizing an abandoned branch.
pub const BRANCH_SUMMARY_PROMPT: &str = "\
Write a structured summary of this conversation branch, to serve as context when the work comes \
back to it later.

Follow this format exactly. Keep the headings as written; each bracketed line describes what \
belongs there:

## Goal
[What the user set out to do in this branch]

## Constraints & Preferences
- [A constraint, preference or requirement that was stated]
- [Or \"(none)\" if none was stated]

## Progress
### Done
- [x] [A finished task or change]

### In Progress
- [ ] [Work begun but not finished]

### Blocked
- [Anything that stops progress, if there is such a thing]

## Key Decisions
- **[Decision]**: [The short reason for it]

## Next Steps
1. [What should happen next to continue this work]

Be brief in every section, and keep exact file paths, function names and error messages as they \
appear.";

/// What a stored branch summary starts with, before the model's text.
pub const BRANCH_SUMMARY_PREAMBLE: &str = "\
The user went down a different conversation branch before coming back here.
What follows summarizes that exploration:

";

/// `custom` unless it is empty.
pub(crate) fn non_empty(custom: Option<&str>) -> Option<&str> {
    custom.filter(|c| !c.is_empty())
}

/// `<conversation>…</conversation>` and the blank line after it.
pub(crate) fn conversation_block(conversation: &str) -> String {
    format!("<conversation>\n{conversation}\n</conversation>\n\n")
}

/// The user prompt of a history summary: the conversation, the previous summary if any, the
/// first-summary or update instructions, and the caller's focus (`/compact <instructions>`).
pub fn summary_prompt(conversation: &str, previous_summary: Option<&str>, custom_instructions: Option<&str>) -> String {
    let mut prompt = conversation_block(conversation);
    let instructions = match previous_summary {
        Some(previous) => {
            prompt.push_str(&format!("<previous-summary>\n{previous}\n</previous-summary>\n\n"));
            UPDATE_SUMMARIZATION_PROMPT
        }
        None => SUMMARIZATION_PROMPT,
    };
    prompt.push_str(instructions);
    if let Some(custom) = non_empty(custom_instructions) {
        prompt.push_str(&format!("\n\nAdditional focus: {custom}"));
    }
    prompt
}

/// The user prompt of a turn-prefix summary, with the caller's focus as a history summary has it.
pub fn turn_prefix_prompt(conversation: &str, custom_instructions: Option<&str>) -> String {
    let mut prompt = conversation_block(conversation) + TURN_PREFIX_SUMMARIZATION_PROMPT;
    if let Some(custom) = non_empty(custom_instructions) {
        prompt.push_str(&format!("\n\nAdditional focus: {custom}"));
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADINGS: [&str; 9] = [
        "## Goal\n",
        "## Constraints & Preferences\n",
        "## Progress\n",
        "### Done\n- [x] ",
        "### In Progress\n- [ ] ",
        "### Blocked\n- ",
        "## Key Decisions\n- **[Decision]**: ",
        "## Next Steps\n1. ",
        "## Critical Context\n- ",
    ];

    fn assert_in_order(text: &str, parts: &[&str]) {
        let mut from = 0;
        for part in parts {
            let at = text[from..].find(part).unwrap_or_else(|| panic!("{part:?} missing or out of order"));
            from += at + part.len();
        }
    }

    #[test]
    fn templates_carry_the_literal_headings_in_order() {
        assert_in_order(SUMMARIZATION_PROMPT, &HEADINGS);
        assert_in_order(UPDATE_SUMMARIZATION_PROMPT, &HEADINGS);
        assert_in_order(BRANCH_SUMMARY_PROMPT, &HEADINGS[..8]);
        assert!(!BRANCH_SUMMARY_PROMPT.contains("## Critical Context"));
        assert_in_order(
            TURN_PREFIX_SUMMARIZATION_PROMPT,
            &["PREFIX", "SUFFIX", "## Original Request\n", "## Early Progress\n- ", "## Context for Suffix\n- "],
        );
        assert!(UPDATE_SUMMARIZATION_PROMPT.contains("<previous-summary>"));
        for prompt in [SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT, BRANCH_SUMMARY_PROMPT] {
            assert!(prompt.ends_with("keep exact file paths, function names and error messages as they appear."));
        }
    }

    #[test]
    fn system_prompt_is_two_paragraphs() {
        assert_eq!(SUMMARIZATION_SYSTEM_PROMPT.split("\n\n").count(), 2);
        assert_eq!(SUMMARIZATION_SYSTEM_PROMPT.matches('\n').count(), 2);
    }

    #[test]
    fn preamble_is_two_lines_and_a_blank_line() {
        let lines: Vec<&str> = BRANCH_SUMMARY_PREAMBLE.split('\n').collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[1].ends_with(':'));
        assert_eq!(&lines[2..], ["", ""]);
    }

    #[test]
    fn first_summary_prompt() {
        assert_eq!(
            summary_prompt("[User]: hi", None, None),
            format!("<conversation>\n[User]: hi\n</conversation>\n\n{SUMMARIZATION_PROMPT}")
        );
        // An empty focus is no focus.
        assert_eq!(summary_prompt("c", None, Some("")), summary_prompt("c", None, None));
    }

    #[test]
    fn update_prompt_with_focus() {
        assert_eq!(
            summary_prompt("[User]: hi", Some("## Goal\nold"), Some("the parser")),
            format!(
                "<conversation>\n[User]: hi\n</conversation>\n\n<previous-summary>\n## Goal\nold\n</previous-summary>\n\n{UPDATE_SUMMARIZATION_PROMPT}\n\nAdditional focus: the parser"
            )
        );
    }

    #[test]
    fn turn_prefix() {
        assert_eq!(
            turn_prefix_prompt("x", None),
            format!("<conversation>\nx\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}")
        );
        assert_eq!(
            turn_prefix_prompt("x", Some("the parser")),
            format!(
                "<conversation>\nx\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}\n\nAdditional focus: the parser"
            )
        );
    }
}
