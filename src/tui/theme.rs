//! Themes as data: `themes/*.toml` (embedded) or a user's file in `<config dir>/themes/`, resolved
//! once into a [`Theme`] of ratatui `Style`s. Widgets read roles from the theme and never name a
//! colour. `NO_COLOR` strips every colour and keeps the modifiers.

use std::collections::BTreeMap;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// The themes shipped with cairn, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    ("high-contrast", include_str!("../../themes/high-contrast.toml")),
];

/// Declares the roles once: the struct fields, and the list the loader checks every file against.
macro_rules! roles {
    ($($role:ident),* $(,)?) => {
        /// Every style the interface uses, by role.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Theme {
            pub name: String,
            /// The bat theme code and diffs are highlighted with; `None` when colours are off.
            pub syntax: Option<String>,
            /// Syntax colours on added and removed diff rows (off where the rows' own colours
            /// must win, as in high contrast).
            pub syntax_in_diffs: bool,
            $(pub $role: Style,)*
        }

        /// Every role name a theme file defines.
        pub const ROLES: &[&str] = &[$(stringify!($role)),*];

        impl Theme {
            fn map_styles(&mut self, f: impl Fn(Style) -> Style) {
                $(self.$role = f(self.$role);)*
            }

            fn from_styles(name: String, syntax: Option<String>, styles: &BTreeMap<String, Style>) -> Theme {
                Theme {
                    name,
                    syntax,
                    syntax_in_diffs: true,
                    $($role: styles.get(stringify!($role)).copied().unwrap_or_default(),)*
                }
            }
        }
    };
}

roles!(
    text,
    dim,
    faint,
    accent,
    border,
    title,
    key,
    selected,
    user_prefix,
    user_text,
    assistant_prefix,
    queued,
    interrupted,
    heading1,
    heading2,
    heading3,
    strong,
    emphasis,
    strikethrough,
    code_inline,
    code_block,
    code_lang,
    link,
    quote,
    list_marker,
    rule,
    tool_name,
    tool_summary,
    tool_running,
    tool_ok,
    tool_error,
    tool_denied,
    tool_output,
    diff_add,
    diff_remove,
    diff_context,
    diff_hunk,
    diff_header,
    diff_line_number,
    notice_info,
    notice_warning,
    notice_error,
    notice_compaction,
    status_bar,
    status_model,
    mode_edit,
    mode_plan,
    mode_ask,
    context_ok,
    context_warning,
    context_compact,
    context_blocking,
    bar_empty,
    spinner,
    composer_text,
    composer_placeholder,
    composer_cursor,
    popup,
    popup_selected,
    popup_match,
    popup_hint,
    overlay,
    overlay_border,
    dialog_border,
);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    /// Documents the file; a theme is chosen by its file name.
    #[allow(dead_code)]
    name: Option<String>,
    /// A built-in or user theme whose roles fill in what this file leaves out.
    inherits: Option<String>,
    syntax: Option<String>,
    /// Highlight code inside added and removed diff rows (default true).
    syntax_in_diffs: Option<bool>,
    #[serde(default)]
    palette: BTreeMap<String, String>,
    #[serde(default)]
    roles: BTreeMap<String, StyleSpec>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StyleSpec {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    bold: bool,
    #[serde(default)]
    italic: bool,
    #[serde(default)]
    underline: bool,
    #[serde(default)]
    dim: bool,
    #[serde(default)]
    reversed: bool,
}

/// A user theme as the command line found it in the config folder: the interface reads no
/// files itself.
pub enum UserTheme {
    /// `path` exists: its text, or why it could not be read.
    Found { path: String, text: Result<String, String> },
    /// There is no such file; where it would have been.
    Missing { path: String },
}

/// Why a theme could not be used; the interface falls back to `dark` and says so.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error("theme {name:?} is neither built in ({builtins}) nor a file at {path}")]
    Unknown { name: String, builtins: String, path: String },
    #[error("theme file {path}: {message}")]
    Invalid { path: String, message: String },
}

impl Theme {
    /// The theme named in config (default `dark`), a user theme first, then a built-in one.
    /// With `no_color`, colours are dropped and modifiers kept.
    pub fn load(
        name: Option<&str>,
        user_themes: &dyn Fn(&str) -> UserTheme,
        no_color: bool,
    ) -> Result<Theme, ThemeError> {
        let name = name.unwrap_or("dark");
        let (styles, syntax, syntax_in_diffs) = resolve(name, user_themes, 0)?;
        let mut theme = Theme::from_styles(name.to_string(), syntax, &styles);
        theme.syntax_in_diffs = syntax_in_diffs.unwrap_or(true);
        if no_color {
            theme = theme.without_colour();
        }
        Ok(theme)
    }

