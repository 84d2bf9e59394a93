//! Images end to end: `@shot.png` in a prompt and `file_read` of a PNG reach the Anthropic,
//! chat completions and Responses requests as image blocks, scaled to the caps; a model
//! without vision gets a note instead, and no error.

use base64::Engine;
use serde_json::{Value, json};

use crate::support::cairn::{Api, KEY, Sandbox, json_result, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::Screen;

/// A 2400×1600 screenshot-like PNG: well over the 1568-pixel edge cap.
fn screenshot_png() -> &'static [u8] {
    static PNG: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    PNG.get_or_init(|| {
        let img = image::RgbImage::from_fn(2_400, 1_600, |x, y| image::Rgb([(x / 10) as u8, (y / 7) as u8, 200]));
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    })
}

fn write_screenshot(sandbox: &Sandbox, rel: &str) {
    let path = sandbox.project.path().join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, screenshot_png()).unwrap();
}

/// Every image a request carries, whatever the wire: (media type, base64 data).
fn images(body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut visit = |v: &Value| {
        if v["type"] == "image" && v["source"]["type"] == "base64" {
            out.push((
                v["source"]["media_type"].as_str().unwrap_or("").into(),
                v["source"]["data"].as_str().unwrap_or("").into(),
            ));
        }
        let url = match v["type"].as_str() {
            Some("image_url") => v["image_url"]["url"].as_str(),
            Some("input_image") => v["image_url"].as_str(),
            _ => None,
        };
        if let Some((kind, data)) = url.and_then(|u| u.strip_prefix("data:")).and_then(|u| u.split_once(";base64,")) {
            out.push((kind.to_string(), data.to_string()));
        }
    };
    fn walk(v: &Value, f: &mut dyn FnMut(&Value)) {
        f(v);
        match v {
            Value::Array(items) => items.iter().for_each(|i| walk(i, f)),
            Value::Object(map) => map.values().for_each(|i| walk(i, f)),
            _ => {}
        }
    }
    walk(body, &mut visit);
    out
}

/// Width, height and byte size of an encoded image.
fn measure(data: &str) -> (u32, u32, usize) {
    let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    let (w, h) =
        image::ImageReader::new(std::io::Cursor::new(&bytes)).with_guessed_format().unwrap().into_dimensions().unwrap();
    (w, h, bytes.len())
}

fn assert_bounded(images: &[(String, String)]) {
    assert_eq!(images.len(), 1, "one image");
    let (w, h, bytes) = measure(&images[0].1);
    assert_eq!((w, h), (1_568, 1_045), "scaled to the edge cap, shape kept");
    assert!(bytes <= 1_000_000, "{bytes} bytes");
}

