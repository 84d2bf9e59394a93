//! Nothing forgotten (issue 9): facts planted in the middle of tool outputs the model read
//! whole survive one, two and five compactions; a long first message is carried line for line;
//! pruning never clears a short result nor leaves a placeholder longer than what it replaced.
//! Through the real binary, against a mock whose window is enforced and whose summariser keeps
//! what it is shown (the pipeline's part is to show it).

use serde_json::json;

use crate::support::aux_calls::{AuxCall, trailing_sections};
use crate::support::cairn::{Api, Sandbox, json_result, text, tool_results};
use crate::support::mock_llm::{MockLlm, RecordedRequest, Reply, Script, Turn};

/// The planted facts: an exact error line, a path, a number — each in the middle of a file.
const FACTS: [&str; 3] = [
    "E   AssertionError: expected 4217 rows in orders_2024, got 4216",
    "the fixture generator writes to /srv/fixtures/orders/2024-q3.parquet",
    "checksum of the golden file: 0x5F3A9C11",
];

fn is_compaction(req: &RecordedRequest) -> bool {
    AuxCall::of(req) == Some(AuxCall::Compaction)
}

fn is_auxiliary(req: &RecordedRequest) -> bool {
    AuxCall::of(req).is_some()
}

/// The text a request carries: every text and tool result, whatever the wire.
fn request_text(req: &RecordedRequest) -> String {
    let mut out = Vec::new();
    for m in req.messages() {
        match &m["content"] {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(blocks) => {
                for b in blocks {
                    match (&b["text"], &b["content"]) {
                        (serde_json::Value::String(t), _) | (_, serde_json::Value::String(t)) => out.push(t.clone()),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out.join("\n")
}

/// A summariser that keeps what it is shown — the conversation it reads in place, the previous
/// summary included: every line that states an error, a path or a number — and numbers its
/// summaries.
fn keeping_summariser(window: u64) -> Script {
    let count = std::sync::atomic::AtomicUsize::new(0);
    Script::new().context_window(window).responder(move |req| {
        AuxCall::of(req)?;
        let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let mut kept: Vec<String> = Vec::new();
        for line in request_text(req).lines().map(|l| l.trim().trim_start_matches("- ")) {
            let telling = line.contains("Error") || line.contains("/srv/") || line.contains("0x");
            if telling && !kept.iter().any(|k| k.contains(line)) {
                kept.push(format!("- {line}"));
            }
        }
        let trailing = trailing_sections(req, "Read a few data files.", r#"{"memories": []}"#);
        Some(Reply::Turn(Turn::text(format!(
            "## Goal\nCheck the data files.\n## Critical Context\n{}\n## Done — do not repeat\n- read data files (summary #{n}){trailing}",
            kept.join("\n")
        ))))
    })
}

/// A data file of `lines` lines with `fact` at line 60 (4.9 kB for 90 lines), or none.
fn data_file(i: usize, lines: usize, fact: Option<&str>) -> String {
    (0..lines)
        .map(|n| match (n, fact) {
            (60, Some(f)) => format!("{f}\n"),
            _ => format!("record {i:02}-{n:03} | status nominal | region west | batch complete\n"),
        })
        .collect()
}

#[tokio::test]
async fn planted_facts_survive_five_compactions_and_the_first_message_is_carried_line_for_line() {
    let sandbox = Sandbox::new();
    // A first message of ~10,000 characters, every line distinct.
    let goal: String = (0..135)
        .map(|n| format!("requirement {n:03}: every data file must be checked for row counts and paths\n"))
        .collect();
    assert!(goal.len() > 9_500 && goal.len() <= 10_000, "{}", goal.len());
    let mut script = keeping_summariser(32_000);
    for i in 0..70 {
        let fact = FACTS.get(i).copied();
        sandbox.write(&format!("data/d{i:02}.txt"), &data_file(i, 90, fact));
        script = script.turn(Turn::tool("file_read", json!({"path": format!("data/d{i:02}.txt")})));
        if i % 5 == 4 {
            // A short output, under the pruning floor, with its own exact lines.
            script = script.turn(Turn::tool("bash", json!({"command": format!("echo checked {i}")})));
        }
    }
    let mock = MockLlm::start(script.turn(Turn::text("All files checked."))).await;
    let out = sandbox
        .run(Api::Anthropic, &mock, &["-p", &goal, "--yes", "--output-format", "json", "--context-window", "32000"])
        .await;
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    let summaries = mock.requests().iter().filter(|r| is_compaction(r)).count();
    assert!(summaries >= 5, "{summaries} compactions");
    assert!(json_result(&out)["context"]["compactions"].as_u64().unwrap() >= 5);

    let agent: Vec<RecordedRequest> = mock.requests().into_iter().filter(|r| !is_auxiliary(r)).collect();
    for n in [1, 2, 5] {
        let marker = format!("(summary #{n})");
        let after: Vec<&RecordedRequest> = agent.iter().filter(|r| r.body.to_string().contains(&marker)).collect();
        assert!(!after.is_empty(), "summary #{n} was sent");
        for req in after {
            let sent = request_text(req);
            assert!(!sent.contains("record 00-000"), "the first file itself is long gone after compaction {n}");
            for fact in FACTS {
                assert!(sent.contains(fact), "{fact:?} kept after compaction {n}");
            }
            for line in goal.lines() {
                assert!(sent.contains(line), "{line:?} carried verbatim after compaction {n}");
            }
        }
    }
    // What pruning may do to results it never keeps short or makes longer.
    let originals: std::collections::HashMap<String, usize> = agent
        .iter()
        .flat_map(tool_results)
        .filter(|(_, content, _)| !content.starts_with("[Old ") && !content.starts_with("[Same output"))
        .map(|(id, content, _)| (id, content.len()))
        .collect();
    for (id, content, _) in agent.iter().flat_map(tool_results) {
        if content.starts_with("[Old ") {
            let original = originals[&id];
            assert!(content.len() < original, "{id}: a placeholder longer than what it replaced");
            assert!(original > 640, "{id}: a result under the floor was pruned");
        }
        if content.starts_with("checked ") {
            assert!(content.contains("[exit code 0]"), "short results are sent whole: {content}");
        }
    }
}
