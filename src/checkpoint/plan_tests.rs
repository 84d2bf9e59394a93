use super::*;

fn file(text: &str) -> PathState {
    PathState::File { hash: ContentHash::of(text.as_bytes()), mode: 0o644 }
}

fn change(id: i64, path: &str, before: PathState, after: PathState) -> ChangeRecord {
    ChangeRecord {
        id,
        user_seq: 1,
        path: path.into(),
        tool: "file_edit".into(),
        call_id: format!("c{id}"),
        before,
        after,
        reverted: false,
    }
}

fn on_disk(entries: &[(&str, PathState)]) -> HashMap<String, PathState> {
    entries.iter().map(|(p, s)| (p.to_string(), s.clone())).collect()
}

#[test]
fn each_path_goes_back_to_before_its_first_change_in_first_touched_order() {
    let changes = [
        change(1, "a.rs", file("a0"), file("a1")),
        change(2, "new.rs", PathState::Absent, file("n")),
        change(3, "a.rs", file("a1"), file("a2")),
        change(4, "gone.rs", file("g"), PathState::Absent),
        change(5, "out", PathState::Absent, PathState::Dir),
    ];
    let now = on_disk(&[("a.rs", file("a2")), ("new.rs", file("n")), ("out", PathState::Dir)]);
    let plan = plan(&changes, &now, &HashSet::new());
    let got: Vec<_> =
        plan.paths.iter().map(|p| (p.path.as_str(), &p.action, &p.verdict, p.change_ids.clone())).collect();
    assert_eq!(
        got,
        [
            ("a.rs", &Action::Write { hash: ContentHash::of(b"a0"), mode: 0o644 }, &Verdict::Ready, vec![1, 3]),
            ("new.rs", &Action::Delete, &Verdict::Ready, vec![2]),
            ("gone.rs", &Action::Write { hash: ContentHash::of(b"g"), mode: 0o644 }, &Verdict::Ready, vec![4]),
            ("out", &Action::RemoveDir, &Verdict::Ready, vec![5]),
        ]
    );
    assert!(!plan.is_empty());
}

#[test]
fn a_file_changed_after_cairn_left_it_is_a_conflict_with_the_action_kept_for_force() {
    let changes = [change(1, "a.rs", file("a0"), file("a1"))];
    let plan = plan(&changes, &on_disk(&[("a.rs", file("edited by hand"))]), &HashSet::new());
    assert!(matches!(&plan.paths[0].verdict, Verdict::Conflict(r) if r.contains("someone else")));
    assert_eq!(plan.paths[0].action, Action::Write { hash: ContentHash::of(b"a0"), mode: 0o644 });
    assert_eq!(plan.conflicts()[0].path, "a.rs");
    // Deleted by hand after cairn created it: also someone else's change.
    let created = [change(2, "n.rs", PathState::Absent, file("n"))];
    let plan2 = super::plan(&created, &HashMap::new(), &HashSet::new());
    assert_eq!(plan2.paths[0].action, Action::Keep, "already absent");
    assert_eq!(plan2.paths[0].verdict, Verdict::Ready);
    assert!(plan2.is_empty());
}

#[test]
fn an_edit_outside_cairn_between_turns_is_a_conflict_too() {
    let changes = [change(1, "a.rs", file("a0"), file("a1")), change(2, "a.rs", file("user's"), file("a2"))];
    let plan = plan(&changes, &on_disk(&[("a.rs", file("a2"))]), &HashSet::new());
    assert!(matches!(&plan.paths[0].verdict, Verdict::Conflict(r) if r.contains("outside cairn")), "{plan:?}");
}

#[test]
fn contents_dropped_by_the_cap_or_never_kept_are_unrestorable_and_say_why() {
    let dropped: HashSet<_> = [ContentHash::of(b"old")].into();
    let changes = [
        change(1, "a.rs", file("old"), file("new")),
        change(2, "big.bin", PathState::Unkept { reason: Unkept::TooLarge, size: 9, mtime_ns: 1 }, file("x")),
        change(
            3,
            "target",
            PathState::Unkept { reason: Unkept::IgnoredDir, size: 0, mtime_ns: 0 },
            PathState::Unkept { reason: Unkept::IgnoredDir, size: 0, mtime_ns: 0 },
        ),
    ];
    let now = on_disk(&[("a.rs", file("new")), ("big.bin", file("x"))]);
    let plan = plan(&changes, &now, &dropped);
    let notes = plan.unrestorable();
    assert_eq!(notes.len(), 3);
    assert_eq!(notes[0].reason, "can't restore a.rs, its content was dropped by the cap (checkpoints.max_store_mb)");
    assert!(notes[1].reason.contains("larger than checkpoints.max_file_bytes"), "{}", notes[1].reason);
    assert!(notes[2].reason.contains("ignored folder"), "{}", notes[2].reason);
}

#[test]
fn reverted_changes_are_not_taken_back_twice() {
    let mut undone = change(2, "a.rs", file("a1"), file("a2"));
    undone.reverted = true;
    let changes = [change(1, "a.rs", file("a0"), file("a1")), undone];
    // A rewind to the later turn put a1 back; the earlier one now expects a1 on disk.
    let plan = plan(&changes, &on_disk(&[("a.rs", file("a1"))]), &HashSet::new());
    assert_eq!(plan.paths[0].change_ids, [1]);
    assert_eq!(plan.paths[0].verdict, Verdict::Ready);
}
