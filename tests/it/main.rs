#[path = "../support/mod.rs"]
mod support;

mod checkpoints;
mod context_arguments;
mod context_facts;
mod context_pipeline;
mod context_replay;
mod front_ends;
mod headless_faults;
mod headless_modes;
mod headless_resume;
mod headless_session;
mod instruction_files;
mod keys;
mod layers;
mod llm_anthropic;
mod llm_discovery;
mod llm_mock;
mod llm_openai;
mod llm_retry;
mod memory_and_prompt;
mod minors;
// mod permissions;
mod prompt_cache;
// mod sandbox;
mod store_concurrency;
mod stream_deadlines;
mod tui_e2e;
