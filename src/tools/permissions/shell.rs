//! A `bash` command split into the simple commands it would run, with a real shell parser
//! (tree-sitter-bash, the grammar Codex uses): across `&&`, `||`, `;`, `|`, `&`, subshells,
//! `{ …; }`, `if`/`for`/`while`/`case` bodies, `$(…)`, backticks, `<(…)`, here-documents and
//! function bodies. Redirections become parts of their own: a redirection to a file is a write
//! of that file, one from a file a read. `bash -c '…'` and `sh -c '…'` with a literal script are
//! parsed in turn. What the parser cannot read, or a construct this module does not know, makes
//! the whole command [`Script::unparsable`], and the policy asks.

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

/// One word of a command: its value when the shell would pass it on unchanged (quotes
/// removed), or its source text when it holds an expansion (`$HOME`, `$(…)`, `{a,b}`), which
/// only a `*` in a rule may stand for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub literal: bool,
}

impl Word {
    fn literal(text: impl Into<String>) -> Word {
        Word { text: text.into(), literal: true }
    }
}

/// What a part of a command is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartKind {
    /// A simple command: `git log --oneline`. `words[0]` is the command name.
    Command,
    /// `name=value` on its own (`words` is the one assignment).
    Assignment,
    /// `export`, `declare`, `local`, `readonly`, `typeset`, `unset`: they change the
    /// environment the following commands run in.
    Declaration,
    /// `[[ … ]]`: a test, which runs nothing.
    Test,
    /// An output redirection to a file (`> f`, `>> f`, `&> f`, `<> f`); `words` is the target.
    Write,
    /// An input redirection from a file (`< f`); `words` is the source.
    Read,
}

/// One part of a command line, checked on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub kind: PartKind,
    /// `FOO=1` written before the command name.
    pub env: Vec<String>,
    pub words: Vec<Word>,
}

impl Part {
    /// The part as it would be written, for messages and for the rule the dialog offers.
    pub fn display(&self) -> String {
        let words = self.words.iter().map(|w| if w.literal { quote(&w.text) } else { w.text.clone() });
        let text = self.env.iter().cloned().chain(words).collect::<Vec<_>>().join(" ");
        match self.kind {
            PartKind::Write => format!("> {text}"),
            PartKind::Read => format!("< {text}"),
            PartKind::Command | PartKind::Assignment | PartKind::Declaration | PartKind::Test => text,
        }
    }

    /// The command name, when the part is a command with a literal one.
    pub fn name(&self) -> Option<&str> {
        match self.kind {
            PartKind::Command => self.words.first().filter(|w| w.literal).map(|w| w.text.as_str()),
            PartKind::Assignment | PartKind::Declaration | PartKind::Test | PartKind::Write | PartKind::Read => None,
        }
    }
}

/// A command line as the policy sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    pub parts: Vec<Part>,
    /// Why the command could not be split safely; when set, `parts` is not to be trusted.
    pub unparsable: Option<String>,
}

/// Quote a literal word for display only when the shell would need it.
pub fn quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^~*?[]{}".contains(c) || !c.is_ascii());
    if plain { text.to_string() } else { format!("'{}'", text.replace('\'', r"'\''")) }
}

thread_local! {
    // A parser per thread: building one costs more than parsing a command line.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Nesting of `bash -c '…'` inside `bash -c '…'` followed at most; deeper is unparsable.
const MAX_NESTED_SCRIPTS: usize = 3;

/// Split `command` into its parts.
pub fn parse(command: &str) -> Script {
    parse_nested(command, 0)
}

fn parse_nested(command: &str, depth: usize) -> Script {
    let tree = PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            // The grammar is compiled in; setting it fails only on an ABI mismatch between the
            // two crates, which the tests below would show.
            if parser.set_language(&tree_sitter_bash::LANGUAGE.into()).is_err() {
                return None;
            }
            *slot = Some(parser);
        }
        slot.as_mut().and_then(|p| p.parse(command, None))
    });
    let Some(tree) = tree else {
        return Script { parts: Vec::new(), unparsable: Some("the shell parser is not available".into()) };
    };
    let root = tree.root_node();
    let mut walker = Walker { src: command.as_bytes(), parts: Vec::new(), problem: None, depth };
    if root.has_error() {
        walker.problem = Some("it is not valid shell syntax".into());
    } else {
        walker.statement(root);
    }
    Script { parts: walker.parts, unparsable: walker.problem }
}

struct Walker<'s> {
    src: &'s [u8],
    parts: Vec<Part>,
    problem: Option<String>,
    depth: usize,
}

