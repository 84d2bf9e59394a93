//! The value of one shell word, computed the way bash computes it before a command runs: quotes
//! removed (`'…'`, `"…"`, `\x`), ANSI-C strings decoded (`$'\x72m'` is `rm`), brace expansion
//! (`{a,b}` and `{1..3}` become several words), tilde expansion (`~`, `~user`, `~+`) — and what
//! is left for run time marked: a parameter, command or arithmetic expansion makes the word
//! unknown; an unquoted `*`, `?` or `[…]` makes it a pattern bash matches against files.
//!
//! The parser (tree-sitter-bash) says where a word starts and ends; this module reads the
//! word's own text, so the value does not depend on how the grammar splits a word into nodes.

use std::path::{Path, PathBuf};

/// One word of a command: its value when bash would pass it on unchanged (quotes removed),
/// or its source text when it holds an expansion (`$HOME`, `$(…)`), which only a `*` in a rule
/// may stand for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub literal: bool,
    /// A pattern bash expands against the files (an unquoted `*`, `?` or `[`): the value with
    /// its quoted special characters escaped by `\`, for matching. `text` is the value as
    /// written without quotes.
    pub pattern: Option<String>,
}

impl Word {
    pub fn literal(text: impl Into<String>) -> Word {
        Word { text: text.into(), literal: true, pattern: None }
    }

    pub fn dynamic(source: impl Into<String>) -> Word {
        Word { text: source.into(), literal: false, pattern: None }
    }

    /// A literal word that bash passes on as written (no pattern to expand).
    pub fn is_plain(&self) -> bool {
        self.literal && self.pattern.is_none()
    }
}

/// A character of a word's value, and whether quoting made it ordinary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ch {
    c: char,
    quoted: bool,
}

/// Brace expansion makes at most this many words of one; more is not analysed.
const MAX_BRACE_WORDS: usize = 256;

/// The words bash makes of `source` (one word as the parser delimited it): several when it
/// has braces to expand, one unknown word when anything in it expands at run time.
pub fn words_of(source: &str) -> Vec<Word> {
    let Some(chars) = lex(source) else { return vec![Word::dynamic(source)] };
    let mut expanded = Vec::new();
    if !expand_braces(chars, &mut expanded) {
        return vec![Word::dynamic(source)];
    }
    expanded.into_iter().map(|chars| finish(chars, source)).collect()
}

/// The characters of the word's value, or `None` when something in it expands at run time.
fn lex(source: &str) -> Option<Vec<Ch>> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    let plain = |c: char| Ch { c, quoted: false };
    let quoted = |c: char| Ch { c, quoted: true };
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                match chars.get(i + 1) {
                    Some('\n') => {}
                    Some(&next) => out.push(quoted(next)),
                    None => out.push(quoted('\\')),
                }
                i += 2;
            }
            '\'' => {
                let close = chars[i + 1..].iter().position(|&c| c == '\'')? + i + 1;
                out.extend(chars[i + 1..close].iter().map(|&c| quoted(c)));
                i = close + 1;
            }
            '"' => {
                i += 1;
                loop {
                    match *chars.get(i)? {
                        '"' => break,
                        '$' | '`' => return None,
                        '\\' => match chars.get(i + 1) {
                            Some('$' | '`' | '"' | '\\') => {
                                out.push(quoted(chars[i + 1]));
                                i += 1;
                            }
                            Some('\n') => i += 1,
                            _ => out.push(quoted('\\')),
                        },
                        c => out.push(quoted(c)),
                    }
                    i += 1;
                }
                i += 1;
            }
            '$' if chars.get(i + 1) == Some(&'\'') => {
                i = ansi_c(&chars, i + 2, &mut out)?;
            }
            // A lone `$` at the end of a word is itself; anything else after it expands.
            '$' if i + 1 == chars.len() => {
                out.push(plain('$'));
                i += 1;
            }
            '$' | '`' => return None,
            '<' | '>' if chars.get(i + 1) == Some(&'(') => return None,
            c => {
                out.push(plain(c));
                i += 1;
            }
        }
    }
    Some(out)
}

