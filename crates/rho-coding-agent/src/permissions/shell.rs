//! What a shell command does, read from bash's syntax tree (tree-sitter-bash) rather than its
//! text: every simple command anywhere in it (in pipelines and lists, compound commands, function
//! bodies, subshells, command and process substitutions, heredocs, and the scripts that
//! `bash -c`, `eval` and the like run, parsed in turn), with quotes removed and wrappers peeled,
//! and every file it redirects output to. What the parser cannot account for (a command name that
//! is not a literal word, an error in the syntax, a script nested too deep) is flagged: such a
//! command may still be refused by the literal parts, but never allowed as a whole.

mod words;
mod wrappers;

#[cfg(test)]
mod tests;

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

use wrappers::View;
pub use wrappers::basename;

/// A word's value: `None` when it expands (a variable, a substitution, a glob).
pub type Word = Option<String>;

/// How deep scripts inside scripts (`bash -c "eval '…'"`) are followed.
const MAX_DEPTH: usize = 8;

/// A parsed command line.
#[derive(Debug, Default)]
pub struct Script {
    pub commands: Vec<SimpleCommand>,
    /// Files written by redirections (`>`, `>>`, `&>`, `>|`, `<>`), as written (`~` unexpanded).
    pub writes: Vec<String>,
    /// Files read by redirections (`<`, `<>`).
    pub reads: Vec<String>,
    /// Something could not be accounted for.
    pub unaccounted: bool,
}

/// One simple command.
#[derive(Debug)]
pub struct SimpleCommand {
    /// Its words as written, then after each wrapper (`sudo rm x` → `sudo rm x`, `rm x`).
    pub views: Vec<View>,
    /// False when it only runs a literal script whose commands are judged instead.
    pub needs_allow: bool,
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses `command`.
pub fn parse(command: &str) -> Script {
    let mut script = Script::default();
    let mut changes_directory = false;
    parse_into(command, 0, &mut script, &mut changes_directory);
    if changes_directory && script.writes.iter().any(|target| !target.starts_with(['/', '~'])) {
        script.unaccounted = true;
    }
    script
}

/// The words of a rule's command (`npm run "test"` → `npm`, `run`, `test`), if it is one simple
/// command of literal words.
pub fn rule_words(text: &str) -> Option<Vec<String>> {
    let script = parse(text);
    match script.commands.as_slice() {
        [command] if !script.unaccounted && script.writes.is_empty() => {
            command.views[0].words.iter().cloned().collect()
        }
        _ => None,
    }
}

fn parse_into(source: &str, depth: usize, script: &mut Script, changes_directory: &mut bool) {
    if depth > MAX_DEPTH {
        script.unaccounted = true;
        return;
    }
    let tree = PARSER.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.is_none() {
            let mut parser = Parser::new();
            if parser.set_language(&tree_sitter_bash::LANGUAGE.into()).is_ok() {
                *cell = Some(parser);
            }
        }
        cell.as_mut().and_then(|parser| parser.parse(source, None))
    });
    let Some(tree) = tree else {
        script.unaccounted = true;
        return;
    };
    let mut walker = Walker { source, depth, script, changes_directory };
    walker.walk(tree.root_node());
    // The grammar takes a backslash-newline for a space where bash joins the two sides (`r\⏎m`
    // is `rm`): such a command is also read joined, and cannot be allowed.
    if glued_continuation(source) {
        script.unaccounted = true;
        let joined = source.replace("\\\n", "");
        if !glued_continuation(&joined) {
            parse_into(&joined, depth + 1, script, changes_directory);
        }
    }
}

/// Whether a backslash-newline joins two non-blank characters.
fn glued_continuation(source: &str) -> bool {
    source.match_indices("\\\n").any(|(at, _)| {
        let before = source[..at].chars().next_back().is_some_and(|c| !c.is_whitespace());
        let after = source[at + 2..].chars().next().is_some_and(|c| !c.is_whitespace());
        before && after
    })
}

