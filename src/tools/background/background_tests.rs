use super::*;
use crate::tools::leftover::group_alive;
use std::sync::atomic::AtomicUsize;

fn place(dir: &Path, jobs: &Arc<Jobs>, turn: Option<i64>) -> BackgroundPlace {
    BackgroundPlace {
        jobs: jobs.clone(),
        dir: dir.join("background/s1"),
        session: "s1".into(),
        turn,
        redactor: Redactor::from_env(&|var| (var == "ANTHROPIC_API_KEY").then(|| "sk-secret-value-123456".to_string())),
    }
}

async fn wait_for(what: &str, ok: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !ok() {
        assert!(start.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_job_keeps_its_output_on_disk_redacted_and_stop_ends_its_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let counted = Arc::new(AtomicUsize::new(usize::MAX));
    let seen = counted.clone();
    let jobs = Jobs::new(1 << 20, Some(Arc::new(move |n| seen.store(n, Ordering::SeqCst))));
    let place = place(dir.path(), &jobs, Some(3));
    // A child of the shell that would outlive it, were the group not ended whole.
    let command = "echo first; echo key sk-secret-value-123456; sleep 300 & while true; do echo tick; sleep 0.1; done";
    let job = jobs.start(&place, command, dir.path(), None, false).unwrap();
    assert_eq!((job.id(), jobs.running(), counted.load(Ordering::SeqCst)), (1, 1, 1));
    wait_for("two ticks", || job.read(Some(0), 10_000).is_ok_and(|s| s.text.matches("tick").count() >= 2)).await;
    let first = job.read(Some(0), 10_000).unwrap();
    assert!(first.text.starts_with("first\nkey [REDACTED"), "{:?}", first.text);
    let log = std::fs::read_to_string(job.picture().log).unwrap();
    assert!(!log.contains("sk-secret-value-123456"), "the key never reaches the disk: {log}");
    let next = job.read(None, 10_000).unwrap();
    assert_eq!(next.from, first.to, "a read without offset goes on from the last one");

    let group = job.picture().group;
    let ended = jobs.stop(1).await.unwrap();
    assert_eq!(ended.state, crate::conversation::JobState::Stopped);
    assert!(!group_alive(group), "the whole group is gone, the sleep included");
    wait_for("the count to drop", || counted.load(Ordering::SeqCst) == 0).await;
    assert!(jobs.stop(1).await.unwrap_err().contains("already ended"));
    assert!(jobs.stop(9).await.unwrap_err().contains("no background command 9"));
}

#[tokio::test]
async fn a_job_that_ends_by_itself_says_how_and_a_rewind_ends_only_the_turns_it_took_back() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = Jobs::new(1 << 20, None);
    let quick = jobs.start(&place(dir.path(), &jobs, Some(1)), "echo done; exit 3", dir.path(), None, false).unwrap();
    assert!(quick.wait_ended(Duration::from_secs(10)).await);
    assert_eq!(quick.state(), crate::conversation::JobState::Exited { code: 3 });
    assert_eq!(quick.picture().last_lines, ["done"]);

    let early = jobs.start(&place(dir.path(), &jobs, Some(1)), "sleep 300", dir.path(), None, false).unwrap();
    let late = jobs.start(&place(dir.path(), &jobs, Some(5)), "sleep 300", dir.path(), None, false).unwrap();
    let ended = jobs.stop_started_since("s1", 5).await;
    assert_eq!(ended.iter().map(|j| j.id).collect::<Vec<_>>(), [late.id()]);
    assert!(early.state().is_running() && !late.state().is_running());
    assert_eq!(jobs.list().len(), 3);
    early.stop().await;
}

#[test]
fn old_logs_are_removed_and_young_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("s1");
    std::fs::create_dir_all(&session).unwrap();
    std::fs::write(session.join("1-1.log"), "x").unwrap();
    assert_eq!(clean_logs(dir.path(), 7), 0);
    assert!(session.join("1-1.log").exists());
    assert_eq!(clean_logs(dir.path(), 0), 1);
    assert!(!session.exists(), "an emptied folder goes too");
}
