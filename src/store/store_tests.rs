use super::*;
use crate::config::ProviderKind;
use crate::conversation::{MemoryKind, Message, Mode, RetentionClass, ToolCall, ToolResult, Usage};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("data/cairn.db")).unwrap();
    (dir, store)
}

fn new_session<'a>() -> NewSession<'a> {
    NewSession { provider: ProviderKind::Anthropic, model: "claude-sonnet-4-5", mode: Mode::Edit }
}

#[test]
fn opens_a_wal_database_in_a_new_folder() {
    let (dir, store) = store();
    let mode: String = store.conn().pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = store.conn().pragma_query_value(None, "foreign_keys", |r| r.get(0)).unwrap();
    assert_eq!(fk, 1);
    assert!(dir.path().join("data/cairn.db").exists());
}

#[test]
fn messages_keep_order_and_blocks() {
    let (_d, store) = store();
    let p = store.project(std::path::Path::new("/work/a")).unwrap();
    let s = store.create_session(p, new_session()).unwrap();
    store.append_message(&s.id, &Message::user("\n  Fix the failing test in tests/api.rs\nplease")).unwrap();
    let mut assistant = Message::assistant("Looking.");
    assistant.content.push(crate::conversation::Block::ToolCall(ToolCall::new("c1", "file_read", r#"{"path":"a"}"#)));
    store.append_message(&s.id, &assistant).unwrap();
    let result = ToolResult::ok("c1", "file_read", "short");
    let record = crate::conversation::FinishedCall {
        call_id: "c1".into(),
        tool: "file_read".into(),
        arguments: r#"{"path":"a"}"#.into(),
        output: "the full output".into(),
        duration: std::time::Duration::from_millis(12),
        ..Default::default()
    };
    store.append_tool_message(&s.id, &Message::tool(result), &record).unwrap();

    let stored = store.messages(&s.id).unwrap();
    assert_eq!(stored.iter().map(|m| m.seq).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(stored[1].message, assistant);
    assert_eq!(store.tool_output(&s.id, "c1").unwrap().unwrap(), "the full output");
}

#[test]
fn sessions_resolve_by_prefix_within_the_project_only() {
    let (_d, store) = store();
    let a = store.project(std::path::Path::new("/work/a")).unwrap();
    let b = store.project(std::path::Path::new("/work/b")).unwrap();
    let s = store.create_session(a, new_session()).unwrap();
    assert_eq!(store.resolve_session(a, &s.id[..6]).unwrap().id, s.id);
    assert!(matches!(store.resolve_session(b, &s.id), Err(StoreError::OtherProject { root, .. }) if root == "/work/a"));
    assert!(matches!(store.resolve_session(a, "nope"), Err(StoreError::UnknownSession { .. })));
    let short = store.resolve_session(a, &s.id[..3]).unwrap_err();
    assert!(matches!(short, StoreError::ShortPrefix { min: 4, .. }), "{short:?}");
    assert!(short.to_string().contains("at least 4 characters"), "{short}");
}

#[test]
fn listing_is_newest_first_with_counts_tokens_and_preview() {
    let (_d, store) = store();
    let p = store.project(std::path::Path::new("/work/a")).unwrap();
    let first = store.create_session(p, new_session()).unwrap();
    store.append_message(&first.id, &Message::user("first")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let second = store.create_session(p, new_session()).unwrap();
    store.append_message(&second.id, &Message::user("second")).unwrap();
    store.append_message(&second.id, &Message::assistant("**An answer**\nwith two lines\n\nand more")).unwrap();
    let usage = Usage { input_tokens: 100, cache_read_input_tokens: 900, ..Default::default() };
    store.record_usage(&second.id, None, "turn", "m", &usage).unwrap();
    store.record_usage(&second.id, None, "compaction", "m", &Usage { input_tokens: 5, ..Default::default() }).unwrap();

    let list = store.list_sessions(p).unwrap();
    assert_eq!(list.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec![second.id.as_str(), first.id.as_str()]);
    assert_eq!((list[0].message_count, list[0].tokens), (2, 1000));
    assert_eq!(list[0].last_message, "An answer with two lines", "its first paragraph, as plain words");
    assert_eq!(store.latest_session(p).unwrap().unwrap().id, second.id);
    let totals = store.session_usage(&second.id).unwrap();
    assert_eq!((totals.requests, totals.usage.input_tokens), (2, 105));
}

#[test]
fn committed_messages_survive_reopening_without_a_clean_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.db");
    let id = {
        let store = Store::open(&path).unwrap();
        let p = store.project(std::path::Path::new("/w")).unwrap();
        let s = store.create_session(p, new_session()).unwrap();
        store.append_message(&s.id, &Message::user("kept")).unwrap();
        std::mem::forget(store); // no Drop: the WAL is never checkpointed by a clean close
        s.id
    };
    let store = Store::open(&path).unwrap();
    assert_eq!(store.messages(&id).unwrap()[0].message.text(), "kept");
}

#[test]
fn memories_are_scoped_to_their_project_plus_global_ones() {
    let (_d, store) = store();
    let a = store.project(std::path::Path::new("/work/a")).unwrap();
    let b = store.project(std::path::Path::new("/work/b")).unwrap();
    let new = |project, title| NewMemory {
        project,
        kind: MemoryKind::Project,
        class: RetentionClass::Durable,
        title,
        content: "c",
        session_id: None,
        expires_at: None,
        approved_by: None,
    };
    let mine = store.create_memory(new(Some(a), "uses tabs")).unwrap();
    let global = store.create_memory(new(None, "prefers short answers")).unwrap();
    let theirs = store.create_memory(new(Some(b), "b only")).unwrap();
    let titles: Vec<_> = store.memories(a).unwrap().into_iter().map(|m| m.title).collect();
    assert_eq!(titles, ["prefers short answers", "uses tabs"]);
    assert!(store.memory(a, theirs.id).unwrap().is_none());
    assert!(!store.delete_memory(a, theirs.id).unwrap(), "another project's memory cannot be deleted from here");
    assert!(store.set_memory_pinned(a, mine.id, true).unwrap());
    assert!(store.memory(a, mine.id).unwrap().unwrap().pinned);
    assert!(store.memory(b, global.id).unwrap().unwrap().global);
    assert!(store.set_memory_global(a, mine.id, true, Some("you")).unwrap());
    assert!(store.memory(b, mine.id).unwrap().is_some_and(|m| m.global), "now every project sees it");
    assert!(store.set_memory_global(b, mine.id, false, None).unwrap(), "made b's own from b");
    assert!(store.memory(a, mine.id).unwrap().is_none());
    assert!(store.set_memory_global(b, mine.id, false, None).unwrap());
    assert!(!store.set_memory_global(a, theirs.id, true, Some("you")).unwrap(), "another project's memory stays there");
    assert!(store.set_memory_global(b, mine.id, true, Some("you")).unwrap());
    assert!(store.delete_memory(a, mine.id).unwrap());
    assert!(store.memory(a, mine.id).unwrap().is_none());
}

#[test]
fn a_compaction_commits_state_and_log_together_or_not_at_all_and_stores_no_memory() {
    let (_d, store) = store();
    let p = store.project(std::path::Path::new("/w")).unwrap();
    let s = store.create_session(p, new_session()).unwrap();
    store.save_context_state(&s.id, "{\"v\":1}").unwrap();
    let record =
        CompactionRecord { trigger: "auto", through_seq: 10, tokens_before: 100, tokens_after: 10, summary: "sum" };
    store.commit_compaction(&s.id, "{\"v\":2}", &record).unwrap();
    assert_eq!(store.context_state(&s.id).unwrap().as_deref(), Some("{\"v\":2}"));
    assert_eq!(store.compaction_count(&s.id).unwrap(), 1);
    assert!(store.memories(p).unwrap().is_empty(), "a summary is no memory");
    // A log entry the database refuses fails the whole transaction: the old state stands.
    store
        .conn()
        .execute_batch("CREATE TEMP TRIGGER refuse BEFORE INSERT ON compactions BEGIN SELECT RAISE(ABORT, 'no'); END;")
        .unwrap();
    assert!(store.commit_compaction(&s.id, "{\"v\":3}", &record).is_err());
    assert_eq!(store.context_state(&s.id).unwrap().as_deref(), Some("{\"v\":2}"));
    assert_eq!(store.compaction_count(&s.id).unwrap(), 1);
}

#[test]
fn four_connections_writing_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.db");
    let first = Store::open(&path).unwrap();
    let p = first.project(std::path::Path::new("/work/a")).unwrap();
    let shared = first.create_session(p, new_session()).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let path = path.clone();
            let shared = shared.id.clone();
            std::thread::spawn(move || {
                let store = Store::open(&path).unwrap();
                let own = store.create_session(p, new_session()).unwrap();
                for i in 0..150 {
                    store.append_message(&own.id, &Message::user(format!("own {i}"))).unwrap();
                    store.append_message(&shared, &Message::user(format!("shared {i}"))).unwrap();
                    store.record_usage(&own.id, None, "turn", "m", &Usage::default()).unwrap();
                }
                own.id
            })
        })
        .collect();
    for t in threads {
        let own = t.join().unwrap();
        assert_eq!(first.messages(&own).unwrap().len(), 150);
    }
    let seqs: Vec<i64> = first.messages(&shared.id).unwrap().iter().map(|m| m.seq).collect();
    assert_eq!(seqs, (1..=600).collect::<Vec<_>>());
}

/// Holds the database's write lock from another connection until the returned sender is used
/// or dropped.
fn hold_write_lock(path: &std::path::Path) -> std::sync::mpsc::Sender<()> {
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let (held, is_held) = std::sync::mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        held.send(()).unwrap();
        let _ = wait.recv();
        conn.execute_batch("COMMIT").unwrap();
    });
    is_held.recv().unwrap();
    release
}

