use super::*;
use crate::context::budget::ContextBudget;
use crate::context::compact::CompactionPlan;
use crate::conversation::{Block, Message, ToolCall, ToolResult};

struct Session {
    p: Pipeline,
    seq: i64,
}

impl Session {
    fn new(config: ContextConfig) -> Session {
        Session { p: Pipeline::new(config), seq: 0 }
    }

    fn push(&mut self, m: Message) {
        self.seq += 1;
        self.p.append(self.seq, m);
    }

    fn user(&mut self, text: &str) {
        self.push(Message::user(text));
    }

    fn call(&mut self, id: &str, tool: &str, args: &str, out: &str) {
        let mut m = Message::assistant("");
        m.content.push(Block::ToolCall(ToolCall::new(id, tool, args)));
        self.push(m);
        self.push(Message::tool(ToolResult::ok(id, tool, out)));
    }

    fn input(&self, window: u64) -> PreflightInput {
        PreflightInput {
            budget: ContextBudget::new(window, self.p.config()),
            overhead: 1_000,
            now: 1_000_000,
            compaction_running: false,
            compaction_allowed: true,
        }
    }

    fn view_texts(&mut self, window: u64) -> Vec<String> {
        self.p
            .view(window)
            .iter()
            .map(|m| format!("{:?}:{}", m.role, m.tool_result().map(|r| r.content.clone()).unwrap_or_else(|| m.text())))
            .collect()
    }
}

