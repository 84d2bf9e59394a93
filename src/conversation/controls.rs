//! Text from the model or a tool, made safe to print on a terminal: escape sequences and other
//! control characters removed, so an answer cannot retitle the window (OSC 0), write the
//! clipboard (OSC 52), clear the screen or move the cursor.

/// `text` without terminal escape sequences (CSI, OSC, DCS/SOS/PM/APC strings, two-byte ESC
/// sequences, their 8-bit C1 forms) and without control characters other than newline and tab.
pub fn strip_terminal_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\u{1b}' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                // ESC with intermediates (0x20–0x2F) then one final byte, e.g. `ESC ( B`.
                Some(' '..='/') => {
                    while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
                    chars.next();
                }
                // Any other ESC x is a two-byte sequence (ESC c resets the terminal).
                Some(_) | None => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Past a CSI's parameters and intermediates to its final byte (0x40–0x7E).
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            return;
        }
    }
}

/// Past a string sequence to its terminator: BEL, ST (`ESC \`) or the 8-bit ST.
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' => {
                chars.next_if_eq(&'\\');
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::strip_terminal_controls as strip;

    #[test]
    fn titles_clipboard_writes_and_screen_clears_are_removed() {
        assert_eq!(strip("a\x1b]0;pwned\x07b"), "ab");
        assert_eq!(strip("a\x1b]52;c;ZXZpbA==\x1b\\b"), "ab");
        assert_eq!(strip("\x1b[2J\x1b[H\x1b[1;31mred\x1b[0m"), "red");
        assert_eq!(strip("x\x1bcy\x1b(Bz"), "xyz");
        assert_eq!(strip("\u{9b}2Jq\u{9d}0;t\u{9c}r"), "qr");
        assert_eq!(strip("\x1bP1$r\x1b\\done"), "done");
    }

    #[test]
    fn text_newlines_and_tabs_stay_other_controls_go() {
        assert_eq!(strip("line one\n\tline two — ünïcode ✓"), "line one\n\tline two — ünïcode ✓");
        assert_eq!(strip("over\rwrite\x08\x07"), "overwrite");
        // An unterminated sequence swallows the rest rather than reaching the terminal.
        assert_eq!(strip("ok\x1b]0;never ends"), "ok");
    }
}
