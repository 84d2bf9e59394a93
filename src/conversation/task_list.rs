//! The task list the model keeps with the `todo` tool: a tree of work items, each pending, in
//! progress or done. Plain data: checked when the model sends it, rendered for the model (as
//! text after the last cache breakpoint) and for people (a checklist).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    InProgress,
    Done,
}

impl TaskStatus {
    /// The checkbox both the model and the task list panel read.
    pub fn mark(self) -> &'static str {
        match self {
            TaskStatus::Pending => "[ ]",
            TaskStatus::InProgress => "[~]",
            TaskStatus::Done => "[x]",
        }
    }
}

/// One work item. `parent` names another item's `id`; items without one are top level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskItem {
    pub id: String,
    pub text: String,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// The whole list, in the order the model gave it (children keep their order under their
/// parent).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskList {
    pub items: Vec<TaskItem>,
}

/// Counts by status, for headers like `Tasks 2/5`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskCounts {
    pub pending: usize,
    pub in_progress: usize,
    pub done: usize,
}

impl TaskCounts {
    pub fn total(&self) -> usize {
        self.pending + self.in_progress + self.done
    }
}

/// Longest item text kept: an item is a line of a checklist, not a document.
const MAX_TEXT_CHARS: usize = 300;

impl TaskList {
    /// A list the model sent, checked: ids unique and non-empty, texts non-empty, every parent
    /// an item of the list, no item its own ancestor, at most `max_items`. The error says what
    /// to send instead.
    pub fn checked(items: Vec<TaskItem>, max_items: usize) -> Result<TaskList, String> {
        if items.len() > max_items {
            return Err(format!(
                "the list has {} items; keep it to {max_items} or fewer (merge small steps, drop finished detail)",
                items.len()
            ));
        }
        let mut items = items;
        for (i, item) in items.iter_mut().enumerate() {
            item.id = item.id.trim().to_string();
            item.text = crate::conversation::clip(item.text.trim(), MAX_TEXT_CHARS);
            item.parent = item.parent.take().map(|p| p.trim().to_string()).filter(|p| !p.is_empty());
            if item.id.is_empty() {
                return Err(format!(
                    "item {} has an empty id; give every item a short unique id like \"1\" or \"2.1\"",
                    i + 1
                ));
            }
            if item.text.is_empty() {
                return Err(format!("item {:?} has no text; say what the step is", item.id));
            }
        }
        for (i, item) in items.iter().enumerate() {
            if items[..i].iter().any(|o| o.id == item.id) {
                return Err(format!("the id {:?} is used twice; ids must be unique", item.id));
            }
        }
        let index = |id: &str| items.iter().position(|o| o.id == id);
        for item in &items {
            let Some(parent) = &item.parent else { continue };
            if index(parent).is_none() {
                return Err(format!(
                    "item {:?} names parent {parent:?}, which is not in the list; send the whole list every time",
                    item.id
                ));
            }
            // Walk up: reaching the item again means a cycle.
            let mut at = parent.clone();
            for _ in 0..items.len() {
                if at == item.id {
                    return Err(format!("item {:?} is its own ancestor; parents must form a tree", item.id));
                }
                match index(&at).and_then(|i| items[i].parent.clone()) {
                    Some(up) => at = up,
                    None => break,
                }
            }
        }
        Ok(TaskList { items })
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn counts(&self) -> TaskCounts {
        let mut c = TaskCounts::default();
        for item in &self.items {
            match item.status {
                TaskStatus::Pending => c.pending += 1,
                TaskStatus::InProgress => c.in_progress += 1,
                TaskStatus::Done => c.done += 1,
            }
        }
        c
    }

    /// Items in tree order with their depth: each item followed by its children.
    pub fn tree(&self) -> Vec<(usize, &TaskItem)> {
        let mut out = Vec::with_capacity(self.items.len());
        let known = |id: &str| self.items.iter().any(|o| o.id == id);
        for root in self.items.iter().filter(|i| i.parent.as_deref().is_none_or(|p| !known(p))) {
            self.walk(root, 0, &mut out);
        }
        out
    }

    fn walk<'a>(&'a self, item: &'a TaskItem, depth: usize, out: &mut Vec<(usize, &'a TaskItem)>) {
        // A checked list has no cycles; the bound keeps an unchecked one finite.
        if depth > self.items.len() {
            return;
        }
        out.push((depth, item));
        for child in self.items.iter().filter(|c| c.parent.as_deref() == Some(item.id.as_str())) {
            self.walk(child, depth + 1, out);
        }
    }

    /// The tree as the model reads it: one line an item, indented under its parent.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (depth, item) in self.tree() {
            out.push_str(&"  ".repeat(depth));
            out.push_str(&format!("- {} {}: {}\n", item.status.mark(), item.id, item.text));
        }
        out
    }

    /// `3 pending, 1 in progress, 2 done`.
    pub fn describe_counts(&self) -> String {
        let c = self.counts();
        format!("{} pending, {} in progress, {} done", c.pending, c.in_progress, c.done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, status: TaskStatus, parent: Option<&str>) -> TaskItem {
        TaskItem { id: id.into(), text: format!("step {id}"), status, parent: parent.map(String::from) }
    }

    #[test]
    fn a_tree_renders_children_under_their_parent_in_order() {
        let list = TaskList::checked(
            vec![
                item("1", TaskStatus::Done, None),
                item("2", TaskStatus::InProgress, None),
                item("1.1", TaskStatus::Done, Some("1")),
                item("2.1", TaskStatus::Pending, Some("2")),
            ],
            50,
        )
        .unwrap();
        assert_eq!(list.render(), "- [x] 1: step 1\n  - [x] 1.1: step 1.1\n- [~] 2: step 2\n  - [ ] 2.1: step 2.1\n");
        assert_eq!(list.describe_counts(), "1 pending, 1 in progress, 2 done");
    }

    #[test]
    fn bad_lists_are_refused_with_what_to_fix() {
        let dup = TaskList::checked(vec![item("1", TaskStatus::Pending, None), item("1", TaskStatus::Done, None)], 50);
        assert!(dup.unwrap_err().contains("used twice"));
        let orphan = TaskList::checked(vec![item("2", TaskStatus::Pending, Some("9"))], 50);
        assert!(orphan.unwrap_err().contains("not in the list"));
        let cycle = TaskList::checked(
            vec![item("a", TaskStatus::Pending, Some("b")), item("b", TaskStatus::Pending, Some("a"))],
            50,
        );
        assert!(cycle.unwrap_err().contains("own ancestor"));
        let long = TaskList::checked((0..5).map(|i| item(&i.to_string(), TaskStatus::Pending, None)).collect(), 4);
        assert!(long.unwrap_err().contains("4 or fewer"));
        let blank = TaskList::checked(
            vec![TaskItem { id: " ".into(), text: "x".into(), status: TaskStatus::Done, parent: None }],
            4,
        );
        assert!(blank.unwrap_err().contains("empty id"));
    }

    #[test]
    fn the_list_round_trips_through_json_as_the_tool_sends_it() {
        let json = r#"[{"id":"1","text":"read","status":"in_progress"},{"id":"1.1","text":"x","status":"pending","parent":"1"}]"#;
        let items: Vec<TaskItem> = serde_json::from_str(json).unwrap();
        let list = TaskList::checked(items, 50).unwrap();
        assert_eq!(serde_json::to_string(&list.items).unwrap(), json);
    }
}
