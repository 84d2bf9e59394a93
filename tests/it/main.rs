#[path = "../support/mod.rs"]
mod support;

mod context_pipeline;
mod context_replay;
mod first_day;
mod first_day_screen;
mod front_ends;
mod headless_faults;
mod headless_modes;
mod headless_resume;
mod headless_session;
mod layers;
mod llm_anthropic;
mod llm_discovery;
mod llm_mock;
mod llm_openai;
mod llm_retry;
mod memory_and_prompt;
mod permissions;
mod prompt_cache;
mod readme;
mod sandbox;
mod tui_e2e;
