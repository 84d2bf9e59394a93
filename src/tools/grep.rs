//! `grep`: search file contents with a regex, ripgrep-style (ignore files honoured, binary
//! files skipped), and list matching lines as `path:line:text`.

use std::path::{Path, PathBuf};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::file_read::{cut_line, prepared_path};
use super::glob::{PathPattern, display_path, walk};
use super::{Access, Prepared, ProjectPath, Tool, ToolContext, ToolError, ToolOutput, parse_args, resolve_path};
use crate::conversation::tool_names::GREP;

/// Matching lines longer than this are cut.
const MAX_LINE_CHARS: usize = 500;

pub struct Grep;

#[derive(Deserialize)]
struct Args {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    case_insensitive: Option<bool>,
}

const SHAPE: &str =
    r#"{"pattern": "regex", "path"?: "file or folder", "glob"?: "*.rs", "case_insensitive"?: true|false}"#;

impl Tool for Grep {
    fn name(&self) -> &'static str {
        GREP
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/grep.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression (Rust regex syntax) to search for."},
                "path": {"type": "string", "description": "File or folder to search. Default: the project root."},
                "glob": {"type": "string", "description": "Only search files matching this glob, e.g. `*.rs` or `src/**/*.ts`."},
                "case_insensitive": {"type": "boolean", "description": "Ignore case. Default false."}
            },
            "required": ["pattern"]
        })
    }

    fn access(&self) -> Access {
        Access::Read
    }

    fn prepare(&self, args: &serde_json::Value, ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let args: Args = parse_args(self.name(), args, SHAPE)?;
        matcher(&args)?;
        if let Some(glob) = &args.glob {
            PathPattern::new(glob)?;
        }
        let base = resolve_path(&ctx.root, args.path.as_deref().unwrap_or("."));
        let mut summary = format!("{} in {}", args.pattern, base.display);
        if let Some(glob) = &args.glob {
            summary.push_str(&format!(" ({glob})"));
        }
        Ok(Prepared { summary, paths: vec![base], change: None, shown_as: None })
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let args: Args = parse_args(self.name(), args, SHAPE)?;
            let search = Search {
                matcher: matcher(&args)?,
                filter: args.glob.as_deref().map(PathPattern::new).transpose()?,
                base: prepared_path(&prepared)?,
                root: ctx.root.clone(),
                cap: ctx.config.grep_max_matches,
                denied: ctx.denied.clone(),
            };
            let cancel = ctx.cancel.clone();
            let pattern = args.pattern;
            tokio::task::spawn_blocking(move || search.run(&pattern, &cancel))
                .await
                .map_err(|e| ToolError::new(format!("grep failed unexpectedly: {e}")))?
        }
        .boxed()
    }
}

fn matcher(args: &Args) -> Result<RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .case_insensitive(args.case_insensitive.unwrap_or(false))
        // Line-oriented search: a match never spans a line break, which also keeps it fast.
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
        .map_err(|e| {
            ToolError::new(format!(
                "invalid regex: {e}\nEscape characters that should match literally, e.g. \\( \\[ \\{{ \\. \\* \\+ \\?"
            ))
        })
}

struct Search {
    matcher: RegexMatcher,
    filter: Option<PathPattern>,
    base: ProjectPath,
    root: PathBuf,
    cap: usize,
    denied: super::ReadDenials,
}

/// A matching line, for sorting and printing.
struct Hit {
    path: PathBuf,
    line: u64,
    text: String,
}