/// Decode `$'…'` from `start` (just after the opening quote); the index after its closing
/// quote. A NUL ends the string, as in bash.
fn ansi_c(chars: &[char], start: usize, out: &mut Vec<Ch>) -> Option<usize> {
    let mut i = start;
    let mut ended = false;
    let mut push = |c: char, ended: &mut bool| {
        if c == '\0' {
            *ended = true;
        }
        if !*ended {
            out.push(Ch { c, quoted: true });
        }
    };
    loop {
        let c = *chars.get(i)?;
        i += 1;
        match c {
            '\'' => return Some(i),
            '\\' => {
                let e = *chars.get(i)?;
                i += 1;
                let decoded = match e {
                    'a' => '\x07',
                    'b' => '\x08',
                    'e' | 'E' => '\x1b',
                    'f' => '\x0c',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'v' => '\x0b',
                    '\\' | '\'' | '"' | '?' => e,
                    'c' => {
                        let control = *chars.get(i)?;
                        i += 1;
                        char::from_u32(control.to_ascii_uppercase() as u32 ^ 0x40).unwrap_or('?')
                    }
                    '0'..='7' => {
                        let (value, used) = number(&chars[i - 1..], 8, 3);
                        i += used - 1;
                        char::from_u32(value & 0xff).unwrap_or('?')
                    }
                    'x' | 'u' | 'U' => {
                        let width = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let (value, used) = number(&chars[i..], 16, width);
                        if used == 0 {
                            push('\\', &mut ended);
                            e
                        } else {
                            i += used;
                            char::from_u32(value).unwrap_or('\u{fffd}')
                        }
                    }
                    other => {
                        push('\\', &mut ended);
                        other
                    }
                };
                push(decoded, &mut ended);
            }
            other => push(other, &mut ended),
        }
    }
}

/// Up to `width` digits of `radix` at the start of `chars`: their value and how many.
fn number(chars: &[char], radix: u32, width: usize) -> (u32, usize) {
    let mut value: u32 = 0;
    let mut used = 0;
    for c in chars.iter().take(width) {
        match c.to_digit(radix) {
            Some(d) => {
                value = value.saturating_mul(radix).saturating_add(d);
                used += 1;
            }
            None => break,
        }
    }
    (value, used)
}

/// Brace expansion as bash does it, left to right: `{a,b}` (with at least one unquoted comma
/// at its level) and `{x..y[..step]}` of numbers or single letters. False when it would make
/// more than [`MAX_BRACE_WORDS`] words.
fn expand_braces(word: Vec<Ch>, out: &mut Vec<Vec<Ch>>) -> bool {
    let mut from = 0;
    loop {
        let Some(open) = (from..word.len()).find(|&i| word[i].c == '{' && !word[i].quoted) else {
            out.push(word);
            return out.len() <= MAX_BRACE_WORDS;
        };
        let Some((close, commas)) = matching_brace(&word, open) else {
            out.push(word);
            return out.len() <= MAX_BRACE_WORDS;
        };
        let alternatives: Vec<Vec<Ch>> = if commas.is_empty() {
            match sequence(&word[open + 1..close]) {
                Some(items) => items.into_iter().map(|s| s.chars().map(|c| Ch { c, quoted: true }).collect()).collect(),
                None => {
                    from = open + 1;
                    continue;
                }
            }
        } else {
            let mut bounds = vec![open];
            bounds.extend(&commas);
            bounds.push(close);
            bounds.windows(2).map(|w| word[w[0] + 1..w[1]].to_vec()).collect()
        };
        if alternatives.len() > MAX_BRACE_WORDS {
            return false;
        }
        for alt in alternatives {
            let mut next = word[..open].to_vec();
            next.extend(alt);
            next.extend_from_slice(&word[close + 1..]);
            if !expand_braces(next, out) {
                return false;
            }
        }
        return true;
    }
}

/// The unquoted `}` closing the brace at `open`, and the unquoted commas at its level.
fn matching_brace(word: &[Ch], open: usize) -> Option<(usize, Vec<usize>)> {
    let mut depth = 0;
    let mut commas = Vec::new();
    for (i, ch) in word.iter().enumerate().skip(open) {
        if ch.quoted {
            continue;
        }
        match ch.c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((i, commas));
                }
            }
            ',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    None
}

/// `1..5`, `a..e`, `10..1..3`: the items of a sequence expression, or `None` if it is not one.
fn sequence(inner: &[Ch]) -> Option<Vec<String>> {
    let text: String = inner.iter().map(|c| c.c).collect();
    let parts: Vec<&str> = text.split("..").collect();
    let step = match parts.len() {
        2 => 1,
        3 => parts[2].parse::<i64>().ok()?.unsigned_abs().max(1),
        _ => return None,
    };
    let count = |a: i64, b: i64| (a.abs_diff(b) / step + 1) as usize;
    let walk = |a: i64, b: i64| -> Vec<i64> {
        let n = count(a, b).min(MAX_BRACE_WORDS + 1);
        (0..n as i64).map(|k| if a <= b { a + k * step as i64 } else { a - k * step as i64 }).collect()
    };
    if let (Ok(a), Ok(b)) = (parts[0].parse::<i64>(), parts[1].parse::<i64>()) {
        return Some(walk(a, b).into_iter().map(|n| n.to_string()).collect());
    }
    let single = |s: &str| {
        let mut cs = s.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => Some(c as i64),
            _ => None,
        }
    };
    let (a, b) = (single(parts[0])?, single(parts[1])?);
    Some(walk(a, b).into_iter().filter_map(|n| char::from_u32(n as u32)).map(String::from).collect())
}

