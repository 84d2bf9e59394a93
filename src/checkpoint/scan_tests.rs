use super::*;

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
    std::fs::write(root.join("src/deep/x.rs"), "x\n").unwrap();
    std::fs::write(root.join("README.md"), "hello\n").unwrap();
    (dir, root)
}

/// Both ways a rescan finds its work: inotify events, and stat-ing everything.
fn modes() -> [ScanLimits; 2] {
    [
        ScanLimits { watch_folders: true, ..ScanLimits::default() },
        ScanLimits { watch_folders: false, ..ScanLimits::default() },
    ]
}

fn names(v: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = v.iter().map(String::as_str).collect();
    out.sort();
    out
}

fn paths<T>(v: &[(String, T)]) -> Vec<&str> {
    let mut out: Vec<&str> = v.iter().map(|(p, _)| p.as_str()).collect();
    out.sort();
    out
}

#[test]
fn creations_changes_and_deletions_are_seen_even_within_one_timestamp_tick() {
    for limits in modes() {
        let (_d, root) = project();
        let mut tree = Tree::walk(&root, limits.clone()).unwrap();
        assert!(tree.get("src/deep/x.rs").is_some() && tree.get("").is_some());
        let quiet = tree.rescan().unwrap();
        // Files written just now are racy: re-reported once, then settled.
        assert!(quiet.created.is_empty() && quiet.removed.is_empty());
        std::thread::sleep(std::time::Duration::from_millis(60));
        tree.rescan().unwrap();
        assert!(tree.rescan().unwrap().is_empty(), "a quiet tree reports nothing");

        // Same size, written right after the scan: the stamp may not move, the racy rule catches it.
        std::fs::write(root.join("src/lib.rs"), "pub fn b() {}\n").unwrap();
        std::fs::write(root.join("src/deep/new.rs"), "new\n").unwrap();
        std::fs::remove_file(root.join("README.md")).unwrap();
        std::fs::create_dir_all(root.join("docs/guide")).unwrap();
        std::fs::write(root.join("docs/guide/intro.md"), "intro\n").unwrap();
        let delta = tree.rescan().unwrap();
        // With watches, a file last seen while racy is checked again when its folder next has
        // events (x.rs, beside new.rs): a false alarm the capture settles by hash, never a miss.
        let modified = paths(&delta.modified);
        assert!(modified.contains(&"src/lib.rs"), "{modified:?}");
        assert!(modified.iter().all(|p| ["src/lib.rs", "src/deep/x.rs"].contains(p)), "{modified:?}");
        assert_eq!(names(&delta.created), ["docs", "docs/guide", "docs/guide/intro.md", "src/deep/new.rs"]);
        assert_eq!(paths(&delta.removed), ["README.md"]);
        assert_eq!(tree.get("src/lib.rs").unwrap().content, Content::Unknown);
    }
}

#[test]
fn a_file_replaced_by_rename_with_the_same_size_and_mtime_is_seen() {
    for limits in modes() {
        let (_d, root) = project();
        let file = root.join("src/lib.rs");
        let old = std::fs::metadata(&file).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(60));
        let mut tree = Tree::walk(&root, limits.clone()).unwrap();
        tree.rescan().unwrap();
        let tmp = root.join("src/.tmp");
        std::fs::write(&tmp, "pub fn z() {}\n").unwrap();
        let times = std::fs::FileTimes::new().set_modified(old.modified().unwrap());
        std::fs::File::options().write(true).open(&tmp).unwrap().set_times(times).unwrap();
        std::fs::rename(&tmp, &file).unwrap();
        let delta = tree.rescan().unwrap();
        assert_eq!(paths(&delta.modified), ["src/lib.rs"], "inode and ctime moved though size and mtime did not");
    }
}

