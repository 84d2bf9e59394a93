use super::*;
use crate::context::ledger::Ledger;
use crate::context::state::ContextState;
use crate::conversation::{Block, Message, ToolCall, ToolResult};

fn call(ledger: &mut Ledger, seq: &mut i64, id: &str, tool: &str, args: &str, out: &str) {
    let mut m = Message::assistant("");
    m.content.push(Block::ToolCall(ToolCall::new(id, tool, args)));
    *seq += 1;
    ledger.push(*seq, m);
    *seq += 1;
    ledger.push(*seq, Message::tool(ToolResult::ok(id, tool, out)));
}

fn tokens(ledger: &Ledger) -> Vec<u64> {
    ledger.entries().iter().map(|e| e.tokens).collect()
}

/// An effective window large enough that the seed's constants apply unscaled.
const BIG: u64 = 1_000_000;

fn small_config() -> ContextConfig {
    ContextConfig { prune_protect_tokens: 1_000, prune_min_savings_tokens: 2_000, ..Default::default() }
}

#[test]
fn one_long_user_turn_is_still_prunable_outside_its_last_tool_groups() {
    let mut l = Ledger::new(3.2);
    let mut seq = 1;
    l.push(seq, Message::user("fix everything"));
    for n in 0..12 {
        call(
            &mut l,
            &mut seq,
            &format!("c{n}"),
            "bash",
            &format!(r#"{{"command":"make step{n}"}}"#),
            &"output line\n".repeat(400),
        );
    }
    let plan = plan(&l, &ContextState::default(), &small_config(), &tokens(&l), 1, BIG);
    assert!(plan.pruned_results > 0, "a single user turn must not protect everything");
    let pruned: Vec<String> = plan
        .actions
        .iter()
        .filter_map(|a| if let PruneAction::Replace { call_id, .. } = a { Some(call_id.clone()) } else { None })
        .collect();
    for protected in ["c8", "c9", "c10", "c11"] {
        assert!(!pruned.contains(&protected.to_string()), "the last tool groups stay: {pruned:?}");
    }
}

#[test]
fn the_last_two_user_turns_are_protected() {
    let mut l = Ledger::new(3.2);
    let mut seq = 0;
    for turn in 0..4 {
        seq += 1;
        l.push(seq, Message::user(format!("turn {turn}")));
        call(&mut l, &mut seq, &format!("t{turn}"), "bash", r#"{"command":"ls"}"#, &format!("x{turn}\n").repeat(3000));
    }
    let config = ContextConfig { prune_protect_tokens: 0, prune_min_savings_tokens: 100, ..Default::default() };
    let plan = plan(&l, &ContextState::default(), &config, &tokens(&l), u64::MAX, BIG);
    let ids: Vec<_> = plan.actions.iter().map(|a| format!("{a:?}")).collect();
    assert_eq!(plan.pruned_results, 2, "{ids:?}");
    assert!(ids.iter().all(|a| !a.contains("t2") && !a.contains("t3")), "{ids:?}");
}

#[test]
fn nothing_is_pruned_when_the_possible_saving_is_too_small() {
    let mut l = Ledger::new(3.2);
    let mut seq = 1;
    l.push(seq, Message::user("go"));
    for n in 0..8 {
        call(&mut l, &mut seq, &format!("c{n}"), "bash", r#"{"command":"ls"}"#, "tiny");
    }
    assert_eq!(plan(&l, &ContextState::default(), &small_config(), &tokens(&l), 1, BIG), PrunePlan::default());
}

#[test]
fn savings_count_the_placeholder_itself() {
    let mut l = Ledger::new(3.2);
    let mut seq = 1;
    l.push(seq, Message::user("go"));
    // Results barely longer than their placeholder save (almost) nothing and are not worth it.
    for n in 0..30 {
        call(
            &mut l,
            &mut seq,
            &format!("c{n}"),
            "bash",
            r#"{"command":"ls"}"#,
            "a b c d e f g h i j k l m n o p q r s t u v w x y z",
        );
    }
    let config = ContextConfig { prune_protect_tokens: 0, prune_min_savings_tokens: 1, ..Default::default() };
    let plan = plan(&l, &ContextState::default(), &config, &tokens(&l), u64::MAX, BIG);
    let naive: u64 = l.entries().iter().filter(|e| e.facts.is_some()).map(|e| e.tokens).sum();
    assert!(plan.saved_tokens < naive / 2, "saved {} of {naive}: placeholders cost tokens too", plan.saved_tokens);
}

#[test]
fn commands_go_before_reads_and_referenced_results_are_kept_longest() {
    let mut l = Ledger::new(3.2);
    let mut seq = 1;
    l.push(seq, Message::user("go"));
    let body = "some content line that is long enough\n".repeat(200);
    call(&mut l, &mut seq, "read_kept", "file_read", r#"{"path":"src/engine.rs"}"#, &body);
    seq += 1;
    l.push(seq, Message::assistant("engine.rs holds the main loop; I'll use its retry helper."));
    call(&mut l, &mut seq, "read_plain", "file_read", r#"{"path":"src/other.rs"}"#, &body);
    call(&mut l, &mut seq, "cmd", "bash", r#"{"command":"cargo build"}"#, &body);
    for n in 0..4 {
        call(&mut l, &mut seq, &format!("recent{n}"), "glob", r#"{"pattern":"*"}"#, "a");
    }
    let config = ContextConfig { prune_protect_tokens: 0, prune_min_savings_tokens: 1, ..Default::default() };
    let per_result = l.entries().iter().find(|e| e.facts.is_some()).unwrap().tokens;
    // Enough for about one and a half results: the two least valuable go.
    let plan = plan(&l, &ContextState::default(), &config, &tokens(&l), per_result * 3 / 2, BIG);
    let order: Vec<String> = plan
        .actions
        .iter()
        .filter_map(|a| if let PruneAction::Replace { call_id, .. } = a { Some(call_id.clone()) } else { None })
        .collect();
    assert_eq!(order, ["cmd", "read_plain"], "bash first; the referenced read survives");
}

#[test]
fn placeholders_keep_tool_target_whole_command_exit_code_and_error_lines() {
    let mut l = Ledger::new(3.2);
    let mut seq = 1;
    l.push(seq, Message::user("go"));
    let failing = format!(
        "{}error[E0308]: mismatched types\n  --> src/parse.rs:41:9\n{}test result: FAILED. 3 passed; 1 failed\n[exit code 101]",
        "   Compiling x\n".repeat(200),
        "note\n".repeat(200)
    );
    call(&mut l, &mut seq, "b", "bash", r#"{"command":"cd crates/core &&\ncargo test --all"}"#, &failing);
    call(
        &mut l,
        &mut seq,
        "m",
        "bash",
        r#"{"command":"python reproduce.py"}"#,
        &format!(
            "<returncode>2</returncode>\n<output>\n{}Traceback (most recent call last):\nValueError: bad row 4217\n</output>",
            "x\n".repeat(300)
        ),
    );
    call(
        &mut l,
        &mut seq,
        "r",
        "file_read",
        r#"{"path":"src/lib.rs","offset":10,"limit":20}"#,
        "…\n[showing lines 10–29 of 300; continue with offset=30]",
    );
    let config = ContextConfig::default();
    let facts = |id: &str| l.entries().iter().find_map(|e| e.facts.clone().filter(|f| f.call_id == id)).unwrap();
    let content = |id: &str| {
        l.entries()
            .iter()
            .find_map(|e| e.message.tool_result().filter(|r| r.call_id == id).map(|r| r.content.clone()))
            .unwrap()
    };
    let cargo = placeholder(&facts("b"), &content("b"), &config);
    assert_eq!(
        cargo,
        "[Old bash output cleared: `cd crates/core &&\ncargo test --all` exit 101, 404 lines; rerun a narrower command if needed]\nIts error lines, verbatim:\nerror[E0308]: mismatched types\ntest result: FAILED. 3 passed; 1 failed",
        "the whole command, the exit code and the errors"
    );
    let python = placeholder(&facts("m"), &content("m"), &config);
    assert!(python.contains("exit 2,"), "the recorded shells' <returncode>: {python}");
    assert!(python.contains("ValueError: bad row 4217"), "{python}");
    assert_eq!(
        placeholder(&facts("r"), &content("r"), &config),
        "[Old file_read output cleared for src/lib.rs (lines 10–29); read it again if needed]"
    );
}

#[test]
fn short_results_and_results_a_placeholder_would_not_shorten_are_never_pruned() {
    let mut l = Ledger::new(3.2);
    let mut seq = 1;
    l.push(seq, Message::user("go"));
    // Under the 200-token floor: three lines with an exact path and error.
    call(&mut l, &mut seq, "tiny", "bash", r#"{"command":"ls"}"#, "src/a.rs: error: no such file\n[exit code 2]");
    // Over the floor, but its error lines would make the placeholder longer than itself.
    let errors = "error: boom at src/x.rs line 1\n".repeat(40);
    call(&mut l, &mut seq, "errs", "bash", r#"{"command":"make"}"#, &format!("{errors}[exit code 1]"));
    for n in 0..12 {
        call(
            &mut l,
            &mut seq,
            &format!("c{n}"),
            "bash",
            r#"{"command":"make"}"#,
            &format!("line {n} of output\n").repeat(300),
        );
    }
    let config = ContextConfig { placeholder_error_chars: 5_000, ..small_config() };
    let plan = plan(&l, &ContextState::default(), &config, &tokens(&l), 1_000_000, BIG);
    let pruned: Vec<&str> = plan
        .actions
        .iter()
        .filter_map(|a| match a {
            PruneAction::Replace { call_id, text, index, .. } => {
                let original = l.entries()[*index].message.tool_result().unwrap().content.len();
                assert!(text.len() < original, "{call_id}: the placeholder is shorter than what it replaces");
                Some(call_id.as_str())
            }
            PruneAction::Shrink { .. } => None,
        })
        .collect();
    assert!(!pruned.is_empty());
    assert!(!pruned.contains(&"tiny") && !pruned.contains(&"errs"), "{pruned:?}");
}

#[test]
fn long_arguments_of_old_calls_shrink_to_valid_json() {
    let content = "x".repeat(5_000);
    let args = serde_json::json!({"path": "big.txt", "content": content}).to_string();
    let shrunk = shrink_arguments(&args, 500).unwrap();
    let v: serde_json::Value = serde_json::from_str(&shrunk).expect("still valid JSON");
    assert_eq!(v["path"], "big.txt");
    assert!(v["content"].as_str().unwrap().contains("more characters omitted"));
    assert!(shrunk.len() < 600);
    assert_eq!(shrink_arguments("{not json", 10), None);
}

#[test]
fn small_windows_scale_protection_and_the_minimum_down() {
    let mut l = Ledger::new(3.2);
    let mut seq = 1;
    l.push(seq, Message::user("go"));
    for n in 0..16 {
        call(
            &mut l,
            &mut seq,
            &format!("c{n}"),
            "bash",
            r#"{"command":"make"}"#,
            &format!("line {n} of output\n").repeat(300),
        );
    }
    let seed = ContextConfig::default();
    assert_eq!(
        plan(&l, &ContextState::default(), &seed, &tokens(&l), 1, BIG),
        PrunePlan::default(),
        "200k-sized constants: nothing"
    );
    let plan = plan(&l, &ContextState::default(), &seed, &tokens(&l), 1, 24_000);
    assert!(plan.pruned_results > 0, "a 32k window still prunes");
}