impl Search {
    fn run(&self, pattern: &str, cancel: &CancellationToken) -> Result<ToolOutput, ToolError> {
        let shown = &self.base.display;
        let base_is_file = match std::fs::metadata(&self.base.absolute) {
            Ok(meta) => !meta.is_dir(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ToolError::new(format!(
                    "{shown} does not exist; give an existing file or folder as path, or leave path out"
                )));
            }
            Err(e) => return Err(ToolError::new(format!("cannot search {shown}: {e}"))),
        };
        let mut searcher = SearcherBuilder::new().binary_detection(BinaryDetection::quit(0)).line_number(true).build();
        let hidden = self.filter.as_ref().is_some_and(PathPattern::names_hidden);
        let mut hits: Vec<Hit> = Vec::new();
        let mut unshown_matches = 0usize;
        let mut unshown_files = 0usize;
        let mut interrupted = false;
        let mut skipped = 0usize;
        for entry in walk(&self.base.absolute, hidden).filter_map(Result::ok) {
            if cancel.is_cancelled() {
                interrupted = true;
                break;
            }
            if !entry.file_type().is_some_and(|ft| ft.is_file()) {
                continue;
            }
            let path = entry.path();
            if !self.wanted(path) {
                continue;
            }
            if self.denied.denies("grep", path) {
                skipped += 1;
                continue;
            }
            let mut sink = FileHits { room: self.cap.saturating_sub(hits.len()), ..FileHits::default() };
            if let Err(e) = searcher.search_path(&self.matcher, path, &mut sink) {
                if base_is_file {
                    return Err(ToolError::new(format!("cannot search {shown}: {e}")));
                }
                continue;
            }
            if sink.binary {
                if base_is_file {
                    return Err(ToolError::new(format!("{shown} is a binary file; grep searches text files only")));
                }
                continue;
            }
            if sink.unshown > 0 {
                unshown_matches += sink.unshown;
                unshown_files += 1;
            }
            hits.extend(sink.lines.into_iter().map(|(line, text)| Hit { path: path.to_path_buf(), line, text }));
        }
        let skipped_note = (skipped > 0).then(|| {
            format!(
                "[{skipped} file{} not searched: a deny rule covers {}]",
                if skipped == 1 { "" } else { "s" },
                if skipped == 1 { "it" } else { "them" }
            )
        });
        if hits.is_empty() && unshown_matches == 0 && !interrupted {
            let mut text = format!("No matches for {pattern} under {shown}");
            if let Some(note) = skipped_note {
                text.push_str(&format!("\n{note}"));
            }
            return Ok(ToolOutput::text(text));
        }
        // The walk is already in this order; sorting keeps the output stable regardless.
        hits.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
        let mut lines: Vec<String> = hits
            .iter()
            .map(|hit| format!("{}:{}:{}", display_path(&self.root, &hit.path), hit.line, hit.text))
            .collect();
        if unshown_matches > 0 {
            lines.push(format!(
                "[{unshown_matches} more match{} in {unshown_files} file{} not shown; narrow the pattern, path or glob]",
                if unshown_matches == 1 { "" } else { "es" },
                if unshown_files == 1 { "" } else { "s" }
            ));
        }
        lines.extend(skipped_note);
        if interrupted {
            lines.push("[interrupted by the user]".into());
        }
        Ok(ToolOutput::text(lines.join("\n")))
    }

    /// Whether the `glob` filter lets `path` through.
    fn wanted(&self, path: &Path) -> bool {
        let Some(filter) = &self.filter else { return true };
        let relative = match path.strip_prefix(&self.base.absolute) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel,
            // The base itself is a file: judge it by its own name.
            Ok(_) | Err(_) => Path::new(path.file_name().unwrap_or_default()),
        };
        filter.matches(path, relative)
    }
}

/// The matching lines of one file, up to `room` of them (cut to length), and how many more
/// there were; all dropped if the file turns out to be binary.
#[derive(Default)]
struct FileHits {
    room: usize,
    lines: Vec<(u64, String)>,
    unshown: usize,
    binary: bool,
}

impl Sink for FileHits {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, found: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let first = found.line_number().unwrap_or(0);
        for (i, line) in found.lines().enumerate() {
            if self.lines.len() == self.room {
                self.unshown += 1;
                continue;
            }
            let text = String::from_utf8_lossy(line);
            let text = text.trim_end_matches(['\n', '\r']);
            self.lines.push((first + i as u64, cut_line(text, MAX_LINE_CHARS).into_owned()));
        }
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, std::io::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::test_support::{project_with, run};

    async fn grep(ctx: &ToolContext, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
        run(&Grep, ctx, args).await
    }

    #[tokio::test]
    async fn grep_lists_path_line_text_sorted_by_path_then_line() {
        let (_d, ctx) = project_with(&[
            ("src/b.rs", "fn b() {}\nfn main() {}\n"),
            ("src/a.rs", "// fn in a comment\r\nlet x = 1;\nfn a() {}\n"),
            ("README.md", "no functions here\n"),
        ]);
        let out = grep(&ctx, json!({"pattern": "^fn \\w"})).await.unwrap();
        assert_eq!(out.content, "src/a.rs:3:fn a() {}\nsrc/b.rs:1:fn b() {}\nsrc/b.rs:2:fn main() {}");
        let out = grep(&ctx, json!({"pattern": "^// fn"})).await.unwrap();
        assert_eq!(out.content, "src/a.rs:1:// fn in a comment", "the CR of a CRLF line is trimmed too");
    }

    #[tokio::test]
    async fn grep_respects_gitignore_and_skips_binary_files() {
        let (_d, ctx) = project_with(&[
            (".gitignore", "target/\n"),
            ("src/lib.rs", "needle\n"),
            ("target/out.rs", "needle\n"),
            ("data.bin", "needle\0\x01\x02"),
        ]);
        let out = grep(&ctx, json!({"pattern": "needle"})).await.unwrap();
        assert_eq!(out.content, "src/lib.rs:1:needle");
    }

