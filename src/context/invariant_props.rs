//! Property tests of the request invariant over random histories, window sizes and stage
//! orders: whatever happens, the view is a valid request and fits the window.

use proptest::prelude::*;

use std::sync::Arc;

use super::budget::ContextBudget;
use super::cost::CostModel;
use super::invariant::check_request;
use super::pipeline::{Pipeline, PreflightInput, Urgency};
use super::truncate::TruncationLimits;
use crate::config::ContextConfig;
use crate::conversation::{Block, Message, ToolCall, ToolResult};

#[derive(Clone, Debug)]
struct Call {
    tool: usize,
    path: usize,
    result: usize,
    error: bool,
    /// The session crashed before this result was stored.
    missing: bool,
}

#[derive(Clone, Debug)]
enum Event {
    User(usize),
    Reply {
        text: usize,
        calls: Vec<Call>,
    },
    /// `/compact` by hand, succeeding or failing.
    Compact {
        succeeds: bool,
    },
    /// Save the state and rebuild the session from the store, as a resume does.
    Restore,
    /// Load with a cold cache: all pending dedup applied.
    ColdLoad,
}

const SONNET: crate::config::Prices =
    crate::config::Prices { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 6.0 };

const TOOLS: [&str; 6] = ["file_read", "grep", "glob", "bash", "file_edit", "other_tool"];
const PATHS: [&str; 3] = ["src/a.rs", "src/b.rs", "README.md"];

fn call() -> impl Strategy<Value = Call> {
    (0..TOOLS.len(), 0..PATHS.len(), 0usize..40_000, prop::bool::weighted(0.1), prop::bool::weighted(0.05))
        .prop_map(|(tool, path, result, error, missing)| Call { tool, path, result, error, missing })
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        3 => (1usize..2_000).prop_map(Event::User),
        8 => (0usize..600, prop::collection::vec(call(), 0..4)).prop_map(|(text, calls)| Event::Reply { text, calls }),
        1 => prop::bool::ANY.prop_map(|succeeds| Event::Compact { succeeds }),
        1 => Just(Event::Restore),
        1 => Just(Event::ColdLoad),
    ]
}

struct Harness {
    /// The pipeline as the agent runs it: the messages a saved summary stands for are
    /// released after each compaction and after a load.
    p: Pipeline,
    /// The same history without releasing anything: every view must be the same.
    shadow: Pipeline,
    stored: Vec<(i64, Message)>,
    window: u64,
    now: i64,
    /// The view the last request sent, unless a deliberate rewrite (`/compact`, a cold load)
    /// came since.
    previous: Option<Vec<Arc<Message>>>,
}

impl Harness {
    fn push(&mut self, m: Message) {
        let seq = self.stored.len() as i64 + 1;
        self.stored.push((seq, m.clone()));
        self.shadow.append(seq, m.clone());
        self.p.append(seq, m);
    }

    fn input(&self) -> PreflightInput {
        PreflightInput {
            budget: ContextBudget::new(self.window, self.p.config()),
            // The system prompt and tool schemas: about a tenth of a small window.
            overhead: (self.window / 10).min(3_000),
            now: self.now,
            compaction_running: false,
            compaction_allowed: true,
        }
    }

    fn compact(&mut self, manual: bool, succeeds: bool) {
        let input = self.input();
        let Some(plan) = self.p.plan_compaction(&input.budget, manual) else { return };
        let shadow_plan = self.shadow.plan_compaction(&input.budget, manual);
        assert_eq!(shadow_plan.as_ref().map(|p| p.through_seq), Some(plan.through_seq), "the same plan");
        if succeeds {
            let before = self.p.estimate(input.overhead, self.window);
            let summary = "## Goal\nsummary\n".repeat((plan.summarised_tokens / 200).clamp(1, 60) as usize);
            if let Some(shadow_plan) = shadow_plan {
                let shadow_before = self.shadow.estimate(input.overhead, self.window);
                self.shadow.apply_compaction(&shadow_plan, summary.clone(), &input, shadow_before);
            }
            self.p.apply_compaction(&plan, summary, &input, before);
            self.p.release_summarised();
        } else {
            self.p.record_compaction_failure(self.now);
            self.shadow.record_compaction_failure(self.now);
        }
    }

