//! A `bash` command split into the simple commands it would run, with a real shell parser
//! (tree-sitter-bash, the grammar Codex uses): across `&&`, `||`, `;`, `|`, `&`, subshells,
//! `{ …; }`, `if`/`for`/`while`/`case` bodies, `$(…)`, backticks, `<(…)`, here-documents and
//! function bodies. Redirections become parts of their own: a redirection to a file is a write
//! of that file, one from a file a read. `bash -c '…'` and `sh -c '…'` with a literal script are
//! parsed in turn. Places where bash evaluates text as arithmetic or as a variable name (where
//! `a[$(cmd)]` runs `cmd`) become parts of their own, [`PartKind::Evaluation`]. What the parser
//! cannot read, a construct this module does not know, or nesting deeper than
//! [`MAX_DEPTH`] makes the whole command [`Script::unparsable`].
//!
//! Word values (quotes, `$'…'`, braces, `~`) are computed by [`super::words`] from each word's
//! own text.

use std::cell::RefCell;

use tree_sitter::{Node, Parser, Tree};

pub use super::words::Word;
use super::words::words_of;

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
    /// Text bash evaluates when it runs (`$((x))`, `${!x}`, `a[$i]`, `[[ $x -eq 1 ]]`): a
    /// variable holding `a[$(cmd)]` runs `cmd` there. `words` is the source.
    Evaluation,
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
    pub fn command(words: Vec<Word>) -> Part {
        Part { kind: PartKind::Command, env: Vec::new(), words }
    }

    /// The part as it would be written, for messages and for the rule the dialog offers.
    pub fn display(&self) -> String {
        let words = self.words.iter().map(|w| if w.is_plain() { quote(&w.text) } else { w.text.clone() });
        let text = self.env.iter().cloned().chain(words).collect::<Vec<_>>().join(" ");
        match self.kind {
            PartKind::Write => format!("> {text}"),
            PartKind::Read => format!("< {text}"),
            PartKind::Command
            | PartKind::Assignment
            | PartKind::Declaration
            | PartKind::Test
            | PartKind::Evaluation => text,
        }
    }

    /// The command name, when the part is a command with a literal one.
    pub fn name(&self) -> Option<&str> {
        match self.kind {
            PartKind::Command => self.words.first().filter(|w| w.is_plain()).map(|w| w.text.as_str()),
            PartKind::Assignment
            | PartKind::Declaration
            | PartKind::Test
            | PartKind::Write
            | PartKind::Read
            | PartKind::Evaluation => None,
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
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c) || !c.is_ascii());
    if plain { text.to_string() } else { format!("'{}'", text.replace('\'', r"'\''")) }
}

thread_local! {
    // A parser per thread: building one costs more than parsing a command line.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Nesting of `bash -c '…'` inside `bash -c '…'` followed at most; deeper is unparsable.
pub const MAX_NESTED_SCRIPTS: usize = 3;

/// Levels of the syntax tree followed at most: `((((…))))` or `$($($(…)))` nested deeper is
/// refused as unparsable rather than walked (the walk recurses; 10,000 levels would overflow
/// the stack). Real command lines stay far below it.
pub const MAX_DEPTH: usize = 200;

/// Split `command` into its parts.
pub fn parse(command: &str) -> Script {
    parse_nested(command, 0)
}

/// Split a script found inside another command (`bash -c '…'`, `env -S '…'`, a git alias) at
/// nesting level `depth`; deeper than [`MAX_NESTED_SCRIPTS`] is unparsable.
pub fn parse_nested(command: &str, depth: usize) -> Script {
    if depth > MAX_NESTED_SCRIPTS {
        return unparsable(format!("it nests shells more than {MAX_NESTED_SCRIPTS} deep"));
    }
    let Some(tree) = parse_tree(command) else {
        return unparsable("the shell parser is not available".into());
    };
    let root = tree.root_node();
    if root.has_error() {
        return unparsable("it is not valid shell syntax as cairn reads it".into());
    }
    if deeper_than(&tree, MAX_DEPTH) {
        return unparsable(format!("it nests more than {MAX_DEPTH} levels deep"));
    }
    let mut walker = Walker { src: command.as_bytes(), parts: Vec::new(), problem: None, depth };
    walker.statement(root);
    Script { parts: walker.parts, unparsable: walker.problem }
}

fn unparsable(why: String) -> Script {
    Script { parts: Vec::new(), unparsable: Some(why) }
}

fn parse_tree(command: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            // The grammar is compiled in; setting it fails only on an ABI mismatch between the
            // two crates, which the tests would show.
            parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
            *slot = Some(parser);
        }
        slot.as_mut().and_then(|p| p.parse(command, None))
    })
}

