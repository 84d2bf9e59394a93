//! `file_read`: show a text file, or a range of its lines, numbered like `cat -n`, and remember
//! what was read so later writes can tell when the file changed underneath. Also owns the small
//! text helpers the other file tools share (binary sniffing, long-line cutting).
//!
//! The file is streamed in 64 KiB pieces: only the lines the window asks for are kept, so a
//! gigabyte log shows its first 2,000 lines in a few megabytes. The rest is still scanned once,
//! to count its lines ("of N") and to fingerprint the whole file for later writes.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use crate::conversation::tool_names::FILE_READ;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::{
    Access, Fingerprinter, Prepared, ProjectPath, Tool, ToolContext, ToolError, ToolOutput, parse_args, resolve_path,
};

/// Lines longer than this are cut in the output.
const MAX_LINE_CHARS: usize = 2_000;
/// How much of a file is sniffed for a NUL byte to call it binary (what git and ripgrep do).
const BINARY_SNIFF_BYTES: usize = 8 * 1024;
/// How much of a file is read at a time.
const READ_CHUNK_BYTES: usize = 64 * 1024;
/// Bytes of a long line kept for display: enough for `MAX_LINE_CHARS` characters of up to
/// four bytes each.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4;

pub struct FileRead;

#[derive(Deserialize)]
struct Args {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

const SHAPE: &str = r#"{"path": "src/main.rs", "offset"?: 1-based first line, "limit"?: number of lines}"#;

impl Tool for FileRead {
    fn name(&self) -> &'static str {
        FILE_READ
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/file_read.md")
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to read, relative to the project root or absolute."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to show, 1-based. Default 1."},
                "limit": {"type": "integer", "minimum": 1, "description": "How many lines to show. Default 2000."}
            },
            "required": ["path"]
        })
    }

    fn access(&self) -> Access {
        Access::Read
    }

    fn prepare(&self, args: &serde_json::Value, ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let args: Args = parse_args(self.name(), args, SHAPE)?;
        if args.limit == Some(0) {
            return Err(ToolError::new(format!(
                "limit must be at least 1; leave it out to read up to {} lines",
                ctx.config.read_default_lines
            )));
        }
        let path = resolve_path(&ctx.root, &args.path);
        Ok(Prepared { summary: path.display.clone(), paths: vec![path], change: None, shown_as: None })
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let args: Args = parse_args(self.name(), args, SHAPE)?;
            let path = prepared_path(&prepared)?;
            if super::image::is_image_path(&path.absolute) {
                let ranged = args.offset.is_some() || args.limit.is_some();
                return read_image(path, super::image::ImageLimits::from_config(&ctx.config), ranged).await;
            }
            let window = Window {
                first: args.offset.unwrap_or(1).max(1),
                limit: args.limit.unwrap_or(ctx.config.read_default_lines).max(1),
            };
            let files = ctx.files.clone();
            // An editor's buffer, unsaved changes included, when a front end offers one.
            let held = match ctx.editor.as_deref().filter(|e| e.reads_files()) {
                Some(editor) => {
                    open_regular_file(&path)?;
                    let text = editor
                        .read_file(&path.absolute)
                        .await
                        .map_err(|e| ToolError::new(format!("cannot read {} from the editor: {e}", path.display)))?;
                    Some(text)
                }
                None => None,
            };
            let content = tokio::task::spawn_blocking(move || {
                let (text, fingerprint) = match held {
                    Some(text) => render(&path.display, std::io::Cursor::new(text.into_bytes()), window)?,
                    None => render(&path.display, open_regular_file(&path)?, window)?,
                };
                files.record_fingerprint(&path.absolute, fingerprint);
                Ok::<_, ToolError>(text)
            })
            .await
            .map_err(|e| ToolError::new(format!("file_read failed unexpectedly: {e}")))??;
            Ok(ToolOutput::text(content))
        }
        .boxed()
    }
}

