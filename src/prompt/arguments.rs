//! Arguments of a custom command or skill: `$ARGUMENTS` is everything after the name, `$1`…`$9`
//! the words of it split as a shell would (quotes group words). Kontekst's skills count from
//! `$0` instead; a file with TOML front matter is read that way.

/// How positional arguments are numbered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// Claude Code: `$1` is the first word.
    FromOne,
    /// Kontekst: `$0` is the first word.
    FromZero,
}

/// `args` split into words: whitespace separates, single and double quotes group (and are
/// removed), a backslash escapes the next character outside single quotes.
pub fn split_words(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut chars = args.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            '\'' => {
                started = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                started = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                word.push(e);
                            }
                        }
                        other => word.push(other),
                    }
                }
            }
            '\\' => {
                started = true;
                if let Some(e) = chars.next() {
                    word.push(e);
                }
            }
            other => {
                started = true;
                word.push(other);
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// `body` with `$ARGUMENTS` and the positional `$N` replaced. When the body names no argument
/// at all and some were given, they are appended on a line of their own, so none is lost.
pub fn substitute(body: &str, args: &str, numbering: Numbering) -> String {
    let words = split_words(args);
    let args = args.trim();
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
            continue;
        }
        match after.chars().next().and_then(|c| c.to_digit(10)) {
            Some(n) if !after[1..].starts_with(|c: char| c.is_ascii_digit()) => {
                let index = match numbering {
                    Numbering::FromOne => (n as usize).checked_sub(1),
                    Numbering::FromZero => Some(n as usize),
                };
                match index {
                    Some(i) => {
                        out.push_str(words.get(i).map(String::as_str).unwrap_or(""));
                        used = true;
                    }
                    // `$0` under Claude Code's numbering is left as written.
                    None => out.push_str("$0"),
                }
                rest = &after[1..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {args}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(split_words(r#"42 "two words" 'single $x' a\ b"#), ["42", "two words", "single $x", "a b"]);
        assert_eq!(split_words("  "), Vec::<String>::new());
        assert_eq!(split_words(r#""""#), [""]);
    }

    #[test]
    fn arguments_and_positions_are_substituted() {
        assert_eq!(substitute("Fix issue $ARGUMENTS now", "42", Numbering::FromOne), "Fix issue 42 now");
        assert_eq!(substitute("from $1 to $2; $3. $x", r#"a "b c""#, Numbering::FromOne), "from a to b c; . $x");
        assert_eq!(substitute("first $0 second $1", "x y", Numbering::FromZero), "first x second y");
        assert_eq!(substitute("keep $0 and $10", "x", Numbering::FromOne), "keep $0 and $10\n\nARGUMENTS: x");
        assert_eq!(
            substitute("Review the diff.", "carefully", Numbering::FromOne),
            "Review the diff.\n\nARGUMENTS: carefully"
        );
        assert_eq!(substitute("Review the diff.", "", Numbering::FromOne), "Review the diff.");
    }
}
