#[path = "../support/mod.rs"]
mod support;

mod llm_mock;