impl Walker<'_> {
    fn text(&self, node: Node) -> String {
        String::from_utf8_lossy(&self.src[node.byte_range()]).into_owned()
    }

    fn fail(&mut self, why: String) {
        if self.problem.is_none() {
            self.problem = Some(why);
        }
    }

    fn children(node: Node) -> Vec<Node> {
        let mut cursor = node.walk();
        node.children(&mut cursor).collect()
    }

    /// Anything that runs: recurse through structure, record commands.
    fn statement(&mut self, node: Node) {
        match node.kind() {
            "command" => self.command(node),
            "redirected_statement" => {
                let mut cursor = node.walk();
                let mut more = cursor.goto_first_child();
                while more {
                    let child = cursor.node();
                    match cursor.field_name() {
                        Some("redirect") => self.redirect(child),
                        _ if child.is_named() => self.statement(child),
                        _ => {}
                    }
                    more = cursor.goto_next_sibling();
                }
            }
            "variable_assignment" => {
                self.expressions(node);
                let text = self.text(node);
                let literal = !text.contains(['$', '`']);
                self.parts.push(Part {
                    kind: PartKind::Assignment,
                    env: Vec::new(),
                    words: vec![Word { text, literal }],
                });
            }
            "variable_assignments" => {
                for child in Self::children(node) {
                    self.statement(child);
                }
            }
            "declaration_command" | "unset_command" => {
                self.expressions(node);
                let words = Self::children(node)
                    .into_iter()
                    .map(|c| {
                        let text = self.text(c);
                        let literal = !text.contains(['$', '`']);
                        Word { text, literal }
                    })
                    .collect();
                self.parts.push(Part { kind: PartKind::Declaration, env: Vec::new(), words });
            }
            "test_command" => {
                self.expressions(node);
                self.parts.push(Part {
                    kind: PartKind::Test,
                    env: Vec::new(),
                    words: vec![Word::literal(self.text(node))],
                });
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => self.redirect(node),
            // Structure: what matters is inside.
            "program"
            | "list"
            | "pipeline"
            | "subshell"
            | "compound_statement"
            | "negated_command"
            | "if_statement"
            | "elif_clause"
            | "else_clause"
            | "while_statement"
            | "for_statement"
            | "c_style_for_statement"
            | "do_group"
            | "case_statement"
            | "case_item"
            | "function_definition" => {
                for child in Self::children(node) {
                    if child.is_named() {
                        self.statement(child);
                    }
                }
            }
            // Values inside statements (a `for` list, a `case` word, a condition, a function's
            // name): only their expansions run anything.
            "word"
            | "string"
            | "raw_string"
            | "number"
            | "concatenation"
            | "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "ansi_c_string"
            | "translated_string"
            | "variable_name"
            | "extglob_pattern"
            | "parenthesized_expression"
            | "binary_expression"
            | "unary_expression"
            | "ternary_expression"
            | "postfix_expression"
            | "brace_expression"
            | "array"
            | "regex"
            | "test_operator"
            | "subscript"
            | "special_variable_name"
            | "heredoc_body"
            | "comment" => self.expressions(node),
            other => self.fail(format!("it uses `{other}`, which cairn does not check")),
        }
    }

    /// Every command run by expansions inside `node` (`$(…)`, backticks, `<(…)`), recorded as
    /// parts of their own.
    fn expressions(&mut self, node: Node) {
        match node.kind() {
            "command_substitution" | "process_substitution" => {
                for child in Self::children(node) {
                    if child.is_named() {
                        self.statement(child);
                    }
                }
            }
            _ => {
                for child in Self::children(node) {
                    self.expressions(child);
                }
            }
        }
    }

    fn command(&mut self, node: Node) {
        let mut env = Vec::new();
        let mut words = Vec::new();
        for child in Self::children(node) {
            if !matches!(child.kind(), "file_redirect" | "heredoc_redirect" | "herestring_redirect") {
                self.expressions(child);
            }
            match child.kind() {
                "variable_assignment" => env.push(self.text(child)),
                "command_name" => {
                    let inner = child.named_child(0).unwrap_or(child);
                    words.push(self.word(inner));
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => self.redirect(child),
                "comment" => {}
                _ if child.is_named() => words.push(self.word(child)),
                _ => {}
            }
        }
        if let Some(inner) = self.nested_script(&words) {
            if self.depth >= MAX_NESTED_SCRIPTS {
                self.fail("it nests `bash -c` too deeply".into());
                return;
            }
            let script = parse_nested(&inner, self.depth + 1);
            if let Some(why) = script.unparsable {
                self.fail(format!("its inner script: {why}"));
            }
            self.parts.extend(script.parts);
            return;
        }
        self.parts.push(Part { kind: PartKind::Command, env, words });
    }

    /// `bash -c 'script'`, `sh -c …`: the literal script, to be checked instead of the shell.
    fn nested_script(&self, words: &[Word]) -> Option<String> {
        let name = words.first().filter(|w| w.literal)?.text.as_str();
        if !matches!(name, "bash" | "sh" | "dash" | "zsh" | "/bin/bash" | "/bin/sh" | "/usr/bin/bash") {
            return None;
        }
        let mut rest = words[1..].iter();
        loop {
            let w = rest.next()?;
            if !w.literal {
                return None;
            }
            match w.text.as_str() {
                // Login and error flags do not change what runs.
                "-l" | "-e" | "-x" | "-u" | "--login" | "-eu" | "-ex" | "-lc" | "-ec" | "-c" => {
                    if w.text.ends_with('c') {
                        let script = rest.next().filter(|w| w.literal)?;
                        // Words after the script are its $0, $1…: fine.
                        return Some(script.text.clone());
                    }
                }
                _ => return None,
            }
        }
    }

    fn redirect(&mut self, node: Node) {
        match node.kind() {
            "file_redirect" => {
                self.expressions(node);
                let op =
                    Self::children(node).into_iter().find(|c| !c.is_named()).map(|c| self.text(c)).unwrap_or_default();
                let Some(dest) = node.child_by_field_name("destination") else {
                    self.fail("a redirection has no target".into());
                    return;
                };
                let target = self.word(dest);
                let kind = match op.as_str() {
                    ">" | ">>" | ">|" | "&>" | "&>>" | "<>" => PartKind::Write,
                    // `>&2`, `2>&1`, `<&0`, `>&-`: descriptors, not files.
                    ">&" | "<&" | ">&-" | "<&-" if is_descriptor(&target) => return,
                    ">&" => PartKind::Write,
                    "<" => PartKind::Read,
                    other => {
                        self.fail(format!("it uses the redirection `{other}`, which cairn does not check"));
                        return;
                    }
                };
                if target.literal && is_harmless_device(&target.text) {
                    return;
                }
                self.parts.push(Part { kind, env: Vec::new(), words: vec![target] });
            }
            "heredoc_redirect" => {
                // A here-document's own body is input; a redirection chained to it is not.
                for child in Self::children(node) {
                    if child.kind() == "file_redirect" {
                        self.redirect(child);
                    } else {
                        self.expressions(child);
                    }
                }
            }
            // `<<< word`: input from a string; only its expansions run anything.
            _ => self.expressions(node),
        }
    }

    /// A word's value, when the shell passes it on unchanged.
    fn word(&mut self, node: Node) -> Word {
        let source = self.text(node);
        match literal_value(node, self.src) {
            Some(text) => Word { text, literal: true },
            None => Word { text: source, literal: false },
        }
    }
}

fn is_descriptor(target: &Word) -> bool {
    target.literal && (target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()))
}