#[test]
fn a_repeated_output_is_sent_as_a_reference_and_whole_again_once_its_first_copy_goes() {
    let mut s = Session::new(ContextConfig::default());
    s.user("look");
    let big = "     1\tfn main() {}\n".repeat(400);
    s.call("a", "file_read", r#"{"path":"m.rs"}"#, &big);
    s.call("b", "bash", r#"{"command":"ls"}"#, "m.rs");
    s.call("c", "file_read", r#"{"path":"m.rs"}"#, &big);
    let texts = s.view_texts(200_000);
    assert_eq!(texts[2], format!("Tool:{big}"), "the first copy, whole");
    assert_eq!(
        texts[6], "Tool:[Same output as the earlier identical call a above (400 lines); nothing changed]",
        "the repeat, from the first request it is in"
    );
    // The first copy is compacted away: the repeat is sent whole again, in the same rewrite.
    let input = s.input(200_000);
    let before = s.p.estimate(input.overhead, 200_000);
    let plan = CompactionPlan {
        previous_summary: None,
        generation: 1,
        through_seq: 3,
        messages: Vec::new(),
        seqs: Vec::new(),
        stretches: Vec::new(),
        carried: vec![(1, "look".into())],
        summarised_tokens: 100,
        input_ratio: 4.0,
        summary_share: 0.035,
        finished: false,
        conversation: None,
        hidden: Vec::new(),
        tail_first: std::sync::Arc::new(crate::conversation::Message::user("next")),
        tail_opening: String::new(),
    };
    s.p.apply_compaction(&plan, "## Goal\nlook".into(), &input, before);
    let texts = s.view_texts(200_000);
    assert!(texts.iter().any(|t| *t == format!("Tool:{big}")), "whole again: {texts:?}");
    assert!(!texts.iter().any(|t| t.contains("Same output as")));
}

#[test]
fn nothing_already_sent_changes_below_the_warning_threshold_whatever_it_would_save() {
    let mut s = Session::new(ContextConfig::default());
    s.p.set_cost_model(CostModel::no_cache(3.0, 15.0));
    s.user("look");
    let file = "x\n".repeat(10_000);
    s.call("a", "file_read", r#"{"path":"big.rs"}"#, &file);
    s.call("e", "file_edit", r#"{"path":"big.rs","old_string":"x","new_string":"y"}"#, "ok");
    s.call("b", "file_read", r#"{"path":"big.rs"}"#, &file.replace('x', "y"));
    let pre = s.p.preflight(&s.input(200_000));
    assert!(pre.reports.is_empty() && !pre.changed, "a stale read waits: {pre:?}");
    // The same history in a window where it passes the warning threshold: it pays at once.
    let pre = s.p.preflight(&s.input(24_000));
    assert_eq!(pre.level, BudgetLevel::Ok, "{pre:?}");
    assert_eq!(pre.reports[0].stage, Stage::Dedup);
}

/// A session at the warning threshold of a 60k window with a stale read early on and old
/// command outputs: what each provider's prices make of it.
fn at_warning(model: CostModel) -> (Session, PreflightInput) {
    let mut s = busy_session(ContextConfig { prune_protect_tokens: 2_000, ..Default::default() }, 0, 0);
    s.p.set_cost_model(model);
    let file = "x\n".repeat(3_000);
    s.call("r1", "file_read", r#"{"path":"big.rs"}"#, &file);
    s.call("e", "file_edit", r#"{"path":"big.rs","old_string":"x","new_string":"y"}"#, "ok");
    s.call("r2", "file_read", r#"{"path":"big.rs"}"#, &file.replace('x', "z"));
    let input = s.input(60_000);
    s.grow_to(60_000, input.budget.warning, 400);
    (s, input)
}

#[test]
fn a_cached_provider_keeps_its_prefix_when_no_reduction_repays_the_rewrite() {
    let sonnet =
        crate::config::Prices { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 6.0 };
    let (mut s, input) = at_warning(CostModel::from_prices(&sonnet, true));
    let tokens = s.p.estimate(input.overhead, 60_000);
    assert!(tokens >= input.budget.warning && tokens < input.budget.auto_compact);
    let pre = s.p.preflight(&input);
    assert!(pre.reports.is_empty(), "rewriting ~40k tokens for a few thousand fewer reads does not pay: {pre:?}");
    assert!(s.view_texts(60_000).iter().all(|t| !t.contains("Superseded") && !t.contains("[Old ")));
}

#[test]
fn without_a_cache_the_same_history_is_reduced_at_once_in_one_rewrite() {
    let (mut s, input) = at_warning(CostModel::no_cache(3.0, 15.0));
    let tokens = s.p.estimate(input.overhead, 60_000);
    let pre = s.p.preflight(&input);
    let stages: Vec<Stage> = pre.reports.iter().map(|r| r.stage).collect();
    assert_eq!(stages, vec![Stage::Dedup, Stage::Prune], "both, in the same pre-flight: {pre:?}");
    assert!(pre.tokens < tokens);
    let texts = s.view_texts(60_000);
    assert!(texts.iter().any(|t| t.contains("[Superseded -- file was re-read after modification]")));
    assert!(texts.iter().any(|t| t.contains("[Old bash output cleared: `step ")));
}

#[test]
fn a_local_server_rewrites_nothing_until_the_window_forces_it() {
    let (mut s, input) = at_warning(CostModel::local());
    assert!(s.p.preflight(&input).reports.is_empty());
    // At the blocking threshold, with compaction off, trimming happens.
    let mut config = s.p.config().clone();
    config.auto_compact = false;
    let stored: Vec<(i64, Message)> = s.p.ledger().entries().iter().map(|e| (e.seq, (*e.message).clone())).collect();
    let mut p = Pipeline::restore(config, ContextState::default(), stored);
    p.set_cost_model(CostModel::local());
    let mut s = Session { p, seq: s.seq };
    s.grow_to(60_000, input.budget.blocking, 400);
    let pre = s.p.preflight(&input);
    assert!(pre.reports.iter().any(|r| r.stage == Stage::Trim), "{pre:?}");
    assert!(pre.tokens < input.budget.blocking);
}

#[test]
fn the_estimate_is_reported_usage_plus_what_was_appended_since() {
    let mut s = Session::new(ContextConfig::default());
    s.user("hello");
    let raw = s.p.raw_tokens(1_000, 200_000);
    s.p.report_usage(5_000, raw);
    assert_eq!(s.p.estimate(1_000, 200_000), 5_000);
    s.push(Message::assistant("x".repeat(3_200)));
    assert_eq!(s.p.estimate(1_000, 200_000), 5_000 + 1_000 + 10);
}

#[test]
fn the_system_prompt_and_tools_are_weighed_at_the_rate_the_provider_counted() {
    let mut s = Session::new(ContextConfig::default());
    s.user("hello");
    // Nothing counted yet: the rough count, which errs high.
    assert_eq!(s.p.calibrated_overhead(6_600), 6_600);
    let raw = s.p.raw_tokens(6_600, 8_192);
    s.p.report_usage(raw * 85 / 100, raw);
    let overhead = s.p.calibrated_overhead(6_600);
    assert!((5_600..=5_620).contains(&overhead), "{overhead}");
    // A provider that counted more than the rough count (images, its own framing) never makes
    // the system prompt and tools weigh more than they are.
    s.p.report_usage(raw * 30, raw);
    assert_eq!(s.p.calibrated_overhead(6_600), 6_600);
}

fn busy_session(config: ContextConfig, groups: usize, lines: usize) -> Session {
    let mut s = Session::new(config);
    s.user("Goal: migrate the parser to nom. Never touch vendor/.");
    for _ in 0..groups {
        s.step(lines);
    }
    s
}

impl Session {
    /// One more tool group and reply; a user message every third.
    fn step(&mut self, lines: usize) {
        let n = self.seq;
        self.call(&format!("c{n}"), "bash", &format!(r#"{{"command":"step {n}"}}"#), &"output\n".repeat(lines));
        self.push(Message::assistant(format!("step {n} done")));
        if n % 9 == 1 {
            self.user(&format!("next please ({n})"));
        }
    }

    /// Add steps until the estimate reaches `tokens`.
    fn grow_to(&mut self, window: u64, tokens: u64, lines: usize) {
        while self.p.estimate(1_000, window) < tokens {
            self.step(lines);
        }
    }
}

#[test]
fn compaction_starts_in_the_background_only_when_the_next_request_would_need_it() {
    let mut s = busy_session(ContextConfig { prune: false, ..Default::default() }, 1, 100);
    // A local server: a kept prefix is free, so only the window ever asks for a compaction.
    s.p.set_cost_model(CostModel::local());
    let input = s.input(32_000);
    let b = input.budget;
    s.grow_to(32_000, b.auto_compact, 100);
    let growth = s.p.average_growth();
    let tokens = s.p.estimate(1_000, 32_000);
    assert!(tokens + growth < b.blocking, "{tokens} + {growth} vs {b:?}");
    assert_eq!(s.p.preflight(&input).compaction, None, "past auto-compact, but the window does not force it yet");
    while s.p.estimate(1_000, 32_000) + s.p.average_growth() < b.blocking {
        s.step(100);
    }
    assert!(s.p.estimate(1_000, 32_000) < b.blocking);
    assert_eq!(s.p.preflight(&input).compaction, Some(Urgency::Background), "lands before the next request");
    s.grow_to(32_000, b.blocking, 100);
    assert_eq!(s.p.preflight(&input).compaction, Some(Urgency::Now));
}

#[test]
fn after_a_compaction_no_automatic_one_fires_before_usage_is_reported() {
    let mut s = busy_session(ContextConfig { prune: false, ..Default::default() }, 40, 300);
    let input = s.input(32_000);
    let before = s.p.estimate(input.overhead, 32_000);
    let plan = s.p.plan_compaction(&input.budget, false).unwrap();
    let report = s.p.apply_compaction(&plan, "## Goal\nmigrate".into(), &input, before);
    assert!(report.saved_tokens > 0);
    assert!(s.p.state().awaiting_usage);
    // Even if still over the threshold, the next pre-flight does not compact again.
    for n in 0..30 {
        s.call(&format!("more{n}"), "bash", r#"{"command":"x"}"#, &"output\n".repeat(300));
    }
    let pre = s.p.preflight(&input);
    assert_eq!(pre.compaction, None, "anti-thrash");
    let raw = s.p.raw_tokens(input.overhead, 32_000);
    s.p.report_usage(raw, raw);
    assert!(!s.p.state().awaiting_usage);
}

#[test]
fn the_view_after_compaction_leads_with_the_first_message_as_sent_then_the_summary() {
    let mut s = busy_session(ContextConfig::default(), 30, 200);
    s.p.set_protected("## Session\n- Mode: edit".into());
    let input = s.input(32_000);
    let first_sent = s.p.view(32_000)[0].clone();
    let before = s.p.estimate(input.overhead, 32_000);
    let plan = s.p.plan_compaction(&input.budget, false).unwrap();
    s.p.apply_compaction(&plan, "## Goal\nthe summary text".into(), &input, before);
    let view = s.p.view(32_000);
    assert_eq!(view[0], first_sent, "byte for byte what was sent first: the cached prefix survives");
    let continuation = view[1].text();
    assert!(continuation.contains("the summary text") && continuation.contains("- Mode: edit"), "{continuation}");
    assert!(continuation.contains("> next please"), "later instructions, verbatim: {continuation}");
    assert_eq!(check_request(&view), Ok(()));
    // Restoring from the stored messages and the persisted state gives the same view.
    let stored: Vec<(i64, Message)> = s.p.ledger().entries().iter().map(|e| (e.seq, (*e.message).clone())).collect();
    let mut restored = Pipeline::restore(ContextConfig::default(), s.p.state().clone(), stored);
    restored.set_protected("## Session\n- Mode: edit".into());
    assert_eq!(restored.view(32_000), view);
}

#[test]
fn a_new_outline_waits_for_the_next_rewrite_of_the_continuation() {
    let mut s = busy_session(ContextConfig::default(), 30, 200);
    let input = s.input(32_000);
    let before = s.p.estimate(input.overhead, 32_000);
    let plan = s.p.plan_compaction(&input.budget, false).unwrap();
    s.p.apply_compaction(&plan, "## Goal\nfirst".into(), &input, before);
    let view = s.p.view(32_000);
    s.p.set_outline("## Earlier in this session, by topic\n\n- messages 1–40: set up the parser\n".into());
    assert_eq!(s.p.view(32_000), view, "a segment summary landing does not rewrite the conversation");
    s.grow_to(32_000, input.budget.blocking, 200);
    let raw = s.p.raw_tokens(input.overhead, 32_000);
    s.p.report_usage(raw, raw);
    let before = s.p.estimate(input.overhead, 32_000);
    let plan = s.p.plan_compaction(&input.budget, false).unwrap();
    s.p.apply_compaction(&plan, "## Goal\nsecond".into(), &input, before);
    assert!(
        s.p.view(32_000)[1].text().contains("- messages 1–40: set up the parser"),
        "shown from the next compaction"
    );
}

#[test]
fn the_breaker_opens_after_three_failures_half_opens_after_cooldown_and_closes_below_warning() {
    let mut s = busy_session(ContextConfig { prune: false, ..Default::default() }, 24, 300);
    let input = s.input(32_000);
    for _ in 0..3 {
        s.p.record_compaction_failure(input.now);
    }
    assert!(!s.p.breaker_allows(input.now + 10));
    let pre = s.p.preflight(&PreflightInput { now: input.now + 10, ..input });
    assert_eq!(pre.compaction, None, "open: no compaction");
    assert!(s.p.breaker_allows(input.now + 301), "half-open after the cooldown");
    s.p.record_compaction_failure(input.now + 301);
    assert!(!s.p.breaker_allows(input.now + 400), "a failed half-open attempt re-opens it");
    assert_eq!(s.p.counters().compaction_failures, 4);
    // Pressure falling below warning closes it.
    let mut quiet = Session::new(ContextConfig::default());
    quiet.user("hi");
    quiet.p.record_compaction_failure(0);
    quiet.p.record_compaction_failure(0);
    quiet.p.record_compaction_failure(0);
    assert!(quiet.p.preflight(&quiet.input(200_000)).changed);
    assert!(quiet.p.breaker_allows(1));
}

#[test]
fn two_ineffective_compactions_in_a_row_open_the_breaker() {
    let mut s = busy_session(ContextConfig::default(), 30, 300);
    let input = s.input(32_000);
    for round in 0..2 {
        assert!(s.p.breaker_allows(input.now), "round {round}");
        let plan = s.p.plan_compaction(&input.budget, false).unwrap();
        // Claim the context was no bigger before: a saving under 10 % is ineffective.
        let report = s.p.apply_compaction(&plan, "x".repeat(200), &input, 1);
        assert_eq!(report.saved_tokens, 0);
        s.grow_to(32_000, input.budget.auto_compact, 300);
    }
    assert!(!s.p.breaker_allows(input.now), "two in a row");
}

#[test]
fn trimming_keeps_the_latest_turn_whole_groups_and_the_users_words() {
    let config = ContextConfig { auto_compact: false, prune: false, ..Default::default() };
    let mut s = busy_session(config, 1, 300);
    s.grow_to(32_000, 24_000, 300);
    s.user("latest: now add tests");
    s.call("last", "bash", r#"{"command":"cargo test"}"#, "ok");
    let input = s.input(32_000);
    let pre = s.p.preflight(&input);
    let b = input.budget;
    assert!(pre.reports.iter().any(|r| r.stage == Stage::Trim), "{pre:?}");
    assert!(pre.tokens < b.blocking, "{} vs {}", pre.tokens, b.blocking);
    let view = s.p.view(32_000);
    assert_eq!(check_request(&view), Ok(()));
    assert!(view.iter().any(|m| m.text() == "latest: now add tests"));
    assert_eq!(
        view[0].text(),
        "Goal: migrate the parser to nom. Never touch vendor/.",
        "dropped user words are carried"
    );
    assert!(view[1].role != crate::conversation::Role::Tool);
    assert!(s.p.counters().trimmed_messages > 0);
}

#[test]
fn pruning_starts_at_the_warning_threshold_when_it_pays() {
    let mut s = busy_session(ContextConfig { prune_protect_tokens: 2_000, ..Default::default() }, 1, 400);
    s.p.set_cost_model(CostModel::no_cache(3.0, 15.0));
    let input = s.input(60_000);
    s.grow_to(60_000, input.budget.warning - 500, 400);
    assert!(s.p.preflight(&input).reports.is_empty(), "below the warning threshold: never");
    s.grow_to(60_000, input.budget.warning, 400);
    let tokens = s.p.estimate(input.overhead, 60_000);
    assert!(tokens >= input.budget.warning && tokens < input.budget.auto_compact, "{tokens} {:?}", input.budget);
    let pre = s.p.preflight(&input);
    let prune = pre.reports.iter().find(|r| r.stage == Stage::Prune).expect("pruned");
    // 20,000 in the seed, scaled to a tenth of this 45k effective window.
    assert!(prune.saved_tokens >= 4_500, "{prune:?}");
    assert!(pre.tokens < tokens);
    assert!(s.view_texts(60_000).iter().any(|t| t.contains("[Old bash output cleared: `step ")));
}

#[test]
fn on_a_paid_cached_api_a_long_span_is_compacted_before_the_window_forces_it() {
    // The same session priced as a paid API with prompt caching: past auto-compact the span
    // that would be summarised is long enough that compacting now costs less than carrying it
    // to the blocking threshold; the same point on a local server waits.
    let mut s = busy_session(ContextConfig { prune: false, ..Default::default() }, 1, 100);
    s.p.set_cost_model(CostModel::from_prices(
        &crate::config::Prices { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 6.0 },
        true,
    ));
    let input = s.input(32_000);
    let b = input.budget;
    s.grow_to(32_000, b.auto_compact, 100);
    assert!(s.p.estimate(1_000, 32_000) + s.p.average_growth() < b.blocking, "the window does not force it yet");
    assert_eq!(s.p.preflight(&input).compaction, Some(Urgency::Background));
    s.p.set_cost_model(CostModel::local());
    assert_eq!(s.p.preflight(&input).compaction, None);
}

#[test]
fn a_resumed_session_compacts_at_once_where_the_window_needs_it() {
    // The stored state says a compaction landed and no usage came since (the last process ended
    // there, or its later usage was not stored): a new process has no compaction to wait on.
    let mut s = busy_session(ContextConfig { prune: false, ..Default::default() }, 40, 300);
    let input = s.input(32_000);
    let before = s.p.estimate(input.overhead, 32_000);
    let plan = s.p.plan_compaction(&input.budget, false).unwrap();
    s.p.apply_compaction(&plan, "## Goal\nmigrate".into(), &input, before);
    for n in 0..50 {
        s.call(
            &format!("more{n}"),
            "bash",
            &format!(r#"{{"command":"x {n}"}}"#),
            &format!("line of {n}\n").repeat(300),
        );
    }
    assert!(s.p.state().awaiting_usage);
    let stored: Vec<(i64, Arc<Message>)> = s.p.ledger().entries().iter().map(|e| (e.seq, e.message.clone())).collect();
    let mut resumed = Pipeline::restore(s.p.config().clone(), s.p.state().clone(), stored);
    assert_eq!(s.p.preflight(&input).compaction, None, "the process it landed in waits for usage");
    let pre = resumed.preflight(&input);
    assert_eq!(pre.level, BudgetLevel::Blocking, "{pre:?}");
    assert_eq!(pre.compaction, Some(Urgency::Now), "compacted, not trimmed: {pre:?}");
    assert!(pre.reports.iter().all(|r| r.stage != Stage::Trim));
}
