//! The event loop: terminal input, agent events, the provider connecting in the background, and
//! frames drawn only when something changed (coalesced and capped by the frame scheduler).

use std::future::Future;
use std::io;
use std::pin::pin;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use ratatui::crossterm::event::{Event, EventStream, MouseEventKind};
use tokio::sync::mpsc::UnboundedReceiver;

use super::app::App;
use super::cells::NoticeKind;
use super::frame::{FrameScheduler, MIN_FRAME_INTERVAL};
use super::highlight;
use super::status::SPINNER_FPS;
use super::terminal::Tui;
use crate::agent::{AgentEvent, AgentHandle};

/// How long quitting waits for the agent to commit what it was writing.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// Agent events applied before a frame gets a chance (a burst of deltas is one frame anyway).
const EVENT_BATCH: usize = 512;

/// Why the loop ended.
pub enum Exit {
    /// The user quit.
    Quit,
    /// The setup screen was left: no provider, with the explanation.
    NoProvider(String),
    /// The agent could not start.
    Failed(String),
}

/// Why the provider could not be reached.
pub enum ConnectError {
    /// Nothing usable is configured: the setup screen says what to set.
    Setup(String),
    /// Something else went wrong (the store, a bad client setting).
    Failed(String),
}

enum Wake {
    Terminal(Option<io::Result<Event>>),
    Agent(Option<AgentEvent>),
    Connected(Result<AgentHandle, ConnectError>),
    Frame,
    Signal,
}

