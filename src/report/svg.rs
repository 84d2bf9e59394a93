//! The few SVG primitives the report's charts need — a frame with labelled axes and ticks,
//! stacked steps, bars, lines, a legend — written as text. (A plotting crate's SVG backend
//! needs a font stack to measure its labels; these charts do not, and cost no build time.)

use std::fmt::Write;

/// Text made safe inside SVG and HTML.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// Round steps (1, 2, 5 × 10ⁿ) from 0 to at least `max`, about `n` of them.
pub fn ticks(max: f64, n: usize) -> Vec<f64> {
    if max <= 0.0 || !max.is_finite() {
        return vec![0.0, 1.0];
    }
    let raw = max / n.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * magnitude).find(|s| *s >= raw).unwrap_or(10.0 * magnitude);
    let mut out = vec![0.0];
    while *out.last().unwrap_or(&0.0) < max - 1e-9 {
        let next = out.len() as f64 * step;
        out.push(next);
    }
    out
}

/// Tokens as the axis shows them: 12k, 1.2M.
pub fn tokens_label(v: f64) -> String {
    if v >= 1_000_000.0 {
        format!("{:.1}M", v / 1_000_000.0)
    } else if v >= 1_000.0 {
        let k = v / 1_000.0;
        if (k - k.round()).abs() < 0.05 { format!("{k:.0}k") } else { format!("{k:.1}k") }
    } else {
        format!("{v:.0}")
    }
}

/// Dollars as the axis shows them: cents when the value is whole cents, else a tenth of one.
pub fn dollars_label(v: f64) -> String {
    let cents = v * 100.0;
    if v == 0.0 {
        "$0".into()
    } else if (cents - cents.round()).abs() < 1e-6 {
        format!("${v:.2}")
    } else {
        format!("${v:.3}")
    }
}

/// A chart's drawing area and its scales: x from `x_min` to `x_max`, y from 0 to `y_max`.
pub struct Frame {
    pub width: f64,
    pub height: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
    pub x_min: f64,
    pub x_max: f64,
    pub y_max: f64,
}

impl Frame {
    pub fn new(x_min: f64, x_max: f64, y_max: f64) -> Frame {
        Frame {
            width: 1120.0,
            height: 360.0,
            left: 76.0,
            right: 24.0,
            top: 60.0,
            bottom: 52.0,
            x_min,
            x_max: if x_max > x_min { x_max } else { x_min + 1.0 },
            y_max: if y_max > 0.0 { y_max } else { 1.0 },
        }
    }

    pub fn x(&self, v: f64) -> f64 {
        self.left + (v - self.x_min) / (self.x_max - self.x_min) * (self.width - self.left - self.right)
    }

    pub fn y(&self, v: f64) -> f64 {
        self.height - self.bottom - v.min(self.y_max) / self.y_max * (self.height - self.top - self.bottom)
    }

    pub fn plot_width(&self) -> f64 {
        self.width - self.left - self.right
    }

    /// The opening tag, the title of the chart for screen readers, the grid, both axes with
    /// their ticks and labels. `x_ticks` are positions with their labels.
    pub fn open(&self, title: &str, x_label: &str, y_label: &str, y_ticks: &[f64], y_fmt: fn(f64) -> String) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="100%" role="img" aria-label="{t}" font-family="system-ui, sans-serif" font-size="13"><title>{t}</title><rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>"##,
            w = self.width,
            h = self.height,
            t = esc(title)
        );
        for &v in y_ticks {
            let y = self.y(v);
            let _ = write!(
                s,
                r##"<line x1="{l}" x2="{r}" y1="{y:.1}" y2="{y:.1}" stroke="#e5e7eb"/><text x="{tx}" y="{ty:.1}" text-anchor="end" fill="#374151">{label}</text>"##,
                l = self.left,
                r = self.width - self.right,
                tx = self.left - 8.0,
                ty = y + 4.0,
                label = esc(&y_fmt(v))
            );
        }
        let base = self.y(0.0);
        let _ = write!(
            s,
            r##"<line x1="{l}" x2="{r}" y1="{base:.1}" y2="{base:.1}" stroke="#111827"/><line x1="{l}" x2="{l}" y1="{t}" y2="{base:.1}" stroke="#111827"/>"##,
            l = self.left,
            r = self.width - self.right,
            t = self.top
        );
        let _ = write!(
            s,
            r##"<text x="{x:.1}" y="{y:.1}" text-anchor="middle" fill="#111827">{label}</text>"##,
            x = self.left + self.plot_width() / 2.0,
            y = self.height - 10.0,
            label = esc(x_label)
        );
        let mid = self.top + (self.height - self.top - self.bottom) / 2.0;
        let _ = write!(
            s,
            r##"<text x="16" y="{mid:.1}" text-anchor="middle" fill="#111827" transform="rotate(-90 16 {mid:.1})">{label}</text>"##,
            label = esc(y_label)
        );
        s
    }

    /// Tick marks and labels along the x axis.
    pub fn x_ticks(&self, ticks: &[(f64, String)]) -> String {
        let mut s = String::new();
        let base = self.y(0.0);
        for (v, label) in ticks {
            let x = self.x(*v);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{base:.1}" y2="{b2:.1}" stroke="#111827"/><text x="{x:.1}" y="{ty:.1}" text-anchor="middle" fill="#374151">{label}</text>"##,
                b2 = base + 5.0,
                ty = base + 19.0,
                label = esc(label)
            );
        }
        s
    }
}

