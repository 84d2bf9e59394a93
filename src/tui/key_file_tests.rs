use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::tui::keys::{ApprovalAction, BINDINGS, ComposerAction, GlobalAction};

fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

fn ctrl(c: char) -> KeyEvent {
    ev(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Every action by section, with its default keys and what it does: `docs/keys.md`'s table.
fn reference() -> String {
    let mut out = String::new();
    for context in KeyContext::ALL {
        out.push_str(&format!(
            "\n### [{}] — {}\n\n| action | default | what it does |\n| --- | --- | --- |\n",
            section(context),
            context.title()
        ));
        for b in KeyMap::default().bindings().iter().filter(|b| b.context() == context) {
            let mut keys: Vec<String> = b.keys.iter().map(|k| format!("`{}`", file_name(k))).collect();
            keys.dedup();
            out.push_str(&format!("| `{}` | {} | {} |\n", action_name(b.action), keys.join(", "), b.help));
        }
    }
    out
}

/// A key as the file writes it: `ctrl+y`, `shift+tab`, `pageup`.
fn file_name(k: &Key) -> String {
    let mut out = String::new();
    for (m, name) in [(KeyModifiers::CONTROL, "ctrl+"), (KeyModifiers::ALT, "alt+"), (KeyModifiers::SHIFT, "shift+")] {
        if k.mods.contains(m) || (m == KeyModifiers::SHIFT && k.code == KeyCode::BackTab && !k.mods.contains(m)) {
            out.push_str(name);
        }
    }
    let name = match k.code {
        KeyCode::Char(' ') => "space".to_string(),
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Enter => "enter".into(),
        KeyCode::Esc => "esc".into(),
        KeyCode::Tab | KeyCode::BackTab => "tab".into(),
        KeyCode::PageUp => "pageup".into(),
        KeyCode::PageDown => "pagedown".into(),
        KeyCode::F(n) => format!("f{n}"),
        other => format!("{other:?}").to_ascii_lowercase(),
    };
    out + &name
}

fn refused(text: &str) -> (usize, String) {
    let e = patched(text).expect_err("the file is refused");
    (e.line, e.what)
}

#[test]
fn a_key_file_changes_only_the_actions_it_names() {
    let map = patched("# mine\n[global]\ntoggle_task_list = \"ctrl+y\"\n").unwrap();
    assert_eq!(map.lookup(KeyContext::Global, &ctrl('y')), Some(Action::Global(GlobalAction::ToggleTaskList)));
    assert_eq!(map.lookup(KeyContext::Global, &ctrl('t')), None, "the old key is free");
    assert_eq!(map.hint(Action::Global(GlobalAction::ToggleTaskList)), "Ctrl+Y");
    // Everything else is the default.
    let default = KeyMap::default();
    for (a, b) in map.bindings().iter().zip(default.bindings()) {
        if a.action != Action::Global(GlobalAction::ToggleTaskList) {
            assert_eq!((a.action, &a.keys), (b.action, &b.keys));
        }
    }
    assert_eq!(patched("").unwrap().bindings().len(), BINDINGS.len());
}

#[test]
fn keys_are_written_as_people_write_them() {
    let map = patched(
        "[composer]\nsubmit = [\"alt+enter\", \"ctrl+s\"]\nnewline = \"enter\"\n\
         [approval]\napprove = \"Y\"\ndeny = \"F3\"\n[global]\ncycle_mode = \"shift+tab\"\nredraw = []\n",
    )
    .unwrap();
    let composer = |e: &KeyEvent| map.lookup(KeyContext::Composer, e);
    assert_eq!(composer(&ev(KeyCode::Enter, KeyModifiers::ALT)), Some(Action::Composer(ComposerAction::Submit)));
    assert_eq!(composer(&ctrl('s')), Some(Action::Composer(ComposerAction::Submit)));
    assert_eq!(composer(&ev(KeyCode::Enter, KeyModifiers::NONE)), Some(Action::Composer(ComposerAction::Newline)));
    let approval = |e: &KeyEvent| map.lookup(KeyContext::Approval, e);
    assert_eq!(approval(&ev(KeyCode::Char('y'), KeyModifiers::NONE)), Some(Action::Approval(ApprovalAction::Approve)));
    assert_eq!(approval(&ev(KeyCode::F(3), KeyModifiers::NONE)), Some(Action::Approval(ApprovalAction::Deny)));
    assert_eq!(approval(&ev(KeyCode::Char('n'), KeyModifiers::NONE)), None);
    // Shift+Tab arrives with or without Shift.
    for mods in [KeyModifiers::SHIFT, KeyModifiers::NONE] {
        let got = map.lookup(KeyContext::Global, &ev(KeyCode::BackTab, mods));
        assert_eq!(got, Some(Action::Global(GlobalAction::CycleMode)));
    }
    // An empty list leaves the action without a key.
    assert_eq!(map.lookup(KeyContext::Global, &ctrl('l')), None);
    assert_eq!(map.hint(Action::Global(GlobalAction::Redraw)), "");
}

#[test]
fn a_bad_file_is_refused_whole_with_the_line_that_is_wrong() {
    assert_eq!(
        refused("[global]\ntoggle_task_list = \"ctrl+y\"\ncopy_answer = \"hyper+c\"\n"),
        (3, "`hyper` in `hyper+c` is not a modifier (ctrl, alt or shift)".to_string())
    );
    let (line, what) = refused("[global]\n\ntoggle_tasks = \"ctrl+y\"\n");
    assert_eq!(line, 3);
    assert!(what.contains("[global] has no action `toggle_tasks`") && what.contains("docs/keys.md"), "{what}");
    let (line, what) = refused("[composer]\nsubmit = \"enter\"\n[dialog]\napprove = \"y\"\n");
    assert_eq!(line, 3);
    assert!(what.starts_with("there is no section [dialog]; the sections are global, composer"), "{what}");
    assert_eq!(refused("[global]\nredraw = \"ctrl+\"\n").0, 2);
    assert_eq!(
        refused("[approval]\napprove = \"shift+y\"\n"),
        (2, "`shift+y`: a shifted character arrives as the character itself; write `Y`".to_string())
    );
    // Not TOML: the parser's line.
    let (line, what) = refused("[global]\nredraw = \"ctrl+l\"\ncopy_answer = alt+c\n");
    assert_eq!(line, 3, "{what}");
    // A key two actions of one place would share, blamed on the line that made it so.
    assert_eq!(
        refused("[global]\nredraw = \"f2\"\ntoggle_task_list = \"ctrl+y\"\n"),
        (2, "F2 would be both `toggle_mouse` and `redraw` in [global]; give one of them another key".to_string())
    );
}

#[test]
fn every_action_has_a_name_of_its_own_in_its_section() {
    for (i, a) in BINDINGS.iter().enumerate() {
        let name = action_name(a.action);
        assert!(!name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}");
        for b in &BINDINGS[i + 1..] {
            assert!(a.context() != b.context() || name != action_name(b.action), "{name} twice");
        }
    }
    assert_eq!(action_name(Action::Global(GlobalAction::ToggleTaskList)), "toggle_task_list");
}

#[test]
fn docs_keys_md_lists_every_action_with_its_default_keys() {
    let doc = include_str!("../../docs/keys.md");
    let table = reference();
    assert!(doc.contains(&table), "docs/keys.md is out of date; its tables are:\n{table}");
}
