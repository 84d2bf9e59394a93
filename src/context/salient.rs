//! Which lines of a long tool output carry its facts: errors first, then paths, identifiers and
//! numbers, and never the hundredth copy of a line that differs from its neighbours only in
//! its digits. Used where an output must be cut — for the summariser, and for what a pruned
//! result keeps — instead of a blind head and tail.

use std::collections::HashMap;

use crate::conversation::floor_char_boundary;

/// Words that mark a line as reporting a failure.
const ERROR_WORDS: &[&str] = &[
    "error",
    "fail",
    "exception",
    "traceback",
    "panic",
    "assert",
    "denied",
    "not found",
    "no such",
    "cannot",
    "can't",
    "invalid",
    "undefined",
    "unexpected",
    "fatal",
    "warning",
    "refused",
    "timed out",
    "segmentation",
];

/// A line this long or longer is cut inside when kept.
const MAX_LINE_CHARS: usize = 400;

/// Whether `line` reports an error.
pub fn is_error_line(line: &str) -> bool {
    let mut lower = String::new();
    is_error_with(line, &mut lower)
}

/// [`is_error_line`], lower-casing into `buffer` (reused across lines).
fn is_error_with(line: &str, buffer: &mut String) -> bool {
    buffer.clear();
    buffer.extend(line.chars().map(|c| c.to_ascii_lowercase()));
    ERROR_WORDS.iter().any(|w| buffer.contains(w))
}

fn has_path(line: &str) -> bool {
    line.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ',' | '`' | '[' | ']')).any(|w| {
        let w = w.trim_end_matches([':', '.', ';']);
        (w.contains('/') || w.contains('\\'))
            && w.rsplit(['/', '\\']).next().is_some_and(|name| name.contains('.') && name.len() > 2)
    })
}

fn has_identifier(line: &str) -> bool {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .any(|w| w.contains("::") || (w.contains('_') && w.len() > 3) || is_camel(w))
}

fn is_camel(w: &str) -> bool {
    let mut chars = w.chars();
    chars.next().is_some_and(|c| c.is_alphabetic())
        && w.chars().skip(1).any(|c| c.is_uppercase())
        && w.chars().any(|c| c.is_lowercase())
}

/// A line's shape: its text with every run of digits taken as one, hashed — lines that differ
/// only in their numbers share a shape.
fn shape(line: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut in_digits = false;
    for b in line.trim().bytes() {
        if b.is_ascii_digit() {
            if !in_digits {
                h.write_u8(b'#');
            }
            in_digits = true;
        } else {
            h.write_u8(b);
            in_digits = false;
        }
    }
    h.finish()
}

/// How much a line is worth keeping; `copies` lines of the output share its shape.
fn score(line: &str, copies: usize, buffer: &mut String) -> i32 {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return i32::MIN;
    }
    let mut s = 0;
    if is_error_with(trimmed, buffer) {
        s += 8;
    }
    if has_path(trimmed) {
        s += 3;
    }
    if has_identifier(trimmed) {
        s += 1;
    }
    if trimmed.bytes().any(|c| c.is_ascii_digit()) {
        s += 1;
    }
    // Repetitive lines (a log's thousand "step N ok") say nothing the first one did not.
    if copies > 2 {
        s -= 4 + (copies.min(64) as i32).ilog2() as i32;
    }
    s
}

