use serde_json::json;

use super::*;
use crate::tools::FileTracker;
use crate::tools::test_support::{project, run};

async fn read(ctx: &ToolContext, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
    run(&FileRead, ctx, args).await
}

#[tokio::test]
async fn read_numbers_lines_like_cat_n_and_records_the_file() {
    let (_d, ctx) = project();
    std::fs::write(ctx.root.join("main.rs"), "fn main() {\n}\n").unwrap();
    let out = read(&ctx, json!({"path": "main.rs"})).await.unwrap();
    assert_eq!(out.content, "     1\tfn main() {\n     2\t}");
    assert!(!out.is_error);
    assert_eq!(ctx.files.changed_since_seen(&ctx.root.join("main.rs"), b"fn main() {\n}\n"), Some(false));
}

#[tokio::test]
async fn read_window_says_where_to_continue() {
    let (_d, ctx) = project();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ctx.root.join("a.txt"), text).unwrap();
    let out = read(&ctx, json!({"path": "a.txt", "offset": 3, "limit": 2})).await.unwrap();
    assert_eq!(out.content, "     3\tline 3\n     4\tline 4\n[showing lines 3–4 of 10; continue with offset=5]");
    let tail = read(&ctx, json!({"path": "a.txt", "offset": 9})).await.unwrap();
    assert_eq!(tail.content, "     9\tline 9\n    10\tline 10\n[showing lines 9–10 of 10; end of file]");
}

#[tokio::test]
async fn read_uses_the_configured_default_limit() {
    let (_d, mut ctx) = project();
    ctx.config.read_default_lines = 3;
    std::fs::write(ctx.root.join("a.txt"), "1\n2\n3\n4\n5").unwrap();
    let out = read(&ctx, json!({"path": "a.txt"})).await.unwrap();
    assert!(out.content.ends_with("     3\t3\n[showing lines 1–3 of 5; continue with offset=4]"), "{}", out.content);
}

#[tokio::test]
async fn read_offset_past_the_end_names_the_line_count() {
    let (_d, ctx) = project();
    std::fs::write(ctx.root.join("a.txt"), "one\ntwo\nthree").unwrap();
    let err = read(&ctx, json!({"path": "a.txt", "offset": 7})).await.unwrap_err();
    assert!(err.0.contains("has 3 lines"), "{err}");
}

#[tokio::test]
async fn read_of_empty_file_says_it_is_empty() {
    let (_d, ctx) = project();
    std::fs::write(ctx.root.join("empty.txt"), "").unwrap();
    let out = read(&ctx, json!({"path": "empty.txt"})).await.unwrap();
    assert_eq!(out.content, "empty.txt is empty (0 bytes)");
}

#[tokio::test]
async fn read_cuts_very_long_lines() {
    let (_d, ctx) = project();
    std::fs::write(ctx.root.join("min.js"), format!("{}\nshort\n", "é".repeat(5000))).unwrap();
    let out = read(&ctx, json!({"path": "min.js"})).await.unwrap();
    let first = out.content.lines().next().unwrap();
    assert!(first.ends_with("… [line truncated, 5000 chars]"), "{first}");
    assert_eq!(first.chars().filter(|&c| c == 'é').count(), MAX_LINE_CHARS);
    assert!(out.content.ends_with("     2\tshort"));
}

#[tokio::test]
async fn read_strips_crlf_line_endings() {
    let (_d, ctx) = project();
    std::fs::write(ctx.root.join("dos.txt"), "a\r\nb\r\n").unwrap();
    let out = read(&ctx, json!({"path": "dos.txt"})).await.unwrap();
    assert_eq!(out.content, "     1\ta\n     2\tb");
}

#[tokio::test]
async fn read_of_directory_suggests_glob() {
    let (_d, ctx) = project();
    std::fs::create_dir(ctx.root.join("src")).unwrap();
    let err = read(&ctx, json!({"path": "src"})).await.unwrap_err();
    assert!(err.0.contains("is a directory") && err.0.contains("glob"), "{err}");
}

