//! A stored session read into a [`SessionReport`]: its requests (and its subagents') with
//! the figures kept beside them, priced as `/context` prices them, and what its context state
//! says became of each large output.

use std::collections::HashMap;

use super::model::{
    BreakMark, CompactionLine, MemoryLine, OutputRow, Parts, RequestKind, RequestPoint, SegmentLine, SessionReport,
    StageMark, Thresholds, Totals, add_cost,
};
use crate::config::{Pricing, Redactor};
use crate::context::{ContextState, ReplacementKind, estimate_text_tokens, redact_secrets};
use crate::conversation::{Block, Usage};
use crate::store::{RequestRow, SessionInfo, Store, StoreError};

/// Largest outputs listed.
const OUTPUTS_LISTED: usize = 12;

/// What a report of a stored session needs besides the store.
pub struct Gathered<'a> {
    pub store: &'a Store,
    pub session: &'a SessionInfo,
    pub project_root: &'a str,
    pub pricing: &'a Pricing,
    pub redactor: &'a Redactor,
    pub chars_per_token: f64,
    /// Why a memory is not injected as is: the caller's scanner (`None`: injected).
    pub quarantine: &'a dyn Fn(&crate::conversation::MemoryRecord) -> Option<String>,
}

/// Secrets out of any text bound for the file.
pub(super) fn clean(redactor: &Redactor, text: &str) -> String {
    redactor.redact(&redact_secrets(text)).into_owned()
}

fn point(row: &RequestRow, kind: RequestKind, pricing: &Pricing) -> RequestPoint {
    let u = &row.usage;
    let (context, marks, cache_break) = match &row.figures {
        Some(f) => {
            let parts = Parts {
                system: f.system_tokens,
                memories: f.memory_tokens,
                summary: f.summary_tokens,
                messages: f.message_tokens,
            };
            let limits = Thresholds {
                window: f.window,
                effective: f.effective,
                warning: f.warning,
                auto_compact: f.auto_compact,
                blocking: f.blocking,
            };
            let marks: Vec<StageMark> = serde_json::from_str(&f.stages).unwrap_or_default();
            let cache_break: Option<BreakMark> = f.cache_break.as_deref().and_then(|b| serde_json::from_str(b).ok());
            (Some((parts, limits)), marks, cache_break)
        }
        None => (None, Vec::new(), None),
    };
    RequestPoint {
        kind,
        purpose: row.purpose.clone(),
        model: row.model.clone(),
        at: row.created_at.clone(),
        uncached: u.input_tokens,
        read: u.cache_read_input_tokens,
        written: u.cache_creation_input_tokens,
        output: u.output_tokens,
        cost: pricing.cost(&row.model, u),
        context,
        marks,
        cache_break,
    }
}

/// The session's sums, priced per model as `/context` prices a loaded session.
pub(super) fn totals(own: &[&RequestRow], subagents: &[&RequestRow], pricing: &Pricing) -> Totals {
    let mut per_model: Vec<(String, Usage)> = Vec::new();
    let mut t = Totals::default();
    for row in own {
        match per_model.iter_mut().find(|(m, _)| *m == row.model) {
            Some((_, u)) => u.add(&row.usage),
            None => per_model.push((row.model.clone(), row.usage)),
        }
        t.requests += 1;
        t.input_tokens += row.usage.input_tokens;
        t.output_tokens += row.usage.output_tokens;
        t.cache_read_input_tokens += row.usage.cache_read_input_tokens;
        t.cache_creation_input_tokens += row.usage.cache_creation_input_tokens;
        if row.purpose == "keepalive" {
            t.keepalive_pings += 1;
            t.keepalive_usd = add_cost(t.keepalive_usd, pricing.cost(&row.model, &row.usage));
        }
        if row.purpose == "turn" {
            t.last_request_tokens = row.usage.prompt_tokens();
        }
    }
    t.cost_usd = per_model.iter().fold(None, |sum, (m, u)| add_cost(sum, pricing.cost(m, u)));
    let prompt = t.input_tokens + t.cache_read_input_tokens + t.cache_creation_input_tokens;
    t.cache_hit_rate = (prompt > 0).then(|| t.cache_read_input_tokens as f64 / prompt as f64);
    for row in subagents {
        t.subagent_requests += 1;
        t.subagent_usd = add_cost(t.subagent_usd, pricing.cost(&row.model, &row.usage));
    }
    t
}

/// The command, path or pattern a call named, from its arguments.
pub(super) fn target_of(arguments: &str) -> String {
    let args: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    ["command", "path", "pattern", "query", "url", "description", "name"]
        .iter()
        .find_map(|k| args.get(k).and_then(|v| v.as_str()))
        .map(|s| crate::conversation::clip(&s.split_whitespace().collect::<Vec<_>>().join(" "), 90))
        .unwrap_or_default()
}