/// Whether the tree is deeper than `limit`, found without recursion.
fn deeper_than(tree: &Tree, limit: usize) -> bool {
    let mut cursor = tree.walk();
    let mut depth = 0;
    loop {
        if cursor.goto_first_child() {
            depth += 1;
            if depth > limit {
                return true;
            }
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return false;
            }
            depth -= 1;
        }
    }
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

    fn evaluation(&mut self, node: Node) {
        let text = self.text(node);
        self.parts.push(Part { kind: PartKind::Evaluation, env: Vec::new(), words: vec![Word::dynamic(text)] });
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
                    words: vec![Word { text, literal, pattern: None }],
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
                        Word { text, literal, pattern: None }
                    })
                    .collect();
                self.parts.push(Part { kind: PartKind::Declaration, env: Vec::new(), words });
            }
            "test_command" => {
                self.expressions(node);
                if self.test_evaluates(node) {
                    self.evaluation(node);
                }
                self.parts.push(Part {
                    kind: PartKind::Test,
                    env: Vec::new(),
                    words: vec![Word::literal(self.text(node))],
                });
            }
            // `((…))` and `for ((…))`: arithmetic, which evaluates the variables it names.
            "compound_statement" if node.child(0).is_some_and(|c| c.kind() == "((") => {
                if !is_plain_arithmetic(&self.text(node)) {
                    self.evaluation(node);
                }
                self.expressions(node);
            }
            "c_style_for_statement" => {
                self.evaluation(node);
                for child in Self::children(node) {
                    if child.kind() == "do_group" || child.kind() == "compound_statement" {
                        self.statement(child);
                    } else {
                        self.expressions(child);
                    }
                }
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
    /// parts of their own, and every place bash evaluates text (arithmetic, subscripts,
    /// indirection) as an [`PartKind::Evaluation`].
    fn expressions(&mut self, node: Node) {
        match node.kind() {
            "command_substitution" | "process_substitution" => {
                for child in Self::children(node) {
                    if child.is_named() {
                        self.statement(child);
                    }
                }
                return;
            }
            "arithmetic_expansion" if !is_plain_arithmetic(&self.text(node)) => self.evaluation(node),
            "expansion" if !is_plain_expansion(&self.text(node)) => self.evaluation(node),
            "subscript" if !self.plain_subscript(node) => self.evaluation(node),
            _ => {}
        }
        for child in Self::children(node) {
            self.expressions(child);
        }
    }

    /// `a[0]`, `a[@]`: an index that is a plain number (or all elements) evaluates nothing.
    fn plain_subscript(&self, node: Node) -> bool {
        let text = self.text(node);
        let index = text.split_once('[').and_then(|(_, rest)| rest.strip_suffix(']')).unwrap_or("");
        index == "@" || index == "*" || (!index.is_empty() && index.chars().all(|c| c.is_ascii_digit()))
    }

    /// `[[ … ]]` evaluates the operands of `-eq`, `-lt`, … as arithmetic, and `-v`/`-R` names.
    fn test_evaluates(&self, node: Node) -> bool {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n.kind() == "test_operator" {
                let op = self.text(n);
                if matches!(op.as_str(), "-v" | "-R") {
                    return true;
                }
                if matches!(op.as_str(), "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge")
                    && let Some(parent) = n.parent()
                    && Self::children(parent).into_iter().filter(|c| c.is_named() && c.id() != n.id()).any(|c| {
                        let t = self.text(c);
                        t.is_empty() || !t.trim_start_matches('-').chars().all(|ch| ch.is_ascii_digit())
                    })
                {
                    return true;
                }
            }
            stack.extend(Self::children(n));
        }
        false
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
                    words.extend(words_of(&self.text(inner)));
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => self.redirect(child),
                "comment" => {}
                _ if child.is_named() => words.extend(words_of(&self.text(child))),
                _ => {}
            }
        }
        if env.is_empty()
            && let Some(inner) = nested_script(&words)
        {
            let script = parse_nested(&inner, self.depth + 1);
            if let Some(why) = script.unparsable {
                self.fail(format!("its inner script: {why}"));
            }
            self.parts.extend(script.parts);
            return;
        }
        self.parts.push(Part { kind: PartKind::Command, env, words });
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
                let targets = words_of(&self.text(dest));
                // `> {a,b}` is an "ambiguous redirect" in bash: nothing is written.
                let [target] = targets.as_slice() else {
                    self.fail("a redirection names several files".into());
                    return;
                };
                let target = target.clone();
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
                if target.is_plain() && is_harmless_device(&target.text) {
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
}

