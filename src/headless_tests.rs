use std::time::Duration;

use tokio::sync::mpsc;

use super::*;
use crate::config::ProviderKind;
use crate::conversation::Mode;
use crate::store::SessionInfo;

fn session() -> SessionInfo {
    SessionInfo {
        id: "0123456789abcdef".into(),
        project: crate::store::ProjectId(1),
        title: String::new(),
        provider: ProviderKind::Anthropic,
        model: "claude-test".into(),
        mode: Mode::Edit,
        created_at: String::new(),
        updated_at: String::new(),
    }
}

#[tokio::test]
async fn a_worker_that_panics_fails_the_run_instead_of_hanging_it() {
    let (commands, mut commands_rx) = mpsc::unbounded_channel();
    let (events_tx, events) = mpsc::unbounded_channel::<AgentEvent>();
    // In a real agent the router holds a sender of events too, so they never close.
    let _router = events_tx.clone();
    let worker = tokio::spawn(async move {
        let _first = commands_rx.recv().await;
        let _events = events_tx;
        panic!("index out of bounds: the len is 0 but the index is 3");
    });
    let handle = AgentHandle::from_parts(commands, events, session(), worker);
    let run = run(handle, "hello".into(), OutputFormat::Json);
    let outcome = tokio::time::timeout(Duration::from_secs(10), run).await.expect("the run hung after the panic");
    let Err(HeadlessError::Failed(message)) = outcome else { panic!("expected a failed run, got {outcome:?}") };
    assert!(message.contains("internal error") && message.contains("the len is 0 but the index is 3"), "{message}");
    assert!(message.contains("0123456789abcdef"), "{message}");
}
