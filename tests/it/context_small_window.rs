//! No thrash at a small window: in a 16k window, where cairn's own system prompt and tools take
//! a third of it, a session of short prompts that each read a file compacts at most once every
//! three prompts, and no request is over the window.

use serde_json::json;

use crate::support::aux_calls::AuxCall;
use crate::support::cache_check::prompt_in_session;
use crate::support::cairn::{Api, Sandbox};
use crate::support::mock_llm::{MockLlm, Reply, Script, Turn};

#[tokio::test]
async fn a_16k_window_compacts_at_most_once_every_three_prompts() {
    let sandbox = Sandbox::new();
    let prompts = 15;
    let mut script = Script::new().context_window(16_000).responder(|req| {
        (AuxCall::of(req) == Some(AuxCall::Compaction)).then(|| {
            Reply::Turn(Turn::text(
                "## Goal\nExplain the modules one by one.\n## Done — do not repeat\n- explained some modules",
            ))
        })
    });
    for i in 0..prompts {
        // ~2.4 kB: about 600 tokens of output a prompt.
        let body: String = (0..60).map(|n| format!("pub fn step_{i}_{n}() -> u32 {{ {n} }}\n")).collect();
        sandbox.write(&format!("src/m{i}.rs"), &body);
        script = script
            .turn(Turn::tool("file_read", json!({"path": format!("src/m{i}.rs")})))
            .turn(Turn::text(format!("m{i}.rs defines sixty steps.")));
    }
    let mock = MockLlm::start(script).await;
    let mut session = None;
    for i in 0..prompts {
        let prompt = format!("what is in src/m{i}.rs?");
        prompt_in_session(&sandbox, Api::Anthropic, &mock, &mut session, &prompt, &["--context-window", "16000"]).await;
    }
    assert!(mock.problems().is_empty(), "no request over the window: {:#?}", mock.problems());
    let compactions = mock.requests().iter().filter(|r| AuxCall::of(r).is_some()).count();
    assert!(compactions >= 1, "the window did force some");
    assert!(compactions * 3 <= prompts, "{compactions} compactions in {prompts} prompts");
}
