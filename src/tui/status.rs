//! The status line: mode, model, what is running (with a spinner and a clock), and the context
//! bar — the agent's one number, `96k/200k 48%`, coloured by budget level — with the cache hit
//! rate of the last request and what the session has cost (at the catalog's prices). At a
//! narrow width the least important parts are left out first (see [`Part`]).

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::activity::Activity;
use super::keys::{self, Action, GlobalAction};
use super::overlays::level_style;
use super::theme::Theme;
use super::wrap::{spans_width, truncate_spans, truncate_words};
use crate::agent::ContextStatus;
use crate::context::BudgetLevel;
use crate::conversation::Mode;
use crate::conversation::format_tokens;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Spinner frames per second; the loop asks for frames this often while something runs.
pub const SPINNER_FPS: u32 = 10;
const BAR_CELLS: usize = 10;

pub fn mode_style(mode: Mode, theme: &Theme) -> Style {
    match mode {
        Mode::Edit => theme.mode_edit,
        Mode::Plan => theme.mode_plan,
        Mode::Ask => theme.mode_ask,
    }
}

fn spinner(now: Instant, since: Option<Instant>) -> &'static str {
    let ms = since.map_or(0, |s| now.duration_since(s).as_millis());
    SPINNER[(ms / (1000 / SPINNER_FPS as u128)) as usize % SPINNER.len()]
}

fn clock(now: Instant, since: Option<Instant>) -> String {
    let secs = since.map_or(0, |s| now.duration_since(s).as_secs());
    if secs < 60 { format!("{secs}s") } else { format!("{}m{:02}s", secs / 60, secs % 60) }
}

/// What is running, in words.
fn activity_text(line: &StatusLine<'_>) -> Option<String> {
    let text = match line.activity {
        Activity::Idle => return line.compacting.map(compacting),
        Activity::Connecting => "connecting to the model provider".to_string(),
        Activity::Thinking => "thinking".to_string(),
        Activity::Streaming => "streaming".to_string(),
        Activity::PreparingTool(t) => format!("writing a {t} call"),
        Activity::Tool(t) => format!("tool {t}"),
        Activity::Approval(_) => "waiting for your approval".to_string(),
        Activity::Compacting { chunk } => compacting(*chunk),
        Activity::Retrying { attempt, max_attempts, until } => {
            let left = until.saturating_duration_since(line.now).as_secs_f64().ceil() as u64;
            format!("retrying in {left}s (attempt {attempt} of {max_attempts})")
        }
    };
    Some(text)
}

fn compacting(chunk: Option<(u32, u32)>) -> String {
    match chunk {
        Some((c, n)) => format!("compacting {c}/{n}"),
        None => "compacting".to_string(),
    }
}

/// What the status line shows, taken from the app each frame (`App::status_line`).
pub struct StatusLine<'a> {
    pub theme: &'a Theme,
    pub mode: Mode,
    pub model: &'a str,
    pub activity: &'a Activity,
    /// A compaction runs in the background, maybe chunk by chunk.
    pub compacting: Option<Option<(u32, u32)>>,
    pub busy: bool,
    pub turn_started: Option<Instant>,
    /// When the interface started: the spinner's phase when nothing is timed.
    pub epoch: Instant,
    pub now: Instant,
    pub flash: Option<&'a str>,
    pub quit_armed: bool,
    pub mouse_capture: bool,
    pub context: Option<ContextStatus>,
    /// Connected: the window is known even before the first figures.
    pub ready: bool,
    pub window: u64,
    /// Background commands running (`/ps` lists them).
    pub background: usize,
}

/// A part of the status line and how much it matters: at a narrow width the parts are left out
/// least important first — the context bar's glyphs (its numbers stay), the cache share, the
/// model's name, the turn's clock, the mouse note, the session's cost, the count of background
/// commands — and only then is the text of what is running cut, at a word, then the message of
/// the moment. A message longer than [`FLASH_ROOM`] is cut to it before the model's name goes.
struct Part {
    spans: Vec<Span<'static>>,
    /// `None`: never left out (the mode, what is running, the message, the context figure).
    drop_rank: Option<u8>,
}

impl Part {
    fn kept(spans: Vec<Span<'static>>) -> Part {
        Part { spans, drop_rank: None }
    }

    fn droppable(rank: u8, spans: Vec<Span<'static>>) -> Part {
        Part { spans, drop_rank: Some(rank) }
    }
}

