//! What the answers to rewinds, library requests (sessions, memories, usage, diffs) and `/ps` and
//! `/stop` change in the interface: the view that asked fills, or a notice says what happened.

use super::App;
use crate::agent::{BackgroundAnswer, LibraryAnswer, LibraryError, LibraryRequest, RewindOutcome, UserCommand};
use crate::conversation::{job_lines, strip_terminal_controls};
use crate::tui::cells::{Cell, ChangesCell, NoticeKind};
use crate::tui::overlays::Overlay;

impl App {
    /// `/ps`, `/stop N`, or what a rewind ended: a notice (commands made safe to print).
    pub(super) fn on_background(&mut self, answer: BackgroundAnswer) {
        let command = |c: &str| strip_terminal_controls(&crate::conversation::clip(c, 100));
        if matches!(answer, BackgroundAnswer::Stopped(_)) {
            self.answered(super::submit::STOPPING_JOB);
        }
        match answer {
            BackgroundAnswer::List(jobs) => self.notice(NoticeKind::Info, job_lines(&jobs).join("\n")),
            BackgroundAnswer::Stopped(Ok(job)) => self.notice(
                NoticeKind::Info,
                format!("stopped background command {} ({}): $ {}", job.id, job.state.label(), command(&job.command)),
            ),
            BackgroundAnswer::Stopped(Err(e)) => self.notice(NoticeKind::Error, e),
            BackgroundAnswer::Rewound(jobs) => {
                let names: Vec<String> = jobs.iter().map(|j| format!("{} ($ {})", j.id, command(&j.command))).collect();
                self.notice(
                    NoticeKind::Info,
                    format!(
                        "ended background command {}: the rewind took back the turn that started it",
                        names.join(", ")
                    ),
                )
            }
        }
    }

    /// Say what a rewind did where the transcript continues; a rewound prompt goes back in the
    /// prompt box (unless something is being typed there), ready to edit and send again.
    pub(super) fn on_rewound(&mut self, result: Result<RewindOutcome, LibraryError>) {
        if matches!(self.overlay, Some(Overlay::Rewind(_))) {
            self.overlay = None;
        }
        match result {
            Ok(outcome) => {
                let kind = if outcome.complete() { NoticeKind::Info } else { NoticeKind::Warning };
                self.notice(kind, outcome.lines().join("\n"));
                if let Some(c) = &outcome.conversation
                    && self.composer.is_empty()
                    && !c.prompt.trim().is_empty()
                {
                    self.composer.set_text(&c.prompt);
                    self.flash("the rewound prompt is back in the prompt box: edit it and send, or clear it");
                }
            }
            Err(e) => self.notice(NoticeKind::Error, format!("rewind failed: {e}")),
        }
        self.transcript.follow();
    }

    /// Lists fill the view that asked for them (a view closed meanwhile ignores its answer);
    /// a change is said where the user made it — in the memories view, or as a notice — and
    /// the memories view shows the list as it now is.
    pub(super) fn on_library(&mut self, answer: LibraryAnswer) {
        match answer {
            LibraryAnswer::Sessions(result) => {
                if let Some(Overlay::Sessions(view)) = &mut self.overlay {
                    view.loading = false;
                    match result {
                        Ok(items) => {
                            // Start on the newest session that is not this one: that is what /resume is for.
                            view.selected =
                                items.iter().position(|s| Some(&s.id) != view.current.as_ref()).unwrap_or(0);
                            view.items = items;
                        }
                        Err(e) => view.error = Some(e.to_string()),
                    }
                }
            }
            LibraryAnswer::Memories(result) => {
                if let Some(Overlay::Memories(view)) = &mut self.overlay {
                    view.loading = false;
                    match result {
                        Ok(items) => {
                            view.items = items;
                            view.selected = view.selected.min(view.items.len().saturating_sub(1));
                            view.error = None;
                        }
                        Err(e) => view.error = Some(e.to_string()),
                    }
                }
            }
            LibraryAnswer::Turns(result) => {
                if let Some(Overlay::Rewind(view)) = &mut self.overlay {
                    match result {
                        Ok(turns) => view.show(turns),
                        Err(e) => {
                            view.loading = false;
                            view.error = Some(e.to_string());
                        }
                    }
                }
            }
            LibraryAnswer::Diff(result) => match result {
                Ok(d) => {
                    self.end_stream();
                    self.transcript.push(Cell::Changes(ChangesCell::new(d.title, &d.diff)));
                    self.transcript.follow();
                }
                Err(e) => self.notice(NoticeKind::Error, e.to_string()),
            },
            LibraryAnswer::Usage(result) => {
                if let Some(Overlay::Text(view)) = &mut self.overlay
                    && view.call_id.is_none()
                {
                    view.text = Some(
                        result
                            .map(|report| crate::agent::usage_lines(&report, super::submit::USAGE_DAYS).join("\n"))
                            .map_err(|e| e.to_string()),
                    );
                }
            }
            LibraryAnswer::ToolOutput { call_id, output } => {
                if let Some(Overlay::Text(view)) = &mut self.overlay
                    && view.call_id.as_deref() == Some(call_id.as_str())
                {
                    view.text = Some(output.map_err(|e| e.to_string()));
                }
            }
            LibraryAnswer::MemoryChanged(result) => {
                let in_view = matches!(self.overlay, Some(Overlay::Memories(_)));
                match (result, in_view) {
                    (Ok(done), true) => {
                        self.flash(done);
                        self.send(UserCommand::Library(LibraryRequest::Memories));
                    }
                    (Err(e), true) => self.flash(e.to_string()),
                    (Ok(done), false) => self.notice(NoticeKind::Info, done),
                    (Err(e), false) => self.notice(NoticeKind::Error, e.to_string()),
                }
            }
        }
    }
}
