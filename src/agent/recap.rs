//! A stored session told the way the live one was: each call's summary as its tool gives it,
//! the turn summaries (time, requests, tokens, cost) and the compactions, placed after the
//! messages they followed — so a resumed transcript shows the same cells as the live one.
//! Also the format of attachments in a stored prompt, read back for the transcript.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use std::collections::HashMap;

use super::events::{
    Attachment, CompactionTrigger, HistoryMark, HistoryRecap, SubagentEvent, SubagentOutcome, TurnStats,
};
use super::spend::add_cost;
use crate::config::Pricing;
use crate::context::estimate_text_tokens;
use crate::conversation::tool_names::TASK;
use crate::conversation::{Block, Message, Role, ToolDisplay, Usage};
use crate::store::{LoggedCompaction, Store, StoreError, SubagentSession, UsageRow};

/// How an attached file or folder starts in a user message.
pub(super) const ATTACHMENT_OPEN: &str = "<attachment path=\"";

/// The prompt and the attachments of a stored user message; `None` when it has none.
pub fn split_attachments(blocks: &[Block]) -> Option<(String, Vec<Attachment>)> {
    let mut texts = blocks.iter().filter_map(|b| match b {
        Block::Text { text } => Some(text.as_str()),
        Block::ToolCall(_) | Block::ToolResult(_) | Block::Thinking(_) | Block::Image(_) => None,
    });
    let prompt = texts.next()?.to_string();
    // Images a prompt attached are stored as themselves, before its text.
    let images = blocks.iter().filter_map(|b| match b {
        Block::Image(image) => Some(Attachment {
            path: image.source.clone(),
            detail: format!(
                "{} image, {}×{}",
                image.media_type.strip_prefix("image/").unwrap_or(&image.media_type).to_ascii_uppercase(),
                image.width,
                image.height
            ),
            attached: true,
        }),
        Block::Text { .. } | Block::ToolCall(_) | Block::ToolResult(_) | Block::Thinking(_) => None,
    });
    let attachments: Vec<Attachment> = images
        .chain(texts.filter_map(|t| {
            let rest = t.strip_prefix(ATTACHMENT_OPEN)?;
            let (path, rest) = rest.split_once('"')?;
            let detail = rest.split_once("detail=\"").and_then(|(_, d)| d.split_once('"')).map(|(d, _)| d);
            Some(Attachment { path: path.to_string(), detail: detail.unwrap_or_default().to_string(), attached: true })
        }))
        .collect();
    (!attachments.is_empty()).then_some((prompt, attachments))
}

fn seconds_between(from: &str, to: &str) -> Duration {
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    match (parse(from), parse(to)) {
        (Some(a), Some(b)) => (b - a).to_std().unwrap_or_default(),
        _ => Duration::ZERO,
    }
}

fn trigger(name: &str) -> CompactionTrigger {
    match name {
        "manual" => CompactionTrigger::Manual,
        "overflow" => CompactionTrigger::Overflow,
        _ => CompactionTrigger::Auto,
    }
}

/// Each call's summary as its tool gave it (kept with the call), else as its arguments make it.
fn summaries(
    history: &[Arc<Message>],
    displays: &HashMap<String, ToolDisplay>,
    root: &Path,
) -> HashMap<String, String> {
    history
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| m.tool_calls())
        .filter_map(|call| {
            let kept = displays.get(&call.id).and_then(|d| d.summary.clone());
            let summary = kept.or_else(|| crate::tools::summary_of(&call.name, &call.arguments, root))?;
            Some((call.id.clone(), summary))
        })
        .collect()
}