/// Targets a redirection may name without writing any file.
fn is_harmless_device(path: &str) -> bool {
    matches!(path, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty") || path.starts_with("/dev/fd/")
}

/// The value of a word the shell passes on unchanged, or `None` when it expands something.
fn literal_value(node: Node, src: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(&src[node.byte_range()]).ok()?;
    match node.kind() {
        "word" | "number" => {
            if text.contains(['$', '`']) {
                return None;
            }
            Some(unescape_unquoted(text))
        }
        "raw_string" => Some(text.strip_prefix('\'')?.strip_suffix('\'')?.to_string()),
        "string" => {
            let mut out = String::new();
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                match child.kind() {
                    "\"" => {}
                    "string_content" => {
                        out.push_str(&unescape_double_quoted(std::str::from_utf8(&src[child.byte_range()]).ok()?))
                    }
                    _ => return None,
                }
            }
            Some(out)
        }
        "concatenation" => {
            let mut cursor = node.walk();
            let children: Vec<Node> = node.children(&mut cursor).collect();
            // `{a,b}` and `{1..3}` become several words in bash.
            let texts: Vec<&str> =
                children.iter().filter_map(|c| std::str::from_utf8(&src[c.byte_range()]).ok()).collect();
            if let Some(open) = texts.iter().position(|t| *t == "{")
                && texts[open..].contains(&"}")
                && texts[open..].iter().any(|t| t.contains(',') || t.contains(".."))
            {
                return None;
            }
            let mut out = String::new();
            for child in children {
                out.push_str(&literal_value(child, src)?);
            }
            Some(out)
        }
        _ => None,
    }
}

fn unescape_unquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape_double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '$' | '`' | '"' | '\\' | '\n')
        {
            chars.next();
            if next != '\n' {
                out.push(next);
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
