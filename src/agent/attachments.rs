//! What a prompt attaches: `@shot.png` (or a pasted path of an image file, as a terminal pastes
//! a dragged file: `/home/me/shot.png`, `'/tmp/my shot.png'`, `/tmp/my\ shot.png`,
//! `file:///tmp/shot.png`) becomes the image itself, sent with the prompt's text. The text is
//! kept as written, so the model reads which file each image is.
//!
//! One function, [`user_message`], turns a prompt into the user message the turn stores; other
//! kinds of attachment (text files named with `@path`) belong here beside images.

use std::path::{Path, PathBuf};

use crate::agent::events::Attachment;
use crate::conversation::{Block, Message};
use crate::tools::image::{self, ImageLimits};

/// At most this many images from one prompt: more is almost surely a pasted listing, not a
/// set of screenshots.
const MAX_IMAGES: usize = 8;

/// The user message a prompt becomes, and each image it named as the transcript lists it:
/// attached (its size and what was sent) or not (and why).
#[derive(Debug)]
pub struct Attached {
    pub message: Message,
    pub items: Vec<Attachment>,
}

/// `prompt` as a user message: its text, after the images it names (images first, as
/// Anthropic recommends). `root` and `cwd` resolve relative paths (cwd first).
pub async fn user_message(prompt: &str, root: &Path, cwd: &Path, limits: ImageLimits) -> Attached {
    let mentions = image_mentions(prompt);
    if mentions.is_empty() {
        return Attached { message: Message::user(prompt), items: Vec::new() };
    }
    let (root, cwd) = (root.to_path_buf(), cwd.to_path_buf());
    let loaded = tokio::task::spawn_blocking(move || load_all(&mentions, &root, &cwd, limits)).await;
    let (loaded, notes) = match loaded {
        Ok(done) => done,
        Err(e) => (Vec::new(), vec![not_attached("images", &format!("they could not be read: {e}"))]),
    };
    let mut items: Vec<Attachment> = loaded
        .iter()
        .map(|l| {
            let described = l.describe();
            let detail = described.strip_prefix(&format!("{}: ", l.image.source)).unwrap_or(&described).to_string();
            Attachment { path: l.image.source.clone(), detail, attached: true }
        })
        .collect();
    items.extend(notes);
    let mut content: Vec<Block> = loaded.into_iter().map(|l| Block::Image(l.image)).collect();
    content.push(Block::Text { text: prompt.to_string() });
    Attached { message: Message { role: crate::conversation::Role::User, content }, items }
}

fn not_attached(path: &str, why: &str) -> Attachment {
    Attachment { path: path.to_string(), detail: why.to_string(), attached: false }
}

fn load_all(
    mentions: &[Mention],
    root: &Path,
    cwd: &Path,
    limits: ImageLimits,
) -> (Vec<image::Loaded>, Vec<Attachment>) {
    let mut images = Vec::new();
    let mut notes = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for mention in mentions {
        let Some(path) = resolve(&mention.path, root, cwd) else {
            // A pasted path that is not a file is just text; an @mention was meant as a file.
            if mention.explicit {
                notes.push(not_attached(&mention.path, "not a file here"));
            }
            continue;
        };
        if seen.contains(&path) {
            continue;
        }
        if images.len() == MAX_IMAGES {
            notes.push(not_attached(
                &mention.path,
                &format!("only the first {MAX_IMAGES} images of a prompt are attached"),
            ));
            continue;
        }
        match image::load(&path, &mention.path, limits) {
            Ok(loaded) => {
                tracing::info!(image = %loaded.describe(), "attached an image to the prompt");
                images.push(loaded);
                seen.push(path);
            }
            Err(e) => notes.push(not_attached(&mention.path, &e)),
        }
    }
    (images, notes)
}

/// A path named in a prompt; `explicit` when written `@path`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mention {
    path: String,
    explicit: bool,
}