/// The recap of `history`, whose messages were stored at `times` (same order), from the
/// session's usage rows (its subagents' among them) and compaction log.
#[allow(clippy::too_many_arguments)] // the parts of a stored session, each read once by the caller
pub(super) fn recap(
    history: &[Arc<Message>],
    times: &[String],
    displays: &HashMap<String, ToolDisplay>,
    usage: &[UsageRow],
    compactions: &[LoggedCompaction],
    pricing: &Pricing,
    chars_per_token: f64,
    root: &Path,
) -> HistoryRecap {
    let mut out = HistoryRecap { summaries: summaries(history, displays, root), ..HistoryRecap::default() };
    if times.len() != history.len() || history.is_empty() {
        return out;
    }
    // Marks with the time they happened, to order two after the same message.
    let mut marks: Vec<(usize, String, HistoryMark)> = Vec::new();
    let starts: Vec<usize> = (0..history.len()).filter(|&i| history[i].role == Role::User).collect();
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(history.len());
        let from = times[start].as_str();
        let until = starts.get(k + 1).map(|&next| times[next].as_str());
        // A turn a rewind took back is gone from the history: its requests are no later turn's.
        // A keep-alive ping, sent while the user was away, was no turn's either.
        let rows: Vec<&UsageRow> = usage
            .iter()
            .filter(|r| !r.rewound && r.purpose != "keepalive")
            .filter(|r| r.created_at.as_str() >= from && until.is_none_or(|u| r.created_at.as_str() < u))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let mut stats = TurnStats::default();
        for r in &rows {
            // A subagent's requests count in the turn that started it, as they did live.
            stats.all_requests += 1;
            if r.purpose == "turn" && !r.subagent {
                stats.requests += 1;
            }
            stats.usage.add(&r.usage);
            stats.cost_usd = add_cost(stats.cost_usd, pricing.cost(&r.model, &r.usage));
        }
        let last = rows.iter().map(|r| r.created_at.as_str()).chain([times[end - 1].as_str()]).max().unwrap_or(from);
        marks.push((end - 1, last.to_string(), HistoryMark::TurnEnd { elapsed: seconds_between(from, last), stats }));
    }
    for c in compactions {
        let Some(index) = times.iter().rposition(|t| *t <= c.created_at) else { continue };
        marks.push((
            index,
            c.created_at.clone(),
            HistoryMark::Compaction {
                trigger: trigger(&c.trigger),
                tokens_before: c.tokens_before,
                tokens_after: c.tokens_after,
                summary_tokens: estimate_text_tokens(c.summary_bytes, chars_per_token),
            },
        ));
    }
    marks.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    out.marks = marks.into_iter().map(|(i, _, m)| (i, m)).collect();
    out
}

/// What each `task` call of `history` showed live, from the subagents' stored sessions: what
/// it was, each call it made and what it wrote, then its requests and tokens (its own
/// subagents' included). A session stored before cairn kept the call that started it is found
/// by its job among those not yet matched.
pub(super) fn subagents(
    store: &Store,
    session: &str,
    history: &[Arc<Message>],
    root: &Path,
) -> Result<HashMap<String, Vec<SubagentEvent>>, StoreError> {
    let children = store.subagent_sessions(session)?;
    if children.is_empty() {
        return Ok(HashMap::new());
    }
    let mut used = vec![false; children.len()];
    let mut out = HashMap::new();
    for call in history.iter().filter(|m| m.role == Role::Assistant).flat_map(|m| m.tool_calls()) {
        if call.name != TASK {
            continue;
        }
        let job = serde_json::from_str::<serde_json::Value>(&call.arguments)
            .ok()
            .and_then(|a| a.get("description").and_then(|d| d.as_str()).map(str::to_string))
            .unwrap_or_default();
        let found = children.iter().position(|c| c.call_id.as_deref() == Some(call.id.as_str())).or_else(|| {
            (0..children.len()).find(|&i| !used[i] && children[i].call_id.is_none() && children[i].title == job)
        });
        let Some(i) = found else { continue };
        used[i] = true;
        out.insert(call.id.clone(), told(store, &children[i], root)?);
    }
    Ok(out)
}

