//! Reading one Rust file as the checker needs it: its code without comments and literals, its
//! `#[cfg(test)] mod` blocks cut out (and the files they name), its inline modules, and every
//! path it writes from `crate`, `super` or `self`, with the module-level `use` names it binds.

/// The source with comments, strings and char literals blanked (newlines kept, so offsets
/// still give line numbers).
pub fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                blank(&mut out, i, end);
                i = end;
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#')) && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) => {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = src[start..].find(&close).map_or(b.len(), |n| start + n + close.len());
                blank(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i, j + 1);
                i = j + 1;
            }
            // A char literal ('x', '\n', '"'); a lifetime ('a) has no closing quote.
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                let end = src[i + 3..].find('\'').map_or(b.len(), |n| i + 3 + n + 1);
                blank(&mut out, i, end);
                i = end;
            }
            b'\'' if src[i + 1..].chars().nth(1) == Some('\'') => {
                let end = i + 1 + src[i + 1..].chars().next().map_or(0, char::len_utf8) + 1;
                blank(&mut out, i, end);
                i = end;
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8: only ASCII spaces replace whole literals")
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

pub fn ident_at(s: &str) -> Option<&str> {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    (end > 0 && !s.as_bytes()[0].is_ascii_digit()).then(|| &s[..end])
}

fn skip_ws(s: &str, mut at: usize) -> usize {
    while s.as_bytes().get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The end (exclusive) of the `{…}` block whose `{` is at `open`.
fn block_end(code: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, c) in code.bytes().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Occurrences of `word` standing alone (not part of a longer identifier, nor `$crate`).
fn words<'a>(code: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    code.match_indices(word).map(|(at, _)| at).filter(move |&at| {
        let b = code.as_bytes();
        (at == 0 || !(is_ident(b[at - 1]) || b[at - 1] == b'$')) && b.get(at + word.len()).is_none_or(|&c| !is_ident(c))
    })
}

/// An out-of-line module declared under `#[cfg(test)]`: `mod tests;`, maybe with `#[path]`.
#[derive(Debug, PartialEq)]
pub struct TestModule {
    pub name: String,
    pub path: Option<String>,
}

/// A file as the checker reads it.
#[derive(Debug, Default)]
pub struct Source {
    /// Code only, `#[cfg(test)] mod` blocks and declarations blanked.
    pub code: String,
    /// The whole file is test code (`#![cfg(test)]`).
    pub test_only: bool,
    pub test_modules: Vec<TestModule>,
    /// Inline modules that ship: (name, start, end) offsets into `code`.
    pub inline: Vec<(String, usize, usize)>,
}

impl Source {
    pub fn read(src: &str) -> Source {
        let mut code = code_only(src);
        let test_only = code.contains("#![cfg(test)]");
        let mut test_modules = Vec::new();
        let cuts: Vec<usize> = code.match_indices("#[cfg(test)]").map(|(at, _)| at).collect();
        for at in cuts {
            let Some((end, module)) = test_module_at(src, &code, at) else { continue };
            test_modules.extend(module);
            let blanked: String = code[at..end].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect();
            code.replace_range(at..end, &blanked);
        }
        let mut inline = Vec::new();
        for at in words(&code, "mod") {
            let rest = skip_ws(&code, at + 3);
            let Some(name) = ident_at(&code[rest..]) else { continue };
            let open = skip_ws(&code, rest + name.len());
            if code.as_bytes().get(open) == Some(&b'{') {
                inline.push((name.to_string(), open, block_end(&code, open)));
            }
        }
        Source { code, test_only, test_modules, inline }
    }

    /// The 1-based line of an offset.
    pub fn line_of(&self, at: usize) -> usize {
        self.code[..at].matches('\n').count() + 1
    }

    /// The inline modules around an offset, outermost first.
    pub fn inline_path(&self, at: usize) -> Vec<String> {
        self.inline.iter().filter(|(_, start, end)| *start < at && at < *end).map(|(n, _, _)| n.clone()).collect()
    }

    fn depth_at(&self, at: usize) -> usize {
        let before = &self.code[..at];
        before.matches('{').count().saturating_sub(before.matches('}').count())
    }