/// The shells whose `-c SCRIPT` is parsed in turn.
pub const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "rbash"];

/// `bash -c 'script'`, `sh -c …` with only options that change nothing about what runs: the
/// literal script, to be checked instead of the shell.
pub fn nested_script(words: &[Word]) -> Option<String> {
    let name = words.first().filter(|w| w.is_plain())?.text.as_str();
    if !SHELLS.contains(&program_base(name)) {
        return None;
    }
    let mut rest = words[1..].iter();
    let mut has_c = false;
    let mut options_done = false;
    loop {
        let w = rest.next()?;
        if !w.is_plain() {
            return None;
        }
        let text = w.text.as_str();
        if options_done || !text.starts_with(['-', '+']) || text == "-" {
            // The first word after the options is the script when `-c` was given; the words
            // after it are its $0, $1…: fine.
            return has_c.then(|| text.to_string());
        }
        match text {
            "--" => options_done = true,
            "--norc" | "--noprofile" | "--posix" => {}
            "-o" | "+o" => match rest.next().map(|w| w.text.as_str()) {
                Some("pipefail" | "errexit" | "nounset" | "xtrace" | "verbose" | "noglob" | "noclobber") => {}
                _ => return None,
            },
            short if !short.starts_with("--") => {
                // Errors, unset variables, tracing and pipefail change nothing about what runs.
                for flag in short[1..].chars() {
                    match flag {
                        'c' => has_c = true,
                        // A login shell reads the user's own profile, no project file.
                        'e' | 'u' | 'x' | 'v' | 'f' | 'h' | 'l' | 'B' | 'C' | 'H' | 'P' | 'T' => {}
                        _ => return None,
                    }
                }
            }
            _ => return None,
        }
    }
}

/// The program a command name runs, as far as its name tells: `/usr/bin/rm` and `rm` are both
/// `rm`.
pub fn program_base(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// `$((1 + 2))`, `((3 > 2))`: arithmetic of numbers only evaluates no variable.
fn is_plain_arithmetic(text: &str) -> bool {
    let inner = text.trim_start_matches('$').trim_start_matches(['(', '[']).trim_end_matches([')', ']']);
    inner.chars().all(|c| c.is_ascii_digit() || c.is_whitespace() || "+-*/%()<>=!&|^~?:,".contains(c))
}

/// `${name}`, `${name:-word}`, `${#name}`, `${name%pat}`, `${name/a/b}`, `${name^^}`: forms
/// that expand a variable without evaluating its value. Indirection (`${!x}`), subscripts,
/// substrings with a computed offset, `@` transformations (`${x@P}` runs prompt expansion) and
/// assignments (`${x:=…}`) are not.
fn is_plain_expansion(text: &str) -> bool {
    let Some(inner) = text.strip_prefix("${").and_then(|t| t.strip_suffix('}')) else { return false };
    let inner = inner.strip_prefix('#').filter(|rest| !rest.is_empty()).unwrap_or(inner);
    let name_len = if inner.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(inner.len())
    } else if inner.starts_with(|c: char| c.is_ascii_digit()) {
        inner.find(|c: char| !c.is_ascii_digit()).unwrap_or(inner.len())
    } else if inner.starts_with(['@', '*', '#', '?', '$', '-']) {
        1
    } else {
        return false;
    };
    let mut rest = &inner[name_len..];
    // `${a[0]}`, `${a[@]}`: an index that evaluates nothing.
    if let Some(index) = rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
        let (i, after) = index;
        if !(i == "@" || i == "*" || (!i.is_empty() && i.chars().all(|c| c.is_ascii_digit()))) {
            return false;
        }
        rest = after;
    }
    if rest.is_empty() {
        return true;
    }
    const OPERATORS: &[&str] =
        &[":-", ":+", ":?", "-", "+", "?", "##", "#", "%%", "%", "//", "/#", "/%", "/", "^^", "^", ",,", ","];
    if OPERATORS.iter().any(|op| rest.starts_with(op)) {
        return true;
    }
    // `${x:2}`, `${x:1:3}`, `${x: -2}`: numeric offsets only.
    rest.strip_prefix(':').is_some_and(|range| {
        range.split(':').all(|n| {
            let n = n.trim().trim_start_matches('-');
            !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())
        })
    })
}

fn is_descriptor(target: &Word) -> bool {
    target.is_plain() && (target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()))
}

/// Targets a redirection may name without writing any file.
fn is_harmless_device(path: &str) -> bool {
    matches!(path, "/dev/null" | "/dev/stdout" | "/dev/stderr")
        || path.strip_prefix("/dev/fd/").is_some_and(|fd| matches!(fd, "1" | "2"))
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
