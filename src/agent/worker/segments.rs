//! Segments of the session (after kern): cut at topic shifts as the session grows; each given
//! its line by the compaction that hides it (in that compaction's one reply: no call of its
//! own); rolled up by tens, the parent made of its children's lines; and the outline of what
//! the model no longer sees handed to the pipeline for the continuation message.

use super::Worker;
use crate::context::{SegmentNode, render_outline, roll_up, rollups, segment};
use crate::store::SegmentRow;

/// A stored segment as the context layer reads it.
pub(super) fn node(r: SegmentRow) -> SegmentNode {
    SegmentNode {
        id: r.id,
        level: r.level,
        first_seq: r.first_seq,
        last_seq: r.last_seq,
        summary: r.summary,
        parent: r.parent_id,
    }
}

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

    /// The lines a compaction's reply wrote for the segments it hid: (first, last, line).
    pub(super) fn set_segment_lines(&mut self, lines: &[(i64, i64, String)]) {
        if lines.is_empty() {
            return;
        }
        let rows = self.place.store().segments(self.session.id()).unwrap_or_default();
        for (first, last, line) in lines {
            let Some(row) = rows.iter().find(|r| r.level == 0 && r.first_seq == *first && r.last_seq == *last) else {
                continue;
            };
            if let Err(e) = self.place.store().set_segment_summary(row.id, line) {
                tracing::error!(error = %e, "could not store a segment's line");
            }
        }
    }

    /// Roll complete groups of ten summarised segments up into a parent, level by level; the
    /// parent's line is made of its children's (no model call).
    pub(super) fn roll_up_segments(&mut self) {
        loop {
            let Ok(rows) = self.place.store().segments(self.session.id()) else { return };
            let by_id: std::collections::HashMap<i64, SegmentRow> = rows.iter().map(|r| (r.id, r.clone())).collect();
            let nodes: Vec<SegmentNode> = rows.into_iter().map(node).collect();
            let Some(group) = rollups(&nodes).into_iter().next() else { return };
            let children: Vec<SegmentRow> = group.iter().filter_map(|n| by_id.get(&n.id).cloned()).collect();
            let stored = self.place.store().insert_parent_segment(
                self.session.id(),
                group[0].level + 1,
                &children,
                &roll_up(&group),
            );
            if let Err(e) = stored {
                tracing::error!(error = %e, "could not store a parent segment");
                return;
            }
        }
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
        let nodes: Vec<SegmentNode> = rows.into_iter().map(node).collect();
        let hidden = |first: i64, last: i64| (first..=last).all(|s| !state.is_visible(s));
        let cpt = self.place.config().context.chars_per_token;
        let text = render_outline(&nodes, &hidden, self.model.window(), cpt);
        self.cache.outline_is(&text);
        self.session.pipeline_mut().set_outline(text);
    }
}