/// `text` within `max` bytes: whole when it fits; else its first and last lines and, in their
/// order, the lines most worth keeping, with each gap marked. Never longer than `max` plus the
/// gap marks' few bytes when `max` is at least a few hundred.
pub fn excerpt(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() < 3 {
        // One huge line: its start and end.
        let head = floor_char_boundary(text, max * 2 / 3);
        let tail = floor_char_boundary(text, text.len() - max / 3);
        let tail = tail.max(head);
        return format!("{}\n[… {} characters omitted …]\n{}", &text[..head], tail - head, &text[tail..]);
    }
    let line_shapes: Vec<u64> = lines.iter().map(|l| shape(l)).collect();
    let mut shapes: HashMap<u64, usize> = HashMap::new();
    for s in &line_shapes {
        *shapes.entry(*s).or_insert(0) += 1;
    }
    let clip_line = |l: &str| -> String {
        if l.len() <= MAX_LINE_CHARS {
            l.to_string()
        } else {
            format!("{}…", &l[..floor_char_boundary(l, MAX_LINE_CHARS)])
        }
    };
    // The length `clip_line` gives, without building it.
    let clipped_len =
        |l: &str| if l.len() <= MAX_LINE_CHARS { l.len() } else { floor_char_boundary(l, MAX_LINE_CHARS) + 3 };
    let mut keep = vec![false; lines.len()];
    let mut used = 0usize;
    // The first two lines and the last two: what ran and how it ended (exit codes live there).
    let last = lines.len() - 1;
    for i in [0, 1, last - 1, last] {
        if !keep[i] {
            let len = clipped_len(lines[i]) + 1;
            if used + len <= max {
                keep[i] = true;
                used += len;
            }
        }
    }
    let mut buffer = String::new();
    let mut ranked: Vec<(i32, usize)> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| !keep[*i])
        .map(|(i, l)| (score(l, shapes[&line_shapes[i]], &mut buffer), i))
        .collect();
    // Best first; among equals, the earlier line.
    ranked.sort_by_key(|&(s, i)| (std::cmp::Reverse(s), i));
    for (s, i) in ranked {
        if s == i32::MIN {
            break;
        }
        let len = clipped_len(lines[i]) + 1;
        // Room for the gap marks too: about 30 bytes each.
        if used + len + 30 > max {
            continue;
        }
        keep[i] = true;
        used += len + 30;
    }
    let mut out = String::with_capacity(max + 64);
    let mut gap = 0usize;
    for (i, l) in lines.iter().enumerate() {
        if keep[i] {
            if gap > 0 {
                out.push_str(&format!("[… {gap} lines omitted …]\n"));
                gap = 0;
            }
            out.push_str(&clip_line(l));
            out.push('\n');
        } else {
            gap += 1;
        }
    }
    if gap > 0 {
        out.push_str(&format!("[… {gap} lines omitted …]\n"));
    }
    out
}

/// The error lines of `text`, at most `max` bytes of them, in order.
pub fn error_lines(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut used = 0;
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty() && is_error_line(l)) {
        let l = if l.len() > MAX_LINE_CHARS { &l[..floor_char_boundary(l, MAX_LINE_CHARS)] } else { l };
        if used + l.len() > max {
            break;
        }
        used += l.len() + 1;
        out.push(l.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_with(facts: &[(usize, &str)], lines: usize) -> String {
        let mut out = String::new();
        for n in 0..lines {
            match facts.iter().find(|(at, _)| *at == n) {
                Some((_, fact)) => out.push_str(fact),
                None => out.push_str(&format!("2026-11-22T10:{:02}:00 step {n:04} status=ok", n % 60)),
            }
            out.push('\n');
        }
        out
    }

    #[test]
    fn facts_in_the_middle_of_a_long_output_are_kept() {
        let facts = [
            (60, "E   AssertionError: expected 4217 rows, got 4216"),
            (90, "wrote the fixture to tests/fixtures/orders_2024.csv"),
            (130, "checksum 0x5f3a9c11 differs"),
        ];
        let text = log_with(&facts, 200);
        let cut = excerpt(&text, 1_200);
        assert!(cut.len() <= 1_300, "{}", cut.len());
        for (_, fact) in facts {
            assert!(cut.contains(fact), "{fact} kept in:\n{cut}");
        }
        assert!(cut.contains("step 0000") && cut.contains("step 0199"), "first and last lines");
        assert!(cut.contains("lines omitted"));
    }

    #[test]
    fn short_text_is_whole_and_one_huge_line_keeps_both_ends() {
        assert_eq!(excerpt("a\nb", 10), "a\nb");
        let huge = format!("start{}end", "x".repeat(10_000));
        let cut = excerpt(&huge, 600);
        assert!(cut.starts_with("start") && cut.ends_with("end") && cut.len() < 700);
    }

    #[test]
    fn error_lines_are_found_in_order() {
        let text = "ok\nerror[E0308]: mismatched types\n  --> src/a.rs:3:5\nFAILED tests::parse\n";
        assert_eq!(error_lines(text, 1_000), vec!["error[E0308]: mismatched types", "FAILED tests::parse"]);
    }
}