#[tokio::test]
async fn read_of_missing_file_suggests_similar_names() {
    let (_d, ctx) = project();
    std::fs::create_dir(ctx.root.join("src")).unwrap();
    std::fs::write(ctx.root.join("src/Main.rs"), "").unwrap();
    std::fs::write(ctx.root.join("src/lib.ts"), "").unwrap();
    std::fs::write(ctx.root.join("src/other.rs"), "").unwrap();
    let err = read(&ctx, json!({"path": "src/main.rs"})).await.unwrap_err();
    assert!(err.0.contains("src/main.rs does not exist. Did you mean: src/Main.rs?"), "{err}");
    let err = read(&ctx, json!({"path": "src/lib.rs"})).await.unwrap_err();
    assert!(err.0.contains("Did you mean: src/lib.ts?"), "{err}");
    let err = read(&ctx, json!({"path": "src/nothing.rs"})).await.unwrap_err();
    assert!(err.0.contains("does not exist") && err.0.contains("**/nothing.rs"), "{err}");
    assert!(!ctx.files.knows(&ctx.root.join("src/nothing.rs")));
}

#[tokio::test]
async fn read_of_binary_file_is_an_error_result() {
    let (_d, ctx) = project();
    std::fs::write(ctx.root.join("logo.bin"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let err = read(&ctx, json!({"path": "logo.bin"})).await.unwrap_err();
    assert_eq!(err.0, "logo.bin is a binary file (16 bytes); file_read shows text only");
    assert!(!ctx.files.knows(&ctx.root.join("logo.bin")));
}

#[tokio::test]
async fn read_of_non_utf8_file_says_so() {
    let (_d, ctx) = project();
    std::fs::write(ctx.root.join("latin1.txt"), b"caf\xe9\nok\n").unwrap();
    let out = read(&ctx, json!({"path": "latin1.txt"})).await.unwrap();
    assert_eq!(out.content, "[not valid UTF-8: invalid bytes shown as \u{FFFD}]\n     1\tcaf\u{FFFD}\n     2\tok");
    assert!(ctx.files.knows(&ctx.root.join("latin1.txt")));
}

#[tokio::test]
async fn read_rejects_a_zero_limit_and_explains_bad_arguments() {
    let (_d, ctx) = project();
    let err = read(&ctx, json!({"path": "a", "limit": 0})).await.unwrap_err();
    assert!(err.0.contains("limit must be at least 1"), "{err}");
    let err = read(&ctx, json!({"file": "a"})).await.unwrap_err();
    assert!(err.0.starts_with("file_read: bad arguments") && err.0.contains("\"path\""), "{err}");
}

#[test]
fn prepare_lists_the_resolved_path_for_the_policy() {
    let (_d, ctx) = project();
    let prepared = FileRead.prepare(&json!({"path": "../outside.txt", "junk": 1}), &ctx).unwrap();
    assert_eq!(prepared.paths.len(), 1);
    assert!(!prepared.paths[0].inside_project);
    assert_eq!(prepared.summary, prepared.paths[0].display);
}

/// A reader that hands out its bytes in the given piece sizes, cycling.
struct Pieces<'a> {
    bytes: &'a [u8],
    sizes: Vec<usize>,
    next: usize,
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = self.sizes[self.next % self.sizes.len()].max(1).min(buf.len()).min(self.bytes.len());
        self.next += 1;
        buf[..size].copy_from_slice(&self.bytes[..size]);
        self.bytes = &self.bytes[size..];
        Ok(size)
    }
}