    /// The built-in dark theme; it is embedded and checked by tests, so it always parses.
    pub fn fallback(no_color: bool) -> Theme {
        let mut styles = BTreeMap::new();
        let mut syntax = None;
        if let Ok(file) = toml::from_str::<ThemeFile>(BUILTIN[0].1) {
            syntax = file.syntax.clone();
            styles = resolve_styles(&file, "dark").unwrap_or_default();
        }
        let theme = Theme::from_styles("dark".into(), syntax, &styles);
        if no_color { theme.without_colour() } else { theme }
    }

    /// Every colour removed, modifiers kept (`NO_COLOR`).
    pub fn without_colour(mut self) -> Theme {
        self.syntax = None;
        self.map_styles(|s| Style::default().add_modifier(s.add_modifier));
        // What colour marked as a block (the mode label, the selected row) is shown reversed.
        for style in
            [&mut self.mode_edit, &mut self.mode_plan, &mut self.mode_ask, &mut self.selected, &mut self.popup_selected]
        {
            *style = style.add_modifier(Modifier::REVERSED);
        }
        self
    }

    /// Whether colours are on (syntax highlighting needs them).
    pub fn has_colour(&self) -> bool {
        self.syntax.is_some()
    }
}

/// Styles by role, and the syntax theme, for `name` and everything it inherits.
/// Styles by role, the syntax theme, and whether diffs get syntax colours.
type Resolved = (BTreeMap<String, Style>, Option<String>, Option<bool>);

fn resolve(name: &str, user_themes: &dyn Fn(&str) -> UserTheme, depth: u8) -> Result<Resolved, ThemeError> {
    let (text, origin) = match user_themes(name) {
        UserTheme::Found { path, text } => {
            (text.map_err(|message| ThemeError::Invalid { path: path.clone(), message })?, path)
        }
        UserTheme::Missing { path } => match BUILTIN.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => (text.to_string(), format!("built-in theme {name}")),
            None => {
                return Err(ThemeError::Unknown {
                    name: name.to_string(),
                    builtins: BUILTIN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
                    path,
                });
            }
        },
    };
    let file: ThemeFile = toml::from_str(&text)
        .map_err(|e| ThemeError::Invalid { path: origin.clone(), message: e.message().to_string() })?;
    let mut styles = BTreeMap::new();
    let mut syntax = None;
    let mut syntax_in_diffs = None;
    if let Some(parent) = &file.inherits {
        if depth > 4 || parent == name {
            return Err(ThemeError::Invalid { path: origin, message: format!("inherits {parent:?} in a loop") });
        }
        (styles, syntax, syntax_in_diffs) = resolve(parent, user_themes, depth + 1)?;
    } else if let Some(unknown) = ROLES.iter().find(|r| !file.roles.contains_key(**r)) {
        return Err(ThemeError::Invalid {
            path: origin,
            message: format!("role {unknown:?} is missing; define it, or add `inherits = \"dark\"` to fill the gaps"),
        });
    }
    let own = resolve_styles(&file, &origin)?;
    styles.extend(own);
    if let Some(s) = &file.syntax {
        syntax = Some(s.clone());
    }
    Ok((styles, syntax, file.syntax_in_diffs.or(syntax_in_diffs)))
}

fn resolve_styles(file: &ThemeFile, origin: &str) -> Result<BTreeMap<String, Style>, ThemeError> {
    let mut out = BTreeMap::new();
    for (role, spec) in &file.roles {
        if !ROLES.contains(&role.as_str()) {
            return Err(ThemeError::Invalid {
                path: origin.to_string(),
                message: format!("unknown role {role:?}; the roles are: {}", ROLES.join(", ")),
            });
        }
        let colour = |value: &Option<String>| -> Result<Option<Color>, ThemeError> {
            let Some(value) = value else { return Ok(None) };
            let resolved = file.palette.get(value).map(String::as_str).unwrap_or(value);
            parse_colour(resolved).map(Some).ok_or_else(|| ThemeError::Invalid {
                path: origin.to_string(),
                message: format!(
                    "role {role}: {value:?} is not a colour (use \"#rrggbb\", an ANSI name, or a palette name)"
                ),
            })
        };
        let mut style = Style::default();
        if let Some(fg) = colour(&spec.fg)? {
            style = style.fg(fg);
        }
        if let Some(bg) = colour(&spec.bg)? {
            style = style.bg(bg);
        }
        let flags = [
            (spec.bold, Modifier::BOLD),
            (spec.italic, Modifier::ITALIC),
            (spec.underline, Modifier::UNDERLINED),
            (spec.dim, Modifier::DIM),
            (spec.reversed, Modifier::REVERSED),
        ];
        for (on, modifier) in flags {
            if on {
                style = style.add_modifier(modifier);
            }
        }
        out.insert(role.clone(), style);
    }
    Ok(out)
}

