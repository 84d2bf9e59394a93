//! The status line: mode, model, what is running (with a spinner and a clock), and the context
//! bar — the agent's one number, `96k/200k 48%`, coloured by budget level — with the cache hit
//! rate of the last request and what the session has cost (at the catalog's prices).

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
use super::wrap::{spans_width, truncate_spans};
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

impl Widget for StatusLine<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let line = &self;
        let theme = self.theme;
        buf.set_style(area, theme.status_bar);
        let mut left = vec![
            Span::styled(format!(" {} ", self.mode.label()), mode_style(self.mode, theme)),
            Span::styled(" ", theme.status_bar),
        ];
        if self.quit_armed {
            // The one thing that matters now; nothing else may push it off a narrow line.
            let quit = keys::hint(Action::Global(GlobalAction::ClearOrQuit));
            left.push(Span::styled(format!("press {quit} again to quit"), theme.notice_warning));
        } else if !self.model.is_empty() {
            left.push(Span::styled(self.model.to_string(), theme.status_model));
        }
        if let Some(what) = activity_text(line).filter(|_| !self.quit_armed) {
            left.push(Span::styled(" · ", theme.faint));
            left.push(Span::styled(
                format!("{} ", spinner(self.now, Some(self.turn_started.unwrap_or(self.epoch)))),
                theme.spinner,
            ));
            left.push(Span::styled(what, theme.status_bar));
            if self.busy {
                left.push(Span::styled(format!(" {}", clock(self.now, self.turn_started)), theme.faint));
            }
        }
        if !self.quit_armed {
            left.extend(self.flash.map(|t| Span::styled(format!(" · {t}"), theme.notice_info)));
        }
        if !self.mouse_capture && self.flash.is_none() {
            let toggle = keys::hint(Action::Global(GlobalAction::ToggleMouse));
            left.push(Span::styled(format!(" · mouse free ({toggle})"), theme.notice_warning));
        }

        let mut right = Vec::new();
        if self.background > 0 {
            right.push(Span::styled(format!("⚙ {} bg", self.background), theme.status_bar));
            right.push(Span::styled("  ", theme.status_bar));
        }
        if let Some(usd) = self.context.and_then(|c| c.cost_usd) {
            right.push(Span::styled(crate::config::format_usd(usd), theme.status_bar));
            right.push(Span::styled("  ", theme.status_bar));
        }
        if let Some(rate) = self.context.and_then(|c| c.cache_hit_rate) {
            right.push(Span::styled(format!("cache {:.0}%", rate * 100.0), theme.status_bar));
            right.push(Span::styled("  ", theme.status_bar));
        }
        match &self.context {
            Some(c) => {
                let style = level_style(c.level, theme);
                let filled = ((c.tokens as f64 / c.window.max(1) as f64) * BAR_CELLS as f64).ceil() as usize;
                let filled = filled.min(BAR_CELLS);
                right.push(Span::styled("▰".repeat(filled), style));
                right.push(Span::styled("▱".repeat(BAR_CELLS - filled), theme.bar_empty));
                right.push(Span::styled(
                    format!(" {}/{} {}%", format_tokens(c.tokens), format_tokens(c.window), c.percent()),
                    style,
                ));
                // The level in words too, so it reads without colour (NO_COLOR, colour blindness).
                match c.level {
                    BudgetLevel::Ok => {}
                    BudgetLevel::Warning | BudgetLevel::Compact | BudgetLevel::Blocking => {
                        right.push(Span::styled(format!(" {}", c.level.as_str()), style));
                    }
                }
                if c.compacting || self.compacting.is_some() {
                    right.push(Span::styled(" ⇣", theme.notice_compaction));
                }
            }
            None if self.ready => {
                right.push(Span::styled(format!("—/{}", format_tokens(self.window)), theme.dim));
            }
            None => {}
        }
        right.push(Span::styled(" ", theme.status_bar));
        let right_w = spans_width(&right);
        let left_room = (area.width as usize).saturating_sub(right_w + 1);
        let left = truncate_spans(left, left_room);
        buf.set_line(area.x, area.y, &Line::from(left), area.width);
        if right_w < area.width as usize {
            let x = area.x + area.width - right_w as u16;
            buf.set_line(x, area.y, &Line::from(right), right_w as u16);
        }
    }
}