    /// Every path the code writes starting at `crate`, `super` or `self`: (offset, segments
    /// with that first word kept). `a::{b, c::d}` gives two paths; a trailing `self` is dropped.
    pub fn paths(&self) -> Vec<(usize, Vec<String>)> {
        let mut found = Vec::new();
        for word in ["crate", "super", "self"] {
            for at in words(&self.code, word) {
                // Not the start of a path: `x::super::y` is read from `x`; `pub(super)` is no path.
                let before = self.code[..at].trim_end();
                if before.ends_with("::") || !self.code[at..].starts_with(&format!("{word}::")) {
                    continue;
                }
                let mut paths = Vec::new();
                use_tree(&self.code, at, &mut Vec::new(), &mut paths);
                found.extend(paths.into_iter().map(|(p, _)| (at, p)));
            }
        }
        found.sort_by_key(|(at, _)| *at);
        found
    }

    /// Module-level `use` items: (offset, path as written, the name it binds).
    pub fn uses(&self) -> Vec<(usize, Vec<String>, String)> {
        let mut found = Vec::new();
        for at in words(&self.code, "use") {
            if self.depth_at(at) != self.inline_path(at).len() {
                continue;
            }
            let mut paths = Vec::new();
            use_tree(&self.code, skip_ws(&self.code, at + 3), &mut Vec::new(), &mut paths);
            for (path, alias) in paths {
                let Some(last) = alias.or_else(|| path.last().cloned()) else { continue };
                if last != "*" && last != "_" {
                    found.push((at, path, last));
                }
            }
        }
        found
    }
}

/// If a `#[cfg(test)]` at `at` starts a module, the end of that module's item and its
/// out-of-line declaration.
fn test_module_at(src: &str, code: &str, at: usize) -> Option<(usize, Option<TestModule>)> {
    let mut i = skip_ws(code, at + "#[cfg(test)]".len());
    let mut path = None;
    while code[i..].starts_with("#[") {
        let end = code[i..].find(']').map(|n| i + n + 1)?;
        let attr = &src[i..end];
        if let Some(rest) = attr.strip_prefix("#[path") {
            path = rest.split('"').nth(1).map(str::to_string);
        }
        i = skip_ws(code, end);
    }
    if code[i..].starts_with("pub") {
        i = skip_ws(code, i + 3);
        if code[i..].starts_with('(') {
            i = skip_ws(code, i + code[i..].find(')')? + 1);
        }
    }
    let after_mod = code[i..].strip_prefix("mod")?;
    let name_at = skip_ws(code, code.len() - after_mod.len());
    let name = ident_at(&code[name_at..])?;
    let next = skip_ws(code, name_at + name.len());
    match code.as_bytes().get(next) {
        Some(b';') => Some((next + 1, Some(TestModule { name: name.to_string(), path }))),
        Some(b'{') => Some((block_end(code, next), None)),
        _ => None,
    }
}

/// Reads the use tree or path expression at `at` into `out`: every full path, and the alias
/// an `as` gives it.
fn use_tree(s: &str, at: usize, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) -> usize {
    let mut i = skip_ws(s, at);
    if s[i..].starts_with('{') {
        i += 1;
        loop {
            i = skip_ws(s, i);
            match s.as_bytes().get(i) {
                None => return i,
                Some(b'}') => return i + 1,
                Some(b',') => i += 1,
                Some(_) => {
                    let before = i;
                    i = use_tree(s, i, &mut prefix.clone(), out);
                    if i == before {
                        i += 1;
                    }
                }
            }
        }
    }
    if s[i..].starts_with('*') {
        let mut path = prefix.clone();
        path.push("*".into());
        out.push((path, None));
        return i + 1;
    }
    let Some(name) = ident_at(&s[i..]) else {
        if !prefix.is_empty() {
            out.push((prefix.clone(), None));
        }
        return i;
    };
    i += name.len();
    let sep = skip_ws(s, i);
    if s[sep..].starts_with("::") && !s[skip_ws(s, sep + 2)..].starts_with('<') {
        prefix.push(name.to_string());
        return use_tree(s, sep + 2, prefix, out);
    }
    let mut path = prefix.clone();
    if name != "self" || path.is_empty() {
        path.push(name.to_string());
    }
    let mut alias = None;
    let after = skip_ws(s, i);
    if s[after..].starts_with("as ") {
        let alias_at = skip_ws(s, after + 2);
        if let Some(a) = ident_at(&s[alias_at..]) {
            alias = Some(a.to_string());
            i = alias_at + a.len();
        }
    }
    out.push((path, alias));
    i
}
