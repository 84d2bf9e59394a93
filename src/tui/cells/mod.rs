//! Transcript cells: pure renderables. Each turns its state into lines for a width (`lines`),
//! so the transcript can cache them per width, lay out only what is visible, and snapshot-test
//! each kind on its own. Cells hold display state only; nothing here decides anything.

mod assistant;
mod changes;
mod notice;
mod subagent;
mod thinking;
mod tool;
mod user;

pub use assistant::AssistantCell;
pub use changes::ChangesCell;
pub use notice::{NoticeCell, NoticeKind};
pub use subagent::{EntryState, SubagentCell, SubagentEntry, SubagentStatus};
pub use thinking::ThinkingCell;
pub use tool::{ToolCell, ToolStatus, format_duration};
pub use user::UserCell;

use ratatui::text::Line;

use super::theme::Theme;

/// One entry of the transcript.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    User(UserCell),
    Assistant(AssistantCell),
    Tool(ToolCell),
    /// A `task` call: the subagent it started.
    Subagent(SubagentCell),
    Notice(NoticeCell),
    /// `/diff`: what the session or a turn changed.
    Changes(ChangesCell),
    /// The model's thinking, collapsed to a line until expanded.
    Thinking(ThinkingCell),
}

impl Cell {
    /// The cell laid out for `width` columns.
    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let width = width.max(8);
        match self {
            Cell::User(c) => c.lines(width, theme),
            Cell::Assistant(c) => c.lines(width, theme),
            Cell::Tool(c) => c.lines(width, theme),
            Cell::Subagent(c) => c.lines(width, theme),
            Cell::Notice(c) => c.lines(width, theme),
            Cell::Changes(c) => c.lines(width, theme),
            Cell::Thinking(c) => c.lines(width, theme),
        }
    }

    /// The cell's words for a search: what it shows, without markdown's marks.
    pub fn search_text(&self) -> String {
        match self {
            Cell::User(c) => {
                let mut text = c.text.clone();
                for a in &c.attachments {
                    text.push(' ');
                    text.push_str(&a.path);
                }
                text
            }
            Cell::Assistant(c) => c.text.as_str().replace(['*', '`', '_', '#'], ""),
            Cell::Tool(c) => format!("{} {}\n{}", c.tool, c.summary, c.output),
            Cell::Subagent(c) => format!("{} agent {}\n{}\n{}", c.agent_type, c.description, c.brief, c.report),
            Cell::Notice(c) => c.text.clone(),
            Cell::Changes(c) => c.search_text(),
            Cell::Thinking(c) => c.text.clone(),
        }
    }

    /// Whether a blank row separates this cell from the one before it: consecutive tool calls
    /// stack tightly, unless the one before shows rows under its line (a diff, output).
    pub fn gap_after(&self, previous: &Cell) -> bool {
        match (previous, self) {
            (Cell::Tool(p), Cell::Tool(_)) => p.shows_body(),
            // Thinking sits right above what it led to.
            (Cell::Thinking(_), Cell::Assistant(_) | Cell::Tool(_)) => false,
            (
                Cell::User(_)
                | Cell::Assistant(_)
                | Cell::Tool(_)
                | Cell::Subagent(_)
                | Cell::Notice(_)
                | Cell::Thinking(_)
                | Cell::Changes(_),
                _,
            ) => true,
        }
    }
}
