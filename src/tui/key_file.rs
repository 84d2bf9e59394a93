//! The user's `keys.toml` (in the config folder), as gitui's key list is read: the binding
//! table (`keys::BINDINGS`) names every action with its default keys, and the file patches only
//! the actions it names, by their section and name:
//!
//! ```toml
//! [global]
//! toggle_task_list = "ctrl+y"
//! copy_answer = ["alt+c", "f3"]
//! [approval]
//! approve = "enter"
//! ```
//!
//! A file that does not parse, names an action or a key cairn does not know, or binds one key
//! twice in one place is refused whole, with the line that is wrong; the defaults stay.

use std::collections::BTreeMap;

use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use serde::Deserialize;
use toml::Spanned;

use super::keys::{Action, Key, KeyContext, KeyMap, describe};

/// Why a `keys.toml` was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct KeyFileError {
    pub line: usize,
    pub what: String,
}

/// One action's keys in the file: one key, or a list (empty: the action has no key).
#[derive(Deserialize)]
#[serde(untagged)]
enum Keys {
    One(String),
    Many(Vec<String>),
}

type Sections = BTreeMap<Spanned<String>, BTreeMap<Spanned<String>, Spanned<Keys>>>;

/// The section of the file an action is in: `[global]`, `[approval]`, ….
pub fn section(context: KeyContext) -> &'static str {
    match context {
        KeyContext::Global => "global",
        KeyContext::Composer => "composer",
        KeyContext::Completion => "completion",
        KeyContext::Approval => "approval",
        KeyContext::DenyReason => "deny_reason",
        KeyContext::Overlay => "views",
        KeyContext::Setup => "setup",
        KeyContext::HistorySearch => "history_search",
        KeyContext::Search => "search",
        KeyContext::PlanReady => "plan_ready",
        KeyContext::Trust => "trust",
    }
}

/// An action's name in its section: the variant in snake case (`ToggleTaskList` →
/// `toggle_task_list`).
pub fn action_name(action: Action) -> String {
    let debug = format!("{action:?}");
    // `Global(ToggleTaskList)`: derived Debug, the context then the action in parentheses.
    let inner = debug.split_once('(').map_or(debug.as_str(), |(_, rest)| rest.trim_end_matches(')'));
    let mut name = String::new();
    for (i, c) in inner.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_lowercase());
    }
    name
}

/// `ctrl+y`, `alt+enter`, `shift+tab`, `f2`, `y`: a key as the file writes it, as the keys to
/// bind (Shift+Tab arrives with or without Shift, so it is bound both ways, as the defaults are).
fn parse_key(text: &str) -> Result<Vec<Key>, String> {
    let mut mods = KeyModifiers::NONE;
    let mut parts: Vec<&str> = text.split('+').collect();
    // `ctrl++`: the last part is the `+` key itself.
    if text.ends_with("++") {
        parts.truncate(parts.len() - 2);
        parts.push("+");
    }
    let Some((name, modifiers)) = parts.split_last() else { return Err("an empty key".into()) };
    for m in modifiers {
        mods |= match m.to_ascii_lowercase().as_str() {
            "ctrl" | "control" => KeyModifiers::CONTROL,
            "alt" | "meta" | "option" => KeyModifiers::ALT,
            "shift" => KeyModifiers::SHIFT,
            other => return Err(format!("`{other}` in `{text}` is not a modifier (ctrl, alt or shift)")),
        };
    }
    let lower = name.to_ascii_lowercase();
    let code = match lower.as_str() {
        "enter" | "return" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" if mods.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "backspace" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "insert" => KeyCode::Insert,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" => KeyCode::PageDown,
        "space" => KeyCode::Char(' '),
        f if f.len() > 1 && f.starts_with('f') && f[1..].parse::<u8>().is_ok_and(|n| (1..=12).contains(&n)) => {
            KeyCode::F(f[1..].parse().unwrap_or(1))
        }
        _ => {
            let mut chars = name.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => {
                    KeyCode::Char(if mods.contains(KeyModifiers::CONTROL) { c.to_ascii_lowercase() } else { c })
                }
                _ => {
                    return Err(format!(
                        "`{name}` in `{text}` is not a key cairn knows (a character, enter, esc, tab, up, f2, …)"
                    ));
                }
            }
        }
    };
    if let KeyCode::Char(c) = code
        && mods.contains(KeyModifiers::SHIFT)
        && !mods.contains(KeyModifiers::CONTROL)
    {
        return Err(format!(
            "`{text}`: a shifted character arrives as the character itself; write `{}`",
            c.to_ascii_uppercase()
        ));
    }
    if code == KeyCode::BackTab {
        return Ok(vec![
            Key { code, mods: mods | KeyModifiers::SHIFT },
            Key { code, mods: mods - KeyModifiers::SHIFT },
        ]);
    }
    Ok(vec![Key { code, mods }])
}

