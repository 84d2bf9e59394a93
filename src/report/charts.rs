//! The report's charts: the context of each agent request, the cache per request, the cost
//! over the session, and the spend per day — each an SVG string with its axes and legend.

use super::model::{RequestKind, RequestPoint, SessionReport};
use super::spend::SpendReport;
use super::svg::{
    Frame, Swatch, count_ticks, dollars_label, esc, legend, polygon, polyline, rect, ticks, tokens_label,
};

pub const SYSTEM: &str = "#64748b";
pub const MEMORIES: &str = "#a78bfa";
pub const SUMMARY: &str = "#f59e0b";
pub const MESSAGES: &str = "#38bdf8";
pub const READ: &str = "#2563eb";
pub const WRITTEN: &str = "#f97316";
pub const UNCACHED: &str = "#9ca3af";

/// The colour of each kind of request in the cost chart.
pub fn kind_colour(kind: RequestKind) -> &'static str {
    match kind {
        RequestKind::Turn => "#2563eb",
        RequestKind::Auxiliary => "#c026d3",
        RequestKind::Subagent => "#0d9488",
        RequestKind::KeepAlive => "#16a34a",
    }
}

/// A stacked part of the context: its name, colour and value.
type Layer = (&'static str, &'static str, fn(&super::model::Parts) -> u64);
/// A threshold line: its name, colour, dash pattern and value.
type Limit = (&'static str, &'static str, &'static str, fn(&super::model::Thresholds) -> u64);

/// One letter per stage on the chart; the legend names them.
fn mark_letter(stage: &str) -> &'static str {
    match stage {
        "compaction" => "C",
        "prune" => "P",
        "dedup" => "D",
        "trim" => "T",
        _ => "",
    }
}

/// Context per agent request: the four parts stacked, the window and the thresholds as lines,
/// every compaction, prune, dedup and trim marked before the request it changed.
pub fn context_chart(report: &SessionReport) -> Option<String> {
    let points: Vec<&RequestPoint> =
        report.requests.iter().filter(|r| r.kind == RequestKind::Turn && r.context.is_some()).collect();
    if points.is_empty() {
        return None;
    }
    let n = points.len();
    let ceiling =
        points.iter().filter_map(|p| p.context.map(|(parts, t)| parts.total().max(t.window))).max().unwrap_or(1) as f64
            * 1.04;
    let y_ticks = ticks(ceiling, 6);
    let frame = Frame::new(0.5, n as f64 + 0.5, *y_ticks.last().unwrap_or(&ceiling));
    let mut s = frame.open(
        "Context per agent request",
        "agent request (in order)",
        "tokens in the request",
        &y_ticks,
        tokens_label,
    );
    let layers: [Layer; 4] = [
        ("system prompt and tools", SYSTEM, |p| p.system),
        ("memories", MEMORIES, |p| p.memories),
        ("summary and carried words", SUMMARY, |p| p.summary),
        ("messages", MESSAGES, |p| p.messages),
    ];
    // Stacked steps: each request covers [i − ½, i + ½].
    let mut below = vec![0u64; n];
    for (name, colour, part) in layers {
        let mut upper = Vec::with_capacity(2 * n);
        let mut lower = Vec::with_capacity(2 * n);
        let mut total = 0;
        for (i, p) in points.iter().enumerate() {
            let Some((parts, _)) = &p.context else { continue };
            let v = part(parts);
            total += v;
            let (x0, x1) = (frame.x(i as f64 + 0.5), frame.x(i as f64 + 1.5));
            upper.push((x0, frame.y((below[i] + v) as f64)));
            upper.push((x1, frame.y((below[i] + v) as f64)));
            lower.push((x0, frame.y(below[i] as f64)));
            lower.push((x1, frame.y(below[i] as f64)));
            below[i] += v;
        }
        if total == 0 {
            continue;
        }
        lower.reverse();
        upper.extend(lower);
        s.push_str(&polygon(
            &upper,
            colour,
            &format!("{name}: {} tokens over all requests", tokens_label(total as f64)),
        ));
    }
    let lines: [Limit; 5] = [
        ("window", "#111827", "", |t| t.window),
        ("reply reserve starts (effective window)", "#6b7280", "2 3", |t| t.effective),
        ("blocking: trim", "#dc2626", "6 3", |t| t.blocking),
        ("auto-compact", "#ea580c", "8 4", |t| t.auto_compact),
        ("warning", "#ca8a04", "3 3", |t| t.warning),
    ];
    for (name, colour, dash, value) in lines {
        let mut pts = Vec::with_capacity(2 * n);
        for (i, p) in points.iter().enumerate() {
            let Some((_, t)) = &p.context else { continue };
            let y = frame.y(value(t) as f64);
            pts.push((frame.x(i as f64 + 0.5), y));
            pts.push((frame.x(i as f64 + 1.5), y));
        }
        let last = points.last().and_then(|p| p.context).map(|(_, t)| value(&t)).unwrap_or(0);
        s.push_str(&polyline(&pts, colour, dash, 1.6, &format!("{name}: {}", tokens_label(last as f64))));
    }
    let after_last = RequestPoint { marks: report.trailing.clone(), ..(*points[n - 1]).clone() };
    let marked = points.iter().copied().chain((!report.trailing.is_empty()).then_some(&after_last));
    for (i, p) in marked.enumerate() {
        let letters: Vec<&str> = p.marks.iter().map(|m| mark_letter(&m.stage)).filter(|l| !l.is_empty()).collect();
        if letters.is_empty() {
            continue;
        }
        let x = frame.x(i as f64 + 0.5);
        let detail: Vec<String> = p.marks.iter().map(|m| m.detail.clone()).collect();
        let mut label = letters.clone();
        label.dedup();
        s.push_str(&format!(
            r##"<g><title>before agent request {}: {}</title><line x1="{x:.1}" x2="{x:.1}" y1="{top:.1}" y2="{base:.1}" stroke="#7c3aed" stroke-width="1.4" stroke-dasharray="4 2"/><rect x="{rx:.1}" y="{ry:.1}" width="{rw:.1}" height="15" rx="3" fill="#7c3aed"/><text x="{x:.1}" y="{ty:.1}" text-anchor="middle" fill="#ffffff" font-size="11" font-weight="bold">{}</text></g>"##,
            i + 1,
            esc(&detail.join("; ")),
            esc(&label.join("")),
            top = frame.top,
            base = frame.y(0.0),
            rx = x - 4.0 - 3.5 * label.len() as f64,
            ry = frame.top - 2.0,
            rw = 8.0 + 7.0 * label.len() as f64,
            ty = frame.top + 9.5,
        ));
    }
    s.push_str(&frame.x_ticks(&count_ticks(n, 12)));
    let mut items: Vec<(Swatch, String)> = layers.iter().map(|(n, c, _)| (Swatch::Fill(c), n.to_string())).collect();
    items.extend(lines.iter().map(|(n, c, d, _)| (Swatch::Line(c, d), n.to_string())));
    items.push((Swatch::Fill("#7c3aed"), "C compaction · P prune · D dedup · T trim".into()));
    s.push_str(&legend(&frame, &items));
    s.push_str("</svg>");
    Some(s)
}