/// What became of a result: `sent` is the text first sent (shorter when truncated).
pub(super) fn fate(state: &ContextState, call_id: &str, seq: i64, full: usize, sent: usize) -> String {
    let mut steps = Vec::new();
    if sent < full {
        steps.push("truncated when produced (whole output kept for recall)".to_string());
    }
    if let Some(r) = state.replacements.get(call_id) {
        steps.push(
            match r.kind {
                ReplacementKind::Duplicate => "replaced by dedup: an identical later result",
                ReplacementKind::StaleRead => "replaced by dedup: the file was changed and read again",
                ReplacementKind::SubsumedGrep => "replaced by dedup: a later read holds these lines",
                ReplacementKind::StaleWarning => "kept, marked stale: the file changed after it",
                ReplacementKind::Pruned => "pruned: a one-line placeholder",
            }
            .to_string(),
        );
    }
    if state.summary.as_ref().is_some_and(|s| seq <= s.through_seq) {
        steps.push("summarised away by a compaction".into());
    } else if state.is_trimmed(seq) {
        steps.push("trimmed (oldest turn dropped)".into());
    } else if state.clipped.contains_key(&seq) {
        steps.push("clipped to fit the window".into());
    }
    if steps.is_empty() { "sent whole, still in the context".into() } else { steps.join("; then ") }
}

