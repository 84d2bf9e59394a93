//! The user's keys.toml, end to end: the real binary in a pseudo-terminal with a keys.toml in
//! its config folder. A good file moves a key — `/help` and the key itself agree — and a bad
//! one is refused with the line that is wrong, the default keys kept.

use crate::support::cairn::Sandbox;
use crate::support::mock_llm::{MockLlm, Script};
use crate::support::pty::Screen;

fn status_line(s: &str) -> bool {
    s.lines().last().is_some_and(|l| l.contains("EDIT"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keys_file_moves_a_key_and_help_shows_it() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.home.path().join("keys.toml"), "[global]\ntoggle_task_list = \"ctrl+y\"\n").unwrap();
    let mock = MockLlm::start(Script::new()).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        screen.wait("the status line", status_line);
        screen.type_text("/help");
        screen.send("\r");
        let mut help = screen.wait("the help", |s| s.contains("Help — keys and commands"));
        // Page down until the task list's row is in view (each page changes the screen).
        while !help.contains("hide or show the task list panel") {
            screen.send("\x1b[6~");
            let before = help.clone();
            help = screen.wait("the help to scroll", |s| s != before);
        }
        let row = help.lines().find(|l| l.contains("hide or show the task list panel")).unwrap();
        assert!(row.contains("Ctrl+Y") && !row.contains("Ctrl+T"), "{row}");
        screen.send("\x1b");
        screen.wait("the help closed", |s| !s.contains("hide or show the task list panel"));
        // Ctrl+Y now hides the task list panel.
        screen.send("\x19");
        screen.wait("the panel hidden", |s| s.contains("task list hidden"));
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_keys_file_names_its_line_and_the_defaults_stay() {
    let sandbox = Sandbox::new();
    let file = "[global]\n# the task list\ntoggle_task_list = \"hyper+y\"\n";
    std::fs::write(sandbox.home.path().join("keys.toml"), file).unwrap();
    let mock = MockLlm::start(Script::new()).await;
    let mut screen = tokio::task::block_in_place(|| Screen::start(&sandbox, &mock, &[]));
    tokio::task::block_in_place(|| {
        let text = screen.wait("the notice", |s| s.contains("using the default keys") && status_line(s));
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("keys.toml line 3: `hyper` in `hyper+y` is not a modifier"), "{text}");
        // Ctrl+T is still the task list's key.
        screen.send("\x14");
        screen.wait("the panel hidden", |s| s.contains("task list hidden"));
        screen.type_text("/quit");
        screen.send("\r");
    });
    assert!(tokio::task::block_in_place(|| screen.wait_exit()).success());
}