/// An image file: the image itself for the model (scaled to the caps), and a line saying what
/// it is. A model without vision gets that line and a note in place of the image.
async fn read_image(
    path: ProjectPath,
    limits: super::image::ImageLimits,
    ranged: bool,
) -> Result<ToolOutput, ToolError> {
    let loaded = tokio::task::spawn_blocking(move || {
        open_regular_file(&path)?;
        super::image::load(&path.absolute, &path.display, limits).map_err(ToolError::new)
    })
    .await
    .map_err(|e| ToolError::new(format!("file_read failed unexpectedly: {e}")))??;
    let mut content = format!("{}. The image follows.", loaded.describe());
    if ranged {
        content.push_str(" (offset and limit apply to text files; the whole image is shown.)");
    }
    Ok(ToolOutput { content, image: Some(loaded.image), ..Default::default() })
}

/// The one path `prepare` resolved; `execute` uses it so what runs is what the policy checked.
pub(super) fn prepared_path(prepared: &Prepared) -> Result<ProjectPath, ToolError> {
    prepared
        .paths
        .first()
        .cloned()
        .ok_or_else(|| ToolError::new("internal error: the call was prepared without a path"))
}

#[derive(Clone, Copy)]
struct Window {
    first: usize,
    limit: usize,
}

fn open_regular_file(path: &ProjectPath) -> Result<std::fs::File, ToolError> {
    let shown = &path.display;
    let meta = match std::fs::metadata(&path.absolute) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found(path)),
        Err(e) => return Err(ToolError::new(format!("cannot read {shown}: {e}"))),
    };
    if meta.is_dir() {
        return Err(ToolError::new(format!(
            "{shown} is a directory, not a file; list its files with glob (pattern \"*\", path \"{shown}\")"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::new(format!(
            "{shown} is not a regular file (a device, socket or pipe); file_read reads regular files only"
        )));
    }
    std::fs::File::open(&path.absolute).map_err(|e| ToolError::new(format!("cannot read {shown}: {e}")))
}

/// A missing file, with the neighbours the model probably meant.
fn not_found(path: &ProjectPath) -> ToolError {
    let shown = &path.display;
    let Some(dir) = path.absolute.parent() else {
        return ToolError::new(format!("{shown} does not exist"));
    };
    if !dir.is_dir() {
        return ToolError::new(format!(
            "{shown} does not exist (nor does its folder); find the file with glob, e.g. pattern \"**/{}\"",
            path.absolute.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
        ));
    }
    let similar = similar_names(dir, &path.absolute);
    if similar.is_empty() {
        let name = path.absolute.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        return ToolError::new(format!("{shown} does not exist; find the file with glob, e.g. pattern \"**/{name}\""));
    }
    let display_dir = Path::new(shown.as_str()).parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let listed: Vec<String> = similar
        .iter()
        .map(|name| if display_dir.is_empty() { name.clone() } else { format!("{display_dir}/{name}") })
        .collect();
    ToolError::new(format!("{shown} does not exist. Did you mean: {}?", listed.join(", ")))
}

/// Entries of `dir` whose name matches the missing file's ignoring case, or share its stem.
fn similar_names(dir: &Path, missing: &Path) -> Vec<String> {
    let Some(name) = missing.file_name().map(|n| n.to_string_lossy().to_lowercase()) else { return Vec::new() };
    let stem = missing.file_stem().map(|s| s.to_string_lossy().to_lowercase()).unwrap_or_default();
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|candidate| {
            let lower = candidate.to_lowercase();
            let candidate_stem = Path::new(&lower).file_stem().map(|s| s.to_string_lossy().into_owned());
            lower == name || (!stem.is_empty() && candidate_stem.as_deref() == Some(stem.as_str()))
        })
        .collect();
    found.sort();
    found.truncate(5);
    found
}

/// Whether the start of a file holds a NUL byte, the usual sign of a binary file.
pub(super) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// `line`, cut to `max` characters with a marker saying how long it was.
pub(super) fn cut_line(line: &str, max: usize) -> Cow<'_, str> {
    match line.char_indices().nth(max) {
        None => Cow::Borrowed(line),
        Some((end, _)) => Cow::Owned(format!("{}… [line truncated, {} chars]", &line[..end], line.chars().count())),
    }
}

