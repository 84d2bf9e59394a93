//! Images as the model is sent them: a PNG, JPEG, GIF or WebP file read, checked by its bytes
//! (not its name), scaled down to the configured edge and byte caps with the `image` crate, and
//! base64-encoded once. Used by `file_read` and by prompt attachments (`@shot.png`).
//!
//! An image already within the caps is sent as it is, byte for byte; one that is not is
//! decoded, resized (aspect kept) and re-encoded: PNG for PNG and GIF (screenshots, diagrams),
//! JPEG for photos or when PNG stays too large.

use std::io::Cursor;
use std::path::Path;

use base64::Engine;
use image::{DynamicImage, ImageFormat, ImageReader};

use crate::config::ToolsConfig;
use crate::conversation::Image;

/// Files larger than this are not read at all: no screenshot is, and decoding one would take
/// hundreds of megabytes.
const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;
/// Pixels decoded at most (a 16k × 16k image); larger images are refused, not decoded.
const MAX_DECODED_PIXELS: u64 = 16_384 * 16_384;
/// Quality of re-encoded JPEGs: text in screenshots stays legible.
const JPEG_QUALITY: u8 = 85;
/// Each further attempt to fit the byte cap scales the image by this much.
const SHRINK_STEP: f64 = 0.75;
const MAX_ATTEMPTS: usize = 6;

/// The extensions taken for images (a file whose bytes say otherwise is still refused).
const EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// How large an image may be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageLimits {
    pub max_edge: u32,
    pub max_bytes: usize,
}

impl ImageLimits {
    pub fn from_config(config: &ToolsConfig) -> ImageLimits {
        ImageLimits { max_edge: config.image_max_edge_px, max_bytes: config.image_max_bytes }
    }
}

/// An image made ready, and what was done to it, for the note beside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    pub image: Image,
    pub original_width: u32,
    pub original_height: u32,
    pub original_bytes: usize,
}

impl Loaded {
    /// `shot.png: PNG image, 3000×2000 (2.1 MB), scaled to 1568×1045 (412 KB)`.
    pub fn describe(&self) -> String {
        let kind = self.image.media_type.strip_prefix("image/").unwrap_or("").to_ascii_uppercase();
        let size = format!("{}×{} ({})", self.original_width, self.original_height, bytes(self.original_bytes));
        let sent = base64::engine::general_purpose::STANDARD.decode(&self.image.data).map_or(0, |b| b.len());
        if (self.image.width, self.image.height) == (self.original_width, self.original_height)
            && sent == self.original_bytes
        {
            format!("{}: {kind} image, {size}", self.image.source)
        } else {
            format!(
                "{}: image, {size}, sent as {kind} {}×{} ({})",
                self.image.source,
                self.image.width,
                self.image.height,
                bytes(sent)
            )
        }
    }
}

fn bytes(n: usize) -> String {
    if n >= 1_000_000 { format!("{:.1} MB", n as f64 / 1_000_000.0) } else { format!("{} KB", n.div_ceil(1_000)) }
}

/// Whether `path` names an image by its extension.
pub fn is_image_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|known| known.eq_ignore_ascii_case(e)))
}

/// Reads `path` as an image within `limits`; `source` names it for people. Errors say what was
/// wrong in words for the model or the user.
pub fn load(path: &Path, source: &str, limits: ImageLimits) -> Result<Loaded, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {source}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{source} is not a file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{source} is {} — too large to send as an image (at most {})",
            bytes(meta.len() as usize),
            bytes(MAX_FILE_BYTES as usize)
        ));
    }
    let raw = std::fs::read(path).map_err(|e| format!("cannot read {source}: {e}"))?;
    prepare(raw, source, limits)
}

