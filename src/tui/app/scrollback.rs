//! What of the transcript is final, for the terminal's scrollback (inline mode), and what is
//! still changing, for the viewport. Cells leave in order, each once it can no longer change: a
//! prompt once what it attached is known, an answer block by block as it streams (the cut
//! `settled` proposes, kept only when its rows are the first rows of the whole answer), a call
//! once it has its result, a retry notice once its request has settled, thinking once it ends.

use ratatui::text::Line;

use super::App;
use crate::tui::cells::Cell;
use crate::tui::settled::settled_len;
use crate::tui::transcript::Committed;

/// How much of a cell can go to the scrollback now.
enum Settled {
    Whole,
    /// An answer still streaming: its rows up to this many bytes of its text.
    Upto(usize),
    Not,
}

impl App {
    /// Rows that have become final since the last call, laid out for `width`, in order; each
    /// row is handed out once. `all` hands out everything (the interface is closing).
    pub(crate) fn take_settled(&mut self, width: u16, all: bool) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        loop {
            let Committed { cells: i, bytes } = self.transcript.committed();
            if i >= self.transcript.len() {
                break;
            }
            match if all { Settled::Whole } else { self.settled(i) } {
                Settled::Whole => {
                    let rows = self.transcript.entry_rows(i, width, &self.theme);
                    let skip = if bytes > 0 { self.prefix_rows(i, bytes, width) } else { 0 };
                    out.extend(rows.into_iter().skip(skip));
                    self.transcript.commit_cell();
                }
                Settled::Upto(cut) if cut > bytes => {
                    let Some(Cell::Assistant(answer)) = self.transcript.get(i) else { break };
                    let gap = usize::from(self.transcript.has_gap(i));
                    let prefix = answer.prefix_lines(cut, width, &self.theme);
                    let whole = self.transcript.entry_rows(i, width, &self.theme);
                    let end = gap + prefix.len();
                    // Only a cut whose rows the whole answer begins with: anything else would
                    // show rows that later change.
                    if whole.len() >= end && whole[gap..end] == prefix[..] {
                        let skip = if bytes > 0 { self.prefix_rows(i, bytes, width) } else { 0 };
                        out.extend(whole[skip.min(end)..end].iter().cloned());
                        self.transcript.commit_bytes(cut);
                        self.transcript.remember_prefix_rows(i, width, cut, end);
                    }
                    break;
                }
                Settled::Upto(_) | Settled::Not => break,
            }
        }
        out
    }

    /// The rows still changing, for the viewport: every cell the scrollback does not hold
    /// yet, from the row where it stopped.
    pub(crate) fn live_rows(&self, width: u16) -> Vec<Line<'static>> {
        let Committed { cells, bytes } = self.transcript.committed();
        let mut rows = Vec::new();
        for i in cells..self.transcript.len() {
            let mut cell = self.transcript.entry_rows(i, width, &self.theme);
            if i == cells && bytes > 0 {
                let skip = self.prefix_rows(i, bytes, width).min(cell.len());
                cell.drain(..skip);
            }
            rows.extend(cell);
        }
        rows
    }

    /// Whether the interface must be shown whole, on the alternate screen, in inline mode: a
    /// view over the transcript, its search, the transcript scrolled back, the setup screen.
    pub(crate) fn wants_full_view(&self) -> bool {
        self.overlay.is_some()
            || self.search.is_some()
            || !self.transcript.is_following()
            || matches!(self.phase, super::Phase::Setup { .. })
    }

    fn settled(&self, i: usize) -> Settled {
        let whole_if = |done: bool| if done { Settled::Whole } else { Settled::Not };
        match self.transcript.get(i) {
            Some(Cell::User(_)) => {
                let latest = self.transcript.rposition(|c| matches!(c, Cell::User(_))) == Some(i);
                whole_if(!(latest && self.turn.attaching))
            }
            Some(Cell::Assistant(a)) if a.streaming => Settled::Upto(settled_len(a.text.as_str())),
            Some(Cell::Assistant(_) | Cell::Changes(_)) => Settled::Whole,
            Some(Cell::Tool(t)) => whole_if(t.is_finished()),
            Some(Cell::Subagent(s)) => whole_if(s.is_finished()),
            Some(Cell::Notice(_)) => whole_if(self.turn.retry.as_ref().is_none_or(|r| r.0 != i)),
            Some(Cell::Thinking(t)) => whole_if(!t.streaming),
            None => Settled::Not,
        }
    }

    /// Rows of cell `i` (its gap row and the rows of its first `bytes` bytes) already in the
    /// scrollback, at `width`.
    fn prefix_rows(&self, i: usize, bytes: usize, width: u16) -> usize {
        if let Some(rows) = self.transcript.remembered_prefix_rows(i, width, bytes) {
            return rows;
        }
        let Some(Cell::Assistant(answer)) = self.transcript.get(i) else { return 0 };
        let rows = usize::from(self.transcript.has_gap(i)) + answer.prefix_lines(bytes, width, &self.theme).len();
        self.transcript.remember_prefix_rows(i, width, bytes, rows);
        rows
    }
}

#[cfg(test)]
#[path = "scrollback_tests.rs"]
mod tests;