/// What file_read showed when it held the whole file: the reference the stream must match.
fn whole_file_listing(bytes: &[u8], window: Window) -> Result<String, String> {
    let text = String::from_utf8_lossy(bytes);
    let last_wanted = window.first.saturating_add(window.limit - 1);
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    if window.first > total {
        return Err(format!("past the end ({total})"));
    }
    let mut out = String::new();
    let mut invalid = false;
    for (i, line) in lines.iter().enumerate().take(last_wanted).skip(window.first - 1) {
        let shown = cut_line(line, MAX_LINE_CHARS);
        invalid |= shown.contains('\u{FFFD}');
        out.push_str(&format!("{:>6}\t{shown}\n", i + 1));
    }
    if invalid {
        out.insert_str(0, "[not valid UTF-8: invalid bytes shown as \u{FFFD}]\n");
    }
    let last_shown = last_wanted.min(total);
    if last_shown < total {
        out.push_str(&format!(
            "[showing lines {}–{last_shown} of {total}; continue with offset={}]\n",
            window.first,
            last_shown + 1
        ));
    } else if window.first > 1 {
        out.push_str(&format!("[showing lines {}–{total} of {total}; end of file]\n", window.first));
    }
    Ok(out.trim_end_matches('\n').to_string())
}

use proptest::prelude::Strategy as _;

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
    #[test]
    fn streaming_shows_what_the_whole_file_showed(
        parts in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::prelude::Just("a".to_string()),
                proptest::prelude::Just("é".to_string()),
                proptest::prelude::Just("😀".to_string()),
                proptest::prelude::Just("\n".to_string()),
                proptest::prelude::Just("\r\n".to_string()),
                proptest::prelude::Just("\r".to_string()),
                (1usize..3000).prop_map(|n| "é".repeat(n)),
                (1usize..9000).prop_map(|n| "x".repeat(n)),
            ],
            0..40,
        ),
        invalid_at in proptest::option::of(0usize..20_000),
        first in 1usize..12,
        limit in 1usize..12,
        sizes in proptest::collection::vec(1usize..5000, 1..5),
    ) {
        let mut bytes = parts.concat().into_bytes();
        if let Some(at) = invalid_at.filter(|&at| at < bytes.len()) {
            bytes.insert(at, 0xff);
        }
        let window = Window { first, limit };
        let streamed = render("f", Pieces { bytes: &bytes, sizes, next: 0 }, window);
        if bytes.is_empty() {
            proptest::prop_assert_eq!(streamed.unwrap().0, "f is empty (0 bytes)");
        } else {
            match (streamed, whole_file_listing(&bytes, window)) {
                (Ok((text, fingerprint)), Ok(expected)) => {
                    proptest::prop_assert_eq!(text, expected);
                    let tracker = FileTracker::default();
                    tracker.record(Path::new("f"), &bytes);
                    let whole = FileTracker::default();
                    whole.record_fingerprint(Path::new("f"), fingerprint);
                    proptest::prop_assert_eq!(whole.changed_since_seen(Path::new("f"), &bytes), Some(false));
                }
                (Err(e), Err(_)) => proptest::prop_assert!(e.0.contains("past the end"), "{}", e.0),
                (got, want) => proptest::prop_assert!(false, "streamed {:?}, whole {:?}", got.map(|g| g.0), want),
            }
        }
    }
}

fn write_png(path: &std::path::Path, w: u32, h: u32) {
    image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])).save(path).unwrap();
}

#[tokio::test]
async fn reading_an_image_returns_the_image_scaled_to_the_caps() {
    let (_d, mut ctx) = project();
    ctx.config.image_max_edge_px = 400;
    write_png(&ctx.root.join("shot.png"), 1_000, 500);
    let out = read(&ctx, json!({"path": "shot.png", "limit": 10})).await.unwrap();
    let image = out.image.expect("an image block");
    assert_eq!((image.width, image.height, image.media_type.as_str()), (400, 200, "image/png"));
    assert!(out.content.starts_with("shot.png: image, 1000×500"), "{}", out.content);
    assert!(out.content.contains("offset and limit apply to text files"), "{}", out.content);
}

#[tokio::test]
async fn an_image_that_is_not_one_is_an_error_that_says_so() {
    let (_d, ctx) = project();
    std::fs::write(ctx.root.join("fake.png"), "plain text").unwrap();
    let err = read(&ctx, json!({"path": "fake.png"})).await.unwrap_err();
    assert_eq!(err.0, "fake.png is not a PNG, JPEG, GIF or WebP image");
    let missing = read(&ctx, json!({"path": "nope.png"})).await.unwrap_err();
    assert!(missing.0.contains("does not exist"), "{}", missing.0);
}
