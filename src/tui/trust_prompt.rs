//! Asking whether to trust a folder, before the interface proper opens and before anything of
//! the folder runs: the trust dialog alone on the screen until the user answers.

use std::io;

use futures_util::StreamExt;
use ratatui::crossterm::event::{Event, EventStream, MouseEventKind};

use super::keys;
use super::overlays::{TrustAnswer, TrustView};
use super::terminal::Tui;
use super::theme::Theme;
use crate::trust::TrustQuestion;

/// Show `question` until the user answers it; a terminal that closes is a `Quit`.
pub async fn ask_trust(tui: &mut Tui, theme: &Theme, question: &TrustQuestion) -> io::Result<TrustAnswer> {
    let mut view = TrustView::of(question);
    let mut events = EventStream::new();
    loop {
        tui.draw(|f| view.render(f.area(), f.buffer_mut(), theme))?;
        let page = usize::from(tui.size().height.saturating_sub(4));
        match events.next().await {
            Some(Ok(Event::Key(key))) => {
                if let Some(answer) = keys::trust(&key).and_then(|action| view.on_key(action, page)) {
                    return Ok(answer);
                }
            }
            Some(Ok(Event::Mouse(mouse))) => match mouse.kind {
                MouseEventKind::ScrollUp => view.scroll = view.scroll.saturating_sub(3),
                MouseEventKind::ScrollDown => view.scroll += 3,
                _ => {}
            },
            Some(Ok(Event::Resize(w, h))) => tui.resize(w, h)?,
            Some(Ok(Event::FocusGained | Event::FocusLost | Event::Paste(_))) => {}
            Some(Err(e)) => return Err(e),
            None => return Ok(TrustAnswer::Quit),
        }
    }
}