#[test]
fn a_write_waits_for_another_writer() {
    let (dir, store) = store();
    let p = store.project(std::path::Path::new("/work/a")).unwrap();
    let s = store.create_session(p, new_session()).unwrap();
    let release = hold_write_lock(&dir.path().join("data/cairn.db"));
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(release);
    });
    let started = std::time::Instant::now();
    store.append_message(&s.id, &Message::user("after the other writer")).unwrap();
    assert!(started.elapsed() >= std::time::Duration::from_millis(250));
    releaser.join().unwrap();
    assert_eq!(store.messages(&s.id).unwrap().len(), 1);
}

#[test]
fn a_write_blocked_past_the_wait_fails_with_a_clear_error() {
    let (dir, mut store) = store();
    store.write_wait = std::time::Duration::from_millis(200);
    store.conn().busy_timeout(std::time::Duration::from_millis(50)).unwrap();
    let p = store.project(std::path::Path::new("/work/a")).unwrap();
    let s = store.create_session(p, new_session()).unwrap();
    let _release = hold_write_lock(&dir.path().join("data/cairn.db"));
    let err = store.append_message(&s.id, &Message::user("never saved")).unwrap_err();
    assert!(matches!(err, StoreError::Busy { .. }), "{err:?}");
    assert!(err.to_string().contains("was not saved"), "{err}");
}

#[test]
fn a_damaged_database_is_not_blamed_on_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.db");
    std::fs::write(&path, vec![0x5a; 8192]).unwrap();
    let err = Store::open(&path).err().unwrap().to_string();
    assert!(err.contains("damaged") && err.contains("cairn.db.bad"), "{err}");
    assert!(!err.contains("writable"), "{err}");
}

#[test]
fn processes_opening_a_new_database_at_once_migrate_it_once() {
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cairn.db");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
        let opens: Vec<_> = (0..4)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    Store::open(&path).map(|s| s.schema_version().unwrap())
                })
            })
            .collect();
        for open in opens {
            assert_eq!(open.join().unwrap().unwrap(), migrations::LATEST);
        }
    }
}
