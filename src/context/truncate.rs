//! Output truncation (CONTEXT.md §2): every tool result over the limits keeps its head *and*
//! its tail, cut on line (or, for one huge line, character) boundaries, with a notice saying
//! what was omitted and where the full output is. Writing that file is the caller's job; this
//! module only decides and renders.

use super::budget::ContextBudget;
use crate::config::ContextConfig;
use crate::conversation::floor_char_boundary;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TruncationLimits {
    pub max_lines: usize,
    pub max_bytes: usize,
    /// Share of the allowance taken from the head.
    pub head_share: f64,
}

/// Small windows: one result may take at most this share of the effective window (**cairn**:
/// 50 KB is most of an 8k model's window). A result is read again on every request until a
/// compaction takes it, and each large one brings the next compaction closer; the rest of it
/// is one `file_read` with offset/limit away. Measured on the corpus (docs/context-costs.md):
/// a quarter → 15 % is 6 % cheaper at 32k and 9 % at 16k, with fewer compactions and evidence
/// recall up on both halves; from windows of about 100k on the 50 KB limit binds first.
const MAX_WINDOW_SHARE: f64 = 0.15;
/// All results of one assistant message: at most this share of the effective window, so the
/// latest tool group always fits beside the prompt, the latest user message and a summary.
const TURN_WINDOW_SHARE: f64 = 0.35;

impl TruncationLimits {
    pub fn new(config: &ContextConfig, budget: &ContextBudget) -> TruncationLimits {
        let window_bytes = (budget.effective as f64 * MAX_WINDOW_SHARE * config.chars_per_token) as usize;
        TruncationLimits {
            max_lines: config.truncate_max_lines,
            max_bytes: config.truncate_max_bytes.min(window_bytes).max(1_000),
            head_share: config.truncate_head_share,
        }
    }

    /// The cap on all results of one assistant message, in bytes.
    pub fn turn_cap(config: &ContextConfig, budget: &ContextBudget) -> usize {
        let window_bytes = (budget.effective as f64 * TURN_WINDOW_SHARE * config.chars_per_token) as usize;
        config.turn_results_max_chars.min(window_bytes).max(2_000)
    }
}

/// Where to cut a text: keep `..head_end` and `tail_start..`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    pub head_end: usize,
    pub tail_start: usize,
    pub total_lines: usize,
    pub omitted_lines: usize,
    pub total_bytes: usize,
}

impl Cut {
    pub fn omitted_bytes(&self) -> usize {
        self.tail_start - self.head_end
    }
}

/// Room kept for the notice itself within the byte limit.
const NOTICE_ROOM: usize = 400;

/// `None` when `text` is within the limits.
pub fn plan_cut(text: &str, limits: &TruncationLimits) -> Option<Cut> {
    let total_bytes = text.len();
    let total_lines = text.lines().count();
    if total_lines <= limits.max_lines && total_bytes <= limits.max_bytes {
        return None;
    }
    let byte_allow = limits.max_bytes.saturating_sub(NOTICE_ROOM).max(200);
    let head_bytes = (byte_allow as f64 * limits.head_share) as usize;
    let tail_bytes = byte_allow - head_bytes;
    let line_allow = limits.max_lines.saturating_sub(1).max(2);
    let head_lines = ((line_allow as f64 * limits.head_share) as usize).max(1);
    let tail_lines = line_allow - head_lines;

    // Head: whole lines while they fit; a first line too long is cut inside.
    let mut head_end = 0;
    for (lines, line) in text.split_inclusive('\n').enumerate() {
        if lines == head_lines || head_end + line.len() > head_bytes {
            if lines == 0 {
                head_end = floor_char_boundary(text, head_bytes);
            }
            break;
        }
        head_end += line.len();
    }
    // Tail: whole lines from the end while they fit; a last line too long is cut inside.
    let mut tail_start = total_bytes;
    for (lines, line) in text[head_end..].split_inclusive('\n').rev().enumerate() {
        if lines == tail_lines || total_bytes - (tail_start - line.len()) > tail_bytes {
            if lines == 0 {
                let mut start = total_bytes.saturating_sub(tail_bytes).max(head_end);
                while !text.is_char_boundary(start) {
                    start += 1;
                }
                tail_start = start;
            }
            break;
        }
        tail_start -= line.len();
    }
    let omitted = &text[head_end..tail_start];
    let omitted_lines = omitted.lines().count();
    Some(Cut { head_end, tail_start, total_lines, omitted_lines, total_bytes })
}

