//! One frame, from the state: the layout (transcript, queued prompts, composer, status line)
//! and whatever is drawn over it (completion list, approval dialog, views, setup screen).

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

use super::app::{App, Phase};
use super::completion::CompletionKind;
use super::keys::{self, Action, CompletionAction, ComposerAction, GlobalAction, HistorySearchAction, PlanAction};
use super::overlays::render_setup;
use super::status::mode_style;
use super::task_list_panel;
use super::theme::Theme;
use super::wrap::{truncate, truncate_spans};

/// Queued prompts listed above the composer at most.
const QUEUE_ROWS: usize = 3;
/// Below this the layout cannot hold a transcript, a prompt and a status line.
pub const MIN_WIDTH: u16 = 20;
pub const MIN_HEIGHT: u16 = 6;

pub fn draw(app: &App, frame: &mut Frame<'_>) {
    let area = frame.area();
    render(app, area, frame.buffer_mut());
}

/// Draw the whole screen into `buf` (the benchmark and snapshot tests call this directly).
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let note = Line::from(Span::styled(format!("cairn needs {MIN_WIDTH}×{MIN_HEIGHT}"), theme.dim));
        buf.set_line(area.x, area.y, &note, area.width);
        return;
    }
    if let Phase::Setup { message } = app.phase() {
        render_setup(message, area, buf, theme);
        return;
    }
    let inner_w = area.width.saturating_sub(4);
    let max_rows = (area.height / 3).max(3);
    let composer_h = app.composer().rows(inner_w).min(max_rows) + 2;
    let queued = app.pending().len().min(QUEUE_ROWS) as u16
        + u16::from(app.pending().len() > QUEUE_ROWS)
        + u16::from(app.plan_ready().is_some());
    let tasks = if app.task_list_panel_shown() { task_list_panel::height(app.task_list(), area.height) } else { 0 };
    let own_status = u16::from(app.user_status_line().is_some());
    let [mut transcript, task_list, queue, composer, user_status, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(tasks),
        Constraint::Length(queued),
        Constraint::Length(composer_h),
        Constraint::Length(own_status),
        Constraint::Length(1),
    ])
    .areas(area);
    let above_status = Rect::new(area.x, area.y, area.width, area.height.saturating_sub(1 + own_status));
    // An approval dialog takes the bottom of the screen; the transcript gets the rows above
    // it, so its last line — the call waiting, and why — stays in sight (three rows are kept
    // for it: what the dialog asks about needs the rest more than older lines do).
    let dialog = app.approval().map(|dialog| {
        let max_h = above_status.height.saturating_sub(3).max(8).min(above_status.height);
        let h = dialog.desired_height(area.width, theme).clamp(8.min(max_h), max_h);
        (dialog, Rect::new(area.x, above_status.bottom().saturating_sub(h), area.width, h))
    });
    if let Some((_, rect)) = dialog {
        transcript.height = transcript.height.min(rect.y.saturating_sub(transcript.y));
    }
    let search_row = app.search().map(|_| {
        transcript.height = transcript.height.saturating_sub(1);
        Rect::new(transcript.x, transcript.bottom(), transcript.width, 1)
    });

    if app.transcript().is_empty() {
        welcome(app, transcript, buf);
    } else {
        app.transcript().view(theme).render(transcript, buf);
    }
    if tasks > 0 {
        task_list_panel::render(app.task_list(), task_list, buf, theme);
    }
    if let (Some(bar), Some(row)) = (app.search(), search_row) {
        bar.render(row, buf, theme);
    }
    render_queue(app, queue, buf);
    render_composer(app, composer, buf);
    app.status_line().render(status, buf);
    render_user_status(app, user_status, buf);

    if app.composer().completion.is_some() && app.approval().is_none() && app.overlay().is_none() {
        render_completion(app, composer, buf);
    }
    if let Some(overlay) = app.overlay() {
        overlay.render(above_status, buf, theme);
    }
    if let Some((dialog, rect)) = dialog {
        dialog.render(rect, buf, theme);
    }
}

