//! Hierarchical segments of a session (seed 000, CONTEXT.md §9): level-0 segments cut at topic
//! shifts, found by lexical TF-IDF cosine similarity between the messages either side of a
//! cut; parents that roll up ten children each; and the outline injected when messages have
//! left the verbatim view — breadth-first from the highest level, within a budget, never a
//! segment that overlaps what is still sent verbatim.

use std::collections::HashMap;

use super::ledger::Ledger;
use super::terms::terms;

/// Segmentation waits for this many unsegmented messages… (000)
pub const MIN_PENDING_MESSAGES: usize = 10;
/// …and this many unsegmented tokens (000).
pub const MIN_PENDING_TOKENS: u64 = 10_000;
/// A segment has at least this many tokens and messages (000).
pub const MIN_SEGMENT_TOKENS: u64 = 5_000;
pub const MIN_SEGMENT_MESSAGES: usize = 10;
/// Segments aim at this size (000).
pub const TARGET_SEGMENT_TOKENS: u64 = 15_000;
/// Messages on each side of a candidate cut compared for similarity.
const WINDOW: usize = 4;
/// Below this similarity the two sides are about different things: cut there.
const SHIFT_SIMILARITY: f64 = 0.08;
/// Children per parent (000).
pub const ROLLUP: usize = 10;

/// A level-0 segment found: inclusive seq range and its rough size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub first_seq: i64,
    pub last_seq: i64,
    pub tokens: u64,
    pub messages: usize,
}

/// Term vector of one message, weighted later by the session's document frequencies.
fn vector(ledger: &Ledger, i: usize) -> HashMap<String, f64> {
    let mut v = HashMap::new();
    for t in terms(&ledger.entries()[i].message.text()) {
        *v.entry(t).or_insert(0.0) += 1.0;
    }
    if let Some(r) = ledger.entries()[i].message.tool_result() {
        // Tool output is long and noisy: let a little of it count.
        for t in terms(&r.content[..crate::conversation::floor_char_boundary(&r.content, 600)]) {
            *v.entry(t).or_insert(0.0) += 0.5;
        }
    }
    v
}

fn cosine(a: &HashMap<String, f64>, b: &HashMap<String, f64>, idf: &dyn Fn(&str) -> f64) -> f64 {
    let dot: f64 = a.iter().filter_map(|(t, x)| b.get(t).map(|y| x * y * idf(t) * idf(t))).sum();
    let norm = |v: &HashMap<String, f64>| v.iter().map(|(t, x)| (x * idf(t)).powi(2)).sum::<f64>().sqrt();
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na * nb) }
}

/// New level-0 segments among the entries after `after_seq`: as many as the rules allow, each
/// ending where the topic shifts most (or at the target size).
pub fn segment(ledger: &Ledger, after_seq: i64) -> Vec<Cut> {
    let entries = ledger.entries();
    let start = entries.iter().position(|e| e.seq > after_seq).unwrap_or(entries.len());
    let pending = &entries[start..];
    let pending_tokens: u64 = pending.iter().map(|e| e.tokens).sum();
    if pending.len() < MIN_PENDING_MESSAGES || pending_tokens < MIN_PENDING_TOKENS {
        return Vec::new();
    }
    let vectors: Vec<HashMap<String, f64>> = (start..entries.len()).map(|i| vector(ledger, i)).collect();
    let mut df: HashMap<&str, f64> = HashMap::new();
    for v in &vectors {
        for t in v.keys() {
            *df.entry(t.as_str()).or_insert(0.0) += 1.0;
        }
    }
    let n = vectors.len() as f64;
    let idf = |t: &str| (1.0 + n / df.get(t).copied().unwrap_or(1.0)).ln();
    let mut cuts = Vec::new();
    let mut seg_start = 0;
    while seg_start < pending.len() {
        // The earliest and latest places this segment may end (exclusive).
        let mut tokens = 0u64;
        let mut earliest = None;
        let mut latest = pending.len();
        for (k, e) in pending.iter().enumerate().skip(seg_start) {
            tokens += e.tokens;
            let count = k + 1 - seg_start;
            if earliest.is_none() && tokens >= MIN_SEGMENT_TOKENS && count >= MIN_SEGMENT_MESSAGES {
                earliest = Some(k + 1);
            }
            if tokens >= TARGET_SEGMENT_TOKENS && earliest.is_some() {
                latest = k + 1;
                break;
            }
        }
        let Some(earliest) = earliest else { break };
        // What follows must be able to become a segment too, unless the target forced a cut.
        let rest_tokens: u64 = pending[earliest..].iter().map(|e| e.tokens).sum();
        if latest == pending.len() && rest_tokens < MIN_SEGMENT_TOKENS {
            break;
        }
        let mut best: Option<(f64, usize)> = None;
        for cut in earliest..latest.min(pending.len()) {
            if !pending[cut].starts_unit() {
                continue;
            }
            let left: HashMap<String, f64> = merge(&vectors[cut.saturating_sub(WINDOW).max(seg_start)..cut]);
            let right: HashMap<String, f64> = merge(&vectors[cut..(cut + WINDOW).min(vectors.len())]);
            let similarity = cosine(&left, &right, &idf);
            // Prefer cuts before a user message: that is where topics usually change.
            let bias = if pending[cut].role() == crate::conversation::Role::User { 0.05 } else { 0.0 };
            let score = similarity - bias;
            if best.is_none_or(|(s, _)| score < s) {
                best = Some((score, cut));
            }
        }
        let forced = latest < pending.len();
        let Some((score, cut)) = best else { break };
        if !forced && score > SHIFT_SIMILARITY {
            // No clear shift yet and no size pressure: wait for more messages.
            break;
        }
        let slice = &pending[seg_start..cut];
        cuts.push(Cut {
            first_seq: slice[0].seq,
            last_seq: slice[slice.len() - 1].seq,
            tokens: slice.iter().map(|e| e.tokens).sum(),
            messages: slice.len(),
        });
        seg_start = cut;
    }
    cuts
}