/// The word after tilde expansion, with its pattern if it has one.
fn finish(chars: Vec<Ch>, source: &str) -> Word {
    let chars = match tilde(&chars) {
        Tilde::None => chars,
        Tilde::Unknown => return Word::dynamic(source),
        Tilde::Expanded(prefix, rest) => {
            let mut out: Vec<Ch> = prefix.chars().map(|c| Ch { c, quoted: true }).collect();
            out.extend_from_slice(&chars[rest..]);
            out
        }
    };
    let text: String = chars.iter().map(|c| c.c).collect();
    let pattern = is_pattern(&chars).then(|| {
        let mut escaped = String::with_capacity(text.len() + 4);
        for ch in &chars {
            if ch.quoted && matches!(ch.c, '*' | '?' | '[' | ']' | '\\') {
                escaped.push('\\');
            }
            escaped.push(ch.c);
        }
        escaped
    });
    Word { text, literal: true, pattern }
}

enum Tilde {
    None,
    /// `~-`, `~+2`: a value only the running shell knows.
    Unknown,
    /// The expansion, and where the rest of the word starts.
    Expanded(String, usize),
}

/// Tilde expansion of an unquoted `~` starting the word, up to the first `/`.
fn tilde(chars: &[Ch]) -> Tilde {
    if chars.first() != Some(&Ch { c: '~', quoted: false }) {
        return Tilde::None;
    }
    let end = chars.iter().position(|c| c.c == '/' && !c.quoted).unwrap_or(chars.len());
    if chars[1..end].iter().any(|c| c.quoted) {
        return Tilde::None;
    }
    let name: String = chars[1..end].iter().map(|c| c.c).collect();
    let expansion = match name.as_str() {
        "" => std::env::var_os("HOME").map(|h| h.to_string_lossy().into_owned()),
        // `$PWD`: the folder the command runs in, so relative to wherever a `cd` took it.
        "+" => Some(".".to_string()),
        "-" => return Tilde::Unknown,
        n if n.trim_start_matches(['+', '-']).chars().all(|c| c.is_ascii_digit()) => return Tilde::Unknown,
        user => home_of(user).map(|p| p.to_string_lossy().into_owned()),
    };
    match expansion {
        Some(prefix) => Tilde::Expanded(prefix, end),
        // `~nosuchuser` stays as written.
        None => Tilde::None,
    }
}