/// The line the user's status command printed, dimmed, cut to the row.
pub(super) fn render_user_status(app: &App, area: Rect, buf: &mut Buffer) {
    if let Some(line) = app.user_status_line().filter(|_| area.height > 0) {
        let text = truncate(&format!(" {line}"), area.width as usize);
        buf.set_line(area.x, area.y, &Line::from(Span::styled(text, app.theme().dim)), area.width);
    }
}

fn welcome(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    if area.height < 4 {
        return;
    }
    let k = |a: Action| Span::styled(keys::hint(a), theme.key);
    let mut lines = vec![
        Line::from(vec![
            Span::styled("cairn", theme.accent),
            Span::styled(" — a coding agent that keeps long sessions on track", theme.dim),
        ]),
        Line::default(),
    ];
    if !app.project_root().is_empty() {
        lines.push(Line::from(vec![
            Span::styled("project  ", theme.dim),
            Span::styled(app.project_root().to_string(), theme.text),
        ]));
    }
    if let Some(s) = app.session() {
        lines.push(Line::from(vec![Span::styled("session  ", theme.dim), Span::styled(s.id.clone(), theme.text)]));
    }
    lines.push(Line::default());
    lines.push(Line::from(vec![
        k(Action::Composer(ComposerAction::Submit)),
        Span::styled(" send   ", theme.dim),
        k(Action::Composer(ComposerAction::Newline)),
        Span::styled(" newline   ", theme.dim),
        Span::styled("/", theme.key),
        Span::styled(" commands   ", theme.dim),
        Span::styled("@", theme.key),
        Span::styled(" files", theme.dim),
    ]));
    lines.push(Line::from(vec![
        k(Action::Global(GlobalAction::CycleMode)),
        Span::styled(" mode   ", theme.dim),
        k(Action::Global(GlobalAction::Interrupt)),
        Span::styled(" interrupt   ", theme.dim),
        Span::styled("/help", theme.key),
        Span::styled(" everything else", theme.dim),
    ]));
    // One block, centred as a whole, its lines flush left.
    let h = lines.len() as u16;
    let max_w = area.width.saturating_sub(4) as usize;
    let lines: Vec<Line<'static>> = lines.into_iter().map(|l| Line::from(truncate_spans(l.spans, max_w))).collect();
    let w = lines.iter().map(|l| l.width()).max().unwrap_or(0) as u16;
    let x = area.x + area.width.saturating_sub(w) / 2;
    let y = area.y + area.height.saturating_sub(h) / 2;
    for (i, line) in lines.iter().enumerate() {
        buf.set_line(x, y + i as u16, line, w);
    }
}

pub(super) fn render_queue(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    for (i, prompt) in app.pending().iter().take(QUEUE_ROWS).enumerate() {
        let first = prompt.lines().next().unwrap_or("");
        let line = Line::from(vec![
            Span::styled("  ⧗ queued  ", theme.queued.add_modifier(Modifier::BOLD)),
            Span::styled(truncate(first, area.width.saturating_sub(14) as usize), theme.queued),
        ]);
        buf.set_line(area.x, area.y + i as u16, &line, area.width);
    }
    if app.pending().len() > QUEUE_ROWS {
        let more = Line::from(Span::styled(format!("  … and {} more", app.pending().len() - QUEUE_ROWS), theme.queued));
        buf.set_line(area.x, area.y + QUEUE_ROWS as u16, &more, area.width);
    }
    if let Some(ready) = app.plan_ready() {
        let k = |a: PlanAction| keys::hint(Action::Plan(a));
        // At a narrow width whole hints go, editing first, never a word cut.
        let hints = [
            super::hints::Hint::new(k(PlanAction::CarryOut), "carry it out in edit mode", 3),
            super::hints::Hint::new(k(PlanAction::EditPlan), "edit it first", 1),
            super::hints::Hint::new(k(PlanAction::Dismiss), "or type to keep planning", 2),
        ];
        let title = if ready.edited { "  ◆ plan ready (edited) ·" } else { "  ◆ plan ready ·" };
        let room = (area.width as usize).saturating_sub(super::wrap::width(title));
        let mut spans = vec![Span::styled(title, theme.accent)];
        spans.extend(super::hints::fit(&hints, room, theme).spans);
        let y = area.y + area.height.saturating_sub(1);
        buf.set_line(area.x, y, &Line::from(truncate_spans(spans, area.width as usize)), area.width);
    }
}