/// Integer ticks for `n` items numbered from 1, about `want` of them.
pub fn count_ticks(n: usize, want: usize) -> Vec<(f64, String)> {
    if n == 0 {
        return Vec::new();
    }
    let step = ticks(n as f64, want).get(1).copied().unwrap_or(1.0).max(1.0) as usize;
    let mut out = vec![(1.0, "1".to_string())];
    let mut i = step;
    while i <= n {
        if i > 1 {
            out.push((i as f64, i.to_string()));
        }
        i += step;
    }
    out
}

/// How a legend item is drawn.
#[derive(Clone, Copy)]
pub enum Swatch {
    Fill(&'static str),
    Line(&'static str, &'static str),
    Mark(&'static str),
}

/// One row of legend items across the top of the chart, wrapping when needed.
pub fn legend(frame: &Frame, items: &[(Swatch, String)]) -> String {
    let mut s = String::new();
    let (mut x, mut y) = (frame.left, 18.0);
    for (swatch, label) in items {
        let width = 26.0 + label.chars().count() as f64 * 7.0 + 18.0;
        if x + width > frame.width - frame.right {
            x = frame.left;
            y += 18.0;
        }
        match swatch {
            Swatch::Fill(color) => {
                let _ = write!(s, r#"<rect x="{x:.1}" y="{:.1}" width="16" height="11" fill="{color}"/>"#, y - 10.0);
            }
            Swatch::Line(color, dash) => {
                let _ = write!(
                    s,
                    r#"<line x1="{x:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
                    x + 18.0,
                    y - 4.0,
                    y - 4.0
                );
            }
            Swatch::Mark(color) => {
                let _ = write!(s, r#"<path d="M{:.1} {:.1} l6 -10 l6 10 z" fill="{color}"/>"#, x + 2.0, y);
            }
        }
        let _ = write!(s, r##"<text x="{:.1}" y="{y:.1}" fill="#111827">{}</text>"##, x + 22.0, esc(label));
        x += width;
    }
    s
}

/// A closed shape through `points`, with a hover title.
pub fn polygon(points: &[(f64, f64)], fill: &str, title: &str) -> String {
    let mut d = String::new();
    for (i, (x, y)) in points.iter().enumerate() {
        let _ = write!(d, "{}{x:.1} {y:.1} ", if i == 0 { "M" } else { "L" });
    }
    format!(r#"<path d="{d}Z" fill="{fill}" stroke="none"><title>{}</title></path>"#, esc(title))
}

/// An open line through `points`.
pub fn polyline(points: &[(f64, f64)], stroke: &str, dash: &str, width: f64, title: &str) -> String {
    let mut d = String::new();
    for (i, (x, y)) in points.iter().enumerate() {
        let _ = write!(d, "{}{x:.1} {y:.1} ", if i == 0 { "M" } else { "L" });
    }
    format!(
        r#"<path d="{d}" fill="none" stroke="{stroke}" stroke-width="{width}" stroke-dasharray="{dash}"><title>{}</title></path>"#,
        esc(title)
    )
}

pub fn rect(x: f64, y: f64, w: f64, h: f64, fill: &str, title: &str) -> String {
    if h <= 0.0 || w <= 0.0 {
        return String::new();
    }
    format!(
        r#"<rect x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{h:.2}" fill="{fill}"><title>{}</title></rect>"#,
        esc(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_reach_the_maximum() {
        assert_eq!(ticks(184_000.0, 5), vec![0.0, 50_000.0, 100_000.0, 150_000.0, 200_000.0]);
        assert_eq!(ticks(0.9, 4), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        assert_eq!(tokens_label(12_000.0), "12k");
        assert_eq!(tokens_label(1_250.0), "1.2k");
        assert_eq!(
            (dollars_label(0.05), dollars_label(0.025), dollars_label(1.5)),
            ("$0.05".into(), "$0.025".into(), "$1.50".into())
        );
        assert_eq!(esc("<b>\"x\" & 'y'\x1b"), "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;");
        let t = count_ticks(40, 8);
        assert_eq!(t.first().map(|t| t.0), Some(1.0));
        assert_eq!(t.last().map(|t| t.0), Some(40.0));
    }
}
