//! The approval dialog shows what it asks about whole: a long diff line wraps, the reason and
//! every rule `a` and `p` would save are on screen in full before those keys save them, and the
//! footer and status line drop whole hints and parts rather than cut words.

use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

use super::*;
use crate::agent::{AgentEvent, ApprovalRequest};
use crate::tui::app::fixture::*;

fn text(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>()).collect()
}

#[test]
fn a_read_outside_the_project_shows_its_path_not_a_command() {
    let theme = Theme::fallback(true);
    let dialog = ApprovalDialog::new(ApprovalRequest {
        id: 1,
        call_id: "c1".into(),
        tool: "file_read".into(),
        summary: "/etc/hostname".into(),
        arguments: r#"{"path":"/etc/hostname"}"#.into(),
        reason: "reads outside the project: /etc/hostname".into(),
        diff: None,
        asked_by: "mode: edit".into(),
        exact: vec!["file_read(/etc/hostname)".into()],
        prefix: vec!["file_read(/etc/)".into()],
        kind: ApprovalKind::Call,
        agent: None,
        task: None,
    });
    assert_eq!(text(&dialog.body(60, &theme)), ["/etc/hostname"]);
}

const COMPOUND: &str = "git add -A && git commit -m \"fix the discount rounding in the cart total\" && cargo test --all-features -- --nocapture && git push origin main";

/// Four rules `a`/`p` would save: together far wider than any screen, each fits a row.
fn compound_rules() -> Vec<String> {
    vec![
        "bash(git add -A)".into(),
        "bash(git commit -m \"fix the discount rounding in the cart total\")".into(),
        "bash(cargo test --all-features -- --nocapture)".into(),
        "bash(git push origin main)".into(),
    ]
}

fn compound_request() -> ApprovalRequest {
    ApprovalRequest {
        id: 4,
        call_id: "c9".into(),
        tool: "bash".into(),
        summary: format!("$ {COMPOUND}"),
        arguments: serde_json::json!({ "command": COMPOUND }).to_string(),
        reason: "`git commit -m \"fix the discount rounding in the cart total\"` writes to the repository, `git push origin main` reaches the network, and `cargo test --all-features -- --nocapture` runs the project's code".into(),
        diff: None,
        asked_by: "mode: edit".into(),
        exact: compound_rules(),
        prefix: vec!["bash(git add *)".into(), "bash(git commit *)".into(), "bash(cargo test *)".into(), "bash(git push *)".into()],
        kind: ApprovalKind::Call,
        agent: None,
        task: None,
    }
}

/// The rows of `screen` between the dialog's top border and its bottom one.
fn dialog_rows(screen: &str) -> Vec<&str> {
    let lines: Vec<&str> = screen.lines().collect();
    let top = lines.iter().position(|l| l.starts_with("╭ Allow")).expect("the dialog");
    let bottom = top + lines[top..].iter().position(|l| l.starts_with('╰')).expect("its bottom");
    lines[top..=bottom].to_vec()
}

/// The dialog's inside, rows joined without spaces or borders: what wraps reads as one.
fn squeezed(rows: &[&str]) -> String {
    rows.iter()
        .map(|r| r.trim_start_matches(['╭', '│']).trim_end_matches(['╮', '│']))
        .collect::<String>()
        .replace([' ', '│'], "")
}

