//! A stored session told the way the live one was: each call's summary as its tool gives it,
//! the turn summaries (time, requests, tokens, cost) and the compactions, placed after the
//! messages they followed — so a resumed transcript shows the same cells as the live one.
//! Also the format of attachments in a stored prompt, read back for the transcript.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::events::{Attachment, CompactionTrigger, HistoryMark, HistoryRecap, TurnStats};
use super::spend::add_cost;
use crate::config::Pricing;
use crate::context::estimate_text_tokens;
use crate::conversation::{Block, Message, Role};
use crate::store::{LoggedCompaction, UsageRow};

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

/// The recap of `history`, whose messages were stored at `times` (same order), from the
/// session's usage rows and compaction log.
pub(super) fn recap(
    history: &[Arc<Message>],
    times: &[String],
    usage: &[UsageRow],
    compactions: &[LoggedCompaction],
    pricing: &Pricing,
    chars_per_token: f64,
    root: &Path,
) -> HistoryRecap {
    let mut out = HistoryRecap::default();
    for call in history.iter().filter(|m| m.role == Role::Assistant).flat_map(|m| m.tool_calls()) {
        if let Some(summary) = crate::tools::summary_of(&call.name, &call.arguments, root) {
            out.summaries.insert(call.id.clone(), summary);
        }
    }
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
        let rows: Vec<&UsageRow> = usage
            .iter()
            .filter(|r| r.created_at.as_str() >= from && until.is_none_or(|u| r.created_at.as_str() < u))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let mut stats = TurnStats::default();
        for r in &rows {
            stats.all_requests += 1;
            if r.purpose == "turn" {
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
        let usage = vec![row("turn", &t(2), 1_000_000), row("turn", &t(5), 0), row("turn", &t(13), 0)];
        let compactions = vec![LoggedCompaction {
            trigger: "auto".into(),
            tokens_before: 171_000,
            tokens_after: 38_500,
            summary_bytes: 4_000,
            created_at: t(12),
        }];
        let recap = recap(&history, &times, &usage, &compactions, &Pricing::default(), 4.0, Path::new("/p"));
        assert_eq!(recap.summaries["c1"], "$ cargo test");
        assert_eq!(recap.marks.len(), 3);
        let (at, HistoryMark::TurnEnd { elapsed, stats }) = &recap.marks[0] else { panic!("{:?}", recap.marks) };
        assert_eq!((*at, elapsed.as_secs(), stats.requests), (2, 5, 2));
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