/// The numbered listing of the lines in `window`, with notes for what is not shown, and the
/// fingerprint of the whole file. Streams `file`: what it holds is the window, never the file.
fn render(shown: &str, file: impl Read, window: Window) -> Result<(String, u64), ToolError> {
    let failed = |e: std::io::Error| ToolError::new(format!("cannot read {shown}: {e}"));
    let mut file = file;
    let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
    (&mut file).take(BINARY_SNIFF_BYTES as u64).read_to_end(&mut head).map_err(failed)?;
    if head.is_empty() {
        return Ok((format!("{shown} is empty (0 bytes)"), Fingerprinter::default().finish()));
    }
    let mut listing = Listing::new(window);
    listing.feed(&head);
    if looks_binary(&head) {
        // Binary: say how big it is without reading it.
        return Err(ToolError::new(format!("{shown} is a binary file ({} bytes); file_read shows text only", {
            let rest = std::io::copy(&mut file, &mut std::io::sink()).map_err(failed)?;
            head.len() as u64 + rest
        })));
    }
    let mut chunk = vec![0; READ_CHUNK_BYTES];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(failed(e)),
        };
        listing.feed(&chunk[..n]);
    }
    listing.finish(shown)
}

/// Counts the characters `String::from_utf8_lossy` makes of bytes fed piece by piece: each
/// valid character, and one U+FFFD per ill-formed sequence; a character split between pieces
/// is counted once.
#[derive(Default)]
struct LossyChars {
    /// The start of a character the last piece ended inside (at most three bytes).
    pending: Vec<u8>,
    count: usize,
    bytes: u64,
}

impl LossyChars {
    fn feed(&mut self, piece: &[u8]) {
        self.bytes += piece.len() as u64;
        let mut piece = piece;
        // Finish a split character with the first bytes of this piece.
        while !self.pending.is_empty() && !piece.is_empty() {
            self.pending.push(piece[0]);
            piece = &piece[1..];
            match std::str::from_utf8(&self.pending) {
                Ok(_) => {
                    self.count += 1;
                    self.pending.clear();
                }
                Err(e) if e.error_len().is_none() => {}
                Err(_) => {
                    // Not a character after all: re-count these bytes on their own.
                    let bytes = std::mem::take(&mut self.pending);
                    self.count_whole(&bytes);
                }
            }
        }
        self.count_whole(piece);
    }

    /// Count `bytes`, keeping an unfinished character at the end for the next piece.
    fn count_whole(&mut self, bytes: &[u8]) {
        for chunk in bytes.utf8_chunks() {
            self.count += chunk.valid().chars().count();
            let invalid = chunk.invalid();
            if invalid.is_empty() {
                continue;
            }
            let at_end = std::ptr::eq(invalid.as_ptr_range().end, bytes.as_ptr_range().end);
            if at_end && std::str::from_utf8(invalid).is_err_and(|e| e.error_len().is_none()) {
                self.pending.extend_from_slice(invalid);
            } else {
                self.count += 1;
            }
        }
    }

    fn finish(self) -> usize {
        self.count + usize::from(!self.pending.is_empty())
    }
}

/// The window's lines gathered from a file fed piece by piece, the count of all its lines, and
/// its fingerprint.
struct Listing {
    window: Window,
    last_wanted: usize,
    /// Line breaks seen so far: the current line is number `breaks + 1`.
    breaks: usize,
    /// The start of the current line, when it is in the window (at most `MAX_LINE_BYTES`).
    line: Vec<u8>,
    /// Characters of all of the current line, as a lossy decoding counts them.
    chars: LossyChars,
    /// The last byte of the current line so far.
    line_last: u8,
    last_byte: u8,
    invalid_utf8: bool,
    out: String,
    fingerprint: Fingerprinter,
}

impl Listing {
    fn new(window: Window) -> Listing {
        Listing {
            window,
            last_wanted: window.first.saturating_add(window.limit - 1),
            breaks: 0,
            line: Vec::new(),
            chars: LossyChars::default(),
            line_last: 0,
            last_byte: b'\n',
            invalid_utf8: false,
            out: String::new(),
            fingerprint: Fingerprinter::default(),
        }
    }

