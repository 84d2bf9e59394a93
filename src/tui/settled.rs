//! Where an answer still streaming can be cut for the terminal's scrollback (inline mode): the
//! end of its last closed markdown block, or the end of the last complete line of a fenced code
//! block that is still open.
//!
//! A paragraph is not final until it is closed: a `**` closed later takes back its stars, a
//! line of `---` under it makes it a heading, a table's delimiter row makes its last line a
//! header. A table is not final until it ends (its columns are as wide as its widest cell). A
//! code block's lines are final as they complete: they are drawn as written, and highlighting
//! only carries state forward. So this proposes a cut only where a new block has begun (after
//! a blank line, a heading, a closing fence, or at a list item), or after a complete code line.
//! The caller keeps a cut only if its rows are the first rows of the whole answer's, which
//! catches what the proposal cannot know (a list that continues, a lazy continuation line).

/// The byte length of the longest prefix of `text` that ends at a cut (0: none yet).
pub fn settled_len(text: &str) -> usize {
    let mut best = 0;
    let mut pos = 0;
    // The open fence: its character, its length, and whether it stands at the left margin.
    let mut fence: Option<(char, usize, bool)> = None;
    let mut after_blank = false;
    // The line before closed its block (a heading, a rule, a closing fence).
    let mut after_closed = false;
    for line in text.split_inclusive('\n') {
        let start = pos;
        pos += line.len();
        let complete = line.ends_with('\n');
        let body = line.trim_end_matches(['\n', '\r']);
        if let Some((c, n, top)) = fence {
            if !complete {
                break;
            }
            if closes_fence(body, c, n) {
                fence = None;
                after_closed = true;
                after_blank = false;
            } else if top {
                best = pos;
            }
            continue;
        }
        let starts_block = body.chars().next().is_some_and(|c| !c.is_whitespace());
        if starts_block && start > 0 && (after_blank || after_closed || is_list_item(body)) {
            best = start;
        }
        if !complete {
            break;
        }
        if let Some((c, n)) = opens_fence(body) {
            fence = Some((c, n, !body.starts_with(' ')));
            after_blank = false;
            after_closed = false;
            continue;
        }
        after_blank = body.trim().is_empty();
        after_closed = is_heading(body) || is_rule(body);
    }
    best
}

/// A fence line (up to three spaces, then three or more backticks or tildes): its character and length.
fn opens_fence(body: &str) -> Option<(char, usize)> {
    let trimmed = body.trim_start_matches(' ');
    if body.len() - trimmed.len() > 3 {
        return None;
    }
    let c = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = trimmed.chars().take_while(|x| *x == c).count();
    // A backtick fence's info string cannot hold a backtick.
    (n >= 3 && !(c == '`' && trimmed[n..].contains('`'))).then_some((c, n))
}

fn closes_fence(body: &str, c: char, n: usize) -> bool {
    let trimmed = body.trim_start_matches(' ');
    body.len() - trimmed.len() <= 3
        && trimmed.chars().take_while(|x| *x == c).count() >= n
        && trimmed.trim_start_matches(c).trim().is_empty()
}

/// A list item at the left margin: `- `, `* `, `+ `, `1. `, `1) `.
fn is_list_item(body: &str) -> bool {
    let mut chars = body.chars();
    match chars.next() {
        Some('-' | '*' | '+') => chars.next().is_none_or(|c| c == ' '),
        Some(c) if c.is_ascii_digit() => {
            let rest = body.trim_start_matches(|c: char| c.is_ascii_digit());
            body.len() - rest.len() <= 9 && (rest.starts_with(". ") || rest.starts_with(") "))
        }
        _ => false,
    }
}

fn is_heading(body: &str) -> bool {
    let hashes = body.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&hashes) && body[hashes..].chars().next().is_none_or(|c| c == ' ')
}

fn is_rule(body: &str) -> bool {
    let t: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    t.len() >= 3 && ["-", "*", "_"].iter().any(|m| t.chars().all(|c| c.to_string() == *m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str) -> &str {
        &text[..settled_len(text)]
    }

    #[test]
    fn a_paragraph_is_final_only_once_the_next_block_has_begun() {
        assert_eq!(cut("First paragraph, still"), "");
        assert_eq!(cut("First paragraph.\n"), "");
        assert_eq!(cut("First paragraph.\n\n"), "", "the next block has not begun: it could be indented");
        assert_eq!(cut("First paragraph.\n\nSec"), "First paragraph.\n\n");
        assert_eq!(cut("One.\n\nTwo.\n\n  indented"), "One.\n\n", "an indented line may continue a block");
    }

    #[test]
    fn headings_and_rules_close_at_once() {
        assert_eq!(cut("# Title\nText"), "# Title\n");
        assert_eq!(cut("Para\n\n---\nText"), "Para\n\n---\n");
    }

    #[test]
    fn an_open_code_block_is_final_line_by_line() {
        let text = "Look:\n\n```rust\nfn a() {}\nfn b() {}\nfn c";
        assert_eq!(cut(text), "Look:\n\n```rust\nfn a() {}\nfn b() {}\n");
        let closed = "```\nx\n```\nAfter";
        assert_eq!(cut(closed), "```\nx\n```\n");
        // A blank line inside a fence is not a block boundary, and a fence inside a list item
        // (indented) is not cut line by line.
        assert_eq!(cut("```\na\n\nb"), "```\na\n\n");
        assert_eq!(cut("- item\n\n  ```\n  code\n  more"), "");
    }

    #[test]
    fn a_table_is_final_only_when_it_ends() {
        let text = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n";
        assert_eq!(cut(text), "");
        assert_eq!(cut(&format!("{text}\nAfter")), text.to_string() + "\n");
    }

    #[test]
    fn list_items_are_cut_between_them() {
        assert_eq!(cut("- one\n- two\n- thr"), "- one\n- two\n");
        assert_eq!(cut("1. one\n2. two"), "1. one\n");
        assert_eq!(cut("- one\n  continued\n- two"), "- one\n  continued\n");
        assert!(!is_list_item("-not"));
        assert!(!is_list_item("1.5 percent"));
    }
}