fn merge(vectors: &[HashMap<String, f64>]) -> HashMap<String, f64> {
    let mut out = HashMap::new();
    for v in vectors {
        for (t, x) in v {
            *out.entry(t.clone()).or_insert(0.0) += x;
        }
    }
    out
}

/// A segment as stored, for the outline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentNode {
    pub id: i64,
    pub level: u32,
    pub first_seq: i64,
    pub last_seq: i64,
    pub summary: Option<String>,
    pub parent: Option<i64>,
}

/// The outline of what the model no longer sees verbatim: starting from the highest-level
/// summaries, replace a node by its children (oldest first, level by level) while the budget
/// allows. Only nodes whose whole range is hidden (`hidden(first, last)`) and summarised count.
pub fn outline(nodes: &[SegmentNode], hidden: &dyn Fn(i64, i64) -> bool, budget_chars: usize) -> Vec<SegmentNode> {
    let usable = |n: &SegmentNode| n.summary.is_some() && hidden(n.first_seq, n.last_seq);
    let children = |id: i64| -> Vec<SegmentNode> {
        let mut c: Vec<SegmentNode> = nodes.iter().filter(|n| n.parent == Some(id)).cloned().collect();
        c.sort_by_key(|n| n.first_seq);
        c
    };
    // Roots: usable nodes whose parent is missing or not usable.
    let mut frontier: Vec<SegmentNode> = nodes
        .iter()
        .filter(|n| usable(n) && n.parent.is_none_or(|p| !nodes.iter().any(|m| m.id == p && usable(m))))
        .cloned()
        .collect();
    frontier.sort_by_key(|n| n.first_seq);
    let size = |f: &[SegmentNode]| f.iter().map(|n| n.summary.as_ref().map_or(0, String::len) + 40).sum::<usize>();
    while size(&frontier) > budget_chars && !frontier.is_empty() {
        // Over budget even at the top: drop the oldest roots (their children are older still).
        frontier.remove(0);
    }
    // Breadth-first: expand the highest level first, oldest first within it.
    while let Some(top) = frontier.iter().filter(|n| n.level > 0).map(|n| n.level).max() {
        let mut expanded = false;
        for i in 0..frontier.len() {
            if frontier[i].level != top {
                continue;
            }
            let kids: Vec<SegmentNode> = children(frontier[i].id).into_iter().filter(|k| usable(k)).collect();
            if kids.is_empty() {
                continue;
            }
            let mut trial = frontier.clone();
            trial.splice(i..=i, kids);
            if size(&trial) <= budget_chars {
                frontier = trial;
                expanded = true;
                break;
            }
        }
        if !expanded {
            break;
        }
    }
    frontier
}

#[cfg(test)]
#[path = "segments_tests.rs"]
mod tests;