/// [`load`] for bytes already read.
pub fn prepare(raw: Vec<u8>, source: &str, limits: ImageLimits) -> Result<Loaded, String> {
    let format = image::guess_format(&raw)
        .ok()
        .filter(|f| matches!(f, ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP))
        .ok_or_else(|| format!("{source} is not a PNG, JPEG, GIF or WebP image"))?;
    let (width, height) = ImageReader::with_format(Cursor::new(&raw), format)
        .into_dimensions()
        .map_err(|e| format!("{source} is not a readable image: {e}"))?;
    if width == 0 || height == 0 {
        return Err(format!("{source} has no pixels"));
    }
    let original_bytes = raw.len();
    let fits = width.max(height) <= limits.max_edge && raw.len() <= limits.max_bytes;
    let image = if fits {
        Image {
            media_type: media_type(format).to_string(),
            data: base64::engine::general_purpose::STANDARD.encode(&raw),
            width,
            height,
            source: source.to_string(),
        }
    } else {
        if width as u64 * height as u64 > MAX_DECODED_PIXELS {
            return Err(format!("{source} is {width}×{height} pixels, too large to decode; crop or scale it first"));
        }
        let decoded = image::load_from_memory_with_format(&raw, format)
            .map_err(|e| format!("{source} is not a readable image: {e}"))?;
        drop(raw);
        shrink(&decoded, format, source, limits)?
    };
    Ok(Loaded { image, original_width: width, original_height: height, original_bytes })
}

fn media_type(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "image/png",
        ImageFormat::Gif => "image/gif",
        ImageFormat::WebP => "image/webp",
        _ => "image/jpeg",
    }
}

/// Scaled to fit the edge cap, then smaller still until the encoding fits the byte cap.
fn shrink(decoded: &DynamicImage, format: ImageFormat, source: &str, limits: ImageLimits) -> Result<Image, String> {
    let (width, height) = (decoded.width(), decoded.height());
    let mut edge = limits.max_edge.min(width.max(height)) as f64;
    // Diagrams and screenshots keep their sharp edges as PNG; photos are JPEG.
    let lossless_first = matches!(format, ImageFormat::Png | ImageFormat::Gif);
    for _ in 0..MAX_ATTEMPTS {
        let scale = edge / width.max(height) as f64;
        let w = ((width as f64 * scale).round() as u32).max(1);
        let h = ((height as f64 * scale).round() as u32).max(1);
        let resized = if (w, h) == (width, height) {
            decoded.clone()
        } else {
            decoded.resize_exact(w, h, image::imageops::FilterType::Triangle)
        };
        let mut encodings = Vec::new();
        if lossless_first {
            encodings.push(ImageFormat::Png);
        }
        encodings.push(ImageFormat::Jpeg);
        for target in encodings {
            let encoded = encode(&resized, target).map_err(|e| format!("{source} could not be re-encoded: {e}"))?;
            if encoded.len() <= limits.max_bytes {
                return Ok(Image {
                    media_type: media_type(target).to_string(),
                    data: base64::engine::general_purpose::STANDARD.encode(&encoded),
                    width: w,
                    height: h,
                    source: source.to_string(),
                });
            }
        }
        edge *= SHRINK_STEP;
    }
    Err(format!("{source} could not be made smaller than {} without losing it; crop it first", bytes(limits.max_bytes)))
}

fn encode(image: &DynamicImage, format: ImageFormat) -> Result<Vec<u8>, image::ImageError> {
    let mut out = Cursor::new(Vec::new());
    match format {
        ImageFormat::Jpeg => {
            // JPEG has no alpha: flatten onto white, as a viewer would show it.
            let rgb = flatten(image);
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY).encode_image(&rgb)?;
        }
        _ => image.write_to(&mut out, ImageFormat::Png)?,
    }
    Ok(out.into_inner())
}

fn flatten(image: &DynamicImage) -> image::RgbImage {
    if !image.color().has_alpha() {
        return image.to_rgb8();
    }
    let rgba = image.to_rgba8();
    image::RgbImage::from_fn(rgba.width(), rgba.height(), |x, y| {
        let [r, g, b, a] = rgba.get_pixel(x, y).0;
        let blend = |c: u8| ((c as u16 * a as u16 + 255 * (255 - a as u16)) / 255) as u8;
        image::Rgb([blend(r), blend(g), blend(b)])
    })
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
