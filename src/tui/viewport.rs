//! The inline viewport: what still changes, at the bottom of the terminal's own screen. From the
//! top: the transcript's live rows (the answer streaming, calls running or waiting, a retry
//! counting), the task list, queued prompts, the completion list, the composer — or, while one
//! waits, the approval dialog in its place — the user's own status line, and cairn's. The same widgets as the
//! full-screen layout (`render.rs`), laid out for a viewport only as tall as they need.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::app::App;
use super::render::{MIN_HEIGHT, MIN_WIDTH, render_completion, render_composer, render_queue, render_user_status};
use super::task_list_panel;

/// Queued prompts listed at most (as the full-screen layout).
const QUEUE_ROWS: usize = 3;

/// The viewport's parts and their heights, for one frame.
pub struct Plan {
    /// The live rows (all of them; the last `live` are drawn).
    rows: Vec<Line<'static>>,
    live: u16,
    tasks: u16,
    queue: u16,
    popup: u16,
    composer: u16,
    dialog: u16,
    /// The user's own status line (`[tui] status_command`), above cairn's.
    user: u16,
    /// Too small a terminal: one row saying so.
    tiny: bool,
}

impl Plan {
    pub fn height(&self) -> u16 {
        if self.tiny {
            return 1;
        }
        self.live + self.tasks + self.queue + self.popup + self.composer + self.dialog + self.user + 1
    }
}

/// Lay the viewport out for a terminal `width` × `screen` rows: never taller than the screen,
/// the live rows cut to their newest when they would not fit.
pub fn plan(app: &App, width: u16, screen: u16) -> Plan {
    let mut plan =
        Plan { rows: Vec::new(), live: 0, tasks: 0, queue: 0, popup: 0, composer: 0, dialog: 0, user: 0, tiny: false };
    if width < MIN_WIDTH || screen < MIN_HEIGHT {
        plan.tiny = true;
        return plan;
    }
    let theme = app.theme();
    plan.user = u16::from(app.user_status_line().is_some() && screen > MIN_HEIGHT);
    let above_status = screen - 1 - plan.user;
    if let Some(dialog) = app.approval() {
        let max = (above_status * 3 / 4).max(8).min(above_status);
        plan.dialog = dialog.desired_height(width, theme).clamp(8.min(max), max);
    } else {
        let max_rows = (screen / 3).max(3);
        plan.composer = app.composer().rows(width.saturating_sub(4)).min(max_rows) + 2;
        plan.queue = app.pending().len().min(QUEUE_ROWS) as u16
            + u16::from(app.pending().len() > QUEUE_ROWS)
            + u16::from(app.plan_ready().is_some());
        if app.task_list_panel_shown() {
            plan.tasks = task_list_panel::height(app.task_list(), screen);
        }
        if let Some(c) = &app.composer().completion
            && app.overlay().is_none()
        {
            plan.popup = c.items.len() as u16 + 2;
        }
        // What does not fit goes, least needed first.
        let room = above_status.saturating_sub(plan.composer);
        if plan.queue + plan.tasks + plan.popup > room {
            plan.popup = 0;
        }
        if plan.queue + plan.tasks > room {
            plan.tasks = 0;
        }
        if plan.queue > room {
            plan.queue = 0;
        }
        plan.composer = plan.composer.min(above_status);
    }
    let fixed = plan.tasks + plan.queue + plan.popup + plan.composer + plan.dialog + plan.user + 1;
    plan.rows = app.live_rows(width);
    plan.live = (plan.rows.len() as u16).min(screen.saturating_sub(fixed));
    plan
}

/// Draw the viewport `plan` laid out into `buf` (its area is the viewport).
pub fn render(app: &App, plan: &Plan, buf: &mut Buffer) {
    let area = buf.area;
    let theme = app.theme();
    if plan.tiny {
        let note = Line::from(Span::styled(format!("cairn needs {MIN_WIDTH}×{MIN_HEIGHT}"), theme.dim));
        buf.set_line(area.x, area.y, &note, area.width);
        return;
    }
    let mut y = area.y;
    let mut take = |h: u16| {
        let r = Rect::new(area.x, y, area.width, h);
        y += h;
        r
    };
    let live = take(plan.live);
    let skip = plan.rows.len() - usize::from(plan.live);
    for (i, line) in plan.rows[skip..].iter().enumerate() {
        buf.set_line(live.x, live.y + i as u16, line, live.width);
    }
    let tasks = take(plan.tasks);
    if plan.tasks > 0 {
        task_list_panel::render(app.task_list(), tasks, buf, theme);
    }
    let queue = take(plan.queue);
    render_queue(app, queue, buf);
    take(plan.popup);
    let composer = take(plan.composer);
    let dialog = take(plan.dialog);
    let user = take(plan.user);
    let status = take(1);
    if plan.composer > 0 {
        render_composer(app, composer, buf);
        if plan.popup > 0 {
            render_completion(app, composer, buf);
        }
    }
    if let Some(d) = app.approval().filter(|_| plan.dialog > 0) {
        d.render(dialog, buf, theme);
    }
    if plan.user > 0 {
        render_user_status(app, user, buf);
    }
    app.status_line().render(status, buf);
}
