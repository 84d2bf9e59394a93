//! Checkpoints end to end at the agent's layer: the real tools (`file_read`, `file_edit`,
//! `file_write`, `bash` with a real shell) run in a project that is not a git repository, each
//! wrapped in the capture the dispatcher runs around it, into a real SQLite file; then a code
//! rewind puts every file back byte for byte.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{CheckpointSite, Checkpoints};
use crate::agent::link::Emitter;
use crate::checkpoint::{
    CallKind, Overwrite, RewindReport, apply_code_rewind, find_turn, plan_code_rewind, session_diff, turn_diff,
};
use crate::config::{CheckpointsConfig, ProviderKind, ToolsConfig};
use crate::conversation::{Message, Mode};
use crate::store::{ContentHash, NewSession, Store};
use crate::tools::bash::Bash;
use crate::tools::file_edit::FileEdit;
use crate::tools::file_read::FileRead;
use crate::tools::file_write::FileWrite;
use crate::tools::{Access, FileTracker, Tool, ToolContext};

/// A project folder (not a git repository), a real database beside it, a session, and the
/// checkpoints the agent would hold.
struct Rig {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: PathBuf,
    store: Arc<Store>,
    session: String,
    checkpoints: Checkpoints,
    ctx: ToolContext,
    calls: u32,
    /// What the agent would have told the user.
    events: tokio::sync::mpsc::UnboundedReceiver<crate::agent::AgentEvent>,
}

impl Rig {
    fn new(files: &[(&str, &str)], config: CheckpointsConfig) -> Rig {
        let project = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let root = project.path().canonicalize().unwrap();
        for (path, content) in files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        let store = Arc::new(Store::open(&data.path().join("cairn.db")).unwrap());
        let project_id = store.project(&root).unwrap();
        let session = store
            .create_session(project_id, NewSession { provider: ProviderKind::Anthropic, model: "m", mode: Mode::Edit })
            .unwrap();
        let (tx, events) = tokio::sync::mpsc::unbounded_channel();
        let site = CheckpointSite {
            store: store.clone(),
            session: &session.id,
            project: project_id,
            root: &root,
            config: &config,
            exclude: vec![],
            secrets: &secrets(),
        };
        let checkpoints = Checkpoints::start(site, Emitter::new(tx));
        let ctx = ToolContext {
            root: root.clone(),
            config: ToolsConfig::default(),
            files: Arc::new(FileTracker::default()),
            cancel: CancellationToken::new(),
            memory: None,
            subagents: None,
            task_list: None,
            editor: None,
            denied: Default::default(),
            background: None,
        };
        Rig { _dirs: (project, data), root, store, session: session.id, checkpoints, ctx, calls: 0, events }
    }

    /// A user prompt opens a turn, as the agent does once the message is stored.
    fn prompt(&mut self, text: &str) -> i64 {
        let seq = self.store.append_message(&self.session, &Message::user(text)).unwrap().seq;
        self.checkpoints.begin_turn(seq);
        seq
    }

    /// One tool call the way the dispatcher makes it: prepare, capture before, execute, capture
    /// after (whatever the outcome).
    async fn call(&mut self, tool: &dyn Tool, args: serde_json::Value) -> String {
        self.calls += 1;
        let prepared = tool.prepare(&args, &self.ctx).unwrap_or_else(|e| panic!("{}: {e}", tool.name()));
        let kind = match tool.access() {
            Access::Write => Some(CallKind::Write(prepared.paths.iter().map(|p| p.absolute.clone()).collect())),
            Access::Execute => Some(CallKind::Exec),
            // A fetch changes nothing here.
            Access::Read | Access::Memory | Access::Network => None,
        };
        let capture = self.checkpoints.capture();
        let guard = match kind {
            Some(k) => Some(capture.before(k).await.expect("capture is on")),
            None => None,
        };
        let output = tool.execute(&args, prepared, &self.ctx).await;
        if let Some(guard) = guard {
            capture.after(guard, tool.name(), &format!("call-{}", self.calls)).await;
        }
        if let Ok(event) = self.events.try_recv() {
            panic!("capture told the user something: {event:?}");
        }
        let output = output.unwrap_or_else(|e| panic!("{}: {e}", tool.name()));
        assert!(!output.is_error, "{}", output.content);
        output.content
    }

    async fn read(&mut self, path: &str) {
        self.call(&FileRead, json!({"path": path})).await;
    }