struct Walker<'s, 'o> {
    source: &'s str,
    depth: usize,
    script: &'o mut Script,
    changes_directory: &'o mut bool,
}

impl Walker<'_, '_> {
    /// Visits every node of the tree, parents before children, in order; with a stack of its
    /// own, so a command nested a hundred thousand deep costs memory, not the thread's stack.
    fn walk(&mut self, root: Node<'_>) {
        let mut stack = vec![root];
        let mut children = Vec::new();
        while let Some(node) = stack.pop() {
            self.visit(node);
            let mut cursor = node.walk();
            children.extend(node.children(&mut cursor));
            stack.extend(children.drain(..).rev());
        }
    }

    fn visit(&mut self, node: Node<'_>) {
        if node.is_error() || node.is_missing() {
            self.script.unaccounted = true;
        }
        match node.kind() {
            "command" => {
                self.command(node);
                if node.parent().is_none_or(|p| p.kind() != "redirected_statement") {
                    self.stdin_script(node, node);
                }
            }
            "declaration_command" | "unset_command" => self.declaration(node),
            "variable_assignment" => self.assignment(node),
            "file_redirect" => self.redirect(node),
            "redirected_statement" => {
                if let Some(body) = node.child_by_field_name("body").filter(|b| b.kind() == "command") {
                    self.stdin_script(body, node);
                }
            }
            // A name the grammar could not fit into a command (`{rm,x}`).
            "command_name" if node.parent().is_none_or(|p| p.kind() != "command") => {
                let name = node.named_child(0).and_then(|n| self.literal(n));
                self.simple(vec![name]);
            }
            "for_statement" => {
                let variable = node.child_by_field_name("variable");
                let name = variable.and_then(|v| v.utf8_text(self.source.as_bytes()).ok()).unwrap_or_default();
                self.script.unaccounted |= !wrappers::harmless_variable(name);
            }
            _ => {}
        }
    }

    fn literal(&self, node: Node<'_>) -> Word {
        words::literal(node, self.source)
    }

    fn command(&mut self, node: Node<'_>) {
        let words = self.command_words(node);
        self.simple(words);
    }

    /// A `command` node's name and arguments.
    fn command_words(&self, node: Node<'_>) -> Vec<Word> {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        let mut more = cursor.goto_first_child();
        while more {
            match cursor.field_name() {
                Some("name") => words.push(cursor.node().named_child(0).and_then(|name| self.literal(name))),
                Some("argument") => words.push(self.literal(cursor.node())),
                _ => {}
            }
            more = cursor.goto_next_sibling();
        }
        words
    }

    /// Judges one simple command's words and follows what it runs.
    fn simple(&mut self, words: Vec<Word>) {
        if words.is_empty() {
            return;
        }
        let unwrapped = wrappers::unwrap(&words);
        self.script.unaccounted |= unwrapped.uncertain;
        *self.changes_directory |= unwrapped.changes_directory;
        for nested in unwrapped.scripts {
            match nested {
                Some(text) => parse_into(&text, self.depth + 1, self.script, self.changes_directory),
                None => self.script.unaccounted = true,
            }
        }
        self.script.commands.push(SimpleCommand { views: unwrapped.views, needs_allow: unwrapped.needs_allow });
        for command in unwrapped.commands {
            self.simple(command);
        }
    }