/// One subagent's session as the events its live run sent.
fn told(store: &Store, child: &SubagentSession, root: &Path) -> Result<Vec<SubagentEvent>, StoreError> {
    let displays = store.tool_display(&child.id)?;
    let summary = |id: &str, name: &str, arguments: &str| {
        displays
            .get(id)
            .and_then(|d| d.summary.clone())
            .or_else(|| crate::tools::summary_of(name, arguments, root))
            .unwrap_or_default()
    };
    let mut events = vec![SubagentEvent::Started {
        agent_type: child.agent_type.clone(),
        description: child.title.clone(),
        session_id: child.id.clone(),
        model: child.model.clone(),
        mode: child.mode,
    }];
    let mut summaries = HashMap::new();
    for stored in store.messages(&child.id)? {
        let message = stored.message;
        match message.role {
            Role::Assistant => {
                let text = message.text();
                if !text.trim().is_empty() {
                    events.push(SubagentEvent::Text { text });
                }
                for call in message.tool_calls() {
                    let line = summary(&call.id, &call.name, &call.arguments);
                    summaries.insert(call.id.clone(), line.clone());
                    events.push(SubagentEvent::ToolStarted {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        summary: line,
                    });
                }
            }
            Role::Tool => {
                for block in &message.content {
                    let Block::ToolResult(result) = block else { continue };
                    events.push(SubagentEvent::ToolFinished {
                        call_id: result.call_id.clone(),
                        tool: result.name.clone(),
                        summary: summaries.get(&result.call_id).cloned().unwrap_or_default(),
                        is_error: result.is_error,
                        not_run: displays.get(&result.call_id).is_some_and(|d| d.not_run),
                    });
                }
            }
            Role::User => {}
        }
    }
    let rows = store.usage_rows(&child.id)?;
    let mut usage = Usage::default();
    for r in &rows {
        usage.add(&r.usage);
    }
    events.push(SubagentEvent::Finished {
        outcome: SubagentOutcome::Reported,
        report: String::new(),
        usage,
        requests: u32::try_from(rows.len()).unwrap_or(u32::MAX),
    });
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{ToolCall, Usage};

    fn row(purpose: &str, at: &str, input: u64) -> UsageRow {
        UsageRow {
            purpose: purpose.into(),
            model: "claude-sonnet-4-5".into(),
            usage: Usage { input_tokens: input, output_tokens: 10, ..Usage::default() },
            created_at: at.into(),
            subagent: false,
            rewound: false,
        }
    }

    #[test]
    fn turns_end_after_their_last_message_with_their_requests_and_cost() {
        let mut call = Message::assistant("");
        call.content.push(Block::ToolCall(ToolCall::new("c1", "bash", r#"{"command":"cargo test"}"#)));
        let history: Vec<Arc<Message>> =
            [Message::user("one"), call, Message::assistant("done"), Message::user("two"), Message::assistant("ok")]
                .into_iter()
                .map(Arc::new)
                .collect();
        let t = |s: u32| format!("2026-11-20T12:00:{s:02}.000Z");
        let times = vec![t(0), t(2), t(5), t(10), t(13)];
        // A keep-alive ping while the user was away belongs to no turn.
        let usage = vec![
            row("turn", &t(2), 1_000_000),
            row("turn", &t(5), 0),
            row("keepalive", &t(8), 0),
            row("turn", &t(13), 0),
        ];
        let compactions = vec![LoggedCompaction {
            trigger: "auto".into(),
            tokens_before: 171_000,
            tokens_after: 38_500,
            summary_bytes: 4_000,
            created_at: t(12),
        }];
        let displays = HashMap::new();
        let recap = recap(&history, &times, &displays, &usage, &compactions, &Pricing::default(), 4.0, Path::new("/p"));
        assert_eq!(recap.summaries["c1"], "$ cargo test");
        assert_eq!(recap.marks.len(), 3);
        let (at, HistoryMark::TurnEnd { elapsed, stats }) = &recap.marks[0] else { panic!("{:?}", recap.marks) };
        assert_eq!((*at, elapsed.as_secs(), stats.requests, stats.all_requests), (2, 5, 2, 2));
        assert!((stats.cost_usd.unwrap() - 3.0003).abs() < 1e-9, "{stats:?}");
        assert!(matches!(
            recap.marks[1],
            (3, HistoryMark::Compaction { tokens_before: 171_000, summary_tokens: 1_000, .. })
        ));
        assert!(matches!(recap.marks[2], (4, HistoryMark::TurnEnd { .. })));
    }

    #[test]
    fn a_stored_prompt_is_told_apart_from_its_attachments() {
        let blocks = vec![
            Block::Text { text: "explain @src/a.rs".into() },
            Block::Text {
                text: format!(
                    "{ATTACHMENT_OPEN}src/a.rs\" detail=\"3 lines\" how=\"as file_read shows it\">\n1\tx\n</attachment>"
                ),
            },
        ];
        let (prompt, attached) = split_attachments(&blocks).unwrap();
        assert_eq!(prompt, "explain @src/a.rs");
        assert_eq!(attached, [Attachment { path: "src/a.rs".into(), detail: "3 lines".into(), attached: true }]);
        assert_eq!(split_attachments(&[Block::Text { text: "plain".into() }]), None);
        // An attached image is stored as itself, before the prompt, and listed first.
        let image = crate::conversation::Image {
            media_type: "image/png".into(),
            data: "AAAA".into(),
            width: 1_568,
            height: 1_045,
            source: "shot.png".into(),
        };
        let mut with_image = vec![Block::Image(image)];
        with_image.extend(blocks);
        let (prompt, attached) = split_attachments(&with_image).unwrap();
        assert_eq!(prompt, "explain @src/a.rs");
        assert_eq!(
            attached[0],
            Attachment { path: "shot.png".into(), detail: "PNG image, 1568×1045".into(), attached: true }
        );
        assert_eq!(attached[1].path, "src/a.rs");
    }
}
