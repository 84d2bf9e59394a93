//! A fake llama-server for the lifecycle tests that run in CI (the real one is built only for
//! the opt-in `local_server` tests): the integration-test binary re-run on one ignored test
//! (`local_lifecycle::fake_llama_process`) through a shell script cairn starts as its
//! `[local] server`. It takes llama-server's arguments, prints loading dots, answers `/health`
//! 503 until "loaded", then `/health`, `/props`, `/v1/models`, `/tokenize`, `/apply-template`
//! and streamed `/v1/chat/completions` with `timings` — on loopback, as its own process.
//!
//! Its tokenizer is words: every whitespace-separated word is a token. Its chat template puts
//! `<|im_start|> ROLE` before and `<|im_end|>` after each message: three tokens of framing.
//!
//! Steered by the environment cairn passes on: `CAIRN_TEST_FAKE_LLAMA_PIDS` (a file each
//! process appends its pid to) and `CAIRN_TEST_FAKE_LLAMA_DIE` (a marker file: the first chat
//! request kills the server, once). A model file holding "crash on load" fails to load.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// The arguments cairn gave the server, one a line (the test binary cannot take them itself).
pub const ARGS_ENV: &str = "CAIRN_TEST_FAKE_LLAMA_ARGS";
pub const PIDS_ENV: &str = "CAIRN_TEST_FAKE_LLAMA_PIDS";
pub const DIE_ENV: &str = "CAIRN_TEST_FAKE_LLAMA_DIE";
/// A file each `/tokenize` request appends its number of texts to (a line a request).
pub const TOKENIZE_LOG_ENV: &str = "CAIRN_TEST_FAKE_LLAMA_TOKENIZE_LOG";
/// Milliseconds each `/tokenize` answer takes.
pub const TOKENIZE_DELAY_ENV: &str = "CAIRN_TEST_FAKE_LLAMA_TOKENIZE_DELAY_MS";

/// The script cairn runs as llama-server: it hands its arguments over in the environment and
/// becomes the test binary on the fake's test.
pub fn server_script(dir: &Path) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = dir.join("fake-llama-server");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n{ARGS_ENV}=\"$(printf '%s\\n' \"$@\")\" exec '{}' --ignored --exact local_lifecycle::fake_llama_process --nocapture --test-threads=1\n",
            exe.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// A file that looks like a GGUF model to cairn's check.
pub fn model(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("GGUF\u{3}\0\0\0{body}")).unwrap();
    path
}

/// The fake's tokenizer: words.
pub fn tokens(text: &str) -> usize {
    text.split_whitespace().count()
}

struct Fake {
    /// Per slot.
    ctx: u64,
    slots: u64,
    alias: String,
    model: String,
    loaded: AtomicBool,
    /// The words of the last prompt, for the cache figures.
    cached: Mutex<Vec<String>>,
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

/// Run the fake until killed.
pub fn serve() {
    let args: Vec<String> = std::env::var(ARGS_ENV).unwrap_or_default().lines().map(str::to_string).collect();
    let port: u16 = arg(&args, "--port").and_then(|p| p.parse().ok()).expect("--port");
    let model = arg(&args, "--model").expect("--model");
    if let Ok(file) = std::env::var(PIDS_ENV) {
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(file).unwrap();
        writeln!(f, "{}", std::process::id()).unwrap();
    }
    let slots: u64 = arg(&args, "--parallel").and_then(|c| c.parse().ok()).unwrap_or(1);
    let fake = Arc::new(Fake {
        ctx: arg(&args, "--ctx-size").and_then(|c| c.parse::<u64>().ok()).unwrap_or(4096) / slots,
        slots,
        alias: arg(&args, "--alias").unwrap_or_else(|| model.clone()),
        model: model.clone(),
        loaded: AtomicBool::new(false),
        cached: Mutex::default(),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        let router = axum::Router::new()
            .route("/health", get(health))
            .route("/props", get(props))
            .route("/v1/models", get(models))
            .route("/tokenize", post(tokenize))
            .route("/apply-template", post(apply_template))
            .route("/v1/chat/completions", post(chat))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        eprintln!("llama_model_loader: loaded meta data from {model}");
        let crash = std::fs::read_to_string(&model).unwrap_or_default().contains("crash on load");
        for step in 0..10 {
            if crash && step == 3 {
                eprintln!("\nllama_model_load: error loading model: tensor 'blk.0.attn_q.weight' has wrong shape");
                std::process::exit(1);
            }
            eprint!("..........");
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        eprintln!("\nmain: server is listening on http://127.0.0.1:{port}");
        fake.loaded.store(true, Ordering::SeqCst);
        std::future::pending::<()>().await;
    });
}

async fn health(State(fake): State<Arc<Fake>>) -> Response {
    if fake.loaded.load(Ordering::SeqCst) {
        Json(json!({"status": "ok"})).into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"error": {"code": 503, "message": "Loading model"}})))
            .into_response()
    }
}