/// The image paths a prompt names, in order: `@path` with an image extension, and whole
/// pasted paths (absolute, `~/`, `file://`, possibly quoted or with escaped spaces).
fn image_mentions(prompt: &str) -> Vec<Mention> {
    let mut out: Vec<Mention> = Vec::new();
    for token in tokens(prompt) {
        let (path, explicit) = match token.strip_prefix('@') {
            Some(rest) => (rest.to_string(), true),
            None => (token, false),
        };
        let path = path.strip_prefix("file://").map(str::to_string).unwrap_or(path);
        let pasted = path.starts_with('/') || path.starts_with("~/");
        // Punctuation a sentence puts after a path is not part of it.
        let path = path.trim_end_matches([',', ';', ')', '!', '?']).trim_end_matches('.').to_string();
        if (explicit || pasted) && image::is_image_path(Path::new(&path)) && !out.iter().any(|m| m.path == path) {
            out.push(Mention { path, explicit });
        }
    }
    out
}

/// Whitespace-separated words, where `'…'` and `"…"` quote spaces and `\ ` escapes one.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '\\') if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            // A quote opens only at the start of a word (or after `@`), not inside `don't`.
            (None, '\'' | '"') if current.is_empty() || current == "@" => quote = Some(c),
            (None, c) if c.is_whitespace() => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            (None, c) => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// An existing file the mention names: `~/` from the home folder, relative paths from `cwd`
/// then the project root.
fn resolve(path: &str, root: &Path, cwd: &Path) -> Option<PathBuf> {
    let expanded = match path.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME").map(|home| PathBuf::from(home).join(rest))?,
        None => PathBuf::from(path),
    };
    let candidates =
        if expanded.is_absolute() { vec![expanded] } else { vec![cwd.join(&expanded), root.join(&expanded)] };
    candidates.into_iter().find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(prompt: &str) -> Vec<(String, bool)> {
        image_mentions(prompt).into_iter().map(|m| (m.path, m.explicit)).collect()
    }

    #[test]
    fn mentions_and_pasted_paths_are_found_and_plain_words_are_not() {
        assert_eq!(paths("what is wrong in @shot.png?"), [("shot.png".to_string(), true)]);
        assert_eq!(
            paths("compare '/tmp/my shot.png' and /tmp/other\\ one.jpg, please"),
            [("/tmp/my shot.png".to_string(), false), ("/tmp/other one.jpg".to_string(), false)]
        );
        assert_eq!(paths("see file:///tmp/a.webp."), [("/tmp/a.webp".to_string(), false)]);
        // A bare relative name is a word, not an attachment; neither is an @mention of code.
        assert!(paths("the logo.png in docs/ is blurry; check @src/main.rs").is_empty());
        assert!(paths("don't touch it").is_empty());
        assert_eq!(paths("@a.png and @a.png again").len(), 1);
    }

    fn write_png(path: &Path) {
        ::image::RgbImage::from_fn(40, 30, |x, _| ::image::Rgb([x as u8, 0, 0])).save(path).unwrap();
    }

    #[tokio::test]
    async fn an_attached_image_comes_before_the_prompt_text_and_missing_ones_are_noted() {
        let dir = tempfile::tempdir().unwrap();
        write_png(&dir.path().join("shot.png"));
        let limits = ImageLimits { max_edge: 1_568, max_bytes: 1_000_000 };
        let prompt = "why is @shot.png red? also @gone.png";
        let attached = user_message(prompt, dir.path(), dir.path(), limits).await;
        let images: Vec<_> = attached.message.images().collect();
        assert_eq!(images.len(), 1);
        assert_eq!((images[0].width, images[0].source.as_str()), (40, "shot.png"));
        assert!(matches!(attached.message.content[0], Block::Image(_)), "images first");
        assert_eq!(attached.message.text(), prompt, "the text is kept as written");
        assert_eq!(attached.items.len(), 2);
        assert_eq!((attached.items[0].path.as_str(), attached.items[0].attached), ("shot.png", true));
        assert!(attached.items[0].detail.starts_with("PNG image, 40×30"), "{:?}", attached.items);
        assert_eq!(attached.items[1], not_attached("gone.png", "not a file here"));
        let plain = user_message("no images", dir.path(), dir.path(), limits).await;
        assert_eq!(plain.message, Message::user("no images"));
    }
}