    /// What the agent does before a request: pre-flight, compaction when asked (it may fail),
    /// pre-flight again; then the request is checked.
    fn request(&mut self, compactions_succeed: bool) -> Result<(), TestCaseError> {
        self.now += 30;
        let input = self.input();
        let below_warning = self.p.estimate(input.overhead, self.window) < input.budget.warning;
        let pre = self.p.preflight(&self.input());
        let shadow_pre = self.shadow.preflight(&self.input());
        prop_assert_eq!(&pre.compaction, &shadow_pre.compaction);
        if matches!(pre.compaction, Some(Urgency::Now | Urgency::Background)) {
            self.compact(false, compactions_succeed);
            self.p.preflight(&PreflightInput { compaction_allowed: false, ..self.input() });
            self.shadow.preflight(&PreflightInput { compaction_allowed: false, ..self.input() });
        }
        let view = self.p.view(self.window);
        prop_assert_eq!(check_request(&view), Ok(()));
        prop_assert!(view == self.shadow.view(self.window), "releasing summarised messages changes no request");
        if below_warning && let Some(previous) = &self.previous {
            prop_assert!(
                view.len() >= previous.len() && view[..previous.len()] == previous[..],
                "below the warning threshold the request only adds to what was sent"
            );
        }
        self.previous = Some(view.clone());
        let input = self.input();
        let tokens = self.p.estimate(input.overhead, self.window);
        prop_assert!(
            tokens <= input.budget.effective,
            "{} tokens in a {} window ({:?})",
            tokens,
            self.window,
            input.budget
        );
        // The provider counts a little differently from the estimate; calibrate on it.
        let raw = self.p.raw_tokens(input.overhead, self.window);
        prop_assert_eq!(raw, self.shadow.raw_tokens(input.overhead, self.window));
        self.p.report_usage(raw + raw / 10, raw);
        self.shadow.report_usage(raw + raw / 10, raw);
        Ok(())
    }
}

fn run(window: u64, events: Vec<Event>, compactions_succeed: bool, cost: CostModel) -> Result<(), TestCaseError> {
    let config = ContextConfig::default();
    let budget = ContextBudget::new(window, &config);
    let limits = TruncationLimits::new(&config, &budget);
    let turn_cap = TruncationLimits::turn_cap(&config, &budget);
    let mut h = Harness {
        p: Pipeline::new(config.clone()),
        shadow: Pipeline::new(config.clone()),
        stored: Vec::new(),
        window,
        now: 1_000,
        previous: None,
    };
    h.p.set_cost_model(cost);
    h.shadow.set_cost_model(cost);
    // User messages the front end would not cut stay under a tenth of the window.
    let user_cap = (window as usize / 10) * 3;
    h.push(Message::user("the goal"));
    let mut n = 0;
    for event in events {
        match event {
            Event::User(len) => h.push(Message::user("u".repeat(len.min(user_cap).max(1)))),
            Event::Reply { text, calls } => {
                let mut m = Message::assistant("a".repeat(text));
                for c in &calls {
                    n += 1;
                    let args =
                        serde_json::json!({"path": PATHS[c.path], "command": "make", "pattern": "x"}).to_string();
                    m.content.push(Block::ToolCall(ToolCall::new(format!("c{n}-{}", c.tool), TOOLS[c.tool], args)));
                }
                if m.content.is_empty() {
                    m = Message::assistant("ok");
                }
                let ids: Vec<String> = m.tool_calls().map(|c| c.id.clone()).collect();
                h.push(m);
                // Results as truncation and the per-turn cap leave them.
                let each = limits.max_bytes.min(turn_cap / calls.len().max(1));
                for (c, id) in calls.iter().zip(ids) {
                    if c.missing {
                        continue;
                    }
                    let content = "r\n".repeat(c.result.min(each) / 2 + 1);
                    let r = if c.error {
                        ToolResult::error(id, TOOLS[c.tool], content)
                    } else {
                        ToolResult::ok(id, TOOLS[c.tool], content)
                    };
                    h.push(Message::tool(r));
                }
                h.request(compactions_succeed)?;
            }
            Event::Compact { succeeds } => {
                h.compact(true, succeeds);
                h.previous = None;
                h.request(compactions_succeed)?;
            }
            Event::Restore => {
                let state = h.p.state().clone();
                let before = h.p.view(window);
                h.p = Pipeline::restore(config.clone(), state.clone(), h.stored.clone());
                h.p.set_cost_model(cost);
                h.shadow = Pipeline::restore(config.clone(), state, h.stored.clone());
                h.shadow.set_cost_model(cost);
                prop_assert_eq!(h.p.view(window), before.clone(), "restore rebuilds the same view");
                h.p.release_summarised();
                prop_assert_eq!(h.p.view(window), before, "releasing after a load changes nothing");
            }
            Event::ColdLoad => {
                h.p.apply_all_dedup();
                h.shadow.apply_all_dedup();
                h.previous = None;
                h.request(compactions_succeed)?;
            }
        }
    }
    h.request(compactions_succeed)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Whatever the history, the window, the provider's prices and whether compactions
    /// succeed: every request is valid and fits, and while the context is below the warning
    /// threshold each request only appends to the previous one (nothing sent is rewritten).
    #[test]
    fn every_request_is_valid_and_fits_and_nothing_is_rewritten_below_warning(
        window in prop::sample::select(vec![8_192u64, 16_384, 32_768, 128_000, 200_000, 1_000_000]),
        events in prop::collection::vec(event(), 1..80),
        compactions_succeed in prop::bool::weighted(0.8),
        cost in prop::sample::select(vec![
            CostModel::from_prices(&SONNET, true),
            CostModel::no_cache(3.0, 15.0),
            CostModel::local(),
        ]),
    ) {
        run(window, events, compactions_succeed, cost)?;
    }
}
