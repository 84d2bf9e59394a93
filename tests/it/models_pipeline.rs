//! Thinking and images in the context pipeline: both are counted by the budget (an image by
//! its token cost, not its base64), images read by tools are dropped from old turns when
//! pruning clears their results, and thinking stays in the message of the calls it led to.

use cairn::config::ContextConfig;
use cairn::context::{BudgetLevel, ContextBudget, CostModel, Pipeline, PreflightInput, check_request};
use cairn::conversation::{Block, Image, Message, Role, Thinking, ThinkingSource, ToolCall, ToolResult};

fn image(n: usize) -> Image {
    // 1200×900 pixels: about 1,440 tokens, whatever the length of its (here fake) data.
    Image {
        media_type: "image/png".into(),
        data: "A".repeat(400_000),
        width: 1_200,
        height: 900,
        source: format!("shot{n}.png"),
    }
}

fn thinking(n: usize) -> Block {
    Block::Thinking(Thinking {
        source: ThinkingSource::Anthropic,
        model: "claude-sonnet-4-5".into(),
        text: format!("Step {n}: look at the next screenshot."),
        signature: format!("sig{n}"),
        redacted: false,
        id: None,
        summary: Vec::new(),
    })
}

/// One prompt, then `n` steps that each think, read a screenshot and get the image back.
fn session(n: usize) -> Pipeline {
    let mut p = Pipeline::new(ContextConfig::default());
    let mut seq = 0;
    let mut push = |p: &mut Pipeline, m: Message| {
        seq += 1;
        p.append(seq, m);
    };
    push(&mut p, Message::user("compare every screenshot"));
    for i in 0..n {
        let id = format!("c{i}");
        let call = Block::ToolCall(ToolCall::new(&id, "file_read", format!(r#"{{"path":"shot{i}.png"}}"#)));
        push(&mut p, Message { role: Role::Assistant, content: vec![thinking(i), call] });
        let mut result = Message::tool(ToolResult::ok(&id, "file_read", format!("shot{i}.png: PNG image, 1200×900")));
        result.content.push(Block::Image(image(i)));
        push(&mut p, result);
    }
    p
}

fn input(p: &Pipeline, window: u64) -> PreflightInput {
    PreflightInput {
        budget: ContextBudget::new(window, p.config()),
        overhead: 2_000,
        now: 1_000_000,
        compaction_running: false,
        compaction_allowed: false,
    }
}

#[test]
fn images_count_by_their_token_cost_not_their_base64() {
    let mut one = session(1);
    let mut two = session(2);
    let step = two.estimate(2_000, 200_000) - one.estimate(2_000, 200_000);
    // An image of 1200×900 costs ~1,440 tokens (counted at 4 characters a token, so the rough
    // estimate errs high); its 400 kB of base64 would be 125,000.
    assert!((1_500..2_500).contains(&step), "one more step is {step} tokens");
}

#[test]
fn pruning_drops_old_images_with_their_results_and_keeps_thinking_with_its_calls() {
    let window = 120_000;
    let mut p = session(60);
    // Without a prompt cache any reduction pays, so pruning runs (with one, the cost model may
    // rather keep the cached prefix; then images stay exactly as old tool output does).
    p.set_cost_model(CostModel::no_cache(3.0, 15.0));
    let before = p.estimate(2_000, window);
    let pre = p.preflight(&input(&p, window));
    assert!(pre.level < BudgetLevel::Blocking, "{pre:?}");
    assert!(pre.tokens < before, "pruning saved something: {} → {}", before, pre.tokens);
    let view = p.view(window);
    assert_eq!(check_request(&view), Ok(()));
    let with_image: Vec<usize> =
        (0..view.len()).filter(|&i| view[i].role == Role::Tool && view[i].images().next().is_some()).collect();
    let without: Vec<usize> =
        (0..view.len()).filter(|&i| view[i].role == Role::Tool && view[i].images().next().is_none()).collect();
    assert!(!without.is_empty(), "old images were dropped: {pre:?}");
    assert!(!with_image.is_empty(), "the newest images are kept");
    assert!(without.iter().max() < with_image.iter().min(), "the oldest go first: {without:?} / {with_image:?}");
    for m in view.iter().filter(|m| m.has_tool_calls()) {
        assert!(matches!(m.content[0], Block::Thinking(_)), "thinking stays first in its call's message");
    }
}