    fn in_window(&self) -> bool {
        (self.window.first..=self.last_wanted).contains(&(self.breaks + 1))
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        let Some(&last) = bytes.last() else { return };
        self.fingerprint.update(bytes);
        self.last_byte = last;
        while !bytes.is_empty() {
            if self.breaks + 1 > self.last_wanted {
                // Past the window: only count.
                self.breaks += memchr::memchr_iter(b'\n', bytes).count();
                return;
            }
            if !self.in_window() {
                // Before the window: skip to the next line break.
                match memchr::memchr(b'\n', bytes) {
                    Some(at) => {
                        self.breaks += 1;
                        bytes = &bytes[at + 1..];
                    }
                    None => return,
                }
                continue;
            }
            let (piece, ended) = match memchr::memchr(b'\n', bytes) {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            self.keep(piece);
            bytes = if ended { &bytes[piece.len() + 1..] } else { &[] };
            if ended {
                self.emit(true);
                self.breaks += 1;
            }
        }
    }

    /// Add part of the current (windowed) line, holding at most `MAX_LINE_BYTES` of it and
    /// counting the characters of all of it.
    fn keep(&mut self, piece: &[u8]) {
        let room = MAX_LINE_BYTES.saturating_sub(self.line.len()).min(piece.len());
        self.line.extend_from_slice(&piece[..room]);
        self.chars.feed(piece);
        if let Some(&last) = piece.last() {
            self.line_last = last;
        }
    }

    /// Write out the current line; `ended` when a line break closed it (its `\r` then goes,
    /// as `str::lines` drops it).
    fn emit(&mut self, ended: bool) {
        let mut bytes = std::mem::take(&mut self.line);
        let whole_line_held = bytes.len() as u64 == self.chars.bytes;
        let mut total = std::mem::take(&mut self.chars).finish();
        if ended && self.line_last == b'\r' {
            total -= 1;
            if whole_line_held {
                bytes.pop();
            }
        }
        self.line_last = 0;
        let text = String::from_utf8_lossy(&bytes);
        let cut = total > MAX_LINE_CHARS;
        // Flag invalid bytes only where they are shown: a cut line shows its first characters.
        if let Err(e) = std::str::from_utf8(&bytes) {
            let valid_chars = String::from_utf8_lossy(&bytes[..e.valid_up_to()]).chars().count();
            self.invalid_utf8 |= !cut || valid_chars < MAX_LINE_CHARS;
        }
        let number = self.breaks + 1;
        if cut {
            // The first characters lie well inside what was held (see `MAX_LINE_BYTES`).
            let end = text.char_indices().nth(MAX_LINE_CHARS).map_or(text.len(), |(end, _)| end);
            self.out.push_str(&format!("{number:>6}\t{}… [line truncated, {total} chars]\n", &text[..end]));
        } else {
            self.out.push_str(&format!("{number:>6}\t{text}\n"));
        }
    }

    fn finish(mut self, shown: &str) -> Result<(String, u64), ToolError> {
        // A last line without a line break is a line too (as `str::lines` counts).
        let total = if self.last_byte == b'\n' { self.breaks } else { self.breaks + 1 };
        if self.last_byte != b'\n' && self.in_window() {
            self.emit(false);
        }
        let window = self.window;
        if window.first > total {
            return Err(ToolError::new(format!(
                "offset {} is past the end of {shown}, which has {total} line{}; use an offset from 1 to {total}",
                window.first,
                if total == 1 { "" } else { "s" }
            )));
        }
        let mut out = if self.invalid_utf8 {
            format!("[not valid UTF-8: invalid bytes shown as \u{FFFD}]\n{}", self.out)
        } else {
            self.out
        };
        let last_shown = self.last_wanted.min(total);
        if last_shown < total {
            out.push_str(&format!(
                "[showing lines {}–{last_shown} of {total}; continue with offset={}]\n",
                window.first,
                last_shown + 1
            ));
        } else if window.first > 1 {
            out.push_str(&format!("[showing lines {}–{total} of {total}; end of file]\n", window.first));
        }
        // The listing ends without a newline, like every other tool result.
        out.truncate(out.trim_end_matches('\n').len());
        Ok((out, self.fingerprint.finish()))
    }
}

#[cfg(test)]
#[path = "file_read_tests.rs"]
mod tests;
