//! `cairn` with no prompt: the full-screen interface. Resolves what must be known before the
//! screen opens (the store, the session to resume), opens the screen, and connects to the
//! provider in the background so the first frame does not wait for the network.

use std::path::Path;
use std::process::ExitCode;

use super::args::Cli;
use super::error::CliError;
use super::startup::Startup;
use crate::agent::spawn;
use crate::config::TuiMode;
use crate::tools::ApprovalPolicy;
use crate::trust::TrustCheck;
use crate::tui::{
    App, ConnectError, Exit, FrameRequester, ScreenMode, Theme, TrustAnswer, Tui, UserStatus, UserTheme, ask_trust,
};

pub async fn run(startup: &Startup, cli: &Cli) -> Result<ExitCode, CliError> {
    // The folder's trust first: nothing of the project's runs before the user has answered.
    let check = startup.trust_check()?;
    // A bad rule or settings file stops cairn here, before the screen is taken over.
    startup.permissions(check.provisional())?;
    let pending = match check {
        TrustCheck::Settled(trust) => Ok(trust),
        TrustCheck::Ask(question) if cli.trust => Ok(question.trust().map_err(CliError::Failed)?),
        TrustCheck::Ask(question) => Err(question),
    };
    let (store, project) = startup.open_store()?;
    // An unknown --session fails here, before the screen is taken over.
    let session = startup.session_choice(&store, project, cli)?;
    if let crate::agent::SessionChoice::Resume(info) = &session {
        // The session opened on screen is the one `cairn -c` continues next time.
        store.touch_session(&info.id)?;
    }
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let themes_dir = startup.paths.config_file.parent().map(|d| d.join("themes"));
    let user_themes = |name: &str| user_theme(themes_dir.as_deref(), name);
    let (theme, theme_problem) = match Theme::load(startup.config.theme.as_deref(), &user_themes, no_color) {
        Ok(theme) => (theme, None),
        Err(e) => (Theme::fallback(no_color), Some(format!("{e}; using the dark theme"))),
    };
    let (frames, wake) = FrameRequester::new();
    let files = super::file_index::spawn(startup.root.clone(), frames.clone());
    let mut app = App::new(theme, files);
    if let Some(status) = user_status(startup, frames) {
        app.set_user_status(status);
    }
    app.show_project(startup.root.display().to_string());
    if let Some(mode) = startup.mode_flag {
        app.start_in(mode);
    }
    app.set_notifications(startup.config.notify.clone());
    if let Some(prompt) = &cli.prompt {
        // Sent as soon as the agent is there, as if typed at once.
        app.send_first(prompt.clone());
    }
    if let Some(problem) = theme_problem {
        app.notice(crate::tui::NoticeKind::Warning, problem);
    }
    if let Some(problem) = user_keys(startup.paths.config_file.parent()) {
        app.notice(crate::tui::NoticeKind::Warning, problem);
    }
    let mode = match (cli.inline, cli.full_screen, startup.config.tui.mode) {
        (true, _, _) | (false, false, TuiMode::Inline) => ScreenMode::Inline,
        (false, true, _) | (false, false, TuiMode::Full) => ScreenMode::Full,
    };
    // The screen is taken over for the trust question only when there is one (the whole
    // screen, in either mode: nothing is in the conversation yet).
    let mut asked: Option<Tui> = None;
    let trust = match pending {
        Ok(trust) => trust,
        Err(question) => {
            let tui = asked.insert(enter()?);
            match ask_trust(tui, app.theme(), &question).await {
                Ok(TrustAnswer::Trust) => question.trust().map_err(CliError::Failed)?,
                Ok(TrustAnswer::Decline) => question.decline(),
                Ok(TrustAnswer::Quit) => {
                    tui.leave();
                    println!("cairn: you did not trust {}; nothing of it ran", startup.root.display());
                    return Ok(ExitCode::SUCCESS);
                }
                Err(e) => return Err(CliError::Failed(format!("the terminal failed: {e}"))),
            }
        }
    };
    // Leaving early gives the terminal back (`Tui`'s drop).
    let permissions = startup.permissions(trust)?;
    for notice in permissions.notices() {
        app.notice(crate::tui::NoticeKind::Warning, notice);
    }
    // The local model loads once the folder's trust is answered, off the screen, its progress
    // on the terminal; an error (no model, not GGUF) stops cairn here with the fix.
    if startup.wants_local() {
        drop(asked.take());
        startup.local_server().await?;
    }
    let mut tui = match asked {
        Some(tui) if mode == ScreenMode::Full => tui,
        Some(tui) => {
            drop(tui);
            enter_as(mode)?
        }
        None => enter_as(mode)?,
    };
    let approval = if cli.yes { ApprovalPolicy::ApproveAll } else { ApprovalPolicy::Ask };
    let connect = async {
        let provider = startup.provider().await.map_err(|e| ConnectError::Setup(e.to_string()))?;
        let setup = startup.agent_setup((store.clone(), project), provider, session, permissions, approval, None);
        spawn(setup).map_err(|e| ConnectError::Failed(e.to_string()))
    };
    let edit = |text: String| async move { super::editor::edit(&super::editor::editor_command(), &text).await };
    let exit = crate::tui::run(&mut tui, &mut app, connect, wake, edit).await;
    // Inline, the transcript stays in the terminal whole: what was still live goes there too.
    if let Err(e) = tui.finish(&mut app) {
        tracing::warn!(error = %e, "could not write the end of the transcript");
    }
    tui.leave();
    startup.settle_background();
    startup.stop_local_server().await;
    match exit {
        Ok(Exit::Quit) => {
            // The session the user was last in, if anything was ever said in it.
            if let Some(s) = app.stored_session() {
                println!("cairn: session {} saved; continue it with cairn -c (or cairn --session {})", s.id, s.id);
            }
            Ok(ExitCode::SUCCESS)
        }
        Ok(Exit::NoProvider(message)) => Err(CliError::Usage(message)),
        Ok(Exit::Failed(message)) => Err(CliError::Failed(message)),
        Err(e) => Err(CliError::Failed(format!("the terminal failed: {e}"))),
    }
}

