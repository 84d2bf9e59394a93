use super::*;

/// Claude Sonnet's prices: input 3, output 15, cache read 0.30, cache write 3.75 ($/M).
fn sonnet() -> Prices {
    Prices { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75, cache_write_1h: 6.0 }
}

fn horizon(requests_so_far: u64, room: u64) -> Horizon {
    Horizon { requests_so_far, share: 0.5, growth: 1_000, room }
}

#[test]
fn a_cached_provider_rewrites_only_when_the_reads_saved_repay_the_suffix_written_again() {
    let m = CostModel::from_prices(&sonnet(), true);
    // Removing 20k tokens with 60k after them: the rewrite costs 60k × 3.45, each later request
    // saves 20k × 0.30; it pays after 35 requests, not before.
    assert!(!m.pays(20_000, 60_000, 30.0));
    assert!(m.pays(20_000, 60_000, 40.0));
    // The same saving near the end of the history (little written again) pays at once.
    assert!(m.pays(20_000, 2_000, 2.0));
}

#[test]
fn without_a_cache_every_reduction_pays_from_the_next_request() {
    let m = CostModel::no_cache(3.0, 15.0);
    assert_eq!(m.rewrite_cost(100_000), 0.0, "nothing cached, nothing to lose");
    assert!(m.pays(1, 100_000, 1.0));
    assert!(!m.pays(0, 0, 10.0), "no saving, no rewrite");
    let from_prices = CostModel::from_prices(&sonnet(), false);
    assert_eq!(from_prices, m);
}

#[test]
fn a_local_server_never_rewrites_for_savings_alone() {
    let m = CostModel::local();
    assert!(!m.pays(50_000, 1_000, 1_000.0), "the KV cache makes the kept prefix free");
}

#[test]
fn openai_style_prices_have_no_write_surcharge() {
    let gpt = Prices { input: 1.25, output: 10.0, cache_read: 0.125, cache_write: 1.25, cache_write_1h: 1.25 };
    let m = CostModel::from_prices(&gpt, true);
    // A million tokens written again at input instead of read: $1.125.
    assert!((m.rewrite_cost(1_000_000) / 1e6 - 1.125).abs() < 1e-9);
}

#[test]
fn the_horizon_is_the_expected_rest_of_the_session_but_no_further_than_the_next_compaction() {
    let h = horizon(40, 100_000);
    assert_eq!(h.expected_requests(), 20.0, "half the requests so far");
    assert_eq!(h.requests(), 20.0);
    let near = horizon(40, 5_000);
    assert_eq!(near.until_compaction(), 5.0);
    assert_eq!(near.requests(), 5.0, "a compaction five requests away replaces the history anyway");
    assert_eq!(horizon(0, 100_000).expected_requests(), 1.0, "at least the request about to go");
}

#[test]
fn choose_folds_every_reduction_after_the_start_and_picks_the_start_that_pays_best() {
    let m = CostModel::from_prices(&sonnet(), true);
    // A history of 100 messages of 1,000 tokens; suffix(p) = tokens from message p on.
    let suffix = |p: usize| (100 - p as u64) * 1_000;
    let early = Reduction { position: 10, tokens: 5_000 };
    let late = Reduction { position: 95, tokens: 4_000 };
    // Over 20 requests: from 95 on, 5k is written again (17k) to save 4k × 0.3 × 20 (24k).
    let c = choose(&[early, late], suffix, &m, 20.0).expect("the late one pays");
    assert_eq!((c.from, c.saved), (95, 4_000), "the early one would rewrite 90k for 5k more");
    // With a long horizon, starting early and carrying both pays more.
    let c = choose(&[early, late], suffix, &m, 400.0).expect("both pay");
    assert_eq!((c.from, c.saved), (10, 9_000));
    assert_eq!(choose(&[early], suffix, &m, 20.0), None, "nothing pays: keep the cache");
    // Two reductions at one position count together.
    let c = choose(&[late, Reduction { position: 95, tokens: 1_000 }], suffix, &m, 20.0).unwrap();
    assert_eq!(c.saved, 5_000);
}

#[test]
fn the_summary_call_is_priced_uncached() {
    let m = CostModel::from_prices(&sonnet(), true);
    assert!((m.summary_call(1_000_000, 100_000) / 1e6 - 4.5).abs() < 1e-9, "$3 in, $1.50 out");
}

#[test]
fn a_session_picks_its_model_from_prices_and_where_the_server_is() {
    assert_eq!(CostModel::for_session(Some(&sonnet()), false, true), CostModel::from_prices(&sonnet(), true));
    assert_eq!(CostModel::for_session(Some(&sonnet()), false, false).rewrite_cost(1_000), 0.0, "caching off");
    assert_eq!(CostModel::for_session(None, true, true), CostModel::local());
    assert_eq!(CostModel::for_session(None, false, true), CostModel::assumed());
    assert_eq!(CostModel::for_session(None, false, false).rewrite_cost(1_000), 0.0);
}

#[test]
fn compacting_before_the_window_forces_it_pays_only_for_a_long_enough_span() {
    let m = CostModel::from_prices(&sonnet(), true);
    // A compaction costing $0.10 (in $/M units: 100,000) at 1,000 tokens of growth a request:
    // the break-even span is sqrt(2 × 100,000 × 1,000 / 0.30) ≈ 25.8k tokens.
    let cost = 100_000.0;
    assert!(!m.early_compaction_pays(20_000, cost, 1_000, 100.0, 1.0), "a short span: wait for the window");
    assert!(m.early_compaction_pays(30_000, cost, 1_000, 100.0, 1.0), "a long span: compact now");
    // The same span in a session expected to end soon never reads the saving back.
    assert!(!m.early_compaction_pays(30_000, cost, 1_000, 5.0, 1.0));
    // Read back once in the requests expected, but not four times: the margin keeps the detail.
    assert!(m.early_compaction_pays(30_000, cost, 1_000, 12.0, 1.0));
    assert!(!m.early_compaction_pays(30_000, cost, 1_000, 12.0, 4.0));
    assert!(m.early_compaction_pays(30_000, cost, 1_000, 48.0, 4.0));
}

#[test]
fn without_a_cache_early_compaction_pays_sooner_and_on_a_local_server_never() {
    let cost = 100_000.0;
    // Every token re-sent costs full input: the span that pays is √10 shorter than with a cache.
    let plain = CostModel::no_cache(3.0, 15.0);
    assert!(plain.early_compaction_pays(10_000, cost, 1_000, 100.0, 1.0));
    assert!(!CostModel::from_prices(&sonnet(), true).early_compaction_pays(10_000, cost, 1_000, 100.0, 1.0));
    // A local server keeps its prefix for free: only the window forces a compaction.
    assert!(!CostModel::local().early_compaction_pays(1_000_000, 1.0, 1_000, 1_000.0, 1.0));
}