    #[tokio::test]
    async fn grep_filters_by_glob_and_ignores_case_on_request() {
        let (_d, ctx) = project_with(&[("a.rs", "Needle\n"), ("b.txt", "needle\n"), ("sub/c.rs", "NEEDLE\n")]);
        let out = grep(&ctx, json!({"pattern": "needle", "glob": "*.rs"})).await.unwrap();
        assert_eq!(out.content, "No matches for needle under .");
        let out = grep(&ctx, json!({"pattern": "needle", "glob": "*.rs", "case_insensitive": true})).await.unwrap();
        assert_eq!(out.content, "a.rs:1:Needle\nsub/c.rs:1:NEEDLE");
        let out = grep(&ctx, json!({"pattern": "needle", "glob": "sub/*.rs", "case_insensitive": true})).await.unwrap();
        assert_eq!(out.content, "sub/c.rs:1:NEEDLE");
    }

    #[tokio::test]
    async fn grep_skips_what_a_deny_rule_covers_whatever_the_glob() {
        let (_d, mut ctx) = project_with(&[(".env", "KEY=secret\n"), ("a.txt", "KEY=fine\n")]);
        ctx.denied = crate::tools::ReadDenials::new(|_, p| p.file_name().is_some_and(|n| n == ".env"));
        for args in [
            json!({"pattern": "KEY"}),
            json!({"pattern": "KEY", "glob": ".e*"}),
            json!({"pattern": "KEY", "path": ".env"}),
        ] {
            let out = grep(&ctx, args.clone()).await.unwrap();
            assert!(!out.content.contains("secret"), "{args}: {}", out.content);
            // Hidden files are skipped anyway unless the glob or path names them.
            assert!(
                args.get("glob").is_none() && args.get("path").is_none() || out.content.contains("a deny rule covers"),
                "{args}: {}",
                out.content
            );
        }
        let out = run(&crate::tools::glob::Glob, &ctx, json!({"pattern": ".e*"})).await.unwrap();
        assert!(!out.content.lines().any(|l| l == ".env"), "{}", out.content);
    }

    #[tokio::test]
    async fn grep_searches_a_single_file() {
        let (_d, ctx) = project_with(&[("a.rs", "one\ntwo\none\n"), ("b.rs", "one\n")]);
        let out = grep(&ctx, json!({"pattern": "one", "path": "a.rs"})).await.unwrap();
        assert_eq!(out.content, "a.rs:1:one\na.rs:3:one");
        let out = grep(&ctx, json!({"pattern": "one", "path": "a.rs", "glob": "*.rs"})).await.unwrap();
        assert_eq!(out.content, "a.rs:1:one\na.rs:3:one");
    }

    #[tokio::test]
    async fn grep_caps_matches_and_counts_the_rest() {
        let (_d, mut ctx) = project_with(&[("a.txt", "x\nx\nx\n"), ("b.txt", "x\nx\n"), ("c.txt", "x\n")]);
        ctx.config.grep_max_matches = 4;
        let out = grep(&ctx, json!({"pattern": "x"})).await.unwrap();
        assert_eq!(
            out.content,
            "a.txt:1:x\na.txt:2:x\na.txt:3:x\nb.txt:1:x\n\
             [2 more matches in 2 files not shown; narrow the pattern, path or glob]"
        );
    }

    #[tokio::test]
    async fn grep_cuts_long_lines() {
        let (_d, ctx) = project_with(&[("min.js", &format!("var a='{}';\n", "z".repeat(2000)))]);
        let out = grep(&ctx, json!({"pattern": "var a"})).await.unwrap();
        assert!(out.content.starts_with("min.js:1:var a='zzz"));
        assert!(out.content.ends_with("… [line truncated, 2009 chars]"), "{}", out.content);
        assert!(out.content.chars().count() < 600);
    }

    #[tokio::test]
    async fn grep_with_invalid_regex_reports_the_regex_error() {
        let (_d, ctx) = project_with(&[]);
        let err = grep(&ctx, json!({"pattern": "fn main("})).await.unwrap_err();
        assert!(err.0.starts_with("invalid regex:") && err.0.contains("unclosed group"), "{err}");
    }

    #[tokio::test]
    async fn grep_of_a_single_binary_file_says_it_is_binary() {
        let (_d, ctx) = project_with(&[("data.bin", "needle\0")]);
        let err = grep(&ctx, json!({"pattern": "needle", "path": "data.bin"})).await.unwrap_err();
        assert_eq!(err.0, "data.bin is a binary file; grep searches text files only");
    }

    #[tokio::test]
    async fn grep_of_missing_path_explains() {
        let (_d, ctx) = project_with(&[]);
        let err = grep(&ctx, json!({"pattern": "x", "path": "nope"})).await.unwrap_err();
        assert!(err.0.contains("nope does not exist"), "{err}");
    }

    #[tokio::test]
    async fn grep_shows_non_utf8_lines_lossily() {
        let (_d, ctx) = project_with(&[("latin1.txt", "caf\u{e9}\n")]);
        std::fs::write(ctx.root.join("latin1.txt"), b"caf\xe9 needle\n").unwrap();
        let out = grep(&ctx, json!({"pattern": "needle"})).await.unwrap();
        assert_eq!(out.content, "latin1.txt:1:caf\u{FFFD} needle");
    }
}