    /// `export A=1`, `declare -x B`, `unset C`: judged as commands by their keyword; a variable
    /// that can change what programs do, or a name reference (`-n`), cannot be accounted for.
    fn declaration(&mut self, node: Node<'_>) {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            let text = child.utf8_text(self.source.as_bytes()).unwrap_or_default();
            match child.kind() {
                "variable_name" => {
                    self.script.unaccounted |= !wrappers::harmless_variable(text);
                    words.push(Some(text.to_owned()));
                }
                "variable_assignment" => words.push(Some(text.to_owned())),
                _ if !child.is_named() && words.is_empty() => words.push(Some(text.to_owned())),
                _ if child.is_named() => {
                    let word = self.literal(child);
                    let is_option = word.as_deref().is_some_and(|w| w.starts_with(['-', '+']));
                    self.script.unaccounted |=
                        word.is_none() || (is_option && word.as_deref().unwrap_or_default().contains('n'));
                    words.push(word);
                }
                _ => {}
            }
        }
        self.simple(words);
    }

    /// `NAME=value` anywhere (before a command, alone, in a declaration): its name must not
    /// change what programs load or run.
    fn assignment(&mut self, node: Node<'_>) {
        let name = node.child_by_field_name("name").and_then(|n| n.utf8_text(self.source.as_bytes()).ok());
        match name {
            Some(name) if node.child_by_field_name("name").is_some_and(|n| n.kind() == "variable_name") => {
                self.script.unaccounted |= !wrappers::harmless_variable(name);
            }
            _ => self.script.unaccounted = true,
        }
    }

    /// A redirection: output to a file is a write, `<` a read; descriptors (`2>&1`) and
    /// `/dev/null` are neither.
    fn redirect(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let operator = node
            .children(&mut cursor)
            .find(|c| !c.is_named())
            .and_then(|c| c.utf8_text(self.source.as_bytes()).ok())
            .unwrap_or_default()
            .to_owned();
        let Some(destination) = node.child_by_field_name("destination") else {
            self.script.unaccounted = true;
            return;
        };
        let target = self.literal(destination);
        let writes = matches!(operator.as_str(), ">" | ">>" | "&>" | "&>>" | ">|" | "<>" | ">&" | "&>|");
        let reads = matches!(operator.as_str(), "<" | "<>");
        match target {
            Some(target)
                if operator.ends_with('&') && (target == "-" || target.chars().all(|c| c.is_ascii_digit())) => {}
            Some(target) if operator == "<&" => {
                self.script.unaccounted |= !(target == "-" || target.chars().all(|c| c.is_ascii_digit()));
            }
            Some(target) => {
                let harmless = matches!(target.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr")
                    || target.strip_prefix("/dev/fd/").is_some_and(|fd| fd.chars().all(|c| c.is_ascii_digit()));
                if writes && !harmless {
                    self.script.writes.push(target.clone());
                }
                if reads {
                    self.script.reads.push(target);
                }
                self.script.unaccounted |= !writes && !reads;
            }
            None => self.script.unaccounted |= !reads,
        }
    }

    /// A shell fed its script on standard input (`bash <<EOF … EOF`, `sh <<< '…'`): the script
    /// is parsed when it is literal.
    fn stdin_script(&mut self, body: Node<'_>, node: Node<'_>) {
        let words = self.command_words(body);
        if !wrappers::unwrap(&words).reads_script_from_stdin {
            return;
        }
        let mut fed = false;
        for holder in [body, node] {
            let mut cursor = holder.walk();
            for redirect in holder.children(&mut cursor) {
                let text = match redirect.kind() {
                    "heredoc_redirect" => self.heredoc(redirect),
                    "herestring_redirect" => redirect.named_child(0).and_then(|w| self.literal(w)),
                    _ => continue,
                };
                fed = true;
                match text {
                    Some(text) => parse_into(&text, self.depth + 1, self.script, self.changes_directory),
                    None => self.script.unaccounted = true,
                }
            }
            if body == node {
                break;
            }
        }
        self.script.unaccounted |= !fed;
    }

    /// A heredoc's text, if nothing in it expands.
    fn heredoc(&self, node: Node<'_>) -> Option<String> {
        let mut cursor = node.walk();
        let mut children = node.children(&mut cursor);
        let start = children.find(|c| c.kind() == "heredoc_start")?;
        let body = children.find(|c| c.kind() == "heredoc_body")?;
        let text = body.utf8_text(self.source.as_bytes()).ok()?;
        let quoted = start.utf8_text(self.source.as_bytes()).ok()?.contains(['\'', '"', '\\']);
        (quoted || !text.contains(['$', '`', '\\'])).then(|| text.to_owned())
    }
}
