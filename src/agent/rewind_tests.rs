use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::*;
use crate::config::{ProviderKind, Redactor};
use crate::context::{Replacement, ReplacementKind};
use crate::conversation::{Block, Message, Mode, ToolCall, ToolResult};
use crate::store::{CaptureBatch, ContentHash, NewBlob, NewChange, NewSession, PathState, TurnChanges};

struct Rig {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: PathBuf,
    store: Store,
    session: String,
    config: CheckpointsConfig,
    secrets: Redactor,
}

impl Rig {
    fn new() -> Rig {
        let project = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let root = project.path().canonicalize().unwrap();
        let store = Store::open(&data.path().join("cairn.db")).unwrap();
        let p = store.project(&root).unwrap();
        let s = store.create_session(p, NewSession { provider: ProviderKind::Anthropic, model: "m", mode: Mode::Edit });
        let (config, secrets) = (CheckpointsConfig::default(), Redactor::default());
        Rig { _dirs: (project, data), root, store, session: s.unwrap().id, config, secrets }
    }

    fn rewinder(&self) -> Rewinder<'_> {
        Rewinder {
            store: &self.store,
            session: &self.session,
            root: &self.root,
            config: &self.config,
            secrets: &self.secrets,
        }
    }

    fn append(&self, m: Message) -> i64 {
        self.store.append_message(&self.session, &m).unwrap().seq
    }

    /// A turn: the prompt, a bash call and its result, an answer; the prompt's seq.
    fn turn(&self, prompt: &str, call: &str) -> i64 {
        let seq = self.append(Message::user(prompt));
        let mut m = Message::assistant("");
        m.content.push(Block::ToolCall(ToolCall::new(call, "bash", r#"{"command":"make"}"#)));
        self.append(m);
        self.append(Message::tool(ToolResult::ok(call, "bash", "built")));
        self.append(Message::assistant(format!("done with {prompt}")));
        seq
    }

    /// The turn at `user_seq` changed `path` from `before` to `after`, which is on disk now.
    fn changed(&self, user_seq: i64, path: &str, before: &str, after: &str) {
        let file = |s: &str| PathState::File { hash: ContentHash::of(s.as_bytes()), mode: 0o644 };
        self.store
            .commit_capture(CaptureBatch {
                blobs: vec![NewBlob::new(before.as_bytes().to_vec()), NewBlob::new(after.as_bytes().to_vec())],
                turn: Some(TurnChanges {
                    session: self.session.clone(),
                    user_seq,
                    changes: vec![NewChange {
                        path: path.into(),
                        tool: "bash".into(),
                        call_id: format!("c{user_seq}"),
                        before: file(before),
                        after: file(after),
                    }],
                }),
                manifest: None,
            })
            .unwrap();
        self.write(path, after);
    }

    fn write(&self, path: &str, text: &str) {
        std::fs::write(self.root.join(path), text).unwrap();
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).unwrap()
    }
}

#[test]
fn a_conversation_rewind_keeps_every_message_but_sends_none_of_the_turn_and_repairs_the_state() {
    let rig = Rig::new();
    let t1 = rig.turn("build it", "c1");
    let t2 = rig.turn("test it", "c2");
    let t3 = rig.turn("ship it", "c3");
    let state = ContextState {
        replacements: BTreeMap::from([
            ("c1".to_string(), Replacement { kind: ReplacementKind::Pruned, text: "[pruned]".into() }),
            ("c2".to_string(), Replacement { kind: ReplacementKind::Pruned, text: "[pruned]".into() }),
        ]),
        recall: BTreeMap::from([(t1, "recalled".to_string()), (t3, "recalled".to_string())]),
        ..Default::default()
    };
    rig.store.save_context_state(&rig.session, &serde_json::to_string(&state).unwrap()).unwrap();
    rig.store.insert_segment(&rig.session, 0, t1, t2 - 1, 100).unwrap();
    rig.store.insert_segment(&rig.session, 0, t2, t3 + 3, 100).unwrap();
    rig.changed(t2, "out.txt", "old\n", "new\n");

    let r = rig.rewinder();
    let outcome = r.rewind(r.turn_numbered(2).unwrap(), RewindScope::Conversation, &Overwrite::Nothing).unwrap();
    let conversation = outcome.conversation.as_ref().unwrap();
    assert_eq!((conversation.messages, conversation.prompt.as_str()), (8, "test it"));
    assert_eq!(outcome.code, None);
    assert_eq!(rig.read("out.txt"), "new\n", "conversation only: the files stay");
    assert!(outcome.lines()[0].starts_with("rewound to before turn 2 (“test it”): conversation only"));

    assert_eq!(rig.store.messages(&rig.session).unwrap().len(), 12, "nothing is deleted");
    let live: Vec<i64> = rig.store.live_messages(&rig.session).unwrap().iter().map(|m| m.seq).collect();
    assert_eq!(live, (t1..t2).collect::<Vec<_>>());
    let saved: ContextState = serde_json::from_str(&rig.store.context_state(&rig.session).unwrap().unwrap()).unwrap();
    assert_eq!(saved.replacements.keys().collect::<Vec<_>>(), ["c1"]);
    assert_eq!(saved.recall.keys().copied().collect::<Vec<_>>(), [t1]);
    let segments = rig.store.segments(&rig.session).unwrap();
    assert_eq!(segments.iter().map(|s| s.first_seq).collect::<Vec<_>>(), [t1], "cut again from what stays");
    assert_eq!(r.turns().unwrap().len(), 1);
    let gone = r.turn_at(t2).unwrap_err();
    assert!(matches!(&gone, LibraryError::Input(m) if m.contains("no longer in the conversation")), "{gone}");
}

#[test]
fn a_code_rewind_overwrites_only_the_conflicts_the_user_was_shown() {
    let rig = Rig::new();
    let t1 = rig.turn("edit", "c1");
    rig.changed(t1, "a.txt", "a0\n", "a1\n");
    rig.changed(t1, "b.txt", "b0\n", "b1\n");
    rig.write("b.txt", "b by hand\n");
    let r = rig.rewinder();
    let preview = r.preview(r.turn_numbered(1).unwrap(), RewindScope::Code).unwrap();
    assert_eq!(preview.conflicts.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(), ["b.txt"]);
    assert_eq!(preview.files, 2);
    // While the user decides, a.txt is changed by hand too: that conflict was not confirmed.
    rig.write("a.txt", "a by hand\n");
    let confirmed = Overwrite::Only(BTreeSet::from(["b.txt".to_string()]));
    let outcome = r.rewind(r.turn_numbered(1).unwrap(), RewindScope::Both, &confirmed).unwrap();
    let code = outcome.code.as_ref().unwrap();
    assert_eq!(code.overridden.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(), ["b.txt"]);
    assert_eq!(code.conflicts.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(), ["a.txt"]);
    assert_eq!((rig.read("a.txt").as_str(), rig.read("b.txt").as_str()), ("a by hand\n", "b0\n"));
    assert!(!outcome.complete());
    assert!(outcome.conversation.is_some(), "the conversation part runs after the code part");
}

#[test]
fn undo_takes_back_the_latest_turn_that_still_has_changes() {
    let rig = Rig::new();
    let t1 = rig.turn("one", "c1");
    rig.changed(t1, "x.txt", "x0\n", "x1\n");
    let t2 = rig.turn("two", "c2");
    rig.changed(t2, "y.txt", "y0\n", "y1\n");
    rig.turn("three: nothing changed", "c3");
    let r = rig.rewinder();
    assert_eq!(r.last_turn_with_changes().unwrap().number, 2);
    let outcome = r.rewind(r.last_turn_with_changes().unwrap(), RewindScope::Code, &Overwrite::Nothing).unwrap();
    assert!(outcome.complete());
    assert_eq!(outcome.code.unwrap().restored, ["y.txt"]);
    assert_eq!((rig.read("x.txt").as_str(), rig.read("y.txt").as_str()), ("x1\n", "y0\n"));
    assert_eq!(r.last_turn_with_changes().unwrap().number, 1, "the next /undo goes one further back");
    assert_eq!(r.turns().unwrap().len(), 3, "code only: the conversation keeps every turn");
}

#[test]
fn a_turn_that_is_not_there_is_named_with_the_turns_that_are() {
    let rig = Rig::new();
    let r = rig.rewinder();
    let none = r.turn_numbered(1).unwrap_err();
    assert!(matches!(&none, LibraryError::Input(m) if m.contains("has no turns yet")), "{none}");
    rig.turn("one", "c1");
    rig.turn("two", "c2");
    let past = r.turn_numbered(3).unwrap_err();
    assert!(matches!(&past, LibraryError::Input(m) if m.contains("numbered 1 to 2")), "{past}");
    let undo = r.last_turn_with_changes().unwrap_err();
    assert!(matches!(&undo, LibraryError::Input(m) if m.contains("no turn of this session changed files")), "{undo}");
}
