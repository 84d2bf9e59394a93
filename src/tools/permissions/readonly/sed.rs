//! `sed`: read-only when it edits no file in place, takes no script from a file, and its
//! scripts only print and transform — no `w`/`W` (write), `r`/`R` (read a file the script
//! names), `e` or `s///e` (run a command). Options are GNU sed's, abbreviations included
//! (`--in` is `--in-place`, `--ex=…` is `--expression=…`), and a value attached to `-e`
//! (`-es/x/y/e`) is a script like any other.

use super::Reads;
use super::getopt::{self, Spec, Token};

const SPEC: Spec = Spec {
    short: "nrsuzEe:f:i::l:",
    long: "quiet silent debug expression= file= in-place? line-length= null-data zero-terminated posix \
        regexp-extended separate sandbox unbuffered follow-symlinks help version",
    abbreviations: true,
    permute: true,
};

pub fn check(args: &[String]) -> Result<Reads, String> {
    let call = read(args)?;
    if call.in_place {
        return Err("`sed -i` edits files in place".into());
    }
    if call.from_file {
        return Err("`sed -f` runs a script from a file cairn has not read".into());
    }
    if let Some(s) = call.scripts.iter().find(|s| !script_is_safe(s)) {
        return Err(format!(
            "the sed script `{s}` may write files, read other files or run commands (w, W, r, R, e and s///e or s///w are not read-only)"
        ));
    }
    Ok(Reads::files(call.operands))
}

/// Whether `sed ARGS` may run a command (`e`, `s///e`, or a script from a file cairn cannot
/// read); writing files does not count here.
pub fn runs_commands(args: &[String]) -> bool {
    match read(args) {
        Ok(call) => {
            call.from_file
                || call
                    .scripts
                    .iter()
                    .any(|s| Parser { s: s.chars().collect(), i: 0, files_ok: true }.script().is_none())
        }
        Err(_) => true,
    }
}

/// A sed command line, read.
struct Call {
    scripts: Vec<String>,
    operands: Vec<String>,
    in_place: bool,
    from_file: bool,
}

fn read(args: &[String]) -> Result<Call, String> {
    let mut call = Call { scripts: Vec::new(), operands: Vec::new(), in_place: false, from_file: false };
    for token in getopt::parse(&SPEC, "sed", args)? {
        match token {
            Token::Opt { name, value } => match name.as_str() {
                "i" | "in-place" => call.in_place = true,
                "f" | "file" => call.from_file = true,
                "e" | "expression" => call.scripts.push(value.unwrap_or_default()),
                _ => {}
            },
            Token::Operand(operand) => call.operands.push(operand),
        }
    }
    if call.scripts.is_empty() && !call.from_file {
        if call.operands.is_empty() {
            return Err("`sed` without a script".into());
        }
        let script = call.operands.remove(0);
        call.scripts.push(script);
    }
    Ok(call)
}

/// Whether a sed script only prints and transforms.
pub fn script_is_safe(script: &str) -> bool {
    let mut p = Parser { s: script.chars().collect(), i: 0, files_ok: false };
    p.script().is_some()
}

