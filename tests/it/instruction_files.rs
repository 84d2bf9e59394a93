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
    let mut cmd = sandbox.command(Api::Anthropic, &mock, &["-p", "hi", "--trust", "--output-format", "json"]);
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

#[tokio::test]
async fn skipped_instruction_files_are_named_with_why_in_doctor_and_context() {
    let sandbox = Sandbox::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("id_rsa"), "outside secret").unwrap();
    let root = sandbox.root();
    std::os::unix::fs::symlink(outside.path().join("id_rsa"), root.join("AGENTS.md")).unwrap();
    let fifo = std::ffi::CString::new(root.join("CLAUDE.md").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/AGENTS.md"), "Sub rule.").unwrap();

    // Trusted from where the instruction file is (at the root there is nothing to trust).
    let none = MockLlm::start(Script::new()).await;
    let mut trust = sandbox.command(Api::Anthropic, &none, &["-p", "/help", "--trust"]);
    assert!(trust.current_dir(root.join("sub")).output().await.unwrap().status.success());
    let mut doctor = sandbox.bare_command(&["doctor"]);
    doctor.current_dir(root.join("sub"));
    let doctor = doctor.output().await.unwrap();
    let report = text(&doctor.stdout);
    let section = &report[report.find("Instruction files").expect("an instruction files section")..];
    assert!(section.contains("AGENTS.md") && section.contains("skipped: links outside the project"), "{report}");
    assert!(section.contains("CLAUDE.md") && section.contains("skipped: is a FIFO"), "{report}");
    assert!(section.contains("sub/AGENTS.md") && section.contains("in the prompt"), "{report}");

    let mock = MockLlm::start(Script::new()).await;
    let mut cmd = sandbox.command(Api::Anthropic, &mock, &["-p", "/context"]);
    cmd.current_dir(root.join("sub"));
    let out = tokio::time::timeout(Duration::from_secs(30), cmd.output()).await.unwrap().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let breakdown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = &breakdown["instruction_files"];
    assert_eq!(files["read"], serde_json::json!(["sub/AGENTS.md"]), "{files}");
    let skipped = files["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 2, "{files}");
    assert!(
        skipped
            .iter()
            .any(|s| s["path"] == "AGENTS.md" && s["reason"].as_str().unwrap().contains("links outside the project")),
        "{files}"
    );
    assert!(
        skipped.iter().any(|s| s["path"] == "CLAUDE.md" && s["reason"] == "is a FIFO, not a regular file"),
        "{files}"
    );
    assert!(mock.requests().is_empty(), "/context asks the model nothing");
}

/// The user's own AGENTS.md, in their config folder, is read in every project — an untrusted
/// one too, where the project's own is not — is no item of the project's trust, and `/context`
/// and `doctor` list it.
#[tokio::test]
async fn the_users_own_instruction_file_is_read_everywhere_and_listed() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.home.path().join("AGENTS.md"), "USER-RULE: end every answer with a haiku.").unwrap();
    sandbox.write("AGENTS.md", "PROJECT-RULE: tabs, never spaces.");
    let mock = MockLlm::start(Script::new().turn(Turn::text("fine"))).await;
    let run = |args: &[&str]| {
        let mut cmd = sandbox.command(Api::Anthropic, &mock, args);
        cmd.env("HOME", sandbox.home.path());
        cmd
    };
    let out = run(&["-p", "hi", "--output-format", "json"]).output().await.unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let system = mock.requests()[0].body["system"].to_string();
    assert!(system.contains("USER-RULE: end every answer with a haiku."), "{system}");
    assert!(system.contains("<instructions path=\\\"~/AGENTS.md\\\">"), "{system}");
    assert!(!system.contains("PROJECT-RULE"), "the untrusted project's file reached the prompt");
    // What the folder's trust is asked about is the project's: the user's own file is not in it.
    assert!(!text(&out.stderr).contains("~/AGENTS.md"), "{}", text(&out.stderr));

    let context = run(&["-p", "/context"]).output().await.unwrap();
    let breakdown: serde_json::Value = serde_json::from_slice(&context.stdout).unwrap();
    let files = &breakdown["instruction_files"];
    assert_eq!(files["read"], serde_json::json!(["~/AGENTS.md"]), "{files}");
    assert!(files["skipped"].as_array().unwrap().iter().any(|s| s["path"] == "AGENTS.md"), "{files}");

    let mut doctor = sandbox.bare_command(&["doctor"]);
    doctor.env("HOME", sandbox.home.path());
    let report = text(&doctor.output().await.unwrap().stdout);
    let section = &report[report.find("Instruction files").expect("an instruction files section")..];
    assert!(section.contains("~/AGENTS.md") && section.contains("in the prompt"), "{report}");
}
