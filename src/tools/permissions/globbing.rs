//! Pathname expansion as bash does it before a command runs, so the policy sees the files a
//! pattern names (`cat .en?` reads `.env`, `cat lin[k]/f` reads through `link`). It errs
//! towards matching more: `*` and `?` also match names that start with a dot, and `**`
//! crosses folders, whatever `dotglob` and `globstar` are set to.

use std::path::Path;

use super::words::pattern_matches;

/// Matches of one pattern at most; a pattern matching more is not analysed.
pub const MAX_MATCHES: usize = 4096;

/// The paths `pattern` (quoted specials escaped with `\`) matches, relative to `cwd` as
/// written (absolute when the pattern is), sorted as bash sorts them; empty when it matches
/// nothing.
pub fn expand(pattern: &str, cwd: &Path) -> Result<Vec<String>, String> {
    let absolute = pattern.starts_with('/');
    let components: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    let mut found: Vec<String> = vec![if absolute { "/".to_string() } else { String::new() }];
    for (i, component) in components.iter().enumerate() {
        let last = i + 1 == components.len();
        let mut next = Vec::new();
        for prefix in &found {
            let dir = if prefix.is_empty() { cwd.to_path_buf() } else { resolve(cwd, prefix) };
            if !has_magic(component) {
                next.push(join(prefix, &unescape(component)));
                continue;
            }
            if *component == "**" {
                descend(&dir, prefix, &mut next)?;
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut names: Vec<String> =
                entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
            if component.starts_with('.') {
                names.extend([".".to_string(), "..".to_string()]);
            }
            for name in names {
                if pattern_matches(component, &name) {
                    next.push(join(prefix, &name));
                }
            }
            if next.len() > MAX_MATCHES {
                return Err(format!("the pattern `{pattern}` matches more than {MAX_MATCHES} files"));
            }
        }
        if !last {
            next.retain(|p| resolve(cwd, p).is_dir());
        }
        found = next;
    }
    found.retain(|p| !p.is_empty() && std::fs::symlink_metadata(resolve(cwd, p)).is_ok());
    found.sort();
    found.dedup();
    Ok(found)
}

fn resolve(cwd: &Path, path: &str) -> std::path::PathBuf {
    if path.starts_with('/') { Path::new(path).to_path_buf() } else { cwd.join(path) }
}

fn join(prefix: &str, name: &str) -> String {
    match prefix {
        "" => name.to_string(),
        "/" => format!("/{name}"),
        p => format!("{p}/{name}"),
    }
}

/// Every folder under `dir` (itself included), for `**`.
fn descend(dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), String> {
    let mut stack = vec![(dir.to_path_buf(), prefix.to_string())];
    while let Some((dir, prefix)) = stack.pop() {
        out.push(prefix.clone());
        if out.len() > MAX_MATCHES {
            return Err(format!("`**` under {} matches more than {MAX_MATCHES} folders", dir.display()));
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let name = entry.file_name().to_string_lossy().into_owned();
                stack.push((entry.path(), join(&prefix, &name)));
            }
        }
    }
    Ok(())
}

fn has_magic(component: &str) -> bool {
    let mut escaped = false;
    for c in component.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

fn unescape(component: &str) -> String {
    let mut out = String::with_capacity(component.len());
    let mut chars = component.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_expand_against_the_files_where_the_command_runs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [".env", "a.rs", "b.rs", "sub/c.rs", "link-target/f"] {
            std::fs::create_dir_all(root.join(f).parent().unwrap()).unwrap();
            std::fs::write(root.join(f), "x").unwrap();
        }
        std::os::unix::fs::symlink(root.join("link-target"), root.join("link")).unwrap();
        assert_eq!(expand(".en?", root).unwrap(), [".env"]);
        assert_eq!(expand("*.rs", root).unwrap(), ["a.rs", "b.rs"]);
        assert_eq!(expand("lin[k]/f", root).unwrap(), ["link/f"]);
        assert_eq!(expand("*/c.rs", root).unwrap(), ["sub/c.rs"]);
        assert!(expand("*", root).unwrap().contains(&".env".to_string()), "a star matches dot files too");
        assert!(expand("**/*.rs", root).unwrap().contains(&"sub/c.rs".to_string()));
        assert!(expand("nothing*", root).unwrap().is_empty());
        assert!(expand(r"\*.rs", root).unwrap().is_empty());
        assert!(expand(".*", root).unwrap().contains(&"..".to_string()));
    }
}