    async fn bash(&mut self, command: &str) -> String {
        self.call(&Bash::default(), json!({"command": command})).await
    }

    fn rewind_code_to(&self, turn: u32, overwrite: bool) -> RewindReport {
        let turn = find_turn(&self.store, &self.session, turn).unwrap();
        let plan = plan_code_rewind(
            &self.store,
            &self.session,
            &self.root,
            &CheckpointsConfig::default(),
            &secrets(),
            turn.user_seq,
        )
        .unwrap();
        let overwrite = if overwrite { Overwrite::All } else { Overwrite::Nothing };
        apply_code_rewind(&self.store, &self.root, &plan, &overwrite).unwrap()
    }
}

/// The provider key of these sessions.
const KEY: &str = "sk-ant-api03-TESTKEYTESTKEY-42";

fn secrets() -> crate::config::Redactor {
    let mut r = crate::config::Redactor::default();
    r.add("ANTHROPIC_API_KEY", KEY);
    r
}

/// Every entry under `root`: its kind, permission bits, and the SHA-256 of its content (a link:
/// of its target).
fn tree_hash(root: &Path) -> BTreeMap<String, (char, u32, String)> {
    fn visit(root: &Path, dir: &Path, out: &mut BTreeMap<String, (char, u32, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_str().unwrap().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            if meta.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, ('l', 0, ContentHash::of(target.to_str().unwrap().as_bytes()).hex()));
            } else if meta.is_dir() {
                out.insert(rel, ('d', mode, String::new()));
                visit(root, &path, out);
            } else {
                out.insert(rel, ('f', mode, ContentHash::of(&std::fs::read(&path).unwrap()).hex()));
            }
        }
    }
    let mut out = BTreeMap::new();
    visit(root, root, &mut out);
    out
}

fn project_files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("src/a.rs", "pub fn a() -> i32 {\n    1\n}\n"),
        ("src/b.rs", "pub fn b() -> i32 {\n    2\n}\n"),
        ("notes.txt", "untracked notes\n"),
        ("data/keep.bin", "\u{0}\u{1}binary\u{0}"),
        ("data/old/stale.txt", "stale\n"),
        ("scripts/run.sh", "#!/bin/sh\necho run\n"),
        ("docs/guide/a.md", "# A\n"),
    ]
}

#[tokio::test]
async fn rewinding_code_to_before_a_turn_restores_every_file_byte_identical_without_git() {
    byte_identical_rewind(CheckpointsConfig::default()).await;
}

#[tokio::test]
async fn the_same_holds_when_every_scan_stats_every_entry() {
    byte_identical_rewind(CheckpointsConfig { watch_folders: false, ..Default::default() }).await;
}