#[test]
fn a_long_diff_line_wraps_instead_of_ending_in_an_ellipsis() {
    let app = approval(Some(EDIT_DIFF), "file_edit", "src/cart.rs", r#"{"path":"src/cart.rs"}"#);
    for (w, h) in SIZES {
        let screen = crate::tui::app::fixture::text(&draw(&app, w, h));
        let rows = dialog_rows(&screen);
        let inside = &rows[1..rows.len() - 1];
        assert!(inside.iter().all(|r| !r.contains('…')), "a row is cut at {w}×{h}:\n{screen}");
        assert!(
            squeezed(inside).contains("letgross:Money=self.items.iter().map(|i|i.price*i.qty).sum();"),
            "the long line is not whole at {w}×{h}:\n{screen}"
        );
    }
}

#[test]
fn every_rule_a_and_p_would_save_and_why_it_asks_are_on_screen_whole() {
    let mut app = conversation();
    app.on_agent_event(AgentEvent::TurnStarted { prompt: "ship it".into() });
    app.on_agent_event(AgentEvent::ApprovalRequested(compound_request()));
    for (w, h) in SIZES {
        let screen = crate::tui::app::fixture::text(&draw(&app, w, h));
        let rows = dialog_rows(&screen);
        // The rules' rows, as read: a rule wrapped under the label reads on across its rows.
        let inside: Vec<&str> = rows.iter().map(|r| r.trim_matches(['│', '╭', '╰', '╮', '╯']).trim()).collect();
        let first = inside.iter().position(|r| r.starts_with("a/p remember: ")).expect("the rules");
        let last = first + inside[first..].iter().position(|r| r.starts_with("Tab:")).expect("the Tab line");
        let read = inside[first..last].join(" ");
        for rule in compound_rules() {
            assert!(read.contains(&rule), "{rule} is not shown whole at {w}×{h}:\n{screen}");
        }
        let why = "Asksbecause`gitcommit-m\"fixthediscountroundinginthecarttotal\"`writestotherepository,`gitpushoriginmain`reachesthenetwork,and`cargotest--all-features----nocapture`runstheproject'scode.";
        assert!(squeezed(&rows).contains(why), "the reason is cut at {w}×{h}:\n{screen}");
        assert!(
            squeezed(&rows).contains("Tab:broadentobash(gitadd*),bash(gitcommit*),bash(cargotest*),bash(gitpush*)")
        );
    }
}

#[test]
fn at_80_columns_the_footer_and_status_line_drop_whole_parts_not_words() {
    let app = approval(Some(EDIT_DIFF), "file_edit", "src/cart.rs", r#"{"path":"src/cart.rs"}"#);
    let screen = crate::tui::app::fixture::text(&draw(&app, 80, 24));
    let rows = dialog_rows(&screen);
    let footer = rows.last().unwrap();
    assert!(!footer.contains('…'), "the footer is cut: {footer}");
    for hint in ["y once", "a this session", "p this project", "n no", "Esc stop the turn"] {
        assert!(footer.contains(hint), "{hint} is left out of {footer}");
    }
    let status = screen.lines().last().unwrap();
    assert!(status.contains("waiting for your approval") && status.contains("96k/200k 48%"), "{status}");
    assert!(!status.contains('…'), "{status}");
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

#[test]
fn a_dialog_taller_than_the_screen_scrolls_and_a_waits_until_every_rule_was_seen() {
    let theme = Theme::fallback(true);
    let mut request = compound_request();
    request.exact = (0..12).map(|i| format!("bash(make target_{i})")).collect();
    let mut dialog = ApprovalDialog::new(request);
    let area = Rect::new(0, 0, 80, 10);
    let mut buf = Buffer::empty(area);
    dialog.render(area, &mut buf, &theme);
    let now = std::time::Instant::now();
    let said = dialog.on_key(key('a'), None, now, &theme);
    assert!(matches!(&said, ViewOutcome::Say(t) if t.contains("see every rule first")), "{said:?}");
    // Down to the end, a row at a time: every rule has been on screen, though not all at once.
    let mut shown = String::new();
    for _ in 0..40 {
        dialog.scroll_by(1);
        let mut buf = Buffer::empty(area);
        dialog.render(area, &mut buf, &theme);
        shown.push_str(&crate::tui::app::fixture::text(&buf));
    }
    for i in 0..12 {
        assert!(shown.contains(&format!("bash(make target_{i})")), "{shown}");
    }
    assert!(matches!(dialog.on_key(key('a'), None, now, &theme), ViewOutcome::CloseSending { .. }));
}