/// `#rrggbb`, an ANSI colour name, `reset`, or a 0–255 index.
fn parse_colour(s: &str) -> Option<Color> {
    if let Some(hex) = s.strip_prefix('#') {
        if hex.len() != 6 {
            return None;
        }
        let v = u32::from_str_radix(hex, 16).ok()?;
        return Some(Color::Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8));
    }
    if let Ok(index) = s.parse::<u8>() {
        return Some(Color::Indexed(index));
    }
    let c = match s.to_ascii_lowercase().replace(['-', '_', ' '], "").as_str() {
        "reset" | "default" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" => Color::Gray,
        "darkgray" | "darkgrey" => Color::DarkGray,
        "lightred" => Color::LightRed,
        "lightgreen" => Color::LightGreen,
        "lightyellow" => Color::LightYellow,
        "lightblue" => Color::LightBlue,
        "lightmagenta" => Color::LightMagenta,
        "lightcyan" => Color::LightCyan,
        "white" => Color::White,
        _ => return None,
    };
    Some(c)
}

/// `NO_COLOR` set to anything non-empty turns colours off (no-color.org).
#[cfg(test)]
mod tests {
    use super::*;

    fn no_user_themes(name: &str) -> UserTheme {
        UserTheme::Missing { path: format!("/config/themes/{name}.toml") }
    }

    /// User themes from `files` (name → text), as the command line would find them.
    fn user_themes(files: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> UserTheme {
        move |name| match files.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => {
                UserTheme::Found { path: format!("/config/themes/{name}.toml"), text: Ok(text.to_string()) }
            }
            None => no_user_themes(name),
        }
    }

    #[test]
    fn every_builtin_theme_defines_every_role_and_parses() {
        for (name, _) in BUILTIN {
            let theme = Theme::load(Some(name), &no_user_themes, false).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(theme.name, *name);
            assert!(theme.syntax.is_some(), "{name} names a syntax theme");
            assert_ne!(theme.mode_edit, theme.mode_plan, "{name}: modes are told apart");
        }
    }

    #[test]
    fn high_contrast_keeps_its_diff_row_colours() {
        assert!(!Theme::load(Some("high-contrast"), &no_user_themes, false).unwrap().syntax_in_diffs);
        assert!(Theme::load(Some("dark"), &no_user_themes, false).unwrap().syntax_in_diffs);
    }

    #[test]
    fn fallback_is_the_dark_theme() {
        assert_eq!(Theme::fallback(false), Theme::load(Some("dark"), &no_user_themes, false).unwrap());
    }

    #[test]
    fn no_color_keeps_modifiers_and_drops_colours() {
        let theme = Theme::load(Some("dark"), &no_user_themes, true).unwrap();
        assert_eq!(theme.diff_add.fg, None);
        assert_eq!(theme.diff_add.bg, None);
        assert!(theme.mode_edit.add_modifier.contains(Modifier::BOLD));
        assert!(theme.mode_edit.add_modifier.contains(Modifier::REVERSED), "the mode label stays a block");
        assert!(!theme.has_colour());
    }

    #[test]
    fn user_theme_inherits_and_overrides_one_role() {
        let mine = user_themes(&[(
            "mine",
            "inherits = \"light\"\n[palette]\nhot = \"#ff0000\"\n[roles]\naccent = { fg = \"hot\", bold = true }\n",
        )]);
        let theme = Theme::load(Some("mine"), &mine, false).unwrap();
        let light = Theme::load(Some("light"), &no_user_themes, false).unwrap();
        assert_eq!(theme.accent, Style::default().fg(Color::Rgb(255, 0, 0)).add_modifier(Modifier::BOLD));
        assert_eq!(theme.text, light.text);
        assert_eq!(theme.syntax, light.syntax);
    }

    #[test]
    fn bad_themes_say_what_is_wrong() {
        let files = user_themes(&[
            ("typo", "inherits = \"dark\"\n[roles]\nacent = { fg = \"red\" }\n"),
            ("partial", "[roles]\ntext = { fg = \"red\" }\n"),
            ("colour", "inherits = \"dark\"\n[roles]\ntext = { fg = \"#12\" }\n"),
        ]);
        let err = |n| Theme::load(Some(n), &files, false).unwrap_err().to_string();
        assert!(err("typo").contains("unknown role \"acent\""), "{}", err("typo"));
        assert!(err("partial").contains("is missing"), "{}", err("partial"));
        assert!(err("colour").contains("is not a colour"), "{}", err("colour"));
        assert!(err("nope").contains("neither built in"), "{}", err("nope"));
        assert!(err("nope").contains("/config/themes/nope.toml"), "says where it looked: {}", err("nope"));
        let unreadable =
            |name: &str| UserTheme::Found { path: format!("/t/{name}.toml"), text: Err("permission denied".into()) };
        let e = Theme::load(Some("locked"), &unreadable, false).unwrap_err().to_string();
        assert_eq!(e, "theme file /t/locked.toml: permission denied");
    }
}
