//! What checkpoints add to a `bash` call on a project of 50,000 files (2,500 folders of 20
//! source files) plus an ignored `target/` of 10,000 more: the scan before and the scan after,
//! with nothing changed and with ten files changed (the ten writes are inside the measured
//! time), with folders watched (Linux inotify, the default) and with every entry stat-ed (the
//! fallback); and, once per session, the warm-up (the first session on a project reads and
//! stores every file; later ones check stamps against the manifest).
//!
//! `cargo bench --bench checkpoint_scan` (release). `CAIRN_SCAN_FILES` sets the tracked file
//! count (default 50000).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn::checkpoint::{CallKind, Checkpointer};
use cairn::config::CheckpointsConfig;
use cairn::conversation::Message;
use cairn::store::{NewSession, Store};
use criterion::Criterion;

const FILES_PER_DIR: usize = 20;

/// Source-like files, each different (identical ones would be stored once and flatter the
/// warm-up), and an ignored build folder.
fn build_tree(root: &Path, files: usize) {
    let dirs = files.div_ceil(FILES_PER_DIR);
    let mut n = 0;
    for d in 0..dirs {
        let dir = root.join(format!("src/m{}/d{d}", d / 50));
        std::fs::create_dir_all(&dir).expect("folder");
        for f in 0..FILES_PER_DIR.min(files - n) {
            let body = format!("pub fn f{n}(x: u64) -> u64 {{\n    x.wrapping_mul({n}) ^ 0x{n:x}\n}}\n").repeat(8);
            std::fs::write(dir.join(format!("f{f}.rs")), body).expect("file");
            n += 1;
        }
    }
    std::fs::write(root.join(".ignore"), "target/\n").expect("ignore file");
    for d in 0..200 {
        let dir = root.join(format!("target/debug/deps/d{d}"));
        std::fs::create_dir_all(&dir).expect("folder");
        for f in 0..50 {
            std::fs::write(dir.join(format!("o{f}.o")), [0u8; 64]).expect("object");
        }
    }
}

fn checkpointer(store: &Arc<Store>, root: &Path, watch_folders: bool) -> Checkpointer {
    let project = store.project(root).expect("project");
    let session = store
        .create_session(
            project,
            NewSession {
                provider: cairn::config::ProviderKind::Anthropic,
                model: "m",
                mode: cairn::conversation::Mode::Edit,
            },
        )
        .expect("session");
    let seq = store.append_message(&session.id, &Message::user("bench")).expect("message").seq;
    let config = CheckpointsConfig { watch_folders, ..CheckpointsConfig::default() };
    let mut ckpt = Checkpointer::new(store.clone(), &session.id, project, root, &config, vec![]).expect("ckpt");
    ckpt.begin_turn(seq);
    ckpt
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let files: usize = std::env::var("CAIRN_SCAN_FILES").ok().and_then(|v| v.parse().ok()).unwrap_or(50_000);
    let project = tempfile::tempdir().expect("tempdir");
    let root = project.path().canonicalize().expect("root");
    let t = Instant::now();
    build_tree(&root, files);
    println!("tree of {files} files (+10,000 ignored) built in {:.1?}", t.elapsed());

    // Warm-up of the first session on the project: every file read, hashed, deflated, stored.
    let data = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Store::open(&data.path().join("cairn.db")).expect("store"));
    let t = Instant::now();
    let report = checkpointer(&store, &root, true).warm_up().expect("warm-up");
    let first = t.elapsed();
    let space = store.checkpoint_space().expect("space");
    println!(
        "first session warm-up: {first:.1?} ({} entries, {} files read, {} bytes → {} stored)",
        report.entries, report.files_read, space.content_bytes, space.stored_bytes
    );
    // Later sessions: the manifest says which contents are already kept.
    let later: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let report = checkpointer(&store, &root, true).warm_up().expect("warm-up");
            assert_eq!(report.files_read, 0, "later sessions read nothing unchanged");
            t.elapsed()
        })
        .collect();
    println!("later session warm-up: median {:.1?} of 5", median(later));

    let mut c = Criterion::default().configure_from_args().sample_size(20);
    // The writes the "10 files changed" cases make, alone: subtract to get the capture's cost.
    let mut round = 0u64;
    c.bench_function("baseline: the 10 writes alone, no checkpoint", |b| {
        b.iter(|| {
            round += 1;
            for i in 0..10 {
                let path = root.join(format!("src/m0/d{i}/f1.rs"));
                std::fs::write(path, format!("pub fn changed() -> u64 {{ {round} }}\n")).expect("write");
            }
        })
    });
    for (watch, how) in [(true, "folders watched"), (false, "every entry stat-ed")] {
        let mut ckpt = checkpointer(&store, &root, watch);
        let warm = ckpt.warm_up().expect("warm-up");
        assert_eq!(warm.watched, watch && cfg!(target_os = "linux"));
        c.bench_function(&format!("bash call, scan before + after, nothing changed, {how}"), |b| {
            b.iter(|| {
                let guard = ckpt.before_call(&CallKind::Exec).expect("before");
                ckpt.after_call(guard, "bash", "c").expect("after")
            })
        });
        let mut round = 0u64;
        c.bench_function(&format!("bash call, scan before + after, 10 files changed, {how}"), |b| {
            b.iter(|| {
                round += 1;
                let guard = ckpt.before_call(&CallKind::Exec).expect("before");
                for i in 0..10 {
                    let path = root.join(format!("src/m0/d{i}/f0.rs"));
                    std::fs::write(path, format!("pub fn changed() -> u64 {{ {round} }}\n")).expect("write");
                }
                let changed = ckpt.after_call(guard, "bash", "c").expect("after");
                assert_eq!(changed.len(), 10);
                changed
            })
        });
    }
    c.final_summary();
}
