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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_counts_characters_not_bytes() {
        assert_eq!(clip("héllo wörld", 5), "héllo…");
        assert_eq!(clip("short", 10), "short");
        assert_eq!(floor_char_boundary("é", 1), 0);
    }
}