/// The defaults patched with what `text` (a `keys.toml`) changes.
pub fn patched(text: &str) -> Result<KeyMap, KeyFileError> {
    let line_at = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let sections: Sections = toml::from_str(text).map_err(|e| KeyFileError {
        line: e.span().map_or(1, |s| line_at(s.start)),
        what: e.message().trim().to_string(),
    })?;
    let mut map = KeyMap::default();
    // Where each action was set, for a clash found after every change is in.
    let mut set_at: BTreeMap<(&str, String), usize> = BTreeMap::new();
    for (section_name, actions) in &sections {
        let line = line_at(section_name.span().start);
        let Some(context) = KeyContext::ALL.iter().copied().find(|c| section(*c) == section_name.get_ref()) else {
            let known: Vec<&str> = KeyContext::ALL.iter().map(|c| section(*c)).collect();
            return Err(KeyFileError {
                line,
                what: format!(
                    "there is no section [{}]; the sections are {}",
                    section_name.get_ref(),
                    known.join(", ")
                ),
            });
        };
        for (name, keys) in actions {
            let line = line_at(name.span().start);
            let binding = map
                .bindings_mut()
                .iter_mut()
                .find(|b| b.context() == context && action_name(b.action) == *name.get_ref());
            let Some(binding) = binding else {
                return Err(KeyFileError {
                    line,
                    what: format!("[{}] has no action `{}`; docs/keys.md lists them", section(context), name.get_ref()),
                });
            };
            let texts = match keys.get_ref() {
                Keys::One(one) => vec![one.clone()],
                Keys::Many(many) => many.clone(),
            };
            let mut parsed = Vec::new();
            for t in &texts {
                parsed.extend(
                    parse_key(t.trim()).map_err(|what| KeyFileError { line: line_at(keys.span().start), what })?,
                );
            }
            binding.keys = parsed.into();
            set_at.insert((section(context), name.get_ref().clone()), line);
        }
    }
    if let Some(error) = clash(&map, &set_at) {
        return Err(error);
    }
    Ok(map)
}

/// Puts the user's `keys.toml` in force, if there is one and it is good; why it was refused,
/// if it was (the defaults stay).
pub(crate) fn install_user_keys(text: Option<&str>) -> Result<(), KeyFileError> {
    let Some(text) = text else { return Ok(()) };
    super::keys::install(patched(text)?);
    Ok(())
}

/// A key bound to two actions of one context, blamed on the line that changed one of them.
fn clash(map: &KeyMap, set_at: &BTreeMap<(&str, String), usize>) -> Option<KeyFileError> {
    let bindings = map.bindings();
    for (i, a) in bindings.iter().enumerate() {
        for b in bindings[i + 1..].iter().filter(|b| b.context() == a.context()) {
            let Some(key) = a.keys.iter().find(|k| b.keys.contains(k)) else { continue };
            let (a_name, b_name) = (action_name(a.action), action_name(b.action));
            let changed =
                [&a_name, &b_name].into_iter().filter_map(|n| set_at.get(&(section(a.context()), n.clone()))).min();
            return Some(KeyFileError {
                line: changed.copied().unwrap_or(1),
                what: format!(
                    "{} would be both `{a_name}` and `{b_name}` in [{}]; give one of them another key",
                    describe(key),
                    section(a.context())
                ),
            });
        }
    }
    None
}

#[cfg(test)]
#[path = "key_file_tests.rs"]
mod tests;