/// Where the full output went.
pub enum Spill<'a> {
    Saved(&'a str),
    /// Writing it failed; say so and give no path.
    Failed(&'a str),
    /// Not spilled: the text is itself a saved output being read back.
    NotSaved,
}

fn size(bytes: usize) -> String {
    match bytes {
        0..=999 => format!("{bytes} B"),
        1_000..=999_999 => format!("{:.1} KB", bytes as f64 / 1_000.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_000_000.0),
    }
}

fn grouped(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The truncated text: head, notice, tail.
pub fn render_cut(text: &str, cut: &Cut, spill: Spill<'_>) -> String {
    let what = format!(
        "[truncated: {} of {} lines ({}) omitted",
        grouped(cut.omitted_lines),
        grouped(cut.total_lines),
        size(cut.omitted_bytes())
    );
    let notice = match spill {
        Spill::Saved(path) => format!(
            "{what}; full output saved to {path}; read it with file_read offset/limit or grep rather than printing it again]"
        ),
        Spill::Failed(error) => {
            format!("{what}; the full output could not be saved ({error}); rerun a narrower command if you need more]")
        }
        Spill::NotSaved => format!("{what}; read a narrower range with file_read offset/limit]"),
    };
    let head = &text[..cut.head_end];
    let tail = &text[cut.tail_start..];
    let mut out = String::with_capacity(head.len() + notice.len() + tail.len() + 4);
    out.push_str(head);
    if !head.is_empty() && !head.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&notice);
    if !tail.is_empty() {
        out.push('\n');
        out.push_str(tail);
    }
    out
}

/// `text` cut to about `max_bytes` (head and tail) with a note that it was clipped to fit.
pub fn clip_to_fit(text: &str, max_bytes: usize) -> String {
    let limits = TruncationLimits { max_lines: usize::MAX, max_bytes: max_bytes + NOTICE_ROOM, head_share: 0.6 };
    match plan_cut(text, &limits) {
        None => text.to_string(),
        Some(cut) => {
            let head = &text[..cut.head_end];
            let tail = &text[cut.tail_start..];
            format!(
                "{head}\n[clipped to fit the context window: {} omitted; the full text is stored, run the tool again or read a narrower part if you need it]\n{tail}",
                size(cut.omitted_bytes())
            )
        }
    }
}

/// The per-turn cap's plan for the results of one assistant message, each already cut to the
/// limits of one result: the smaller limits and which results (by position) to cut again to
/// them, largest first, until the rest fits.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnCut {
    pub limits: TruncationLimits,
    pub again: Vec<usize>,
}

/// `sizes` are the results as they stand, `sent` what earlier results of the same message
/// took, `calls` how many calls the message made. `None` while they fit under `cap`.
pub fn plan_turn_cut(
    sizes: &[usize],
    sent: usize,
    cap: usize,
    calls: usize,
    limits: &TruncationLimits,
) -> Option<TurnCut> {
    if sent + sizes.iter().sum::<usize>() <= cap {
        return None;
    }
    let limits = TruncationLimits { max_bytes: (cap / (4 * calls.max(1))).max(2_000), max_lines: 200, ..*limits };
    let again = turn_overflow(sizes, cap.saturating_sub(sent), limits.max_bytes);
    Some(TurnCut { limits, again })
}

