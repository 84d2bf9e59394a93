//! The API key never leaves cairn: not through an error that quotes it, not through cairn's own
//! environment to a command it runs.

use serde_json::json;

use crate::support::cairn::{Api, KEY, Sandbox, json_result, last_result, text};
use crate::support::mock_llm::{Fault, MockLlm, Script, Turn};

async fn an_echoed_key_is_redacted(api: Api) {
    let sandbox = Sandbox::new();
    let body = json!({
        "type": "error",
        "error": {"type": "authentication_error", "message": format!("invalid x-api-key: {KEY} is revoked")}
    });
    let mock =
        MockLlm::start(Script::new().fault(Fault::Status { code: 401, retry_after: None, body: Some(body) })).await;
    let out = sandbox.run(api, &mock, &["-p", "hi", "--output-format", "json"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let result = json_result(&out);
    let message = result["result"].as_str().unwrap();
    assert!(message.contains("is revoked") && message.contains("[REDACTED"), "{message}");
    for (name, stream) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(!text(stream).contains("SECRETSECRET"), "the key reached {name}: {}", text(stream));
    }
    for file in sandbox.home_files() {
        let bytes = std::fs::read(&file).unwrap();
        assert!(!String::from_utf8_lossy(&bytes).contains("SECRETSECRET"), "the key reached {}", file.display());
    }
}

#[tokio::test]
async fn a_key_echoed_in_an_anthropic_error_is_redacted() {
    an_echoed_key_is_redacted(Api::Anthropic).await;
}

#[tokio::test]
async fn a_key_echoed_in_an_openai_error_is_redacted() {
    an_echoed_key_is_redacted(Api::OpenAi).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_command_cannot_read_the_key_from_cairns_environment() {
    let sandbox = Sandbox::new();
    let command = "tr '\\0' '\\n' < /proc/$PPID/environ | grep -c SECRETSECRET; \
                   tr '\\0' '\\n' < /proc/$PPID/environ | grep -c '^CAIRN_HOME='; \
                   env | grep -c SECRETSECRET; true";
    let mock =
        MockLlm::start(Script::new().turn(Turn::tool("bash", json!({"command": command}))).turn(Turn::text("looked")))
            .await;
    let out = sandbox.run(Api::Anthropic, &mock, &["-p", "look", "--yes", "--output-format", "json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_result(&out)["result"], "looked");
    let requests = mock.requests();
    let output = last_result(&requests[1]);
    let counts: Vec<&str> = output.lines().map(str::trim).filter(|l| l.parse::<u32>().is_ok()).collect();
    if output.contains("environ: Permission denied") {
        // The sandbox keeps a command out of cairn's environment altogether (Landlock refuses
        // another domain's /proc/PID/environ); the key is in neither environment.
        assert_eq!(counts, ["0", "0", "0"], "{output}");
    } else {
        // Unconfined: the parent really is cairn (its CAIRN_HOME is there), and the key is not.
        assert_eq!(counts, ["0", "1", "0"], "{output}");
    }
    // The key still reached the provider, where it belongs.
    assert_eq!(requests[1].header("x-api-key"), Some(KEY));
}