/// Read `g.session` (and its subagents) from the store.
pub fn gather_session(g: &Gathered<'_>) -> Result<SessionReport, StoreError> {
    let store = g.store;
    let id = &g.session.id;
    let subagent_ids = store.descendant_sessions(id)?;
    let mut all = vec![id.clone()];
    all.extend(subagent_ids.iter().cloned());
    let rows = store.request_rows(&all)?;
    let own: Vec<&RequestRow> = rows.iter().filter(|r| &r.session_id == id).collect();
    let subs: Vec<&RequestRow> = rows.iter().filter(|r| &r.session_id != id).collect();
    let requests: Vec<RequestPoint> = rows
        .iter()
        .map(|r| {
            let kind = if &r.session_id == id { RequestKind::of_purpose(&r.purpose) } else { RequestKind::Subagent };
            point(r, kind, g.pricing)
        })
        .collect();
    let totals = totals(&own, &subs, g.pricing);
    let state: ContextState = store.context_state(id)?.and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
    let messages = store.messages(id)?;
    let mut sent: HashMap<String, (i64, usize)> = HashMap::new();
    for m in &messages {
        for b in &m.message.content {
            if let Block::ToolResult(r) = b {
                sent.insert(r.call_id.clone(), (m.seq, r.content.len()));
            }
        }
    }
    let cpt = g.chars_per_token;
    let outputs = store
        .largest_outputs(id, OUTPUTS_LISTED)?
        .into_iter()
        .map(|o| {
            let (seq, sent_len) = sent.get(&o.call_id).copied().unwrap_or((i64::MAX, o.bytes as usize));
            OutputRow {
                tool: o.tool.clone(),
                target: clean(g.redactor, &target_of(&o.arguments)),
                tokens: estimate_text_tokens(o.bytes as usize, cpt),
                sent_tokens: estimate_text_tokens(sent_len.min(o.bytes as usize), cpt),
                fate: fate(&state, &o.call_id, seq, o.bytes as usize, sent_len),
            }
        })
        .collect();
    let mut segments: Vec<SegmentLine> = store
        .segments(id)?
        .into_iter()
        .map(|s| SegmentLine {
            level: s.level,
            first_seq: s.first_seq,
            last_seq: s.last_seq,
            tokens: s.tokens,
            summary: s.summary.map(|t| clean(g.redactor, &t)),
            shown: (s.first_seq..=s.last_seq).any(|q| state.is_visible(q)),
        })
        .collect();
    segments.sort_by(|a, b| a.first_seq.cmp(&b.first_seq).then(b.level.cmp(&a.level)));
    let logged = store.compaction_log(id)?;
    let mut requests = requests;
    let mut trailing = Vec::new();
    for c in &logged {
        let mark = StageMark {
            stage: "compaction".into(),
            count: 1,
            saved_tokens: c.tokens_before.saturating_sub(c.tokens_after),
            detail: format!(
                "{} compaction: {} → {} tokens",
                c.trigger,
                crate::context::thousands(c.tokens_before),
                crate::context::thousands(c.tokens_after)
            ),
        };
        // Marked at the first request of the session's own that came after it.
        match requests.iter_mut().find(|r| r.kind == RequestKind::Turn && r.at > c.created_at) {
            Some(r) => r.marks.push(mark),
            None => trailing.push(mark),
        }
    }
    let texts = store.compaction_summaries(id)?;
    let compactions = logged
        .iter()
        .zip(texts)
        .map(|(c, (_, _, summary))| CompactionLine {
            at: c.created_at.clone(),
            trigger: c.trigger.clone(),
            tokens_before: c.tokens_before,
            tokens_after: c.tokens_after,
            summary: clean(g.redactor, &summary),
        })
        .collect();
    let memories = store
        .memories(g.session.project)?
        .into_iter()
        .filter(|m| m.session_id.as_deref() == Some(id.as_str()))
        .map(|m| MemoryLine {
            id: m.id,
            kind: m.kind.to_string(),
            title: clean(g.redactor, &m.title),
            content: clean(g.redactor, &m.content),
            pinned: m.pinned,
            quarantined: (g.quarantine)(&m),
        })
        .collect();
    let mut notes = Vec::new();
    let without = own.iter().filter(|r| r.purpose == "turn" && r.figures.is_none()).count();
    if without > 0 {
        notes.push(format!(
            "{without} agent request(s) were made before cairn kept what each request carried: they have no point in the context chart."
        ));
    }
    let title = if g.session.title.is_empty() { "(untitled session)".to_string() } else { g.session.title.clone() };
    Ok(SessionReport {
        title: clean(g.redactor, &title),
        subtitle: format!(
            "session {} · {} · {} · started {}",
            g.session.id, g.project_root, g.session.model, g.session.created_at
        ),
        generated_at: chrono::Local::now().format("%Y-%m-%d %H:%M").to_string(),
        requests,
        trailing,
        totals,
        counters: state.counters,
        outputs,
        segments,
        compactions,
        memories,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subagents_and_pings_are_their_own_kinds_and_the_totals_are_the_sessions_own() {
        use crate::config::ProviderKind;
        use crate::conversation::Mode;
        use crate::store::NewSession;
        let store = Store::open_in_memory().unwrap();
        let project = store.project(std::path::Path::new("/tmp/p")).unwrap();
        let new = || NewSession { provider: ProviderKind::Anthropic, model: "claude-sonnet-4-5", mode: Mode::Edit };
        let session = store.create_session(project, new()).unwrap();
        let child = store.create_child_session(project, new(), &session.id, "c1", "explore", "find it").unwrap();
        let u =
            |read: u64| Usage { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: read, ..Usage::default() };
        store.record_usage(&session.id, None, "turn", "claude-sonnet-4-5", &u(1_000)).unwrap();
        store.record_usage(&child.id, None, "turn", "claude-sonnet-4-5", &u(500)).unwrap();
        store.record_usage(&session.id, None, "keepalive", "claude-sonnet-4-5", &u(1_000)).unwrap();
        store.record_usage(&session.id, None, "compaction", "claude-sonnet-4-5", &u(0)).unwrap();
        let pricing = Pricing::default();
        let report = gather_session(&Gathered {
            store: &store,
            session: &session,
            project_root: "/tmp/p",
            pricing: &pricing,
            redactor: &Redactor::default(),
            chars_per_token: 3.2,
            quarantine: &|_| None,
        })
        .unwrap();
        let kinds: Vec<RequestKind> = report.requests.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, [RequestKind::Turn, RequestKind::Subagent, RequestKind::KeepAlive, RequestKind::Auxiliary]);
        let t = report.totals;
        assert_eq!((t.requests, t.cache_read_input_tokens, t.subagent_requests, t.keepalive_pings), (3, 2_000, 1, 1));
        let own: f64 = report.requests.iter().filter(|r| r.kind != RequestKind::Subagent).filter_map(|r| r.cost).sum();
        assert!((t.cost_usd.unwrap() - own).abs() < 1e-12, "the session's own requests, not its subagents'");
        assert!(t.keepalive_usd.is_some_and(|c| c > 0.0) && t.subagent_usd.is_some_and(|c| c > 0.0));
    }

    #[test]
    fn a_results_fate_names_every_step_in_order() {
        let mut state = ContextState::default();
        assert_eq!(fate(&state, "c1", 5, 100, 100), "sent whole, still in the context");
        state.replacements.insert(
            "c1".into(),
            crate::context::Replacement { kind: ReplacementKind::Pruned, text: "[cleared]".into() },
        );
        state.summary = Some(crate::context::SummaryState { text: "s".into(), through_seq: 9, generation: 1 });
        assert_eq!(
            fate(&state, "c1", 5, 1_000, 100),
            "truncated when produced (whole output kept for recall); then pruned: a one-line placeholder; then summarised away by a compaction"
        );
        assert_eq!(target_of(r#"{"command": "cargo   test\n -q"}"#), "cargo test -q");
    }
}
