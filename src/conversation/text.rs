//! Small text helpers shared by every layer.

/// `s` cut to at most `max` characters, with `…` when something was cut.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((cut, _)) => {
            let mut out = s[..cut].trim_end().to_string();
            out.push('…');
            out
        }
    }
}

/// The first block of markdown `text` (paragraph, heading, list item, code line) as plain
/// words, for one-line previews: `## **Done**` reads as `Done`.
pub fn first_plain_line(text: &str) -> String {
    use pulldown_cmark::{Event, Parser, TagEnd};
    let mut out = String::new();
    for event in Parser::new(text) {
        match event {
            Event::Text(t) | Event::Code(t) => {
                if let Some(first) = t.lines().find(|l| !l.trim().is_empty()) {
                    out.push_str(first);
                    if t.trim_end().contains('\n') {
                        break;
                    }
                }
            }
            Event::SoftBreak | Event::HardBreak => out.push(' '),
            Event::End(TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::Item | TagEnd::CodeBlock)
                if !out.trim().is_empty() =>
            {
                break;
            }
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The largest index `<= i` that is a char boundary of `s`.
pub fn floor_char_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `950`, `3.2k`, `96k`, `1.2M`: token counts as the status line, the views and the command
/// line all show them.
pub fn format_tokens(n: u64) -> String {
    if n < 1_000 {
        n.to_string()
    } else if n < 10_000 {
        format!("{:.1}k", n as f64 / 1_000.0).replace(".0k", "k")
    } else if n < 1_000_000 {
        format!("{}k", (n + 500) / 1_000)
    } else {
        format!("{:.1}M", n as f64 / 1_000_000.0).replace(".0M", "M")
    }
}

/// `part` as a whole percentage of `whole`, rounded to the nearest: the one rounding every
/// context figure uses, so the status line and `/context` never disagree.
pub fn percent_of(part: u64, whole: u64) -> u64 {
    if whole == 0 { 0 } else { ((part as u128 * 200 + whole as u128) / (whole as u128 * 2)) as u64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_counts_characters_not_bytes() {
        assert_eq!(clip("héllo wörld", 5), "héllo…");
        assert_eq!(clip("short", 10), "short");
        assert_eq!(floor_char_boundary("é", 1), 0);
    }

    #[test]
    fn previews_read_as_plain_words() {
        assert_eq!(first_plain_line("## **Done**\n\nThe tests pass."), "Done");
        assert_eq!(
            first_plain_line("\n\nRan `cargo test`: *all* green.\nNext line"),
            "Ran cargo test: all green. Next line"
        );
        assert_eq!(first_plain_line("- first item\n- second"), "first item");
        assert_eq!(first_plain_line("```rust\nfn main() {}\nmore\n```"), "fn main() {}");
        assert_eq!(first_plain_line("see [the docs](https://x.y) now"), "see the docs now");
        assert_eq!(first_plain_line(""), "");
    }

    #[test]
    fn token_counts_read_the_same_everywhere() {
        assert_eq!(format_tokens(950), "950");
        assert_eq!(format_tokens(3_000), "3k");
        assert_eq!(format_tokens(3_240), "3.2k");
        assert_eq!(format_tokens(96_400), "96k");
        assert_eq!(format_tokens(200_000), "200k");
        assert_eq!(format_tokens(1_000_000), "1M");
        assert_eq!(format_tokens(1_250_000), "1.2M");
    }

    #[test]
    fn percentages_round_to_the_nearest_whole() {
        assert_eq!(super::percent_of(13_400, 200_000), 7, "6.7 % is 7 %, not 6 %");
        assert_eq!(super::percent_of(12_900, 200_000), 6);
        assert_eq!(super::percent_of(1, 0), 0);
        assert_eq!(super::percent_of(200_000, 200_000), 100);
    }
}
