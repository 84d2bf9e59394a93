//! Matching a `bash` rule's words against a command's words: whether the rule surely covers it
//! (what an allow rule needs), and whether it could (what a deny or ask rule needs): a word
//! expanded at run time may become any words, or none, and a file pattern any names it
//! matches. Both are searches over (rule word, command word) positions with the states
//! already tried remembered, so a long command or a rule with many `*` stays linear in their
//! product.

use std::collections::HashSet;

use super::shell::Word;
use super::words::pattern_matches;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternWord {
    /// `*` on its own: any number of words.
    Rest,
    /// A word with `*` in it: any characters there, within one word.
    Glob(String),
    Literal(String),
}

/// Whether `pattern` matches `words` exactly as written; an expanded word is matched only by
/// a `*` on its own.
pub fn matches(pattern: &[PatternWord], words: &[Word]) -> bool {
    let mut tried = HashSet::new();
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, j)) = stack.pop() {
        if !tried.insert((i, j)) {
            continue;
        }
        match pattern.get(i) {
            None if j == words.len() => return true,
            None => {}
            Some(PatternWord::Rest) => {
                stack.push((i + 1, j));
                if j < words.len() {
                    stack.push((i, j + 1));
                }
            }
            Some(PatternWord::Literal(lit)) if words.get(j).is_some_and(|w| w.literal && w.text == *lit) => {
                stack.push((i + 1, j + 1));
            }
            Some(PatternWord::Glob(glob)) if words.get(j).is_some_and(|w| w.literal && glob_word(glob, &w.text)) => {
                stack.push((i + 1, j + 1));
            }
            Some(PatternWord::Literal(_) | PatternWord::Glob(_)) => {}
        }
    }
    false
}

/// Whether `pattern` could match what `words` become when the command runs: an expanded
/// word stands for any words (none included), a file pattern for one or more names it
/// matches (or itself).
pub fn could_match(pattern: &[PatternWord], words: &[Word]) -> bool {
    // (rule word, command word, the command word has already produced a word).
    let mut tried = HashSet::new();
    let mut stack = vec![(0usize, 0usize, false)];
    while let Some(state) = stack.pop() {
        if !tried.insert(state) {
            continue;
        }
        let (i, j, inside) = state;
        let Some(word) = words.get(j) else {
            if pattern[i..].iter().all(|p| *p == PatternWord::Rest) {
                return true;
            }
            continue;
        };
        let expands = !word.literal;
        let multiple = expands || word.pattern.is_some();
        // The word is done: an expansion may produce nothing, a pattern at least one name.
        if multiple && (expands || inside) {
            stack.push((i, j + 1, false));
        }
        match pattern.get(i) {
            None => {}
            Some(PatternWord::Rest) => {
                stack.push((i + 1, j, inside));
                // The `*` takes this word (every word it produces, if it produces several).
                stack.push((i, j + 1, false));
            }
            Some(rule_word) => {
                let fits = match (rule_word, word) {
                    (_, w) if !w.literal => true,
                    (PatternWord::Literal(lit), w) => match &w.pattern {
                        Some(glob) => *lit == w.text || pattern_matches(glob, lit),
                        None => *lit == w.text,
                    },
                    (PatternWord::Glob(glob), w) => w.pattern.is_some() || glob_word(glob, &w.text),
                    (PatternWord::Rest, _) => true,
                };
                if fits {
                    if multiple {
                        stack.push((i + 1, j, true));
                    } else {
                        stack.push((i + 1, j + 1, false));
                    }
                }
            }
        }
    }
    false
}

/// `*` matches any characters (slashes included) within one word.
pub fn glob_word(glob: &str, text: &str) -> bool {
    let pieces: Vec<&str> = glob.split('*').collect();
    let (first, rest) = match pieces.split_first() {
        Some(split) => split,
        None => return glob == text,
    };
    let Some(mut remaining) = text.strip_prefix(first) else { return false };
    let Some((last, middle)) = rest.split_last() else { return remaining.is_empty() };
    for piece in middle {
        match remaining.find(piece) {
            Some(at) => remaining = &remaining[at + piece.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::permissions::words::words_of;

    fn rm_star() -> Vec<PatternWord> {
        vec![PatternWord::Literal("rm".into()), PatternWord::Rest]
    }

    fn words(source: &[&str]) -> Vec<Word> {
        source.iter().flat_map(|s| words_of(s)).collect()
    }

    #[test]
    fn an_expanded_word_could_be_anything_but_only_a_star_surely_matches_it() {
        let push = vec![PatternWord::Literal("git".into()), PatternWord::Literal("push".into()), PatternWord::Rest];
        assert!(could_match(&push, &words(&["git", "$x"])));
        assert!(could_match(&push, &words(&["git", "$x", "origin"])));
        assert!(!could_match(&push, &words(&["git", "log", "$x"])));
        assert!(!matches(&push, &words(&["git", "$x"])));
        assert!(could_match(&rm_star(), &words(&["$x"])), "a computed name may be rm");
        assert!(could_match(&rm_star(), &words(&["$a", "$b", "f"])));
        let exact = vec![PatternWord::Literal("rm".into()), PatternWord::Literal("-rf".into()), PatternWord::Rest];
        assert!(could_match(&exact, &words(&["rm", "*"])), "a file named -rf may exist");
        assert!(!could_match(&exact, &words(&["rm", "*.txt"])), "no name ending in .txt is -rf");
        assert!(could_match(&exact, &words(&["r?", "-rf", "x"])));
    }

    #[test]
    fn long_commands_and_many_stars_stay_fast() {
        let many: Vec<PatternWord> =
            (0..20).map(|_| PatternWord::Rest).chain([PatternWord::Literal("zz".into())]).collect();
        let long: Vec<Word> = (0..5_000).map(|i| Word::literal(format!("w{i}"))).collect();
        let started = std::time::Instant::now();
        assert!(!matches(&many, &long));
        let dynamic: Vec<Word> = (0..2_000).map(|_| Word::dynamic("$x")).collect();
        assert!(could_match(&many, &dynamic));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