/// Prompt tokens of every request, read from cache, written to it and neither; a strip under
/// the axis says who made each request; a triangle marks each cache break.
pub fn cache_chart(report: &SessionReport) -> Option<String> {
    let n = report.requests.len();
    if n == 0 {
        return None;
    }
    let max = report.requests.iter().map(|r| r.prompt()).max().unwrap_or(1) as f64 * 1.08;
    let y_ticks = ticks(max, 6);
    let mut frame = Frame::new(0.5, n as f64 + 0.5, *y_ticks.last().unwrap_or(&max));
    frame.bottom = 64.0;
    let mut s = frame.open(
        "Prompt tokens per request: read from cache, written to it, uncached",
        "request (in order, every kind)",
        "prompt tokens",
        &y_ticks,
        tokens_label,
    );
    let slot = frame.plot_width() / n as f64;
    let w = (slot * 0.8).max(0.6);
    let strip = frame.y(0.0) + 26.0;
    for (i, r) in report.requests.iter().enumerate() {
        let x = frame.x(i as f64 + 1.0) - w / 2.0;
        let title = format!(
            "#{} {} ({}) {}: {} read, {} written, {} uncached",
            i + 1,
            r.kind.label(),
            r.purpose,
            r.at,
            r.read,
            r.written,
            r.uncached
        );
        let mut base = 0u64;
        for (v, colour) in [(r.read, READ), (r.written, WRITTEN), (r.uncached, UNCACHED)] {
            let (y0, y1) = (frame.y(base as f64), frame.y((base + v) as f64));
            s.push_str(&rect(x, y1, w, y0 - y1, colour, &title));
            base += v;
        }
        s.push_str(&rect(x, strip, w, 8.0, kind_colour(r.kind), &title));
        if let Some(b) = &r.cache_break {
            let cx = x + w / 2.0;
            let top = frame.y(r.prompt() as f64) - 4.0;
            let colour = if b.kind == "unexpected" { "#dc2626" } else { "#f59e0b" };
            s.push_str(&format!(
                r#"<path d="M{:.1} {:.1} l5 -9 l5 9 z" fill="{colour}"><title>cache break at #{}: {} ({} fewer tokens read): {}</title></path>"#,
                cx - 5.0,
                top,
                i + 1,
                esc(&b.kind),
                b.dropped_tokens,
                esc(&b.reason)
            ));
        }
    }
    s.push_str(&frame.x_ticks(&count_ticks(n, 12)));
    let mut items = vec![
        (Swatch::Fill(READ), "read from cache".to_string()),
        (Swatch::Fill(WRITTEN), "written to cache".to_string()),
        (Swatch::Fill(UNCACHED), "uncached".to_string()),
        (Swatch::Mark("#f59e0b"), "cache break (red: unexpected)".to_string()),
    ];
    for kind in [RequestKind::Turn, RequestKind::Auxiliary, RequestKind::Subagent, RequestKind::KeepAlive] {
        if report.requests.iter().any(|r| r.kind == kind) {
            items.push((Swatch::Line(kind_colour(kind), ""), format!("strip: {}", kind.label())));
        }
    }
    s.push_str(&legend(&frame, &items));
    s.push_str("</svg>");
    Some(s)
}