/// When the results of one assistant message exceed `cap` bytes together: which of them
/// (by position) to spill further, largest first, until the rest fits.
fn turn_overflow(sizes: &[usize], cap: usize, reduced: usize) -> Vec<usize> {
    let mut total: usize = sizes.iter().sum();
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(sizes[i]));
    let mut out = Vec::new();
    for i in order {
        if total <= cap {
            break;
        }
        if sizes[i] > reduced {
            total -= sizes[i] - reduced;
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(lines: usize, bytes: usize) -> TruncationLimits {
        TruncationLimits { max_lines: lines, max_bytes: bytes, head_share: 0.6 }
    }

    #[test]
    fn within_limits_is_left_alone() {
        assert_eq!(plan_cut("a\nb\n", &limits(10, 1000)), None);
    }

    #[test]
    fn keeps_head_and_tail_on_line_boundaries_and_counts_what_went() {
        let text: String = (1..=20_412).map(|i| format!("line {i}\n")).collect();
        let cut = plan_cut(&text, &limits(2_000, 50_000)).unwrap();
        let out = render_cut(&text, &cut, Spill::Saved("/d/truncations/s-c.txt"));
        assert!(out.starts_with("line 1\n"));
        assert!(out.ends_with("line 20412\n"));
        assert!(out.len() <= 50_000 + 200, "{}", out.len());
        assert!(out.lines().count() <= 2_001);
        let omitted = cut.omitted_lines;
        assert_eq!(out.lines().filter(|l| l.starts_with("line ")).count() + omitted, 20_412);
        assert!(out.contains(&format!("[truncated: {} of 20,412 lines", grouped(omitted))), "{out:.300}");
        assert!(
            out.contains("full output saved to /d/truncations/s-c.txt; read it with file_read offset/limit or grep")
        );
        let head_lines = out.lines().take_while(|l| l.starts_with("line ")).count();
        let tail_lines = out.lines().rev().take_while(|l| l.starts_with("line ")).count();
        assert!(head_lines > tail_lines, "60 % head, 40 % tail: {head_lines} vs {tail_lines}");
    }

    #[test]
    fn one_huge_line_is_cut_on_character_boundaries() {
        let text = "é".repeat(100_000);
        let cut = plan_cut(&text, &limits(2_000, 10_000)).unwrap();
        let out = render_cut(&text, &cut, Spill::Failed("disk full"));
        assert!(out.len() < 11_000);
        assert!(out.contains("could not be saved (disk full)") && !out.contains("saved to"));
        assert!(text.is_char_boundary(cut.head_end) && text.is_char_boundary(cut.tail_start));
    }

    #[test]
    fn turn_cap_spills_largest_first() {
        assert_eq!(turn_overflow(&[10, 100, 50, 80], 120, 5), vec![1, 3]);
        assert!(turn_overflow(&[10, 20], 100, 5).is_empty());
    }

    #[test]
    fn the_turn_cap_cuts_the_largest_results_again_only_when_they_pass_it_together() {
        let per_result = limits(2_000, 50_000);
        assert_eq!(plan_turn_cut(&[30_000, 40_000], 0, 100_000, 2, &per_result), None);
        assert_eq!(plan_turn_cut(&[30_000, 40_000], 40_000, 100_000, 2, &per_result).map(|p| p.again), Some(vec![1]));
        let plan = plan_turn_cut(&[50_000, 3_000, 50_000], 0, 80_000, 3, &per_result).unwrap();
        assert_eq!(plan.again, vec![0], "the largest first, until the rest fits");
        assert_eq!((plan.limits.max_bytes, plan.limits.max_lines, plan.limits.head_share), (6_666, 200, 0.6));
    }

    #[test]
    fn small_windows_lower_the_byte_limit() {
        let config = ContextConfig::default();
        let small = TruncationLimits::new(&config, &ContextBudget::new(8_192, &config));
        let large = TruncationLimits::new(&config, &ContextBudget::new(200_000, &config));
        assert_eq!(large.max_bytes, 50_000);
        assert!(small.max_bytes < 5_000, "{small:?}");
        // A 32k window: 24,000 usable tokens, a result at most 15 % of them (3,600 tokens).
        let mid = TruncationLimits::new(&config, &ContextBudget::new(32_000, &config));
        assert_eq!(mid.max_bytes, 11_520, "{mid:?}");
        // From about 100k on, the 50 KB limit binds first.
        assert_eq!(TruncationLimits::new(&config, &ContextBudget::new(128_000, &config)).max_bytes, 50_000);
    }
}