async fn byte_identical_rewind(config: CheckpointsConfig) {
    let mut rig = Rig::new(&project_files(), config);
    std::fs::set_permissions(rig.root.join("scripts/run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("src/a.rs", rig.root.join("current")).unwrap();
    assert!(!rig.root.join(".git").exists());

    // Turn 1 changes something that must survive the rewind to turn 2.
    rig.prompt("tidy the notes");
    rig.bash("echo 'turn one' >> notes.txt").await;
    let before_turn_two = tree_hash(&rig.root);

    // Turn 2: two edits, a new file in a new folder, and a shell command that creates,
    // modifies and deletes files and folders, changes a mode and repoints a link.
    rig.prompt("rework a and b");
    rig.read("src/a.rs").await;
    rig.call(&FileEdit, json!({"path": "src/a.rs", "old_string": "    1", "new_string": "    10"})).await;
    rig.read("src/b.rs").await;
    rig.call(&FileEdit, json!({"path": "src/b.rs", "old_string": "    2", "new_string": "    20"})).await;
    rig.call(&FileWrite, json!({"path": "src/gen/c.rs", "content": "pub fn c() {}\n"})).await;
    rig.bash(
        "set -e; echo made > made.txt; mkdir -p out/deep; printf 'y' > out/deep/y.txt; \
         printf 'more\\n' >> notes.txt; rm data/keep.bin; rm -r data/old; chmod -x scripts/run.sh; \
         ln -sfn src/b.rs current; printf 'fn main() {}\\n' > src/a.rs; mv docs manual",
    )
    .await;
    // Turn 3 changes a file turn 2 made, so the rewind takes back both.
    rig.prompt("one more");
    rig.bash("echo again >> made.txt && echo 'pub fn d() {}' > src/gen/d.rs").await;
    assert_ne!(tree_hash(&rig.root), before_turn_two);

    let turns = rig.store.turns(&rig.session).unwrap();
    assert_eq!(turns.iter().map(|t| t.number).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(turns[1].files_changed >= 10, "{turns:?}");
    let diff = turn_diff(&rig.store, &rig.session, turns[1].user_seq).unwrap();
    assert!(diff.contains("--- a/src/b.rs\n+++ b/src/b.rs") && diff.contains("-    2\n+    20\n"), "{diff}");
    assert!(diff.contains("--- /dev/null\n+++ b/src/gen/c.rs\n"), "{diff}");
    assert!(diff.contains("Binary files a/data/keep.bin and /dev/null differ"), "{diff}");
    assert!(diff.contains("# scripts/run.sh: mode 100755 → 100644\n"), "{diff}");
    assert!(session_diff(&rig.store, &rig.session).unwrap().contains("+turn one\n"));

    let report = rig.rewind_code_to(2, false);
    assert!(report.conflicts.is_empty() && report.unrestorable.is_empty() && report.failed.is_empty(), "{report:?}");
    assert!(report.deleted.contains(&"made.txt".to_string()) && report.restored.contains(&"data/keep.bin".to_string()));
    assert_eq!(tree_hash(&rig.root), before_turn_two, "every file, folder, mode and link as before turn 2");
    assert_eq!(std::fs::read_to_string(rig.root.join("notes.txt")).unwrap(), "untracked notes\nturn one\n");

    // Taken back once, not twice: the turns' changes are marked reverted, and the session's
    // net diff no longer shows them.
    assert_eq!(rig.store.turns(&rig.session).unwrap()[1].files_changed, 0);
    assert!(!session_diff(&rig.store, &rig.session).unwrap().contains("src/gen/c.rs"));
    let again = rig.rewind_code_to(2, false);
    assert!(again.restored.is_empty() && again.deleted.is_empty(), "{again:?}");
}

#[tokio::test]
async fn a_file_changed_by_hand_after_the_turn_is_a_conflict_and_left_as_it_is() {
    let mut rig = Rig::new(&project_files(), CheckpointsConfig::default());
    rig.prompt("change things");
    rig.read("src/a.rs").await;
    rig.call(&FileEdit, json!({"path": "src/a.rs", "old_string": "    1", "new_string": "    11"})).await;
    rig.bash("echo generated > gen.txt && printf 'x' >> src/b.rs").await;
    // The user edits a.rs by hand after the turn.
    std::fs::write(rig.root.join("src/a.rs"), "my own version\n").unwrap();

    let report = rig.rewind_code_to(1, false);
    assert_eq!(report.conflicts.len(), 1, "{report:?}");
    assert_eq!(report.conflicts[0].path, "src/a.rs");
    assert_eq!(std::fs::read_to_string(rig.root.join("src/a.rs")).unwrap(), "my own version\n");
    assert_eq!(std::fs::read_to_string(rig.root.join("src/b.rs")).unwrap(), "pub fn b() -> i32 {\n    2\n}\n");
    assert!(!rig.root.join("gen.txt").exists());
    assert!(report.lines()[1].contains("src/a.rs was changed by someone else"), "{:?}", report.lines());

    // Confirmed: the conflict is overwritten with what was there before the turn.
    let forced = rig.rewind_code_to(1, true);
    assert_eq!(forced.overridden.len(), 1);
    assert_eq!(std::fs::read_to_string(rig.root.join("src/a.rs")).unwrap(), "pub fn a() -> i32 {\n    1\n}\n");
}

#[tokio::test]
async fn contents_the_cap_dropped_are_named_as_such_and_the_rest_is_restored() {
    // A cap of 1 MiB; two turns each write 700 kB of incompressible data to one file.
    let mut rig = Rig::new(&[("small.txt", "small\n")], CheckpointsConfig { max_store_mb: 1, ..Default::default() });
    rig.prompt("make data");
    rig.bash("head -c 700000 /dev/urandom > data.bin").await;
    rig.prompt("make new data");
    rig.bash("head -c 700000 /dev/urandom > data.bin; echo new > created.txt; echo changed > small.txt").await;
    let space = rig.store.checkpoint_space().unwrap();
    assert!(space.stored_bytes <= 1024 * 1024, "{space:?}");
    assert_eq!(space.blobs_dropped, 1, "only the oldest content had to go: {space:?}");

    let report = rig.rewind_code_to(2, false);
    assert_eq!(report.unrestorable.len(), 1, "{report:?}");
    assert_eq!(
        report.unrestorable[0].reason,
        "can't restore data.bin, its content was dropped by the cap (checkpoints.max_store_mb)"
    );
    assert!(report.lines().iter().any(|l| l.contains("data.bin, its content was dropped by the cap")));
    assert_eq!(report.deleted, ["created.txt"]);
    assert_eq!(report.restored, ["small.txt"]);
    assert_eq!(std::fs::read_to_string(rig.root.join("small.txt")).unwrap(), "small\n");
}

#[tokio::test]
async fn secrets_are_never_copied_and_files_outside_the_project_are_not_touched() {
    let mut rig = Rig::new(&[(".env", "API_KEY=sk-secret-value\n"), ("a.txt", "a\n")], CheckpointsConfig::default());
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = outside.path().join("log.txt");
    rig.prompt("configure");
    rig.bash(&format!("echo 'API_KEY=sk-other' > .env && echo b > a.txt && echo outside > {}", elsewhere.display()))
        .await;
    // The model writes the provider key into a file: recorded as changed, never stored.
    rig.call(&FileWrite, json!({"path": "pasted.txt", "content": format!("key = {KEY}\n")})).await;
    let db = std::fs::read(rig._dirs.1.path().join("cairn.db")).unwrap();
    let wal = std::fs::read(rig._dirs.1.path().join("cairn.db-wal")).unwrap_or_default();
    for bytes in [&db, &wal] {
        assert!(!bytes.windows(9).any(|w| w == b"sk-secret"), "a never_store file's content reached the database");
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "a provider key reached the database");
    }
    let report = rig.rewind_code_to(1, false);
    assert_eq!(report.unrestorable.len(), 1, "{report:?}");
    assert!(report.unrestorable[0].reason.contains("checkpoints.never_store"), "{report:?}");
    assert_eq!(report.deleted, ["pasted.txt"], "a new file is deleted: nothing of it had to be kept");
    assert_eq!(std::fs::read_to_string(rig.root.join("a.txt")).unwrap(), "a\n");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "outside\n", "outside the project is not cairn's to undo");
    let diff = session_diff(&rig.store, &rig.session).unwrap();
    assert!(!diff.contains("log.txt") && !diff.contains("sk-"), "{diff}");
}

#[tokio::test]
async fn an_edit_made_by_hand_between_commands_is_what_the_next_rewind_brings_back() {
    for config in [CheckpointsConfig::default(), CheckpointsConfig { watch_folders: false, ..Default::default() }] {
        let mut rig = Rig::new(&[("x.txt", "cairn's\n")], config);
        rig.prompt("first");
        rig.bash("echo 'made by bash' > x.txt").await;
        // Between the turns the user rewrites the file by hand, same size as bash left it.
        std::fs::write(rig.root.join("x.txt"), "made by hand\n").unwrap();
        rig.prompt("second");
        rig.bash("echo 'bash again' >> x.txt").await;
        let report = rig.rewind_code_to(2, false);
        assert_eq!(report.restored, ["x.txt"], "{report:?}");
        assert_eq!(std::fs::read_to_string(rig.root.join("x.txt")).unwrap(), "made by hand\n");
    }
}

#[test]
fn a_warm_up_stops_when_the_session_closes_and_the_next_one_goes_on() {
    let files: Vec<(String, String)> = (0..50).map(|i| (format!("f{i}.txt"), format!("file {i}\n"))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    let project = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    for (path, content) in &refs {
        std::fs::write(root.join(path), content).unwrap();
    }
    let store = Arc::new(Store::open(&data.path().join("cairn.db")).unwrap());
    let project_id = store.project(&root).unwrap();
    let config = CheckpointsConfig::default();
    let mut ckpt =
        crate::checkpoint::Checkpointer::new(store.clone(), "s", project_id, &root, &config, vec![]).unwrap();
    let stopped = ckpt.warm_up_until(&std::sync::atomic::AtomicBool::new(true)).unwrap();
    assert!(stopped.stopped && stopped.files_read == 0, "{stopped:?}");
    let done = ckpt.warm_up().unwrap();
    assert!(!done.stopped && done.files_read == 50, "{done:?}");
    assert_eq!(store.manifest(project_id).unwrap().len(), 50);
}
