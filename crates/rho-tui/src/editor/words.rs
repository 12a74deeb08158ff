//! Word boundaries as pi's editor finds them: a run of word characters or a run of punctuation
//! is a word, whitespace before it is skipped; a line break is a stop of its own.

/// Which way a jump looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Backward,
}

fn is_punctuation(c: char) -> bool {
    "(){}[]<>.,;:'\"!?+-=*/\\|&%^$#@~`".contains(c)
}

#[derive(PartialEq, Eq)]
enum Class {
    Space,
    Punctuation,
    Word,
}

fn class(c: char) -> Class {
    if c.is_whitespace() {
        Class::Space
    } else if is_punctuation(c) {
        Class::Punctuation
    } else {
        Class::Word
    }
}

/// Where the word before `at` starts: at a line start, the end of the line above.
pub fn left(text: &str, at: usize) -> usize {
    let before = &text[..at];
    if before.ends_with('\n') {
        return at - 1;
    }
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let mut start = at;
    let mut chars = before[line_start..].char_indices().rev().peekable();
    while let Some((i, _)) = chars.next_if(|(_, c)| class(*c) == Class::Space) {
        start = line_start + i;
    }
    let Some(&(_, first)) = chars.peek() else { return start };
    let run = class(first);
    while let Some((i, _)) = chars.next_if(|(_, c)| class(*c) == run) {
        start = line_start + i;
    }
    start
}

/// Where the word after `at` ends: at a line end, the start of the line below.
pub fn right(text: &str, at: usize) -> usize {
    let after = &text[at..];
    if after.starts_with('\n') {
        return at + 1;
    }
    let line_end = after.find('\n').map_or(text.len(), |i| at + i);
    let mut chars = text[at..line_end].char_indices().peekable();
    while chars.next_if(|(_, c)| class(*c) == Class::Space).is_some() {}
    let Some(&(_, first)) = chars.peek() else { return line_end };
    let run = class(first);
    while chars.next_if(|(_, c)| class(*c) == run).is_some() {}
    chars.peek().map_or(line_end, |(i, _)| at + i)
}

/// The next `target` after `at` (forward) or the last one before it (backward), across lines.
pub fn find(text: &str, at: usize, target: char, direction: Direction) -> Option<usize> {
    match direction {
        Direction::Forward => {
            let from = text[at..].chars().next().map_or(text.len(), |c| at + c.len_utf8());
            text[from..].find(target).map(|i| from + i)
        }
        Direction::Backward => text[..at].rfind(target),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_runs_of_word_characters_or_of_punctuation() {
        let text = "let x = foo.bar(1);\nnext";
        let stops: Vec<usize> =
            std::iter::successors(Some(0), |&at| (at < text.len()).then(|| right(text, at))).skip(1).collect();
        assert_eq!(stops, vec![3, 5, 7, 11, 12, 15, 16, 17, 19, 20, 24]);
        let back: Vec<usize> =
            std::iter::successors(Some(text.len()), |&at| (at > 0).then(|| left(text, at))).skip(1).collect();
        assert_eq!(back, vec![20, 19, 17, 16, 15, 12, 11, 8, 6, 4, 0]);
    }

    #[test]
    fn a_jump_finds_the_character_across_lines() {
        let text = "abc\nxbz";
        assert_eq!(find(text, 1, 'b', Direction::Forward), Some(5));
        assert_eq!(find(text, 5, 'b', Direction::Backward), Some(1));
        assert_eq!(find(text, 0, 'q', Direction::Forward), None);
    }
}
