#[path = "../support/mod.rs"]
mod support;

mod llm_anthropic;
mod llm_discovery;
mod llm_mock;
mod llm_openai;
mod llm_retry;
