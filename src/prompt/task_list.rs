//! The task list as the model reads it: after the last cache breakpoint of every request, so a
//! change never costs a cached prefix.

use crate::conversation::TaskList;

const TODO_NOTE: &str = include_str!("../../assets/prompts/todo.md");

/// The task list as the model reads it after the last breakpoint; `None` when there is none.
pub fn task_list_tail(list: &TaskList) -> Option<String> {
    if list.is_empty() {
        return None;
    }
    Some(format!("{}\n{}", TODO_NOTE.trim_end(), list.render().trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{TaskItem, TaskStatus};

    #[test]
    fn an_empty_list_sends_nothing() {
        assert_eq!(task_list_tail(&TaskList::default()), None);
        let list = TaskList {
            items: vec![TaskItem { id: "1".into(), text: "read".into(), status: TaskStatus::Pending, parent: None }],
        };
        assert!(task_list_tail(&list).unwrap().ends_with("- [ ] 1: read"));
    }
}
