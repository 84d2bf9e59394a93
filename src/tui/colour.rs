//! How many colours the terminal shows, and every colour brought down to that: themes and the
//! syntax highlighter speak in 24-bit colour, which a 256- or 16-colour terminal (a bare
//! `TERM=xterm`, GNU screen, the Linux console) would show as garbage or not at all. Both
//! presenters pass every cell through [`ColourDepth::map`] on its way out; `NO_COLOR` is the
//! theme's business (it drops colours before they get here).

use ratatui::buffer::Buffer;
use ratatui::style::Color;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColourDepth {
    /// `COLORTERM=truecolor` (or `24bit`), or a terminal known to have it.
    TrueColour,
    /// A `TERM` naming 256 colours.
    Ansi256,
    /// Anything else: the 16 ANSI colours.
    Ansi16,
}

impl ColourDepth {
    /// From the environment the terminal set.
    pub fn detect() -> ColourDepth {
        let var = |name: &str| std::env::var(name).ok();
        ColourDepth::from_env(var("COLORTERM").as_deref(), var("TERM").as_deref(), var("TERM_PROGRAM").as_deref())
    }

    pub fn from_env(colorterm: Option<&str>, term: Option<&str>, program: Option<&str>) -> ColourDepth {
        let colorterm = colorterm.unwrap_or("").to_ascii_lowercase();
        let term = term.unwrap_or("").to_ascii_lowercase();
        // Terminals that have 24-bit colour but do not always say so in COLORTERM (it is not
        // passed over ssh by default, for one).
        let known = ["iterm.app", "wezterm", "vscode", "ghostty", "warpterminal"];
        if colorterm == "truecolor"
            || colorterm == "24bit"
            || term.contains("truecolor")
            || term.contains("direct")
            || ["kitty", "alacritty", "wezterm", "foot", "ghostty"].iter().any(|t| term.contains(t))
            || program.is_some_and(|p| known.contains(&p.to_ascii_lowercase().as_str()))
        {
            ColourDepth::TrueColour
        } else if term.contains("256") {
            ColourDepth::Ansi256
        } else {
            ColourDepth::Ansi16
        }
    }

    /// `c` as this terminal can show it: the nearest colour it has.
    pub fn map(self, c: Color) -> Color {
        match (self, c) {
            (ColourDepth::TrueColour, c) => c,
            (ColourDepth::Ansi256, Color::Rgb(r, g, b)) => Color::Indexed(nearest_256(r, g, b)),
            (ColourDepth::Ansi256, c) => c,
            (ColourDepth::Ansi16, Color::Rgb(r, g, b)) => nearest_16(r, g, b),
            (ColourDepth::Ansi16, Color::Indexed(i)) if i >= 16 => {
                let (r, g, b) = rgb_of_index(i);
                nearest_16(r, g, b)
            }
            (ColourDepth::Ansi16, Color::Indexed(i)) => ANSI16[usize::from(i)].0,
            (ColourDepth::Ansi16, c) => c,
        }
    }

    /// Every cell of `buf` brought down to this depth (a no-op at 24-bit).
    pub fn apply(self, buf: &mut Buffer) {
        if self == ColourDepth::TrueColour {
            return;
        }
        for cell in buf.content.iter_mut() {
            cell.fg = self.map(cell.fg);
            cell.bg = self.map(cell.bg);
        }
    }
}

/// The 16 ANSI colours with the values xterm gives them.
const ANSI16: [(Color, (u8, u8, u8)); 16] = [
    (Color::Black, (0, 0, 0)),
    (Color::Red, (205, 0, 0)),
    (Color::Green, (0, 205, 0)),
    (Color::Yellow, (205, 205, 0)),
    (Color::Blue, (0, 0, 238)),
    (Color::Magenta, (205, 0, 205)),
    (Color::Cyan, (0, 205, 205)),
    (Color::Gray, (229, 229, 229)),
    (Color::DarkGray, (127, 127, 127)),
    (Color::LightRed, (255, 0, 0)),
    (Color::LightGreen, (0, 255, 0)),
    (Color::LightYellow, (255, 255, 0)),
    (Color::LightBlue, (92, 92, 255)),
    (Color::LightMagenta, (255, 0, 255)),
    (Color::LightCyan, (0, 255, 255)),
    (Color::White, (255, 255, 255)),
];

fn distance((r1, g1, b1): (u8, u8, u8), (r2, g2, b2): (u8, u8, u8)) -> u32 {
    // Weighted for the eye: green counts most, blue least.
    let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).pow(2) as u32;
    2 * d(r1, r2) + 4 * d(g1, g2) + 3 * d(b1, b2)
}

