//! A stored session as cells: what a resumed transcript shows — the same cells the live
//! session showed, built from the messages and the agent's recap (each call's summary, the turn
//! summaries, the compactions, what each prompt attached). The turn summary and compaction
//! lines are written here for live turns too, so the two cannot drift.

use std::collections::HashMap;
use std::time::Duration;

use super::App;
use crate::agent::{CompactionTrigger, HistoryMark, HistoryRecap, TurnStats};
use crate::conversation::tool_names::TASK;
use crate::conversation::{Block, Message, Role, ToolDisplay, format_tokens};
use crate::tui::cells::{AssistantCell, Cell, NoticeCell, NoticeKind, SubagentStatus, ToolCell, ToolStatus, UserCell};

/// The quiet line under a finished turn: time, requests, tokens, cache share, cost — the same
/// for a live turn and one read back from the store.
pub(crate) fn turn_summary_text(elapsed: Option<Duration>, stats: &TurnStats) -> String {
    let mut parts = Vec::new();
    if let Some(e) = elapsed {
        parts.push(crate::tui::cells::format_duration(e));
    }
    parts.push(format!("{} request{}", stats.all_requests, if stats.all_requests == 1 { "" } else { "s" }));
    let u = stats.usage;
    parts.push(format!("{} in · {} out", format_tokens(u.prompt_tokens()), format_tokens(u.output_tokens)));
    if u.prompt_tokens() > 0 && u.cache_read_input_tokens > 0 {
        parts
            .push(format!("{}% cached", crate::conversation::percent_of(u.cache_read_input_tokens, u.prompt_tokens())));
    }
    if let Some(usd) = stats.cost_usd {
        parts.push(crate::config::format_usd(usd));
    }
    parts.join(" · ")
}

pub(super) fn trigger_text(t: CompactionTrigger) -> &'static str {
    match t {
        CompactionTrigger::Auto => "automatic",
        CompactionTrigger::Manual => "/compact",
        CompactionTrigger::Overflow => "the provider said the request was too long",
    }
}

/// The notice of a finished compaction, live or read back.
pub(super) fn compacted_text(trigger: CompactionTrigger, before: u64, after: u64, summary: u64) -> String {
    format!(
        "compacted: {} → {} tokens (summary {}, {})",
        format_tokens(before),
        format_tokens(after),
        format_tokens(summary),
        trigger_text(trigger)
    )
}

impl App {
    /// A session's stored messages as cells: prompts (with what they attached), answers, each
    /// tool call with its result (and, from the store, its summary, diff and duration), and
    /// the turn summaries and compactions where they happened — as the live session showed.
    pub(super) fn load_history(
        &mut self,
        history: &[std::sync::Arc<Message>],
        displays: &HashMap<String, ToolDisplay>,
        recap: &HistoryRecap,
    ) {
        let mut prompts = Vec::new();
        let mut marks = recap.marks.iter().peekable();
        for (index, message) in history.iter().enumerate() {
            match message.role {
                Role::User => {
                    let cell = match crate::agent::split_attachments(&message.content) {
                        Some((prompt, attachments)) => UserCell { attachments, ..UserCell::new(prompt) },
                        None => UserCell::new(message.text()),
                    };
                    prompts.push(cell.text.clone());
                    self.transcript.push(Cell::User(cell));
                }
                Role::Assistant => {
                    self.push_thinking(message);
                    if !message.text().trim().is_empty() {
                        self.transcript.push(Cell::Assistant(AssistantCell::shared(message.clone())));
                    }
                    for call in message.tool_calls() {
                        if call.name == TASK {
                            self.update_subagent(&call.id, |s| s.take_arguments(&call.arguments));
                            // Its work as the live cell showed it: its calls, its tokens.
                            for event in recap.subagents.get(&call.id).into_iter().flatten() {
                                self.on_subagent(&call.id, event.clone());
                            }
                            continue;
                        }
                        let mut cell = ToolCell::new(call.id.clone(), call.name.clone());
                        cell.summary = recap
                            .summaries
                            .get(&call.id)
                            .cloned()
                            .unwrap_or_else(|| ToolCell::summary_from_arguments(&call.arguments));
                        cell.expanded = self.expand_all;
                        self.transcript.push(Cell::Tool(cell));
                    }
                }
                Role::Tool => {
                    for block in &message.content {
                        let Block::ToolResult(result) = block else { continue };
                        let record = displays.get(&result.call_id);
                        if result.name == TASK {
                            let (duration, not_run) =
                                record.map(|r| (Duration::from_millis(r.duration_ms), r.not_run)).unwrap_or_default();
                            self.update_subagent(&result.call_id, |s| {
                                s.set_report(&result.content);
                                s.status = if not_run {
                                    SubagentStatus::NotRun
                                } else {
                                    SubagentStatus::Done { is_error: result.is_error, duration }
                                };
                            });
                            continue;
                        }
                        let Some(i) = self.find_tool(&result.call_id) else { continue };
                        let (diff, duration, approval) = match &record {
                            Some(r) => {
                                (r.diff.clone(), std::time::Duration::from_millis(r.duration_ms), r.decided_by.clone())
                            }
                            None => (None, std::time::Duration::ZERO, None),
                        };
                        let not_run = record.as_ref().is_some_and(|r| r.not_run);
                        self.transcript.update(i, |c| {
                            if let Cell::Tool(t) = c {
                                t.set_output(&result.content);
                                t.diff = diff.filter(|d| !d.trim().is_empty());
                                t.approval = approval;
                                t.status = if not_run {
                                    ToolStatus::NotRun
                                } else {
                                    ToolStatus::Done {
                                        is_error: result.is_error,
                                        exit_code: result.exit_code,
                                        duration,
                                    }
                                };
                            }
                        });
                    }
                }
            }
            while let Some((_, mark)) = marks.next_if(|(after, _)| *after == index) {
                let cell = match mark {
                    HistoryMark::TurnEnd { elapsed, stats } => {
                        NoticeCell::new(NoticeKind::TurnEnd, turn_summary_text(Some(*elapsed), stats))
                    }
                    HistoryMark::Compaction { trigger, tokens_before, tokens_after, summary_tokens } => {
                        NoticeCell::new(
                            NoticeKind::Compaction,
                            compacted_text(*trigger, *tokens_before, *tokens_after, *summary_tokens),
                        )
                    }
                };
                self.transcript.push(Cell::Notice(cell));
            }
        }
        // Calls whose results never came (a crash mid-turn) are shown as not run.
        self.close_open_calls();
        self.composer.remember(prompts);
    }
}
