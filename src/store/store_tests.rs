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
    let record = ToolRecord {
        call_id: "c1".into(),
        tool: "file_read".into(),
        arguments: r#"{"path":"a"}"#.into(),
        output: "the full output".into(),
        duration_ms: 12,
        ..Default::default()
    };
    store.append_tool_message(&s.id, &Message::tool(result), &record).unwrap();

    let stored = store.messages(&s.id).unwrap();
    assert_eq!(stored.iter().map(|m| m.seq).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(stored[1].message, assistant);
    assert_eq!(store.tool_record(&s.id, "c1").unwrap().unwrap().output, "the full output");
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
    assert!(matches!(store.resolve_session(a, "abc"), Err(StoreError::UnknownSession { .. })));
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
fn a_compaction_commits_state_log_and_memory_together_or_not_at_all() {
    let (_d, store) = store();
    let p = store.project(std::path::Path::new("/w")).unwrap();
    let s = store.create_session(p, new_session()).unwrap();
    store.save_context_state(&s.id, "{\"v\":1}").unwrap();
    let record =
        CompactionRecord { trigger: "auto", through_seq: 10, tokens_before: 100, tokens_after: 10, summary: "sum" };
    let memory = NewMemory {
        project: Some(p),
        kind: MemoryKind::Compaction,
        class: RetentionClass::Working,
        title: "t",
        content: "sum",
        session_id: Some(&s.id),
        expires_at: None,
        approved_by: None,
    };
    store.commit_compaction(&s.id, "{\"v\":2}", &record, Some(memory)).unwrap();
    assert_eq!(store.context_state(&s.id).unwrap().as_deref(), Some("{\"v\":2}"));
    assert_eq!(store.compaction_count(&s.id).unwrap(), 1);
    assert_eq!(store.memories(p).unwrap().len(), 1);
    // A memory that violates the schema (a session that does not exist) fails the whole
    // transaction: the old state stands.
    let bad = NewMemory {
        project: Some(p),
        kind: MemoryKind::Compaction,
        class: RetentionClass::Working,
        title: "t",
        content: "c",
        session_id: Some("no-such-session"),
        expires_at: None,
        approved_by: None,
    };
    assert!(store.commit_compaction(&s.id, "{\"v\":3}", &record, Some(bad)).is_err());
    assert_eq!(store.context_state(&s.id).unwrap().as_deref(), Some("{\"v\":2}"));
    assert_eq!(store.compaction_count(&s.id).unwrap(), 1);
}