pub(super) fn render_composer(app: &App, area: Rect, buf: &mut Buffer) {
    let theme = app.theme();
    let mode = mode_style(app.mode(), theme);
    // The border takes the mode's colour: the mode is visible where the eyes are.
    let border = Style { fg: mode.bg.or(mode.fg), bg: None, ..Style::default() }.add_modifier(Modifier::BOLD);
    let mut label = Line::from(vec![Span::styled(format!(" {} ", app.mode().label()), mode), Span::raw(" ")]);
    let send = keys::hint(Action::Composer(ComposerAction::Submit));
    let search = app.composer().history_search();
    if let Some(search) = search {
        let found = if search.query.is_empty() || search.hit.is_some() { "" } else { " (no match)" };
        label.spans.push(Span::styled(format!("search history: {}{found} ", search.query), theme.key));
    }
    let hints = if search.is_some() {
        let h = |a: HistorySearchAction| keys::hint(Action::HistorySearch(a));
        format!(
            "{} older · {} take · {} back ",
            h(HistorySearchAction::Older),
            h(HistorySearchAction::Accept),
            h(HistorySearchAction::Cancel)
        )
    } else if app.busy() {
        format!("{send} queues · {} interrupts ", keys::hint(Action::Global(GlobalAction::Interrupt)))
    } else {
        format!("{send} send · {} newline ", keys::hint(Action::Composer(ComposerAction::Newline)))
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(border)
        .title(label)
        .title_top(Line::from(Span::styled(hints, theme.faint)).right_aligned());
    let inner = block.inner(area);
    block.render(area, buf);
    let inner = Rect::new(inner.x + 1, inner.y, inner.width.saturating_sub(2), inner.height);
    app.composer().textarea().render(inner, buf);
}

/// ` Tab take · ↑↓ choose · Esc close `, from the binding table.
fn completion_hints() -> String {
    let hint = |a: CompletionAction| keys::hint(Action::Completion(a));
    format!(
        " {} take · {}{} choose · {} close ",
        hint(CompletionAction::Accept),
        hint(CompletionAction::Prev),
        hint(CompletionAction::Next),
        hint(CompletionAction::Dismiss)
    )
}

pub(super) fn render_completion(app: &App, composer: Rect, buf: &mut Buffer) {
    let Some(c) = &app.composer().completion else { return };
    let theme: &Theme = app.theme();
    let rows = c.items.len() as u16;
    let h = rows + 2;
    if composer.y < h {
        return;
    }
    let label_w = c.items.iter().map(|i| i.label.chars().count()).max().unwrap_or(10);
    let w = (composer.width).min(if c.kind == CompletionKind::File { 80 } else { 96 }).max(20);
    let rect = Rect::new(composer.x + 1, composer.y - h, w, h);
    Clear.render(rect, buf);
    let title = match c.kind {
        CompletionKind::Command => " commands ",
        CompletionKind::File => " files ",
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.border)
        .style(theme.popup)
        .title(Span::styled(title, theme.dim))
        .title_bottom(Line::from(Span::styled(completion_hints(), theme.popup_hint)).right_aligned());
    let inner = block.inner(rect);
    block.render(rect, buf);
    for (i, item) in c.items.iter().enumerate() {
        let selected = i == c.selected;
        let base = if selected { theme.popup_selected } else { theme.popup };
        let mut spans = vec![
            Span::styled(if selected { "▸ " } else { "  " }, base),
            Span::styled(
                format!("{:<label_w$}", item.label),
                base.patch(if selected { theme.popup_match } else { Style::default() }),
            ),
        ];
        if !item.detail.is_empty() {
            spans.push(Span::styled(
                format!("  {}", item.detail),
                theme.popup_hint.patch(Style { bg: base.bg, ..Style::default() }),
            ));
        }
        let y = inner.y + i as u16;
        buf.set_style(Rect::new(inner.x, y, inner.width, 1), base);
        buf.set_line(inner.x, y, &Line::from(truncate_spans(spans, inner.width as usize)), inner.width);
    }
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "render_style_tests.rs"]
mod style_tests;