/// Ranks: the lowest is left out first.
const DROP_BAR: u8 = 1;
const DROP_CACHE: u8 = 2;
const DROP_MODEL: u8 = 3;
const DROP_CLOCK: u8 = 4;
const DROP_MOUSE: u8 = 5;
const DROP_COST: u8 = 6;
/// Commands still running in the background: what the user may have forgotten is running.
const DROP_BACKGROUND: u8 = 7;
/// The columns a message of the moment keeps before the model's name, the clock, the cost or the
/// background count give way to it: a long one (an approved command) is cut to this first.
const FLASH_ROOM: usize = 48;

fn parts_width(parts: &[Part]) -> usize {
    parts.iter().map(|p| spans_width(&p.spans)).sum()
}

impl Widget for StatusLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let line = &self;
        let theme = self.theme;
        buf.set_style(area, theme.status_bar);
        let mut left = vec![Part::kept(vec![
            Span::styled(format!(" {} ", self.mode.label()), mode_style(self.mode, theme)),
            Span::styled(" ", theme.status_bar),
        ])];
        if self.quit_armed {
            // The one thing that matters now; nothing else may push it off a narrow line.
            let quit = keys::hint(Action::Global(GlobalAction::ClearOrQuit));
            left.push(Part::kept(vec![Span::styled(format!("press {quit} again to quit"), theme.notice_warning)]));
        } else if !self.model.is_empty() {
            left.push(Part::droppable(DROP_MODEL, vec![Span::styled(self.model.to_string(), theme.status_model)]));
        }
        // The text of what runs and the message may be cut at a word as a last resort.
        let mut flexible = Vec::new();
        let mut flash_at = None;
        if let Some(what) = activity_text(line).filter(|_| !self.quit_armed) {
            left.push(Part::kept(vec![
                Span::styled(" · ", theme.faint),
                Span::styled(
                    format!("{} ", spinner(self.now, Some(self.turn_started.unwrap_or(self.epoch)))),
                    theme.spinner,
                ),
            ]));
            flexible.push(left.len());
            left.push(Part::kept(vec![Span::styled(what, theme.status_bar)]));
            if self.busy {
                left.push(Part::droppable(
                    DROP_CLOCK,
                    vec![Span::styled(format!(" {}", clock(self.now, self.turn_started)), theme.faint)],
                ));
            }
        }
        if !self.quit_armed
            && let Some(t) = self.flash
        {
            left.push(Part::kept(vec![Span::styled(" · ", theme.notice_info)]));
            // The message answers what the user just did: what runs gives way to it first.
            flexible.push(left.len());
            flash_at = Some(left.len());
            left.push(Part::kept(vec![Span::styled(t.to_string(), theme.notice_info)]));
        }
        if !self.mouse_capture && self.flash.is_none() {
            let toggle = keys::hint(Action::Global(GlobalAction::ToggleMouse));
            left.push(Part::droppable(
                DROP_MOUSE,
                vec![Span::styled(format!(" · mouse free ({toggle})"), theme.notice_warning)],
            ));
        }

        let mut right = Vec::new();
        if self.background > 0 {
            right.push(Part::droppable(
                DROP_BACKGROUND,
                vec![
                    Span::styled(format!("⚙ {} bg", self.background), theme.status_bar),
                    Span::styled("  ", theme.status_bar),
                ],
            ));
        }
        if let Some(usd) = self.context.and_then(|c| c.cost_usd) {
            right.push(Part::droppable(
                DROP_COST,
                vec![
                    Span::styled(crate::config::format_usd(usd), theme.status_bar),
                    Span::styled("  ", theme.status_bar),
                ],
            ));
        }
        if let Some(rate) = self.context.and_then(|c| c.cache_hit_rate) {
            right.push(Part::droppable(
                DROP_CACHE,
                vec![
                    Span::styled(format!("cache {:.0}%", rate * 100.0), theme.status_bar),
                    Span::styled("  ", theme.status_bar),
                ],
            ));
        }
        match &self.context {
            Some(c) => {
                let style = level_style(c.level, theme);
                let filled = ((c.tokens as f64 / c.window.max(1) as f64) * BAR_CELLS as f64).ceil() as usize;
                let filled = filled.min(BAR_CELLS);
                right.push(Part::droppable(
                    DROP_BAR,
                    vec![
                        Span::styled("▰".repeat(filled), style),
                        Span::styled("▱".repeat(BAR_CELLS - filled), theme.bar_empty),
                        Span::styled(" ", style),
                    ],
                ));
                let mut figure = vec![Span::styled(
                    format!("{}/{} {}%", format_tokens(c.tokens), format_tokens(c.window), c.percent()),
                    style,
                )];
                // The level in words too, so it reads without colour (NO_COLOR, colour blindness).
                match c.level {
                    BudgetLevel::Ok => {}
                    BudgetLevel::Warning | BudgetLevel::Compact | BudgetLevel::Blocking => {
                        figure.push(Span::styled(format!(" {}", c.level.as_str()), style));
                    }
                }
                if c.compacting || self.compacting.is_some() {
                    figure.push(Span::styled(" ⇣", theme.notice_compaction));
                }
                right.push(Part::kept(figure));
            }
            None if self.ready => {
                right.push(Part::kept(vec![Span::styled(format!("—/{}", format_tokens(self.window)), theme.dim)]));
            }
            None => {}
        }
        right.push(Part::kept(vec![Span::styled(" ", theme.status_bar)]));

        // Leave parts out, least important first, until the line fits with a column between.
        let room = area.width as usize;
        loop {
            let width = parts_width(&left) + parts_width(&right);
            if width < room {
                break;
            }
            let lowest = left.iter().chain(&right).filter_map(|p| p.drop_rank).min();
            let Some(rank) = lowest else { break };
            // A long message gives up its columns past FLASH_ROOM before the parts that stay on
            // the line give theirs: the bar's glyphs and the cache share go first, not the model.
            if rank >= DROP_MODEL
                && let Some(i) = flash_at
            {
                let keep = FLASH_ROOM.max(spans_width(&left[i].spans).saturating_sub(width + 1 - room));
                if cut_to(&mut left[i], keep) {
                    continue;
                }
            }
            for side in [&mut left, &mut right] {
                for p in side.iter_mut() {
                    if p.drop_rank == Some(rank) {
                        p.spans.clear();
                        p.drop_rank = None;
                    }
                }
            }
        }
        // Still too long: cut what runs, then the message, at a word (what runs goes whole
        // rather than keep less than a word: the spinner still says something runs).
        let last = flexible.len().saturating_sub(1);
        for (n, i) in flexible.into_iter().enumerate() {
            let over = (parts_width(&left) + parts_width(&right) + 1).saturating_sub(room);
            if over == 0 {
                break;
            }
            let part = &mut left[i];
            let text: String = part.spans.iter().map(|s| s.content.as_ref()).collect();
            let style = part.spans.first().map(|s| s.style).unwrap_or_default();
            let keep = crate::tui::wrap::width(&text).saturating_sub(over);
            let first_word = text.split(' ').next().map_or(0, crate::tui::wrap::width);
            part.spans = if n < last && keep <= first_word {
                Vec::new()
            } else {
                vec![Span::styled(truncate_words(&text, keep.max(2)), style)]
            };
        }
        // With the model's name left out, nothing stands between the mode and what follows it:
        // no separator either.
        if let Some(next) = left.iter_mut().skip(1).find(|p| !p.spans.is_empty())
            && next.spans.first().is_some_and(|s| s.content == " · ")
        {
            next.spans.remove(0);
        }
        let right: Vec<Span<'static>> = right.into_iter().flat_map(|p| p.spans).collect();
        let right_w = spans_width(&right);
        let left: Vec<Span<'static>> = left.into_iter().flat_map(|p| p.spans).collect();
        let left = truncate_spans(left, room.saturating_sub(right_w + 1));
        buf.set_line(area.x, area.y, &Line::from(left), area.width);
        if right_w < room {
            let x = area.x + area.width - right_w as u16;
            buf.set_line(x, area.y, &Line::from(right), right_w as u16);
        }
    }
}

