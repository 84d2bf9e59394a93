use super::*;
use crate::conversation::Message;
use crate::store::{BlobContent, CapReport, NewSession};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("cairn.db")).unwrap();
    (dir, store)
}

fn session(store: &Store) -> (ProjectId, String) {
    let p = store.project(std::path::Path::new("/work/a")).unwrap();
    let s = store
        .create_session(
            p,
            NewSession {
                provider: crate::config::ProviderKind::Anthropic,
                model: "m",
                mode: crate::conversation::Mode::Edit,
            },
        )
        .unwrap();
    (p, s.id)
}

fn file(bytes: &[u8]) -> PathState {
    PathState::File { hash: ContentHash::of(bytes), mode: 0o644 }
}

fn edit(session: &str, seq: i64, path: &str, before: &[u8], after: &[u8]) -> CaptureBatch {
    CaptureBatch {
        blobs: vec![NewBlob::new(before.to_vec()), NewBlob::new(after.to_vec())],
        turn: Some(TurnChanges {
            session: session.into(),
            user_seq: seq,
            changes: vec![NewChange {
                path: path.into(),
                tool: "file_edit".into(),
                call_id: format!("c{seq}"),
                before: file(before),
                after: file(after),
            }],
        }),
        manifest: None,
    }
}

fn blob_rows(store: &Store) -> i64 {
    store.conn().query_row("SELECT COUNT(*) FROM blobs", [], |r| r.get(0)).unwrap()
}

#[test]
fn an_unchanged_content_is_stored_once_and_comes_back_byte_identical() {
    let (_d, store) = store();
    let (_, s) = session(&store);
    let source = "fn main() {\n    println!(\"hello\");\n}\n".repeat(200);
    store.commit_capture(edit(&s, 1, "src/main.rs", source.as_bytes(), b"fn main() {}\n")).unwrap();
    // The same before content in a later turn, and in another file: no new row.
    store.commit_capture(edit(&s, 5, "src/copy.rs", source.as_bytes(), b"fn main() {}\n")).unwrap();
    assert_eq!(blob_rows(&store), 2);
    let space = store.checkpoint_space().unwrap();
    assert_eq!(space.content_bytes, source.len() as u64 + 13);
    assert!(space.stored_bytes < source.len() as u64 / 4, "source text is deflated: {space:?}");
    assert_eq!(space.checkpoints, 2);
    assert_eq!(space.changes, 2);
    let back = store.blob_content(&ContentHash::of(source.as_bytes())).unwrap();
    assert_eq!(back, Some(BlobContent::Kept(source.into_bytes())));
    let random: Vec<u8> = (0..4096).map(|_| fastrand::u8(..)).collect();
    store.commit_capture(edit(&s, 7, "bin", &random, b"")).unwrap();
    assert_eq!(store.blob_content(&ContentHash::of(&random)).unwrap(), Some(BlobContent::Kept(random)));
}