#[test]
fn ignored_files_are_tracked_small_ignored_folders_in_full_large_ones_only_watched() {
    for limits in modes() {
        let (_d, root) = project();
        std::fs::write(root.join(".ignore"), ".env\nbuild/\nnotes/\n").unwrap();
        std::fs::write(root.join(".env"), "KEY=1\n").unwrap();
        std::fs::create_dir_all(root.join("notes")).unwrap();
        std::fs::write(root.join("notes/todo.md"), "- a\n").unwrap();
        for d in 0..30 {
            std::fs::create_dir_all(root.join(format!("build/d{d}"))).unwrap();
            for f in 0..10 {
                std::fs::write(root.join(format!("build/d{d}/f{f}.o")), "o").unwrap();
            }
        }
        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref").unwrap();
        let limits = ScanLimits { ignored_walk_budget: 100, ignored_dir_watch_limit: 10, ..limits };
        let mut tree = Tree::walk(&root, limits).unwrap();
        assert_eq!(tree.get(".env").unwrap().track, Track::Ignored);
        assert_eq!(tree.get("notes/todo.md").unwrap().track, Track::Ignored);
        assert_eq!(tree.get("build").unwrap().track, Track::Watched);
        assert!(tree.get("build/d0/f0.o").is_none(), "files of a large ignored folder are not stat-ed");
        let watched = tree.entries().filter(|(_, e)| e.track == Track::Watched).count();
        assert_eq!(watched, 11, "the folder and at most ten of its folders");
        assert!(tree.entries().all(|(p, _)| !p.starts_with(".git")), "VCS folders are skipped");
        std::thread::sleep(std::time::Duration::from_millis(60));
        tree.rescan().unwrap();

        std::fs::write(root.join(".env"), "KEY=2\n").unwrap();
        std::fs::write(root.join("notes/more.md"), "more\n").unwrap();
        let watched_dir = tree.entries().find(|(p, e)| e.track == Track::Watched && p.starts_with("build/")).unwrap().0;
        std::fs::write(root.join(watched_dir).join("fresh.o"), "o").unwrap();
        std::fs::write(root.join(".git/HEAD"), "other").unwrap();
        let delta = tree.rescan().unwrap();
        assert_eq!(paths(&delta.modified), [".env"]);
        assert_eq!(names(&delta.created), ["notes/more.md"]);
        assert_eq!(delta.touched.iter().map(String::as_str).collect::<Vec<_>>(), ["build"]);
    }
}

#[test]
fn changing_an_ignore_file_walks_afresh() {
    for limits in modes() {
        let (_d, root) = project();
        std::fs::create_dir_all(root.join("gen")).unwrap();
        std::fs::write(root.join("gen/out.txt"), "generated\n").unwrap();
        let mut tree = Tree::walk(&root, limits.clone()).unwrap();
        assert_eq!(tree.get("gen/out.txt").unwrap().track, Track::Full);
        std::fs::write(root.join(".ignore"), "gen/\n").unwrap();
        let delta = tree.rescan().unwrap();
        assert_eq!(names(&delta.created), [".ignore"]);
        assert!(delta.removed.is_empty(), "a file that became ignored is not reported as deleted");
        assert_eq!(tree.get("gen/out.txt").unwrap().track, Track::Ignored);
    }
}

#[test]
fn a_tree_past_the_entry_limit_is_refused_with_the_setting_to_raise() {
    let (_d, root) = project();
    let err = Tree::walk(&root, ScanLimits { max_entries: 3, ..ScanLimits::default() }).unwrap_err();
    assert!(err.to_string().contains("checkpoints.max_scan_entries"), "{err}");
}

#[test]
fn a_link_to_a_folder_outside_is_an_entry_never_walked_into() {
    for limits in modes() {
        let (_d, root) = project();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(outside.path().join("sys")).unwrap();
        std::fs::write(outside.path().join("stdio.h"), "outside\n").unwrap();
        std::fs::write(outside.path().join("sys/types.h"), "outside\n").unwrap();
        let mut tree = Tree::walk(&root, limits.clone()).unwrap();
        tree.rescan().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(60));
        tree.rescan().unwrap();

        // A new link to an outside folder, and a tracked folder swapped for one.
        std::os::unix::fs::symlink(outside.path(), root.join("inc")).unwrap();
        std::fs::remove_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(outside.path().join("x.rs"), "same name as the file that was inside\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("src/deep")).unwrap();
        let delta = tree.rescan().unwrap();
        assert_eq!(names(&delta.created), ["inc", "src/deep"], "the links themselves, nothing behind them");
        assert_eq!(paths(&delta.removed), ["src/deep", "src/deep/x.rs"], "as they were");
        assert!(delta.modified.iter().all(|(p, _)| !p.starts_with("src/deep")), "{:?}", paths(&delta.modified));
        assert!(tree.get("inc").unwrap().stamp.is_symlink());
        assert!(tree.entries().all(|(p, _)| !p.starts_with("inc/") && !p.starts_with("src/deep/")));
        // A rescan and a full walk keep it that way.
        tree.rescan().unwrap();
        let walked = Tree::walk(&root, limits).unwrap();
        assert!(walked.entries().all(|(p, _)| !p.starts_with("inc/") && !p.starts_with("src/deep/")));
    }
}