async fn props(State(fake): State<Arc<Fake>>) -> Json<Value> {
    Json(
        json!({"default_generation_settings": {"n_ctx": fake.ctx}, "total_slots": fake.slots, "model_path": fake.model}),
    )
}

async fn models(State(fake): State<Arc<Fake>>) -> Json<Value> {
    Json(json!({"object": "list", "data": [{"id": fake.alias, "object": "model"}]}))
}

fn word_id(word: &str) -> i64 {
    word.bytes().fold(7i64, |h, b| (h * 31 + i64::from(b)) % 100_000)
}

async fn tokenize(Json(body): Json<Value>) -> Json<Value> {
    if let Some(ms) = std::env::var(TOKENIZE_DELAY_ENV).ok().and_then(|v| v.parse().ok()) {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
    let words = |text: &str| text.split_whitespace().map(word_id).collect::<Vec<i64>>();
    let mut ids = Vec::new();
    let mut texts = 0;
    match &body["content"] {
        Value::String(s) => {
            texts = 1;
            ids.extend(words(s));
        }
        Value::Array(parts) => {
            for p in parts {
                match p {
                    Value::String(s) => {
                        texts += 1;
                        ids.extend(words(s));
                    }
                    other => ids.push(other.as_i64().unwrap_or(0)),
                }
            }
        }
        _ => {}
    }
    if let Ok(log) = std::env::var(TOKENIZE_LOG_ENV) {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
        writeln!(file, "{texts}").unwrap();
    }
    Json(json!({"tokens": ids}))
}

/// The text of a message's content, as the template renders it.
fn content(message: &Value) -> String {
    let mut text = match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    };
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        text.push_str(&format!(
            "{{\"name\": {}, \"arguments\": {}}}",
            call["function"]["name"],
            call["function"]["arguments"].as_str().unwrap_or("{}")
        ));
    }
    text
}

fn render(body: &Value) -> String {
    let mut prompt = String::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        prompt.push_str(&format!(
            "<|im_start|> {}\n {} <|im_end|>\n",
            m["role"].as_str().unwrap_or("user"),
            content(m)
        ));
    }
    prompt.push_str("<|im_start|> assistant\n");
    prompt
}

async fn apply_template(Json(body): Json<Value>) -> Json<Value> {
    Json(json!({"prompt": render(&body)}))
}

async fn chat(State(fake): State<Arc<Fake>>, Json(body): Json<Value>) -> Response {
    if let Ok(marker) = std::env::var(DIE_ENV)
        && !Path::new(&marker).exists()
    {
        std::fs::write(&marker, "died").unwrap();
        eprintln!("fake llama-server: dying as asked");
        std::process::exit(3);
    }
    if !fake.loaded.load(Ordering::SeqCst) {
        // As llama-server: nothing is served while the model loads.
        return (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"error": {"code": 503, "message": "Loading model"}})))
            .into_response();
    }
    let words: Vec<String> = render(&body).split_whitespace().map(str::to_string).collect();
    let cache_n = {
        let mut cached = fake.cached.lock().unwrap();
        let shared = cached.iter().zip(&words).take_while(|(a, b)| a == b).count();
        *cached = words.clone();
        shared
    };
    let answer = ["Hello", " from", " the", " fake", " llama-server."];
    let mut events = String::new();
    for piece in answer {
        let chunk = json!({"model": fake.alias, "choices": [{"index": 0, "delta": {"content": piece}}]});
        events.push_str(&format!("data: {chunk}\n\n"));
    }
    let finish = json!({"model": fake.alias, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    events.push_str(&format!("data: {finish}\n\n"));
    let prompt = words.len();
    let last = json!({
        "model": fake.alias, "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": answer.len(), "total_tokens": prompt + answer.len()},
        "timings": {"cache_n": cache_n, "prompt_n": prompt - cache_n, "prompt_ms": (prompt - cache_n) as f64 * 0.5,
                    "predicted_n": answer.len(), "predicted_ms": answer.len() as f64 * 20.0},
    });
    events.push_str(&format!("data: {last}\n\ndata: [DONE]\n\n"));
    ([(axum::http::header::CONTENT_TYPE, "text/event-stream")], events).into_response()
}