async fn agent_event(handle: &mut Option<AgentHandle>) -> Option<AgentEvent> {
    match handle {
        Some(h) => h.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Run the interface until the user quits. `connect` resolves the provider and starts the
/// agent; the first frame is up before it finishes. `edit` hands a prompt to the user's editor
/// (Ctrl+G) and gives back what they saved, or why not; the screen is theirs meanwhile.
pub async fn run<Edited: Future<Output = Result<String, String>>>(
    tui: &mut Tui,
    app: &mut App,
    connect: impl Future<Output = Result<AgentHandle, ConnectError>>,
    mut wake: UnboundedReceiver<()>,
    edit: impl Fn(String) -> Edited,
) -> io::Result<Exit> {
    // Load the highlighter beside start-up, off the first frame's path, so the first code block
    // on screen (a resumed session's) does not wait for it.
    if let Err(e) = std::thread::Builder::new().name("cairn-highlight".into()).spawn(highlight::warm_up) {
        tracing::warn!(error = %e, "could not load the highlighter in the background");
    }
    let mut scheduler = FrameScheduler::new(MIN_FRAME_INTERVAL);
    let mut events = EventStream::new();
    let mut connect = pin!(connect);
    let mut connecting = true;
    let mut handle: Option<AgentHandle> = None;
    let mut agent_gone = false;
    let mut failure: Option<String> = None;
    let mut signals = Signals::new();
    let mut first_frame = true;
    let mut wake_open = true;
    scheduler.request(Instant::now());
    loop {
        let now = Instant::now();
        if scheduler.is_due(now) {
            app.set_now(now);
            if app.take_repaint() {
                tui.force_full_repaint();
            }
            tui.present(app)?;
            scheduler.drawn(now);
            if app.animating() {
                scheduler.request_at(now + Duration::from_millis(1000 / SPINNER_FPS as u64));
            }
            if first_frame {
                first_frame = false;
                tracing::info!("first frame drawn");
            }
        }
        if app.wants_to_quit() || failure.is_some() {
            break;
        }
        let due = scheduler.due();
        let woke = tokio::select! {
            ev = events.next() => Wake::Terminal(ev),
            ev = agent_event(&mut handle), if !agent_gone => Wake::Agent(ev),
            res = &mut connect, if connecting => Wake::Connected(res),
            // Once every requester is gone the channel reports closed at once, forever: stop
            // listening then, or the loop would spin.
            woken = wake.recv(), if wake_open => {
                wake_open = woken.is_some();
                Wake::Frame
            }
            _ = tokio::time::sleep_until(due.unwrap_or(now).into()), if due.is_some() => Wake::Frame,
            _ = signals.next() => Wake::Signal,
        };
        app.set_now(Instant::now());
        let mut changed = true;
        // The user's own input is drawn at once; the frame cap is for streamed output.
        let input = matches!(woke, Wake::Terminal(Some(Ok(_))));
        match woke {
            Wake::Terminal(Some(Ok(event))) => match event {
                Event::Key(key) => app.on_key(key),
                Event::Paste(text) => app.on_paste(&text),
                // Pointer motion (reported because the wheel needs mouse capture) changes nothing.
                Event::Mouse(mouse) if mouse.kind == MouseEventKind::Moved => changed = false,
                Event::Mouse(mouse) => app.on_mouse(mouse),
                Event::Resize(w, h) => tui.resize(w, h)?,
                Event::FocusGained | Event::FocusLost => {}
            },
            // The terminal is gone: nothing more can be shown or typed.
            Wake::Terminal(Some(Err(_)) | None) | Wake::Signal => app.terminal_gone(),
            Wake::Agent(Some(event)) => {
                app.on_agent_event(event);
                if let Some(h) = &mut handle {
                    for _ in 0..EVENT_BATCH {
                        match h.events.try_recv() {
                            Ok(event) => app.on_agent_event(event),
                            Err(_) => break,
                        }
                    }
                }
            }
            Wake::Agent(None) => {
                agent_gone = true;
                app.notice(NoticeKind::Error, "the agent stopped unexpectedly; see the log in the data folder");
            }
            Wake::Connected(result) => {
                connecting = false;
                match result {
                    Ok(h) => {
                        app.connect(h.commands.clone());
                        handle = Some(h);
                    }
                    Err(ConnectError::Setup(message)) => app.setup_needed(message),
                    Err(ConnectError::Failed(message)) => failure = Some(message),
                }
            }
            Wake::Frame => {}
        }
        if let Some(text) = app.take_clipboard() {
            tui.copy(&text)?;
        }
        if let Some(bytes) = app.take_notification() {
            tui.write_raw(&bytes)?;
        }
        if let Some(text) = app.take_editor_request() {
            // The editor reads the keyboard now: stop listening until it is done.
            drop(events);
            tui.suspend();
            let edited = edit(text).await;
            tui.resume()?;
            events = EventStream::new();
            app.set_now(Instant::now());
            app.editor_returned(edited);
        }
        changed |= app.sync_user_status();
        tui.set_mouse_capture(app.mouse_capture())?;
        if changed && input {
            scheduler.request_now(Instant::now());
        } else if changed {
            scheduler.request(Instant::now());
        }
    }
    if let Some(h) = handle
        && tokio::time::timeout(SHUTDOWN_GRACE, h.shutdown()).await.is_err()
    {
        tracing::warn!("the agent did not stop within {SHUTDOWN_GRACE:?}");
    }
    Ok(match (failure, app.phase()) {
        (Some(message), _) => Exit::Failed(message),
        (None, super::app::Phase::Setup { message }) => Exit::NoProvider(message.clone()),
        (None, super::app::Phase::Starting | super::app::Phase::Ready) => Exit::Quit,
    })
}

/// SIGTERM and SIGHUP end the interface cleanly (the terminal is restored on the way out).
struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Signals { term: signal(SignalKind::terminate()).ok(), hup: signal(SignalKind::hangup()).ok() }
        }
        #[cfg(not(unix))]
        {
            Signals {}
        }
    }

    async fn next(&mut self) {
        #[cfg(unix)]
        {
            let term = async {
                match &mut self.term {
                    Some(s) => s.recv().await,
                    None => std::future::pending().await,
                }
            };
            let hup = async {
                match &mut self.hup {
                    Some(s) => s.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = term => {}
                _ = hup => {}
            }
        }
        #[cfg(not(unix))]
        std::future::pending::<()>().await
    }
}
