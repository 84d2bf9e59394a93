use super::*;

/// A PNG of `w`×`h` pixels: smooth gradients, or noise (which compresses badly).
fn png(w: u32, h: u32, noisy: bool) -> Vec<u8> {
    let mut seed = 7u32;
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        if noisy {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let v = (seed >> 8) as u8;
            image::Rgb([v, v.wrapping_mul(3), v.wrapping_add(x as u8)])
        } else {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
        }
    });
    let mut out = Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(img).write_to(&mut out, ImageFormat::Png).unwrap();
    out.into_inner()
}

fn decoded(image: &Image) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(&image.data).unwrap()
}

const LIMITS: ImageLimits = ImageLimits { max_edge: 1_568, max_bytes: 1_000_000 };

#[test]
fn an_image_within_the_caps_is_sent_byte_for_byte() {
    let raw = png(320, 200, false);
    let loaded = prepare(raw.clone(), "small.png", LIMITS).unwrap();
    assert_eq!(decoded(&loaded.image), raw);
    assert_eq!((loaded.image.width, loaded.image.height, loaded.image.media_type.as_str()), (320, 200, "image/png"));
    assert_eq!(loaded.describe(), format!("small.png: PNG image, 320×200 ({} KB)", raw.len().div_ceil(1000)));
}

#[test]
fn a_large_image_is_scaled_to_the_edge_cap_keeping_its_shape() {
    let loaded = prepare(png(3_000, 2_000, false), "big.png", LIMITS).unwrap();
    assert_eq!((loaded.image.width, loaded.image.height), (1_568, 1_045));
    assert_eq!((loaded.original_width, loaded.original_height), (3_000, 2_000));
    let sent = decoded(&loaded.image);
    assert!(sent.len() <= LIMITS.max_bytes);
    assert_eq!(image::guess_format(&sent).unwrap(), ImageFormat::Png, "a screenshot stays lossless when it fits");
    assert!(loaded.describe().contains("sent as PNG 1568×1045"), "{}", loaded.describe());
}

#[test]
fn an_image_too_heavy_for_the_byte_cap_becomes_a_smaller_jpeg() {
    let limits = ImageLimits { max_edge: 1_568, max_bytes: 200_000 };
    let loaded = prepare(png(1_200, 900, true), "noise.png", limits).unwrap();
    let sent = decoded(&loaded.image);
    assert!(sent.len() <= limits.max_bytes, "{} bytes", sent.len());
    assert_eq!(loaded.image.media_type, "image/jpeg");
    assert_eq!(image::guess_format(&sent).unwrap(), ImageFormat::Jpeg);
    let (w, h) = ImageReader::new(Cursor::new(&sent)).with_guessed_format().unwrap().into_dimensions().unwrap();
    assert_eq!((w, h), (loaded.image.width, loaded.image.height), "the dimensions said are the ones sent");
}

#[test]
fn files_that_are_not_images_are_refused_by_their_bytes() {
    let err = prepare(b"not an image at all".to_vec(), "fake.png", LIMITS).unwrap_err();
    assert_eq!(err, "fake.png is not a PNG, JPEG, GIF or WebP image");
    let mut truncated = png(100, 100, false);
    truncated.truncate(20);
    assert!(prepare(truncated, "cut.png", LIMITS).unwrap_err().contains("not a readable image"));
}

#[test]
fn image_paths_are_known_by_extension() {
    assert!(is_image_path(Path::new("docs/shot.PNG")));
    assert!(is_image_path(Path::new("a.jpeg")) && is_image_path(Path::new("a.webp")));
    assert!(!is_image_path(Path::new("src/main.rs")) && !is_image_path(Path::new("png")));
}