#[tokio::test]
async fn an_attached_image_reaches_every_wire_as_a_bounded_image_block() {
    for api in [Api::Anthropic, Api::OpenAi, Api::OpenAiResponses] {
        let sandbox = Sandbox::new();
        write_screenshot(&sandbox, "shot.png");
        let mock = MockLlm::start(Script::new().turn(Turn::text("A gradient."))).await;
        let out = sandbox.run(api, &mock, &["-p", "what is in @shot.png?", "--output-format", "json"]).await;
        assert!(out.status.success(), "{api:?}: {}", text(&out.stderr));
        assert_eq!(json_result(&out)["result"], "A gradient.");
        assert!(mock.problems().is_empty(), "{api:?}: {:#?}", mock.problems());
        let request = &mock.requests()[0];
        assert_bounded(&images(&request.body));
        assert!(request.body.to_string().contains("what is in @shot.png?"), "{api:?}: the prompt's words go too");
        // Stored once, with the message; exported as a description, not as data.
        let id = json_result(&out)["session_id"].as_str().unwrap().to_string();
        let export = sandbox.run(api, &mock, &["export", &id]).await;
        let lines: Vec<Value> = text(&export.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let first = lines.iter().find(|l| l["role"] == "user").unwrap();
        assert_eq!(first["content"], "what is in @shot.png?");
        assert_eq!(
            first["images"],
            json!([{"media_type": "image/png", "width": 1568, "height": 1045, "source": "shot.png"}])
        );
        assert!(!text(&export.stdout).contains("iVBORw0KGgo"), "no image data in the export");
        if api == Api::Anthropic {
            // What was attached, and what was sent, is said once (stream-json's `attached` line).
            let mock = MockLlm::start(Script::new().turn(Turn::text("ok"))).await;
            let streamed = sandbox.run(api, &mock, &["-p", "and @shot.png?", "--output-format", "stream-json"]).await;
            let lines = crate::support::cairn::json_lines(&streamed);
            let attached = lines.iter().find(|l| l["type"] == "attached").expect("an attached line");
            assert_eq!(
                (&attached["items"][0]["path"], &attached["items"][0]["attached"]),
                (&json!("shot.png"), &json!(true))
            );
            let detail = attached["items"][0]["detail"].as_str().unwrap();
            assert!(detail.starts_with("image, 2400×1600") && detail.contains("sent as PNG 1568×1045"), "{detail}");
        }
    }
}

#[tokio::test]
async fn file_read_of_an_image_returns_the_image_to_the_model() {
    for api in [Api::Anthropic, Api::OpenAi, Api::OpenAiResponses] {
        let sandbox = Sandbox::new();
        write_screenshot(&sandbox, "docs/shot.png");
        let mock = MockLlm::start(
            Script::new().turn(Turn::tool("file_read", json!({"path": "docs/shot.png"}))).turn(Turn::text("Seen.")),
        )
        .await;
        let out = sandbox.run(api, &mock, &["-p", "look at the screenshot", "--output-format", "json"]).await;
        assert!(out.status.success(), "{api:?}: {}", text(&out.stderr));
        assert!(mock.problems().is_empty(), "{api:?}: {:#?}", mock.problems());
        let requests = mock.requests();
        assert!(images(&requests[0].body).is_empty());
        assert_bounded(&images(&requests[1].body));
        let result = crate::support::cairn::last_result(&requests[1]);
        assert!(result.starts_with("docs/shot.png: image, 2400×1600"), "{api:?}: {result}");
    }
}

#[tokio::test]
async fn a_model_without_vision_gets_a_note_and_no_error() {
    let sandbox = Sandbox::new();
    write_screenshot(&sandbox, "shot.png");
    let mock = MockLlm::start(Script::new().models(&["local-coder"]).turn(Turn::text("I cannot see images."))).await;
    let out = sandbox
        .bare_command(&["-p", "what is in @shot.png?", "--model", "local-coder", "--output-format", "json"])
        .env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", mock.openai_base_url())
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let body = &mock.requests()[0].body;
    assert!(images(body).is_empty(), "no image data for a model without vision");
    let sent = body.to_string();
    assert!(sent.contains("[image shot.png ("), "{sent}");
    assert!(sent.contains("not shown: local-coder does not take image input"), "{sent}");
}

#[tokio::test]
async fn an_attachment_that_cannot_be_read_is_reported_and_the_prompt_still_goes() {
    let sandbox = Sandbox::new();
    sandbox.write("fake.png", "this is text, not a PNG");
    let mock = MockLlm::start(Script::new().turn(Turn::text("ok"))).await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", "see @fake.png and @missing.png", "--output-format", "stream-json"])
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = crate::support::cairn::json_lines(&out);
    let attached = lines.iter().find(|l| l["type"] == "attached").expect("an attached line");
    assert_eq!(
        attached["items"],
        json!([
            {"path": "fake.png", "detail": "fake.png is not a PNG, JPEG, GIF or WebP image", "attached": false},
            {"path": "missing.png", "detail": "not a file here", "attached": false},
        ])
    );
    assert!(images(&mock.requests()[0].body).is_empty());
}

/// A screenshot dragged onto the terminal: the terminal pastes its path (outside the project,
/// with an escaped space), and the prompt sent with it carries the image.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_image_path_in_the_composer_attaches_the_image() {
    let sandbox = Sandbox::new();
    let shots = tempfile::tempdir().unwrap();
    let shot = shots.path().join("Screen Shot.png");
    std::fs::write(&shot, screenshot_png()).unwrap();
    let pasted = shot.display().to_string().replace(' ', "\\ ");
    let mock = MockLlm::start(Script::new().turn(Turn::text("A blue gradient."))).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        screen.wait("the prompt", |s| s.contains("EDIT"));
        screen.send(&format!("\x1b[200~{pasted}\x1b[201~"));
        screen.type_text(" what is this?");
        screen.send("\r");
        let done = screen.wait("the answer", |s| s.contains("A blue gradient."));
        assert!(done.contains("Screen Shot.png · image, 2400×1600"), "{done}");
        assert!(done.contains("sent as PNG 1568×1045"), "{done}");
        screen.send("\x03\x03");
    });
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let request = &mock.requests()[0];
    assert_bounded(&images(&request.body));
    assert!(request.body.to_string().contains("what is this?"));
}
