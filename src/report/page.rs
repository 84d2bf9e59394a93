//! The report as one HTML page: the figures, the charts and the tables, styled inline, with no
//! script and nothing fetched. Every figure cell has an id (`fig-…`) so a check can read it.

use std::fmt::Write;

use super::charts::{cache_chart, context_chart, cost_chart, kind_colour, spend_chart};
use super::model::{RequestKind, SessionReport};
use super::spend::SpendReport;
use super::svg::esc;

const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #111827; background: #f3f4f6; margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 24px; margin: 4px 0 2px; }
h2 { font-size: 18px; margin: 22px 0 6px; border-bottom: 1px solid #d1d5db; padding-bottom: 4px; }
.sub { color: #4b5563; margin: 0 0 12px; }
.card { background: #fff; border: 1px solid #e5e7eb; border-radius: 6px; padding: 10px 12px; margin: 8px 0; }
.figures { display: grid; grid-template-columns: repeat(8, 1fr); gap: 6px; }
.figures div { background: #fff; border: 1px solid #e5e7eb; border-radius: 6px; padding: 5px 8px; }
.figures b { display: block; font-size: 16px; font-variant-numeric: tabular-nums; }
.figures span { color: #4b5563; font-size: 11.5px; line-height: 1.25; display: block; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: 13px; }
th, td { border-bottom: 1px solid #e5e7eb; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f9fafb; font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
details { background: #fff; border: 1px solid #e5e7eb; border-radius: 6px; margin: 6px 0; padding: 6px 10px; }
summary { cursor: pointer; }
pre { white-space: pre-wrap; font: 12px/1.4 ui-monospace, monospace; margin: 6px 0; }
.note { color: #92400e; }
.dot { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
.q { color: #b91c1c; font-weight: 600; }
"#;

fn money(v: Option<f64>) -> String {
    v.map(|v| format!("${v:.4}")).unwrap_or_else(|| "—".into())
}

/// A count, whole, with thousands separated: the same number `/context` and the JSON give.
fn n(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn percent(v: Option<f64>) -> String {
    v.map(|v| format!("{:.1} %", v * 100.0)).unwrap_or_else(|| "—".into())
}

fn head(title: &str) -> String {
    head_with(title, "")
}

/// The page's head with `extra` style after the report's own (the exported conversation's).
pub(super) fn head_with(title: &str, extra: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}{extra}</style></head><body><main>\n",
        esc(title)
    )
}

fn figure(out: &mut String, id: &str, value: &str, label: &str) {
    let _ = write!(out, r#"<div><b id="fig-{id}">{}</b><span>{}</span></div>"#, esc(value), esc(label));
}

/// The session's page.
pub fn render_session(r: &SessionReport) -> String {
    let t = &r.totals;
    let c = &r.counters;
    let mut s = head(&format!("cairn report: {}", r.title));
    let _ = write!(
        s,
        "<h1>{}</h1><p class=\"sub\">{}<br>report written {}</p>",
        esc(&r.title),
        esc(&r.subtitle),
        esc(&r.generated_at)
    );
    s.push_str("<div class=\"figures\">");
    figure(&mut s, "cost", &money(t.cost_usd), "session cost (catalog prices)");
    figure(&mut s, "requests", &n(t.requests), "requests (auxiliary included)");
    figure(&mut s, "input", &n(t.input_tokens), "uncached input tokens");
    figure(&mut s, "cache-read", &n(t.cache_read_input_tokens), "tokens read from cache");
    figure(&mut s, "cache-write", &n(t.cache_creation_input_tokens), "tokens written to cache");
    figure(&mut s, "output", &n(t.output_tokens), "output tokens");
    figure(&mut s, "hit-rate", &percent(t.cache_hit_rate), "of prompt tokens read from cache");
    figure(&mut s, "last-request", &n(t.last_request_tokens), "tokens in the last request");
    figure(&mut s, "compactions", &n(c.compactions), "compactions");
    figure(&mut s, "truncations", &n(c.truncations), "outputs truncated");
    figure(&mut s, "dedup", &n(c.dedup_replacements), "dedup replacements");
    figure(&mut s, "pruned", &n(c.pruned_results), "results pruned");
    figure(&mut s, "trimmed", &n(c.trimmed_messages), "messages trimmed");
    figure(&mut s, "compaction-failures", &n(c.compaction_failures), "compactions failed");
    figure(&mut s, "keepalive", &n(t.keepalive_pings), &format!("keep-alive pings ({})", money(t.keepalive_usd)));
    figure(&mut s, "subagents", &n(t.subagent_requests), &format!("subagent requests ({})", money(t.subagent_usd)));
    s.push_str("</div>");
    for note in &r.notes {
        let _ = write!(s, "<p class=\"note\">{}</p>", esc(note));
    }

    s.push_str("<h2>Context per request</h2><p class=\"sub\">What each agent request carried, in four parts adding up to the tokens the provider counted; lines: the window and the thresholds in force (warning: dedup and pruning may run; auto-compact; blocking: oldest turns trimmed; above the effective window: the reply's reserve). Purple marks: a compaction, prune, dedup or trim before that request. Hover for figures.</p>");
    match context_chart(r) {
        Some(svg) => s.push_str(&format!("<div class=\"card\">{svg}</div>")),
        None => s.push_str("<p>No agent request of this session was recorded with its context figures.</p>"),
    }

    s.push_str("<h2>Cache per request</h2><p>Every request's prompt: read from the provider's cache (cheap), written to it (a little dearer than plain input), or neither. The strip under the axis says who made the request; a triangle is a cache break.</p>");
    if let Some(svg) = cache_chart(r) {
        s.push_str(&format!("<div class=\"card\">{svg}</div>"));
    }

    s.push_str("<h2>Cost</h2>");
    if let Some(svg) = cost_chart(r) {
        s.push_str(&format!("<div class=\"card\">{svg}</div>"));
    }
    s.push_str("<table><tr><th>who</th><th class=\"n\">requests</th><th class=\"n\">prompt tokens</th><th class=\"n\">read from cache</th><th class=\"n\">output tokens</th><th class=\"n\">cost</th></tr>");
    for kind in [RequestKind::Turn, RequestKind::Auxiliary, RequestKind::Subagent, RequestKind::KeepAlive] {
        let of: Vec<_> = r.requests.iter().filter(|p| p.kind == kind).collect();
        if of.is_empty() {
            continue;
        }
        let cost = of.iter().fold(None, |sum, p| super::model::add_cost(sum, p.cost));
        let _ = write!(
            s,
            "<tr><td><span class=\"dot\" style=\"background:{}\"></span>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            kind_colour(kind),
            kind.label(),
            of.len(),
            n(of.iter().map(|p| p.prompt()).sum()),
            n(of.iter().map(|p| p.read).sum()),
            n(of.iter().map(|p| p.output).sum()),
            money(cost)
        );
    }
    s.push_str("</table>");

    s.push_str("<h2>The largest tool outputs</h2><table><tr><th>tool</th><th>call</th><th class=\"n\">tokens</th><th class=\"n\">first sent</th><th>what the pipeline did</th></tr>");
    if r.outputs.is_empty() {
        s.push_str("<tr><td colspan=\"5\">No tool ran in this session.</td></tr>");
    }
    for o in &r.outputs {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&o.tool),
            esc(&o.target),
            n(o.tokens),
            n(o.sent_tokens),
            esc(&o.fate)
        );
    }
    s.push_str("</table>");

    s.push_str("<h2>What the pipeline did</h2><table><tr><th class=\"n\">before request</th><th>stage</th><th class=\"n\">tokens saved</th><th>detail</th></tr>");
    let turns: Vec<_> = r.requests.iter().filter(|p| p.kind == RequestKind::Turn).collect();
    let mut any = false;
    for (i, p) in turns.iter().enumerate() {
        for m in &p.marks {
            any = true;
            let _ = write!(
                s,
                "<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                i + 1,
                esc(&m.stage),
                n(m.saved_tokens),
                esc(&m.detail)
            );
        }
    }
    for m in &r.trailing {
        any = true;
        let _ = write!(
            s,
            "<tr><td class=\"n\">after the last</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&m.stage),
            n(m.saved_tokens),
            esc(&m.detail)
        );
    }
    if !any {
        s.push_str("<tr><td colspan=\"4\">Nothing: every request was sent as the history stood.</td></tr>");
    }
    s.push_str("</table>");

    s.push_str("<h2>Cache breaks</h2><table><tr><th class=\"n\">request</th><th>kind</th><th class=\"n\">fewer tokens read</th><th>cause</th></tr>");
    let mut breaks = 0;
    for (i, p) in r.requests.iter().enumerate() {
        if let Some(b) = &p.cache_break {
            breaks += 1;
            let _ = write!(
                s,
                "<tr><td class=\"n\">#{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                i + 1,
                esc(&b.kind),
                n(b.dropped_tokens),
                esc(&b.reason)
            );
        }
    }
    if breaks == 0 {
        s.push_str("<tr><td colspan=\"4\">None: no request read 2,000 or more tokens fewer from cache than the one before.</td></tr>");
    }
    s.push_str("</table>");

    s.push_str("<h2>Topics (segments)</h2>");
    if r.segments.is_empty() {
        s.push_str("<p>The session has not been cut into topics yet.</p>");
    }
    for seg in &r.segments {
        let state = if seg.shown { "still sent verbatim" } else { "no longer sent verbatim" };
        let _ = write!(
            s,
            "<details><summary>{}level {} · messages {}–{} · {} tokens · {}</summary><pre>{}</pre></details>",
            "&nbsp;&nbsp;".repeat(2 * (2usize.saturating_sub(seg.level as usize))),
            seg.level,
            seg.first_seq,
            seg.last_seq,
            n(seg.tokens),
            state,
            esc(seg.summary.as_deref().unwrap_or("(no summary yet: a compaction writes one when it hides the topic)"))
        );
    }

    s.push_str("<h2>Compactions</h2>");
    if r.compactions.is_empty() {
        s.push_str("<p>None.</p>");
    }
    for (i, cmp) in r.compactions.iter().enumerate() {
        let _ = write!(
            s,
            "<details><summary>#{} · {} · {} · {} → {} tokens</summary><pre>{}</pre></details>",
            i + 1,
            esc(&cmp.at),
            esc(&cmp.trigger),
            n(cmp.tokens_before),
            n(cmp.tokens_after),
            esc(&cmp.summary)
        );
    }

    s.push_str("<h2>Memories saved in this session</h2><table><tr><th class=\"n\">id</th><th>type</th><th>title</th><th>content</th><th>injected</th></tr>");
    if r.memories.is_empty() {
        s.push_str("<tr><td colspan=\"5\">None.</td></tr>");
    }
    for m in &r.memories {
        let injected = match (&m.quarantined, m.pinned) {
            (Some(why), false) => format!("<span class=\"q\">quarantined</span>: {}", esc(why)),
            (Some(why), true) => format!("pinned by you despite: {}", esc(why)),
            (None, _) => "yes".into(),
        };
        let _ = write!(
            s,
            "<tr><td class=\"n\">#{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            m.id,
            esc(&m.kind),
            esc(&m.title),
            esc(&crate::conversation::clip(&m.content, 400)),
            injected
        );
    }
    s.push_str("</table>");
    s.push_str("<p class=\"sub\">Written by cairn. No script, nothing fetched: this file is the whole report.</p></main></body></html>\n");
    s
}

/// The spend page (`--since`).
pub fn render_spend(spend: &SpendReport) -> String {
    let mut s = head("cairn report: spend");
    let total = spend.projects.iter().fold(None, |sum, p| super::model::add_cost(sum, p.cost_usd));
    let _ = write!(
        s,
        "<h1>Spend since {}</h1><p class=\"sub\">every project · catalog prices · {} day(s) with usage</p><div class=\"figures\">",
        esc(&spend.since),
        spend.days.len()
    );
    figure(&mut s, "cost", &money(total), "spent in all");
    figure(&mut s, "requests", &n(spend.projects.iter().map(|p| p.requests).sum()), "requests");
    figure(&mut s, "projects", &n(spend.projects.len() as u64), "projects");
    s.push_str("</div>");
    match spend_chart(spend) {
        Some(svg) => s.push_str(&format!("<div class=\"card\">{svg}</div>")),
        None => s.push_str("<p>No usage in this span.</p>"),
    }
    s.push_str("<h2>Per project</h2><table><tr><th>project</th><th class=\"n\">sessions</th><th class=\"n\">requests</th><th class=\"n\">prompt tokens</th><th class=\"n\">output tokens</th><th class=\"n\">cost</th></tr>");
    for p in &spend.projects {
        let _ = write!(
            s,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&p.root),
            p.sessions,
            n(p.requests),
            n(p.prompt_tokens),
            n(p.output_tokens),
            money(p.cost_usd)
        );
    }
    s.push_str("</table><h2>Per day</h2><table><tr><th>day</th><th>project</th><th class=\"n\">requests</th><th class=\"n\">cost</th></tr>");
    for day in spend.days.iter().rev() {
        for p in &day.projects {
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&day.date),
                esc(&p.root),
                n(p.requests),
                money(p.cost_usd)
            );
        }
    }
    s.push_str("</table></main></body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::n;

    #[test]
    fn counts_are_whole_with_separators() {
        assert_eq!(n(0), "0");
        assert_eq!(n(999), "999");
        assert_eq!(n(1_000), "1,000");
        assert_eq!(n(7_454_123), "7,454,123");
    }
}