/// The user's own status line: `[tui] status_command` of their config.toml (a project's files
/// cannot set it), run beside the interface, which draws its first line.
fn user_status(startup: &Startup, frames: FrameRequester) -> Option<UserStatus> {
    let tui = &startup.config.tui;
    let command = tui.status_command.clone().filter(|c| !c.trim().is_empty())?;
    let (status, offered, answers) = UserStatus::new();
    let (cwd, root) = (startup.cwd.display().to_string(), startup.root.display().to_string());
    let fixed = serde_json::json!({
        "cwd": cwd,
        "workspace": {"current_dir": cwd, "project_dir": root},
        "version": env!("CARGO_PKG_VERSION"),
    });
    let command = crate::hooks::status::StatusCommand {
        command,
        root: startup.root.clone(),
        timeout: std::time::Duration::from_millis(tui.status_command_timeout_ms.max(1)),
        interval: std::time::Duration::from_millis(tui.status_command_interval_ms),
        fixed: fixed.as_object().cloned().unwrap_or_default(),
    };
    tokio::spawn(crate::hooks::status::serve(command, offered, answers, move || frames.request()));
    Some(status)
}

/// The user's `keys.toml` in the config folder put in force; what was wrong with it, if anything
/// (the default keys stay).
fn user_keys(dir: Option<&Path>) -> Option<String> {
    let path = dir?.join("keys.toml");
    if !path.is_file() {
        return None;
    }
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => return Some(format!("could not read {} ({e}); using the default keys", path.display())),
    };
    crate::tui::install_user_keys(Some(&text))
        .err()
        .map(|e| format!("{} {e}; using the default keys (docs/keys.md names every action)", path.display()))
}

/// The user theme `name` in the config folder's `themes/`, read for the interface.
fn user_theme(dir: Option<&Path>, name: &str) -> UserTheme {
    let Some(dir) = dir else { return UserTheme::Missing { path: "(no config folder)".into() } };
    let path = dir.join(format!("{name}.toml"));
    if !path.is_file() {
        return UserTheme::Missing { path: path.display().to_string() };
    }
    UserTheme::Found {
        path: path.display().to_string(),
        text: std::fs::read_to_string(&path).map_err(|e| e.to_string()),
    }
}

/// The screen taken over, or why it cannot be.
fn enter() -> Result<Tui, CliError> {
    enter_as(ScreenMode::Full)
}

fn enter_as(mode: ScreenMode) -> Result<Tui, CliError> {
    Tui::enter_as(mode).map_err(|e| {
        CliError::Usage(format!(
            "the interface needs a terminal ({e}); run a prompt headless with cairn -p \"…\" instead"
        ))
    })
}
