//! Syntax highlighting of code blocks and diff lines with syntect and bat's syntaxes and themes
//! (two-face). The syntax set is loaded once, lazily (or warmed in the background after the
//! first frame), so start-up does not pay for it; highlighted blocks are cached by content.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme as SyntaxTheme};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use two_face::theme::{EmbeddedLazyThemeSet, EmbeddedThemeName};

/// Longest code block highlighted; beyond it the text is shown plain (highlighting cost grows
/// with length, and nobody reads colours in a 5,000-line dump).
const MAX_HIGHLIGHT_BYTES: usize = 256 * 1024;
/// Highlighted blocks kept; a streaming answer re-renders each frame and hits this cache for
/// every block but the growing one.
const CACHE_ENTRIES: usize = 256;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(two_face::syntax::extra_newlines)
}

fn themes() -> &'static EmbeddedLazyThemeSet {
    static SET: OnceLock<EmbeddedLazyThemeSet> = OnceLock::new();
    SET.get_or_init(two_face::theme::extra)
}

/// Load the syntaxes now (call from a background thread after the first frame).
pub fn warm_up() {
    let _ = syntaxes();
}

fn theme_named(name: &str) -> Option<&'static SyntaxTheme> {
    let wanted: &EmbeddedThemeName = EmbeddedLazyThemeSet::theme_names().iter().find(|t| t.as_name() == name)?;
    Some(themes().get(*wanted))
}

fn syntax_for(lang: &str) -> Option<&'static SyntaxReference> {
    let set = syntaxes();
    let lang = lang.trim();
    if lang.is_empty() {
        return None;
    }
    let token = lang.split([',', ' ', '{']).next().unwrap_or(lang);
    set.find_syntax_by_token(token).or_else(|| set.find_syntax_by_extension(token))
}

/// The language of a path, by extension or file name (for diffs).
pub fn lang_of_path(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((_, ext)) => ext.to_string(),
        None => name.to_string(),
    }
}

type Highlighted = Vec<Vec<Span<'static>>>;

fn cache() -> &'static Mutex<HashMap<u64, Highlighted>> {
    static CACHE: OnceLock<Mutex<HashMap<u64, Highlighted>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Highlight `code` as `lang` with the bat theme `theme`: one vector of spans per line (without
/// the newline). `None` when the language is unknown, colours are off, or the block is too big,
/// and the caller shows it plain.
pub fn highlight(code: &str, lang: &str, theme: Option<&str>) -> Option<Highlighted> {
    let theme_name = theme?;
    if code.len() > MAX_HIGHLIGHT_BYTES {
        return None;
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (code, lang, theme_name).hash(&mut hasher);
    let key = hasher.finish();
    // A poisoned cache only means another thread panicked mid-insert; the map is still usable.
    if let Some(hit) = cache().lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Some(hit.clone());
    }
    let syntax = syntax_for(lang)?;
    let theme = theme_named(theme_name)?;
    let mut h = HighlightLines::new(syntax, theme);
    let mut out = Vec::new();
    for line in syntect::util::LinesWithEndings::from(code) {
        let ranges = h.highlight_line(line, syntaxes()).ok()?;
        let spans = ranges
            .into_iter()
            .filter_map(|(style, text)| {
                let text = text.trim_end_matches(['\n', '\r']);
                (!text.is_empty()).then(|| Span::styled(text.replace('\t', "    "), convert(style)))
            })
            .collect();
        out.push(spans);
    }
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() >= CACHE_ENTRIES {
        cache.clear();
    }
    cache.insert(key, out.clone());
    Some(out)
}

/// Foreground and font style only: backgrounds come from cairn's theme (code block, diff rows).
fn convert(style: syntect::highlighting::Style) -> Style {
    let fg = style.foreground;
    // bat's "ansi" themes encode terminal palette indices with alpha 0.
    let colour = if fg.a == 0 {
        match fg.r {
            0x00 => Color::Black,
            0x01 => Color::Red,
            0x02 => Color::Green,
            0x03 => Color::Yellow,
            0x04 => Color::Blue,
            0x05 => Color::Magenta,
            0x06 => Color::Cyan,
            0x07 => Color::White,
            n => Color::Indexed(n),
        }
    } else if fg.a == 1 {
        Color::Reset
    } else {
        Color::Rgb(fg.r, fg.g, fg.b)
    };
    let mut out = Style::default().fg(colour);
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_is_coloured_and_split_by_line() {
        let lines = highlight("fn main() {\n    let x = 1;\n}\n", "rust", Some("base16-ocean.dark")).unwrap();
        assert_eq!(lines.len(), 3);
        let first: String = lines[0].iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(first, "fn main() {");
        let colours: std::collections::HashSet<_> = lines[0].iter().map(|s| s.style.fg).collect();
        assert!(colours.len() > 1, "keywords and names differ: {colours:?}");
    }

    #[test]
    fn unknown_language_or_no_colour_means_plain() {
        assert!(highlight("x", "no-such-language", Some("base16-ocean.dark")).is_none());
        assert!(highlight("fn x() {}", "rust", None).is_none());
    }

    /// The names a theme file may give as `syntax`.
    fn theme_names() -> Vec<&'static str> {
        EmbeddedLazyThemeSet::theme_names().iter().map(|t| t.as_name()).collect()
    }

    #[test]
    fn every_builtin_theme_names_a_bundled_syntax_theme() {
        for (name, _) in crate::tui::theme::BUILTIN {
            let theme = crate::tui::theme::Theme::load(
                Some(name),
                &|n| crate::tui::theme::UserTheme::Missing { path: n.into() },
                false,
            )
            .unwrap();
            let syntax = theme.syntax.unwrap();
            assert!(theme_names().contains(&syntax.as_str()), "{name}: {syntax}");
        }
    }

    #[test]
    fn paths_name_their_language() {
        assert_eq!(lang_of_path("src/main.rs"), "rs");
        assert_eq!(lang_of_path("Makefile"), "Makefile");
    }
}