/// The home folder of `user`, from the password database.
pub fn home_of(user: &str) -> Option<PathBuf> {
    let name = std::ffi::CString::new(user).ok()?;
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwnam_r writes into `pwd` and `buf`, both valid for the sizes given, and sets
    // `result` to `&pwd` or null; the strings it points to live in `buf`, read before it goes.
    let rc = unsafe { libc::getpwnam_r(name.as_ptr(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() || pwd.pw_dir.is_null() {
        return None;
    }
    // SAFETY: pw_dir points to a NUL-terminated string inside `buf`.
    let dir = unsafe { std::ffi::CStr::from_ptr(pwd.pw_dir) };
    Some(Path::new(std::ffi::OsStr::new(&*dir.to_string_lossy())).to_path_buf())
}

/// An unquoted `*`, `?`, or `[` with an unquoted `]` after it.
fn is_pattern(chars: &[Ch]) -> bool {
    chars.iter().enumerate().any(|(i, ch)| {
        !ch.quoted
            && match ch.c {
                '*' | '?' => true,
                '[' => chars[i + 1..].iter().any(|c| c.c == ']' && !c.quoted),
                _ => false,
            }
    })
}

/// Whether the bash pattern `pattern` (quoted specials escaped by `\`) matches `text` whole:
/// `*`, `?`, `[…]` with `!`/`^` negation and ranges. Character classes (`[[:alpha:]]`) match
/// any character, so the answer errs towards a match.
pub fn pattern_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point for the last `*`, linear in practice.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => match bracket(&p, pi, t[ti]) {
                Some((true, len)) => Some(len),
                Some((false, _)) => None,
                None => (t[ti] == '[').then_some(1),
            },
            Some('\\') if pi + 1 < p.len() => (p[pi + 1] == t[ti]).then_some(2),
            Some(&c) => (c == t[ti]).then_some(1),
            None => None,
        };
        match step {
            Some(len) => {
                pi += len;
                ti += 1;
            }
            None => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A bracket expression at `p[at]`: whether it matches `c`, and its length; `None` when the
/// `[` opens no expression (no closing `]`).
fn bracket(p: &[char], at: usize, c: char) -> Option<(bool, usize)> {
    let mut i = at + 1;
    let negated = matches!(p.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let ch = *p.get(i)?;
        if ch == ']' && !first {
            return Some((matched != negated, i + 1 - at));
        }
        first = false;
        if ch == '[' && p.get(i + 1) == Some(&':') {
            let close = (i + 2..p.len().saturating_sub(1)).find(|&k| p[k] == ':' && p[k + 1] == ']')?;
            matched = true;
            i = close + 2;
            continue;
        }
        let lo = if ch == '\\' {
            i += 1;
            *p.get(i)?
        } else {
            ch
        };
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&e| e != ']') {
            let hi = p[i + 2];
            matched |= lo <= c && c <= hi;
            i += 3;
        } else {
            matched |= lo == c;
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(source: &str) -> Vec<String> {
        words_of(source).into_iter().map(|w| if w.literal { w.text } else { format!("‹{}›", w.text) }).collect()
    }

    #[test]
    fn quotes_escapes_and_ansi_c_strings_give_the_value() {
        assert_eq!(values(r#"'a b'"c"\ d"#), ["a bc d"]);
        assert_eq!(values(r"$'\x72m'"), ["rm"]);
        assert_eq!(values(r"$'\162\155'"), ["rm"]);
        assert_eq!(values(r"$'\u0072m'"), ["rm"]);
        assert_eq!(values(r"$'r\0ignored'm"), ["rm"]);
        assert_eq!(values(r"r''m"), ["rm"]);
        assert_eq!(values(r#""\$HOME""#), ["$HOME"]);
        assert_eq!(values("cost$"), ["cost$"]);
    }

    #[test]
    fn expansions_make_the_word_unknown() {
        for source in ["$x", "${x}", "a$(b)", "`b`", "\"$x\"", "$((1))", "<(ls)", "$\"msg\""] {
            assert_eq!(words_of(source), vec![Word::dynamic(source)], "{source}");
        }
    }

    #[test]
    fn braces_expand_into_several_words() {
        assert_eq!(values("{rm,f}"), ["rm", "f"]);
        assert_eq!(values("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(values("x{1..3}"), ["x1", "x2", "x3"]);
        assert_eq!(values("{a..c}"), ["a", "b", "c"]);
        assert_eq!(values("{a,{b,c}}"), ["a", "b", "c"]);
        assert_eq!(values("'{a,b}'"), ["{a,b}"]);
        assert_eq!(values("{a}"), ["{a}"]);
        assert_eq!(values("{}"), ["{}"]);
        assert_eq!(values("{1..100000}"), ["‹{1..100000}›"]);
    }

    #[test]
    fn tilde_forms_expand_as_bash_expands_them() {
        let home = std::env::var("HOME").unwrap();
        assert_eq!(values("~/x"), [format!("{home}/x")]);
        assert_eq!(values("~+/../x"), ["./../x"]);
        assert_eq!(values("~-/x"), ["‹~-/x›"]);
        assert_eq!(values("\"~\"/x"), ["~/x"]);
        let root_home = home_of("root").unwrap();
        assert_eq!(values("~root/.profile"), [format!("{}/.profile", root_home.display())]);
        assert_eq!(values("~no-such-user-here/x"), ["~no-such-user-here/x"]);
    }

    #[test]
    fn unquoted_glob_characters_make_a_pattern() {
        let w = &words_of("lin[k]/f")[0];
        assert_eq!(w.pattern.as_deref(), Some("lin[k]/f"));
        assert_eq!(words_of("'*'.rs")[0].pattern, None);
        assert_eq!(words_of("'*'*")[0].pattern.as_deref(), Some(r"\**"));
        assert_eq!(words_of("a[b")[0].pattern, None);
    }

    #[test]
    fn patterns_match_as_bash_globs() {
        for (p, t, m) in [
            (".en?", ".env", true),
            ("*.rs", "main.rs", true),
            ("*.rs", "main.rc", false),
            ("lin[k]", "link", true),
            ("[!a]x", "bx", true),
            ("[!a]x", "ax", false),
            ("[a-c]*", "by", true),
            (r"\*", "*", true),
            (r"\*", "a", false),
            ("r?", "rm", true),
            ("*a*b*c", "xaxbxc", true),
            ("[[:alpha:]]", "q", true),
            ("a[", "a[", true),
        ] {
            assert_eq!(pattern_matches(p, t), m, "{p} vs {t}");
        }
    }
}
