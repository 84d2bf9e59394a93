//! The task list panel: the agent's task list (its `todo` tool) above the prompt, one row an
//! item, indented under its parent. When the list is longer than the panel, the rows around the
//! first unfinished item are shown.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::keys::{self, Action, GlobalAction};
use super::theme::Theme;
use super::wrap::truncate_spans;
use crate::conversation::{TaskList, TaskStatus};

/// Rows the panel takes at most, borders included, on a screen `screen_rows` high: a third of it,
/// never more than twelve.
pub fn height(list: &TaskList, screen_rows: u16) -> u16 {
    if list.is_empty() {
        return 0;
    }
    let wanted = list.items.len() as u16 + 2;
    wanted.min((screen_rows / 3).max(3)).min(12)
}

pub fn render(list: &TaskList, area: Rect, buf: &mut Buffer, theme: &Theme) {
    if area.height < 3 || list.is_empty() {
        return;
    }
    let c = list.counts();
    let title = Line::from(vec![
        Span::styled(" Tasks ", theme.title),
        Span::styled(format!("{}/{} done ", c.done, c.total()), theme.dim),
    ]);
    let hint = Line::from(vec![
        Span::styled(format!(" {} ", keys::hint(Action::Global(GlobalAction::ToggleTaskList))), theme.key),
        Span::styled("hides ", theme.dim),
    ]);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.border)
        .title(title)
        .title_bottom(hint.right_aligned());
    let inner = block.inner(area);
    block.render(area, buf);
    let tree = list.tree();
    let rows = inner.height as usize;
    // Start a little before the first unfinished item, so what is next is always in view.
    let first_open = tree.iter().position(|(_, item)| item.status != TaskStatus::Done).unwrap_or(0);
    let start = first_open.saturating_sub(1).min(tree.len().saturating_sub(rows));
    for (row, (depth, item)) in tree.iter().skip(start).take(rows).enumerate() {
        let (mark, style) = match item.status {
            TaskStatus::Done => ("✓", theme.tool_ok),
            TaskStatus::InProgress => ("◐", theme.accent),
            TaskStatus::Pending => ("○", theme.dim),
        };
        let text_style = match item.status {
            TaskStatus::Done => theme.faint.add_modifier(Modifier::CROSSED_OUT),
            TaskStatus::InProgress => theme.text.add_modifier(Modifier::BOLD),
            TaskStatus::Pending => theme.text,
        };
        let spans = vec![
            Span::raw(format!(" {}", "  ".repeat(*depth))),
            Span::styled(format!("{mark} "), style),
            Span::styled(item.text.clone(), text_style),
        ];
        let line = Line::from(truncate_spans(spans, inner.width as usize));
        buf.set_line(inner.x, inner.y + row as u16, &line, inner.width);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::TaskItem;

    fn list(n: usize) -> TaskList {
        let items = (0..n)
            .map(|i| TaskItem {
                id: i.to_string(),
                text: format!("step {i}"),
                status: if i < n / 2 { TaskStatus::Done } else { TaskStatus::Pending },
                parent: None,
            })
            .collect();
        TaskList { items }
    }

    fn draw(list: &TaskList, w: u16, h: u16) -> Vec<String> {
        let theme = Theme::fallback(true);
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        render(list, buf.area, &mut buf, &theme);
        (0..h).map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>().trim_end().to_string()).collect()
    }

    #[test]
    fn a_long_list_keeps_the_next_step_in_view() {
        let rows = draw(&list(20), 40, 6);
        assert!(rows[0].contains("Tasks 10/20 done"), "{rows:?}");
        assert!(rows[1].contains("✓ step 9") && rows[2].contains("○ step 10"), "{rows:?}");
        assert!(rows[5].contains("Ctrl+T hides"), "{rows:?}");
        assert_eq!(height(&list(20), 40), 12);
        assert_eq!(height(&list(2), 40), 4);
        assert_eq!(height(&TaskList::default(), 40), 0);
    }
}
