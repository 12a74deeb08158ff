//! The editor's editing, undo, kill ring and layout.

use super::*;

fn typed(text: &str) -> Editor {
    let mut e = Editor::default();
    e.insert(text);
    e
}

#[test]
fn word_and_line_keys_edit_around_the_cursor() {
    let mut e = typed("hello big world");
    e.delete_word_back();
    assert_eq!(e.text(), "hello big ");
    e.home();
    e.right();
    e.kill_to_end();
    assert_eq!(e.text(), "h");
    e.insert("ey there");
    e.kill_to_start();
    assert_eq!(e.text(), "");
}

#[test]
fn up_and_down_move_between_lines_then_through_history() {
    let mut e = Editor::default();
    e.remember("first");
    e.remember("second");
    e.insert("draft");
    e.up();
    assert_eq!(e.text(), "second");
    e.up();
    assert_eq!(e.text(), "first");
    e.down();
    e.down();
    assert_eq!(e.text(), "draft");
    let mut e = typed("ab\ncd");
    e.up();
    e.insert("X");
    assert_eq!(e.text(), "abX\ncd");
}

#[test]
fn the_word_before_the_cursor_is_replaced() {
    let mut e = typed("read @ma now");
    e.end();
    for _ in 0..4 {
        e.left();
    }
    assert_eq!(e.word_before_cursor(), (5, "@ma"));
    e.replace_before_cursor(5, "@src/mail.rs");
    e.insert("!");
    assert_eq!(e.text(), "read @src/mail.rs! now");
}

#[test]
fn layout_wraps_and_places_the_cursor() {
    let e = typed("abcdef\nxy");
    let (rows, cursor) = e.layout(4);
    assert_eq!(rows, vec!["abcd", "ef", "xy"]);
    assert_eq!(cursor, (2, 2));
}

fn typing(text: &str) -> Editor {
    let mut e = Editor::default();
    for c in text.chars() {
        e.type_char(c);
    }
    e
}

#[test]
fn typed_words_undo_one_word_at_a_time_with_the_space_before_them() {
    let mut e = typing("hello big world");
    e.undo();
    assert_eq!(e.text(), "hello big");
    e.undo();
    assert_eq!(e.text(), "hello");
    e.undo();
    assert_eq!(e.text(), "");
    e.undo();
    assert_eq!(e.text(), "");
}

#[test]
fn moving_the_cursor_starts_a_new_undo_step() {
    let mut e = typing("ab");
    e.left();
    e.type_char('X');
    e.type_char('Y');
    assert_eq!(e.text(), "aXYb");
    e.undo();
    assert_eq!((e.text(), e.cursor), ("ab", 1));
}

#[test]
fn deletions_pastes_and_clearing_are_undone_and_sending_forgets_them() {
    let mut e = typing("one two");
    e.backspace();
    e.delete_word_back();
    e.insert(" pasted\ntext");
    e.set_text("");
    e.undo();
    assert_eq!(e.text(), "one  pasted\ntext");
    e.undo();
    assert_eq!(e.text(), "one ");
    e.undo();
    assert_eq!(e.text(), "one tw");
    e.take();
    e.undo();
    assert_eq!(e.text(), "");
}

#[test]
fn kills_in_a_row_are_yanked_back_as_one_and_yank_pop_cycles() {
    let mut e = typed("alpha beta gamma");
    e.delete_word_back();
    e.delete_word_back();
    assert_eq!(e.text(), "alpha ");
    e.yank();
    assert_eq!(e.text(), "alpha beta gamma");
    e.home();
    e.delete_word_forward();
    assert_eq!(e.text(), " beta gamma");
    e.end();
    e.yank();
    assert_eq!(e.text(), " beta gammaalpha");
    e.yank_pop();
    assert_eq!(e.text(), " beta gammabeta gamma");
    e.yank_pop();
    assert_eq!(e.text(), " beta gammaalpha");
}

#[test]
fn word_moves_and_jumps() {
    let mut e = typed("foo.bar baz");
    e.word_left();
    assert_eq!(e.cursor, 8);
    e.word_left();
    e.word_left();
    assert_eq!(e.cursor, 3);
    e.word_right();
    assert_eq!(e.cursor, 4);
    e.start_jump(words::Direction::Forward);
    assert!(e.end_jump(Some('z')));
    assert_eq!(e.cursor, 10);
    assert!(!e.end_jump(Some('f')));
}

#[test]
fn page_keys_move_by_lines_and_stop_at_the_ends() {
    let mut e = typed("a1\nb2\nc3\nd4");
    e.remember("history");
    e.move_lines(-2);
    e.insert("X");
    assert_eq!(e.text(), "a1\nb2X\nc3\nd4");
    e.move_lines(-5);
    assert_eq!(e.cursor, 2, "the column is kept where the line has it");
    e.move_lines(9);
    assert_eq!(e.text()[..e.cursor].lines().count(), 4);
}