#[test]
fn changes_come_back_by_turn_in_order_and_can_be_marked_reverted() {
    let (_d, store) = store();
    let (_, s) = session(&store);
    store.commit_capture(edit(&s, 1, "a", b"1", b"2")).unwrap();
    store.commit_capture(edit(&s, 4, "a", b"2", b"3")).unwrap();
    store.commit_capture(edit(&s, 4, "b", b"x", b"y")).unwrap();
    let from4 = store.checkpoint_changes(&s, 4, None).unwrap();
    assert_eq!(from4.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(from4[0].before, file(b"2"));
    assert_eq!(store.checkpoint_changes(&s, 1, Some(1)).unwrap().len(), 1);
    store.mark_changes_reverted(&[from4[1].id]).unwrap();
    let all = store.checkpoint_changes(&s, 0, None).unwrap();
    assert_eq!(all.iter().map(|c| c.reverted).collect::<Vec<_>>(), [false, false, true]);
}

#[test]
fn deleting_a_session_takes_its_checkpoints_and_only_the_contents_nothing_else_uses() {
    let (_d, store) = store();
    let (p, s) = session(&store);
    let (_, other) = session(&store);
    store.commit_capture(edit(&s, 1, "a", b"shared before", b"only mine")).unwrap();
    store.commit_capture(edit(&other, 1, "a", b"shared before", b"theirs")).unwrap();
    store
        .commit_capture(CaptureBatch {
            blobs: vec![NewBlob::new(b"in the tree".to_vec())],
            turn: Some(TurnChanges {
                session: s.clone(),
                user_seq: 2,
                changes: vec![NewChange {
                    path: "t".into(),
                    tool: "bash".into(),
                    call_id: "c".into(),
                    before: PathState::Absent,
                    after: file(b"in the tree"),
                }],
            }),
            manifest: Some(ManifestDelta {
                project: p,
                upserts: vec![ManifestEntry {
                    path: "t".into(),
                    size: 11,
                    mtime_ns: 1,
                    ctime_ns: 1,
                    ino: 7,
                    mode: 0o100644,
                    hash: ContentHash::of(b"in the tree"),
                }],
                removals: vec![],
            }),
        })
        .unwrap();
    assert_eq!(blob_rows(&store), 4);
    assert!(store.delete_session(&s).unwrap());
    assert!(store.checkpoint_changes(&s, 0, None).unwrap().is_empty());
    let known = |b: &[u8]| store.blob_content(&ContentHash::of(b)).unwrap().is_some();
    assert!(!known(b"only mine"), "a content only the deleted session used goes with it");
    assert!(known(b"shared before") && known(b"theirs"), "the other session's contents stay");
    assert!(known(b"in the tree"), "the manifest still holds the current file");
    assert_eq!(store.checkpoint_space().unwrap().checkpoints, 1);
    // Once the manifest lets go of it as well, nothing holds it.
    store
        .commit_capture(CaptureBatch {
            manifest: Some(ManifestDelta { project: p, upserts: vec![], removals: vec!["t".into()] }),
            ..Default::default()
        })
        .unwrap();
    assert!(!known(b"in the tree"));
}

#[test]
fn the_cap_drops_least_recently_used_contents_first_and_the_tree_last() {
    let (_d, store) = store();
    let (p, s) = session(&store);
    // Incompressible contents of 10 KiB each, so sizes are predictable.
    let blob = |tag: u8| -> Vec<u8> {
        let mut rng = fastrand::Rng::with_seed(tag as u64);
        (0..10 * 1024).map(|_| rng.u8(..)).collect()
    };
    let current = blob(0);
    store
        .commit_capture(CaptureBatch {
            blobs: vec![NewBlob::new(current.clone())],
            turn: None,
            manifest: Some(ManifestDelta {
                project: p,
                upserts: vec![ManifestEntry {
                    path: "cur".into(),
                    size: current.len() as u64,
                    mtime_ns: 0,
                    ctime_ns: 0,
                    ino: 1,
                    mode: 0o100644,
                    hash: ContentHash::of(&current),
                }],
                removals: vec![],
            }),
        })
        .unwrap();
    for turn in 1..=4u8 {
        store.commit_capture(edit(&s, turn as i64, "f", &blob(turn * 2 - 1), &blob(turn * 2))).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    let total = store.checkpoint_stored_bytes().unwrap();
    assert!(total >= 9 * 10 * 1024, "{total}");
    assert_eq!(store.enforce_checkpoint_cap(total).unwrap(), CapReport::default());
    // Room for about four contents: turns 1 and 2 go (oldest used); turn 3, 4 and the tree stay.
    let report = store.enforce_checkpoint_cap(50 * 1024).unwrap();
    assert!(store.checkpoint_stored_bytes().unwrap() <= 45 * 1024);
    let gone: Vec<_> = (1..=8)
        .filter(|&t| store.blob_content(&ContentHash::of(&blob(t))).unwrap() == Some(BlobContent::Dropped))
        .collect();
    assert_eq!(gone, [1, 2, 3, 4, 5]);
    assert_eq!(report.dropped.len(), 5);
    assert!(matches!(store.blob_content(&ContentHash::of(&current)).unwrap(), Some(BlobContent::Kept(_))));
    assert_eq!(store.checkpoint_space().unwrap().blobs_dropped, 5);
    // A manifest row whose content was dropped is not offered as the current content.
    store.enforce_checkpoint_cap(1).unwrap();
    assert!(store.manifest(p).unwrap().is_empty());
    // Keeping the same content again brings it back.
    store.commit_capture(edit(&s, 9, "f", &blob(1), &blob(2))).unwrap();
    assert_eq!(store.blob_content(&ContentHash::of(&blob(1))).unwrap(), Some(BlobContent::Kept(blob(1))));
}

#[test]
fn rewound_messages_stay_stored_but_leave_what_is_loaded_and_the_turn_list() {
    let (_d, store) = store();
    let (_, s) = session(&store);
    for i in 1..=3 {
        store.append_message(&s, &Message::user(format!("\n prompt {i}\nmore"))).unwrap();
        store.append_message(&s, &Message::assistant(format!("answer {i}"))).unwrap();
    }
    store.commit_capture(edit(&s, 3, "a", b"1", b"2")).unwrap();
    let turns = store.turns(&s).unwrap();
    assert_eq!(turns.iter().map(|t| (t.number, t.user_seq)).collect::<Vec<_>>(), [(1, 1), (2, 3), (3, 5)]);
    assert_eq!(turns[0].prompt, "prompt 1");
    assert_eq!(turns[1].files_changed, 1);
    let range = store.rewind_messages(&s, 3, None).unwrap().unwrap();
    assert_eq!(range, RewoundRange { first_seq: 3, last_seq: 6 });
    assert_eq!(store.messages(&s).unwrap().len(), 6, "nothing is deleted");
    let live: Vec<i64> = store.live_messages(&s).unwrap().iter().map(|m| m.seq).collect();
    assert_eq!(live, [1, 2]);
    store.append_message(&s, &Message::user("prompt 4")).unwrap();
    let turns = store.turns(&s).unwrap();
    assert_eq!(turns.iter().map(|t| (t.number, t.user_seq)).collect::<Vec<_>>(), [(1, 1), (2, 7)]);
    assert_eq!(store.live_messages(&s).unwrap().iter().map(|m| m.seq).collect::<Vec<_>>(), [1, 2, 7]);
    assert_eq!(store.rewind_messages(&s, 99, None).unwrap(), None);
}

#[test]
fn a_rewind_finds_the_last_summary_that_covers_only_earlier_messages() {
    let (_d, store) = store();
    let (_, s) = session(&store);
    for (through, text) in [(4, "first"), (9, "second"), (15, "third")] {
        let record = crate::store::CompactionRecord {
            trigger: "auto",
            through_seq: through,
            tokens_before: 10,
            tokens_after: 5,
            summary: text,
        };
        store.commit_compaction(&s, "{}", &record, None).unwrap();
    }
    let earlier = store.summary_before(&s, 12).unwrap().unwrap();
    assert_eq!(earlier, EarlierSummary { through_seq: 9, summary: "second".into(), generation: 2 });
    assert_eq!(store.summary_before(&s, 4).unwrap(), None);
}

#[test]
fn a_summary_made_before_a_rewind_that_took_back_what_it_covers_is_not_put_back_later() {
    let (_d, store) = store();
    let (_, s) = session(&store);
    for i in 1..=20 {
        store.append_message(&s, &Message::user(format!("m{i}"))).unwrap();
    }
    let compact = |through: i64, text: &str| {
        let record = crate::store::CompactionRecord {
            trigger: "auto",
            through_seq: through,
            tokens_before: 9,
            tokens_after: 3,
            summary: text,
        };
        store.commit_compaction(&s, "{}", &record, None).unwrap();
    };
    compact(8, "covers 1-8, written while 5-8 were live");
    // The rewind is stamped after the compaction (ms timestamps).
    std::thread::sleep(std::time::Duration::from_millis(5));
    store.rewind_messages(&s, 5, None).unwrap();
    assert_eq!(store.summary_before(&s, 30).unwrap(), None, "it summarised messages 5-8, which were taken back");
    std::thread::sleep(std::time::Duration::from_millis(5));
    compact(3, "covers 1-3 only");
    assert_eq!(store.summary_before(&s, 30).unwrap().map(|e| e.summary), Some("covers 1-3 only".to_string()));
}

#[test]
fn calibration_starts_from_the_last_request_whose_reply_was_not_rewound() {
    let (_d, store) = store();
    let (_, s) = session(&store);
    let usage = |input: u64| crate::conversation::Usage { input_tokens: input, ..Default::default() };
    store.append_message(&s, &Message::user("one")).unwrap();
    let first = store.append_message(&s, &Message::assistant("answer one")).unwrap();
    store.record_usage(&s, Some(first.id), "turn", "m", &usage(100)).unwrap();
    let second_prompt = store.append_message(&s, &Message::user("two")).unwrap();
    let second = store.append_message(&s, &Message::assistant("answer two")).unwrap();
    store.record_usage(&s, Some(second.id), "turn", "m", &usage(900)).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    // An empty reply stores no message; its usage belongs to the turn all the same.
    store.record_usage(&s, None, "turn", "m", &usage(950)).unwrap();
    assert_eq!(store.last_request(&s).unwrap().unwrap().usage.input_tokens, 950);
    std::thread::sleep(std::time::Duration::from_millis(5));
    store.rewind_messages(&s, second_prompt.seq, None).unwrap();
    let last = store.last_request(&s).unwrap().unwrap();
    assert_eq!((last.usage.input_tokens, last.reply_seq), (100, Some(first.seq)));
}

#[test]
fn a_rewind_saves_the_repaired_state_and_drops_the_segments_that_reach_into_it() {
    let (_d, store) = store();
    let (_, s) = session(&store);
    for i in 1..=6 {
        store.append_message(&s, &Message::user(format!("m{i}"))).unwrap();
    }
    store.insert_segment(&s, 0, 1, 2, 10).unwrap();
    store.insert_segment(&s, 0, 3, 6, 10).unwrap();
    assert_eq!(store.last_seq(&s).unwrap(), 6);
    store.rewind_messages(&s, 4, Some(r#"{"outline":"repaired"}"#)).unwrap();
    assert_eq!(store.context_state(&s).unwrap().as_deref(), Some(r#"{"outline":"repaired"}"#));
    assert_eq!(store.segments(&s).unwrap().iter().map(|r| (r.first_seq, r.last_seq)).collect::<Vec<_>>(), [(1, 2)]);
    assert_eq!(store.last_segmented_seq(&s).unwrap(), 2);
    assert_eq!(store.last_seq(&s).unwrap(), 6, "the next message still numbers after the rewound ones");
}