/// What the session has cost after each request, stacked by who made the requests.
pub fn cost_chart(report: &SessionReport) -> Option<String> {
    let n = report.requests.len();
    if n == 0 || report.requests.iter().all(|r| r.cost.is_none()) {
        return None;
    }
    let kinds = [RequestKind::Turn, RequestKind::Auxiliary, RequestKind::Subagent, RequestKind::KeepAlive];
    let mut running = [0.0f64; 4];
    let mut series: Vec<[f64; 4]> = Vec::with_capacity(n);
    for r in &report.requests {
        let k = kinds.iter().position(|k| *k == r.kind).unwrap_or(0);
        running[k] += r.cost.unwrap_or(0.0);
        series.push(running);
    }
    let total: f64 = running.iter().sum();
    let y_ticks = ticks(total * 1.08, 6);
    let frame = Frame::new(0.5, n as f64 + 0.5, *y_ticks.last().unwrap_or(&1.0));
    let mut s = frame.open(
        "Cost over the session",
        "request (in order, every kind)",
        "dollars spent so far",
        &y_ticks,
        dollars_label,
    );
    let mut below = vec![0.0f64; n];
    let mut items = Vec::new();
    for (k, kind) in kinds.iter().enumerate() {
        if running[k] == 0.0 {
            continue;
        }
        let mut upper = Vec::new();
        let mut lower = Vec::new();
        for (i, v) in series.iter().enumerate() {
            let (x0, x1) = (frame.x(i as f64 + 0.5), frame.x(i as f64 + 1.5));
            upper.push((x0, frame.y(below[i] + v[k])));
            upper.push((x1, frame.y(below[i] + v[k])));
            lower.push((x0, frame.y(below[i])));
            lower.push((x1, frame.y(below[i])));
            below[i] += v[k];
        }
        lower.reverse();
        upper.extend(lower);
        let label = format!("{}: {}", kind.label(), dollars_label(running[k]));
        s.push_str(&polygon(&upper, kind_colour(*kind), &label));
        items.push((Swatch::Fill(kind_colour(*kind)), label));
    }
    s.push_str(&frame.x_ticks(&count_ticks(n, 12)));
    s.push_str(&legend(&frame, &items));
    s.push_str("</svg>");
    Some(s)
}

const PROJECT_COLOURS: [&str; 7] = ["#2563eb", "#f97316", "#16a34a", "#c026d3", "#0d9488", "#ca8a04", "#9ca3af"];

/// Spend per day, a bar a day stacked by project (the six most expensive; the rest together).
pub fn spend_chart(spend: &SpendReport) -> Option<String> {
    if spend.days.is_empty() {
        return None;
    }
    let named: Vec<&str> = spend.projects.iter().take(6).map(|p| p.root.as_str()).collect();
    let max = spend.days.iter().map(|d| d.cost().unwrap_or(0.0)).fold(0.0, f64::max) * 1.1;
    let y_ticks = ticks(max, 6);
    let n = spend.days.len();
    let frame = Frame::new(0.5, n as f64 + 0.5, *y_ticks.last().unwrap_or(&1.0));
    let mut s = frame.open("Spend per day and project", "day", "dollars", &y_ticks, dollars_label);
    let slot = frame.plot_width() / n as f64;
    let w = (slot * 0.7).clamp(2.0, 60.0);
    for (i, day) in spend.days.iter().enumerate() {
        let x = frame.x(i as f64 + 1.0) - w / 2.0;
        let mut base = 0.0;
        for (k, root) in named.iter().map(Some).chain([None]).enumerate() {
            let v: f64 = day
                .projects
                .iter()
                .filter(|p| match root {
                    Some(r) => p.root == **r,
                    None => !named.contains(&p.root.as_str()),
                })
                .filter_map(|p| p.cost_usd)
                .sum();
            let (y0, y1) = (frame.y(base), frame.y(base + v));
            let who = root.map_or("other projects", |r| r);
            s.push_str(&rect(
                x,
                y1,
                w,
                y0 - y1,
                PROJECT_COLOURS[k],
                &format!("{} {who}: {}", day.date, dollars_label(v)),
            ));
            base += v;
        }
    }
    let step = n.div_ceil(12).max(1);
    let x_ticks: Vec<(f64, String)> = spend
        .days
        .iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0)
        .map(|(i, d)| (i as f64 + 1.0, d.date.get(5..).unwrap_or(&d.date).to_string()))
        .collect();
    s.push_str(&frame.x_ticks(&x_ticks));
    let mut items: Vec<(Swatch, String)> =
        named.iter().enumerate().map(|(k, r)| (Swatch::Fill(PROJECT_COLOURS[k]), r.to_string())).collect();
    if spend.projects.len() > named.len() {
        items.push((Swatch::Fill(PROJECT_COLOURS[6]), "other projects".into()));
    }
    s.push_str(&legend(&frame, &items));
    s.push_str("</svg>");
    Some(s)
}
