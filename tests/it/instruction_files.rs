//! Instruction files are read only when they are regular files inside the project: a symlink
//! out of it, `/dev/zero` or a FIFO never reaches the prompt, never hangs start-up and never
//! fills memory.

#![cfg(unix)]

use std::time::Duration;

use crate::support::cairn::{Api, Sandbox, json_result, text};
use crate::support::mock_llm::{MockLlm, Script, Turn};

/// What a run may use at most: the address space a 64-bit Rust binary reserves with a tokio
/// runtime is far below this, and reading `/dev/zero` whole would blow through it in a second.
const ADDRESS_SPACE_LIMIT: u64 = 4 << 30;

#[tokio::test]
async fn instruction_files_outside_the_project_or_special_are_skipped() {
    let sandbox = Sandbox::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY----- outside secret").unwrap();
    let root = sandbox.root();
    std::os::unix::fs::symlink(outside.path().join("id_rsa"), root.join("AGENTS.md")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", root.join("CLAUDE.md")).unwrap();
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    let fifo = std::ffi::CString::new(root.join("sub/AGENTS.md").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    // A link that stays inside the project is fine, and so is an ordinary file.
    std::fs::write(root.join("sub/rules.md"), "Inside rule: keep tests green.").unwrap();
    std::os::unix::fs::symlink("rules.md", root.join("sub/CLAUDE.md")).unwrap();
    std::fs::write(root.join("sub/deeper/AGENTS.md"), "Deeper rule: no unwrap.").unwrap();

    let mock = MockLlm::start(Script::new().turn(Turn::text("fine"))).await;
    let mut cmd = sandbox.command(Api::Anthropic, &mock, &["-p", "hi", "--output-format", "json"]);
    cmd.current_dir(root.join("sub/deeper"));
    // SAFETY: setrlimit is async-signal-safe and touches nothing but the child.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: ADDRESS_SPACE_LIMIT, rlim_max: ADDRESS_SPACE_LIMIT };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = tokio::time::timeout(Duration::from_secs(30), cmd.output())
        .await
        .expect("cairn hung on an instruction file")
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_result(&out)["result"], "fine");
    let system = mock.requests()[0].body["system"].to_string();
    assert!(!system.contains("outside secret"), "a file outside the project reached the prompt");
    assert!(!system.contains("\\u0000"), "/dev/zero reached the prompt");
    assert!(system.contains("Inside rule: keep tests green."), "{system}");
    assert!(system.contains("Deeper rule: no unwrap."), "{system}");
}