/// The nearest of the 16: greys (little chroma) by brightness, colours by hue, the light ones
/// when bright. Nearest by distance alone would turn a muted theme's red or green into grey.
fn nearest_16(r: u8, g: u8, b: u8) -> Color {
    let (lo, hi) = (r.min(g).min(b), r.max(g).max(b));
    let chroma = hi - lo;
    if hi < 64 {
        return Color::Black;
    }
    if chroma < 40 {
        return match hi {
            0..=159 => Color::DarkGray,
            160..=229 => Color::Gray,
            _ => Color::White,
        };
    }
    let (r, g, b, c) = (f32::from(r), f32::from(g), f32::from(b), f32::from(chroma));
    let hue = if hi == r as u8 {
        (60.0 * ((g - b) / c)).rem_euclid(360.0)
    } else if hi == g as u8 {
        60.0 * ((b - r) / c) + 120.0
    } else {
        60.0 * ((r - g) / c) + 240.0
    };
    let sector = (((hue + 30.0) / 60.0) as usize) % 6;
    let light = hi > 220;
    let hues = [
        (Color::Red, Color::LightRed),
        (Color::Yellow, Color::LightYellow),
        (Color::Green, Color::LightGreen),
        (Color::Cyan, Color::LightCyan),
        (Color::Blue, Color::LightBlue),
        (Color::Magenta, Color::LightMagenta),
    ];
    let (normal, bright) = hues[sector];
    if light { bright } else { normal }
}

/// The xterm 256-colour palette: 16 system colours, a 6×6×6 cube, 24 greys.
fn rgb_of_index(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => ANSI16[usize::from(i)].1,
        16..=231 => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            (level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        232..=255 => {
            let v = 8 + (i - 232) * 10;
            (v, v, v)
        }
    }
}

fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    let step = |v: u8| -> u8 {
        if v < 48 {
            0
        } else if v < 115 {
            1
        } else {
            (v - 35) / 40
        }
    };
    let cube = 16 + 36 * step(r) + 6 * step(g) + step(b);
    let avg = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let grey = if avg > 238 { 255 } else { 232 + (avg.saturating_sub(3) / 10).min(23) as u8 };
    if distance(rgb_of_index(grey), (r, g, b)) < distance(rgb_of_index(cube), (r, g, b)) { grey } else { cube }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_says_the_depth() {
        use ColourDepth::*;
        assert_eq!(ColourDepth::from_env(Some("truecolor"), Some("xterm-256color"), None), TrueColour);
        assert_eq!(ColourDepth::from_env(None, Some("xterm-256color"), None), Ansi256);
        assert_eq!(ColourDepth::from_env(None, Some("screen-256color"), None), Ansi256);
        assert_eq!(ColourDepth::from_env(None, Some("screen"), None), Ansi16);
        assert_eq!(ColourDepth::from_env(None, Some("xterm"), None), Ansi16);
        assert_eq!(ColourDepth::from_env(None, Some("linux"), None), Ansi16);
        assert_eq!(ColourDepth::from_env(None, Some("xterm-256color"), Some("WezTerm")), TrueColour);
        assert_eq!(ColourDepth::from_env(None, Some("xterm-kitty"), None), TrueColour);
    }

    #[test]
    fn colours_come_down_to_what_the_terminal_has() {
        // The dark theme's red, green and a faint grey.
        assert_eq!(ColourDepth::Ansi16.map(Color::Rgb(0xbf, 0x61, 0x6a)), Color::Red);
        assert_eq!(ColourDepth::Ansi16.map(Color::Rgb(0xa3, 0xbe, 0x8c)), Color::Green);
        assert_eq!(ColourDepth::Ansi16.map(Color::Rgb(0x4c, 0x55, 0x66)), Color::DarkGray);
        assert_eq!(ColourDepth::Ansi16.map(Color::Rgb(0xeb, 0xcb, 0x8b)), Color::LightYellow);
        assert_eq!(ColourDepth::Ansi16.map(Color::Rgb(0x81, 0xa1, 0xc1)), Color::Blue);
        assert_eq!(ColourDepth::Ansi16.map(Color::Rgb(0x1f, 0x24, 0x2d)), Color::Black);
        assert_eq!(ColourDepth::Ansi16.map(Color::Indexed(196)), Color::LightRed);
        assert_eq!(ColourDepth::Ansi16.map(Color::Yellow), Color::Yellow);
        assert_eq!(ColourDepth::Ansi256.map(Color::Rgb(255, 0, 0)), Color::Indexed(196));
        assert_eq!(ColourDepth::Ansi256.map(Color::Rgb(0x1f, 0x24, 0x2d)), Color::Indexed(235));
        assert_eq!(ColourDepth::TrueColour.map(Color::Rgb(1, 2, 3)), Color::Rgb(1, 2, 3));
        assert_eq!(ColourDepth::Ansi16.map(Color::Reset), Color::Reset);
    }
}
