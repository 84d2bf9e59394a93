//! Segments of the session (after kern): cut at topic shifts as the session grows; summarised,
//! in the background, once they have left the verbatim view; rolled up by tens; and the outline
//! of what the model no longer sees handed to the pipeline for the continuation message.

use std::sync::Arc;

use super::Worker;
use crate::agent::auxiliary::AuxModel;
use crate::context::{SegmentNode, outline, segment, transcript_piece};
use crate::store::{SegmentRow, Store};

const SEGMENT_PROMPT: &str = include_str!("../../../assets/prompts/segment.md");
/// Parents roll up this many children (as kern does).
const ROLLUP: usize = crate::context::SEGMENT_ROLLUP;
/// The outline takes at most this share of the window, and no more than this many tokens.
const OUTLINE_WINDOW_SHARE: f64 = 0.06;
const OUTLINE_MAX_TOKENS: u64 = 6_000;

impl Worker {
    /// Cut new level-0 segments from what has accumulated.
    pub(super) fn update_segments(&mut self) {
        let after = match self.place.store().last_segmented_seq(self.session.id()) {
            Ok(seq) => seq,
            Err(e) => return self.session.store_error(&e),
        };
        for cut in segment(self.session.pipeline().ledger(), after) {
            if let Err(e) =
                self.place.store().insert_segment(self.session.id(), 0, cut.first_seq, cut.last_seq, cut.tokens)
            {
                return self.session.store_error(&e);
            }
        }
    }

    /// Summarise, in the background, the segments that have left the verbatim view, then roll
    /// them up. Nothing to do while everything is still shown.
    pub(super) fn summarize_hidden_segments(&mut self) {
        if self.background.segmenting() {
            return;
        }
        let Ok(rows) = self.place.store().segments(self.session.id()) else { return };
        let state = self.session.pipeline().state();
        let hidden = |first: i64, last: i64| (first..=last).all(|s| !state.is_visible(s));
        // The job reads each segment's messages from the store: the pipeline no longer holds
        // the bodies of what a summary stands for.
        let todo: Vec<SegmentRow> = rows
            .iter()
            .filter(|r| r.level == 0 && r.summary.is_none() && hidden(r.first_seq, r.last_seq))
            .cloned()
            .collect();
        let rollup_pending = rows.iter().filter(|r| r.summary.is_some() && r.parent_id.is_none()).count() >= ROLLUP;
        if todo.is_empty() && !rollup_pending {
            return;
        }
        let job = SegmentJob {
            model: self.aux_model(tokio_util::sync::CancellationToken::new()),
            store: self.place.store().clone(),
            session: self.session.id().to_string(),
        };
        self.background.segment(job.run(todo));
    }

    /// The outline of segments no longer shown, for the continuation message.
    pub(super) fn refresh_outline(&mut self) {
        let state = self.session.pipeline().state();
        if state.summary.is_none() && state.trimmed.is_empty() {
            self.cache.outline_is("");
            self.session.pipeline_mut().set_outline(String::new());
            return;
        }
        let Ok(rows) = self.place.store().segments(self.session.id()) else { return };
        let nodes: Vec<SegmentNode> = rows
            .into_iter()
            .map(|r| SegmentNode {
                id: r.id,
                level: r.level,
                first_seq: r.first_seq,
                last_seq: r.last_seq,
                summary: r.summary,
                parent: r.parent_id,
            })
            .collect();
        let hidden = |first: i64, last: i64| (first..=last).all(|s| !state.is_visible(s));
        let budget_tokens = ((self.model.window() as f64 * OUTLINE_WINDOW_SHARE) as u64).min(OUTLINE_MAX_TOKENS);
        let budget_chars = (budget_tokens as f64 * self.place.config().context.chars_per_token) as usize;
        let chosen = outline(&nodes, &hidden, budget_chars);
        let text = if chosen.is_empty() {
            String::new()
        } else {
            let mut t = String::from("## Earlier in this session, by topic\n\n");
            for n in chosen {
                t.push_str(&format!(
                    "- messages {}–{}: {}\n",
                    n.first_seq,
                    n.last_seq,
                    n.summary.unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ")
                ));
            }
            t
        };
        self.cache.outline_is(&text);
        self.session.pipeline_mut().set_outline(text);
    }
}

/// Segment summaries and roll-ups, run in the background.
struct SegmentJob {
    model: AuxModel,
    store: Arc<Store>,
    session: String,
}

impl SegmentJob {
    async fn summarize(&self, text: &str, max_tokens: u32) -> Option<String> {
        match self.model.call("segment", SEGMENT_PROMPT, text, max_tokens).await {
            Ok(reply) => {
                let text = crate::context::redact_secrets(reply.trim()).into_owned();
                (!text.is_empty()).then_some(text)
            }
            Err(e) => {
                tracing::warn!(error = %e, "segment summary failed");
                None
            }
        }
    }

    /// What a segment's messages say, read from the store.
    fn transcript(&self, row: &SegmentRow) -> Option<String> {
        match self.store.live_messages_between(&self.session, row.first_seq, row.last_seq) {
            Ok(messages) => Some(messages.iter().map(|m| transcript_piece(&m.message)).collect::<Vec<_>>().join("\n")),
            Err(e) => {
                tracing::error!(error = %e, segment = row.id, "could not read a segment's messages");
                None
            }
        }
    }

    async fn run(self, todo: Vec<SegmentRow>) {
        for row in todo {
            let Some(transcript) = self.transcript(&row) else { continue };
            // 10–20:1 (as kern does).
            let max_tokens = (row.tokens / 12).clamp(150, 1_500) as u32;
            let excerpt = &transcript[..crate::conversation::floor_char_boundary(&transcript, 200_000)];
            if let Some(summary) = self.summarize(excerpt, max_tokens).await
                && let Err(e) = self.store.set_segment_summary(row.id, &summary)
            {
                tracing::error!(error = %e, "could not store a segment summary");
            }
        }
        // Roll up complete groups of ten, level by level.
        let mut level = 0;
        loop {
            let Ok(rows) = self.store.segments(&self.session) else { return };
            let orphans: Vec<SegmentRow> =
                rows.into_iter().filter(|r| r.level == level && r.summary.is_some() && r.parent_id.is_none()).collect();
            if orphans.len() < ROLLUP {
                if level > 4 {
                    return;
                }
                level += 1;
                if orphans.is_empty() && level > 1 {
                    return;
                }
                continue;
            }
            for group in orphans.chunks(ROLLUP).filter(|g| g.len() == ROLLUP) {
                let joined: String = group
                    .iter()
                    .map(|r| {
                        format!("[messages {}–{}]\n{}\n", r.first_seq, r.last_seq, r.summary.as_deref().unwrap_or(""))
                    })
                    .collect();
                let tokens: u64 = group.iter().map(|r| r.tokens).sum();
                if let Some(summary) = self.summarize(&joined, (tokens / 20).clamp(200, 2_000) as u32).await
                    && let Err(e) = self.store.insert_parent_segment(&self.session, level + 1, group, &summary)
                {
                    tracing::error!(error = %e, "could not store a parent segment");
                }
            }
        }
    }
}