struct Parser {
    s: Vec<char>,
    i: usize,
    /// Accept what reads and writes files (`r`, `w`, `s///w`): only running a command fails.
    files_ok: bool,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.i += 1;
        }
    }

    /// The whole script; `None` when it is not safe (or not understood).
    fn script(&mut self) -> Option<()> {
        loop {
            while self.peek().is_some_and(|c| c.is_whitespace() || c == ';') {
                self.i += 1;
            }
            if self.peek().is_none() {
                return Some(());
            }
            if self.peek() == Some('#') {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.i += 1;
                }
                continue;
            }
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(',') {
                self.i += 1;
                self.skip_blanks();
                self.address()?;
            }
            self.skip_blanks();
            while self.peek() == Some('!') {
                self.i += 1;
                self.skip_blanks();
            }
            self.command()?;
        }
    }

    fn address(&mut self) -> Option<()> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.digits();
                if self.peek() == Some('~') {
                    self.i += 1;
                    self.digits();
                }
            }
            Some('+' | '~') => {
                self.i += 1;
                self.digits();
            }
            Some('$') => self.i += 1,
            Some('/') => {
                self.i += 1;
                self.delimited('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.i += 1;
                let d = self.next()?;
                self.delimited(d)?;
                self.regex_flags();
            }
            _ => {}
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
    }

    fn regex_flags(&mut self) {
        while self.peek().is_some_and(|c| c == 'I' || c == 'M') {
            self.i += 1;
        }
    }

    /// Up to the unescaped `delim`, which is consumed.
    fn delimited(&mut self, delim: char) -> Option<()> {
        loop {
            match self.next()? {
                '\\' => {
                    self.next()?;
                }
                '\n' if delim != '\n' => return None,
                c if c == delim => return Some(()),
                _ => {}
            }
        }
    }

    /// A label, up to the first `;`, blank or newline (what sed takes as the label may be
    /// longer; reading less only makes more of the script count as commands).
    fn label(&mut self) {
        self.skip_blanks();
        while self.peek().is_some_and(|c| !c.is_whitespace() && c != ';' && c != '}') {
            self.i += 1;
        }
    }

    fn command(&mut self) -> Option<()> {
        match self.next()? {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' | 'l' => {
                if self.s.get(self.i - 1) == Some(&'l') {
                    self.skip_blanks();
                    self.digits();
                }
                Some(())
            }
            'q' | 'Q' => {
                self.skip_blanks();
                self.digits();
                Some(())
            }
            ':' | 'b' | 't' | 'T' => {
                self.label();
                Some(())
            }
            'a' | 'i' | 'c' => {
                // Text to print, to the end of the line (a `\` at the end continues it).
                loop {
                    match self.next() {
                        None | Some('\n') => return Some(()),
                        Some('\\') => {
                            self.next();
                        }
                        Some(_) => {}
                    }
                }
            }
            'y' => {
                let d = self.next()?;
                if d == '\\' || d == '\n' {
                    return None;
                }
                self.delimited(d)?;
                self.delimited(d)
            }
            's' => {
                let d = self.next()?;
                if d == '\\' || d == '\n' {
                    return None;
                }
                self.delimited(d)?;
                self.delimited(d)?;
                while let Some(c) = self.peek() {
                    match c {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => self.i += 1,
                        'w' if self.files_ok => {
                            while self.peek().is_some_and(|c| c != '\n') {
                                self.i += 1;
                            }
                        }
                        ';' | '}' | '\n' | ' ' | '\t' => break,
                        // `e` runs the pattern space as a command, `w` writes a file.
                        _ => return None,
                    }
                }
                Some(())
            }
            'r' | 'R' | 'w' | 'W' if self.files_ok => {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.i += 1;
                }
                Some(())
            }
            // `r`/`R` read a file the script names, `w`/`W` write one, `e` runs a command, `v`
            // and anything else is not known here.
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn print_and_transform_scripts_are_safe() {
        for s in [
            "p",
            "1,20p",
            "s/a/b/g",
            "/x/d",
            "$!N;P;D",
            "y/abc/xyz/",
            "s|a|b|2p",
            "/start/,/end/{s/a/b/;p}",
            "1~2d",
            "\\,x,p",
            ":a;N;ba",
            "1i\\\nheader",
            "= ; l 70",
            "0,/re/I s/x/y/",
        ] {
            assert!(script_is_safe(s), "{s}");
        }
    }

    #[test]
    fn writing_reading_and_running_scripts_are_not() {
        for s in [
            "s/x/touch P/e",
            "s/a/b/w out",
            "w out",
            "1e rm x",
            "r /etc/passwd",
            "R f",
            "W f",
            "s/a/b/;e",
            "/x/ s/a/b/ew f",
            "v; e ls",
        ] {
            assert!(!script_is_safe(s), "{s}");
        }
    }

    #[test]
    fn attached_values_and_abbreviations_are_read_as_sed_reads_them() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(check(&args(&["-es/x/touch P/e"])).is_err());
        assert!(check(&args(&["--ex=s/x/y/e", "f"])).is_err());
        assert!(check(&args(&["--in", "s/a/b/", "f"])).unwrap_err().contains("in place"));
        assert!(check(&args(&["-ni", "p", "f"])).is_err());
        assert!(check(&args(&["--fi=x"])).is_err());
        assert_eq!(check(&args(&["-n", "1,5p", "a.txt"])).unwrap().paths, ["a.txt"]);
        assert_eq!(check(&args(&["-e", "p", "-e", "d", "a", "b"])).unwrap().paths, ["a", "b"]);
    }
}
