//! `cairn` with no prompt: the full-screen interface. Resolves what must be known before the
//! screen opens (the store, the session to resume), opens the screen, and connects to the
//! provider in the background so the first frame does not wait for the network.

use std::process::ExitCode;

use super::args::Cli;
use super::error::CliError;
use super::startup::Startup;
use crate::agent::spawn;
use crate::tools::ApprovalPolicy;
use crate::tui::{App, ConnectError, Exit, Theme, Tui};

pub async fn run(startup: &Startup, cli: &Cli) -> Result<ExitCode, CliError> {
    let (store, project) = startup.open_store()?;
    // An unknown --session fails here, before the screen is taken over.
    let session = startup.session_choice(&store, project, cli)?;
    let no_color = crate::tui::theme::no_color_requested();
    let user_themes = startup.paths.config_file.parent().map(|d| d.join("themes"));
    let (theme, theme_problem) = match Theme::load(startup.config.theme.as_deref(), user_themes.as_deref(), no_color) {
        Ok(theme) => (theme, None),
        Err(e) => (Theme::fallback(no_color), Some(format!("{e}; using the dark theme"))),
    };
    let (frames, wake) = crate::tui::frame::FrameRequester::new();
    let files = crate::tui::completion::FileIndex::spawn(startup.root.clone(), frames);
    let mut app = App::new(theme, files);
    app.project_root = startup.root.display().to_string();
    if let Some(mode) = startup.mode_flag {
        app.mode = mode;
    }
    if let Some(problem) = theme_problem {
        app.notice(crate::tui::cells::NoticeKind::Warning, problem);
    }
    let approval = if cli.yes { ApprovalPolicy::ApproveAll } else { ApprovalPolicy::Ask };
    let connect = async {
        let provider = startup.provider().await.map_err(|e| ConnectError::Setup(e.to_string()))?;
        let setup = startup.agent_setup(store.clone(), project, provider, session, approval, None);
        spawn(setup).map_err(|e| ConnectError::Failed(e.to_string()))
    };
    let mut tui = Tui::enter().map_err(|e| {
        CliError::Usage(format!(
            "the full-screen interface needs a terminal ({e}); run a prompt headless with cairn -p \"…\" instead"
        ))
    })?;
    let exit = crate::tui::run(&mut tui, &mut app, connect, wake).await;
    tui.leave();
    match exit {
        Ok(Exit::Quit) => {
            if let Some(s) = &app.session {
                println!("cairn: session {} saved; continue it with cairn --resume (or --session {})", s.id, s.id);
            }
            Ok(ExitCode::SUCCESS)
        }
        Ok(Exit::NoProvider(message)) => Err(CliError::Usage(message)),
        Ok(Exit::Failed(message)) => Err(CliError::Failed(message)),
        Err(e) => Err(CliError::Failed(format!("the terminal failed: {e}"))),
    }
}