/// Cut the text of `part` to `keep` columns at a word; false when it is no wider than that.
fn cut_to(part: &mut Part, keep: usize) -> bool {
    if spans_width(&part.spans) <= keep {
        return false;
    }
    let text: String = part.spans.iter().map(|s| s.content.as_ref()).collect();
    let style = part.spans.first().map(|s| s.style).unwrap_or_default();
    part.spans = vec![Span::styled(truncate_words(&text, keep), style)];
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(width: u16, flash: Option<&str>) -> String {
        line_with(width, flash, 0)
    }

    fn line_with(width: u16, flash: Option<&str>, background: usize) -> String {
        let theme = Theme::fallback(true);
        let now = Instant::now();
        let activity = Activity::Approval("bash".into());
        let status = StatusLine {
            theme: &theme,
            mode: Mode::Edit,
            model: "claude-sonnet-4-5",
            activity: &activity,
            compacting: None,
            busy: true,
            turn_started: Some(now - std::time::Duration::from_secs(12)),
            epoch: now,
            now,
            flash,
            quit_armed: false,
            mouse_capture: true,
            context: Some(ContextStatus {
                tokens: 96_000,
                window: 200_000,
                level: BudgetLevel::Ok,
                compacting: false,
                cache_hit_rate: Some(0.87),
                cost_usd: Some(0.42),
            }),
            ready: true,
            window: 200_000,
            background,
        };
        let area = Rect::new(0, 0, width, 1);
        let mut buf = Buffer::empty(area);
        status.render(area, &mut buf);
        (0..width).map(|x| buf[(x, 0)].symbol()).collect::<String>().trim_end().to_string()
    }

    #[test]
    fn at_narrow_widths_the_least_important_parts_go_first_and_no_word_is_cut() {
        let wide = line(120, None);
        for part in
            ["EDIT", "claude-sonnet-4-5", "waiting for your approval", "12s", "$0.42", "cache 87%", "▰", "96k/200k 48%"]
        {
            assert!(wide.contains(part), "{part} missing at 120: {wide}");
        }
        // The order: the bar's glyphs, the cache share, the model, the clock, the cost.
        let expect = [
            (90, vec!["claude-sonnet-4-5", "12s", "$0.42", "cache 87%", "96k/200k 48%"], vec!["▰"]),
            (80, vec!["claude-sonnet-4-5", "12s", "$0.42", "96k/200k 48%"], vec!["cache"]),
            (64, vec!["waiting for your approval", "12s", "$0.42", "96k/200k 48%"], vec!["claude"]),
            (58, vec!["waiting for your approval", "$0.42", "96k/200k 48%"], vec!["12s"]),
            (52, vec!["waiting for your approval", "96k/200k 48%"], vec!["$0.42"]),
        ];
        for (width, kept, gone) in expect {
            let shown = line(width, None);
            for part in kept {
                assert!(shown.contains(part), "{part} missing at {width}: {shown}");
            }
            for part in gone {
                assert!(!shown.contains(part), "{part} still there at {width}: {shown}");
            }
            assert!(!shown.contains('…'), "{shown}");
        }
        // Last of all, the words of what runs are cut, at a word.
        let narrow = line(40, None);
        assert!(narrow.contains("waiting for…") && narrow.contains("96k/200k 48%"), "{narrow}");
        // What runs gives way to the message of the moment, which is cut last, at a word too.
        let said = line(80, Some("approved; for this session: bash(cargo test *)"));
        assert!(said.contains("· approved; for this session: bash(cargo test *)"), "{said}");
        let narrow = line(50, Some("approved; for this session: bash(cargo test *)"));
        assert!(narrow.contains("approved; for this…") && !narrow.contains("waiting"), "{narrow}");
        assert!(line(120, Some("approved; for this session: bash(cargo test *)")).contains("bash(cargo test *)"));
    }

    #[test]
    fn a_long_message_is_cut_before_the_model_and_the_cost_give_way_to_it() {
        let approved = "approved bash $ python3 -m pytest tests/test_parser.py -k 'nested and not slow' --maxfail=1 -q";
        let wide = line(120, Some(approved));
        for part in ["claude-sonnet-4-5", "12s", "$0.42", "96k/200k 48%", "· approved bash $ python3"] {
            assert!(wide.contains(part), "{part} missing at 120: {wide}");
        }
        assert!(wide.contains('…') && !wide.contains("-q"), "the message is cut at a word: {wide}");
        // A message that fits in its room is shown whole, as before.
        assert!(line(120, Some("approved; for this session: bash(cargo test *)")).contains("bash(cargo test *)"));
        // Narrower, the parts go in their order, then the message is cut again.
        let narrow = line(60, Some(approved));
        assert!(narrow.contains("approved bash") && narrow.contains("96k/200k 48%"), "{narrow}");
        assert!(!narrow.contains("claude"), "{narrow}");
    }

    #[test]
    fn no_separator_dangles_after_the_mode_when_the_model_is_left_out() {
        for width in [50, 60, 70] {
            let shown = line(width, Some("approved; for this session: bash(cargo test *)"));
            assert!(!shown.contains("claude"), "{shown}");
            let after_mode = shown.trim_start().trim_start_matches("EDIT").trim_start();
            assert!(!after_mode.starts_with('·'), "a separator after the mode at {width}: {shown}");
        }
        assert!(line(120, Some("approved")).contains("claude-sonnet-4-5 · ⠋"), "{}", line(120, Some("approved")));
    }

    #[test]
    fn the_count_of_background_commands_outlasts_the_cost() {
        assert!(line_with(120, None, 2).contains("⚙ 2 bg  $0.42"), "{}", line_with(120, None, 2));
        let narrow = line_with(60, None, 2);
        assert!(narrow.contains("⚙ 2 bg") && !narrow.contains("$0.42"), "{narrow}");
        assert!(!line_with(120, None, 0).contains("bg"));
    }
}
