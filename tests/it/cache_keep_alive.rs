//! The prompt cache kept warm while the user is idle (issue 29): the real binary in a
//! pseudo-terminal against the mock, whose cache expires on its own clock. The ping re-sends
//! the last request for one token and reads all of it; the next prompt, past the time the
//! first request's cache would have lived, still reads the whole prefix. Without the ping it
//! writes the prefix again.
//!
//! `keepalive_lead_secs = 298` makes the ping due two seconds after the answer (the decision
//! itself is unit-tested on a fake clock in `context::keep_alive`); the mock's cache clock is
//! moved on around it so the five-minute TTL runs out between the two prompts.

use std::time::{Duration, Instant};

use crate::support::cairn::Sandbox;
use crate::support::mock_llm::{MockLlm, Script, Turn};
use crate::support::pty::Screen;

/// (purpose, uncached input, read from cache, written to cache) of a stored request.
type Row = (String, u64, u64, u64);

/// Every stored request, oldest first.
fn usage_rows(sandbox: &Sandbox) -> Vec<Row> {
    let db = sandbox.database();
    let mut stmt = db
        .prepare(
            "SELECT purpose, input_tokens, cache_read_input_tokens, cache_creation_input_tokens FROM usage ORDER BY id",
        )
        .unwrap();
    let n = |r: &rusqlite::Row<'_>, i: usize| r.get::<_, i64>(i).map(|v| v as u64);
    stmt.query_map([], |r| Ok((r.get(0)?, n(r, 1)?, n(r, 2)?, n(r, 3)?))).unwrap().collect::<Result<_, _>>().unwrap()
}

/// One prompt, a wait of (mock) minutes, another prompt; returns the stored usage and the
/// requests the mock saw.
fn idle_between_prompts(max_pings: u32) -> (Vec<Row>, Vec<serde_json::Value>, String) {
    let sandbox =
        Sandbox::with_config(&format!("[cache]\nkeepalive_lead_secs = 298\nkeepalive_max_pings = {max_pings}\n"));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut script = Script::new().simulate_cache().turn(Turn::text("First answer."));
    if max_pings > 0 {
        script = script.turn(Turn::text("k"));
    }
    let mock = runtime.block_on(MockLlm::start(script.turn(Turn::text("Second answer."))));
    let mut screen = Screen::start(&sandbox, &mock, &[]);
    screen.wait("the status line", |s| s.lines().last().is_some_and(|l| l.contains("EDIT")));
    screen.type_text("hello there, what is in this project?");
    screen.send("\r");
    screen.wait("the answer", |s| s.contains("First answer."));
    // Four minutes pass on the provider's clock before the ping is due.
    mock.advance_cache_clock(Duration::from_secs(240));
    let started = Instant::now();
    if max_pings > 0 {
        while mock.requests().len() < 2 {
            assert!(started.elapsed() < Duration::from_secs(15), "no ping came");
            std::thread::sleep(Duration::from_millis(50));
        }
    } else {
        // As long as a ping would have taken to come.
        std::thread::sleep(Duration::from_secs(4));
    }
    // Two more minutes: the first request's cache has run out, the ping's has not.
    mock.advance_cache_clock(Duration::from_secs(120));
    screen.type_text("and what should I read first?");
    screen.send("\r");
    screen.wait("the second answer", |s| s.contains("Second answer."));
    screen.type_text("/context");
    screen.send("\r");
    let context = screen.wait("/context", |s| s.contains("Cost"));
    screen.send("\x1b");
    std::thread::sleep(Duration::from_millis(300));
    screen.type_text("/quit");
    screen.send("\r");
    assert!(screen.wait_exit().success());
    let bodies = mock.requests().iter().map(|r| r.body.clone()).collect();
    assert!(mock.problems().is_empty(), "{:#?}", mock.problems());
    (usage_rows(&sandbox), bodies, context)
}

#[test]
fn a_ping_while_idle_keeps_the_prefix_and_the_next_prompt_reads_all_of_it() {
    let (rows, bodies, context) = idle_between_prompts(2);
    let purposes: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(purposes, ["turn", "keepalive", "turn"], "{rows:?}");
    // The ping is the first request again, for one token.
    let (first, ping) = (&bodies[0], &bodies[1]);
    assert_eq!(ping["max_tokens"], 1);
    assert_eq!(
        (&ping["system"], &ping["messages"], &ping["tools"]),
        (&first["system"], &first["messages"], &first["tools"])
    );
    let prompt = |r: &Row| r.1 + r.2 + r.3;
    // It reads the whole prefix the first request wrote (all but what follows the last
    // breakpoint: the request's tail), and so does the next prompt, minutes past its TTL.
    assert!(rows[1].2 + 64 >= prompt(&rows[0]), "the ping read {} of {}", rows[1].2, prompt(&rows[0]));
    assert!(rows[2].2 + 64 >= prompt(&rows[0]), "the next prompt read {} of {}", rows[2].2, prompt(&rows[0]));
    assert!(context.contains("keep-alive: 1 ping"), "{context}");
}

#[test]
fn without_the_ping_the_next_prompt_writes_the_prefix_again() {
    let (rows, _, _) = idle_between_prompts(0);
    let purposes: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(purposes, ["turn", "turn"], "{rows:?}");
    assert_eq!(rows[1].2, 0, "the cache had expired: {rows:?}");
}
